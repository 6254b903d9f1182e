"""kill -9 in the middle of a run loses at most the episodes in flight."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from exploreval.runner import run_experiment, spec_from_dict
from exploreval.store import RunDir

SCRIPT = """
import sys
sys.path.insert(0, {tests!r})
import _toy  # registers the toy env
from exploreval.runner import run_experiment, spec_from_dict
spec = spec_from_dict({spec!r})
run_experiment(spec, {out!r})
"""

SPEC = {
    "suites": [{"env_id": "test/LineWalk-v0", "presets": ["long"], "seeds": "0-39"}],
    "agents": [{"agent": "forward"}],
    "concurrency": 4,
}


def test_kill_9_mid_run_then_resume(tmp_path: Path) -> None:
    out = tmp_path / "run"
    code = SCRIPT.format(tests=str(Path(__file__).parents[1]), spec=SPEC, out=str(out))
    env = {**os.environ, "TOY_SLEEP": "0.02"}
    proc = subprocess.Popen([sys.executable, "-c", code], env=env)
    log = out / "episodes.jsonl"
    deadline = time.time() + 60
    while time.time() < deadline:
        if log.exists() and log.read_text().count("\n") >= 5:
            break
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    run = RunDir(out)
    issues: list = []
    survivors = list(run.iter_records(issues))
    assert 5 <= len(survivors) < 40, "the kill should land mid-run"
    assert issues == []  # appends are whole lines: nothing written is corrupted
    assert run.read_manifest().status == "running"  # it never got to finish
    summary = run_experiment(spec_from_dict(SPEC), str(out))
    assert summary.skipped == len(survivors)
    assert summary.completed == 40 - len(survivors)
    assert len(run.completed_ids()) == 40
    assert run.read_manifest().status == "finished"


TESTS = str(Path(__file__).parents[1])


def _start_cli_run(out: Path, seeds: str = "0-39") -> subprocess.Popen[str]:
    """`exploreval run` on the toy env, slowed down so signals land mid-run."""
    env = {
        **os.environ,
        "TOY_SLEEP": "0.05",
        "PYTHONPATH": os.pathsep.join([TESTS, os.environ.get("PYTHONPATH", "")]),
        "COLUMNS": "200",
    }
    return subprocess.Popen(
        [sys.executable, "-m", "exploreval", "run", "test/LineWalk-v0", "--plugin", "_toy",
         "--preset", "long", "--seeds", seeds, "--agent", "forward", "--concurrency", "2",
         "--no-report", "-q", "--out", str(out)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        # a test run started in the background inherits SIGINT ignored; Ctrl-C must reach the run
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip


def _wait_for(predicate: object, timeout: float = 60.0) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if predicate():  # type: ignore[operator]
            return
        time.sleep(0.05)
    raise AssertionError("timed out waiting")


def _manifest(out: Path) -> dict:
    import json

    try:
        return json.loads((out / "manifest.json").read_text())
    except (OSError, ValueError):
        return {}


@pytest.mark.parametrize(
    ("signum", "code", "said"),
    [
        (signal.SIGTERM, 128 + signal.SIGTERM, "interrupted by SIGTERM"),
        (signal.SIGINT, 130, "Ctrl-C"),
    ],
)
def test_a_signal_finishes_the_manifest_interrupted_and_progress_is_written_during_the_run(
    tmp_path: Path, signum: int, code: int, said: str
) -> None:
    out = tmp_path / "run"
    proc = _start_cli_run(out, seeds="0-99")  # ~20 s: a loaded machine still signals mid-run
    try:
        # episodes_done is rewritten while the run goes on, not only at the end
        _wait_for(lambda: _manifest(out).get("episodes_done", 0) >= 2)
        assert _manifest(out)["status"] == "running"
        assert proc.poll() is None, "the run should still be going"
        proc.send_signal(signum)
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == code, stderr
    assert said in " ".join(stderr.split()) and "Traceback" not in stderr
    manifest = _manifest(out)
    run = RunDir(out)
    done = len(run.completed_ids())
    assert manifest["status"] == "interrupted" and manifest["ended_at"] is not None
    assert manifest["error"] == ("stopped by SIGTERM" if signum == signal.SIGTERM else "cancelled")
    assert manifest["episodes_done"] == done and 2 <= done < 100
    assert not run.is_locked()  # the lock went with the process
    again = subprocess.run(
        [sys.executable, "-m", "exploreval", "run", "--out", str(out), "--no-report", "-q"],
        env={**os.environ, "PYTHONPATH": os.pathsep.join([TESTS, os.environ.get("PYTHONPATH", "")])},
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert _manifest(out)["status"] == "finished" and _manifest(out)["episodes_done"] == 100


def test_runs_shows_a_killed_run_as_stale(tmp_path: Path) -> None:
    out = tmp_path / "runs" / "killed"
    proc = _start_cli_run(out, seeds="0-999")  # ~200 s of play: killed long before it ends
    try:
        _wait_for(lambda: _manifest(out).get("status") == "running")
        assert RunDir(out).is_locked()
        listing = subprocess.run(
            [sys.executable, "-m", "exploreval", "runs", str(tmp_path / "runs")],
            capture_output=True, text=True, env={**os.environ, "COLUMNS": "200"},
        )  # fmt: skip
        assert "\trunning\t" in listing.stdout and "stale" not in listing.stdout, listing.stdout
    finally:
        proc.kill()  # SIGKILL: no handler runs, the manifest stays "running"
        proc.communicate()
    assert _manifest(out)["status"] == "running"
    assert not RunDir(out).is_locked()
    listing = subprocess.run(
        [sys.executable, "-m", "exploreval", "runs", str(tmp_path / "runs")],
        capture_output=True, text=True, env={**os.environ, "COLUMNS": "200"},
    )  # fmt: skip
    assert listing.returncode == 0
    assert "\tstale" in listing.stdout and "\trunning\t" not in listing.stdout, listing.stdout


def test_an_unexpected_exception_finishes_the_manifest_failed(tmp_path: Path) -> None:
    import pytest

    from exploreval.runner import Runner

    def progress(totals: object, planned: int) -> None:
        raise ZeroDivisionError("a bug in a progress callback")

    runner = Runner(spec_from_dict(SPEC), str(tmp_path / "r"), on_progress=progress)
    runner.prepare()
    with pytest.raises(ZeroDivisionError):
        runner.execute()
    manifest = RunDir(tmp_path / "r").read_manifest()
    assert manifest.status == "failed" and manifest.ended_at is not None
    assert manifest.error == "ZeroDivisionError: a bug in a progress callback"
    assert not RunDir(tmp_path / "r").is_locked()


def test_a_prepared_run_abandoned_before_execute_is_not_left_running(tmp_path: Path) -> None:
    from exploreval.runner import Runner

    runner = Runner(spec_from_dict(SPEC), str(tmp_path / "r"))
    runner.prepare()
    assert RunDir(tmp_path / "r").read_manifest().status == "running"
    runner.abandon(RuntimeError("the progress display broke"))
    manifest = RunDir(tmp_path / "r").read_manifest()
    assert manifest.status == "failed" and "the progress display broke" in (manifest.error or "")
    runner.abandon(RuntimeError("again"))  # idempotent: the first ending stands
    assert RunDir(tmp_path / "r").read_manifest().error == manifest.error
