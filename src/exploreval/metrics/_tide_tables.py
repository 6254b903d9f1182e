"""TIDE's run-level tables, from the trajectories' summaries (``._tide_records``): summary,
curves, loop actions, Memory Index, windows, points, recall lags, entropy, memory summary.

Everything here is a pure function of the summaries; nothing re-runs an env or a model.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from exploreval.core import EpisodeRecord
from exploreval.metrics._tide_auv import (
    BootstrapCI,
    bootstrap_mean_ci,
    one_task_auv,
    paired_difference_ci,
    progress_curve,
    success_curve,
    task_auv,
    task_progress_auv,
)
from exploreval.metrics._tide_loops import LoopStats
from exploreval.metrics._tide_records import (
    Condition,
    TMaxOverride,
    TrajectoryLike,
    TrajectorySummary,
    Windows,
    as_summaries,
    group_conditions,
    group_summaries,
    summarise_trajectory,
    table_frame,
    tide_excluded,
    trajectory_summaries,
    views_of,
    window_size,
)
from exploreval.metrics._tide_state import StateIdentity

if TYPE_CHECKING:
    import pandas as pd


class _Trajectories:
    """A run's trajectory summaries with what every TIDE table derives from them (each
    trajectory's window, the conditions and their windows), derived once: a score's reduce
    draws six tables from 10^5 summaries, and each used to derive all of it again."""

    def __init__(
        self,
        records: Sequence[TrajectoryLike],
        override: TMaxOverride = None,
        identity: StateIdentity | None = None,
    ) -> None:
        self.items = as_summaries(records, identity)
        self.windows = Windows(self.items, override)
        self.conditions = group_summaries(self.items)
        self._t_maxes = [self.windows.of_all(cond.records) for cond in self.conditions]

    def with_windows(self) -> Iterator[tuple[Condition, list[int]]]:
        """Each condition with its trajectories' windows (in the condition's order)."""
        return zip(self.conditions, self._t_maxes, strict=True)


def scores_with_windows(turns: Sequence[int | None], t_maxes: Sequence[int]) -> np.ndarray:
    """Per-task Z^(i) (Eq. 18) with a window per task (``task_auv`` when they are all equal)."""
    out = np.zeros(len(turns), dtype=np.float64)
    for window in sorted(set(t_maxes)):
        index = [i for i, t in enumerate(t_maxes) if t == window]
        out[index] = task_auv([turns[i] for i in index], window)
    return out


def progress_scores_with_windows(
    traces: Sequence[Sequence[float]], t_maxes: Sequence[int]
) -> np.ndarray:
    """Per-task progress AUV, each over its own window."""
    out = np.zeros(len(traces), dtype=np.float64)
    for window in sorted(set(t_maxes)):
        index = [i for i, t in enumerate(t_maxes) if t == window]
        out[index] = task_progress_auv([traces[i] for i in index], window)
    return out


def _pooled_loop_ratio(stats: Sequence[LoopStats | None]) -> float | None:
    """Eq. 4 over a condition's episodes (those without observations left out)."""
    known = [s for s in stats if s is not None]
    total = sum(s.steps for s in known)
    return sum(s.loop_steps for s in known) / total if total else None


def _condition_progress(items: Sequence[TrajectorySummary]) -> list[np.ndarray] | None:
    """Progress traces of a condition, or None when no episode of it reports progress."""
    if all(s.progress is None for s in items):
        return None
    return [s.progress_or_success() for s in items]


def summary_table(
    records: Sequence[TrajectoryLike],
    override: TMaxOverride = None,
    identity: StateIdentity | None = None,
) -> pd.DataFrame:
    """Per env x preset x agent: SR, AUV (+ 95% bootstrap CI), progress AUV, LR, recall distance.

    ``t_max`` is the largest window of the condition and ``t_max_min`` the smallest (they differ
    when episodes have their own budgets, see ``Windows``)."""
    return _summary_table(_Trajectories(records, override, identity))


