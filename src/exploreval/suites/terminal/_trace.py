"""What a verification run opened, executed and wrote, recorded from outside the sandbox.

The verdict must not depend on what the test process says about itself: code the agent planted
could run inside it and say anything. So the host watches the verification's file systems with
fanotify (the kernel's file-access notification; root only) while the test command runs, and
records every file a process of the verification **opened**, **executed**, **wrote** or listed
(a directory), with the process's host pid. Which process started which is read from ``/proc``
the first time a pid is seen (a process is seen at once: the kernel reports the executable it
runs), so the chain of programs that started a pytest session is known even after they exit.

**Judged by content, read as early as the kernel allows.** For a file of interest (the
agent's, or one written during the run) the host reads, as it takes the open from the queue,
what the file holds: its SHA-256 and its first bytes (:class:`TraceEvent` ``digest`` and
``head``), through the descriptor the kernel hands with the event, which holds the very inode
that was opened (a rename or delete after the open changes nothing). Nothing is read back by
name after the run. Opens are *notifications*, not permission events: a permission event makes
the opener wait for the host, and a host that opens files on a watched file system itself (an
overlay's file opens the one beneath it) can then wait on its own answer, which leaves the
sandbox's processes in an uninterruptible sleep. So between the open and the host's read the
file could change: every change is traced (each modification and truncation, not only the
close), and an open followed by a change of the same inode is marked ``rewritten``: what was
read then cannot be named, so the audit trusts none of it (a ``.pth`` that turns itself into a
comment, or into a genuine one, once loaded). Writes are traced as they happen, so a file a
process keeps open and writes to is known as written from its first write. Only writes through
a shared memory mapping raise no event (documented in docs/terminal.md).

This module only records; :mod:`._audit` decides what the record means.
"""

from __future__ import annotations

import base64
import contextlib
import ctypes
import dataclasses
import errno
import hashlib
import os
import select
import socket
import stat
import struct
import threading
from dataclasses import dataclass, field
from pathlib import Path

_LIBC = ctypes.CDLL(None, use_errno=True)
_LIBC.fanotify_init.argtypes = [ctypes.c_uint, ctypes.c_uint]
_LIBC.fanotify_init.restype = ctypes.c_int
_LIBC.fanotify_mark.argtypes = [
    ctypes.c_int,
    ctypes.c_uint,
    ctypes.c_uint64,
    ctypes.c_int,
    ctypes.c_char_p,
]
_LIBC.fanotify_mark.restype = ctypes.c_int

_FAN_CLOEXEC, _FAN_NONBLOCK = 0x1, 0x2
_FAN_UNLIMITED_QUEUE, _FAN_UNLIMITED_MARKS = 0x10, 0x20
_FAN_MARK_ADD, _FAN_MARK_FILESYSTEM = 0x1, 0x100
_FAN_MODIFY, _FAN_CLOSE_WRITE = 0x2, 0x8
_FAN_OPEN, _FAN_OPEN_EXEC = 0x20, 0x1000
_FAN_ONDIR = 0x40000000
_FAN_Q_OVERFLOW = 0x4000
_AT_FDCWD = -100
_METADATA = struct.Struct("IBBHQii")  # struct fanotify_event_metadata
# The kernel's process events connector (netlink): every fork on the machine, parent and child,
# however short-lived the child. /proc is read when a pid is first seen, but a process that has
# already exited by then (a quick ``cp``) has no /proc left to read.
_NETLINK_CONNECTOR, _CN_IDX_PROC, _CN_VAL_PROC = 11, 1, 1
_PROC_CN_MCAST_LISTEN, _PROC_EVENT_FORK = 1, 0x1
_NLMSG = struct.Struct("IHHII")
_CN_MSG = struct.Struct("IIIIHH")
_PROC_EVENT = struct.Struct("IIQ")
_FORK = struct.Struct("iiii")

#: Event kinds (bit flags). ``LIST``: a directory was opened (listed or searched).
OPEN, EXEC, WRITE, LIST = 1, 2, 4, 8
#: How much of a file of interest is kept at the moment it is opened (its digest covers it all).
HEAD_BYTES = 1 << 20
#: A file larger than this is digested only up to it (``digest`` then says ``partial``).
DIGEST_BYTES = 256 << 20
#: A verification that makes more distinct events than this is not trusted (recorded as
#: ``overflow``): the record would no longer say everything that happened.
MAX_EVENTS = 400_000


class TraceUnavailable(OSError):
    """fanotify could not be set up (not root, or a kernel without it): no verdict can be
    checked from outside, so the verification refuses to run."""


