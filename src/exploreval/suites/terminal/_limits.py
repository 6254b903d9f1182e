"""Per-episode resource limits, and the dedicated uid that makes them hold for "root" inside.

Inside the sandbox the agent is uid 0 of its own user namespace with no capabilities; on the
host it is a dedicated uid leased from a range (one per live sandbox, held by an flock so
concurrent processes never share one). That is what makes ``RLIMIT_NPROC`` a per-sandbox process
cap (the kernel exempts only host root and capability holders). Per-process rlimits (address
space, CPU seconds, file size) are set with ``prlimit`` on the bwrap command and inherited by
everything inside. Totals across processes (CPU seconds, resident memory) and the wall clock are
enforced by :class:`TreeStats` sampling, read by the sandbox's watchdog, which kills the whole
PID namespace when a limit is crossed.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

UID_BASE = 3_100_000
UID_SLOTS = 2048
#: Each lease's subordinate range (``SUBID_COUNT`` uids and gids from ``sub_base``): the other
#: users of a task's root (``useradd``, ``su``, ``sshd``), none of them a user of this machine.
SUBID_BASE = 1_000_000_000
SUBID_COUNT = 65536
_LEASE_DIR = Path("/tmp/exploreval-terminal-uids")
_CLK_TCK = os.sysconf("SC_CLK_TCK")
_PAGE = os.sysconf("SC_PAGE_SIZE")


class Limits(BaseModel):
    """Resource limits of one sandbox (see docs/terminal.md, "Limits", for what each covers)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: int = 1
    wall_s: float = Field(default=900.0, gt=0, description="sandbox lifetime, all activity")
    cpu_s: float = Field(default=600.0, gt=0, description="total CPU seconds of all processes")
    memory_mb: int = Field(default=2048, gt=16, description="total resident memory")
    address_space_mb: int | None = Field(
        default=None, description="per-process RLIMIT_AS (default: memory_mb)"
    )
    nproc: int = Field(default=256, ge=8, description="processes+threads of the sandbox uid")
    file_size_mb: int = Field(default=1024, gt=0, description="per-file RLIMIT_FSIZE")
    nproc_grace_s: float = Field(
        default=2.0, gt=0, description="the process cap may be hit this long before the kill"
    )
    sample_interval_s: float = Field(default=0.25, gt=0, description="watchdog period")

    def prlimit_argv(self) -> list[str]:
        address_space = self.address_space_mb or self.memory_mb
        cpu = max(1, int(self.cpu_s) + 1)
        return [
            "prlimit",
            f"--nproc={self.nproc}",
            f"--as={address_space * 1024 * 1024}",
            f"--cpu={cpu}",
            f"--fsize={self.file_size_mb * 1024 * 1024}",
            "--core=0",
            "--",
        ]


#: Every uid this process has leased (tests check that none of *their* sandboxes survive,
#: while other processes on the machine may be running sandboxes of their own).
LEASED_UIDS: set[int] = set()


