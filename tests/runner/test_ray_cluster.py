"""``--executor ray`` on a real multi-node cluster: a head and two worker nodes on this
machine, each its own raylet with its own temporary and cache directories, so that nothing
reaches the driver unless it travels with a result.

The same plan stores the same records as the local executor; resume re-sends the cache rows an
episode already paid for; budgets and the connection limit hold for the cluster as a whole; a
node that dies mid-run loses nothing and duplicates nothing; a node that lacks a requirement is
named."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest

ray = pytest.importorskip("ray", reason="the [ray] extra is part of the README install")

from _toy import embedded_line_walk  # noqa: E402
from exploreval.metrics import episode_metrics  # noqa: E402
from exploreval.models.testing import StubServer  # noqa: E402
from exploreval.runner import Runner, SpecError, run_experiment, spec_from_dict  # noqa: E402
from exploreval.runner.testing import LocalCluster, local_cluster  # noqa: E402
from exploreval.store import RunDir  # noqa: E402

pytestmark = pytest.mark.slow

TESTS = str(Path(__file__).parents[1])

#: What differs between two plays of the same episode by design: clocks, durations, latencies,
#: the server's reply ids.
VOLATILE = {"started_at", "ended_at", "created", "duration_s", "latency_s", "wall_s", "id",
            "elapsed_s", "step_latency_s", "run_id"}  # fmt: skip


def _stable(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _stable(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [_stable(v) for v in value]
    return value


def _prompts(run: Path) -> dict[str, list[list[tuple[str, str]]]]:
    """Every step's prompt, rebuilt from the run's own blob store."""
    store = RunDir(run)
    out = {}
    for eid, record in store.latest_records().items():
        out[eid] = [
            [(str(m.role), m.content) for m in store.blobs.get_prompt(s.prompt)]
            for s in record.steps
            if s.prompt is not None
        ]
    return out


@pytest.fixture(scope="module")
def cluster() -> Any:
    # node 2 lacks the toy tool (NeedsTool-v0's requirement); the others have it
    with local_cluster((1, 1, 1), envs=[None, None, {"TOY_LACKS_TOOL": "1"}],
                       python_path=[TESTS]) as made:  # fmt: skip
        yield made


def _llm(server: StubServer, **agent: Any) -> dict[str, Any]:
    return {"kind": "llm", "model": "m", "base_url": server.base_url, **agent}


def _spec(server: StubServer, seeds: str = "0-11", **extra: Any) -> dict[str, Any]:
    return {
        "suites": [{"env_id": "test/LineWalk-v0", "presets": ["short", "long"], "seeds": seeds}],
        "agents": [_llm(server), {"agent": "random"}],
        "plugins": ["_toy"],
        "concurrency": 6,
        **extra,
    }


def _long_walks(server: StubServer, concurrency: int, local: Path) -> tuple[dict[str, Any], Any]:
    """24 long line walks of an LLM agent on Ray, and their reference run on one machine."""
    data = {
        "suites": [{"env_id": "test/LineWalk-v0", "presets": ["long"], "seeds": "0-23"}],
        "agents": [_llm(server)],
        "plugins": ["_toy"],
        "concurrency": concurrency,
        "executor": "ray",
    }
    return data, run_experiment(spec_from_dict({**data, "executor": "local"}), str(local))


def _stored(out: Path) -> set[str]:
    log = out / "episodes.jsonl"
    lines = log.read_text().splitlines() if log.exists() else []
    return {json.loads(line)["episode_id"] for line in lines if line.endswith("}")}


def _cached_rows(out: Path) -> dict[str, int]:
    """Rows per episode in the run's cache, read as a bystander (read-only)."""
    import sqlite3

    path = out / "cache.sqlite"
    if not path.exists():
        return {}
    query = "SELECT episode, count(*) FROM responses GROUP BY episode"
    try:
        with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
            rows = db.execute(query).fetchall()
    except sqlite3.OperationalError:  # not created yet, or no episode column yet
        return {}
    return {r[0]: r[1] for r in rows if r[0]}


def _run(data: dict[str, Any], out: Path) -> tuple[Any, Runner]:
    """Run as ``run_experiment`` does, keeping the runner (where its workers were placed)."""
    runner = Runner(spec_from_dict(data), str(out))
    runner.prepare()
    return runner.execute(), runner


