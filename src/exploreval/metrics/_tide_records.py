"""TIDE on stored episode records: adapters, the per-episode row and the run-level tables.

Everything here is a pure function of ``EpisodeRecord``s; nothing re-runs an env or a model.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from exploreval.core import EpisodeRecord, canonical_json
from exploreval.metrics._hooks import registered_progress, registered_state_identity
from exploreval.metrics._memo import memo
from exploreval.metrics._tide_auv import (
    BootstrapCI,
    bootstrap_mean_ci,
    paired_difference_ci,
    progress_curve,
    success_curve,
    task_auv,
    task_progress_auv,
)
from exploreval.metrics._tide_loops import LoopStats, Trajectory, loop_stats
from exploreval.metrics._tide_memory import RecallResult, recall_distances
from exploreval.metrics._tide_state import DEFAULT_IDENTITY, StateIdentity
from exploreval.metrics._tide_tmax import record_budget, resolve_t_max

TMaxOverride = int | Mapping[str, int] | None


# -- state identity per suite -------------------------------------------------------------------
def state_identity_for(record: EpisodeRecord) -> StateIdentity:
    """The suite's registered state identity for this record, else exact text."""
    return registered_state_identity(record) or DEFAULT_IDENTITY


# -- adapters -----------------------------------------------------------------------------------
def solved_at(record: EpisodeRecord) -> int | None:
    """Turn (1-based action count) at which the task was solved, or None.

    The first step whose info says ``success`` is the solving turn; a successful record without such
    a step (imports that only know the outcome) is solved at its last turn; a record with no step
    at all is never solved (nothing was done: P_0 = 0).
    """
    for turn, step in enumerate(record.steps, start=1):
        if step.info.get("success") is True:
            return turn
    if record.success and record.steps:
        return len(record.steps)
    return None


def progress_trace(record: EpisodeRecord) -> list[float] | None:
    """Progress after each step (last value carried forward), or None if never reported.

    A suite may register its own notion (``register_progress``): the bandit's is the expected-reward
    efficiency of the pulls, since its env's ``progress`` is the elapsed share of the horizon,
    identical for every agent (docs/tide.md: what AUV means for a bandit). Computed once per record
    object (the row, the run tables and the report all ask)."""
    return memo(record, "tide_progress", None, lambda: _progress_trace(record))


def _progress_trace(record: EpisodeRecord) -> list[float] | None:
    """Progress after each step (last value carried forward), or None if never reported.

    A suite may register its own notion (``register_progress``): the bandit's is the expected-reward
    efficiency of the pulls, since its env's ``progress`` is the elapsed share of the horizon,
    identical for every agent (docs/tide.md: what AUV means for a bandit).
    """
    hook = registered_progress(record)
    if hook is not None:
        custom = hook(record)
        if custom is not None:
            return custom
    values: list[float] = []
    current = 0.0
    reported = False
    for step in record.steps:
        value = step.info.get("progress")
        if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
            current = float(value)
            reported = True
        values.append(current)
    return values if reported else None


def progress_or_success(record: EpisodeRecord) -> list[float]:
    """The progress trace, or for episodes that report none, 0 before the solving turn and 1 from it
    (so a condition where only some episodes report progress still has a progress curve)."""
    trace = progress_trace(record)
    if trace is not None:
        return trace
    turn = solved_at(record)
    n = len(record.steps)
    if turn is None:
        return [0.0] * n
    return [0.0] * max(turn - 1, 0) + [1.0] * max(n - turn + 1, 1)


def condition_progress(records: Sequence[EpisodeRecord]) -> list[list[float]] | None:
    """Progress traces of a condition, or None when no episode of it reports progress."""
    if all(progress_trace(r) is None for r in records):
        return None
    return [progress_or_success(r) for r in records]


def record_trajectory(record: EpisodeRecord) -> Trajectory:
    """(observation before, action) pairs, and the observation after the last action: the
    record's ``final_observation`` (native runs), else what an importer stored on the last step."""
    steps = [(s.observation, s.action) for s in record.steps]
    final = record.final_observation
    if final is None and record.steps:
        final = record.steps[-1].info.get("observation_after")
    return Trajectory(steps, final if isinstance(final, str) else None)


