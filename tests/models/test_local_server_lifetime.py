"""The embedded model's server: it lives exactly as long as the run, and a crash is named at once.

Issue 24: the server was started with a parent-death signal from an ``asyncio.to_thread`` worker,
so it died when that *thread* ended; and a server killed by a signal was reported as "cannot
connect" after six retries. These run the real llama.cpp server.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from exploreval.core import spawn_tied, spawner_thread
from exploreval.models import LOCAL_SERVERS, describe_exit
from exploreval.runner import RunFailedError, run_experiment, spec_from_dict
from exploreval.store import RunDir


def _alive(pid: int) -> bool:
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_a_tied_child_outlives_the_thread_that_asked_for_it() -> None:
    """The parent-death signal follows the forking thread: children are forked from one
    process-lifetime thread, so a short-lived caller thread ending does not kill them."""
    holder: dict[str, subprocess.Popen[bytes]] = {}

    def start() -> None:
        holder["proc"] = spawn_tied(["sleep", "30"])

    worker = threading.Thread(target=start)
    worker.start()
    worker.join()  # the asking thread is gone
    proc = holder["proc"]
    try:
        time.sleep(0.5)
        assert proc.poll() is None, "the child died with the thread that asked for it"
        thread = spawner_thread()
        assert thread is not None and thread.is_alive() and thread is not worker
    finally:
        proc.kill()
        proc.wait()


def test_a_tied_child_dies_with_a_killed_process(tmp_path: Path) -> None:
    code = (
        "import threading, time\n"
        "from exploreval.core import spawn_tied\n"
        "box = {}\n"
        "t = threading.Thread(target=lambda: box.update(p=spawn_tied(['sleep', '300'])))\n"
        "t.start(); t.join()\n"
        "print(box['p'].pid, flush=True)\n"
        "time.sleep(300)\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert parent.stdout is not None
    child = int(parent.stdout.readline())
    assert _alive(child)
    parent.kill()
    parent.wait()
    deadline = time.time() + 10
    while _alive(child) and time.time() < deadline:
        time.sleep(0.05)
    if _alive(child):
        os.kill(child, signal.SIGKILL)
        pytest.fail("a tied child outlived its kill -9'd process")


def test_exit_descriptions_name_the_signal() -> None:
    assert describe_exit(-4).startswith("signal 4 (SIGILL")
    assert "illegal instruction" in describe_exit(-4).lower()
    assert describe_exit(-9).startswith("signal 9 (SIGKILL")
    assert describe_exit(3) == "exit code 3"


@pytest.mark.slow
@pytest.mark.local_llm
def test_server_acquired_inside_one_event_loop_serves_after_it_closed() -> None:
    """Acquire through ``asyncio.to_thread`` in one ``asyncio.run`` and use it after that loop
    (and its executor threads) are gone: the old parent-death signal killed it right there."""
    from exploreval.models import acquire_local, model_session, release_local

    base_url = asyncio.run(acquire_local("local:smollm2"))
    try:
        time.sleep(1.5)
        assert LOCAL_SERVERS._servers["local:smollm2"].running, "the server died with the loop"

        async def ask() -> str:
            from exploreval.core import Message
            from exploreval.models import SamplingParams

            async with model_session("local:smollm2", base_url=base_url) as client:
                done = await client.complete(
                    [Message(role="user", content="Say hi.")], SamplingParams(max_tokens=4)
                )
                return done.text

        assert asyncio.run(ask()).strip()
    finally:
        release_local("local:smollm2")


def _cached_calls(run_dir: Path) -> int:
    path = run_dir / "cache.sqlite"
    if not path.exists():
        return 0
    try:
        with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
            return int(db.execute("select count(*) from responses").fetchone()[0])
    except sqlite3.Error:
        return 0


def _llm_spec(step_sleep_s: float, max_steps: int, seeds: str = "0") -> dict[str, object]:
    return {
        "suites": [
            {
                "env_id": "test/LineWalk-v0",
                "presets": ["long"],
                "seeds": seeds,
                "options": {"step_sleep_s": step_sleep_s},
            }
        ],
        "agents": [
            {
                "kind": "llm",
                "model": "local:smollm2",
                "history": "none",
                "sampling": {"temperature": 0.0, "max_tokens": 6},
            }
        ],
        "max_steps": max_steps,
    }


@pytest.mark.slow
@pytest.mark.local_llm
def test_local_server_used_through_the_runner_stays_up_for_over_30_s(tmp_path: Path) -> None:
    started = time.monotonic()
    summary = run_experiment(spec_from_dict(_llm_spec(11.0, 4)), str(tmp_path / "r"))
    took = time.monotonic() - started
    assert took > 30
    assert summary.status == "finished" and summary.completed == 1
    (record,) = RunDir(tmp_path / "r").iter_records()
    assert record.n_steps == 4
    assert all(s.raw_output is not None and not s.cached for s in record.steps)


@pytest.mark.slow
@pytest.mark.local_llm
def test_a_server_killed_mid_run_is_reported_dead_within_a_second(tmp_path: Path) -> None:
    """SIGILL (what a CPU-incompatible build dies of) mid-run: the run stops at once with the
    signal and the log, not after retries as "cannot connect"; resume then finishes it."""
    out = tmp_path / "r"
    killed: dict[str, float] = {}

    def kill_when_serving() -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            server = LOCAL_SERVERS._servers.get("local:smollm2")
            if server is not None and server.pid and _cached_calls(out) >= 2:
                time.sleep(0.5)  # mid-run: some calls are cached, steps are sleeping
                os.kill(server.pid, signal.SIGILL)
                killed["at"] = time.monotonic()
                return
            time.sleep(0.05)

    killer = threading.Thread(target=kill_when_serving)
    killer.start()
    with pytest.raises(RunFailedError) as failure:
        run_experiment(spec_from_dict(_llm_spec(2.0, 8, seeds="0-1")), str(out))
    stopped = time.monotonic()
    killer.join()
    message = str(failure.value)
    assert "died" in message and "signal 4 (SIGILL" in message, message
    assert "cannot connect" not in message and "retries" not in message
    assert "last log lines" in message
    assert stopped - killed["at"] < 1.0, f"noticed after {stopped - killed['at']:.2f} s"
    manifest = RunDir(out).read_manifest()
    assert manifest.status == "failed" and "SIGILL" in (manifest.error or "")
    # resume: a new server, the run finishes; calls made before the kill are replayed
    summary = run_experiment(spec_from_dict(_llm_spec(2.0, 8, seeds="0-1")), str(out))
    assert summary.status == "finished"
    records = [r for r in RunDir(out).iter_records() if r.status == "ok"]
    assert len(records) == 2 and any(s.cached for r in records for s in r.steps)
