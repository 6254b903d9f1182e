"""TIDE on stored records: adapters, t_max resolution, recall distance, run tables, Memory Index
through the runner, and the report figures."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exploreval.analysis import build_report, score_run
from exploreval.core import AgentInfo, EpisodeRecord, Message, Step
from exploreval.metrics import episode_metrics, run_metrics
from exploreval.metrics.tide import (
    PAPER_T_MAX,
    bootstrap_mean_ci,
    memory_index_between,
    memory_index_row,
    progress_trace,
    recall_distances,
    record_recall,
    register_state_identity,
    register_t_max,
    resolve_t_max,
    solved_at,
    strip_patterns,
    tide_episode_metrics,
    tide_run_tables,
)
from exploreval.models import ScriptedModel
from exploreval.report._tide_frames import (
    RADAR_BASELINE,
    RADAR_CEILING,
    normalise_for_radar,
    radar_frame,
)
from exploreval.runner import run_experiment, spec_from_dict
from exploreval.store import RunDir


def make_record(
    observations: list[str],
    actions: list[str],
    *,
    env_id: str = "exploreval/FrozenLake-v0",
    family: str = "puzzles",
    infos: list[dict[str, Any]] | None = None,
    success: bool = False,
    agent: str = "a",
    history: str | None = None,
    seed: int = 0,
    reset_info: dict[str, Any] | None = None,
    ground_truth: dict[str, Any] | None = None,
) -> EpisodeRecord:
    infos = infos or [{} for _ in actions]
    identity: dict[str, Any] = {"kind": "llm", "model": agent, "harness": "default"}
    if history is not None:
        identity["history"] = history
    return EpisodeRecord(
        episode_id=f"{agent}-{history}-{seed}-{env_id}",
        env_id=env_id,
        family=family,
        seed=seed,
        agent=AgentInfo(
            name=f"{agent}/default/{history}" if history else agent,
            kind="llm",
            config={"identity": identity},
        ),
        reset_info=reset_info or {},
        ground_truth=ground_truth or {},
        steps=[
            Step(t=t, observation=o, action=a, info=i)
            for t, (o, a, i) in enumerate(zip(observations, actions, infos, strict=True))
        ],
        success=success,
    )


def solved_record(turn: int | None, n_steps: int, **kw: Any) -> EpisodeRecord:
    infos = [{"success": turn is not None and t + 1 == turn} for t in range(n_steps)]
    return make_record(
        [f"s{t}" for t in range(n_steps)],
        ["a"] * n_steps,
        infos=infos,
        success=turn is not None,
        **kw,
    )


# -- adapters ---------------------------------------------------------------------------------------
def test_solved_at_reads_success_info_or_outcome() -> None:
    assert solved_at(solved_record(3, 5)) == 3
    assert solved_at(solved_record(None, 5)) is None
    outcome_only = make_record(["a", "b"], ["x", "y"], success=True)
    assert solved_at(outcome_only) == 2


def test_progress_trace_carries_last_value() -> None:
    record = make_record(
        ["a", "b", "c"], ["x"] * 3, infos=[{"progress": 0.5}, {}, {"progress": 0.25}]
    )
    assert progress_trace(record) == [0.5, 0.5, 0.25]
    assert progress_trace(make_record(["a"], ["x"])) is None


def test_bandit_progress_is_expected_reward_efficiency() -> None:
    record = make_record(
        ["p"] * 3,
        ["0", "1", "1"],
        env_id="exploreval/Bandit-v0",
        family="bandit",
        infos=[
            {"round": 1, "arm": 0, "progress": 1 / 3},
            {"round": 2, "arm": 1, "progress": 2 / 3},
            {"round": 3, "arm": 1, "progress": 1.0},
        ],
        ground_truth={"means": [0.25, 0.75]},
    )
    # the env's progress is elapsed rounds (same for every agent); TIDE uses the expected reward of
    # the pulls so far / (t * best mean): .25/.75, 1/1.5, 1.75/2.25
    assert progress_trace(record) == pytest.approx([1 / 3, 2 / 3, 1.75 / 2.25])


def test_t_max_resolution_order(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EXPLOREVAL_TIDE_T_MAX", raising=False)
    assert resolve_t_max("exploreval/FrozenLake-v0") == (30, "paper")
    assert resolve_t_max("import/AlfWorld") == (60, "paper")
    assert PAPER_T_MAX["WebShop"] == 15
    monkeypatch.setenv("EXPLOREVAL_TIDE_T_MAX", "FrozenLake=40, other=3")
    assert resolve_t_max("exploreval/FrozenLake-v0") == (40, "EXPLOREVAL_TIDE_T_MAX")
    assert resolve_t_max("exploreval/FrozenLake-v0", override={"frozenlake": 12}) == (
        12,
        "override",
    )
    assert resolve_t_max("exploreval/FrozenLake-v0", override=7) == (7, "override")
    monkeypatch.setenv("EXPLOREVAL_TIDE_T_MAX", "FrozenLake")
    with pytest.raises(ValueError, match="is not NAME=N"):
        resolve_t_max("exploreval/FrozenLake-v0")
    monkeypatch.delenv("EXPLOREVAL_TIDE_T_MAX")
    # an env's fixed window is kept between calls: a registration made later still counts
    assert resolve_t_max("test/Registered-v0") == (1, "longest episode")
    register_t_max("test/Registered-v0", 11)
    assert resolve_t_max("test/Registered-v0") == (11, "registered")
    register_t_max("test/Registered-v0", 13, source="paper")
    assert resolve_t_max("test/Registered-v0") == (13, "paper")
    monkeypatch.setenv("EXPLOREVAL_TIDE_T_MAX", "Registered=5")
    assert resolve_t_max("test/Registered-v0") == (5, "EXPLOREVAL_TIDE_T_MAX")
    monkeypatch.delenv("EXPLOREVAL_TIDE_T_MAX")
    register_t_max("test/Registered-v0", 11)
    # the grid suite's budget hook reads its stored budget B; no other key is consulted
    grid = make_record(["a"], ["x"], env_id="exploreval/GridDAG-v0", family="grid")
    assert resolve_t_max("exploreval/GridDAG-v0", [grid]) == (1, "longest episode")
    guessed = make_record(
        ["a"], ["x"], env_id="exploreval/GridDAG-v0", family="grid", reset_info={"max_steps": 57}
    )
    assert resolve_t_max("exploreval/GridDAG-v0", [guessed]) == (1, "longest episode")
    budget = grid.model_copy(update={"ground_truth": {"budget": 57}})
    assert resolve_t_max("exploreval/GridDAG-v0", [budget]) == (57, "episode budget")
    # any env: the step cap the runner stored in the record
    capped = make_record(["a"], ["x"], env_id="test/Capped-v0", family="toy")
    assert resolve_t_max("test/Capped-v0", [capped.model_copy(update={"max_steps": 9})]) == (
        9,
        "episode budget",
    )
    bandit = [solved_record(None, 25, env_id="exploreval/Bandit-v0", family="bandit")]
    assert resolve_t_max("exploreval/Bandit-v0", bandit) == (25, "longest episode")
    horizon = bandit[0].model_copy(update={"ground_truth": {"horizon": 100}})
    assert resolve_t_max("exploreval/Bandit-v0", [horizon]) == (100, "episode budget")


def test_episode_row_for_a_known_env() -> None:
    states = ["P..", ".P.", "P..", ".P.", "P..", ".P."]
    record = make_record(
        states,
        ["R", "L", "R", "L", "R", "D"],
        infos=[{}, {}, {}, {}, {}, {"success": True, "progress": 1.0}],
        success=True,
    )
    row = tide_episode_metrics(record)
    assert row["tide_t_max"] == 30
    assert row["tide_solved_at"] == 6
    assert row["tide_auv"] == pytest.approx((30 - 6 + 0.5) / 30)
    # the authors' scan: cycle P.. .P. at 0 whose lap repeats at actions 2, 3 (R L); from 2 the
    # next lap is R D, not R L: 2 cycles, 2 loop steps of 6
    assert row["tide_cycles"] == 2 and row["tide_loop_steps"] == 2
    assert row["tide_loop_definition"] == "published"
    assert row["tide_loop_ratio"] == pytest.approx(2 / 6)
    # exhaustively, the rotation .P. L P.. R .P. (actions 3, 4) repeats too: 3 of 6
    assert row["tide_loop_ratio_exhaustive"] == pytest.approx(3 / 6)
    assert row["tide_loop_ratio_one_step"] == 0.0  # no action repeats from the same cell
    assert row["tide_progress_auv"] == pytest.approx(0.5 / 30 + 24 / 30)
    assert set(row) <= set(episode_metrics(record))  # registered for every family


def test_unknown_env_leaves_auv_to_run_tables() -> None:
    row = tide_episode_metrics(solved_record(2, 4, env_id="mytool/Thing-v0", family="x"))
    assert row["tide_auv"] is None and row["tide_t_max"] is None


def test_registered_state_identity_is_used() -> None:
    record = make_record(
        ["A t=1", "B t=2", "A t=3", "B t=4", "A t=5"],
        ["x", "y", "x", "y", "z"],
        env_id="test/Counter-v0",
        family="counter",
    )
    assert tide_episode_metrics(record)["tide_loop_steps"] == 0
    register_state_identity("counter", strip_patterns(r"t=\d+"))
    assert tide_episode_metrics(record)["tide_loop_steps"] == 2


def test_grid_step_counter_is_not_part_of_the_state() -> None:
    observations = [
        f"Step {t}. You are at {pos}." for t, pos in enumerate(["[0, 0]", "[1, 0]"] * 3)
    ]
    record = make_record(
        observations, ["right", "left"] * 3, env_id="exploreval/GridDAG-v0", family="grid"
    )
    # [0,0] right [1,0] left [0,0] ...: laps repeat from action 2 on (the scan compares the
    # last lap although nothing closes it); exhaustively the open last lap does not count
    row = tide_episode_metrics(record)
    assert row["tide_loop_steps"] == 4
    assert row["tide_loop_ratio_exhaustive"] == pytest.approx(3 / 6)


# -- recall distance -----------------------------------------------------------------------------------
def test_recall_distance_hand_counted() -> None:
    # o0 shows apple; action 0 looks around (o1 shows mug); action 1 takes the mug (d=1, seen in
    # the latest observation); action 2 takes the apple last seen in o0 (d = 2 + 1 - 0 = 3);
    # action 3 uses a knife never seen (not a distance).
    result = recall_distances(
        seen=[["apple"], ["mug"], [], [], []],
        acted=[[], ["mug"], ["apple"], ["knife"]],
    )
    assert [(e.t, e.entity, e.distance) for e in result.events] == [(1, "mug", 1), (2, "apple", 3)]
    assert result.mean == 2.0 and result.maximum == 3 and result.unseen == 1
    only_apple = recall_distances([["apple"], ["mug"]], [["mug"]], relevant=["apple"])
    assert only_apple.mean is None
    with pytest.raises(ValueError, match="one 'seen' entry per observation"):
        recall_distances([[]], [[], [], []])


def test_recall_from_record_infos() -> None:
    record = make_record(
        ["o0", "o1", "o2"],
        ["look", "take", "use"],
        infos=[
            {"entities_seen": ["n1", "n2"]},
            {"entities_acted": ["n2"]},
            {"entities_acted": ["n1"]},
        ],
        reset_info={"entities_seen": ["n1"]},
    )
    recall = record_recall(record)
    assert [(e.t, e.entity, e.distance) for e in recall.events] == [(1, "n2", 1), (2, "n1", 2)]


# -- run tables ------------------------------------------------------------------------------------------
def test_summary_and_memory_tables() -> None:
    records = [
        solved_record(t, 6, agent="m", history="full", seed=i)
        for i, t in enumerate([1, 2, 3, None])
    ]
    records += [
        solved_record(t, 6, agent="m", history="none", seed=i)
        for i, t in enumerate([4, None, None, None])
    ]
    tables = tide_run_tables(records)
    summary = tables["tide_summary"].set_index("history")
    assert summary.loc["full", "auv"] == pytest.approx((29.5 + 28.5 + 27.5) / 30 / 4)
    assert summary.loc["none", "success_rate"] == 0.25
    memory = tables["tide_memory"].iloc[0]
    assert memory["mi"] == pytest.approx(summary.loc["full", "auv"] - summary.loc["none", "auv"])
    assert memory["paired"] and memory["tasks"] == 4
    assert memory["mi_ci_low"] <= memory["mi"] <= memory["mi_ci_high"]
    assert "tide_window" in tables  # none (0) and full (inf) make a two-point curve
    assert run_metrics(records)["tide_summary"].shape[0] == 2  # registered for every family


def test_tasks_split_by_loops_and_loop_action_verbs() -> None:
    looping = make_record(
        ["A", "B", "A", "B", "A", "B"],
        ["click x", "type y", "click x", "type y", "click x", "done"],
        infos=[{}] * 5 + [{"success": True}],
        success=True,
        seed=0,
    )
    clean = solved_record(2, 2, seed=1)
    summary = tide_run_tables([looping, clean])["tide_summary"].iloc[0]
    assert summary["tasks_with_loops"] == 1
    assert summary["auv_tasks_with_loops"] == pytest.approx((30 - 6 + 0.5) / 30)
    assert summary["auv_tasks_without_loops"] == pytest.approx((30 - 2 + 0.5) / 30)
    verbs = tide_run_tables([looping, clean])["tide_loop_actions"]
    # loop steps are actions 2, 3 (click, type): the lap from 2 ends in done, not type
    assert dict(zip(verbs["verb"], verbs["loop_steps"], strict=True)) == {"click": 1, "type": 1}
    assert verbs["share"].sum() == pytest.approx(1.0)


def test_memory_index_between_runs_matches_single_agents() -> None:
    with_memory = [solved_record(1, 3, agent="model-a", history="full", seed=i) for i in range(3)]
    without = [solved_record(None, 3, agent="model-b", seed=i) for i in range(3)]
    frame = memory_index_between(with_memory, without)
    row = frame.iloc[0]
    assert row["matched_by"] == "only agent"
    assert row["mi"] == pytest.approx(29.5 / 30)


def test_memory_index_averages_repeated_tasks_and_handles_disjoint_sets() -> None:
    # task (seed) 0 was attempted twice with memory (turn 1, then unsolved): both count, averaged
    with_memory = [
        solved_record(1, 3, agent="m", history="full", seed=0),
        solved_record(None, 3, agent="m", history="full", seed=0),
        solved_record(2, 3, agent="m", history="full", seed=1),
        solved_record(1, 3, agent="m", history="full", seed=5),  # no partner: not in a paired MI
    ]
    without = [solved_record(None, 3, agent="m", history="none", seed=s) for s in (0, 1)]
    row = memory_index_row(with_memory, without, 30)
    expected_with = (29.5 / 30 / 2 + 28.5 / 30) / 2
    assert row["paired"] and row["tasks"] == 2
    assert row["auv_with"] == pytest.approx(expected_with) and row["auv_without"] == 0.0
    assert row["mi"] == pytest.approx(expected_with)
    # no common task: unpaired difference of the two means with an independent-resample CI
    apart = memory_index_row(
        [solved_record(t, 3, seed=s) for s, t in ((0, 1), (1, None))],
        [solved_record(t, 3, seed=s) for s, t in ((7, 2), (8, 2), (9, None))],
        30,
    )
    assert not apart["paired"] and apart["tasks"] == 2
    assert apart["auv_with"] == pytest.approx(29.5 / 30 / 2)
    assert apart["auv_without"] == pytest.approx(2 * 28.5 / 30 / 3)
    assert apart["mi"] == pytest.approx(apart["auv_with"] - apart["auv_without"])
    assert apart["mi_ci_low"] < apart["mi"] < apart["mi_ci_high"]


def test_repeats_are_clustered_by_task_in_cis_and_memory_index() -> None:
    def attempts(history: str, solved: list[int | None]) -> list[EpisodeRecord]:
        return [
            solved_record(turn, 3, agent="m", history=history, seed=seed).model_copy(
                update={"repeat": repeat}
            )
            for seed, turn in enumerate(solved)
            for repeat in range(5)
        ]

    records = attempts("full", [1, None, 1, 1]) + attempts("none", [None, None, 1, None])
    tables = tide_run_tables(records)
    summary = tables["tide_summary"].set_index("history")
    full = summary.loc["full"]
    task_level = bootstrap_mean_ci([29.5 / 30, 0, 29.5 / 30, 29.5 / 30])
    assert full["episodes"] == 20 and full["auv"] == pytest.approx(3 * 29.5 / 30 / 4)
    assert (full["auv_ci_low"], full["auv_ci_high"]) == pytest.approx(
        (task_level.low, task_level.high)
    )
    memory = tables["tide_memory"].iloc[0]
    assert memory["tasks"] == 4 and memory["paired"]  # 4 tasks, not 20 attempts
    assert memory["mi"] == pytest.approx(2 * 29.5 / 30 / 4)


def test_window_sizes_and_sr_within_t_max() -> None:
    records = [
        solved_record(t, 40, agent="m", history=h, seed=i)
        for h, solved in (("none", [None, 35]), ("window:3", [2, None]), ("full", [1, 2]))
        for i, t in enumerate(solved)
    ]
    window = tide_run_tables(records)["tide_window"].set_index("history")
    assert window["window"].to_dict() == {"none": 0.0, "window:3": 3.0, "full": math.inf}
    assert window.loc["full", "auv"] == pytest.approx((29.5 + 28.5) / 30 / 2)
    summary = tide_run_tables(records)["tide_summary"].set_index("history")
    # solved at turn 35 counts in SR but not within t_max = 30
    assert summary.loc["none", "success_rate"] == 0.5
    assert summary.loc["none", "sr_at_t_max"] == 0.0


def test_radar_normalisation_appendix_c6() -> None:
    low, high = RADAR_BASELINE, RADAR_CEILING
    assert normalise_for_radar([0.2, 0.6, 0.4, None]) == pytest.approx(
        [low, high, (low + high) / 2, None]
    )
    assert normalise_for_radar([0.3, 0.3]) == pytest.approx([(low + high) / 2] * 2)
    assert normalise_for_radar([None, float("nan")]) == [None, None]
    summary = pd.DataFrame(
        {
            "env_id": ["e"] * 3,
            "preset": ["-"] * 3,
            "agent": ["a", "b", "c"],
            "auv": [0.1, 0.5, 0.3],
            "loop_ratio": [0.5, 0.0, None],
        }
    )
    memory = pd.DataFrame([{"env_id": "e", "preset": "-", "with": "b", "mi": -0.2}])
    frame = radar_frame(summary, memory).set_index("agent")
    assert frame["auv_norm"].tolist() == pytest.approx([low, high, (low + high) / 2])
    # LR is inverted (1 - LR): the agent without loops gets the longest bar
    assert frame.loc["b", "one_minus_lr_norm"] == pytest.approx(high)
    assert frame.loc["a", "one_minus_lr_norm"] == pytest.approx(low)
    assert pd.isna(frame.loc["c", "one_minus_lr_norm"])  # no LR: no bar, not a zero
    assert frame.loc["b", "mi"] == -0.2 and pd.isna(frame.loc["a", "mi"])


def test_the_report_draws_the_radar_only_where_three_agents_make_it_mean_something(
    tmp_path: Path,
) -> None:
    """Figures 6/9 have a view (issue 44): drawn for an environment with 3+ agents; with two,
    min-max scaling makes them best and worst whatever their distance, and the report says
    why there is no radar instead of drawing one."""
    from exploreval.report._tide_plots import radar_part as _radar_part

    three = pd.DataFrame({"env_id": ["e"] * 3, "preset": ["-"] * 3, "agent": ["a", "b", "c"],
                          "auv": [0.1, 0.5, 0.3], "loop_ratio": [0.5, 0.0, 0.2]})  # fmt: skip
    two = pd.DataFrame({"env_id": ["f"] * 2, "preset": ["-"] * 2, "agent": ["a", "b"],
                        "auv": [0.1, 0.5], "loop_ratio": [0.5, 0.0]})  # fmt: skip
    files: list[Path] = []
    text = " ".join(_radar_part(pd.concat([three, two]), None, tmp_path, files))
    assert files == [tmp_path / "tide_radar.png"] and files[0].stat().st_size > 5000
    assert "Figures 6/9" in text and "fewer than 3 agents are left out" in text
    files = []
    text = " ".join(_radar_part(two, None, tmp_path / "none", files))
    assert files == [] and "No radar" in text and "best and worst" in text


# -- through the runner and the report ---------------------------------------------------------------------
def _reply(messages: list[Message], index: int) -> str:
    """With history the model keeps walking forward; without it, it oscillates 0 <-> 1."""
    if len(messages) > 2:
        return "<a>+</a>"
    position = int(messages[-1].content.split("You are at ")[1].split(".")[0])
    return "<a>+</a>" if position % 2 == 0 else "thinking... <a>-</a>"


def test_memory_index_and_window_curve_from_a_real_run(tmp_path: Path) -> None:
    spec = spec_from_dict(
        {
            "name": "mi",
            "suites": [{"env_id": "test/LineWalk-v0", "presets": ["long"], "seeds": "0-7"}],
            "agents": [
                {"kind": "llm", "model": "m", "history": history}
                for history in ("full", "none", "window:1")
            ],
        }
    )
    out = tmp_path / "run"
    run_experiment(spec, str(out), client_factory=lambda agent: ScriptedModel(reply_fn=_reply))
    result = score_run(RunDir(out))
    memory = result.tables["tide_memory"]
    assert len(memory) == 1
    row = memory.iloc[0]
    assert row["agent"] == "m/default" and row["tasks"] == 8
    assert row["mi"] > 0.3  # full memory walks straight to the target, no memory oscillates
    summary = result.tables["tide_summary"].set_index("history")
    assert summary.loc["none", "loop_ratio"] > 0.5
    assert summary.loc["full", "loop_ratio"] == 0.0
    window = result.tables["tide_window"]
    assert sorted(window["history"]) == ["full", "none", "window:1"]
    assert {"tide_auv", "tide_loop_ratio", "tide_recall_distance"} <= set(result.table.columns)
    report = build_report(RunDir(out))
    text = report.read_text()
    assert "TIDE: AUV, Loop Ratio, Memory Index" in text and "### Memory Index" in text
    for name in (
        "tide_success_curves",
        "tide_lr_vs_auv",
        "tide_memory_index",
        "tide_window",
    ):
        png = report.parent / f"{name}.png"
        assert png.stat().st_size > 5000, name
        assert f"({name}.png)" in text
    # three agents (one model under three memories): the radar of Figures 6/9 is drawn
    assert (report.parent / "tide_radar.png").stat().st_size > 5000
    assert "(tide_radar.png)" in text and "min-max" in text


def test_repeated_invalid_grid_actions_are_loops_in_a_real_run(tmp_path: Path) -> None:
    """An LLM that never produces a move stands still: after the first invalid step, every
    observation is the same grid state (only the step counter changes), so all later steps are
    repeated one-step cycles."""
    spec = spec_from_dict(
        {
            "suites": [{"env_id": "exploreval/GridDAG-v0", "presets": ["explore-low/dag-small"]}],
            "agents": [{"kind": "llm", "model": "scripted", "harness": "react", "history": "none"}],
            "max_steps": 6,
        }
    )
    run_experiment(spec, str(tmp_path / "r"), client_factory=lambda s: ScriptedModel(["hmm"]))
    (record,) = list(RunDir(tmp_path / "r").iter_records())
    assert [s.valid for s in record.steps] == [False] * 6
    row = episode_metrics(record)
    # step 0 leaves the initial observation (no notice) for the "invalid" state; steps 1..5
    # repeat that state: 5 loop steps of 6 (the final observation closes the last lap)
    assert row["tide_loop_steps"] == 5 and row["tide_loop_ratio"] == pytest.approx(5 / 6)


def test_a_trajectory_summary_survives_pickling_field_for_field() -> None:
    """Summaries travel from the workers through the spill to the reduce as pickles, rebuilt
    from their values in order (``__reduce__``): every field must come back as it was."""
    import pickle

    import numpy as np

    from exploreval.metrics._tide_records import trajectory_summaries

    record = make_record(
        ["A", "B", "A", "B", "A"],
        ["x", "y", "x", "y", "x"],
        infos=[
            {"progress": p, "entities_seen": ["k"], "entities_acted": ["k"]}
            for p in (0.1, 0.2, 0.2, 0.5, 1.0)
        ],
        success=True,
    )
    (summary,) = trajectory_summaries(record)
    assert summary.loops is not None and summary.loops.loop_steps > 0 and summary.recalls
    back = pickle.loads(pickle.dumps(summary, protocol=pickle.HIGHEST_PROTOCOL))
    for name in summary.__slots__:
        mine, theirs = getattr(summary, name), getattr(back, name)
        if isinstance(mine, np.ndarray):
            assert np.array_equal(mine, theirs)
        else:
            assert mine == theirs and type(mine) is type(theirs), name


def _progress_on_fractions_one_by_one(traces: list[Any], t_maxes: list[int]) -> Any:
    """The budget-fraction progress curve as stated: one ``np.interp`` per trajectory over its
    knots 0 .. L (progress carried forward past the end), then the mean of the rows."""
    import numpy as np

    from exploreval.metrics._tide_tables import FRACTION_POINTS

    u = np.linspace(0.0, 1.0, FRACTION_POINTS)
    rows = []
    for trace, window in zip(traces, t_maxes, strict=True):
        values = np.clip(np.asarray(trace, dtype=np.float64)[:window], 0.0, 1.0)
        points = np.concatenate([[0.0], values]) if values.size else np.zeros(1)
        rows.append(np.interp(u * window, np.arange(points.size, dtype=np.float64), points))
    return np.mean(rows, axis=0)


_fraction_traces = st.lists(
    st.tuples(
        st.lists(
            st.one_of(st.floats(-0.5, 1.5, allow_nan=False), st.sampled_from([0.0, 1.0, 1 / 3])),
            max_size=40,
        ),
        st.integers(1, 60),
    ),
    min_size=1,
    max_size=30,
)


@settings(max_examples=300, deadline=None)
@given(_fraction_traces, st.sampled_from([1, 2, 3, 7, 8192]))
def test_progress_on_budget_fractions_is_one_interp_per_trajectory_to_the_bit(
    pairs: list[tuple[list[float], int]], block: int
) -> None:
    """A reduce interpolates 10^5 trajectories in blocks rather than one ``np.interp`` each:
    the mean curve must be the per-trajectory statement's exactly, whatever the block size
    (traces shorter and longer than their window, empty ones, values outside [0, 1])."""
    import numpy as np

    from exploreval.metrics._tide_tables import FRACTION_POINTS, _mean_progress_on_fractions

    traces = [np.asarray(trace, dtype=np.float64) for trace, _ in pairs]
    windows = [window for _, window in pairs]
    u = np.linspace(0.0, 1.0, FRACTION_POINTS)
    got = _mean_progress_on_fractions(traces, windows, u, block=block)
    assert got.tolist() == _progress_on_fractions_one_by_one(traces, windows).tolist()


def test_table4_pairs_where_success_rate_and_auv_disagree_paper_rows() -> None:
    """TIDE Table 4 from the paper's own FrozenLake and Sudoku numbers (SR %, AUV %): each
    listed pair comes out, in the paper's direction only, and nothing else of those models."""
    from exploreval.report._tide_frames import sr_auv_pairs

    models = {
        "exploreval/FrozenLake-v0": {"Gemini 2.5 Flash": (97.0, 70.7), "DeepSeek-V3.2": (97.0, 73.1),
                                     "DeepSeek-R1": (96.0, 72.6), "Phi-4-reasoning": (62.0, 48.8),
                                     "Qwen3-30B-A3B-Instruct": (61.0, 49.0)},
        "exploreval/Sudoku-v0": {"GLM-4-32B-0414": (55.0, 34.4), "Phi-4-reasoning": (51.0, 37.4),
                                 "Qwen3-4B-Thinking": (55.0, 30.7)},
    }  # fmt: skip
    summary = pd.DataFrame([{"env_id": env, "preset": "paper", "agent": agent, "success_rate": sr,
                             "auv": auv} for env, rows in models.items()
                            for agent, (sr, auv) in rows.items()])  # fmt: skip
    pairs = sr_auv_pairs(summary)
    got = {(r.env_id.split("/")[1][:6], r.agent_a, r.agent_b) for r in pairs.itertuples()}
    assert got == {
        ("Frozen", "Gemini 2.5 Flash", "DeepSeek-V3.2"),
        ("Frozen", "Gemini 2.5 Flash", "DeepSeek-R1"),
        ("Frozen", "Phi-4-reasoning", "Qwen3-30B-A3B-Instruct"),
        ("Sudoku", "GLM-4-32B-0414", "Phi-4-reasoning"),
        ("Sudoku", "Qwen3-4B-Thinking", "GLM-4-32B-0414"),
        ("Sudoku", "Qwen3-4B-Thinking", "Phi-4-reasoning"),
    }
    row = pairs[(pairs["agent_a"] == "Gemini 2.5 Flash") & (pairs["agent_b"] == "DeepSeek-R1")]
    assert row[["sr_a", "sr_b", "auv_a", "auv_b"]].iloc[0].tolist() == [97.0, 96.0, 70.7, 72.6]
    same = pd.DataFrame([{"env_id": "e", "preset": "p", "agent": a, "success_rate": 0.5,
                          "auv": 0.4} for a in "xy"])  # fmt: skip
    assert sr_auv_pairs(same).empty  # equal on both: nothing to tell apart


