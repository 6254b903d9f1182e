"""The part of a bwrap command line the agent's sandbox and the verifier's share: namespaces,
capabilities, identity, root file system, work dir, ``/tmp`` and ``$HOME``. One function, so the
verification can never run with a root or a user namespace the agent's sandbox did not have.
"""

from __future__ import annotations

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
