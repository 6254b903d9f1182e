"""TIDE on stored episode records: adapters, the per-episode row, and what the run-level tables
keep of each trajectory (its summary; the tables themselves are ``._tide_tables``).

Everything here is a pure function of ``EpisodeRecord``s; nothing re-runs an env or a model.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from exploreval.core import EpisodeRecord, content_key
from exploreval.metrics._hooks import registered_progress, registered_state_identity
from exploreval.metrics._memo import memo
from exploreval.metrics._tide_auv import (
    one_task_auv,
    one_task_progress_auv,
    task_auv,
    task_progress_auv,
)
from exploreval.metrics._tide_loops import (
    DEFAULT_LOOP_DEFINITION,
    LoopDefinition,
    LoopStats,
    Trajectory,
    loop_stats,
)
from exploreval.metrics._tide_memory import RecallResult, recall_distances
from exploreval.metrics._tide_published import one_step_loop_mask
from exploreval.metrics._tide_state import DEFAULT_IDENTITY, StateIdentity
from exploreval.metrics._tide_tmax import record_budget, resolve_t_max, resolve_t_max_from

if TYPE_CHECKING:  # pandas where tables are built: the viewer's step annotations import this
    import pandas as pd

TMaxOverride = int | Mapping[str, int] | None


def table_frame(rows: Any) -> pd.DataFrame:
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
    record: EpisodeRecord, identity: StateIdentity | None, definition: LoopDefinition
) -> tuple[list[bool], LoopStats]:
    """One loop detection per record, identity and definition, shared by rows, tables and
    figures."""
    chosen = identity or state_identity_for(record)

    def compute() -> tuple[list[bool], LoopStats]:
        mask, stats = loop_stats(record_trajectory(record), identity=chosen, definition=definition)
        return [bool(v) for v in mask], stats

    return memo(record, "tide_loops", (chosen, definition), compute)


def record_loops(
    record: EpisodeRecord,
    identity: StateIdentity | None = None,
    definition: LoopDefinition = DEFAULT_LOOP_DEFINITION,
) -> LoopStats | None:
    if not observations_recorded(record):
        return None
    return _record_loop_pass(record, identity, definition)[1]


def record_loop_mask(
    record: EpisodeRecord,
    identity: StateIdentity | None = None,
    definition: LoopDefinition = DEFAULT_LOOP_DEFINITION,
) -> list[bool]:
    return list(_record_loop_pass(record, identity, definition)[0])


def record_one_step_loops(record: EpisodeRecord) -> int | None:
    """Steps that repeat the step before from the same observation (the authors' run-time
    ``loop`` log, their second loop ratio); None when the observations were not recorded."""
    if not observations_recorded(record):
        return None
    states = [s.observation for s in record.steps]
    actions = [s.action for s in record.steps]
    return sum(one_step_loop_mask(states, actions))


def _pooled(loop_counts: Sequence[int | None], step_counts: Sequence[int]) -> float | None:
    """Loop steps over steps, pooled over the tasks whose loops are known (Eq. 4)."""
    known = [(n, steps) for n, steps in zip(loop_counts, step_counts, strict=True) if n is not None]
    if not known:
        return None
    total = sum(steps for _, steps in known)
    return sum(n for n, _ in known) / total if total else 0.0


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
            "tide_loop_definition": DEFAULT_LOOP_DEFINITION,
            "tide_loop_ratio_exhaustive": None,
            "tide_loop_ratio_one_step": None,
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
    exhaustive = [record_loops(v, definition="exhaustive") for v in views]
    one_step = [record_one_step_loops(v) for v in views]
    step_counts = [len(v.steps) for v in views]
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
        "tide_loop_definition": DEFAULT_LOOP_DEFINITION,
        "tide_loop_ratio_exhaustive": _pooled(
            [None if stats is None else stats.loop_steps for stats in exhaustive], step_counts
        ),
        "tide_loop_ratio_one_step": _pooled(one_step, step_counts),
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


# -- what the run-level tables keep of a trajectory -------------------------------------------------------------------------------
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


def action_verb(action: str) -> str:
    """First word of an action (``click``, ``ls``, ``move``...), lower-cased; '' when empty."""
    parts = action.strip().split(maxsplit=1)
    if not parts:
        return ""
    return parts[0].split("(", 1)[0].lower()


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
    return group_summaries(as_summaries(items, identity))


def group_summaries(items: Iterable[TrajectorySummary]) -> list[Condition]:
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