# -- Figure 7: recall lags by outcome (issue 44) -------------------------------------------------
def _recall_record(lags: list[int], solved: bool, seed: int, agent: str = "a") -> EpisodeRecord:
    """A trajectory whose recall events have exactly ``lags``: entity e_i seen, then acted on
    ``lag`` observations later (a look step between)."""
    seen: list[list[str]] = [[]]
    acted: list[list[str]] = []
    for i, lag in enumerate(lags):
        seen[-1] = [*seen[-1], f"e{i}"]
        for _ in range(lag - 1):
            acted.append([])
            seen.append([])
        acted.append([f"e{i}"])
        seen.append([])
    infos = [
        {"entities_acted": a, "entities_seen": s} for a, s in zip(acted, seen[1:], strict=True)
    ]
    if solved:
        infos[-1]["success"] = True
    return make_record(
        [f"o{t}" for t in range(len(acted))], ["x"] * len(acted), infos=infos, success=solved,
        reset_info={"entities_seen": seen[0]}, seed=seed, agent=agent,
    )  # fmt: skip


@given(
    wins=st.lists(st.lists(st.integers(1, 6), min_size=1, max_size=4), max_size=4),
    losses=st.lists(st.lists(st.integers(1, 6), min_size=1, max_size=4), max_size=4),
)
@settings(max_examples=30, deadline=None)
def test_recall_lag_table_counts_every_event_by_outcome(
    wins: list[list[int]], losses: list[list[int]]
) -> None:
    from exploreval.metrics._tide_records import trajectory_summaries
    from exploreval.metrics._tide_tables import recall_lags_table

    records = [_recall_record(lags, True, i) for i, lags in enumerate(wins)]
    records += [_recall_record(lags, False, 100 + i) for i, lags in enumerate(losses)]
    table = recall_lags_table([s for r in records for s in trajectory_summaries(r)])
    for outcome, groups in (("success", wins), ("fail", losses)):
        part = table[table["outcome"] == outcome] if not table.empty else table
        expected = pd.Series([lag for lags in groups for lag in lags]).value_counts().sort_index()
        got = part.groupby("lag")["events"].sum() if not part.empty else pd.Series(dtype=int)
        assert got.to_dict() == expected.to_dict()


def test_the_report_draws_figure7_from_the_run(tmp_path: Path) -> None:
    from exploreval.report._tide import tide_report
    from exploreval.report._tide_frames import recall_lag_summary

    records = [_recall_record([1, 1, 2], True, 0), _recall_record([1, 2], True, 1)]
    records += [_recall_record([3, 7], False, 2), _recall_record([1, 8, 9], False, 3)]
    (section,) = tide_report(records, pd.DataFrame(), tmp_path)
    assert "### Memory recall lag, success vs failure (Figure 7)" in section.markdown
    assert (tmp_path / "tide_recall_lags.png") in section.files
    from exploreval.metrics._tide_records import trajectory_summaries
    from exploreval.metrics._tide_tables import recall_lags_table

    summary = recall_lag_summary(
        recall_lags_table([s for r in records for s in trajectory_summaries(r)])
    ).set_index("outcome")
    assert list(summary.index) == ["success", "fail"]
    assert summary.loc["success", "events"] == 5 and summary.loc["fail", "events"] == 5
    assert summary.loc["success", "mean_lag"] == pytest.approx(7 / 5)
    assert summary.loc["fail", "share_above_5"] == pytest.approx(3 / 5)