def test_the_cluster_stores_what_one_machine_stores(tmp_path: Path, cluster: LocalCluster) -> None:
    with StubServer(delay_s=0.02, reply="<a>+</a>") as server:
        local = run_experiment(spec_from_dict(_spec(server)), str(tmp_path / "local"))
        local_calls = server.request_count
        remote, runner = _run(_spec(server, executor="ray"), tmp_path / "ray")
        assert server.request_count == 2 * local_calls  # every call made once per run
    assert local.completed == remote.completed == 48 and remote.errored == 0
    # one worker on each of the three nodes (one CPU each), sharing the 6 episodes in flight
    assert sorted(w["node_id"] for w in runner.placement) == sorted(
        n.node_id for n in cluster.nodes
    )
    assert [w["episodes_in_flight"] for w in runner.placement] == [2, 2, 2]
    a, b = RunDir(tmp_path / "local"), RunDir(tmp_path / "ray")
    left, right = a.latest_records(), b.latest_records()
    assert left.keys() == right.keys()
    for eid, record in left.items():
        other = right[eid]
        assert _stable(record.model_dump(mode="json")) == _stable(other.model_dump(mode="json"))
        # the same metrics (NaN where a metric is undefined, on both sides)
        assert json.dumps(_stable(episode_metrics(record)), sort_keys=True) == json.dumps(
            _stable(episode_metrics(other)), sort_keys=True
        )
    # the prompt texts travelled: every step's prompt reads back the same from the driver's store
    assert _prompts(tmp_path / "local") == _prompts(tmp_path / "ray")
    # and every model call is in the driver's cache, filed under its episode
    from exploreval.models import ResponseCache

    cache = ResponseCache(b.cache_path)
    llm_ids = {e for e, r in right.items() if r.agent.kind == "llm"}
    assert cache.episodes() == llm_ids
    assert sum(len(cache.rows_for(e)) for e in llm_ids) == local_calls
    cache.close()


def test_a_resumed_run_pays_for_no_call_that_already_succeeded(
    tmp_path: Path, cluster: LocalCluster
) -> None:
    with StubServer(delay_s=0.02, reply="<a>+</a>") as server:
        data = _spec(server, executor="ray")
        run_experiment(spec_from_dict(data), str(tmp_path / "run"))
        calls = server.request_count
        before = RunDir(tmp_path / "run").latest_records()
        # lose the second half of the log, as a crash would; the cache keeps every call
        log = tmp_path / "run" / "episodes.jsonl"
        lines = log.read_text().splitlines(keepends=True)
        log.write_text("".join(lines[:20]))
        again = run_experiment(spec_from_dict(data), str(tmp_path / "run"))
        assert again.completed == 28 and again.skipped == 20
        # the workers (on other nodes, with no access to the cache file) got the rows with
        # the episodes: not one request again
        assert server.request_count == calls
    after = RunDir(tmp_path / "run").latest_records()
    assert {e: [s.action for s in r.steps] for e, r in after.items()} == {
        e: [s.action for s in r.steps] for e, r in before.items()
    }


@pytest.mark.parametrize(
    "budget, measure",
    [
        ({"max_total_steps": 30}, lambda r: r.n_steps),
        ({"max_total_tokens": 3000}, lambda r: r.usage.total_tokens),
        ({"max_cost_usd": 0.003}, lambda r: r.usage.cost_usd or 0.0),
    ],
    ids=["steps", "tokens", "cost"],
)
def test_each_budget_holds_cluster_wide(
    tmp_path: Path, cluster: LocalCluster, budget: dict[str, float], measure: Any
) -> None:
    limit = next(iter(budget.values()))
    with StubServer(delay_s=0.02, reply="<a>+</a>") as server:
        data = {
            "suites": [{"env_id": "test/LineWalk-v0", "presets": ["long"], "seeds": "0-59"}],
            "agents": [_llm(server)],
            "plugins": ["_toy"],
            "concurrency": 3,
            "executor": "ray",
            "budget": budget,
            "prices": {"m": {"input": 1.0, "output": 1.0}},
        }
        summary = run_experiment(spec_from_dict(data), str(tmp_path / "run"))
    records = list(RunDir(tmp_path / "run").iter_records())
    spent = sum(measure(r) for r in records)
    biggest = max(measure(r) for r in records)
    assert summary.stopped_by_budget and summary.status == "interrupted"
    assert len(records) < 60
    # checked before each episode is sent: past the limit by at most the episodes in flight
    assert limit <= spent < limit + 3 * biggest


