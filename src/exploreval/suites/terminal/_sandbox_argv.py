"""The part of a bwrap command line the agent's sandbox and the verifier's share: namespaces,
capabilities, identity, root file system, work dir, ``/tmp`` and ``$HOME``. One function, so the
verification can never run with a root or a user namespace the agent's sandbox did not have.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

from exploreval.suites.terminal._rootfs import (
    EpisodeDisk,
)
from exploreval.suites.terminal._sandbox_config import (
    SHIM_DIR,
)
from exploreval.suites.terminal._userns import DOCKER_CAPS, ManyUsers


def bwrap_root_args(
    *,
    image_root: Path | None,
    disk: EpisodeDisk,
    workdir: str,
    env: dict[str, str],
    hostname: str,
    share_net: bool = False,
    many_users: ManyUsers | None = None,
) -> list[str]:
    """The part of a bwrap command line that is the same for the agent's sandbox and the
    verifier's: namespaces, capabilities, identity, root file system, work dir, /tmp, $HOME.
    ``share_net``: every namespace but the network one is new (the caller entered the network
    namespace to share). ``many_users``: join that user namespace (its fd passed to bwrap),
    root with Docker's capabilities inside it; else a new one-uid namespace, no capability."""
    user = ["--userns", str(many_users.fd)] if many_users is not None else ["--unshare-user"]
    unshare = [*user, "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
    if not share_net:
        unshare.append("--unshare-net")
    caps = ["--cap-drop", "ALL"]
    for cap in DOCKER_CAPS if many_users is not None else ():
        caps += ["--cap-add", cap]
    argv = [
        "bwrap", *unshare, "--die-with-parent", "--new-session", *caps,
        "--uid", "0", "--gid", "0", "--hostname", hostname, "--clearenv",
    ]  # fmt: skip
    if image_root is not None:
        argv += ["--bind", str(image_root), "/", "--proc", "/proc", "--dev", "/dev"]
    else:
        argv += [
            "--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc",
            "--symlink", "usr/bin", "/bin", "--symlink", "usr/lib", "/lib",
            "--symlink", "usr/lib64", "/lib64", "--symlink", "usr/sbin", "/sbin",
            "--proc", "/proc", "--dev", "/dev",
            "--bind", str(disk.disk / "tmp"), "/tmp",
            "--bind", str(disk.disk / "root"), "/root",
            "--dir", SHIM_DIR, "--symlink", "/usr/bin/python3", f"{SHIM_DIR}/python",
            "--bind", str(disk.disk / "app"), workdir,
        ]  # fmt: skip
    for key, value in env.items():
        argv += ["--setenv", key, value]
    return argv


def bare_root(image_root: Path | None) -> bool:
    """Whether the image lacks the tools :func:`enter_argv` runs inside it (util-linux's
    ``setpriv``, coreutils' ``env -C`` and ``timeout``): a pulled image such as busybox, alpine
    or a distroless one. The host system and the Debian/Ubuntu bases always have them."""
    if image_root is None:
        return False
    env = image_root / "usr" / "bin" / "env"
    with_tools = any((image_root / d / "setpriv").exists() for d in ("usr/bin", "bin"))
    return not with_tools or (env.is_symlink() and "busybox" in str(env.readlink()))


#: tmux before 3.2 has no ``-D``: its server always forks into the background. The wrapper starts
#: it (``exit-empty off`` keeps it without a session), asks it its pid, and stays in the
#: foreground until it ends, so the sandbox still ends with its tmux server.
_OLD_TMUX_SERVER = (
    'tmux -f "$1" -S "$2" start-server || exit 1\n'
    'pid=$(tmux -S "$2" run-shell "echo #{pid}") || exit 1\n'
    'exec tail --pid="$pid" -s 0.1 -f /dev/null\n'
)


def tmux_server_argv(image_root: Path | None, conf: str, sock: str) -> list[str]:
    """The sandbox's main command: its tmux server in the foreground (``tmux -D``, 3.2 and later),
    or, for an image whose tmux is older (focal's 3.0a, bullseye's 3.1c), the wrapper above."""
    version = image_package_version(image_root, "tmux")
    if version is not None and version < (3, 2):
        return ["/bin/sh", "-c", _OLD_TMUX_SERVER, "tmux-server", conf, sock]
    return ["tmux", "-D", "-f", conf, "-S", sock]


@functools.lru_cache(maxsize=1024)
def image_package_version(image_root: Path | None, package: str) -> tuple[int, int] | None:
    """(major, minor) of ``package`` as dpkg installed it in the image as built, or None (the
    host system's, or not installed by dpkg: taken to be current). Read from the built image,
    which never changes once cached, never from the episode's root that the agent can write."""
    if image_root is None:
        return None
    try:
        status = (image_root / "var/lib/dpkg/status").read_text(errors="replace")
    except OSError:
        return None
    match = re.search(
        rf"^Package: {re.escape(package)}\n(?:[^\n]+\n)*?Version: (?:\d+:)?(\d+)\.(\d+)",
        status,
        re.M,
    )
    return (int(match.group(1)), int(match.group(2))) if match else None


def old_setpriv(image_root: Path | None) -> bool:
    """Whether the image's ``setpriv`` was built before this kernel's newest capabilities and so
    refuses "all" ("libcap-ng is too old for "all" caps"): util-linux before 2.35 (focal's 2.34)
    knows capabilities up to ``audit_read`` (37). It is then given every capability by number
    (``cap_N``, which its libcap-ng reads), so the commands it starts drop them all the same."""
    version = image_package_version(image_root, "util-linux")
    return version is not None and version < (2, 35) and _cap_last_cap() > 37


@functools.cache
def _cap_last_cap() -> int:
    try:
        with open("/proc/sys/kernel/cap_last_cap", encoding="ascii") as fh:
            return int(fh.read())
    except (OSError, ValueError):
        return 40  # checkpoint_restore, the last in Linux 5.9 to 6.x


def enter_argv(
    argv: list[str],
    *,
    pid: int,
    prlimit: list[str],
    cwd: str,
    timeout: float | None,
    many_users: bool,
    bare: bool,
    numbered_caps: bool = False,
) -> list[str]:
    """``argv`` run inside every namespace of the sandbox ``pid``, as its root user without any
    capability, under its rlimits (and a kill after ``timeout`` seconds). A many-user root keeps
    Docker's capabilities, as ``docker exec`` does.

    ``bare``: the image has no ``setpriv``/``env -C``/``timeout`` of its own (:func:`bare_root`);
    nsenter then sets the directory itself and the command keeps what root holds in the
    sandbox's user namespace (its capabilities there, never on the host), as ``docker exec``
    keeps a container's; the caller kills it after ``timeout``. ``numbered_caps``: the image's
    setpriv cannot say "all" (:func:`old_setpriv`)."""
    enter = [*prlimit, "nsenter", "--target", str(pid), "--all", "--root"]
    if bare:
        return [*enter, f"--wdns={cwd}", "--setuid", "0", "--setgid", "0", "--", *argv]
    caps = "-all"
    if numbered_caps:  # every capability of this kernel, by number (:func:`old_setpriv`)
        caps = ",".join(f"-cap_{number}" for number in range(_cap_last_cap() + 1))
    if many_users:
        caps += "".join(f",+{c.removeprefix('CAP_').lower()}" for c in DOCKER_CAPS)
    command = [
        *enter, "--setuid", "0", "--setgid", "0", "--",
        "setpriv", f"--inh-caps={caps}", f"--ambient-caps={caps}",
        f"--bounding-set={caps}", "--no-new-privs", "--",
        "/usr/bin/env", "-C", cwd, "--",
    ]  # fmt: skip
    if timeout is not None:
        command += ["timeout", "-s", "KILL", f"{max(timeout, 0.01):.3f}"]
    return command + argv
