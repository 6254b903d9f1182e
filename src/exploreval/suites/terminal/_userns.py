"""The user namespace of a many-user root: the task's root and its other users, as a
container has them.

A sandbox normally maps one uid (its lease: root inside) and runs without capabilities. A task
that needs more users (``useradd``, ``su``, ``sshd``, ``chown`` to another user: Terminal-Bench's
``configure-git-webserver``) gets a user namespace that maps uid and gid 0 to the lease and 1..65535
to the lease's subordinate range (``._limits.SUBID_BASE``: ids no user of this machine has), and
its root gets Docker's default capabilities *inside that namespace* (``DOCKER_CAPS``). This run
is host root, so it writes the maps itself, as ``newuidmap`` (Debian's ``uidmap``) does for an
unprivileged user, and sets the namespace's ``user.max_user_namespaces`` to 0: nothing inside
can make a nested user namespace (whose root would own fresh IPC and mount namespaces).

What holds, and why: a capability in a user namespace acts only on what that namespace owns.
Files whose owner is not mapped (the host's, and the image's read-only lower layer is an idmapped
mount showing its owners as the lease's ids) are never the sandbox's to override; mounts the
sandbox received from the host stay locked together and read-only; the network namespace a
sandbox joins for compose services belongs to the host's user namespace, so no capability there
either. Processes of every uid inside count against one process cap: the namespace is made under
the sandbox's ``RLIMIT_NPROC``, which the kernel charges per creating user across the namespace
(ucounts).

The namespace is made by a short-lived process running as the lease and kept alive by a file
descriptor of this process alone; every sandbox of the episode (the agent's, the verification
run) joins it with bwrap's ``--userns``.
"""

from __future__ import annotations

import contextlib
import os
import subprocess

from exploreval.core import spawn_tied
from exploreval.suites.terminal._errors import SandboxError
from exploreval.suites.terminal._rootfs import id_map

#: What a Docker container's root may do: Docker's default capability set but ``CAP_NET_RAW``
#: (as Podman's): a packet socket writes frames to the user-mode stack's interface past every
#: route, so the host's own addresses would be reachable again (:mod:`._host_bounds`). Ping
#: works without it (``ping_group_range`` is open in the sandbox's network).
DOCKER_CAPS = ("CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FSETID", "CAP_FOWNER", "CAP_MKNOD",
               "CAP_SETGID", "CAP_SETUID", "CAP_SETFCAP", "CAP_SETPCAP",
               "CAP_NET_BIND_SERVICE", "CAP_SYS_CHROOT", "CAP_KILL", "CAP_AUDIT_WRITE")  # fmt: skip
#: Capability numbers (linux/capability.h) of :data:`DOCKER_CAPS`.
CAP_NUMBERS = {
    "CAP_CHOWN": 0,
    "CAP_DAC_OVERRIDE": 1,
    "CAP_FOWNER": 3,
    "CAP_FSETID": 4,
    "CAP_KILL": 5,
    "CAP_SETGID": 6,
    "CAP_SETUID": 7,
    "CAP_SETPCAP": 8,
    "CAP_NET_BIND_SERVICE": 10,
    "CAP_NET_RAW": 13,
    "CAP_SYS_CHROOT": 18,
    "CAP_MKNOD": 27,
    "CAP_AUDIT_WRITE": 29,
    "CAP_SETFCAP": 31,
}
#: Written in the namespace by the host (who alone holds ``CAP_SYS_RESOURCE`` there): no user
#: namespace can be made inside it, as bwrap's ``--disable-userns`` does for one uid.
_NO_NESTED = "echo 0 > /proc/sys/user/max_user_namespaces"


class ManyUsers:
    """A user namespace owned by ``uid`` with ``id_map(uid, sub_base)``; ``fd`` refers to it."""

    def __init__(self, uid: int, sub_base: int, nproc: int) -> None:
        self.uid = uid
        self.sub_base = sub_base
        self.fd = -1
        holder = spawn_tied(
            [
                "prlimit",
                f"--nproc={nproc}",
                "--",
                "unshare",
                "--user",
                "--",
                "sh",
                "-c",
                "echo ready; read _",
            ],  # fmt: skip
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            user=uid,
            group=uid,
            extra_groups=[],
        )
        try:
            assert holder.stdout is not None
            if holder.stdout.readline().strip() != b"ready":
                err = holder.stderr.read() if holder.stderr is not None else b""
                raise SandboxError(
                    "the user namespace of a many-user root could not be made: "
                    + err.decode(errors="replace").strip()
                )
            mapping = id_map(uid, sub_base).encode()
            for name in ("uid_map", "gid_map"):  # one write each, as the kernel requires
                fd = os.open(f"/proc/{holder.pid}/{name}", os.O_WRONLY)
                try:
                    os.write(fd, mapping)
                except OSError as exc:
                    raise SandboxError(f"{name} of a many-user root not written: {exc}") from exc
                finally:
                    os.close(fd)
            self.fd = os.open(f"/proc/{holder.pid}/ns/user", os.O_RDONLY | os.O_CLOEXEC)
            user_ns = f"--user=/proc/{holder.pid}/ns/user"
            done = subprocess.run(
                ["nsenter", user_ns, "--", "/bin/sh", "-c", _NO_NESTED],
                capture_output=True,
                text=True,
                check=False,
                timeout=10,
            )
            if done.returncode != 0:
                raise SandboxError(
                    "the user namespace of a many-user root could not be closed to nested "
                    f"ones: {done.stderr.strip()}"
                )
        finally:
            with contextlib.suppress(OSError):
                if holder.stdin is not None:
                    holder.stdin.close()  # the holder ends; the namespace lives on in self.fd
            holder.wait(timeout=10)
            for stream in (holder.stdout, holder.stderr):
                if stream is not None:
                    stream.close()

    def close(self) -> None:
        if self.fd >= 0:
            with contextlib.suppress(OSError):
                os.close(self.fd)
            self.fd = -1
