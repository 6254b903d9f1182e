"""The model layer inside real runs: fatal errors, secrets, crash + cache, local LLM."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from exploreval.models.testing import StubServer
from exploreval.runner import RunFailedError, run_experiment, spec_from_dict
from exploreval.store import RunDir


def llm_spec(base_url: str, **agent: object) -> dict:
    return {
        "suites": [{"env_id": "test/LineWalk-v0", "presets": ["long"], "seeds": "0-3"}],
        "agents": [
            {"agent": "forward"},
            {
                "kind": "llm",
                "model": "stub-model",
                "base_url": base_url,
                "max_retries": 1,
                "history": "window:2",
                **agent,
            },
        ],
        "concurrency": 1,
    }


def test_an_unreachable_endpoint_is_refused_before_the_run_starts(tmp_path: Path) -> None:
    """Nothing answers at the endpoint: the run stops before its directory exists, naming the
    endpoint and what to do (issue 21), instead of failing every LLM episode."""
    from exploreval.runner import SpecError

    with StubServer() as server:
        dead = server.base_url
    spec = spec_from_dict(llm_spec(dead))
    with pytest.raises(SpecError, match=r"nothing answers at 127\.0\.0\.1:\d+.*start the server"):
        run_experiment(spec, str(tmp_path / "r"))
    assert not (tmp_path / "r").exists()


def test_api_key_never_reaches_the_run_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "sk-proj-SECRET0123456789abcdef"
    monkeypatch.setenv("STUB_KEY", secret)
    with StubServer(require_key=secret, reply="<a>+</a>") as server:
        spec = spec_from_dict(llm_spec(server.base_url, api_key_env="STUB_KEY"))
        summary = run_experiment(spec, str(tmp_path / "r"))
        assert summary.status == "finished" and server.request_count > 0
    from exploreval.analysis import build_report

    build_report(RunDir(tmp_path / "r"))
    for path in (tmp_path / "r").rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert secret.encode() not in data and secret[:12].encode() not in data, path
    assert b"STUB_KEY" in (tmp_path / "r" / "manifest.json").read_bytes()  # the name is fine


SCRIPT = """
import sys
sys.path.insert(0, {tests!r})
import _toy
from exploreval.runner import run_experiment, spec_from_dict
run_experiment(spec_from_dict({spec!r}), {out!r})
"""


def test_kill_9_then_resume_does_not_repay_completed_calls(tmp_path: Path) -> None:
    out = tmp_path / "r"
    with StubServer(delay_s=0.05, reply="<a>+</a>") as server:
        spec = llm_spec(server.base_url)
        spec["suites"][0]["seeds"] = "0-11"
        spec["agents"] = spec["agents"][1:]
        code = SCRIPT.format(tests=str(Path(__file__).parents[1]), spec=spec, out=str(out))
        proc = subprocess.Popen([sys.executable, "-c", code])

        def logged_calls() -> int:
            return sum(r.n_steps for r in RunDir(out).iter_records())

        deadline = time.time() + 60
        # kill once >= 3 episodes are logged and the next one has made >= 2 calls
        while time.time() < deadline:
            done = len(list(RunDir(out).iter_records()))
            if done >= 3 and server.request_count - logged_calls() >= 2:
                break
            time.sleep(0.01)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        paid_before = server.request_count
        survivors = list(RunDir(out).iter_records())
        in_flight_paid = paid_before - sum(r.n_steps for r in survivors)
        assert 3 <= len(survivors) < 12 and in_flight_paid >= 2
        summary = run_experiment(spec_from_dict(spec), str(out))
        assert summary.status == "finished" and summary.skipped == len(survivors)
        records = list(RunDir(out).iter_records())
        calls = sum(r.n_steps for r in records)
        replayed = sum(s.cached for r in records for s in r.steps)
        # Every call that returned before the kill is replayed from the cache, never re-sent.
        # Only the one request in flight at the kill (concurrency 1) can be sent twice.
        assert calls <= server.request_count <= calls + 1
        assert in_flight_paid - 1 <= replayed <= in_flight_paid


@pytest.mark.slow
@pytest.mark.local_llm
def test_local_model_real_path_and_cached_rerun(tmp_path: Path) -> None:
    spec = {
        "suites": [{"env_id": "test/LineWalk-v0", "presets": ["short"], "seeds": "0-1"}],
        "agents": [
            {
                "kind": "llm",
                "model": "local:smollm2",
                "history": "window:1",
                "sampling": {"temperature": 0.0, "max_tokens": 12},
            }
        ],
        "max_steps": 4,
    }
    summary = run_experiment(spec_from_dict(spec), str(tmp_path / "r"))
    assert summary.status == "finished" and summary.completed == 2
    run = RunDir(tmp_path / "r")
    records = list(run.iter_records())
    steps = [s for r in records for s in r.steps]
    assert steps and all(s.raw_output is not None for s in steps)
    assert all(s.usage is not None and s.usage.prompt_tokens > 0 for s in steps)
    assert all(s.valid or s.invalid_reason for s in steps)
    assert not any(s.cached for s in steps)
    # a crash after the calls: drop the log, keep the cache, run again -> all replayed
    run.episodes_path.unlink()
    again = run_experiment(spec_from_dict(spec), str(tmp_path / "r"))
    assert again.completed == 2
    first = {r.episode_id: [s.raw_output for s in r.steps] for r in records}
    replay = {r.episode_id: r for r in run.iter_records()}
    assert {k: [s.raw_output for s in r.steps] for k, r in replay.items()} == first
    assert all(s.cached for r in replay.values() for s in r.steps)


@pytest.mark.slow
@pytest.mark.local_llm
def test_shared_local_server_fixture_answers(local_llm_base_url: str) -> None:
    import asyncio

    from exploreval.core import Message
    from exploreval.models import OpenAIClient, SamplingParams

    async def go() -> str:
        client = OpenAIClient("local:smollm2", local_llm_base_url, max_retries=0)
        try:
            done = await client.complete(
                [Message(role="user", content="Say hello.")], SamplingParams(max_tokens=8)
            )
            return done.text
        finally:
            await client.aclose()

    assert asyncio.run(go()).strip()


@pytest.mark.slow
@pytest.mark.local_llm
def test_local_server_dies_with_a_killed_parent(tmp_path: Path) -> None:
    code = (
        "from exploreval.models import LocalServer\n"
        "import time\n"
        "s = LocalServer('local:smollm2').start()\n"
        "print(s._proc.pid, flush=True)\n"
        "time.sleep(120)\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert parent.stdout is not None
    server_pid = int(parent.stdout.readline())
    os.kill(server_pid, 0)  # alive while the parent lives
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    deadline = time.time() + 10
    while time.time() < deadline:
        try:
            os.kill(server_pid, 0)
        except ProcessLookupError:
            break
        with contextlib.suppress(ChildProcessError):
            os.waitpid(server_pid, os.WNOHANG)
        time.sleep(0.05)
    else:
        os.kill(server_pid, signal.SIGKILL)
        pytest.fail("the local model server outlived its killed parent")


def test_a_persistent_malformed_reply_mid_episode_keeps_the_earlier_steps(tmp_path: Path) -> None:
    calls = {"n": 0}
    holder: dict[str, StubServer] = {}

    def reply(messages: object) -> str:
        calls["n"] += 1
        if calls["n"] == 2:  # from the third request on, the "server" sends HTML with a 200
            holder["server"].malformed_next("html", times=50)
        return "<a>+</a>"

    with StubServer(reply_fn=reply) as server:
        holder["server"] = server
        data = llm_spec(server.base_url)
        data["agents"] = data["agents"][1:]
        data["suites"][0]["seeds"] = "0"
        endpoint = server.base_url.split("/v1")[0]
        summary = run_experiment(spec_from_dict(data), str(tmp_path / "r"))
    assert summary.errored == 1
    (record,) = list(RunDir(tmp_path / "r").iter_records())
    assert record.status == "error"
    assert "step 2" in (record.error or "") and "malformed reply" in (record.error or "")
    assert endpoint in (record.error or "")
    # the steps played before are kept, and the failing step is stored with its error
    assert [s.action for s in record.steps] == ["+", "+", "<invalid>"]
    assert [s.valid for s in record.steps] == [True, True, False]
    failed = record.steps[2]
    assert failed.t == 2 and failed.observation.startswith("You are at 2.")  # after two "+"
    assert failed.invalid_reason is not None and failed.invalid_reason.startswith(
        "model call failed:"
    )
    assert "malformed reply" in failed.invalid_reason and endpoint in failed.invalid_reason
    assert failed.agent_info == {"model_error": "ModelRequestError"}
    assert record.final_observation == failed.observation


def test_an_endpoint_failing_for_good_mid_episode_stores_its_steps_and_stops_the_run(
    tmp_path: Path,
) -> None:
    calls = {"n": 0}
    holder: dict[str, StubServer] = {}

    def reply(messages: object) -> str:
        calls["n"] += 1
        if calls["n"] == 2:  # from the third request on: HTTP 503, retries exhausted
            holder["server"].fail_next(503, times=50)
        return "<a>+</a>"

    with StubServer(reply_fn=reply) as server:
        holder["server"] = server
        data = llm_spec(server.base_url)
        data["agents"] = data["agents"][1:]
        data["suites"][0]["seeds"] = "0"
        endpoint = server.base_url.split("/v1")[0]
        with pytest.raises(RunFailedError, match="HTTP 503"):
            run_experiment(spec_from_dict(data), str(tmp_path / "r"))
    run = RunDir(tmp_path / "r")
    assert run.read_manifest().status == "failed"
    (record,) = list(run.iter_records())
    assert record.status == "error" and endpoint in (record.error or "")
    assert [s.valid for s in record.steps] == [True, True, False]
    assert record.steps[2].agent_info == {"model_error": "ModelError"}
    assert "HTTP 503" in (record.steps[2].invalid_reason or "")
    assert record.agent.config["identity"]["model"] == "stub-model"
    for step in record.steps[:2]:  # the prompts the kept steps reference are stored
        assert step.prompt is not None and run.blobs.get_prompt(step.prompt)


def test_a_cost_budget_needs_a_price_and_unpriced_cost_is_never_zero(tmp_path: Path) -> None:
    from exploreval.analysis import score_run, summary_table
    from exploreval.runner import SpecError

    with StubServer(reply="<a>+</a>") as server:
        data = llm_spec(server.base_url)
        with pytest.raises(SpecError, match="stub-model has no price"):
            spec_from_dict({**data, "budget": {"max_cost_usd": 1.0}})
        priced = {
            **data,
            "budget": {"max_cost_usd": 1.0},
            "prices": {"stub-model": {"input": 1, "output": 2}},
        }
        assert spec_from_dict(priced).budget.max_cost_usd == 1.0
        data["suites"][0]["seeds"] = "0"
        run_experiment(spec_from_dict(data), str(tmp_path / "r"))
    records = {r.agent.kind: r for r in RunDir(tmp_path / "r").iter_records()}
    assert (
        records["llm"].usage.calls > 0
        and records["llm"].usage.unpriced_calls == records["llm"].usage.calls
    )
    assert records["scripted"].usage.unpriced_calls == 0
    # the record says "unknown", not $0: on the episode and on every step that called the model
    assert records["llm"].usage.cost_usd is None and not records["llm"].usage.cost_known
    assert all(s.usage is not None and s.usage.cost_usd is None for s in records["llm"].steps)
    assert records["scripted"].usage.cost_usd == 0.0 and records["scripted"].usage.cost_known
    raw = (tmp_path / "r" / "episodes.jsonl").read_text().splitlines()
    llm_line = next(json.loads(x) for x in raw if json.loads(x)["agent"]["kind"] == "llm")
    assert llm_line["usage"]["cost_usd"] is None and llm_line["schema_version"] == 3
    manifest = RunDir(tmp_path / "r").read_manifest()
    assert manifest.usage.cost_usd is None and manifest.usage.unpriced_calls > 0
    summary = summary_table(score_run(RunDir(tmp_path / "r")).table).set_index("agent")
    llm_label = next(label for label in summary.index if label != "forward")
    assert summary.loc[llm_label, "cost_usd"] == "unpriced"
    assert summary.loc["forward", "cost_usd"] == 0.0
