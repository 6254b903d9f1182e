"""pass@k for every suite: the unbiased estimator (``metrics.passk``) over the repeats of a task.

A run with ``--repeats n`` plays every task n times per agent. Here a *task* is one env id +
preset + seed + condition, the condition being the episode's env options (behaviour-changing by
construction: they are part of the episode id). Rows are never pooled across agents or
conditions: one row per (agent, env id, preset, condition, k), for k = 1 .. 10 and then about
1.5x apart up to the fewest attempts any task of the row has (``k_grid``), with the mean over tasks of the per-task estimate and its 95% percentile
bootstrap CI over tasks (``at_k_table``). Only rows where some task has more than one attempt are
computed (with one attempt per task pass@1 is the success rate, already in the summary).

Registered for every family (``"*"``) as the run table ``pass_at_k``; the report's cross-suite
section draws its curves (``exploreval.report._passk``). The terminal suite keeps its own
pass/discovery/interaction@k tables, whose task is the terminal task id.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from exploreval.core import EpisodeRecord
from exploreval.metrics.passk import at_k_table

COLUMNS = [
    "agent", "family", "env_id", "preset", "condition", "n_tasks", "n_attempts",
    "attempts_min", "attempts_max", "k", "estimate", "ci_low", "ci_high",
]  # fmt: skip


#: The row's example episode (its first unsolved one by seed and repeat, else its first).
EXAMPLE_COLUMNS = ["example_run_id", "example_episode_id", "example_solved"]


def record_condition(record: EpisodeRecord) -> str:
    """The episode's env options as ``key=value`` pairs (JSON values, sorted keys); ``default``
    when there are none."""
    if not record.env_options:
        return "default"
    return ", ".join(
        f"{key}={json.dumps(value, sort_keys=True, default=str)}"
        for key, value in sorted(record.env_options.items())
    )


def k_grid(n_min: int) -> list[int]:
    """The k values of a curve: every k up to 10, then about 1.5x apart up to ``n_min`` (always
    included). A run with thousands of repeats per task would otherwise cost thousands of
    bootstraps for points a curve does not need."""
    ks = list(range(1, min(n_min, 10) + 1))
    k = 10
    while k < n_min:
        k = min(n_min, max(k + 1, round(k * 1.5)))
        ks.append(k)
    return ks


def row_key(record: EpisodeRecord) -> tuple[str, str, str, str, str]:
    """(agent, family, env id, preset, condition): one pass@k row; the seed names the task."""
    return (
        record.agent.name,
        record.family,
        record.env_id,
        record.preset if record.preset is not None else "-",
        record_condition(record),
    )


#: What pass@k keeps of one episode: a row (kept as DataFrame columns by ``RunPartials``), None
#: for an errored episode.
Outcome = dict[str, Any] | None
#: The columns of a pass@k row's key, in order.
KEY_COLUMNS = ["agent", "family", "env_id", "preset", "condition"]


def outcome(record: EpisodeRecord) -> Outcome:
    """The map side of pass@k (``exploreval.metrics.RunPartials``)."""
    if record.status != "ok":
        return None
    return {
        **dict(zip(KEY_COLUMNS, row_key(record), strict=True)),
        "seed": record.seed, "success": bool(record.success), "repeat": record.repeat,
        "run_id": record.run_id, "episode_id": record.episode_id,
    }  # fmt: skip


def pass_at_k_tables(
    records: Iterable[EpisodeRecord], *, n_boot: int = 2000, seed: int = 0
) -> dict[str, pd.DataFrame]:
    """``{"pass_at_k": table}`` (see the module docstring), or ``{}`` when no task was repeated."""
    return pass_at_k_from_outcomes([outcome(r) for r in records], n_boot=n_boot, seed=seed)


def pass_at_k_from_outcomes(
    outcomes: pd.DataFrame | Sequence[Outcome], *, n_boot: int = 2000, seed: int = 0
) -> dict[str, pd.DataFrame]:
    """The reduce side: ``pass_at_k_tables`` from the episodes' ``outcome`` rows."""
    frame = (
        outcomes
        if isinstance(outcomes, pd.DataFrame)
        else pd.DataFrame([o for o in outcomes if o is not None])
    )
    if frame.empty:
        return {}
    solved: dict[tuple[str, str, str, str, str], tuple[np.ndarray, np.ndarray]] = {}
    #: per row: its first unsolved episode by seed and repeat, else its first (the report's link)
    example: dict[tuple[str, str, str, str, str], tuple[str, str, bool]] = {}
    for key, part in frame.groupby(KEY_COLUMNS, sort=True):
        per_task = part.groupby("seed", sort=True)["success"].agg(["size", "sum"])
        solved[key] = (  # type: ignore[index]
            per_task["size"].to_numpy(np.int64),
            per_task["sum"].to_numpy(np.int64),
        )
        first = part.sort_values(["success", "seed", "repeat"], kind="stable").iloc[0]
        example[key] = (str(first["run_id"]), str(first["episode_id"]), bool(first["success"]))  # type: ignore[index]
    frames = []
    for key in sorted(solved):
        n, c = solved[key]
        if n.max() < 2:
            continue
        table = at_k_table({"pass": c}, n, k_grid(int(n.min())), n_boot=n_boot, seed=seed)
        agent, family, env_id, preset, condition = key
        table = table.drop(columns=["metric"])
        table = table.assign(
            agent=agent,
            family=family,
            env_id=env_id,
            preset=preset,
            condition=condition,
            n_attempts=int(n.sum()),
            attempts_min=int(n.min()),
            attempts_max=int(n.max()),
            example_run_id=example[key][0],
            example_episode_id=example[key][1],
            example_solved=example[key][2],
        )
        frames.append(table[[*COLUMNS, *EXAMPLE_COLUMNS]])
    if not frames:
        return {}
    return {"pass_at_k": pd.concat(frames, ignore_index=True)}