def test_max_connections_bounds_the_whole_cluster(tmp_path: Path, cluster: LocalCluster) -> None:
    with StubServer(delay_s=0.15, reply="<a>+</a>") as server:
        data = {
            "suites": [{"env_id": "test/LineWalk-v0", "presets": ["long"], "seeds": "0-23"}],
            "agents": [_llm(server, max_concurrency=5)],
            "plugins": ["_toy"],
            "concurrency": 12,
            "executor": "ray",
        }
        summary = run_experiment(spec_from_dict(data), str(tmp_path / "run"))
        assert summary.completed == 24
        # three workers share 5 connections (2 + 2 + 1): never more at once, and they are used
        assert 3 <= server.max_in_flight <= 5


def test_a_node_that_lacks_a_requirement_is_named(tmp_path: Path, cluster: LocalCluster) -> None:
    lacking = cluster.nodes[2].node_id
    data = {
        "suites": [{"env_id": "test/NeedsTool-v0", "seeds": "0-5"}],
        "agents": [{"agent": "forward"}],
        "plugins": ["_toy"],
        "executor": "ray",
    }
    with pytest.raises(SpecError) as caught:
        run_experiment(spec_from_dict(data), str(tmp_path / "run"))
    message = str(caught.value)
    assert lacking[:12] in message and "apt-get install toytool" in message
    assert not any(n.node_id[:12] in message for n in cluster.nodes[:2])
    assert RunDir(tmp_path / "run").read_manifest().status == "failed"
    assert list(RunDir(tmp_path / "run").iter_records()) == []


def test_a_node_that_dies_mid_run_loses_and_duplicates_nothing(
    tmp_path: Path, cluster: LocalCluster
) -> None:
    doomed = cluster.add_node(1)
    cluster.cluster.wait_for_nodes()
    with StubServer(delay_s=0.1, reply="<a>+</a>") as server:
        data, reference = _long_walks(server, 8, tmp_path / "local")
        outcome: dict[str, Any] = {}
        runner = Runner(spec_from_dict(data), str(tmp_path / "ray"))
        runner.prepare()

        def play() -> None:
            try:
                outcome["summary"] = runner.execute()
            except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
                outcome["error"] = exc

        thread = threading.Thread(target=play)
        thread.start()
        log = tmp_path / "ray" / "episodes.jsonl"
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not (log.exists() and log.read_text().count("\n")):
            time.sleep(0.1)
        # it had a worker (one of four, 2 episodes in flight each), playing episodes now
        assert doomed.node_id in {w["node_id"] for w in runner.placement}
        cluster.kill_node(doomed)
        thread.join(300)
    assert not thread.is_alive()
    assert "error" not in outcome, outcome.get("error")
    assert outcome["summary"].status == "finished" and outcome["summary"].completed == 24
    lines = log.read_text().splitlines()
    ids = [RunDir(tmp_path / "ray").latest_records()]
    assert len(lines) == 24  # each episode stored once
    assert ids[0].keys() == RunDir(tmp_path / "local").latest_records().keys()
    assert reference.completed == 24


def test_a_killed_driver_resumes_and_pays_only_for_calls_never_made(
    tmp_path: Path, cluster: LocalCluster
) -> None:
    """The driver is killed (``kill -9``) mid-run; re-run, it finishes the missing episodes,
    and the calls its workers made for unfinished episodes, fetched every second, are not paid
    again: the re-run's requests are exactly the steps not yet cached."""
    import os
    import signal
    import subprocess
    import sys

    from exploreval.models import ResponseCache

    with StubServer(delay_s=0.25, reply="<a>+</a>") as server:
        data, reference = _long_walks(server, 6, tmp_path / "local")
        steps = {e: r.n_steps for e, r in RunDir(tmp_path / "local").latest_records().items()}
        assert reference.completed == 24
        out = tmp_path / "ray"
        script = (
            "import json, sys, ray\n"
            f"ray.init(address={cluster.address!r}, log_to_driver=False,"
            f" runtime_env={{'env_vars': {{'PYTHONPATH': {TESTS!r}}}}})\n"
            f"sys.path.insert(0, {TESTS!r})\n"
            "from exploreval.runner import run_experiment, spec_from_dict\n"
            f"run_experiment(spec_from_dict(json.loads({json.dumps(data)!r})), {str(out)!r})\n"
        )
        driver = subprocess.Popen([sys.executable, "-c", script])
        deadline = time.monotonic() + 120
        # kill it once some episodes are stored and some calls of one still playing are on
        # disk: fewer than all its steps, since the driver may file a finished episode's last
        # calls a moment before its record, and a kill in that moment finds it stored
        while time.monotonic() < deadline and driver.poll() is None:
            stored, rows = _stored(out), _cached_rows(out)
            if len(stored) >= 4 and any(
                0 < n < steps[e] for e, n in rows.items() if e not in stored
            ):
                break
            time.sleep(0.05)
        assert driver.poll() is None, "the driver ended before it could be killed"
        os.kill(driver.pid, signal.SIGKILL)
        driver.wait()
        time.sleep(3)  # its workers go with their job
        logged = set(RunDir(out).latest_records())
        cache = ResponseCache(RunDir(out).cache_path)
        cached = {e: len(cache.rows_for(e)) for e in steps}
        cache.close()
        unfinished = set(steps) - logged
        # calls of episodes still playing reached the driver's disk before it died
        assert any(cached[e] for e in unfinished)
        before = server.request_count
        again = run_experiment(spec_from_dict(data), str(out))
        assert again.status == "finished" and again.completed == len(unfinished)
        assert server.request_count - before == sum(steps[e] - cached[e] for e in unfinished)
    assert {e: r.n_steps for e, r in RunDir(out).latest_records().items()} == steps


