"""TIDE on stored episode records: adapters, the per-episode row and the run-level tables.

Everything here is a pure function of ``EpisodeRecord``s; nothing re-runs an env or a model.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from exploreval.core import EpisodeRecord, content_key
from exploreval.metrics._hooks import registered_progress, registered_state_identity
from exploreval.metrics._memo import memo
from exploreval.metrics._tide_auv import (
    BootstrapCI,
    bootstrap_mean_ci,
    one_task_auv,
    one_task_progress_auv,
    paired_difference_ci,
    progress_curve,
    success_curve,
    task_auv,
    task_progress_auv,
)
from exploreval.metrics._tide_loops import LoopStats, Trajectory, loop_stats
from exploreval.metrics._tide_memory import RecallResult, recall_distances
from exploreval.metrics._tide_state import DEFAULT_IDENTITY, StateIdentity
from exploreval.metrics._tide_tmax import record_budget, resolve_t_max, resolve_t_max_from

if TYPE_CHECKING:  # pandas where tables are built: the viewer's step annotations import this
    import pandas as pd

TMaxOverride = int | Mapping[str, int] | None


def _frame(rows: Any) -> pd.DataFrame:
    """A run table; pandas is imported by the first table, not by the module (the viewer's step
    annotations import this module, and pandas is a third of a second of an episode's first
    page)."""
    import pandas as pd

    return pd.DataFrame(rows)


# -- state identity per suite -------------------------------------------------------------------
def state_identity_for(record: EpisodeRecord) -> StateIdentity:
    """The suite's registered state identity for this record, else exact text."""
    return registered_state_identity(record) or DEFAULT_IDENTITY


# -- adapters -----------------------------------------------------------------------------------
def solved_at(record: EpisodeRecord) -> int | None:
    """Turn (1-based action count) at which the task was solved, or None.

    The first step whose info says ``success`` is the solving turn; a successful record without such
    a step (imports that only know the outcome) is solved at its last turn; a record with no step
    at all is never solved (nothing was done: P_0 = 0). Once per record object (the row and
    the run tables both ask).
    """
    return memo(record, "tide_solved_at", None, lambda: _solved_at(record))


def _solved_at(record: EpisodeRecord) -> int | None:
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
    return memo(
        record,
        "tide_observed",
        None,
        lambda: all(s.info.get("observation_recorded", True) is not False for s in record.steps),
    )


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
        return label, content_key(rest)
    history = history_of(record)
    name = record.agent.name
    if history and name.endswith("/" + history):
        name = name[: -len(history) - 1]
    return name, content_key({"name": name, "kind": record.agent.kind})


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
    auvs = [one_task_auv(turns[0], t_max)] if len(turns) == 1 else task_auv(turns, t_max)
    progress_known = known and all(trace is not None for trace in traces)
    return {
        "tide_t_max": t_max if known else None,
        "tide_tasks": len(views),
        "tide_solved_at": turns[0] if len(views) == 1 else None,
        "tide_auv": _mean(auvs) if known and views else None,
        "tide_progress_auv": _progress_auv(traces, t_max) if (progress_known and views) else None,
        "tide_loop_steps": sum(stats.loop_steps for stats in known_loops) if known_loops else None,
        "tide_loop_ratio": (
            sum(stats.loop_steps for stats in known_loops) / loop_total if loop_total else 0.0
        )
        if known_loops
        else None,
        "tide_cycles": sum(stats.cycles for stats in known_loops) if known_loops else None,
        # integers: their sum is exact, so this is numpy's mean to the bit, without numpy's cost
        "tide_recall_distance": sum(e.distance for e in events) / len(events) if events else None,
        "tide_recall_events": len(events),
    }


def _progress_auv(traces: Sequence[Any], t_max: int) -> float:
    """Mean per-task progress AUV (a single task's without numpy: most episodes are one)."""
    if len(traces) == 1:
        return one_task_progress_auv(traces[0], t_max)
    return _mean(task_progress_auv(traces, t_max))


def _mean(values: Any) -> float:
    """``np.mean`` (a single task's value as it is: most episodes are one task)."""
    return float(values[0]) if len(values) == 1 else float(np.mean(values))