def observations_recorded(record: EpisodeRecord) -> bool:
    """False when an importer had actions but no observations (Loop Ratio is then undefined)."""
    return all(s.info.get("observation_recorded", True) is not False for s in record.steps)


def _record_loop_pass(
    record: EpisodeRecord, identity: StateIdentity | None
) -> tuple[list[bool], LoopStats]:
    """One loop detection per record and identity, shared by rows, tables and figures."""
    chosen = identity or state_identity_for(record)

    def compute() -> tuple[list[bool], LoopStats]:
        mask, stats = loop_stats(record_trajectory(record), identity=chosen)
        return [bool(v) for v in mask], stats

    return memo(record, "tide_loops", chosen, compute)


def record_loops(record: EpisodeRecord, identity: StateIdentity | None = None) -> LoopStats | None:
    if not observations_recorded(record):
        return None
    return _record_loop_pass(record, identity)[1]


def record_loop_mask(record: EpisodeRecord, identity: StateIdentity | None = None) -> list[bool]:
    return list(_record_loop_pass(record, identity)[0])


def record_recall(record: EpisodeRecord) -> RecallResult:
    return memo(record, "tide_recall", None, lambda: _record_recall(record))


def _record_recall(record: EpisodeRecord) -> RecallResult:
    seen: list[Any] = [record.reset_info.get("entities_seen")]
    seen += [s.info.get("entities_seen") for s in record.steps]
    acted = [s.info.get("entities_acted") for s in record.steps]
    truth = record.ground_truth if isinstance(record.ground_truth, dict) else {}
    relevant = truth.get("task_entities")
    return recall_distances(seen, acted, relevant if isinstance(relevant, list) else None)


def history_of(record: EpisodeRecord) -> str:
    """History policy of an LLM agent ('' for scripted agents and imports)."""
    config = record.agent.config
    identity = config.get("identity")
    if isinstance(identity, dict) and isinstance(identity.get("history"), str):
        return str(identity["history"])
    harness = config.get("harness")
    if isinstance(harness, dict) and isinstance(harness.get("history"), str):
        return str(harness["history"])
    return ""


def window_size(history: str) -> float | None:
    """full -> inf, none -> 0, window:K -> K; other policies (summary, '') -> None."""
    if history == "full":
        return math.inf
    if history == "none":
        return 0.0
    if history.startswith("window:") and history[7:].isdigit():
        return float(history[7:])
    return None


def agent_base(record: EpisodeRecord) -> tuple[str, str]:
    """(label, key) of the agent without its history policy: conditions that differ only in history
    share it."""
    config = record.agent.config
    identity = config.get("identity")
    if isinstance(identity, dict):
        rest = {k: v for k, v in identity.items() if k != "history"}
        label = (
            f"{identity.get('model')}/{identity.get('harness')}"
            if identity.get("kind") == "llm"
            else record.agent.name
        )
        return label, canonical_json(rest)
    history = history_of(record)
    name = record.agent.name
    if history and name.endswith("/" + history):
        name = name[: -len(history) - 1]
    return name, canonical_json({"name": name, "kind": record.agent.kind})


def task_of(record: EpisodeRecord) -> str:
    """What makes two episodes 'the same task' (across conditions and across repeats)."""
    task = record.reset_info.get("task_id")
    if isinstance(task, str | int):
        return str(task)
    return f"{record.preset}|{record.seed}"


def task_key(record: EpisodeRecord) -> str:
    """One attempt at a task: the task and the repeat number."""
    return f"{task_of(record)}#{record.repeat}"


def views_of(record: EpisodeRecord) -> list[EpisodeRecord]:
    """``record.task_views()``, the same view objects every time for one record object, so the
    per-record memo (loops, recall) computed on a view in scoring is reused by the run tables and
    the report (a multi-task or stored-``tasks`` record otherwise gets fresh copies each call)."""
    if not record.tasks and all(step.phase == "task" for step in record.steps):
        return [record]  # its own view (never memoised: the memo must not keep it alive)
    return memo(record, "task_views", None, record.task_views)


#: Why an episode is kept out of TIDE (reset_info flag set by an importer).
NO_AGENT_STEPS = "no agent steps visible"