def _summary_table(run: _Trajectories) -> pd.DataFrame:
    rows: list[dict[str, Any]] = []
    for cond, t_maxes in run.with_windows():
        source = run.windows.source(cond.records[0])
        turns = [s.solved for s in cond.records]
        scores = scores_with_windows(turns, t_maxes)
        ci = bootstrap_mean_ci(scores, groups=[s.task for s in cond.records])
        traces = _condition_progress(cond.records)
        recalls = [d for s in cond.records for d in s.recalls]
        episode_loops = [s.loops for s in cond.records]
        looped = [None if stats is None else stats.loop_steps > 0 for stats in episode_loops]
        with_loops = [float(z) for z, flag in zip(scores, looped, strict=True) if flag is True]
        without_loops = [float(z) for z, flag in zip(scores, looped, strict=True) if flag is False]
        rows.append(
            {
                "env_id": cond.env_id,
                "preset": cond.preset,
                "condition": cond.condition,
                "agent": cond.agent,
                "history": cond.history,
                "episodes": len(cond.records),
                "t_max": max(t_maxes),
                "t_max_min": min(t_maxes),
                "t_max_source": source,
                "success_rate": float(np.mean([t is not None for t in turns])),
                "sr_at_t_max": float(
                    np.mean([t is not None and t <= w for t, w in zip(turns, t_maxes, strict=True)])
                ),
                "auv": ci.estimate,
                "auv_ci_low": ci.low,
                "auv_ci_high": ci.high,
                "progress_auv": float(np.mean(progress_scores_with_windows(traces, t_maxes)))  # type: ignore[arg-type]
                if traces is not None
                else None,
                "loop_ratio": _pooled_loop_ratio(episode_loops),
                "recall_distance": float(np.mean(recalls)) if recalls else None,
                # Table 3: tasks split by the presence of a loop
                "tasks_with_loops": len(with_loops),
                "auv_tasks_with_loops": float(np.mean(with_loops)) if with_loops else None,
                "auv_tasks_without_loops": float(np.mean(without_loops)) if without_loops else None,
            }
        )
    return table_frame(rows)


def loop_actions_table(
    records: Sequence[TrajectoryLike], identity: StateIdentity | None = None
) -> pd.DataFrame:
    """Which kinds of action the loop steps are (Table 3's Click Ratio, for any action verb)."""
    return _loop_actions_table(group_summaries(as_summaries(records, identity)))


def _loop_actions_table(conditions: Sequence[Condition]) -> pd.DataFrame:
    rows: list[dict[str, Any]] = []
    for cond in conditions:
        counts: dict[str, int] = defaultdict(int)
        for item in cond.records:
            if item.loops is None:  # no observations recorded
                continue
            for verb, count in item.loop_verbs:
                counts[verb] += count
        total = sum(counts.values())
        for verb, count in sorted(counts.items(), key=lambda pair: (-pair[1], pair[0])):
            rows.append(
                {
                    "env_id": cond.env_id,
                    "preset": cond.preset,
                    "condition": cond.condition,
                    "agent": cond.agent,
                    "verb": verb,
                    "loop_steps": count,
                    "share": count / total,
                }
            )
    return table_frame(rows)


#: Points of a curve drawn against the fraction of each episode's own budget.
FRACTION_POINTS = 101