@dataclass(slots=True, frozen=True)
class TraceEvent:
    """One file access: ``seq`` orders all events of a trace (the kernel queues them in order)."""

    seq: int
    pid: int
    kind: int
    path: str
    dev: int
    ino: int
    executable: bool  # the file has an execute bit (scripts run by path need one)
    #: For a file of interest (the agent's, or written during the run), what it held at the
    #: moment this process opened it: ``sha256=`` + urlsafe base64 (as a wheel's RECORD writes
    #: it), its first :data:`HEAD_BYTES`, and the opener's command line and working directory.
    digest: str = ""
    head: bytes = b""
    argv: tuple[str, ...] = ()
    cwd: str = ""
    #: The inode changed after this open (or with it, in one merged event) before or while it
    #: was read: ``digest`` may not be what the opener read.
    rewritten: bool = False


@dataclass(slots=True)
class TracedProcess:
    """A process as first seen: its parent, and its start time (to tell a reused pid apart)."""

    pid: int
    ppid: int | None
    start: int | None
    first_seq: int
    comm: str = ""


@dataclass(slots=True)
class Trace:
    """Everything one verification touched on the watched file systems (in kernel order)."""

    events: list[TraceEvent] = field(default_factory=list)
    #: host pid -> every process seen with that pid, oldest first (pids can be reused).
    processes: dict[int, list[TracedProcess]] = field(default_factory=dict)
    overflow: bool = False
    #: Events that could not be attributed to a path (the file was gone before it was read).
    unreadable: int = 0
    #: child pid -> parent pid of every process forked while the trace ran (the kernel's
    #: process events; empty where they cannot be had).
    forks: dict[int, int] = field(default_factory=dict)

    def process_at(self, pid: int, seq: int) -> TracedProcess | None:
        """The process that had ``pid`` at event ``seq``."""
        found = None
        for proc in self.processes.get(pid, ()):
            if proc.first_seq <= seq:
                found = proc
        return found


