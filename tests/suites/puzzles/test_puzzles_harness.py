"""The TIDE <analysis>/<action> harness: parsing, prompts under every history policy, and
LLM episodes end to end with a scripted model."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from exploreval.agents import EpisodeContext, make_harness
from exploreval.analysis import build_report, score_run
from exploreval.core import INVALID_ACTION, Message, make_env
from exploreval.models import ScriptedModel
from exploreval.runner import run_experiment, spec_from_dict
from exploreval.store import RunDir
from exploreval.suites.puzzles import (
    PuzzleHarness,
    optimal_plan,
    parse_grid,
    parse_lake,
    parse_state_text,
    solve,
)
from exploreval.suites.puzzles._frozenlake import best_move

PUZZLES = {
    "frozenlake": "exploreval/FrozenLake-v0",
    "blocksworld": "exploreval/BlocksWorld-v0",
    "sudoku": "exploreval/Sudoku-v0",
}


def started(family: str, history: str = "full", seed: int = 0, preset: str | None = None):  # type: ignore[no-untyped-def]
    env = make_env(PUZZLES[family], preset=preset)
    obs, info = env.reset(seed=seed)
    harness = make_harness(family, "default", history=history)
    ctx = EpisodeContext(
        env_id=PUZZLES[family],
        family=family,
        preset=preset,
        seed=seed,
        repeat=0,
        rng=np.random.default_rng(0),
        task_description=env.task_description(),
        reset_info=info,
        max_steps=env.max_steps,
    )
    harness.reset(ctx, obs)
    return env, harness, obs, info


@pytest.mark.parametrize(
    ("reply", "action", "reasoning"),
    [
        ("<analysis>go right</analysis>\n<action>Right</action>", "Right", "go right"),
        ("<analysis>a</analysis><action> stack  b1\n b2 </action>", "stack b1 b2", "a"),
        ("I might <action>Up</action>... no: <ACTION>Down</ACTION>", "Down", None),
        ("<action>stop</action>", "stop", None),
    ],
)
def test_parse_takes_the_last_action_tag(reply: str, action: str, reasoning: str | None) -> None:
    harness = make_harness("frozenlake", "default")
    parsed = harness.parse(reply)
    assert parsed.action == action and parsed.reasoning == reasoning


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        ("Right", "no <action>...</action> tag"),
        ("<analysis>thinking</analysis><action>Right", "no <action>...</action> tag"),
        ("<action>  </action>", "empty"),
    ],
)
def test_unparsable_replies_get_a_reason(reply: str, reason: str) -> None:
    parsed = make_harness("sudoku", "default").parse(reply)
    assert parsed.action is None and parsed.reason is not None and reason in parsed.reason


def test_system_prompts_follow_the_paper() -> None:
    _, bw, _, _ = started("blocksworld")
    text = bw.system_prompt()
    assert "You are a robot in a blocksworld system" in text
    assert "complete the task within 30 steps" in text and "<action>stop</action>" in text
    _, fl, _, _ = started("frozenlake")
    assert "O: wall, _: empty, G: target, P: player" in fl.system_prompt()
    _, su4, _, _ = started("sudoku", preset="4x4-easy")
    prompt = su4.system_prompt()
    assert "numbers 1-4" in prompt and "Each 2x2 subgrid" in prompt and "(3, 3)" in prompt
    _, su9, _, _ = started("sudoku")
    assert "Each 3x3 subgrid" in su9.system_prompt()


@pytest.mark.parametrize("history", ["full", "none", "window:1", "summary"])
def test_goal_is_always_in_the_prompt(history: str) -> None:
    env, harness, obs, info = started("blocksworld", history=history, seed=42)
    goal = env.task_description()
    for _ in range(3):
        msgs = harness.messages(obs, info)
        first_user = next(m for m in msgs if m.role == "user")
        assert first_user.content.startswith(goal)
        assert f"<state>\n{obs}\n</state>" in msgs[-1].content
        reply = "<action>pickup b99</action>"
        harness.record(obs, info, reply, "pickup b99")
        obs, _, _, _, info = env.step("pickup b99")
    n_user = sum(1 for m in harness.messages(obs, info) if m.role == "user")
    assert n_user == {"full": 4, "none": 1, "window:1": 2, "summary": 1}[history]
    if history == "summary":
        assert "pickup b99; pickup b99; pickup b99" in harness.messages(obs, info)[-1].content


def test_feedback_names_the_refused_action() -> None:
    env, harness, obs, info = started("frozenlake", preset="4x4")
    obs, _, _, _, info = env.step("Jump")
    text = harness.format_observation(obs, info)
    assert text.startswith("Action 'Jump' failed to execute: unknown action")
    assert text.endswith(f"<state>\n{obs}\n</state>")
    obs, _, _, _, info = env.step("Right")
    assert harness.format_observation(obs, info) == f"<state>\n{obs}\n</state>"


def test_harness_fixes_the_papers_sampling_defaults() -> None:
    harness = make_harness("sudoku", "default")
    assert isinstance(harness, PuzzleHarness)
    assert harness.sampling_overrides == {"temperature": 0.7, "top_p": 1.0}


# -- end to end with a scripted model that plays from the prompt alone ---------------------
def _state_of(msg: Message) -> str:
    match = re.search(r"<state>\n(.*)\n</state>", msg.content, re.DOTALL)
    assert match, msg.content
    return match.group(1)


def prompt_player(family: str):  # type: ignore[no-untyped-def]
    """reply_fn solving the puzzle from the messages; each episode's first reply is unparsable."""

    def reply(messages: Sequence[Message], index: int) -> str:
        if len(messages) == 2:  # system + first user turn (history "full")
            return "I am not sure what to do."
        state = _state_of(messages[-1])
        if family == "blocksworld":
            goal_text = next(m for m in messages if m.role == "user").content.split("# Current")[0]
            plan = optimal_plan(parse_state_text(state), parse_state_text(goal_text))
            action = plan[0].text() if plan else "stop"
        elif family == "frozenlake":
            lake, player = parse_lake(state)
            action = best_move(lake, player) or "stop"
        else:
            grid, n = parse_grid(state)
            solution = solve(grid, n)
            assert solution is not None
            i = grid.index(0)
            action = f"{i // n} {i % n} {solution[i]}"
        return f"<analysis>step {index}</analysis>\n<action>{action}</action>"

    return reply


