"""Env lifecycle support: shared per-run resources, scratch space that never outlives the run,
and an executor for blocking env work.

* :class:`SharedResources` builds an expensive thing once per key (a task's work-dir template, a
  compiled game) and disposes of it when the run ends. The runner hands its pool to every env
  (``env.shared``); envs made outside a run use the process-wide default, closed at exit.
* :func:`scratch_dir` returns a fresh directory under this process's scratch root. A tiny
  guardian process holds a pipe from this one: when the pipe closes (normal exit, crash or
  ``kill -9``) it deletes the root and kills the process groups envs registered with
  :func:`register_process_group`. Roots of dead processes whose guardian was killed too are
  reaped by :func:`reap_stale_scratch` on the next start.
* :class:`DaemonExecutor` runs blocking env calls off the event loop on daemon threads, so a step
  stuck in a system call can be abandoned after an episode timeout without blocking the
  interpreter's exit.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import inspect
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import uuid
from collections.abc import Awaitable, Callable
from concurrent.futures import Executor, Future
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from exploreval.core._files import pid_alive

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor

T = TypeVar("T")

SCRATCH_PREFIX = "exploreval-scratch-"


# -- shared resources ---------------------------------------------------------------------------
class SharedResources:
    """Build-once resources keyed by a hashable key, disposed of (in reverse order) by close()."""

    def __init__(self, name: str = "run") -> None:
        self.name = name
        self._values: dict[Any, Any] = {}
        self._cleanups: list[tuple[Any, Callable[[Any], Any]]] = []
        self._locks: dict[Any, threading.Lock] = {}
        self._guard = threading.Lock()
        self._async_locks: dict[Any, asyncio.Lock] = {}
        self.closed = False
        #: How many times each key was built (tests check that shared work ran once).
        self.builds: dict[Any, int] = {}

    def _lock_for(self, key: Any) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(key, threading.Lock())

    def get(self, key: Any, build: Callable[[], T], cleanup: Callable[[T], Any] | None = None) -> T:
        """The resource for ``key``, built by ``build()`` on first use (thread-safe)."""
        if self.closed:
            raise RuntimeError(f"shared resources of {self.name!r} are closed")
        if key in self._values:
            return cast(T, self._values[key])
        with self._lock_for(key):
            if key not in self._values:
                value = build()
                self._values[key] = value
                self.builds[key] = self.builds.get(key, 0) + 1
                if cleanup is not None:
                    self._cleanups.append((value, cleanup))
        return cast(T, self._values[key])

    async def aget(
        self,
        key: Any,
        build: Callable[[], T] | Callable[[], Awaitable[T]],
        cleanup: Callable[[T], Any] | None = None,
    ) -> T:
        """Async variant: a coroutine ``build`` is awaited, a plain one runs in a thread."""
        if key in self._values:
            return cast(T, self._values[key])
        lock = self._async_locks.setdefault(key, asyncio.Lock())
        async with lock:
            if key not in self._values:
                if inspect.iscoroutinefunction(build):
                    value = await build()
                else:
                    value = await asyncio.to_thread(cast(Callable[[], T], build))
                self._values[key] = value
                self.builds[key] = self.builds.get(key, 0) + 1
                if cleanup is not None:
                    self._cleanups.append((value, cleanup))
        return cast(T, self._values[key])

    def close(self) -> list[str]:
        """Run every cleanup (last built first); returns the errors instead of raising them."""
        errors: list[str] = []
        while self._cleanups:
            value, cleanup = self._cleanups.pop()
            try:
                result = cleanup(value)
                if inspect.isawaitable(result):  # an async cleanup called from sync code
                    asyncio.run(cast(Any, result))
            except Exception as exc:
                errors.append(f"{type(exc).__name__}: {exc}")
        self._values.clear()
        self.closed = True
        return errors


DEFAULT_SHARED = SharedResources("process")
atexit.register(DEFAULT_SHARED.close)


# -- scratch space with a guardian --------------------------------------------------------------
_GUARDIAN = r"""
import os, shutil, signal, sys
signal.signal(signal.SIGINT, signal.SIG_IGN)
signal.signal(signal.SIGTERM, signal.SIG_IGN)
root, parent = sys.argv[1], int(sys.argv[2])
groups = os.path.join(root, ".process-groups")
try:
    while sys.stdin.buffer.read(65536):
        pass
