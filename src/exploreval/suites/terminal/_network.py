"""Networks of a sandbox: the user-mode stack, and the one network an episode's services share.

**User-mode stack** (:class:`SlirpNet`): slirp4netns attached to a network namespace gives it
NAT to the outside through this process, with the host's loopback unreachable, and every
address and network of this machine's own unreachable too (:mod:`._host_bounds`).

**The episode's network** (:class:`EpisodeNetwork`): a task with compose services runs each
service and the agent in their own sandboxes; all of them (and the verification run) join one
network namespace that no sandbox owns, held by a process of ours. It is a private network in
the way a pod's is: one loopback shared by every service, where each service's name resolves to
it (each sandbox gets an ``/etc/hosts`` naming them). Ports below 1024 are open to every
sandbox (``ip_unprivileged_port_start=0``: a web server binds :80 as a container's root does),
and nothing in it can change its configuration: the namespace belongs to the host's user
namespace, in which no sandbox holds a capability. With internet, the user-mode stack serves
the whole namespace.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess

from exploreval.core import spawn_tied
from exploreval.suites.terminal._dns_log import DnsLog
from exploreval.suites.terminal._errors import SandboxError
from exploreval.suites.terminal._host_bounds import block_host_addresses


class NetworkError(SandboxError):
    """The episode's network could not be made."""


def data_fd(text: bytes, fds: list[int]) -> int:
    r, w = os.pipe()
    fds.append(r)
    try:
        os.write(w, text)
    finally:
        os.close(w)
    return r


class SlirpNet:
    """slirp4netns attached to a sandbox's network namespace (user-mode NAT, no host loopback)."""

    #: The DNS log's forwarder first (:mod:`._dns_log`), slirp4netns's own DNS if it is not there.
    RESOLV = b"nameserver 127.0.0.53\nnameserver 10.0.2.3\n"

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.dns: DnsLog | None = None
        #: The networks made unreachable in the namespace (:func:`._host_bounds.host_networks`).
        self.blocked: list[str] = []
        ready_r, ready_w = os.pipe()
        try:
            self.proc = spawn_tied(
                [
                    "slirp4netns",
                    "--configure",
                    "--mtu=65520",
                    "--disable-host-loopback",
                    "--ready-fd",
                    str(ready_w),
                    # by the namespace's path: this process (host root) may configure any
                    # network namespace, and the sandbox's own user namespace may be a nested
                    # one that does not own it (bwrap --disable-userns)
                    "--netns-type=path",
                    f"/proc/{pid}/ns/net",
                    "tap0",
                ],  # fmt: skip
                pass_fds=(ready_w,),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        finally:
            os.close(ready_w)
        self._ready_fd = ready_r

    async def ready(self, timeout: float = 10.0) -> None:
        fd = self._ready_fd
        try:
            data = await asyncio.wait_for(asyncio.to_thread(os.read, fd, 1), timeout)
        finally:
            os.close(fd)
        if data != b"1":
            raise SandboxError("slirp4netns did not bring the sandbox's network up")
        # before anything in the namespace can use the stack: the host's own addresses (its
        # services on 0.0.0.0) are unreachable from it (:mod:`._host_bounds`)
        self.blocked = await asyncio.to_thread(block_host_addresses, self.pid)
        self.dns = await DnsLog(self.pid).start()

    def unresolved(self, since: float = 0.0) -> list[str]:
        """Names a lookup in this network failed for (:meth:`._dns_log.DnsLog.unresolved`)."""
        return self.dns.unresolved(since) if self.dns is not None else []

    def stop(self) -> None:
        if self.dns is not None:
            self.dns.stop()  # what it recorded stays readable
        if self.proc.poll() is None:
            self.proc.kill()
        with contextlib.suppress(Exception):
            self.proc.wait(timeout=5)


#: Run by the namespace's holder: loopback up, low ports and ping open to every sandbox uid.
_HOLDER_SCRIPT = (
    "ip link set lo up && "
    "echo 0 > /proc/sys/net/ipv4/ip_unprivileged_port_start && "
    "echo '0 2147483647' > /proc/sys/net/ipv4/ping_group_range && "
    "echo ready && exec sleep infinity"
)


class EpisodeNetwork:
    """One network namespace shared by an episode's sandboxes (see the module docstring)."""

    def __init__(self, names: list[str]) -> None:
        self.names = list(dict.fromkeys(names))
        self.proc: subprocess.Popen[bytes] | None = None
        self.slirp: SlirpNet | None = None

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    @property
    def internet(self) -> bool:
        return self.slirp is not None

    async def start(self, *, internet: bool) -> EpisodeNetwork:
        self.proc = spawn_tied(
            ["unshare", "--net", "--", "sh", "-c", _HOLDER_SCRIPT],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert self.proc.stdout is not None
        line = await asyncio.wait_for(asyncio.to_thread(self.proc.stdout.readline), 10)
        if line.strip() != b"ready":
            err = b""
            if self.proc.stderr is not None and self.proc.poll() is not None:
                err = self.proc.stderr.read()
            self.close()
            raise NetworkError(
                "the episode's network namespace could not be made (unshare --net, ip): "
                + err.decode(errors="replace").strip()
            )
        if internet:
            await self.attach_internet()
        return self

    async def attach_internet(self) -> None:
        """The user-mode stack for everything in the namespace (idempotent)."""
        if self.slirp is None:
            self.slirp = SlirpNet(self.pid)
            await self.slirp.ready()

    def enter_argv(self, uid: int) -> list[str]:
        """A prefix that runs a command (as root: the caller) in the namespace as ``uid``."""
        return ["nsenter", f"--net=/proc/{self.pid}/ns/net", "--",
                "setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--"]  # fmt: skip

    def hosts_file(self) -> bytes:
        """``/etc/hosts`` of every sandbox on the network: each service's names on loopback."""
        names = " ".join(self.names)
        return (f"127.0.0.1\tlocalhost {names}\n"
                "::1\tlocalhost ip6-localhost ip6-loopback\n").encode()  # fmt: skip

    def close(self) -> None:
        if self.slirp is not None:
            self.slirp.stop()
            self.slirp = None
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
        if self.proc is not None:
            with contextlib.suppress(Exception):
                self.proc.wait(timeout=5)
            for stream in (self.proc.stdout, self.proc.stderr):
                if stream is not None:
                    stream.close()
