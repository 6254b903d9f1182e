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
from collections import defaultdict
from collections.abc import Sequence

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


#: What pass@k keeps of one episode: (row key, seed, solved, repeat, run id, episode id), None
#: for an errored episode.
Outcome = tuple[tuple[str, str, str, str, str], int, bool, int, str, str] | None


def outcome(record: EpisodeRecord) -> Outcome:
    """The map side of pass@k (``exploreval.metrics.RunPartials``)."""
    if record.status != "ok":
        return None
    return (
        row_key(record), record.seed, bool(record.success), record.repeat, record.run_id,
        record.episode_id,
    )  # fmt: skip


def pass_at_k_tables(
    records: Sequence[EpisodeRecord], *, n_boot: int = 2000, seed: int = 0
) -> dict[str, pd.DataFrame]:
    """``{"pass_at_k": table}`` (see the module docstring), or ``{}`` when no task was repeated."""
    return pass_at_k_from_outcomes([outcome(r) for r in records], n_boot=n_boot, seed=seed)


def pass_at_k_from_outcomes(
    outcomes: Sequence[Outcome], *, n_boot: int = 2000, seed: int = 0
) -> dict[str, pd.DataFrame]:
    """The reduce side: ``pass_at_k_tables`` from the episodes' ``outcome``s."""
    solved: dict[tuple[str, str, str, str, str], dict[int, list[bool]]] = defaultdict(
        lambda: defaultdict(list)
    )
    #: per row: its first unsolved episode by seed and repeat, else its first (the report's link)
    example: dict[tuple[str, str, str, str, str], tuple[tuple[bool, int, int], str, str]] = {}
    for item in outcomes:
        if item is not None:
            key, task_seed, success, repeat, run_id, episode_id = item
            solved[key][task_seed].append(success)
            rank = (success, task_seed, repeat)
            if key not in example or rank < example[key][0]:
                example[key] = (rank, run_id, episode_id)
    frames = []
    for key in sorted(solved):
        per_task = solved[key]
        n = np.array([len(per_task[s]) for s in sorted(per_task)], dtype=np.int64)
        if n.max() < 2:
            continue
        c = np.array([sum(per_task[s]) for s in sorted(per_task)], dtype=np.int64)
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
            example_run_id=example[key][1],
            example_episode_id=example[key][2],
            example_solved=example[key][0][0],
        )
        frames.append(table[[*COLUMNS, *EXAMPLE_COLUMNS]])
    if not frames:
        return {}
    return {"pass_at_k": pd.concat(frames, ignore_index=True)}
