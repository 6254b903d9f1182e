"""The names an episode's processes asked DNS for and did not get, seen from outside.

A task's code can need a host anywhere: a DNS seed list in a gold solution's Python, an f-string
URL (``https://api.{NETWORK}.solana.com``), a client library's default endpoint. Reading files
for URLs misses those; the network does not. Every sandbox with a network resolves through a
forwarder of the host's (:class:`DnsLog`) that listens on ``127.0.0.53:53`` *inside* the
sandbox's network namespace (its socket bound there by a host thread that entered the namespace,
so no process of the sandbox holds or sees it) and asks the host's own resolver, as
slirp4netns's DNS would. It passes every answer through unchanged and records, per name, whether
any lookup answered. ``/etc/resolv.conf`` lists slirp4netns's DNS second: if the forwarder
cannot be made (no right to enter the namespace) names still resolve, unlogged.

What it records is a diagnostic, never a verdict: an agent can ask for any name. A failed
verification names a host from it only for lookups made while the tests ran (``since``).
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import os
import socket
import struct
import threading
import time
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

#: Where the forwarder listens in the sandbox's namespace (systemd-resolved's stub address:
#: on loopback, so nothing but the sandbox's own processes reaches it).
LISTEN = ("127.0.0.53", 53)
_CLONE_NEWNET = 0x40000000
#: Response codes that mean "no such name here" or "could not ask" (RFC 1035 4.1.1).
_RCODES = {1: "FORMERR", 2: "SERVFAIL", 3: "NXDOMAIN", 4: "NOTIMP", 5: "REFUSED"}
#: An agent can ask for any number of names: the log keeps the first this many.
MAX_NAMES = 1000
#: Lookups in flight at once (UDP queries and TCP connections): more are dropped, as a busy
#: resolver drops them, so a sandbox cannot spend this process's file descriptors.
MAX_IN_FLIGHT = 128
_TIMEOUT = 5.0


def upstream_nameserver(resolv_conf: Path = Path("/etc/resolv.conf")) -> str:
    """The host's first nameserver (the one slirp4netns's DNS would ask)."""
    with contextlib.suppress(OSError):
        for line in resolv_conf.read_text().splitlines():
            parts = line.split()
            if len(parts) >= 2 and parts[0] == "nameserver":
                with contextlib.suppress(ValueError):
                    return str(ipaddress.ip_address(parts[1].split("%")[0]))
    return "127.0.0.1"


def question(message: bytes) -> tuple[str, int] | None:
    """(name, type) of a DNS message's first question; None if it has none or is malformed."""
    if len(message) < 12 or struct.unpack("!H", message[4:6])[0] < 1:
        return None
    labels: list[str] = []
    at = 12
    while at < len(message):
        size = message[at]
        if size == 0:
            if at + 5 > len(message):  # QTYPE and QCLASS follow the name
                return None
            qtype = struct.unpack("!H", message[at + 1 : at + 3])[0]
            return ".".join(labels).lower().rstrip("."), qtype
        if size & 0xC0 or at + 1 + size > len(message):
            return None  # a question's name is never compressed
        labels.append(message[at + 1 : at + 1 + size].decode("ascii", errors="replace"))
        at += 1 + size
    return None


def outcome(response: bytes | None) -> str | None:
    """None when ``response`` answers (NOERROR, an answer or not); else why the lookup failed."""
    if response is None:
        return f"no answer in {_TIMEOUT:.0f} s"
    if len(response) < 12:
        return "a malformed answer"
    rcode = response[3] & 0x0F
    return None if rcode == 0 else _RCODES.get(rcode, f"RCODE {rcode}")


def bind_in_namespace(pid: int) -> tuple[socket.socket, socket.socket]:
    """UDP and TCP sockets on :data:`LISTEN` in ``pid``'s network namespace. A fresh thread
    enters the namespace (``setns`` moves only the calling thread) and ends with it."""
    made: dict[str, object] = {}

    def work() -> None:
        try:
            fd = os.open(f"/proc/{pid}/ns/net", os.O_RDONLY | os.O_CLOEXEC)
            try:
                _setns(fd)
            finally:
                os.close(fd)
            udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            try:
                udp.bind(LISTEN)
                tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                tcp.bind(LISTEN)
                tcp.listen(64)
            except OSError:
                udp.close()
                tcp.close()
                raise
            made["sockets"] = (udp, tcp)
        except OSError as exc:
            made["error"] = exc

    thread = threading.Thread(target=work, name="exploreval-dns-setns")
    thread.start()
    thread.join()
    if "error" in made:
        raise made["error"]  # type: ignore[misc]
    return made["sockets"]  # type: ignore[return-value]


def _setns(fd: int) -> None:
    setns = getattr(os, "setns", None)  # Python 3.12+
    if setns is not None:
        setns(fd, _CLONE_NEWNET)
        return
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.setns(fd, _CLONE_NEWNET) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, os.strerror(errno))


