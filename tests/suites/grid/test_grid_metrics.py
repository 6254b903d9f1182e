"""The grid suite's own episode metrics (progress, oracle ratio, budget use, revisits)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from grid_helpers import ENV_ID, TINY_MAP, play, write_map
from hypothesis import given, settings
from hypothesis import strategies as st

from exploreval.agents import ScriptedAgent
from exploreval.metrics import episode_metrics
from exploreval.runner import run_single
from exploreval.suites.grid import PRESETS, grid_episode_metrics, record_positions


def test_hand_made_episode_metrics(tmp_path: Path) -> None:
    """Tiny map, oracle walk: up, right (Apple), right, down (goal early), down, left (Bread),
    right, up (goal). Revisits: (2, 0) once, (2, 1) once."""
    record = play("oracle", map=str(write_map(tmp_path, TINY_MAP)))
    row: dict[str, Any] = grid_episode_metrics(record)
    assert record.n_steps == 8 and record.success
    assert row == {
        "nodes_total": 3,
        "nodes_achieved": 3,
        "progress": 1.0,
        "oracle_steps": 8,
        "oracle_step_ratio": 1.0,
        "budget": 24,
        "budget_used": 8 / 24,
        "revisits": row["revisits"],
        "cells_visited": row["cells_visited"],
        "coverage": row["cells_visited"] / 8,
        "prompt_set": None,  # a scripted agent has no prompt
    }
    positions = record_positions(record)
    entered_again = sum(
        1
        for i in range(1, len(positions))
        if positions[i] in positions[:i] and positions[i] != positions[i - 1]
    )
    assert row["revisits"] == entered_again
    assert row["cells_visited"] == len(set(positions))


class _Moves(ScriptedAgent):
    """Plays a fixed list of actions."""

    name = "fixed"

    def __init__(self, moves: list[str]) -> None:
        super().__init__()
        self.moves = list(moves)

    def choose(self, observation: str, info: dict[str, Any]) -> str:
        return self.moves.pop(0)


def test_invalid_steps_are_not_revisits(tmp_path: Path) -> None:
    """Tiny map from (0, 1): blocked 'right' (stays put: not a revisit), up, down (re-enters the
    start: revisit), blocked 'left' (not a revisit), up (re-enters (0, 2): revisit)."""
    agent = _Moves(["right", "up", "down", "left", "up"])
    record = asyncio.run(
        run_single(ENV_ID, agent, seed=0, map=str(write_map(tmp_path, TINY_MAP)), max_steps=5)
    )
    assert [s.valid for s in record.steps] == [False, True, True, False, True]
    row: dict[str, Any] = grid_episode_metrics(record)
    assert row["revisits"] == 2
    assert row["cells_visited"] == 2 and row["coverage"] == 2 / 8


@settings(max_examples=20, deadline=None)
@given(
    st.sampled_from(sorted(PRESETS)), st.integers(0, 1000), st.sampled_from(["random", "frontier"])
)
def test_metric_invariants(preset: str, seed: int, agent: str) -> None:
    record = play(agent, seed=seed, preset=preset)
    row: dict[str, Any] = grid_episode_metrics(record)
    assert 0 <= row["nodes_achieved"] <= row["nodes_total"]
    assert row["progress"] == pytest.approx(row["nodes_achieved"] / row["nodes_total"])
    assert 0 < row["budget_used"] <= 1
    assert row["revisits"] + row["cells_visited"] <= record.n_steps + 1
    assert 0 < row["coverage"] <= 1
    if record.success:
        assert row["oracle_step_ratio"] >= 1.0
    else:
        assert row["oracle_step_ratio"] is None and row["budget_used"] == 1.0


def test_metrics_are_registered_for_grid_records() -> None:
    record = play("frontier", seed=0, preset="explore-low/dag-small")
    row = episode_metrics(record)
    for key in (
        "success",
        "steps",
        "nodes_achieved",
        "oracle_step_ratio",
        "budget_used",
        "revisits",
    ):
        assert key in row
    assert "explore_error" in row  # the metric helper's registration runs from the grid package


def test_positions_need_grid_infos() -> None:
    record = play("random", seed=0)
    record.reset_info = {}
    with pytest.raises(ValueError, match="reset_info has no 'pos'"):
        record_positions(record)
