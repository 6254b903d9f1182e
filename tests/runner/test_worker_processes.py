"""``workers: N``: the local executor plays episodes in N worker processes, and nothing else
changes: the same episodes, one writer of the log, resume, budgets, model errors, signals; and
what runs in a worker (an env, a plugin) cannot forge what the parent stores."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from _toy import embedded_line_walk
from exploreval.models.testing import StubServer
from exploreval.runner import RunFailedError, SpecError, run_experiment, spec_from_dict
from exploreval.store import RunDir

pytestmark = pytest.mark.slow

TESTS = str(Path(__file__).parents[1])

TOY = {
    "suites": [{"env_id": "test/LineWalk-v0", "presets": ["short", "long"], "seeds": "0-9"}],
    "agents": [{"agent": "forward"}, {"agent": "random"}],
    "plugins": ["_toy"],
    "concurrency": 4,
}


def _actions(out: Path) -> dict[str, list[str]]:
    return {eid: [s.action for s in r.steps] for eid, r in RunDir(out).latest_records().items()}


def test_workers_play_the_same_episodes_as_one_process_and_resume(tmp_path: Path) -> None:
    one = run_experiment(spec_from_dict(TOY), str(tmp_path / "one"))
    two = run_experiment(spec_from_dict({**TOY, "workers": 2}), str(tmp_path / "two"))
    assert one.completed == two.completed == 40 and two.errored == 0
    assert _actions(tmp_path / "one") == _actions(tmp_path / "two")
    lines = (tmp_path / "two" / "episodes.jsonl").read_text().splitlines()
    assert len(lines) == 40  # each episode once, appended by the parent
    manifest = RunDir(tmp_path / "two").read_manifest()
    assert manifest.status == "finished" and manifest.episodes_done == 40
    # the run id the workers stamped is the run's
    assert {json.loads(line)["run_id"] for line in lines} == {manifest.run_id}
    again = run_experiment(spec_from_dict({**TOY, "workers": 2}), str(tmp_path / "two"))
    assert again.completed == 0 and again.skipped == 40


def test_both_workers_play_and_an_llm_agent_shares_the_cache_and_the_connection_limit(
    tmp_path: Path,
) -> None:
    pid_dir = tmp_path / "pids"
    pid_dir.mkdir()
    with StubServer(delay_s=0.05, reply="<a>+</a>") as server:
        data = {
            "suites": [
                {
                    "env_id": "test/Chatty-v0",
                    "seeds": "0-15",
                    "options": {"pid_dir": str(pid_dir)},
                }
            ],
            "agents": [
                {"kind": "llm", "model": "m", "base_url": server.base_url, "max_concurrency": 4}
            ],
            "plugins": ["_toy", "_process_envs"],
            "concurrency": 8,
            "workers": 2,
        }
        summary = run_experiment(spec_from_dict(data), str(tmp_path / "run"))
        assert summary.completed == 16 and summary.errored == 0
        played = {int(p.name) for p in pid_dir.iterdir()}
        assert len(played) == 2 and os.getpid() not in played  # two workers, not this process
        assert 2 <= server.max_in_flight <= 4  # the agent's limit holds for the run as a whole
        calls = len(server.requests)
        records = RunDir(tmp_path / "run").latest_records()
        assert calls == sum(r.n_steps for r in records.values())
        # Lose half of the log, as a crash would: the re-run plays those episodes again from
        # the response cache both workers wrote, without one new request.
        log = tmp_path / "run" / "episodes.jsonl"
        lines = log.read_text().splitlines(keepends=True)
        log.write_text("".join(lines[:8]))
        again = run_experiment(spec_from_dict(data), str(tmp_path / "run"))
        assert again.completed == 8 and again.skipped == 8
        assert len(server.requests) == calls
    assert _actions(tmp_path / "run") == {
        e: [s.action for s in r.steps] for e, r in records.items()
    }


def test_what_an_env_prints_cannot_forge_a_record(tmp_path: Path) -> None:
    data = {
        "suites": [{"env_id": "test/Chatty-v0", "seeds": "0-5", "options": {"forge": True}}],
        "agents": [{"agent": "forward"}],
        "plugins": ["_toy", "_process_envs"],
        "concurrency": 2,
        "workers": 2,
    }
    summary = run_experiment(spec_from_dict(data), str(tmp_path / "run"))
    assert summary.status == "finished" and summary.completed == 6
    ids = set(RunDir(tmp_path / "run").latest_records())
    assert len(ids) == 6 and "forged" not in ids


def test_a_budget_is_checked_before_each_episode_is_sent(tmp_path: Path) -> None:
    data = {
        "suites": [{"env_id": "test/LineWalk-v0", "presets": ["short"], "seeds": "0-39"}],
        "agents": [{"agent": "forward"}],
        "plugins": ["_toy"],
        "concurrency": 2,
        "workers": 2,
        "budget": {"max_total_steps": 10},
    }
    summary = run_experiment(spec_from_dict(data), str(tmp_path / "run"))
    assert summary.stopped_by_budget and summary.status == "interrupted"
    records = list(RunDir(tmp_path / "run").iter_records())
    steps = sum(r.n_steps for r in records)
    # the last episodes sent before the budget was reached finish; at most 2 are in flight
    assert 10 <= steps < 10 + 2 * 3 and len(records) < 40


def test_a_model_that_fails_stops_the_run_as_in_one_process(tmp_path: Path) -> None:
    with StubServer() as server:
        server.fail_next(503, times=100)
        data = {
            "suites": [{"env_id": "test/LineWalk-v0", "presets": ["short"], "seeds": "0-9"}],
            "agents": [
                {"kind": "llm", "model": "m", "base_url": server.base_url, "max_retries": 0}
            ],  # fmt: skip
            "plugins": ["_toy"],
            "concurrency": 2,
            "workers": 2,
        }
        with pytest.raises(RunFailedError, match="HTTP 503"):
            run_experiment(spec_from_dict(data), str(tmp_path / "run"))
    manifest = RunDir(tmp_path / "run").read_manifest()
    assert manifest.status == "failed" and "HTTP 503" in (manifest.error or "")
    records = list(RunDir(tmp_path / "run").iter_records())
    assert records and all(r.status == "error" for r in records)


def test_a_worker_that_dies_fails_the_run_and_keeps_what_finished(tmp_path: Path) -> None:
    data = {
        "suites": [{"env_id": "test/Chatty-v0", "seeds": "0-11", "options": {"exit_at_seed": 9}}],
        "agents": [{"agent": "forward"}],
        "plugins": ["_toy", "_process_envs"],
        "concurrency": 2,
        "workers": 2,
    }
    with pytest.raises(RunFailedError, match=r"worker process \d \(pid \d+\) exited with code 3"):
        run_experiment(spec_from_dict(data), str(tmp_path / "run"))
    run = RunDir(tmp_path / "run")
    manifest = run.read_manifest()
    assert manifest.status == "failed" and "exited with code 3" in (manifest.error or "")
    kept = run.latest_records()
    assert 1 <= len(kept) < 12 and all(r.seed != 9 for r in kept.values())
    assert all(r.status == "ok" for r in kept.values())


def test_an_env_only_this_process_registered_is_refused_with_the_way_out(
    tmp_path: Path,
) -> None:
    from _toy import LineWalkEnv
    from exploreval.core import ENV_REGISTRY, register_env

    class Local(LineWalkEnv):
        pass

    register_env("test/OnlyHere-v0", Local, family="toy")
    try:
        _refused_then_played_in_one_process(tmp_path)
    finally:
        ENV_REGISTRY.unregister("test/OnlyHere-v0")


def _refused_then_played_in_one_process(tmp_path: Path) -> None:
    data = {
        "suites": [{"env_id": "test/OnlyHere-v0", "presets": ["short"], "seeds": "0-3"}],
        "agents": [{"agent": "forward"}],
        "plugins": ["_toy"],
        "concurrency": 2,
        "workers": 2,
    }
    with pytest.raises(SpecError, match="test/OnlyHere-v0") as caught:
        run_experiment(spec_from_dict(data), str(tmp_path / "run"))
    assert "--plugin MODULE" in str(caught.value) and "workers: 1" in str(caught.value)
    assert RunDir(tmp_path / "run").read_manifest().status == "failed"
    # the same experiment in one process plays
    assert (
        run_experiment(spec_from_dict({**data, "workers": 1}), str(tmp_path / "one")).completed == 4
    )


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"workers": 3, "concurrency": 2}, r"workers.*3 is more than concurrency \(2\)"),
        ({"workers": 2, "executor": "ray"}, "workers.*for the local executor"),
        (
            {
                "workers": 2,
                "agents": [
                    {
                        "kind": "llm",
                        "model": "m",
                        "base_url": "http://127.0.0.1:9",
                        "max_concurrency": 1,
                    }
                ],
            },  # fmt: skip
            "max_connections is 1, below workers 2",
        ),
    ],
)
def test_worker_counts_that_cannot_hold_are_refused_before_anything_is_written(
    tmp_path: Path, change: dict[str, Any], said: str
) -> None:
    with pytest.raises(SpecError, match=said):
        run_experiment(spec_from_dict({**TOY, **change}), str(tmp_path / "run"))
    assert not (tmp_path / "run").exists()


def test_a_client_factory_cannot_cross_into_workers(tmp_path: Path) -> None:
    from exploreval.models import ScriptedModel

    data = {**TOY, "agents": [{"kind": "llm", "model": "m"}], "workers": 2}
    with pytest.raises(SpecError, match="client_factory"):
        run_experiment(
            spec_from_dict(data),
            str(tmp_path / "run"),
            client_factory=lambda s: ScriptedModel(["+"]),
        )
    assert not (tmp_path / "run").exists()


def _cli_env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([TESTS, os.environ.get("PYTHONPATH", "")])}


def _chatty_run(out: Path, pid_dir: Path, *env_options: str) -> list[str]:
    """``exploreval run`` of 60 Chatty episodes on 2 workers, 4 in flight; each worker notes
    its pid in ``pid_dir``."""
    options = [w for o in (f'pid_dir="{pid_dir}"', *env_options) for w in ("--env-option", o)]
    return [sys.executable, "-m", "exploreval", "run", "test/Chatty-v0", "--plugin", "_toy",
            "--plugin", "_process_envs", "--seeds", "0-59", "--agent", "forward", *options,
            "--concurrency", "4", "--workers", "2", "--no-report", "-q", "--out", str(out)]  # fmt: skip


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_stops_the_workers_and_a_rerun_finishes(tmp_path: Path, signum: int) -> None:
    out = tmp_path / "run"
    pid_dir = tmp_path / "pids"
    pid_dir.mkdir()
    env = _cli_env()
    proc = subprocess.Popen(
        _chatty_run(out, pid_dir, "pause_s=0.2"),
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True,  # Ctrl-C reaches the whole group, as in a terminal
        # a test run started in the background (CI) inherits SIGINT ignored; a terminal's is not
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip
    try:
        deadline = time.time() + 60
        while len(RunDir(out).completed_ids() if out.exists() else ()) < 2:
            assert time.time() < deadline and proc.poll() is None, proc.stderr
            time.sleep(0.05)
        workers = {int(p.name) for p in pid_dir.iterdir()}
        assert len(workers) == 2
        if signum == signal.SIGINT:
            os.killpg(proc.pid, signum)
        else:
            proc.send_signal(signum)
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 128 + signum, stderr
    assert "Traceback" not in stderr
    for pid in workers:  # no worker outlives the run
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    manifest = RunDir(out).read_manifest()
    assert manifest.status == "interrupted"
    done = len(RunDir(out).completed_ids())
    assert manifest.episodes_done == done and 2 <= done < 60
    again = subprocess.run(
        [sys.executable, "-m", "exploreval", "run", "--out", str(out), "--no-report", "-q"],
        env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert RunDir(out).read_manifest().status == "finished"
    assert len(RunDir(out).completed_ids()) == 60


def test_workers_of_a_parent_killed_outright_stop(tmp_path: Path) -> None:
    """kill -9 sends the workers nothing: they notice they were orphaned and stop, in the middle
    of 15-step episodes of 0.5 s steps (left alone they would go on for 7 s more)."""
    out = tmp_path / "run"
    pid_dir = tmp_path / "pids"
    pid_dir.mkdir()
    proc = subprocess.Popen(
        _chatty_run(out, pid_dir, "pause_s=0.5", "target=15"),
        env=_cli_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.time() + 60
        while len(list(pid_dir.iterdir())) < 2:
            assert time.time() < deadline and proc.poll() is None
            time.sleep(0.05)
        workers = {int(p.name) for p in pid_dir.iterdir()}
        proc.kill()
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
    deadline = time.time() + 4
    alive = set(workers)
    while alive and time.time() < deadline:
        for pid in list(alive):
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                alive.discard(pid)
        time.sleep(0.1)
    assert not alive, f"workers {sorted(alive)} outlived their killed parent"


def _embedded(seeds: str) -> dict[str, Any]:
    return embedded_line_walk(seeds, workers=2)


def test_the_embedded_model_is_started_once_and_both_workers_play_it(tmp_path: Path) -> None:
    summary = run_experiment(spec_from_dict(_embedded("0-3")), str(tmp_path / "run"))
    assert summary.status == "finished" and summary.completed == 4
    steps = [s for r in RunDir(tmp_path / "run").iter_records() for s in r.steps]
    assert steps and all(s.raw_output is not None and not s.cached for s in steps)
    assert all(s.usage is not None and s.usage.prompt_tokens > 0 for s in steps)


def test_an_embedded_server_that_dies_stops_the_run_and_its_workers(tmp_path: Path) -> None:
    import threading

    from exploreval.models import LOCAL_SERVERS

    out = tmp_path / "run"
    killed: list[int] = []

    def kill_after_the_first_episode() -> None:
        deadline = time.time() + 120
        while time.time() < deadline and not RunDir(out).completed_ids():
            time.sleep(0.05)
        server = LOCAL_SERVERS.acquire("local:smollm2")  # the run's, shared
        try:
            assert server.pid is not None
            os.kill(server.pid, signal.SIGKILL)
            killed.append(server.pid)
        finally:
            LOCAL_SERVERS.release("local:smollm2")

    killer = threading.Thread(target=kill_after_the_first_episode)
    killer.start()
    started = time.monotonic()
    try:
        with pytest.raises(RunFailedError, match="SIGKILL"):
            run_experiment(spec_from_dict(_embedded("0-199")), str(out))
    finally:
        killer.join()
    assert killed and time.monotonic() - started < 120
    manifest = RunDir(out).read_manifest()
    assert manifest.status == "failed" and "SIGKILL" in (manifest.error or "")
    assert 1 <= manifest.episodes_done < 200