except Exception:
    pass
try:
    with open(groups) as fh:
        for line in fh:
            line = line.strip()
            if line.lstrip("-").isdigit():
                try:
                    os.killpg(int(line), signal.SIGKILL)
                except Exception:
                    pass
except FileNotFoundError:
    pass
try:  # file systems mounted under the root (sandbox disks, overlays): deepest first, lazily
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    points = []
    with open("/proc/self/mountinfo") as fh:
        for line in fh:
            point = line.split()[4].replace("\\040", " ")
            if point == root or point.startswith(root + "/"):
                points.append(point)
    for point in sorted(points, key=len, reverse=True):
        libc.umount2(point.encode(), 2)
except Exception:
    pass
shutil.rmtree(root, ignore_errors=True)
"""


class _Scratch:
    def __init__(self) -> None:
        self.root: Path | None = None
        self.guardian: subprocess.Popen[bytes] | None = None
        self.lock = threading.Lock()

    def ensure(self) -> Path:
        with self.lock:
            if self.root is not None and self.root.exists():
                return self.root
            reap_stale_scratch()
            base = Path(os.environ.get("EXPLOREVAL_SCRATCH", tempfile.gettempdir()))
            base.mkdir(parents=True, exist_ok=True)
            root = base / f"{SCRATCH_PREFIX}{os.getpid()}-{uuid.uuid4().hex[:8]}"
            root.mkdir(mode=0o700)
            self.root = root
            # The guardian reads its stdin until EOF: the write end lives only in this process,
            # so EOF means this process is gone, however it ended.
            self.guardian = subprocess.Popen(
                [sys.executable, "-S", "-c", _GUARDIAN, str(root), str(os.getpid())],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
                close_fds=True,
            )
            return root

    def close(self) -> None:
        with self.lock:
            root, self.root = self.root, None
            if root is not None:
                _kill_groups(root)
                unmount_under(root)
                shutil.rmtree(root, ignore_errors=True)
            if self.guardian is not None:
                with contextlib.suppress(Exception):
                    assert self.guardian.stdin is not None
                    self.guardian.stdin.close()
                with contextlib.suppress(Exception):
                    self.guardian.wait(timeout=5)
                self.guardian = None


def mounts_under(root: Path) -> list[Path]:
    """Mount points at or below ``root`` in this process's mount namespace, deepest first."""
    prefix = str(root).rstrip("/")
    points: list[str] = []
    with contextlib.suppress(OSError), open("/proc/self/mountinfo", encoding="utf-8") as fh:
        for line in fh:
            point = line.split()[4].replace("\\040", " ")
            if point == prefix or point.startswith(prefix + "/"):
                points.append(point)
    return [Path(p) for p in sorted(points, key=len, reverse=True)]


def unmount_under(root: Path) -> None:
    """Lazily unmount every file system mounted at or below ``root`` (deepest first), so a
    scratch directory holding sandbox disks and overlays can be removed (best effort: only root
    mounts, and a path with nothing mounted is left alone)."""
    points = mounts_under(root)
    if not points:
        return
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    for point in points:
        libc.umount2(bytes(point), 2)  # MNT_DETACH


def _kill_groups(root: Path) -> None:
    path = root / ".process-groups"
    with contextlib.suppress(FileNotFoundError):
        for line in path.read_text().split():
            if line.lstrip("-").isdigit():
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(int(line), signal.SIGKILL)


_SCRATCH = _Scratch()
atexit.register(_SCRATCH.close)


def scratch_root() -> Path:
    """This process's scratch root (created, with its guardian, on first use)."""
    return _SCRATCH.ensure()


def scratch_dir(prefix: str = "env") -> Path:
    """A new empty directory that is deleted when this process ends, however it ends."""
    root = scratch_root()
    path = Path(tempfile.mkdtemp(prefix=f"{prefix}-", dir=root))
    return path


