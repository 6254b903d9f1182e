"""The part of a bwrap command line the agent's sandbox and the verifier's share: namespaces,
capabilities, identity, root file system, work dir, ``/tmp`` and ``$HOME``. One function, so the
verification can never run with a root or a user namespace the agent's sandbox did not have.
"""

from __future__ import annotations

import functools
import platform
from pathlib import Path

from exploreval.suites.terminal._harness_tree import (
    HARNESS_ROOT,
    HARNESS_TMUX,
    ensure_harness_tree,
)
from exploreval.suites.terminal._rootfs import (
    EpisodeDisk,
)
from exploreval.suites.terminal._sandbox_config import (
    SHIM_DIR,
)
from exploreval.suites.terminal._userns import CAP_NUMBERS, DOCKER_CAPS, ManyUsers


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
    # one uid: bwrap's own user namespace, in which no further one can be made (a nested one
    # would own fresh IPC and mount namespaces, outside every bound below); a many-user root's
    # namespace was made with the same limit (:class:`._userns.ManyUsers`)
    user = (
        ["--userns", str(many_users.fd)]
        if many_users is not None
        else ["--unshare-user", "--disable-userns"]
    )
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
    # /proc/sys read-only: the IPC namespace's limits (shmall...) are its root's to write, and
    # the host sets them (:mod:`._host_bounds`). /dev read-only: bwrap's tmpfs there has no size
    # limit; /dev/shm is a directory of the episode's disk, in its quota.
    special = ["--proc", "/proc", "--ro-bind", "/proc/sys", "/proc/sys", "--dev", "/dev"]
    special += ["--bind", str(disk.shm), "/dev/shm", "--remount-ro", "/dev"]
    # the harness beside the image (:mod:`._harness_tree`): its tmux, and for verification a
    # Python, curl and ps at the end of PATH, never installed into the image
    tree = str(ensure_harness_tree())
    harness = ["--ro-bind", tree, HARNESS_ROOT]
    if image_root is not None:
        argv += ["--bind", str(image_root), "/", *special, *harness]
        argv += ["--ro-bind", f"{tree}/bin", SHIM_DIR]
    else:
        argv += [
            "--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc",
            "--symlink", "usr/bin", "/bin", "--symlink", "usr/lib", "/lib",
            "--symlink", "usr/lib64", "/lib64", "--symlink", "usr/sbin", "/sbin",
            *special,
            "--bind", str(disk.disk / "tmp"), "/tmp",
            "--bind", str(disk.disk / "root"), "/root",
            "--dir", SHIM_DIR, "--symlink", "/usr/bin/python3", f"{SHIM_DIR}/python",
            "--bind", str(disk.disk / "app"), workdir, *harness,
        ]  # fmt: skip
    for key, value in env.items():
        argv += ["--setenv", key, value]
    return argv


def bare_root(image_root: Path | None) -> bool:
    """Whether the image may lack coreutils' ``timeout``, which :func:`enter_argv` runs inside
    it: a pulled image such as busybox, alpine or a distroless one (no util-linux ``setpriv``,
    or a busybox ``env``). The host system and the Debian/Ubuntu bases always have it."""
    if image_root is None:
        return False
    env = image_root / "usr" / "bin" / "env"
    with_tools = any((image_root / d / "setpriv").exists() for d in ("usr/bin", "bin"))
    return not with_tools or (env.is_symlink() and "busybox" in str(env.readlink()))


def tmux_server_argv(conf: str, sock: str) -> list[str]:
    """The sandbox's main command: the harness's tmux server in the foreground (``tmux -D``):
    the tree's tmux whatever the image has (focal's 3.0a and bullseye's 3.1c have no ``-D``), so
    the sandbox ends with its server."""
    return [HARNESS_TMUX, "-D", "-f", conf, "-S", sock]


@functools.cache
def _cap_last_cap() -> int:
    try:
        with open("/proc/sys/kernel/cap_last_cap", encoding="ascii") as fh:
            return int(fh.read())
    except (OSError, ValueError):
        return 40  # checkpoint_restore, the last in Linux 5.9 to 6.x