def tide_excluded(record: EpisodeRecord) -> str | None:
    """Why TIDE must not count this episode, or None. An importer sets
    ``reset_info["agent_steps_visible"] = False`` when the only step it could see is an installed
    agent's launch (the whole agent ran inside one keystroke, e.g. mini-swe-agent under
    Terminal-Bench): a resolved trial would otherwise be "solved at turn 1" with the largest AUV."""
    if record.reset_info.get("agent_steps_visible") is False:
        return NO_AGENT_STEPS
    return None


# -- per-episode row ------------------------------------------------------------------------------
def tide_episode_metrics(record: EpisodeRecord) -> dict[str, Any]:
    """TIDE columns of one results-table row (registered for every family).

    A multi-task episode is several trajectories (one per task, evaluation phases left out): its
    row holds the mean AUV over its tasks and the loop statistics pooled over them.
    """
    views = views_of(record)
    excluded = tide_excluded(record)
    if excluded is not None:
        return {
            "tide_t_max": None,
            "tide_tasks": len(views),
            "tide_solved_at": None,
            "tide_auv": None,
            "tide_progress_auv": None,
            "tide_loop_steps": None,
            "tide_loop_ratio": None,
            "tide_cycles": None,
            "tide_recall_distance": None,
            "tide_recall_events": 0,
            "tide_excluded": excluded,
        }
    t_max, source = resolve_t_max(record.env_id, views)
    known = source != "longest episode"
    turns = [solved_at(v) for v in views]
    traces = [progress_trace(v) for v in views]
    loops = [record_loops(v) for v in views]
    recalls = [record_recall(v) for v in views]
    events = [e for r in recalls for e in r.events]
    known_loops = [stats for stats in loops if stats is not None]
    loop_total = sum(stats.steps for stats in known_loops)
    auvs = task_auv(turns, t_max)
    progress_known = known and all(trace is not None for trace in traces)
    return {
        "tide_t_max": t_max if known else None,
        "tide_tasks": len(views),
        "tide_solved_at": turns[0] if len(views) == 1 else None,
        "tide_auv": float(np.mean(auvs)) if known and views else None,
        "tide_progress_auv": float(np.mean(task_progress_auv(traces, t_max)))  # type: ignore[arg-type]
        if (progress_known and views)
        else None,
        "tide_loop_steps": sum(stats.loop_steps for stats in known_loops) if known_loops else None,
        "tide_loop_ratio": (
            sum(stats.loop_steps for stats in known_loops) / loop_total if loop_total else 0.0
        )
        if known_loops
        else None,
        "tide_cycles": sum(stats.cycles for stats in known_loops) if known_loops else None,
        "tide_recall_distance": float(np.mean([e.distance for e in events])) if events else None,
        "tide_recall_events": len(events),
    }


# -- run-level tables -------------------------------------------------------------------------------
@dataclass
class Condition:
    """Records of one env x preset x condition x agent (x history) cell. ``condition`` is the
    env-options label (``exploreval.metrics.condition_label``; ``-`` without options): episodes
    of different env options are never pooled."""

    env_id: str
    preset: str
    agent: str
    base_label: str
    base_key: str
    history: str
    records: list[EpisodeRecord]
    condition: str = "-"


def group_conditions(records: Sequence[EpisodeRecord]) -> list[Condition]:
    from exploreval.metrics._condition import condition_label

    groups: dict[tuple[str, str, str, str], Condition] = {}
    for record in records:
        if record.status != "ok":
            continue
        preset = record.preset if record.preset is not None else "-"
        label, key = agent_base(record)
        history = history_of(record)
        condition = condition_label(record)
        cell = (record.env_id, preset, condition, record.agent.name)
        if cell not in groups:
            groups[cell] = Condition(
                record.env_id, preset, record.agent.name, label, key, history, [], condition
            )
        groups[cell].records.append(record)
    return sorted(groups.values(), key=lambda c: (c.env_id, c.preset, c.condition, c.agent))