def register_process_group(pgid: int) -> None:
    """Kill process group ``pgid`` when this process ends, however it ends (best effort)."""
    root = scratch_root()
    with open(root / ".process-groups", "a", encoding="utf-8") as fh:
        fh.write(f"{pgid}\n")


def reap_stale_scratch(base: Path | None = None) -> list[Path]:
    """Delete scratch roots left by dead processes whose guardian died too; returns them."""
    base = base or Path(os.environ.get("EXPLOREVAL_SCRATCH", tempfile.gettempdir()))
    removed: list[Path] = []
    if not base.exists():
        return removed
    for path in base.glob(f"{SCRATCH_PREFIX}*"):
        pid_text = path.name[len(SCRATCH_PREFIX) :].split("-", 1)[0]
        if not pid_text.isdigit():
            continue
        pid = int(pid_text)
        if pid == os.getpid() or pid_alive(pid):
            continue
        _kill_groups(path)
        unmount_under(path)
        shutil.rmtree(path, ignore_errors=True)
        removed.append(path)
    return removed


def die_with_parent(parent: int) -> None:
    """Make this (worker) process end when ``parent`` does, however it ends: a pool initializer.

    A pool worker whose parent was killed otherwise waits forever (it holds its own end of the
    task queue, so it never reads end-of-file), and keeps open whatever it inherited, such as
    the pipe whose closing tells the scratch guardian to clean up. Linux: the kernel sends
    SIGKILL when the parent dies (``PR_SET_PDEATHSIG``); a parent already gone ends it now."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(Exception):
            import ctypes

            pr_set_pdeathsig = 1
            ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # died before the request took effect
        os._exit(1)


def bound_process_pool(workers: int, start: str) -> ProcessPoolExecutor:
    """A process pool (``start``: "fork" or "spawn") whose workers end when this process ends,
    however it ends (``die_with_parent``): a score, a reduce, an index or a column sync killed
    with ``kill -9`` leaves no worker behind holding its scratch or its pipes."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    return ProcessPoolExecutor(
        workers,
        multiprocessing.get_context(start),
        initializer=die_with_parent,
        initargs=(os.getpid(),),
    )


# -- off-loop execution ---------------------------------------------------------------------------
class DaemonExecutor(Executor):
    """A thread pool whose workers are daemon threads.

    ``concurrent.futures.ThreadPoolExecutor`` joins its workers at interpreter exit, so one env
    step stuck in a system call would keep a finished run from exiting; here an abandoned call
    (its episode timed out and its env was closed) cannot hold the process.
    """

    def __init__(self, max_workers: int = 32, name: str = "exploreval-env") -> None:
        self.max_workers = max_workers
        self.name = name
        self._queue: queue.SimpleQueue[
            tuple[Future[Any], Callable[..., Any], tuple[Any, ...], dict[str, Any]] | None
        ] = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []
        self._idle = 0
        self._pending = 0
        self._lock = threading.Lock()
        self._shutdown = False

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        if self._shutdown:
            raise RuntimeError("executor is shut down")
        future: Future[T] = Future()
        with self._lock:
            self._queue.put((future, fn, args, kwargs))
            self._pending += 1
            if self._pending > self._idle and len(self._threads) < self.max_workers:
                thread = threading.Thread(
                    target=self._work, name=f"{self.name}-{len(self._threads)}", daemon=True
                )
                self._threads.append(thread)
                thread.start()
        return future

    def _work(self) -> None:
        while True:
            with self._lock:
                self._idle += 1
            item = self._queue.get()
            with self._lock:
                self._idle -= 1
                if item is not None:
                    self._pending -= 1
            if item is None:
                return
            future, fn, args, kwargs = item
            if future.set_running_or_notify_cancel():
                try:
                    future.set_result(fn(*args, **kwargs))
                except BaseException as exc:  # noqa: BLE001 - handed to the waiting coroutine
                    future.set_exception(exc)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        self._shutdown = True
        for _ in self._threads:
            self._queue.put(None)
        if wait:
            for thread in self._threads:
                thread.join()


_OFF_LOOP = DaemonExecutor()


async def run_off_loop(fn: Callable[..., T], *args: Any) -> T:
    """Run a blocking callable on a daemon worker thread and await its result."""
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(_OFF_LOOP, fn, *args)
