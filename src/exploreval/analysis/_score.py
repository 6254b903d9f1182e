"""Recompute every metric from the stored records and write the results tables."""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from exploreval.analysis._judged import read_judged, write_table
from exploreval.analysis._mapcache import ENV_VAR as CACHE_ENV_VAR
from exploreval.analysis._mapcache import MapCache, ScoreCacheWarning
from exploreval.analysis._spill import (
    SPILL_ERRORS,
    SPILL_FRAME,
    SPILL_LIST,
    SPILL_ROWS,
    LatestEpisodes,
    Spill,
    concat_frames,
    reduce_groups,
    reduce_spilled,
    reduce_spilled_by_metric,
    run_keys,
    valid_only,
)
from exploreval.core import EpisodeRecord, bound_process_pool, gc_paused
from exploreval.metrics import condition_label, episode_metrics, run_metrics
from exploreval.store import (
    LazyRecords,
    LogIssue,
    RunColumns,
    RunDir,
    StoreError,
    describe_os_error,
)


@dataclass
class ScoreResult:
    """The results table, the run-level tables, and any unreadable log lines.

    ``records`` and ``errors`` are the ``ok`` and errored episodes: from ``score_run`` they are
    ``LazyRecords`` (read from the log one at a time when iterated; nothing is held), from
    ``score_records`` the list it was given."""

    table: pd.DataFrame
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    issues: list[LogIssue] = field(default_factory=list)
    records: Sequence[EpisodeRecord] = field(default_factory=list)
    #: Episodes whose latest record is an error (not scored; they are in results.parquet).
    errors: Sequence[EpisodeRecord] = field(default_factory=list)
    run_id: str = ""
    #: Non-fatal problems (e.g. the viewer index could not be updated).
    warnings: list[str] = field(default_factory=list)
    #: One identity row per errored episode (``identity_row``).
    error_table: pd.DataFrame = field(default_factory=pd.DataFrame)
    #: Whether results.parquet and tables/ hold these scores (False: not asked to write, or
    #: the run cannot be written to).
    stored: bool = True
    #: Chunks of the map (``CHUNK_EPISODES`` episodes each), and how many of them were read
    #: back from the score cache rather than mapped (``_mapcache``); 0, 0 when results were
    #: reused whole.
    chunks: int = 0
    chunks_cached: int = 0

    def forget_records(self) -> None:
        """Drop the records (a list's objects, or the spans of ``LazyRecords``): see
        ``build_report`` for why this matters before the garbage collector resumes."""
        self.records = []
        self.errors = []

    def all_rows(self) -> pd.DataFrame:
        """Scored rows plus one metadata row per errored episode (what results.parquet holds)."""
        return _all_rows(self.table, self.error_table)


def _all_rows(table: pd.DataFrame, error_table: pd.DataFrame) -> pd.DataFrame:
    if error_table.empty:
        return table
    if table.empty:
        return error_table
    return pd.concat([table, error_table], ignore_index=True)


def _harness_config(record: EpisodeRecord) -> dict[str, Any]:
    harness = record.agent.config.get("harness")
    return harness if isinstance(harness, dict) else {}


def identity_row(record: EpisodeRecord, run_id: str = "") -> dict[str, Any]:
    """Who played what, and how it ended: the columns that keep rows of several runs apart."""
    harness = _harness_config(record)
    client = record.agent.config.get("client")
    model = client.get("model") if isinstance(client, dict) else record.agent.config.get("model")
    return {
        "run_id": record.run_id or run_id,
        "episode_id": record.episode_id,
        "env_id": record.env_id,
        "family": record.family,
        "preset": record.preset,
        "condition": condition_label(record),
        "seed": record.seed,
        "repeat": record.repeat,
        "agent": record.agent.name,
        "agent_kind": record.agent.kind,
        "model": str(model) if model else "",
        "harness": str(harness.get("name", "")) if record.agent.kind == "llm" else "",
        "history": str(harness.get("history", "")),
        "status": record.status,
        "error": record.error or "",
    }


def episode_row(record: EpisodeRecord, run_id: str = "") -> dict[str, Any]:
    """Identity columns + every applicable episode metric."""
    row = identity_row(record, run_id)
    row.update(episode_metrics(record))
    return row


def results_table(records: Sequence[EpisodeRecord], run_id: str = "") -> pd.DataFrame:
    return pd.DataFrame([episode_row(r, run_id) for r in records if r.status == "ok"])