def env_t_max(
    records: Sequence[EpisodeRecord], override: TMaxOverride = None
) -> dict[str, tuple[int, str]]:
    """One t_max per env id over all its records (so every agent's AUV shares a window)."""
    by_env: dict[str, list[EpisodeRecord]] = defaultdict(list)
    for record in records:
        by_env[record.env_id].append(record)
    return {env: resolve_t_max(env, recs, override) for env, recs in by_env.items()}


#: Window sources that are one fixed number per environment (the paper's table, a registration,
#: an override); the others are per episode ("episode budget") or per env x preset ("longest
#: episode").
FIXED_SOURCES = frozenset({"override", "EXPLOREVAL_TIDE_T_MAX", "registered", "paper"})


class Windows:
    """t_max of every record, so that the run tables and the per-episode ``tide_auv`` agree.

    * A fixed window (override, ``EXPLOREVAL_TIDE_T_MAX``, ``register_t_max``, the paper's table)
      is the same for every episode of the environment, as in the paper.
    * Suites the paper does not cover use **each episode's own step budget** (TIDE's evaluation
      horizon of that task): a GridDAG map's B = 3 x traversable cells, a bandit's horizon, the
      runner's step cap. A condition's AUV is then the mean of its episodes' Z^(i) (Eq. 18), each
      over its own window, which is exactly the mean of the per-episode ``tide_auv`` column, and
      never changes with which other presets or agents are in the run.
    * No budget known: the longest episode of the env x preset.
    """

    def __init__(self, records: Sequence[EpisodeRecord], override: TMaxOverride = None) -> None:
        groups: dict[tuple[str, str], list[EpisodeRecord]] = defaultdict(list)
        for record in records:
            groups[(record.env_id, _preset(record))].append(record)
        self._group = {key: resolve_t_max(key[0], recs, override) for key, recs in groups.items()}
        self._own: dict[int, int] = {}
        for record in records:
            t_max, source = self._group[(record.env_id, _preset(record))]
            if source == "episode budget":
                own = record_budget(record)
                self._own[id(record)] = own if own is not None else t_max
        self._records = records  # keeps the ids above valid

    def of(self, record: EpisodeRecord) -> int:
        t_max, _ = self._group[(record.env_id, _preset(record))]
        return self._own.get(id(record), t_max)

    def source(self, record: EpisodeRecord) -> str:
        return self._group[(record.env_id, _preset(record))][1]

    def of_all(self, records: Sequence[EpisodeRecord]) -> list[int]:
        return [self.of(r) for r in records]


def _preset(record: EpisodeRecord) -> str:
    return record.preset if record.preset is not None else "-"


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


def summary_table(
    records: Sequence[EpisodeRecord],
    override: TMaxOverride = None,
    identity: StateIdentity | None = None,
) -> pd.DataFrame:
    """Per env x preset x agent: SR, AUV (+ 95% bootstrap CI), progress AUV, LR, recall distance.

    ``t_max`` is the largest window of the condition and ``t_max_min`` the smallest (they differ
    when episodes have their own budgets, see ``Windows``)."""
    windows = Windows(records, override)
    rows: list[dict[str, Any]] = []
    for cond in group_conditions(records):
        t_maxes = windows.of_all(cond.records)
        source = windows.source(cond.records[0])
        turns = [solved_at(r) for r in cond.records]
        scores = scores_with_windows(turns, t_maxes)
        ci = bootstrap_mean_ci(scores, groups=[task_of(r) for r in cond.records])
        traces = condition_progress(cond.records)
        recalls = [d for r in cond.records for d in (e.distance for e in record_recall(r).events)]
        episode_loops = [record_loops(r, identity) for r in cond.records]
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
                "progress_auv": float(np.mean(progress_scores_with_windows(traces, t_maxes)))
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
    return pd.DataFrame(rows)


def action_verb(action: str) -> str:
    """First word of an action (``click``, ``ls``, ``move``...), lower-cased; '' when empty."""
    parts = action.strip().split(maxsplit=1)
    if not parts:
        return ""
    return parts[0].split("(", 1)[0].lower()