def _proc_stat(pid: int) -> tuple[int, int, str] | None:
    """(ppid, start time, command name) from /proc/<pid>/stat, or None once it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            raw = fh.read()
    except OSError:
        return None
    head, _, rest = raw.rpartition(b")")
    comm = head.partition(b"(")[2].decode("utf-8", "replace")
    fields = rest.split()
    try:
        return int(fields[1]), int(fields[19]), comm
    except (IndexError, ValueError):
        return None


class FileTracer:
    """fanotify over a set of file systems, read by a thread until :meth:`stop`.

    ``ignore_pids``: processes whose accesses are not recorded (the host itself prepares and
    reads the verification's files; it is not part of what the verification ran).
    ``interesting``: (device, inode) of the files whose content is captured when opened (the
    agent's files); every file written during the run is added as it is written."""

    def __init__(
        self,
        *,
        ignore_pids: set[int] | None = None,
        interesting: set[tuple[int, int]] | None = None,
    ) -> None:
        self._fd = _LIBC.fanotify_init(
            _FAN_CLOEXEC | _FAN_NONBLOCK | _FAN_UNLIMITED_QUEUE | _FAN_UNLIMITED_MARKS,
            os.O_RDONLY | os.O_LARGEFILE | os.O_CLOEXEC,
        )
        if self._fd < 0:
            err = ctypes.get_errno()
            raise TraceUnavailable(
                err,
                f"fanotify_init: {os.strerror(err)} (verification records what the tests ran "
                "with fanotify, which needs root and a Linux kernel built with it)",
            )
        self.trace = Trace()
        self._ignore = set(ignore_pids or ()) | {os.getpid()}
        self._seq = 0
        self._seen: set[tuple[int, int, int, int, int]] = set()
        #: (pid, dev, ino) -> index of the latest write kept: a process's first and latest write
        #: of a file are kept (what it wrote before and after it ran anything else).
        self._last_write: dict[tuple[int, int, int], int] = {}
        self.interesting: set[tuple[int, int]] = set(interesting or ())
        #: (dev, ino) -> how many times it was written: an open after a write is a new event.
        self._version: dict[tuple[int, int], int] = {}
        #: pid -> (command line, working directory) read at its latest exec.
        self._commands: dict[int, tuple[tuple[str, ...], str]] = {}
        #: (dev, ino) -> indexes of the captured opens of it since its latest write.
        self._captured_opens: dict[tuple[int, int], list[int]] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._closed = False
        self._forks = _fork_listener()

    def mark(self, path: Path) -> None:
        """Watch the whole file system that ``path`` is on (every mount of it)."""
        mask = _FAN_OPEN | _FAN_OPEN_EXEC | _FAN_MODIFY | _FAN_CLOSE_WRITE | _FAN_ONDIR
        if (
            _LIBC.fanotify_mark(
                self._fd, _FAN_MARK_ADD | _FAN_MARK_FILESYSTEM, mask, _AT_FDCWD, bytes(path)
            )
            != 0
        ):
            err = ctypes.get_errno()
            raise TraceUnavailable(err, f"fanotify_mark {path}: {os.strerror(err)}")

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="exploreval-trace", daemon=True)
        self._thread.start()

    def stop(self) -> Trace:
        """Read what is still queued, stop, and return the trace."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        if not self._closed:
            self._drain_forks()
            self._drain()
            self._close()
        return self.trace

    def close(self) -> None:
        if not self._closed:
            self._stop.set()
            if self._thread is not None:
                self._thread.join()
            self._close()

    def _close(self) -> None:
        os.close(self._fd)
        if self._forks is not None:
            self._forks.close()
        self._closed = True

    def _run(self) -> None:
        watched: list[int | socket.socket] = [self._fd]
        if self._forks is not None:
            watched.append(self._forks)
        while not self._stop.is_set():
            with contextlib.suppress(InterruptedError):
                ready, _, _ = select.select(watched, [], [], 0.05)
                if self._forks is not None and self._forks in ready:
                    self._drain_forks()
                if self._fd in ready:
                    self._drain()

    def _drain_forks(self) -> None:
        """Record every fork the kernel reported (child -> parent), without blocking."""
        if self._forks is None:
            return
        while True:
            try:
                data = self._forks.recv(65536, socket.MSG_DONTWAIT)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:  # ENOBUFS: events were lost; /proc is still read per process
                continue
            offset = _NLMSG.size + _CN_MSG.size
            if len(data) < offset + _PROC_EVENT.size + _FORK.size:
                continue
            what = _PROC_EVENT.unpack_from(data, offset)[0]
            if what == _PROC_EVENT_FORK:
                _ppid, parent, child_pid, child = _FORK.unpack_from(data, offset + _PROC_EVENT.size)
                if child_pid == child:  # a new process, not a thread
                    self.trace.forks[child] = parent

    def _drain(self) -> None:
        while True:
            try:
                buf = os.read(self._fd, 256 * 1024)
            except BlockingIOError:
                return
            except OSError as exc:
                if exc.errno == errno.EINTR:
                    continue
                return
            if not buf:
                return
            self._parse(buf)

    def _parse(self, buf: bytes) -> None:
        offset = 0
        while offset + _METADATA.size <= len(buf):
            length, _vers, _res, _mlen, mask, fd, pid = _METADATA.unpack_from(buf, offset)
            offset += length or _METADATA.size
            if mask & _FAN_Q_OVERFLOW:
                self.trace.overflow = True
            if fd < 0:
                continue
            try:
                if pid not in self._ignore:
                    self._record(fd, pid, mask)
            except Exception:  # noqa: BLE001 - one unreadable event never stops the trace
                self.trace.unreadable += 1
            finally:
                os.close(fd)

    def _record(self, fd: int, pid: int, mask: int) -> None:
        """Record the event (``fd`` holds the inode it is about)."""
        kind = (OPEN if mask & _FAN_OPEN else 0) | (EXEC if mask & _FAN_OPEN_EXEC else 0)
        kind |= WRITE if mask & (_FAN_CLOSE_WRITE | _FAN_MODIFY) else 0
        try:
            st = os.fstat(fd)
        except OSError:
            self.trace.unreadable += 1
            return
        identity = (st.st_dev, st.st_ino)
        if stat.S_ISDIR(st.st_mode):
            kind = LIST if kind & OPEN else 0
        elif not stat.S_ISREG(st.st_mode):
            return  # devices, pipes: never code, never a result
        if not kind:
            return
        if kind & WRITE:
            self.interesting.add(identity)
            self._version[identity] = self._version.get(identity, 0) + 1
            # what was opened before this change (or in the same merged event) was read by
            # the host after the opener: its capture may not be what the opener read
            for index in self._captured_opens.pop(identity, ()):
                self.trace.events[index] = dataclasses.replace(
                    self.trace.events[index], rewritten=True
                )
        key = (
            pid,
            kind,
            st.st_dev,
            st.st_ino,
            0 if kind & WRITE else self._version.get(identity, 0),
        )
        if key in self._seen and not kind & WRITE:
            return
        try:
            path = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            self.trace.unreadable += 1
            return
        self._note_process(pid)
        if kind & EXEC:  # the command line of its new program, kept for when it has exited
            found = command_of(pid)
            if found is not None:
                self._commands[pid] = found
        self._seq += 1
        # an open and a change merged into one event: what was read cannot be named
        unsure = bool(kind & (OPEN | EXEC) and kind & WRITE)
        event = TraceEvent(
            self._seq,
            pid,
            kind,
            path,
            st.st_dev,
            st.st_ino,
            bool(st.st_mode & 0o111),
            rewritten=unsure,
        )
        if key in self._seen:  # a later write of a file this process wrote before
            wkey = (pid, st.st_dev, st.st_ino)
            last = self._last_write.get(wkey)
            if last is not None:
                self.trace.events[last] = event
                return
            self._last_write[wkey] = len(self.trace.events)
        self._seen.add(key)
        if len(self.trace.events) >= MAX_EVENTS:
            self.trace.overflow = True
            return
        self.trace.events.append(event)
        if kind & (OPEN | EXEC) and identity in self.interesting:
            index = len(self.trace.events) - 1
            # the opener's command line now; once it has exited, the one its latest exec had
            command = command_of(pid) or self._commands.get(pid)
            captured = _captured(event, fd, command)
            self.trace.events[index] = captured
            if not unsure:
                self._captured_opens.setdefault(identity, []).append(index)

    def _note_process(self, pid: int) -> None:
        """Record ``pid`` (and, the first time, the ancestors not seen yet: a parent that never
        touches a watched file still belongs to the chain)."""
        for _ in range(64):
            known = self.trace.processes.get(pid)
            stat = _proc_stat(pid)
            if known and (stat is None or known[-1].start == stat[1]):
                return
            ppid, start, comm = stat if stat is not None else (None, None, "")
            self.trace.processes.setdefault(pid, []).append(
                TracedProcess(pid=pid, ppid=ppid, start=start, first_seq=self._seq + 1, comm=comm)
            )
            if not ppid or ppid in self._ignore:
                return
            pid = ppid


def _captured(
    event: TraceEvent, fd: int, command: tuple[tuple[str, ...], str] | None
) -> TraceEvent:
    """``event`` with what its file holds now (read through the event's own descriptor), and who
    opened it (command line, working directory: a Python interpreter's script is its code)."""
    digest = hashlib.sha256()
    head = b""
    offset = 0
    while offset < DIGEST_BYTES:
        chunk = os.pread(fd, 1 << 20, offset)
        if not chunk:
            break
        if len(head) < HEAD_BYTES:
            head += chunk[: HEAD_BYTES - len(head)]
        digest.update(chunk)
        offset += len(chunk)
    text = "sha256=" + base64.urlsafe_b64encode(digest.digest()).rstrip(b"=").decode()
    if offset >= DIGEST_BYTES:
        text = "partial:" + text
    argv, cwd = command or ((), "")
    return dataclasses.replace(event, digest=text, head=head, argv=argv, cwd=cwd)


def command_of(pid: int) -> tuple[tuple[str, ...], str] | None:
    """(command line, working directory) of ``pid`` now, or None once it is gone."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            raw = fh.read(65536)
        cwd = os.readlink(f"/proc/{pid}/cwd")
    except OSError:
        return None
    if not raw:  # a zombie: its command line is gone with its memory
        return None
    return tuple(a.decode("utf-8", "replace") for a in raw.split(b"\0")[:-1]), cwd


def _fork_listener() -> socket.socket | None:
    """A netlink socket subscribed to the kernel's process events, or None (not available)."""
    try:
        sock = socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, _NETLINK_CONNECTOR)
    except OSError:
        return None
    try:
        sock.bind((0, _CN_IDX_PROC))
        op = struct.pack("I", _PROC_CN_MCAST_LISTEN)
        message = _CN_MSG.pack(_CN_IDX_PROC, _CN_VAL_PROC, 0, 0, len(op), 0) + op
        sock.send(_NLMSG.pack(_NLMSG.size + len(message), 3, 0, 0, 0) + message)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    except OSError:
        sock.close()
        return None
    return sock


def fanotify_available() -> str | None:
    """None when verification can record a trace here; else why not (for the system check)."""
    try:
        tracer = FileTracer()
    except TraceUnavailable as exc:
        return str(exc)
    tracer.close()
    return None