class DnsLog:
    """A logging DNS forwarder in one network namespace (module docstring)."""

    def __init__(self, pid: int, upstream: str | None = None) -> None:
        self.pid = pid
        self.upstream = upstream or upstream_nameserver()
        self.error: str | None = None
        self._answered: set[str] = set()
        self._failed: dict[str, tuple[float, str]] = {}  # name -> (first failure, why)
        self._udp: socket.socket | None = None
        self._transport: asyncio.DatagramTransport | None = None
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> DnsLog:
        """Listen in the namespace; on failure (no right to enter it) log nothing, say why."""
        try:
            udp, tcp = await asyncio.to_thread(bind_in_namespace, self.pid)
        except OSError as exc:
            self.error = f"the DNS log could not listen in the sandbox's network: {exc}"
            return self
        loop = asyncio.get_running_loop()
        self._transport, _ = await loop.create_datagram_endpoint(lambda: _UdpFront(self), sock=udp)
        self._server = await asyncio.start_server(self._serve_tcp, sock=tcp)
        return self

    def unresolved(self, since: float = 0.0) -> list[str]:
        """Names some lookup failed for and none answered, first failure at or after ``since``
        (``time.monotonic()``), in the order they first failed."""
        names = [(t, n) for n, (t, _) in self._failed.items() if n not in self._answered]
        return [n for t, n in sorted(names) if t >= since]

    def why(self, name: str) -> str | None:
        failed = self._failed.get(name)
        return failed[1] if failed else None

    def record(self, query: bytes, response: bytes | None) -> None:
        asked = question(query)
        if asked is None or not asked[0]:
            return
        name = asked[0]
        failure = outcome(response)
        if failure is None:
            if len(self._answered) < MAX_NAMES:
                self._answered.add(name)
        elif name not in self._failed and len(self._failed) < MAX_NAMES:
            self._failed[name] = (time.monotonic(), failure)

    def spawn(self, job: Coroutine[Any, Any, None]) -> None:
        if len(self._tasks) >= MAX_IN_FLIGHT:
            job.close()
            return
        task = asyncio.get_running_loop().create_task(job)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def ask_udp(self, query: bytes) -> bytes | None:
        loop = asyncio.get_running_loop()
        family = socket.AF_INET6 if ":" in self.upstream else socket.AF_INET
        with socket.socket(family, socket.SOCK_DGRAM) as sock:
            sock.setblocking(False)
            try:
                await loop.sock_connect(sock, (self.upstream, 53))
                await loop.sock_sendall(sock, query)
                return await asyncio.wait_for(loop.sock_recv(sock, 65535), _TIMEOUT)
            except (OSError, TimeoutError):
                return None

    async def ask_tcp(self, query: bytes) -> bytes | None:
        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_connection(self.upstream, 53), _TIMEOUT
            )
        except (OSError, TimeoutError):
            return None
        try:
            writer.write(struct.pack("!H", len(query)) + query)
            await writer.drain()
            size = struct.unpack("!H", await asyncio.wait_for(reader.readexactly(2), _TIMEOUT))
            return await asyncio.wait_for(reader.readexactly(size[0]), _TIMEOUT)
        except (OSError, TimeoutError, asyncio.IncompleteReadError):
            return None
        finally:
            writer.close()

    async def _serve_tcp(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if len(self._tasks) >= MAX_IN_FLIGHT or task is None:
            writer.close()
            return
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        try:
            while True:
                head = await asyncio.wait_for(reader.readexactly(2), 30)
                query = await asyncio.wait_for(reader.readexactly(struct.unpack("!H", head)[0]), 30)
                response = await self.ask_tcp(query)
                self.record(query, response)
                if response is None:
                    return
                writer.write(struct.pack("!H", len(response)) + response)
                await writer.drain()
        except (OSError, TimeoutError, asyncio.IncompleteReadError):
            return
        finally:
            writer.close()

    def stop(self) -> None:
        """Close the sockets and drop lookups in flight; what was recorded stays readable."""
        if self._transport is not None:
            self._transport.close()
            self._transport = None
        if self._server is not None:
            self._server.close()
            self._server = None
        for task in list(self._tasks):
            task.cancel()


class _UdpFront(asyncio.DatagramProtocol):
    def __init__(self, log: DnsLog) -> None:
        self.log = log
        self.transport: asyncio.DatagramTransport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def datagram_received(self, data: bytes, addr: tuple[str, int]) -> None:
        self.log.spawn(self._answer(data, addr))

    async def _answer(self, query: bytes, addr: tuple[str, int]) -> None:
        response = await self.log.ask_udp(query)
        self.log.record(query, response)
        if response is not None and self.transport is not None:
            self.transport.sendto(response, addr)
