"""Runner: plan, execute, resume, budgets, invalid output, errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from exploreval.core import UnknownNameError
from exploreval.models import ScriptedModel
from exploreval.runner import (
    ConfigMismatchError,
    Runner,
    SpecError,
    plan_episodes,
    run_experiment,
    spec_from_dict,
)
from exploreval.store import RunDir


def toy_spec(**overrides: object) -> dict:
    data: dict = {
        "name": "toy",
        "suites": [{"env_id": "test/LineWalk-v0", "presets": ["short", "long"], "seeds": "0-4"}],
        "agents": [
            {"kind": "scripted", "agent": "forward"},
            {"kind": "scripted", "agent": "random"},
        ],
        "repeats": 2,
    }
    data.update(overrides)
    return data


def test_plan_ids_are_stable_and_unique() -> None:
    spec = spec_from_dict(toy_spec())
    first = [e.episode_id for e in plan_episodes(spec)]
    second = [e.episode_id for e in plan_episodes(spec_from_dict(toy_spec()))]
    assert first == second
    assert len(set(first)) == 2 * 5 * 2 * 2


def test_run_writes_every_episode_and_resume_runs_nothing(tmp_path: Path) -> None:
    spec = spec_from_dict(toy_spec())
    summary = run_experiment(spec, str(tmp_path / "r"))
    assert summary.completed == 40 and summary.skipped == 0 and summary.status == "finished"
    run = RunDir(tmp_path / "r")
    records = list(run.iter_records())
    assert len(records) == 40
    forward = [r for r in records if r.agent.name == "forward"]
    assert all(r.success for r in forward)
    assert all(r.n_steps == r.ground_truth["target"] for r in forward)
    again = run_experiment(spec, str(tmp_path / "r"))
    assert again.completed == 0 and again.skipped == 40
    assert len(list(run.iter_records())) == 40
    manifest = run.read_manifest()
    assert manifest.status == "finished" and manifest.invocations == 2
    assert manifest.episodes_done == 40


def test_resume_runs_only_missing_episodes(tmp_path: Path) -> None:
    spec = spec_from_dict(toy_spec())
    run_experiment(spec, str(tmp_path / "r"))
    run = RunDir(tmp_path / "r")
    lines = run.episodes_path.read_text().splitlines()
    removed = {json.loads(line)["episode_id"] for line in lines[:7]}
    run.episodes_path.write_text("\n".join(lines[7:]) + "\n")
    summary = run_experiment(spec, str(tmp_path / "r"))
    assert summary.completed == 7 and summary.skipped == 33
    assert {r.episode_id for r in run.iter_records()} >= removed


def test_changed_config_is_refused_unless_forced(tmp_path: Path) -> None:
    run_experiment(spec_from_dict(toy_spec()), str(tmp_path / "r"))
    changed = spec_from_dict(toy_spec(repeats=3))
    with pytest.raises(ConfigMismatchError, match="--force"):
        Runner(changed, str(tmp_path / "r")).prepare()
    summary = run_experiment(changed, str(tmp_path / "r"), force=True)
    assert summary.skipped == 40 and summary.completed == 20


def test_budget_stops_new_episodes(tmp_path: Path) -> None:
    spec = spec_from_dict(toy_spec(budget={"max_total_steps": 10}, concurrency=1))
    summary = run_experiment(spec, str(tmp_path / "r"))
    assert summary.stopped_by_budget
    assert summary.status == "interrupted"
    records = list(RunDir(tmp_path / "r").iter_records())
    # Checked before each new episode: the episode that crossed the line finishes, no more start.
    assert sum(r.n_steps for r in records[:-1]) < 10 <= sum(r.n_steps for r in records)
    resumed = run_experiment(spec_from_dict(toy_spec()), str(tmp_path / "r"))
    assert resumed.skipped == len(records) and resumed.status == "finished"


def test_unparsable_model_output_is_an_invalid_step(tmp_path: Path) -> None:
    def reply(messages: object, index: int) -> str:
        return "let me ponder" if index == 1 else "I think <a>+</a>"

    spec = spec_from_dict(
        toy_spec(
            agents=[{"kind": "llm", "model": "scripted", "history": "window:2"}],
            suites=[{"env_id": "test/LineWalk-v0", "presets": ["long"], "seeds": [3]}],
            repeats=1,
        )
    )
    run_experiment(
        spec, str(tmp_path / "r"), client_factory=lambda s: ScriptedModel(reply_fn=reply)
    )
    run = RunDir(tmp_path / "r")
    (record,) = list(run.iter_records())
    invalid = [s for s in record.steps if not s.valid]
    assert [s.t for s in invalid] == [1]
    assert invalid[0].raw_output == "let me ponder"
    assert invalid[0].invalid_reason == "no <a>+</a> or <a>-</a> tag found"
    assert invalid[0].info["position"] == 1  # the env did not move
    # prompts are stored by reference; the long system prompt once.
    assert record.steps[0].prompt is not None
    prompts = [run.blobs.get_prompt(s.prompt) for s in record.steps if s.prompt]
    assert len(prompts) == record.n_steps
    assert {p[0].content for p in prompts} == {prompts[0][0].content}
    assert prompts[0][0].content.startswith("Reply with + or -")
    # window:2 keeps the last two turns: system + 2 * (user, assistant) + current user
    assert [len(p) for p in prompts[:4]] == [2, 4, 6, 6]
    assert prompts[2][2].content == "I think <a>+</a>" and prompts[2][4].content == "let me ponder"
    assert "Long rules." not in run.episodes_path.read_text()


def test_unknown_env_and_preset_suggest_close_names(tmp_path: Path) -> None:
    with pytest.raises(UnknownNameError, match="test/LineWalk-v0"):
        plan_episodes(spec_from_dict(toy_spec(suites=[{"env_id": "test/LineWalc-v0"}])))
    with pytest.raises(UnknownNameError, match="Did you mean: short"):
        plan_episodes(
            spec_from_dict(toy_spec(suites=[{"env_id": "test/LineWalk-v0", "presets": ["shrt"]}]))
        )


def test_invalid_config_field_is_named() -> None:
    with pytest.raises(SpecError, match=r"field repeats: Input should be a valid integer"):
        spec_from_dict(toy_spec(repeats="many"), "exp.yaml")
    with pytest.raises(SpecError, match=r"exp.yaml.*\n.*unknown key 'speed' in agents.0 \(keys"):
        spec_from_dict(
            toy_spec(agents=[{"kind": "scripted", "agent": "forward", "speed": 3}]), "exp.yaml"
        )
    with pytest.raises(SpecError, match="seed 'x' is not an integer"):
        spec_from_dict(toy_spec(suites=[{"env_id": "test/LineWalk-v0", "seeds": "1,x"}]))


def test_agent_exception_is_recorded_and_rerun_on_resume(tmp_path: Path) -> None:
    calls = {"n": 0}

    def flaky(messages: object, index: int) -> str:
        calls["n"] += 1
        if calls["n"] == 2:
            raise RuntimeError("harness exploded")
        return "<a>+</a>"

    spec = spec_from_dict(
        toy_spec(
            agents=[{"kind": "llm", "model": "scripted"}],
            suites=[{"env_id": "test/LineWalk-v0", "presets": ["long"], "seeds": [3]}],
            repeats=1,
        )
    )
    first = run_experiment(
        spec, str(tmp_path / "r"), client_factory=lambda s: ScriptedModel(reply_fn=flaky)
    )
    assert first.errored == 1 and first.status == "failed"  # its only episode errored
    (failed,) = list(RunDir(tmp_path / "r").iter_records())
    assert failed.status == "error" and "harness exploded" in (failed.error or "")
    second = run_experiment(
        spec, str(tmp_path / "r"), client_factory=lambda s: ScriptedModel(["<a>+</a>"])
    )
    assert second.completed == 1 and second.status == "finished"
    latest = RunDir(tmp_path / "r").latest_records()
    assert [r.status for r in latest.values()] == ["ok"]


def test_yaml_and_toml_specs(tmp_path: Path) -> None:
    from exploreval.runner import load_spec

    yaml_path = tmp_path / "exp.yaml"
    yaml_path.write_text(
        "suites:\n  - env_id: test/LineWalk-v0\n    seeds: 0-2\nagents:\n  - agent: forward\n"
    )
    assert load_spec(yaml_path).suites[0].seeds == [0, 1, 2]
    toml_path = tmp_path / "exp.toml"
    toml_path.write_text(
        '[[suites]]\nenv_id = "test/LineWalk-v0"\nseeds = [1]\n[[agents]]\nagent = "forward"\n'
    )
    assert load_spec(toml_path).suites[0].seeds == [1]
    bad = tmp_path / "bad.yaml"
    bad.write_text("suites: [\n")
    with pytest.raises(SpecError, match="bad.yaml is not valid YAML"):
        load_spec(bad)