def _fraction_curves(
    turns: Sequence[int | None], t_maxes: Sequence[int], traces: Sequence[np.ndarray] | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """P(u) on u = t / t_max in [0, 1] when episodes have different windows: the mean of the
    per-task trapezoid curves clip(u * t_max - (s - 1), 0, 1), whose area is exactly the AUV."""
    u = np.linspace(0.0, 1.0, FRACTION_POINTS)
    windows = np.asarray(t_maxes, dtype=np.float64)[:, None]
    solved = np.array([t if t is not None else np.inf for t in turns], dtype=np.float64)[:, None]
    success = np.clip(u[None, :] * windows - (solved - 1.0), 0.0, 1.0).mean(axis=0)
    if traces is None:
        return u, success, None
    return u, success, _mean_progress_on_fractions(traces, t_maxes, u)


#: Trajectories interpolated at once by ``_mean_progress_on_fractions`` (bounds its arrays).
FRACTION_BLOCK = 8192


def _mean_progress_on_fractions(
    traces: Sequence[np.ndarray], t_maxes: Sequence[int], u: np.ndarray, block: int = FRACTION_BLOCK
) -> np.ndarray:
    """Mean over trajectories of ``np.interp(u * window, [0 .. L], [0, *clip(trace[:window])])``
    (progress carried forward past the end), ``block`` trajectories at a time instead of one
    ``np.interp`` each (10^5 calls in a large run's reduce). The same float operations in the
    same order as ``np.interp`` on unit-spaced knots and ``np.mean(rows, axis=0)``: equal to
    the bit (a property test holds it to the per-trajectory form)."""
    total: np.ndarray | None = None
    for start in range(0, len(traces), block):
        part = traces[start : start + block]
        windows = np.asarray(t_maxes[start : start + block], dtype=np.int64)
        clipped = [
            np.clip(np.asarray(trace, dtype=np.float64)[:window], 0.0, 1.0)
            for trace, window in zip(part, windows.tolist(), strict=True)
        ]
        lengths = np.fromiter((v.size for v in clipped), dtype=np.int64, count=len(clipped))
        # knots 0 .. L of each trajectory, its last value repeated after them
        points = np.zeros((len(clipped), int(lengths.max()) + 2), dtype=np.float64)
        for row, values in enumerate(clipped):
            points[row, 1 : values.size + 1] = values
            points[row, values.size + 1 :] = points[row, values.size]
        x = u[None, :] * windows.astype(np.float64)[:, None]
        last = lengths[:, None]
        knot = np.minimum(np.floor(x).astype(np.int64), last)
        left = np.take_along_axis(points, knot, axis=1)
        right = np.take_along_axis(points, knot + 1, axis=1)
        # np.interp: slope * (x - x_j) + y_j, the slope (y_j+1 - y_j) / 1; y_L from x_L on
        values = np.where(x >= last, left, (right - left) * (x - knot) + left)
        total = values if total is None else np.vstack([total[None, :], values])
        total = np.add.reduce(total, axis=0)
    assert total is not None
    return total / len(traces)


def curves_table(records: Sequence[TrajectoryLike], override: TMaxOverride = None) -> pd.DataFrame:
    """Long table of cumulative success curves P_t (and progress curves where reported).

    ``x`` is what a figure plots them against: the turn t (``x_unit = "turn"``) when every episode
    of the condition has the same window, else the fraction of each episode's own budget
    (``x_unit = "budget fraction"``, 101 points; see ``_fraction_curves``)."""
    return _curves_table(_Trajectories(records, override))


def _curves_table(run: _Trajectories) -> pd.DataFrame:
    rows: list[dict[str, Any]] = []
    for cond, t_maxes in run.with_windows():
        turns = [s.solved for s in cond.records]
        traces = _condition_progress(cond.records)
        base = {
            "env_id": cond.env_id,
            "preset": cond.preset,
            "condition": cond.condition,
            "agent": cond.agent,
        }
        if len(set(t_maxes)) == 1:
            t_max = t_maxes[0]
            curve = success_curve(turns, t_max)
            progress = progress_curve(traces, t_max) if traces is not None else None  # type: ignore[arg-type]
            for t, value in enumerate(curve):
                rows.append(
                    {
                        **base,
                        "t": t,
                        "x": float(t),
                        "x_unit": "turn",
                        "success": float(value),
                        "progress": float(progress[t]) if progress is not None else None,
                    }
                )
            continue
        u, success, progress_u = _fraction_curves(turns, t_maxes, traces)
        for index, value in enumerate(success):
            rows.append(
                {
                    **base,
                    "t": index,
                    "x": float(u[index]),
                    "x_unit": "budget fraction",
                    "success": float(value),
                    "progress": float(progress_u[index]) if progress_u is not None else None,
                }
            )
    return table_frame(rows)


def _scores_by_task(
    items: Sequence[TrajectorySummary], t_max: int | Sequence[int]
) -> dict[str, float]:
    """Per-task AUV; the episodes of one task (repeats, or attempts an import does not number) are
    averaged, so none is dropped and the bootstrap resamples tasks, not correlated attempts.
    ``t_max``: one window, or one per trajectory."""
    turns = [s.solved for s in items]
    windows = [t_max] * len(items) if isinstance(t_max, int) else list(t_max)
    scores = scores_with_windows(turns, windows)
    by_task: dict[str, list[float]] = defaultdict(list)
    for item, score in zip(items, scores, strict=True):
        by_task[item.task].append(float(score))
    return {key: float(np.mean(values)) for key, values in by_task.items()}


def memory_index_row(
    with_records: Sequence[TrajectoryLike],
    without_records: Sequence[TrajectoryLike],
    t_max: int | Windows,
    *,
    n_boot: int = 2000,
    seed: int = 0,
) -> dict[str, Any]:
    """MI = AUV(with memory) - AUV(without memory), paired over common tasks when there are any.
    ``t_max``: one window for every episode, or the ``Windows`` of the run."""
    left, right = as_summaries(with_records), as_summaries(without_records)
    if isinstance(t_max, Windows):
        a = _scores_by_task(left, t_max.of_all(left))
        b = _scores_by_task(right, t_max.of_all(right))
    else:
        a = _scores_by_task(left, t_max)
        b = _scores_by_task(right, t_max)
    common = sorted(set(a) & set(b))
    if common:
        ci: BootstrapCI = paired_difference_ci(
            [a[k] for k in common], [b[k] for k in common], n_boot=n_boot, seed=seed
        )
        auv_with = float(np.mean([a[k] for k in common]))
        auv_without = float(np.mean([b[k] for k in common]))
        paired, n = True, len(common)
    else:  # different task sets: unpaired difference of means, independent resamples
        ca = bootstrap_mean_ci(list(a.values()), n_boot=n_boot, seed=seed)
        cb = bootstrap_mean_ci(list(b.values()), n_boot=n_boot, seed=seed + 1)
        auv_with, auv_without = ca.estimate, cb.estimate
        rng = np.random.default_rng(seed)
        va, vb = np.array(list(a.values())), np.array(list(b.values()))
        diffs = va[rng.integers(0, va.size, (n_boot, va.size))].mean(axis=1) - vb[
            rng.integers(0, vb.size, (n_boot, vb.size))
        ].mean(axis=1)
        low, high = np.quantile(diffs, [0.025, 0.975])
        ci = BootstrapCI(
            auv_with - auv_without, float(low), float(high), min(va.size, vb.size), 0.95
        )
        paired, n = False, min(len(a), len(b))
    return {
        "auv_with": auv_with,
        "auv_without": auv_without,
        "mi": ci.estimate,
        "mi_ci_low": ci.low,
        "mi_ci_high": ci.high,
        "paired": paired,
        "tasks": n,
    }


def memory_table(records: Sequence[TrajectoryLike], override: TMaxOverride = None) -> pd.DataFrame:
    """Memory Index within a run: agents identical except history ``full`` vs ``none``."""
    return _memory_table(_Trajectories(records, override))


def _by_history(
    run: _Trajectories,
) -> list[tuple[tuple[str, str, str, str], dict[str, Condition]]]:
    """The conditions of each agent (env, preset, env options, model and harness), by history
    policy: what the Memory Index and the memory-summary table pair."""
    cells: dict[tuple[str, str, str, str], dict[str, Condition]] = defaultdict(dict)
    for cond in run.conditions:
        cells[(cond.env_id, cond.preset, cond.condition, cond.base_key)][cond.history] = cond
    return sorted(cells.items())


def _memory_table(run: _Trajectories) -> pd.DataFrame:
    windows = run.windows
    rows: list[dict[str, Any]] = []
    for (env_id, preset, condition, _), by_history in _by_history(run):
        if "full" not in by_history or "none" not in by_history:
            continue
        both = [*by_history["full"].records, *by_history["none"].records]
        row = memory_index_row(by_history["full"].records, by_history["none"].records, windows)
        rows.append(
            {
                "env_id": env_id,
                "preset": preset,
                "condition": condition,
                "agent": by_history["full"].base_label,
                "with": by_history["full"].agent,
                "without": by_history["none"].agent,
                "t_max": max(windows.of_all(both)),
                **row,
            }
        )
    return table_frame(rows)


def _summary_history_table(run: _Trajectories) -> pd.DataFrame:
    """Table 5: per agent (model and harness), AUV with the full history ("Naive") against AUV
    with a summary instead of the earlier turns (``model-summary``: written by the model, the
    paper's setting; ``summary``: the harness's structured summary), paired by task."""
    windows = run.windows
    rows: list[dict[str, Any]] = []
    for (env_id, preset, condition, _), by_history in _by_history(run):
        if "full" not in by_history:
            continue
        for kind in ("model-summary", "summary"):
            if kind not in by_history:
                continue
            row = memory_index_row(by_history[kind].records, by_history["full"].records, windows)
            rows.append({
                "env_id": env_id, "preset": preset, "condition": condition,
                "agent": by_history["full"].base_label, "summary": kind,
                "auv_naive": row["auv_without"], "auv_summary": row["auv_with"],
                "difference": row["mi"], "tasks": row["tasks"],
            })  # fmt: skip
    return table_frame(rows)


def window_table(records: Sequence[TrajectoryLike], override: TMaxOverride = None) -> pd.DataFrame:
    """AUV against the history window size (none = 0, window:K = K, full = inf): Figure 5."""
    return _window_table(_Trajectories(records, override))


def _window_table(run: _Trajectories) -> pd.DataFrame:
    rows: list[dict[str, Any]] = []
    for cond, t_maxes in run.with_windows():
        size = window_size(cond.history)
        if size is None:
            continue
        scores = scores_with_windows([s.solved for s in cond.records], t_maxes)
        rows.append(
            {
                "env_id": cond.env_id,
                "preset": cond.preset,
                # one curve per agent and env options
                "agent": cond.base_label
                + (f" [{cond.condition}]" if cond.condition != "-" else ""),
                "history": cond.history,
                "window": size,
                "auv": float(np.mean(scores)),
                "episodes": len(cond.records),
            }
        )
    frame = table_frame(rows)
    if frame.empty:
        return frame
    # Only agents with at least two window settings make a curve.
    counts = frame.groupby(["env_id", "preset", "agent"])["window"].transform("nunique")
    return frame[counts >= 2].sort_values(["env_id", "preset", "agent", "window"])


#: Columns of the Memory Index table after its keys, as the report and `exploreval tide` show them.
MEMORY_INDEX_COLUMNS = ("auv_with", "auv_without", "mi", "mi_ci_low", "mi_ci_high", "tasks")

#: Columns of the TIDE summary table, in the order the report and `exploreval tide` show them.
SUMMARY_COLUMNS = (
    "env_id",
    "preset",
    "condition",
    "agent",
    "episodes",
    "t_max",
    "success_rate",
    "auv",
    "auv_ci_low",
    "auv_ci_high",
    "progress_auv",
    "loop_ratio",
    "recall_distance",
)


def tide_run_tables(
    records: Sequence[EpisodeRecord],
    override: TMaxOverride = None,
    identity: StateIdentity | None = None,
) -> dict[str, pd.DataFrame]:
    """All TIDE run tables from records (each task of a multi-task episode is one trajectory;
    evaluation phases are left out). ``exploreval score`` computes the same tables from the
    records' ``trajectory_summaries`` (``tide_tables_from_summaries``) without holding them."""
    items = [
        summarise_trajectory(view, identity)
        for r in records
        if r.status == "ok" and tide_excluded(r) is None
        for view in views_of(r)
    ]
    return _tables(items, override)


def tide_tables_from_summaries(
    summaries: Sequence[Sequence[TrajectorySummary]], override: TMaxOverride = None
) -> dict[str, pd.DataFrame]:
    """The reduce side of TIDE's run metric: the tables from every episode's summaries."""
    return _tables([item for episode in summaries for item in episode], override)


def _tables(items: list[TrajectorySummary], override: TMaxOverride) -> dict[str, pd.DataFrame]:
    if not items:
        return {}
    run = _Trajectories(items, override)
    tables = {"tide_summary": _summary_table(run), "tide_curves": _curves_table(run)}
    for name, table in (
        ("tide_loop_actions", _loop_actions_table(run.conditions)),
        ("tide_memory", _memory_table(run)),
        ("tide_window", _window_table(run)),
        ("tide_points", _points_table(run.items, run.windows)),
        ("tide_recall_lags", recall_lags_table(run.items)),
        ("tide_entropy", entropy_table(run.conditions)),
        ("tide_summary_history", _summary_history_table(run)),
    ):
        if not table.empty:
            tables[name] = table
    return tables


def points_table(records: Iterable[TrajectoryLike], override: TMaxOverride = None) -> pd.DataFrame:
    """One row per task trajectory with steps (each task of a multi-task episode, evaluation
    phases left out, as every TIDE table counts them): its Loop Ratio and AUV, for the report's
    LR-vs-AUV scatter (the paper's Figure 6). Stored with the run tables, so that a report does
    not detect every episode's loops again. ``family`` lets a report keep its families. Records
    given are expanded into their task views (summaries are views already)."""
    items = [
        item
        for record in records
        for item in (
            [record] if isinstance(record, TrajectorySummary) else trajectory_summaries(record)
        )
    ]
    return _points_table(items, Windows(items, override))


def entropy_table(conditions: Sequence[Condition]) -> pd.DataFrame:
    """Figure 8: per condition, the mean token entropy of the agent's replies on loop steps and
    on the other steps (steps without a scored reply left out). Empty without logprobs."""
    rows: list[dict[str, Any]] = []
    for c in conditions:
        loop_sum = sum(r.entropy[0] for r in c.records)
        loop_n = sum(r.entropy[1] for r in c.records)
        other_sum = sum(r.entropy[2] for r in c.records)
        other_n = sum(r.entropy[3] for r in c.records)
        if loop_n + other_n == 0:
            continue
        rows.append({
            "family": c.records[0].family, "env_id": c.env_id, "preset": c.preset,
            "condition": c.condition, "agent": c.agent,
            "entropy_loop": loop_sum / loop_n if loop_n else None, "loop_steps": loop_n,
            "entropy_other": other_sum / other_n if other_n else None, "other_steps": other_n,
        })  # fmt: skip
    return table_frame(rows)


def recall_lags_table(items: Sequence[TrajectorySummary]) -> pd.DataFrame:
    """The distribution of memory recall lags (TIDE Appendix B.6, Figure 7): per env, preset,
    condition, agent and task outcome (``success``: the task was solved within its steps), how
    many recall events had each lag. Empty when no trajectory recorded a recall event."""
    counts: dict[tuple[str, str, str, str, str, str, int], int] = {}
    for item in items:
        if not item.recalls:
            continue
        outcome = "success" if item.solved is not None else "fail"
        for lag in item.recalls:
            key = (item.family, item.env_id, item.preset, item.condition, item.agent, outcome,
                   int(lag))  # fmt: skip
            counts[key] = counts.get(key, 0) + 1
    columns = ("family", "env_id", "preset", "condition", "agent", "outcome", "lag", "events")
    return table_frame(
        [dict(zip(columns, (*k, n), strict=True)) for k, n in sorted(counts.items())]
    )


def _points_table(items: Sequence[TrajectorySummary], windows: Windows) -> pd.DataFrame:
    points: list[dict[str, Any]] = []
    for item in items:
        stats = item.loops
        if stats is None or stats.steps == 0:
            continue
        points.append(
            {
                "family": item.family,
                "env_id": item.env_id,
                "preset": item.preset,
                "condition": item.condition,
                "agent": item.agent,
                "task": f"{item.task}#{item.repeat}",
                "loop_ratio": stats.ratio,
                "auv": one_task_auv(item.solved, windows.of(item)),
            }
        )
    return table_frame(points)


def memory_index_between(
    with_records: Sequence[TrajectoryLike],
    without_records: Sequence[TrajectoryLike],
    override: TMaxOverride = None,
) -> pd.DataFrame:
    """Memory Index across two runs (the 'with memory' run and the 'without memory' run).

    Agents are matched by their identity without the history policy; when an env has exactly one
    agent on each side they are matched regardless (two separately configured runs).
    """
    left_items, right_items = as_summaries(with_records), as_summaries(without_records)
    windows = Windows([*left_items, *right_items], override)
    left = group_conditions(left_items)
    right = group_conditions(right_items)
    rows: list[dict[str, Any]] = []
    for cond in left:
        cell = (cond.env_id, cond.preset, cond.condition)
        candidates = [r for r in right if (r.env_id, r.preset, r.condition) == cell]
        match = [r for r in candidates if r.base_key == cond.base_key]
        how = "identity"
        if (
            not match
            and len(candidates) == 1
            and sum(1 for c in left if (c.env_id, c.preset, c.condition) == cell) == 1
        ):
            match, how = candidates, "only agent"
        if len(match) != 1:
            continue
        t_max = max(windows.of_all([*cond.records, *match[0].records]))
        rows.append(
            {
                "env_id": cond.env_id,
                "preset": cond.preset,
                "agent": cond.base_label,
                "with": cond.agent,
                "without": match[0].agent,
                "matched_by": how,
                "t_max": t_max,
                **memory_index_row(cond.records, match[0].records, windows),
            }
        )
    return table_frame(rows)
