"""Start child processes that live exactly as long as this process, whatever thread asks.

Linux's parent-death signal (``PR_SET_PDEATHSIG``, and bwrap's ``--die-with-parent`` built on
it) fires when the *thread* that forked the child exits, not the process. A server started from
``asyncio.to_thread`` or a short-lived executor worker is therefore killed as soon as that worker
thread ends, although the run that wanted it goes on (issue 24: the embedded model died between
``asyncio.run`` calls).

:func:`spawn_tied` forks every such child from one dedicated thread that lives until the process
exits, so the parent-death signal means what it says: the child dies when this process dies,
``kill -9`` included. The child is also registered with the scratch guardian
(:func:`~exploreval.core.register_process_group`), which kills its process group when the pipe
from this process closes: a second, thread-independent guarantee.
"""

from __future__ import annotations

import contextlib
import queue
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from exploreval.core._lifecycle import register_process_group

_Job = tuple[Callable[[], Any], "Future[Any]"]


def set_parent_death_signal(sig: int = signal.SIGKILL) -> None:  # pragma: no cover - in child
    """In a forked child (``preexec_fn``): receive ``sig`` when the forking thread ends."""
    if sys.platform.startswith("linux"):
        import ctypes

        with contextlib.suppress(Exception):
            ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, int(sig))  # PR_SET_PDEATHSIG


class _Spawner:
    """One daemon thread that forks children on request and never exits before the process."""

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def _ensure(self) -> None:
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._loop, name="exploreval-spawner", daemon=True
                )
                self._thread.start()

    def _loop(self) -> None:
        while True:
            fn, future = self._jobs.get()
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(fn())
            except BaseException as exc:  # handed to the caller, never lost here
                future.set_exception(exc)

    @property
    def thread(self) -> threading.Thread | None:
        return self._thread

    # -> Any: whatever fn returns
    def run(self, fn: Callable[[], Any]) -> Any:
        if threading.current_thread() is self._thread:
            return fn()
        self._ensure()
        future: Future[Any] = Future()
        self._jobs.put((fn, future))
        return future.result()


_SPAWNER = _Spawner()


def spawner_thread() -> threading.Thread | None:
    """The thread every tied child is forked from (tests check it outlives callers)."""
    return _SPAWNER.thread


def spawn_tied(argv: list[str], *, own_group: bool = True, **popen: Any) -> subprocess.Popen[bytes]:
    """``subprocess.Popen(argv, **popen)`` forked from the process-lifetime spawner thread, with
    ``SIGKILL`` as its parent-death signal and its process group killed by the scratch guardian
    when this process ends. ``own_group`` starts it in a new session (a Ctrl-C aimed at the
    run's group does not hit it; the run stops it in order)."""
    if "preexec_fn" in popen:
        raise TypeError("spawn_tied sets preexec_fn itself")

    def start() -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            argv,
            preexec_fn=set_parent_death_signal,  # noqa: PLW1509 - only sets the death signal
            start_new_session=own_group,
            **popen,
        )

    proc: subprocess.Popen[bytes] = _SPAWNER.run(start)
    if own_group:
        register_process_group(proc.pid)
    return proc
