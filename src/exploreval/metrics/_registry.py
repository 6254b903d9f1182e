"""Which metrics apply to which env family.

Episode metrics map one ``EpisodeRecord`` to a flat dict of scalars (one row of the results
table). Run metrics map all records of a run to named tables (pandas DataFrames) for statistics
that only exist across episodes (AUV, suffix failures...). Both are pure: they read records (and
the ground truth inside them) only.

**Run metrics are map/reduce** so that a run of a million episodes is scored in bounded memory:
a run metric registered with ``partial=`` maps each record to a small picklable summary (in the
same streamed pass, in worker processes, that computes the episode rows) and its ``fn`` reduces
the summaries of every record of its families to tables; no record outlives its own turn. A run
metric without ``partial`` gets the records themselves (a third party's simple metric), which
``exploreval score`` then streams to it in one more pass over the log (docs/records.md).

Where a metric goes: if it is defined for the records of every suite (it reads only what every
record has: steps, phases, validity, success, usage, the generic ``StepInfo`` fields), it lives in
``exploreval.metrics`` and registers for family ``"*"``; if it reads a suite's ground truth or its
typed step info, it lives in that suite and registers for the suite's families.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from exploreval.core import Registry, current_plugin, load_plugins, resolve

if TYPE_CHECKING:
    import pandas as pd

    from exploreval.core import EpisodeRecord

Scalar = float | int | bool | str | None
EpisodeMetricFn = Callable[["EpisodeRecord"], dict[str, Scalar]]
RunMetricFn = Callable[[Sequence["EpisodeRecord"]], "dict[str, pd.DataFrame]"]
#: ``partial(record)``: the small, picklable summary of one record a map/reduce run metric keeps.
PartialFn = Callable[["EpisodeRecord"], Any]
#: ``await fn(records, client)``: tables from a model's judgement of each record (the client is
#: any ``exploreval.models.ModelClient``; its response cache makes a re-run free).
JudgedMetricFn = Callable[[Sequence["EpisodeRecord"], Any], Awaitable["dict[str, pd.DataFrame]"]]


@dataclass(frozen=True)
class MetricEntry:
    """A registered metric: ``fn`` is a callable or a ``"module:function"`` string."""

    name: str
    family: str
    kind: Literal["episode", "run", "judged"]
    fn: Any
    suite: str = ""
    #: Run metrics only: ``record -> summary`` (picklable); ``fn`` then reduces summaries.
    partial: Any = None

    def applies_to(self, family: str) -> bool:
        return self.family in ("*", family)


#: Keyed ``kind:family:name``; ``family`` is an env family or ``"*"`` (every record).
METRIC_REGISTRY: Registry[MetricEntry] = Registry("metric", loader=load_plugins)


def register_episode_metrics(family: str, name: str, fn: EpisodeMetricFn | str) -> None:
    """Register ``fn`` for records of ``family`` (``"*"`` = every family)."""
    METRIC_REGISTRY.register(
        f"episode:{family}:{name}",
        MetricEntry(name, family, "episode", fn, current_plugin()),
        replace=True,
    )


def register_run_metrics(
    family: str, name: str, fn: RunMetricFn | str | Any, *, partial: PartialFn | str | None = None
) -> None:
    """Register run-level tables for records of ``family`` (``"*"`` = every family).

    With ``partial``, ``partial(record)`` is a small picklable summary of one record and
    ``fn(summaries)`` makes the tables from the summaries of every ``ok`` record of ``family``,
    in log order (module docstring: map/reduce, bounded memory); when the summaries are rows
    (dicts; None for a record to skip) ``fn`` gets them as one DataFrame. Without ``partial``
    ``fn(records)``."""
    METRIC_REGISTRY.register(
        f"run:{family}:{name}",
        MetricEntry(name, family, "run", fn, current_plugin(), partial),
        replace=True,
    )


def register_judged_metrics(family: str, name: str, fn: JudgedMetricFn | str) -> None:
    """Register tables that a *model* computes from records of ``family`` (an LLM judge). They
    run only when ``score`` is given a judge model (``--judge-model``), never by default."""
    METRIC_REGISTRY.register(
        f"judged:{family}:{name}",
        MetricEntry(name, family, "judged", fn, current_plugin()),
        replace=True,
    )


async def judged_metrics(records: Sequence[EpisodeRecord], client: Any) -> dict[str, pd.DataFrame]:
    """Every applicable judged table for ``records``, judged by ``client``."""
    families = {r.family for r in records}
    tables: dict[str, pd.DataFrame] = {}
    for entry in _entries("judged"):
        if entry.family == "*" or entry.family in families:
            subset = [r for r in records if entry.applies_to(r.family)]
            if subset:
                tables.update(await resolve(entry.fn)(subset, client))
    return tables


def _entries(kind: str) -> tuple[MetricEntry, ...]:
    # "*" entries first, then by registration key: basic columns lead every row. Asked twice
    # per episode scored, so the order is kept until the registry changes.
    def ordered() -> tuple[MetricEntry, ...]:
        entries = [e for e in METRIC_REGISTRY.values() if e.kind == kind]
        return tuple(sorted(entries, key=lambda e: (e.family != "*", e.family, e.name)))

    return METRIC_REGISTRY.derived(f"entries:{kind}", ordered)


def episode_metrics(record: EpisodeRecord) -> dict[str, Any]:
    """All applicable episode metrics for one record, as one flat row."""
    row: dict[str, Any] = {}
    for entry in _entries("episode"):
        if entry.applies_to(record.family):
            try:
                row.update(resolve(entry.fn)(record))
            except Exception as exc:  # a broken metric must name itself, not kill scoring
                raise RuntimeError(
                    f"metric {entry.name!r} failed on episode {record.episode_id}: {exc}"
                ) from exc
    return row


def run_metrics(records: Sequence[EpisodeRecord]) -> dict[str, pd.DataFrame]:
    """All applicable run-level tables, keyed ``<table name>`` (records held in memory; the
    streamed path of ``exploreval score`` is ``RunPartials``, and gives the same tables)."""
    partials = RunPartials()
    for record in records:
        partials.add(record)
    legacy = {
        run_key(entry): [r for r in records if entry.applies_to(r.family)]
        for entry in partials.record_entries()
    }
    return partials.tables(legacy)


def run_key(entry: MetricEntry) -> str:
    """How ``RunPartials`` names a run metric: ``family:name``."""
    return f"{entry.family}:{entry.name}"


def run_entries() -> list[MetricEntry]:
    """The registered run metrics, in the order a reduce takes them (``reduce_run_tables``)."""
    return list(_entries("run"))


class RunPartials:
    """The map side of the run metrics, one record at a time: each map/reduce run metric's
    summary of every record of its families, kept in log order. Picklable: worker processes
    each map a share of the log and send what they kept (``score`` spills it and reduces it
    with ``reduce_run_tables``). ``tables`` reduces."""

    def __init__(self) -> None:
        self.summaries: dict[str, list[Any]] = {}
        #: Summaries that are rows (dicts), kept as columns: a few bytes per value, not a dict
        #: per record (``compact``); their reduce gets one DataFrame.
        self.frames: dict[str, list[pd.DataFrame]] = {}
        self.families: set[str] = set()

    def add(self, record: EpisodeRecord) -> None:
        self.families.add(record.family)
        for entry in _entries("run"):
            if entry.partial is None or not entry.applies_to(record.family):
                continue
            key = run_key(entry)
            try:
                summary = resolve(entry.partial)(record)
            except Exception as exc:  # a broken metric must name itself, not kill scoring
                raise RuntimeError(
                    f"run metric {entry.name!r} failed on episode {record.episode_id}: {exc}"
                ) from exc
            self.summaries.setdefault(key, []).append(summary)

    def compact(self) -> RunPartials:
        """Store each metric's row summaries (all dicts, or None for a record it skips) as a
        DataFrame chunk: a run metric whose map side returns rows then gets its rows as one
        DataFrame, whether the records were scored in memory or streamed by workers."""
        import pandas as pd

        for key in list(self.summaries):
            values = self.summaries[key]
            if key in self.frames or _are_rows(values):
                rows = [v for v in values if v is not None]
                if rows:
                    self.frames.setdefault(key, []).append(pd.DataFrame(rows))
                del self.summaries[key]
        return self

    def record_entries(self) -> list[MetricEntry]:
        """Run metrics without ``partial`` that apply to a family seen: they need the records
        (``tables`` takes them keyed by ``run_key``)."""
        return [
            e
            for e in _entries("run")
            if e.partial is None and (e.family == "*" or e.family in self.families)
        ]

    def tables(
        self, records: Mapping[str, Sequence[EpisodeRecord]] | None = None
    ) -> dict[str, pd.DataFrame]:
        """Reduce: every applicable table. ``records``: for each ``record_entries`` key, the
        records (or a stream of them) that metric is given.

        Consumes the summaries: each metric's are let go as soon as its tables are made, so a
        reduce never holds every metric's summaries next to the tables being built from them
        (at a million episodes that is a gigabyte). A second call finds nothing to reduce."""
        self.compact()

        def take(key: str) -> tuple[list[pd.DataFrame], list[Any]]:
            return self.frames.pop(key, []), self.summaries.pop(key, [])

        return reduce_run_tables(take, records)


def reduce_run_tables(
    take: Callable[[str], tuple[list[pd.DataFrame], list[Any]]],
    records: Mapping[str, Sequence[EpisodeRecord]] | None = None,
    only: Collection[str] | None = None,
) -> dict[str, pd.DataFrame]:
    """The reduce of every run metric, one metric at a time: ``take(key)`` gives that metric's
    summaries (its row chunks, then its other summaries, in log order) and is called once per
    key, so the summaries can come from memory (``RunPartials``) or from disk (``score`` spills
    each worker's share) and only one metric's are held at once. ``only``: reduce just these
    metrics (``run_key``), leaving the others' summaries untaken (a score reduces a run's
    metrics in two processes at once)."""
    tables: dict[str, pd.DataFrame] = {}
    for entry in _entries("run"):
        key = run_key(entry)
        if only is not None and key not in only:
            continue
        if entry.partial is not None:
            frames, summaries = take(key)
            values = _as_rows(frames, summaries)
            del frames, summaries  # the chunks now live in ``values`` only
            if values is not None and len(values):
                tables.update(resolve(entry.fn)(values))
            del values
        elif records is not None and key in records and len(records[key]):
            tables.update(resolve(entry.fn)(records[key]))
    return tables


# -> Any: one DataFrame of rows, or the list of whatever the metric's own map side returned
def _as_rows(frames: list[pd.DataFrame], summaries: list[Any]) -> Any:
    """One metric's summaries as its reduce gets them: rows (dicts, None to skip) as one
    DataFrame, anything else as the list (``RunPartials.compact``)."""
    import pandas as pd

    if frames or _are_rows(summaries):
        rows = [v for v in summaries if v is not None]
        if rows:
            frames = [*frames, pd.DataFrame(rows)]
        return pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    return summaries or None


def _are_rows(values: list[Any]) -> bool:
    """A map side that returns rows: every summary a dict (or None, for a record it skips)."""
    return (
        bool(values)
        and all(v is None or isinstance(v, dict) for v in values)
        and any(isinstance(v, dict) for v in values)
    )