@pytest.mark.parametrize("family", sorted(PUZZLES))
def test_llm_episodes_record_raw_text_invalid_reasons_and_metrics(
    family: str, tmp_path: Path
) -> None:
    spec = spec_from_dict(
        {
            "name": f"{family}-scripted-llm",
            "suites": [{"env_id": PUZZLES[family], "presets": ["paper"], "seeds": "0-3"}],
            "agents": [
                {"kind": "llm", "model": "scripted", "history": "full"},
                {"kind": "scripted", "agent": "optimal"},
            ],
        }
    )
    summary = run_experiment(
        spec,
        str(tmp_path),
        client_factory=lambda _: ScriptedModel(reply_fn=prompt_player(family)),
    )
    assert summary.errored == 0
    records = list(RunDir(tmp_path).iter_records())
    llm = [r for r in records if r.agent.kind == "llm"]
    assert len(llm) == 4 and all(r.success for r in records)
    for record in llm:
        bad = [s for s in record.steps if not s.valid]
        # the first reply of each episode is unparsable: recorded with its text and reason
        assert (
            bad
            and bad[0].action == INVALID_ACTION
            and bad[0].raw_output == "I am not sure what to do."
        )
        assert "no <action>" in (bad[0].invalid_reason or "")
        assert all(
            s.raw_output and s.raw_output.startswith("<analysis>") for s in record.steps if s.valid
        )
        assert record.agent.config["params"]["temperature"] == 0.7
    result = score_run(RunDir(tmp_path))
    table = result.table
    assert set(table["final_progress"]) == {1.0}
    assert (table["excess_steps"] == table["agent_kind"].map({"llm": 1, "scripted": 0})).all()
    assert f"{family}_by_" in " ".join(result.tables)
    report = build_report(RunDir(tmp_path))
    text = report.read_text()
    assert f"{family}: success by" in text
    assert list((report.parent).glob(f"{family}_success_by_*.png"))
    assert isinstance(table, pd.DataFrame)