def loop_actions_table(
    records: Sequence[EpisodeRecord], identity: StateIdentity | None = None
) -> pd.DataFrame:
    """Which kinds of action the loop steps are (Table 3's Click Ratio, for any action verb)."""
    rows: list[dict[str, Any]] = []
    for cond in group_conditions(records):
        counts: dict[str, int] = defaultdict(int)
        for record in cond.records:
            if not observations_recorded(record):
                continue
            for step, looped in zip(record.steps, record_loop_mask(record, identity), strict=True):
                if looped:
                    counts[action_verb(step.action)] += 1
        total = sum(counts.values())
        for verb, count in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
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
    return pd.DataFrame(rows)


#: Points of a curve drawn against the fraction of each episode's own budget.
FRACTION_POINTS = 101


def _fraction_curves(
    turns: Sequence[int | None], t_maxes: Sequence[int], traces: list[list[float]] | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """P(u) on u = t / t_max in [0, 1] when episodes have different windows: the mean of the
    per-task trapezoid curves clip(u * t_max - (s - 1), 0, 1), whose area is exactly the AUV."""
    u = np.linspace(0.0, 1.0, FRACTION_POINTS)
    windows = np.asarray(t_maxes, dtype=np.float64)[:, None]
    solved = np.array([t if t is not None else np.inf for t in turns], dtype=np.float64)[:, None]
    success = np.clip(u[None, :] * windows - (solved - 1.0), 0.0, 1.0).mean(axis=0)
    if traces is None:
        return u, success, None
    rows = []
    for trace, window in zip(traces, t_maxes, strict=True):
        values = np.clip(np.asarray(trace, dtype=np.float64)[:window], 0.0, 1.0)
        points = np.concatenate([[0.0], values]) if values.size else np.zeros(1)
        turns_axis = np.arange(points.size, dtype=np.float64)
        rows.append(np.interp(u * window, turns_axis, points))  # carried forward past the end
    return u, success, np.mean(rows, axis=0)


def curves_table(records: Sequence[EpisodeRecord], override: TMaxOverride = None) -> pd.DataFrame:
    """Long table of cumulative success curves P_t (and progress curves where reported).

    ``x`` is what a figure plots them against: the turn t (``x_unit = "turn"``) when every episode
    of the condition has the same window, else the fraction of each episode's own budget
    (``x_unit = "budget fraction"``, 101 points; see ``_fraction_curves``)."""
    windows = Windows(records, override)
    rows: list[dict[str, Any]] = []
    for cond in group_conditions(records):
        t_maxes = windows.of_all(cond.records)
        turns = [solved_at(r) for r in cond.records]
        traces = condition_progress(cond.records)
        base = {
            "env_id": cond.env_id,
            "preset": cond.preset,
            "condition": cond.condition,
            "agent": cond.agent,
        }
        if len(set(t_maxes)) == 1:
            t_max = t_maxes[0]
            curve = success_curve(turns, t_max)
            progress = progress_curve(traces, t_max) if traces is not None else None
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
    return pd.DataFrame(rows)


def _scores_by_task(
    records: Sequence[EpisodeRecord], t_max: int | Sequence[int]
) -> dict[str, float]:
    """Per-task AUV; the episodes of one task (repeats, or attempts an import does not number) are
    averaged, so none is dropped and the bootstrap resamples tasks, not correlated attempts.
    ``t_max``: one window, or one per record."""
    turns = [solved_at(r) for r in records]
    windows = [t_max] * len(records) if isinstance(t_max, int) else list(t_max)
    scores = scores_with_windows(turns, windows)
    by_task: dict[str, list[float]] = defaultdict(list)
    for record, score in zip(records, scores, strict=True):
        by_task[task_of(record)].append(float(score))
    return {key: float(np.mean(values)) for key, values in by_task.items()}


def memory_index_row(
    with_records: Sequence[EpisodeRecord],
    without_records: Sequence[EpisodeRecord],
    t_max: int | Windows,
    *,
    n_boot: int = 2000,
    seed: int = 0,
) -> dict[str, Any]:
    """MI = AUV(with memory) - AUV(without memory), paired over common tasks when there are any.
    ``t_max``: one window for every episode, or the ``Windows`` of the run."""
    if isinstance(t_max, Windows):
        a = _scores_by_task(with_records, t_max.of_all(with_records))
        b = _scores_by_task(without_records, t_max.of_all(without_records))
    else:
        a = _scores_by_task(with_records, t_max)
        b = _scores_by_task(without_records, t_max)
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


def memory_table(records: Sequence[EpisodeRecord], override: TMaxOverride = None) -> pd.DataFrame:
    """Memory Index within a run: agents identical except history ``full`` vs ``none``."""
    windows = Windows(records, override)
    cells: dict[tuple[str, str, str, str], dict[str, Condition]] = defaultdict(dict)
    for cond in group_conditions(records):
        cells[(cond.env_id, cond.preset, cond.condition, cond.base_key)][cond.history] = cond
    rows: list[dict[str, Any]] = []
    for (env_id, preset, condition, _), by_history in sorted(cells.items()):
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
    return pd.DataFrame(rows)


def window_table(records: Sequence[EpisodeRecord], override: TMaxOverride = None) -> pd.DataFrame:
    """AUV against the history window size (none = 0, window:K = K, full = inf): Figure 5."""
    windows = Windows(records, override)
    rows: list[dict[str, Any]] = []
    for cond in group_conditions(records):
        size = window_size(cond.history)
        if size is None:
            continue
        scores = scores_with_windows(
            [solved_at(r) for r in cond.records], windows.of_all(cond.records)
        )
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
    frame = pd.DataFrame(rows)
    if frame.empty:
        return frame
    # Only agents with at least two window settings make a curve.
    counts = frame.groupby(["env_id", "preset", "agent"])["window"].transform("nunique")
    return frame[counts >= 2].sort_values(["env_id", "preset", "agent", "window"])


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
    """All TIDE run tables (registered as run metrics for every family)."""
    # Each task of a multi-task episode is one trajectory; evaluation phases are left out.
    ok = [
        view
        for r in records
        if r.status == "ok" and tide_excluded(r) is None
        for view in views_of(r)
    ]
    if not ok:
        return {}
    tables = {
        "tide_summary": summary_table(ok, override, identity),
        "tide_curves": curves_table(ok, override),
    }
    loop_actions = loop_actions_table(ok, identity)
    if not loop_actions.empty:
        tables["tide_loop_actions"] = loop_actions
    memory = memory_table(ok, override)
    if not memory.empty:
        tables["tide_memory"] = memory
    window = window_table(ok, override)
    if not window.empty:
        tables["tide_window"] = window
    points = points_table(records, override)
    if not points.empty:
        tables["tide_points"] = points
    return tables


def points_table(records: Sequence[EpisodeRecord], override: TMaxOverride = None) -> pd.DataFrame:
    """One row per task trajectory with steps (each task of a multi-task episode, evaluation
    phases left out, as every TIDE table counts them): its Loop Ratio and AUV, for the report's
    LR-vs-AUV scatter (the paper's Figure 6). Stored with the run tables, and computed on the
    same task views as the per-episode columns (their loop detection is reused), so that a report
    does not detect every episode's loops again. ``family`` lets a report keep its families."""
    from exploreval.metrics._condition import condition_label

    kept = [
        view
        for r in records
        if r.status == "ok" and tide_excluded(r) is None
        for view in views_of(r)
    ]
    windows = Windows(kept, override)
    points: list[dict[str, Any]] = []
    for record in kept:
        stats = record_loops(record)
        if stats is None or stats.steps == 0:
            continue
        points.append(
            {
                "family": record.family,
                "env_id": record.env_id,
                "preset": _preset(record),
                "condition": condition_label(record),
                "agent": record.agent.name,
                "task": task_key(record),
                "loop_ratio": stats.ratio,
                "auv": float(task_auv([solved_at(record)], windows.of(record))[0]),
            }
        )
    return pd.DataFrame(points)


def memory_index_between(
    with_records: Sequence[EpisodeRecord],
    without_records: Sequence[EpisodeRecord],
    override: TMaxOverride = None,
) -> pd.DataFrame:
    """Memory Index across two runs (the 'with memory' run and the 'without memory' run).

    Agents are matched by their identity without the history policy; when an env has exactly one
    agent on each side they are matched regardless (two separately configured runs).
    """
    windows = Windows([*with_records, *without_records], override)
    left = group_conditions(with_records)
    right = group_conditions(without_records)
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
    return pd.DataFrame(rows)