class UidLease:
    """An exclusive dedicated host uid; released by :meth:`release` or when this process dies."""

    def __init__(self) -> None:
        _LEASE_DIR.mkdir(mode=0o700, exist_ok=True)
        start = (os.getpid() * 7) % UID_SLOTS
        for i in range(UID_SLOTS):
            slot = (start + i) % UID_SLOTS
            fd = os.open(_LEASE_DIR / f"{slot}.lock", os.O_RDWR | os.O_CREAT, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            self.uid = UID_BASE + slot
            #: The lease's subordinate range: uid (and gid) k > 0 of a many-user root is
            #: ``sub_base + k`` on the host.
            self.sub_base = SUBID_BASE + slot * SUBID_COUNT
            LEASED_UIDS.add(self.uid)
            self._fd: int | None = fd
            _kill_uid_leftovers(self.uid, self.sub_base)
            return
        raise RuntimeError(f"all {UID_SLOTS} sandbox uids are in use")

    def release(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = None


def _kill_uid_leftovers(uid: int, sub_base: int) -> None:
    """Kill processes still running as a freshly leased uid or one of its subordinate range
    (a run killed before cleanup)."""
    import signal

    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            owner = os.stat(entry.path).st_uid
            if owner == uid or sub_base <= owner < sub_base + SUBID_COUNT:
                os.kill(int(entry.name), signal.SIGKILL)
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            continue


@dataclass
class TreeSample:
    processes: int
    threads: int
    cpu_s: float
    #: Resident memory, MB: each process's anonymous and file pages (its shared memory
    #: pages are counted once, in ``shm_mb``).
    rss_mb: float
    #: Shared memory objects of the kernel's own (memfd, System V segments, shared anonymous
    #: mappings) a process of the tree holds open or maps, MB allocated, each counted once.
    shm_mb: float = 0.0

    @property
    def memory_mb(self) -> float:
        """What ``memory_mb`` caps: resident memory plus shared memory objects."""
        return self.rss_mb + self.shm_mb


def _children(pid: int) -> list[int]:
    out: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except FileNotFoundError:
        return out
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as fh:
                out.extend(int(c) for c in fh.read().split())
        except FileNotFoundError:
            continue
    return out


def _shm_device() -> int:
    """The device of the kernel's internal shared memory file system (memfds, System V
    segments and shared anonymous mappings all live there, outside every mounted tmpfs)."""
    fd = os.memfd_create("exploreval-probe", os.MFD_CLOEXEC)
    try:
        return os.fstat(fd).st_dev
    finally:
        os.close(fd)


_SHM_DEV = _shm_device()
#: How /proc/<pid>/maps names that device ("00:01").
_SHM_MAPS = f" {os.major(_SHM_DEV):02x}:{os.minor(_SHM_DEV):02x} ".encode()


def _shared_objects(pid: int, found: dict[int, int]) -> None:
    """Add the allocated bytes of every object on the shared memory device that ``pid`` holds
    open (an unmapped memfd) or maps (a System V segment, a memfd whose descriptor is closed),
    by inode: pages written through one and read through another are counted once."""
    fd_dir = f"/proc/{pid}/fd"
    with contextlib.suppress(OSError):
        for name in os.listdir(fd_dir):
            with contextlib.suppress(OSError):
                st = os.stat(f"{fd_dir}/{name}")
                if st.st_dev == _SHM_DEV:
                    found[st.st_ino] = st.st_blocks * 512
    try:
        with open(f"/proc/{pid}/maps", "rb") as fh:
            maps = fh.read()
    except OSError:
        return
    if _SHM_MAPS not in maps:
        return
    for line in maps.splitlines():
        if _SHM_MAPS in line:
            fields = line.split(maxsplit=5)
            with contextlib.suppress(OSError, IndexError, ValueError):
                if int(fields[4]) not in found:
                    st = os.stat(f"/proc/{pid}/map_files/{fields[0].decode()}")
                    found[st.st_ino] = st.st_blocks * 512


def _resident_pages(pid: int) -> int:
    """RssAnon + RssFile of ``pid``, pages (RssShmem is not: the episode's disk holds its
    tmpfs files, :func:`_shared_objects` the rest)."""
    with open(f"/proc/{pid}/status", "rb") as fh:
        status = fh.read()
    kb = 0
    for key in (b"\nRssAnon:", b"\nRssFile:"):
        at = status.find(key)
        if at >= 0:
            kb += int(status[at + len(key) :].split(None, 1)[0])
    return kb * 1024 // _PAGE


def sample_tree(root_pid: int) -> TreeSample | None:
    """CPU seconds (own + reaped children), memory and counts of ``root_pid`` and descendants.

    Summing utime+stime+cutime+cstime over live processes counts every process that ever ran in
    the tree: a reaped child's times are folded into its parent's c-times. Memory is each
    process's resident anonymous and file pages, plus every shared memory object of the tree
    once (:func:`_shared_objects`).
    """
    stack = [root_pid]
    processes = threads = 0
    ticks = 0
    rss_pages = 0
    seen: set[int] = set()
    shared: dict[int, int] = {}
    while stack:
        pid = stack.pop()
        if pid in seen:
            continue
        seen.add(pid)
        try:
            with open(f"/proc/{pid}/stat", "rb") as fh:
                stat = fh.read()
            rss_pages += _resident_pages(pid)
        except (FileNotFoundError, ProcessLookupError):
            if pid == root_pid:
                return None
            continue
        fields = stat[stat.rindex(b")") + 2 :].split()
        # fields[0] is field 3 (state); utime=14, stime=15, cutime=16, cstime=17, threads=20
        ticks += int(fields[11]) + int(fields[12]) + int(fields[13]) + int(fields[14])
        threads += int(fields[17])
        processes += 1
        _shared_objects(pid, shared)
        stack.extend(_children(pid))
    rss_mb = rss_pages * _PAGE / 2**20
    return TreeSample(processes, threads, ticks / _CLK_TCK, rss_mb, sum(shared.values()) / 2**20)