def test_model_summary_shows_what_the_model_wrote_instead_of_the_turns() -> None:
    """TIDE Table 5's "Summary" setting (issue 44): the model is asked for a <summary> after
    its action; the next turn shows the current state and that summary, no earlier turn; a
    reply without one keeps the last; the grammar makes room for it."""
    env, harness, obs, info = started("frozenlake", history="model-summary")
    assert "write <summary> </summary>" in harness.system_prompt()
    assert "Your summary" not in harness.messages(obs, info)[-1].content  # nothing written yet
    replies = [
        "<analysis>a</analysis>\n<action>Right</action>\n<summary>Went right; the hole is "
        "below (1, 0).</summary>",
        "<analysis>b</analysis>\n<action>Down</action>",  # no summary: the last one stands
        "<action>Left</action><summary>  Right then down:\n safe.  </summary>",
    ]
    expected = ["Went right; the hole is below (1, 0).", "Went right; the hole is below (1, 0).",
                "Right then down: safe."]  # fmt: skip
    for reply, written in zip(replies, expected, strict=True):
        action = harness.parse(reply).action
        assert action is not None
        harness.record(obs, info, reply, action)
        obs, _, done, _, info = env.step(action)
        messages = harness.messages(obs, info)
        assert sum(m.role == "user" for m in messages) == 1  # no earlier turn
        assert messages[-1].content.endswith(f"<summary>{written}</summary>")
        if done:
            break
    grammar = harness.constraint(obs, info)
    assert grammar is not None and grammar.grammar is not None
    assert '"\\n<summary>"' in grammar.grammar and '"</summary>"' in grammar.grammar


def test_model_summary_needs_a_harness_that_asks_for_it() -> None:
    with pytest.raises(ValueError, match="does not ask the model for a summary"):
        make_harness("grid", "react", history="model-summary")


def test_table5_pairs_the_naive_and_the_summary_history(tmp_path: Path) -> None:
    """Table 5 from a scripted run: AUV with the full history against AUV with the model's own
    summary, one row per agent, its numbers the TIDE summary's AUVs of the two agents."""

    def reply(messages: Sequence[Message], index: int) -> str:
        moves = ("Right", "Down", "Left", "Up")
        return f"<action>{moves[index % 4]}</action><summary>step {index}</summary>"

    spec = spec_from_dict({
        "suites": [{"env_id": "exploreval/FrozenLake-v0", "presets": ["small"], "seeds": "0-3"}],
        "agents": [{"kind": "llm", "model": "scripted", "history": h}
                   for h in ("full", "model-summary")],
        "max_steps": 6,
    })  # fmt: skip
    run_experiment(
        spec, str(tmp_path / "run"), client_factory=lambda _: ScriptedModel(reply_fn=reply)
    )
    result = score_run(RunDir(tmp_path / "run"))
    (row,) = result.tables["tide_summary_history"].to_dict("records")
    summary = result.tables["tide_summary"].set_index("agent")["auv"]
    assert row["summary"] == "model-summary" and row["tasks"] == 4
    assert row["auv_naive"] == pytest.approx(summary["scripted/default/full"])
    assert row["auv_summary"] == pytest.approx(summary["scripted/default/model-summary"])
    assert "### Memory summary (Table 5)" in build_report(RunDir(tmp_path / "run")).read_text()