def test_every_suite_plays_on_the_cluster_with_its_artifacts(
    tmp_path: Path, cluster: LocalCluster
) -> None:
    """The terminal suite (real sandboxes on each node, the cast file travelling back as an
    artifact) and Task2Quiz (real TextWorld, worlds compiled on each node) store on the cluster
    what they store locally."""
    tiny = str(Path(TESTS) / "fixtures" / "terminal" / "tiny")
    suites: list[tuple[dict[str, Any], str]] = [
        ({"env_id": "exploreval/Terminal-v0", "seeds": "0-1",
          "options": {"tasks": tiny, "image": "host"}}, "gold"),
        ({"env_id": "exploreval/Task2Quiz-v0", "presets": ["easy"], "seeds": [0]}, "walkthrough"),
    ]  # fmt: skip
    left: dict[str, Any] = {}
    right: dict[str, Any] = {}
    for index, (suite, agent) in enumerate(suites):
        data: dict[str, Any] = {"suites": [suite], "agents": [{"agent": agent}], "concurrency": 3}
        local = run_experiment(spec_from_dict(data), str(tmp_path / f"local{index}"))
        remote = run_experiment(
            spec_from_dict({**data, "executor": "ray"}), str(tmp_path / f"ray{index}")
        )
        assert local.status == remote.status == "finished"
        left.update(RunDir(tmp_path / f"local{index}").latest_records())
        right.update(RunDir(tmp_path / f"ray{index}").latest_records())
    assert left.keys() == right.keys() and len(left) == 3
    for eid, record in left.items():
        other = right[eid]
        assert (record.status, record.success, [s.action for s in record.steps]) == (
            other.status, other.success, [s.action for s in other.steps]
        )  # fmt: skip
        if record.family == "terminal":
            # the cast was written on a node and unpacked in the driver's run directory
            cast = record.ground_truth["cast"]
            assert cast == other.ground_truth["cast"] == f"artifacts/{eid}/terminal.cast"
            mine = (tmp_path / "local0" / cast).read_text().splitlines()
            theirs = (tmp_path / "ray0" / cast).read_text().splitlines()
            assert [json.loads(e)[2] for e in mine[1:]] == [json.loads(e)[2] for e in theirs[1:]]
    assert {r.family for r in right.values() if r.status == "ok" and r.success} == {
        "terminal",
        "task2quiz",
    }


def test_the_embedded_model_runs_one_server_per_node(tmp_path: Path, cluster: LocalCluster) -> None:
    data = embedded_line_walk("0-3", executor="ray")
    summary, runner = _run(data, tmp_path / "run")
    assert summary.status == "finished" and summary.completed == 4
    # two connections allowed: two workers, on two nodes, each with its node's own server
    assert len({w["node_id"] for w in runner.placement}) == 2
    assert [w["connections"] for w in runner.placement] == [[1], [1]]
    steps = [s for r in RunDir(tmp_path / "run").iter_records() for s in r.steps]
    assert steps and all(s.raw_output is not None and not s.cached for s in steps)
    assert all(s.usage is not None and s.usage.prompt_tokens > 0 for s in steps)
