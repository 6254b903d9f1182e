"""Puzzle metrics: pure functions of stored episode records (and their ground truth).

TIDE's own metrics (AUV, Loop Ratio, MI) live in ``exploreval.metrics.tide`` and apply to
every family; these add what only a puzzle knows: how far from optimal the agent was,
which rule it broke, and success by difficulty (BlocksWorld level, Sudoku blanks,
FrozenLake shortest-path length).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

import pandas as pd

from exploreval.core import EpisodeRecord
from exploreval.metrics import step_infos
from exploreval.metrics.tide import solved_at
from exploreval.suites.puzzles._info import (
    BlocksWorldStepInfo,
    FrozenLakeStepInfo,
    PuzzleStepInfo,
    SudokuStepInfo,
)

M = TypeVar("M", bound=PuzzleStepInfo)

Scalar = float | int | bool | str | None

#: Ground-truth key holding each family's difficulty, and how the tables name it.
DIFFICULTY: dict[str, tuple[str, str]] = {
    "blocksworld": ("level", "level"),
    "sudoku": ("blanks", "blanks"),
    "frozenlake": ("shortest_path", "shortest_path"),
}


#: The typed step info of each puzzle family (what its metrics read).
INFO_MODELS: dict[str, type[PuzzleStepInfo]] = {
    "frozenlake": FrozenLakeStepInfo,
    "blocksworld": BlocksWorldStepInfo,
    "sudoku": SudokuStepInfo,
}


def _infos(record: EpisodeRecord, model: type[M]) -> list[M]:
    return step_infos(record, model)


def _final(record: EpisodeRecord) -> tuple[float, bool]:
    """Progress and stop flag after the last step (typed), or the reset state if none."""
    if record.steps:
        last = _infos(record, INFO_MODELS.get(record.family, PuzzleStepInfo))[-1]
        return float(last.progress or 0.0), last.stopped
    return float(record.reset_info.get("progress", 0.0)), False


def common_metrics(record: EpisodeRecord) -> dict[str, Scalar]:
    gt = record.ground_truth
    optimal = gt.get("optimal_length", gt.get("shortest_path"))
    at = solved_at(record)
    progress, stopped = _final(record)
    return {
        "final_progress": float(progress),
        "stopped": bool(stopped),
        "solved_at_step": at,
        "optimal_steps": int(optimal) if optimal is not None else None,
        "excess_steps": (at - int(optimal)) if (at is not None and optimal is not None) else None,
        # the content an instance file was played from: compare pairs episodes by it too
        "instance_sha256": (gt.get("instance_source") or {}).get("sha256"),
    }


def frozenlake_metrics(record: EpisodeRecord) -> dict[str, Scalar]:
    infos = _infos(record, FrozenLakeStepInfo)
    return {
        "grid_size": int(record.ground_truth.get("size", [0])[0]),
        "hole_attempts": sum(1 for i in infos if i.hole_attempt),
        "wall_bumps": sum(1 for i in infos if i.valid and i.moved is False),
    }


def blocksworld_metrics(record: EpisodeRecord) -> dict[str, Scalar]:
    steps = zip(record.steps, _infos(record, BlocksWorldStepInfo), strict=True)
    # Well-formed actions whose preconditions failed (the env named the operator) vs actions
    # that were not actions (no operator reported).
    parsed = [("operator" in i.model_fields_set) for s, i in steps if not s.valid]
    return {
        "level": record.ground_truth.get("level"),
        "n_blocks": record.ground_truth.get("n_blocks"),
        "precondition_violations": sum(parsed),
        "malformed_actions": len(parsed) - sum(parsed),
    }


def sudoku_metrics(record: EpisodeRecord) -> dict[str, Scalar]:
    pairs = list(zip(record.steps, _infos(record, SudokuStepInfo), strict=True))
    wrong = sum(1 for s, i in pairs if s.valid and i.correct is False)
    # a rule violation names the cell it tried; a malformed action names none
    parsed = [("cell" in i.model_fields_set) for s, i in pairs if not s.valid]
    return {
        "blanks": record.ground_truth.get("blanks"),
        "wrong_fills": wrong,
        "dead_end": wrong > 0,
        "rule_violations": sum(parsed),
        "malformed_actions": len(parsed) - sum(parsed),
    }


def difficulty_row(record: EpisodeRecord) -> dict[str, Any] | None:
    """One ``ok`` puzzle episode as ``by_difficulty`` needs it (the map side of the run metric)."""
    if record.family not in DIFFICULTY or record.status != "ok":
        return None
    key, _column = DIFFICULTY[record.family]
    return {
        "family": record.family,
        "env_id": record.env_id,
        "preset": record.preset or "-",
        "agent": record.agent.name,
        # one column for every family (named per family in the table): rows of several
        # puzzle families in one frame keep their difficulty's own type
        "difficulty": record.ground_truth.get(key),
        "success": bool(record.success),
        "steps": len(record.steps),
        "final_progress": _final(record)[0],
    }


def by_difficulty(records: Sequence[EpisodeRecord]) -> dict[str, pd.DataFrame]:
    """Success rate and mean steps per agent and difficulty, one table per puzzle family."""
    return by_difficulty_from_rows([difficulty_row(r) for r in records])


def by_difficulty_from_rows(
    rows: pd.DataFrame | Sequence[dict[str, Any] | None],
) -> dict[str, pd.DataFrame]:
    """The reduce side of ``by_difficulty``, from the episodes' ``difficulty_row``s."""
    every = (
        rows
        if isinstance(rows, pd.DataFrame)
        else pd.DataFrame([row for row in rows if row is not None])
    )
    tables: dict[str, pd.DataFrame] = {}
    for family, (_key, column) in DIFFICULTY.items():
        if every.empty:
            continue
        frame = every[every["family"] == family]
        if frame.empty:
            continue
        frame = frame[["env_id", "preset", "agent", "difficulty", "success", "steps",
                       "final_progress"]].rename(columns={"difficulty": column})  # fmt: skip
        frame[column] = frame[column].infer_objects()
        tables[f"{family}_by_{column}"] = (
            frame.groupby(["env_id", "preset", "agent", column], dropna=False)
            .agg(
                episodes=("success", "size"),
                success_rate=("success", "mean"),
                mean_steps=("steps", "mean"),
                mean_final_progress=("final_progress", "mean"),
            )
            .reset_index()
        )
    return tables