# -- run-level tables -------------------------------------------------------------------------------
@dataclass(slots=True)
class TrajectorySummary:
    """What TIDE's run tables keep of one task trajectory (the map side of the run metric): a few
    scalars, the progress trace and the recall distances, not the record (``RunPartials``)."""

    family: str
    env_id: str
    preset: str
    condition: str
    agent: str
    base_label: str
    base_key: str
    history: str
    task: str
    repeat: int
    steps: int
    budget: int | None
    solved: int | None
    #: Progress after each step, or None when the episode reports none.
    progress: np.ndarray | None
    loops: LoopStats | None
    #: (action verb, loop steps of that verb) pairs (Table 3's Click Ratio); () for no loop.
    loop_verbs: tuple[tuple[str, int], ...]
    recalls: tuple[int, ...]
    #: Token entropy of the agent's replies (``agent_info["token_entropy"]``, asked with
    #: ``--top-logprobs``): (sum over loop steps, loop steps scored, sum over the others,
    #: others scored); zeros when the run asked for none.
    entropy: tuple[float, int, float, int] = (0.0, 0, 0.0, 0)

    def __reduce__(self) -> tuple[type[TrajectorySummary], tuple[Any, ...]]:
        # pickled by the million between a score's workers, its spill and its reduce: rebuilt
        # from its values in order, not by the dataclass default (which asks fields() each time)
        return TrajectorySummary, tuple(getattr(self, name) for name in self.__slots__)

    def progress_or_success(self) -> np.ndarray:
        """``progress_or_success`` of the record this summarises."""
        if self.progress is not None:
            return self.progress
        out = np.zeros(self.steps, dtype=np.float64)
        if self.solved is not None:
            out = np.concatenate(
                [np.zeros(max(self.solved - 1, 0)), np.ones(max(self.steps - self.solved + 1, 1))]
            )
        return out


def summarise_trajectory(
    record: EpisodeRecord, identity: StateIdentity | None = None
) -> TrajectorySummary:
    """One trajectory (a task view, or a whole record) as TIDE's run tables need it."""
    from sys import intern

    from exploreval.metrics._condition import condition_label

    label, key = agent_base(record)
    loops = record_loops(record, identity)
    verbs: dict[str, int] = defaultdict(int)
    if loops is not None and loops.loop_steps:
        for step, looped in zip(record.steps, record_loop_mask(record, identity), strict=True):
            if looped:
                verbs[action_verb(step.action)] += 1
    entropy = _entropy_split(record, identity) if loops is not None else (0.0, 0, 0.0, 0)
    trace = progress_trace(record)
    return TrajectorySummary(
        family=intern(record.family),
        env_id=intern(record.env_id),
        preset=intern(_preset(record)),
        condition=intern(condition_label(record)),
        agent=intern(record.agent.name),
        base_label=intern(label),
        base_key=intern(key),
        history=intern(history_of(record)),
        task=task_of(record),
        repeat=record.repeat,
        steps=len(record.steps),
        budget=record_budget(record),
        solved=solved_at(record),
        progress=None if trace is None else np.asarray(trace, dtype=np.float64),
        loops=loops,
        loop_verbs=tuple(verbs.items()),
        recalls=tuple(e.distance for e in record_recall(record).events),
        entropy=entropy,
    )


def _entropy_split(
    record: EpisodeRecord, identity: StateIdentity | None
) -> tuple[float, int, float, int]:
    """Token entropy summed over loop steps and over the others (Figure 8), with counts."""
    scored = [s.agent_info.get("token_entropy") if s.agent_info else None for s in record.steps]
    if all(v is None for v in scored):
        return (0.0, 0, 0.0, 0)
    loop_sum = other_sum = 0.0
    loop_n = other_n = 0
    for value, looped in zip(scored, record_loop_mask(record, identity), strict=True):
        if not isinstance(value, int | float) or not math.isfinite(value):
            continue
        if looped:
            loop_sum, loop_n = loop_sum + float(value), loop_n + 1
        else:
            other_sum, other_n = other_sum + float(value), other_n + 1
    return (loop_sum, loop_n, other_sum, other_n)


def trajectory_summaries(record: EpisodeRecord) -> list[TrajectorySummary]:
    """The map side of TIDE's run metric: one summary per task trajectory of an ``ok`` episode
    TIDE counts (evaluation phases left out), none otherwise."""
    if record.status != "ok" or tide_excluded(record) is not None:
        return []
    return [summarise_trajectory(view) for view in views_of(record)]


TrajectoryLike = EpisodeRecord | TrajectorySummary


def as_summaries(
    items: Sequence[TrajectoryLike], identity: StateIdentity | None = None
) -> list[TrajectorySummary]:
    """Records (each one trajectory, as given) or summaries, as summaries."""
    return [
        item if isinstance(item, TrajectorySummary) else summarise_trajectory(item, identity)
        for item in items
        if isinstance(item, TrajectorySummary) or item.status == "ok"
    ]


@dataclass
class Condition:
    """Trajectories of one env x preset x condition x agent (x history) cell. ``condition`` is
    the env-options label (``exploreval.metrics.condition_label``; ``-`` without options):
    episodes of different env options are never pooled."""

    env_id: str
    preset: str
    agent: str
    base_label: str
    base_key: str
    history: str
    records: list[TrajectorySummary]
    condition: str = "-"


def group_conditions(
    items: Sequence[TrajectoryLike], identity: StateIdentity | None = None
) -> list[Condition]:
    return _group_summaries(as_summaries(items, identity))