#: The host's perl, run by nsenter with the *host's* root (``--root=/``) while every namespace
#: of the sandbox is entered: it alone holds the capabilities a process gets in the sandbox's
#: user namespace by joining it, and it drops them before anything of the sandbox runs. It
#: enters the sandbox's root (``chroot /proc/<pid>/root``) and work dir, drops every capability
#: but ``keep`` from the bounding, permitted, effective and inheritable sets (``keep`` raised as
#: ambient, as ``docker exec`` leaves a container's), sets no_new_privs, sets the command's
#: environment and execs it. Arguments: root, cwd, keep (low and high 32 bits), the last
#: capability, the prctl and capset call numbers, the number of ``KEY=VALUE`` items, those
#: items, then the command.
_ENTER = r"""
my ($root, $cwd, $lo, $hi, $last, $prctl, $capset, $n) = splice(@ARGV, 0, 8);
chroot($root) or die "exploreval-enter: chroot: $!\n";
chdir($cwd) or die "exploreval-enter: $cwd: $!\n";
my @kept;
for my $c (0 .. $last) {
    $kept[$c] = $c < 32 ? ($lo >> $c) & 1 : ($hi >> ($c - 32)) & 1;
    next if $kept[$c];
    syscall($prctl, 24, $c, 0, 0, 0) == 0 or die "exploreval-enter: bounding set: $!\n";
}
my ($head, $data) = (pack("LL", 0x20080522, 0), pack("L6", $lo, $lo, $lo, $hi, $hi, $hi));
syscall($capset, $head, $data) == 0 or die "exploreval-enter: capset: $!\n";
syscall($prctl, 47, 4, 0, 0, 0);
for my $c (0 .. $last) {
    next unless $kept[$c];
    syscall($prctl, 47, 2, $c, 0, 0) == 0 or die "exploreval-enter: ambient: $!\n";
}
syscall($prctl, 38, 1, 0, 0, 0) == 0 or die "exploreval-enter: no_new_privs: $!\n";
%ENV = map { split(/=/, $_, 2) } splice(@ARGV, 0, $n);
exec { $ARGV[0] } @ARGV or die "exploreval-enter: $ARGV[0]: $!\n";
"""
#: (prctl, capset) system call numbers per machine.
_CALLS = {"x86_64": (157, 126), "aarch64": (167, 91)}


def enter_argv(
    argv: list[str],
    *,
    pid: int,
    prlimit: list[str],
    cwd: str,
    timeout: float | None,
    many_users: bool,
    bare: bool,
    env: dict[str, str],
) -> list[str]:
    """``argv`` run inside every namespace of the sandbox ``pid``, as its root user without any
    capability, with ``env``, under its rlimits (and a kill after ``timeout`` seconds). A
    many-user root keeps Docker's capabilities, as ``docker exec`` does.

    Nothing of the sandbox runs before the capabilities are gone: the sandbox's root user may
    have replaced any of its programs (``setpriv``, ``env``, the loader), and joining its user
    namespace gives a process every capability there (:data:`_ENTER`). ``bare``: the image has
    no ``timeout`` of its own (:func:`bare_root`); the caller kills the command after
    ``timeout``."""
    prctl, capset = _CALLS.get(platform.machine(), _CALLS["x86_64"])
    keep = sum(1 << CAP_NUMBERS[c] for c in DOCKER_CAPS) if many_users else 0
    items = [f"{key}={value}" for key, value in env.items()]
    enter = [*prlimit, "nsenter", "--target", str(pid), "--all", "--root=/", "--wd=/"]
    enter += ["--setuid", "0", "--setgid", "0", "--", "/usr/bin/perl", "-e", _ENTER]
    caps = [str(keep & 0xFFFFFFFF), str(keep >> 32), str(_cap_last_cap()), str(prctl), str(capset)]
    command = [*enter, f"/proc/{pid}/root", cwd, *caps, str(len(items)), *items]
    if timeout is not None and not bare:
        command += ["timeout", "-s", "KILL", f"{max(timeout, 0.01):.3f}"]
    return command + argv
