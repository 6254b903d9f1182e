"""Grid episode metrics owned by the env suite: task progress, oracle ratio, budget, revisits.

Pure functions of the stored ``EpisodeRecord`` (positions and per-step infos plus the ground
truth); the exploration/exploitation errors live in ``exploreval.suites.grid.explore_exploit``.
"""

from __future__ import annotations

from exploreval.core import EpisodeRecord
from exploreval.metrics import Scalar, step_infos
from exploreval.suites.grid._info import GridStepInfo


def record_positions(record: EpisodeRecord) -> list[tuple[int, int]]:
    """Cell at t = 0, 1, 2, ...: the reset cell, then the cell after every step (the typed
    ``GridStepInfo.pos``; a step without one fails naming the episode and step)."""
    start = record.reset_info.get("pos")
    if start is None:
        raise ValueError(f"episode {record.episode_id}: reset_info has no 'pos' (not a grid run?)")
    out = [(int(start[0]), int(start[1]))]
    out.extend(info.pos for info in step_infos(record, GridStepInfo))
    return out


def grid_episode_metrics(record: EpisodeRecord) -> dict[str, Scalar]:
    """nodes_achieved, progress, oracle ratio, budget use, revisits, coverage."""
    truth = record.ground_truth
    task = truth.get("task") or {}
    n_nodes = len(task.get("nodes", []))
    width, height = int(task.get("width", 0)), int(task.get("height", 0))
    traversable = width * height - len(task.get("obstacles", []))
    positions = record_positions(record)
    seen: set[tuple[int, int]] = {positions[0]}
    revisits = 0
    for before, after in zip(positions, positions[1:], strict=False):
        if after != before and after in seen:
            revisits += 1
        seen.add(after)
    infos = step_infos(record, GridStepInfo)
    achieved = {node for info in infos for node in info.achieved}
    last_progress = infos[-1].progress if infos else None
    steps = len(record.steps)
    oracle = truth.get("oracle_steps")
    budget = truth.get("budget")
    return {
        "nodes_total": n_nodes,
        "nodes_achieved": len(achieved),
        "progress": float(last_progress or 0.0),
        "oracle_steps": oracle,
        "oracle_step_ratio": (steps / oracle) if (record.success and oracle) else None,
        "budget": budget,
        "budget_used": (steps / budget) if budget else None,
        "revisits": revisits,
        "cells_visited": len(seen),
        "coverage": (len(seen) / traversable) if traversable > 0 else None,
        "prompt_set": prompt_set(record),
    }


def prompt_set(record: EpisodeRecord) -> str | None:
    """The LLM agent's prompt set as the paper names its variants (``default``,
    ``default-exploration``, ``reasoning-balance``...), from the harness options stored with
    the episode; None for a scripted agent or a harness without a strategy."""
    harness = record.agent.config.get("harness") if record.agent.kind == "llm" else None
    if not isinstance(harness, dict) or "strategy" not in harness:
        return None
    strategy = str(harness["strategy"])
    base = "reasoning" if harness.get("reasoning") else "default"
    return base + ("" if strategy == "base" else f"-{strategy}")


def record_budget(record: EpisodeRecord) -> int | None:
    """The grid episode's hidden step budget B = alpha * |traversable| (TIDE's t_max)."""
    budget = record.ground_truth.get("budget")
    return int(budget) if isinstance(budget, int) and budget > 0 else None