def _group_summaries(items: Iterable[TrajectorySummary]) -> list[Condition]:
    groups: dict[tuple[str, str, str, str], Condition] = {}
    for item in items:
        cell = (item.env_id, item.preset, item.condition, item.agent)
        if cell not in groups:
            groups[cell] = Condition(
                item.env_id, item.preset, item.agent, item.base_label, item.base_key,
                item.history, [], item.condition,
            )  # fmt: skip
        groups[cell].records.append(item)
    return sorted(groups.values(), key=lambda c: (c.env_id, c.preset, c.condition, c.agent))


def env_t_max(
    records: Sequence[TrajectoryLike], override: TMaxOverride = None
) -> dict[str, tuple[int, str]]:
    """One t_max per env id over all its records (so every agent's AUV shares a window)."""
    by_env: dict[str, list[TrajectorySummary]] = defaultdict(list)
    for item in as_summaries(records):
        by_env[item.env_id].append(item)
    return {
        env: resolve_t_max_from(env, (s.budget for s in items), (s.steps for s in items), override)
        for env, items in by_env.items()
    }


#: Window sources that are one fixed number per environment (the paper's table, a registration,
#: an override); the others are per episode ("episode budget") or per env x preset ("longest
#: episode").
FIXED_SOURCES = frozenset({"override", "EXPLOREVAL_TIDE_T_MAX", "registered", "paper"})


class Windows:
    """t_max of every trajectory, so that the run tables and the per-episode ``tide_auv`` agree.

    * A fixed window (override, ``EXPLOREVAL_TIDE_T_MAX``, ``register_t_max``, the paper's table)
      is the same for every episode of the environment, as in the paper.
    * Suites the paper does not cover use **each episode's own step budget** (TIDE's evaluation
      horizon of that task): a GridDAG map's B = 3 x traversable cells, a bandit's horizon, the
      runner's step cap. A condition's AUV is then the mean of its episodes' Z^(i) (Eq. 18), each
      over its own window, which is exactly the mean of the per-episode ``tide_auv`` column, and
      never changes with which other presets or agents are in the run.
    * No budget known: the longest episode of the env x preset.
    """

    def __init__(self, items: Sequence[TrajectoryLike], override: TMaxOverride = None) -> None:
        groups: dict[tuple[str, str], list[TrajectorySummary]] = defaultdict(list)
        for item in as_summaries(items):
            groups[(item.env_id, item.preset)].append(item)
        self._group = {
            key: resolve_t_max_from(
                key[0], (s.budget for s in group), (s.steps for s in group), override
            )
            for key, group in groups.items()
        }

    def _key(self, item: TrajectoryLike) -> tuple[str, str]:
        return (item.env_id, _preset(item) if isinstance(item, EpisodeRecord) else item.preset)

    def of(self, item: TrajectoryLike) -> int:
        t_max, source = self._group[self._key(item)]
        if source == "episode budget":
            own = record_budget(item) if isinstance(item, EpisodeRecord) else item.budget
            return own if own is not None else t_max
        return t_max

    def source(self, item: TrajectoryLike) -> str:
        return self._group[self._key(item)][1]

    def of_all(self, items: Sequence[TrajectoryLike]) -> list[int]:
        return [self.of(r) for r in items]


def _preset(record: EpisodeRecord) -> str:
    return record.preset if record.preset is not None else "-"


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
        self.conditions = _group_summaries(self.items)
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
    return _frame(rows)


def action_verb(action: str) -> str:
    """First word of an action (``click``, ``ls``, ``move``...), lower-cased; '' when empty."""
    parts = action.strip().split(maxsplit=1)
    if not parts:
        return ""
    return parts[0].split("(", 1)[0].lower()


def loop_actions_table(
    records: Sequence[TrajectoryLike], identity: StateIdentity | None = None
) -> pd.DataFrame:
    """Which kinds of action the loop steps are (Table 3's Click Ratio, for any action verb)."""
    return _loop_actions_table(_group_summaries(as_summaries(records, identity)))


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
    return _frame(rows)


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
    return _frame(rows)


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


def _memory_table(run: _Trajectories) -> pd.DataFrame:
    windows = run.windows
    cells: dict[tuple[str, str, str, str], dict[str, Condition]] = defaultdict(dict)
    for cond in run.conditions:
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
    return _frame(rows)


def _summary_history_table(run: _Trajectories) -> pd.DataFrame:
    """Table 5: per agent (model and harness), AUV with the full history ("Naive") against AUV
    with a summary instead of the earlier turns (``model-summary``: written by the model, the
    paper's setting; ``summary``: the harness's structured summary), paired by task."""
    windows = run.windows
    cells: dict[tuple[str, str, str, str], dict[str, Condition]] = defaultdict(dict)
    for cond in run.conditions:
        cells[(cond.env_id, cond.preset, cond.condition, cond.base_key)][cond.history] = cond
    rows: list[dict[str, Any]] = []
    for (env_id, preset, condition, _), by_history in sorted(cells.items()):
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
    return _frame(rows)


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
    frame = _frame(rows)
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
    return _frame(rows)


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
    return _frame([dict(zip(columns, (*k, n), strict=True)) for k, n in sorted(counts.items())])


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
    return _frame(points)


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
    return _frame(rows)