def score_records(records: Sequence[EpisodeRecord], run_id: str = "") -> ScoreResult:
    """Score records held in memory (``score_run`` streams a run's log instead; same result)."""
    ok = [r for r in records if r.status == "ok"]
    errors = [r for r in records if r.status != "ok"]
    return ScoreResult(
        table=results_table(ok, run_id),
        tables=run_metrics(ok) if ok else {},
        records=ok,
        errors=errors,
        run_id=run_id,
        error_table=pd.DataFrame([identity_row(r, run_id) for r in errors]),
    )


#: Written last into ``tables/``: what the results were computed from (see ``score_stamp``).
SCORE_META = "score_meta.json"
SCORE_META_VERSION = 1


def score_stamp(run: RunDir, run_id: str) -> dict[str, Any]:
    """What the stored results depend on: the log (size, modification time, a hash of its first
    64 kB), the run id, the exploreval version, the registered metrics and condition labels,
    the TIDE window override of the environment and the metric code's source files (an edit
    in an editable install keeps the version). Any change means: compute again."""
    import hashlib

    from exploreval.analysis._mapcache import code_fingerprint
    from exploreval.core import VERSION as __version__
    from exploreval.metrics import CONDITION_LABELS, METRIC_REGISTRY
    from exploreval.metrics.tide import T_MAX_ENV_VAR as ENV_VAR

    stat = run.episodes_path.stat()
    with open(run.episodes_path, "rb") as fh:
        head = hashlib.sha256(fh.read(65536)).hexdigest()
    return {
        "schema_version": SCORE_META_VERSION,
        "log_size": stat.st_size,
        "log_mtime_ns": stat.st_mtime_ns,
        "log_head_sha256": head,
        "run_id": run_id,
        "exploreval": __version__,
        "metrics": sorted(METRIC_REGISTRY.names()),
        "condition_labels": sorted(CONDITION_LABELS.names()),
        "tide_t_max": os.environ.get(ENV_VAR, ""),
        "code": code_fingerprint(_metric_modules(METRIC_REGISTRY.values(), CONDITION_LABELS)),
    }


def _metric_modules(entries: Any, labels: Any) -> list[str]:
    """The modules the registered metrics and condition labels come from."""
    modules: list[str] = []
    functions = [f for e in entries for f in (e.fn, e.partial) if f is not None]
    functions += labels.values()
    for fn in functions:
        if isinstance(fn, str):
            modules.append(fn.split(":", 1)[0])
        else:
            modules.append(str(getattr(fn, "__module__", "") or ""))
    return modules


def _cached_result(
    run: RunDir, stamp: dict[str, Any], latest: LatestEpisodes, run_id: str
) -> ScoreResult | None:
    """The stored results table and run tables when they were computed from exactly this log by
    exactly these metrics (``score_stamp``); None otherwise."""
    import json

    try:
        meta = json.loads((run.tables_dir / SCORE_META).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(meta, dict) or meta.get("stamp") != stamp:
        return None
    try:
        rows = pd.read_parquet(run.results_path)
        tables = {
            str(name): pd.read_parquet(run.tables_dir / f"{name}.parquet")
            for name in meta.get("tables", [])
        }
    except Exception:  # a torn or foreign file: it is only a cache, compute again
        return None
    ok = rows["status"] == "ok" if "status" in rows else pd.Series(True, index=rows.index)
    table = rows[ok].reset_index(drop=True)
    column_issues = {(i.line, i.message) for i in latest.issues}
    invalid = [
        LogIssue(int(i["line"]), str(i["message"]))
        for i in meta.get("invalid", [])
        if (int(i["line"]), str(i["message"])) not in column_issues
    ]
    records = valid_only(latest.ok, invalid, latest)
    if len(table) != len(records):
        return None
    return ScoreResult(
        table=table,
        tables=tables,
        issues=invalid,
        records=records,
        errors=latest.errors,
        run_id=run_id,
        error_table=rows[~ok].reset_index(drop=True),
    )


#: What a score tells whoever watches it: ``(stage, done, total)``. Stages, in order:
#: ``"columns"`` (syncing the run's column tables: first None, None, then bytes of the log
#: put in of those to read, when there are any), ``"map"`` (done of total episodes mapped or
#: read back from the score cache, once per chunk) and ``"tables"`` (reducing the run tables
#: and writing them: None, None).
ScoreProgress = Callable[[str, int | None, int | None], None]


def score_run(
    run: RunDir, write: bool = True, *, progress: ScoreProgress | None = None
) -> ScoreResult:
    """Score a run directory from its log alone; writes results.parquet and tables/.

    Scoring is a pure function of the log, so the stored results are reused when they were
    computed from the same log bytes by the same metrics (``score_stamp``; a report right after
    ``exploreval score`` or after ``run`` does not compute every metric twice), and report sections
    draw from ``tables`` rather than compute them again. The records are always read (sections
    draw from them too). The garbage collector is paused meanwhile (``gc_paused``)."""
    with gc_paused():
        return _score_run(run, write, progress)


def _score_run(run: RunDir, write: bool, progress: ScoreProgress | None = None) -> ScoreResult:
    if not run.episodes_path.exists():
        if not run.manifest_path.exists():  # worded as every other command words it
            raise StoreError(f"{run.path} is not a run directory (no manifest.json)")
        raise StoreError(f"{run.path} has no {run.episodes_path.name}; nothing to score")
    run_id = run.read_manifest().run_id if run.manifest_path.exists() else ""
    if write and not run.writable():
        from exploreval.store import ReadOnlyRunWarning

        warnings.warn(
            f"{run.path} cannot be written to: scored without storing results.parquet, tables/ "
            "or the viewer index there (so each score computes them again)",
            ReadOnlyRunWarning,
            stacklevel=3,
        )
        write = False
    stamp = score_stamp(run, run_id)
    latest = latest_episodes(run, progress)
    cached = _cached_result(run, stamp, latest, run_id)
    index_done: Callable[[], str | None] | None = None

    def write_rows(table: pd.DataFrame, error_table: pd.DataFrame) -> None:
        """results.parquet, then the viewer index (which reads it) starts: on a large run both
        happen while the run tables are still being reduced (``score_streamed``)."""
        nonlocal index_done
        if not write:
            return
        try:
            (run.tables_dir / SCORE_META).unlink(missing_ok=True)  # stale until rewritten
            write_table(_all_rows(table, error_table), run.results_path)
        except OSError as exc:
            raise describe_os_error("write results to", run.path, exc) from exc
        index_done = start_viewer_index(run, len(latest.offsets))

    result = cached or score_streamed(
        run, latest, run_id, on_rows=write_rows, stamp=stamp, progress=progress
    )
    result.stored = write or cached is not None
    result.issues = [*latest.issues, *result.issues]
    for name, table in read_judged(run).items():
        result.tables.setdefault(name, table)
    try:
        if write and cached is None:
            _write_run_tables(run, result, stamp, run_id)
    except BaseException:
        if index_done is not None:  # wait for the index process rather than leave it behind
            index_done()
        raise
    if write:
        if index_done is None:  # the stored results were reused
            index_done = start_viewer_index(run, len(latest.offsets))
        problem = index_done()
        if problem:
            result.warnings.append(problem)
    return result


def _write_run_tables(run: RunDir, result: ScoreResult, stamp: dict[str, Any], run_id: str) -> None:
    """tables/ (judged tables are left as they are), then the stamp that says what the stored
    results were computed from: written last, and only when the log did not grow meanwhile."""
    import json

    try:
        run.tables_dir.mkdir(exist_ok=True)
        judged = read_judged(run)
        for name, table in result.tables.items():
            if name not in judged:
                write_table(table, run.tables_dir / f"{name}.parquet")
        if stamp == score_stamp(run, run_id):
            meta = {
                "stamp": stamp,
                # in the order this score made them: a score that reuses them gives the same
                # ``ScoreResult.tables``, order included
                "tables": [name for name in result.tables if name not in judged],
                # lines left out for failing validation: the stored rows have none of them
                "invalid": [{"line": i.line, "message": i.message} for i in result.issues],
            }
            (run.tables_dir / SCORE_META).write_text(json.dumps(meta), encoding="utf-8")
    except OSError as exc:
        raise describe_os_error("write results to", run.path, exc) from exc


def refresh_viewer_index(run: RunDir, n_episodes: int) -> str | None:
    """Bring the viewer's index up to date, so ``exploreval view`` opens at once after score,
    report or run (``start_viewer_index``, waited for)."""
    return start_viewer_index(run, n_episodes)()


def start_viewer_index(run: RunDir, n_episodes: int) -> Callable[[], str | None]:
    """Start bringing the viewer's index up to date; the returned call waits for it and gives
    its warning, if any. A large run's index is built in a fresh process: it reads its own
    columns and results.parquet (nothing of this process), and what it holds while it writes
    the list (a gigabyte at a million episodes) is then never added to the rows this process
    keeps. A small run's is built here and now."""
    from exploreval.viewer import refresh_index

    if score_workers(n_episodes) <= 1:
        problem = refresh_index(run.path)
        return lambda: problem

    def failed(exc: Exception) -> str:  # the index is a cache: say so, never fail the score
        return f"viewer index of {run.path} not updated: {type(exc).__name__}: {exc}"

    pool = bound_process_pool(1, "spawn")
    try:
        future = pool.submit(refresh_index, str(run.path))
    except Exception as exc:
        pool.shutdown(wait=False, cancel_futures=True)
        message = failed(exc)
        return lambda: message

    def done() -> str | None:
        try:
            return future.result()
        except Exception as exc:
            return failed(exc)
        finally:
            pool.shutdown()

    return done


def latest_episodes(run: RunDir, progress: ScoreProgress | None = None) -> LatestEpisodes:
    """Sync the run's columns and read which log spans hold each episode's latest record: one
    small query over the episode table, no record parsed; kept as arrays (a million episodes
    take tens of megabytes). ``progress`` hears the sync as stage ``"columns"`` (bytes)."""
    import pyarrow.compute as pc

    columns = RunColumns(run)
    if progress is not None:
        progress("columns", None, None)
        columns.sync(progress=lambda done, total: progress("columns", done, total))
    con = columns.connect()  # syncs first (nothing left to read after the sync above)
    try:
        table = con.sql(
            "select e.log_offset, e.log_length, e.line, e.family, e.status = 'ok' as ok "
            "from episodes e join (select episode_id, min(line) as first from all_episodes "
            "group by 1) f using (episode_id) order by f.first"
        ).to_arrow_table()
    finally:
        con.close()
    offsets = table.column("log_offset").to_numpy().astype(np.int64)
    lengths = table.column("log_length").to_numpy().astype(np.int64)
    lines = table.column("line").to_numpy().astype(np.int64)
    ok = table.column("ok").to_numpy(zero_copy_only=False).astype(bool)
    # families as a few shared strings, not one string object per episode
    encoded = pc.dictionary_encode(pc.fill_null(table.column("family").combine_chunks(), ""))
    names = np.asarray([str(v) for v in encoded.dictionary.to_pylist()], dtype=object)
    codes = encoded.indices.to_numpy(zero_copy_only=False)
    families = names[codes] if len(names) else np.empty(len(offsets), dtype=object)
    log = run.episodes_path
    return LatestEpisodes(
        ok=LazyRecords(log, np.stack([offsets[ok], lengths[ok]], axis=1), families[ok]),
        errors=LazyRecords(log, np.stack([offsets[~ok], lengths[~ok]], axis=1), families[~ok]),
        offsets=offsets,
        lengths=lengths,
        lines=lines,
        issues=columns.issues(),
    )


#: Episodes per worker task: enough to amortise a task's overhead, few enough to balance.
CHUNK_EPISODES = 1024
#: Below this many episodes a run is scored in this process (workers cost ~1 s to start).
PARALLEL_FROM = 4096


def score_workers(n_episodes: int) -> int:
    """Worker processes for a score (``exploreval.core.analysis_workers``)."""
    from exploreval.core import analysis_workers

    return analysis_workers(n_episodes, PARALLEL_FROM)


#: Up to this many episodes, a score joins and stores its rows (``on_rows``: results.parquet,
#: then the viewer index starts) while its run tables are reduced, each on a core of its own.
#: Above it one after the other, so that the reduce, the index and the rows are never all held at
#: once (together about 5 GB at a million episodes; 0.2 GB at 100k).
OVERLAP_UP_TO = 250_000

#: What ``score_streamed`` hands its caller as soon as the rows are joined: (rows, errored rows).
RowsHook = Callable[[pd.DataFrame, pd.DataFrame], None]


def score_streamed(
    run: RunDir,
    latest: LatestEpisodes,
    run_id: str,
    on_rows: RowsHook | None = None,
    stamp: dict[str, Any] | None = None,
    progress: ScoreProgress | None = None,
) -> ScoreResult:
    """Score the latest records one at a time (in worker processes on a large run): each
    record gives its results row and its run metrics' summaries and is dropped. Each chunk's
    rows and summaries go to a spill file as they arrive (``Spill``), so the map holds nothing
    in this process; the run tables are then reduced one metric at a time from the spill
    (``reduce_run_tables``), and the rows are joined when no summary is left in this process.
    Memory holds one metric's summaries, or the rows, never the records (docs/records.md).
    ``on_rows`` is called once with the joined rows: during the reduce (which runs in a child
    process) on a large run up to ``OVERLAP_UP_TO`` episodes, after it otherwise. With the
    run's ``stamp``, each chunk's map is kept in the user's score cache and a chunk whose bytes
    and context are unchanged is read from it, not mapped again (``_mapcache``)."""
    from exploreval.metrics import RunPartials, run_key

    chunks = latest.chunks(CHUNK_EPISODES)
    workers = score_workers(len(latest.offsets))
    log = str(run.episodes_path)
    issues: list[LogIssue] = []
    families: set[str] = set()
    cache = MapCache.for_run(run.path, stamp) if stamp is not None else None
    kept: list[str] = []
    cache_errors: list[str] = []
    total = len(latest.offsets)
    done = chunks_done = chunks_cached = 0
    if progress is not None:
        progress("map", 0, total)
    with Spill() as spill:

        def take(part: _ChunkScore) -> None:
            for key, payload in part.payloads.items():
                spill.put(key, payload)
            families.update(part.families)
            issues.extend(part.issues)
            if part.cache_key:
                kept.append(part.cache_key)
            if part.cache_error and not cache_errors:
                cache_errors.append(part.cache_error)
            nonlocal done, chunks_done, chunks_cached
            done += part.episodes
            chunks_done += 1
            chunks_cached += part.from_cache
            if progress is not None:
                progress("map", done, total)

        if workers <= 1 or len(chunks) <= 1:
            for chunk in chunks:
                take(score_chunk(log, chunk, run_id, cache))
        else:
            # fork: the workers inherit every metric registered in this process (a plugin's,
            # or one a script registered by hand), which a spawned worker would not see. They
            # run only Python (never DuckDB); exploreval's own threads (env pool, spawner) are
            # idle between runs, so no lock is copied held. EXPLOREVAL_ANALYSIS_WORKERS=1
            # scores in-process.
            with bound_process_pool(workers, "fork") as pool:
                n = len(chunks)
                for part in pool.map(score_chunk, [log] * n, chunks, [run_id] * n, [cache] * n):
                    take(part)
        if progress is not None:
            progress("tables", None, None)
        limit_problem = cache.keep_only(kept) if cache is not None else ""
        if limit_problem:
            warnings.warn(limit_problem, ScoreCacheWarning, stacklevel=3)
        if cache_errors:
            warnings.warn(
                f"the score cache cannot be written ({cache_errors[0]}): {run.path} was scored, "
                f"but its next score maps every episode again; set {CACHE_ENV_VAR} to a "
                "writable folder of your own, or to 'off'",
                ScoreCacheWarning,
                stacklevel=3,
            )
        valid = valid_only(latest.ok, issues, latest)
        # a run metric registered without a map side gets the records, streamed from the log
        seen = RunPartials()
        seen.families = families
        legacy = {run_key(entry): valid.where(entry.family) for entry in seen.record_entries()}

        rows: tuple[pd.DataFrame, pd.DataFrame] | None = None
        if not len(valid):
            tables: dict[str, pd.DataFrame] = {}
        elif workers <= 1:
            tables = reduce_spilled(spill, legacy)
        else:
            # A large run reduces in a child process, which gives all its memory back when it
            # ends: the summaries are millions of small objects, and what a process frees of
            # those it keeps (half a gigabyte at a million episodes), next to the rows joined
            # below. Forked, like the map's workers, so it sees every registered metric; forked
            # before the rows are joined here, so its memory never counts theirs.
            if len(latest.offsets) <= OVERLAP_UP_TO:
                # two reduce processes, each a share of the metrics (by spilled bytes), while
                # the rows are joined and stored here: the reduce is a run's serial tail
                groups = reduce_groups(spill, legacy)
                with bound_process_pool(len(groups), "fork") as pool:
                    readers = [spill.copy() for _ in groups]
                    try:
                        reducing = [
                            pool.submit(reduce_spilled_by_metric, reader, legacy, group)
                            for reader, group in zip(readers, groups, strict=True)
                        ]
                        rows = _joined_rows(spill, on_rows)
                        by_metric = {k: t for part in reducing for k, t in part.result().items()}
                    finally:
                        for reader in readers:
                            reader.close()
                tables = {}
                for key in run_keys():  # the tables in the order one reduce gives them
                    tables.update(by_metric.get(key, {}))
            else:
                with bound_process_pool(1, "fork") as pool, spill.copy() as reader:
                    tables = pool.submit(reduce_spilled, reader, legacy).result()
        table, error_table = rows or _joined_rows(spill, on_rows)
    return ScoreResult(
        table=table,
        tables=tables,
        issues=issues,
        records=valid,
        errors=latest.errors,
        run_id=run_id,
        error_table=error_table,
        chunks=chunks_done,
        chunks_cached=chunks_cached,
    )


def _joined_rows(spill: Spill, on_rows: RowsHook | None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The rows and the errored rows, each joined from the spill, handed to ``on_rows``."""
    table = concat_frames(list(spill.take(SPILL_ROWS)))
    error_table = concat_frames(list(spill.take(SPILL_ERRORS)))
    if on_rows is not None:
        on_rows(table, error_table)
    return table, error_table


@dataclass
class _ChunkScore:
    """One worker task's results, pickled by key (``Spill``): the rows, the errored rows, and
    each run metric's summaries (``frame:<key>`` for row chunks, ``list:<key>`` otherwise)."""

    payloads: dict[str, bytes]
    families: set[str]
    issues: list[LogIssue]
    #: The chunk's name in the score cache ('' when none is used).
    cache_key: str = ""
    #: Read back from the score cache, not mapped by this score.
    from_cache: bool = False
    #: Why this chunk could not be kept in the score cache ('' when it was, or none is used).
    cache_error: str = ""
    #: How many latest records the chunk held (its spans: ok, errored or unreadable).
    episodes: int = 0


def score_chunk(
    log: str, spans: Sequence[tuple[int, int, int]], run_id: str, cache: MapCache | None = None
) -> _ChunkScore:
    """Score the records at ``spans`` (offset, length, line) of the log: one worker task. With
    a ``cache``, what an earlier score computed from the same bytes in the same context is read
    back instead, and what this one computes is kept."""
    if cache is None:
        part = _score_chunk(log, spans, run_id)
    else:
        lines = _read_spans(log, spans)
        key = cache.key(spans, lines)
        stored = cache.load(key)
        if isinstance(stored, _ChunkScore):
            part = stored
            part.from_cache = True
        else:
            part = _score_chunk(log, spans, run_id, lines)
            part.cache_error = cache.store(key, part) or ""
        part.cache_key = key
    part.episodes = len(spans)
    return part


def _read_spans(log: str, spans: Sequence[tuple[int, int, int]]) -> list[bytes]:
    """The bytes at each span of the log (one chunk's lines: about 16 MB at most)."""
    with open(log, "rb") as fh:
        out = []
        for offset, length, _line in spans:
            fh.seek(offset)
            out.append(fh.read(length))
        return out


def _score_chunk(
    log: str,
    spans: Sequence[tuple[int, int, int]],
    run_id: str,
    lines: Sequence[bytes] | None = None,
) -> _ChunkScore:
    """Map one chunk: its lines are ``lines`` when already read (to key the cache), else read
    from the log span by span."""
    import pickle

    from pydantic import ValidationError

    from exploreval.core import migrate_record
    from exploreval.metrics import RunPartials
    from exploreval.store import parse_log_line, validation_issue

    rows: list[dict[str, Any]] = []
    errors: list[dict[str, Any]] = []
    partials = RunPartials()
    issues: list[LogIssue] = []
    with gc_paused(), open(log, "rb") as fh:
        for index, (offset, length, line) in enumerate(spans):
            if lines is None:
                fh.seek(offset)
                raw = fh.read(length)
            else:
                raw = lines[index]
            data = parse_log_line(raw, line, issues)
            if data is None:
                continue
            try:
                record = EpisodeRecord.model_validate(migrate_record(data))
            except ValidationError as exc:
                issues.append(validation_issue(line, exc))
                continue
            except ValueError as exc:
                issues.append(LogIssue(line, str(exc)))
                continue
            if record.status == "ok":
                rows.append(episode_row(record, run_id))
                partials.add(record)
            else:
                errors.append(identity_row(record, run_id))
    partials.compact()

    def pickled(value: Any) -> bytes:
        return pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)

    payloads = {
        SPILL_ROWS: pickled(pd.DataFrame(rows)),
        SPILL_ERRORS: pickled(pd.DataFrame(errors)),
    }
    for key, frames in partials.frames.items():
        payloads[SPILL_FRAME + key] = pickled(
            frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)
        )
    for key, values in partials.summaries.items():
        payloads[SPILL_LIST + key] = pickled(values)
    return _ChunkScore(payloads, partials.families, issues)
