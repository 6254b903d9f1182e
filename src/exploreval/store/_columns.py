"""Columnar tables beside the episode log: one row per episode, one row per step, as Parquet.

``episodes.jsonl`` stays the append-only, kill-9-safe source of truth. These tables are derived
from it, incrementally (:meth:`RunColumns.sync` reads only the bytes appended since the last
sync), so ``score``, ``report``, ``compare``, ``exploreval sql`` and anyone's DuckDB, Polars,
Spark or Ray Data read the columns they need instead of parsing every record::

    RUN_DIR/columns/
      _state.json                         schema version, how much of the log is in, log identity
      episodes/part-<log offset>.parquet  one row per log line holding an episode record
      steps/part-<log offset>.parquet     one row per step of those records

**Kept current by sync, not by the runner** (measured, docs/records.md "Columns"): appending a
Parquet row group per finished episode would put small files and a Parquet write on the runner's
hot path for every episode (``episodes.jsonl`` already makes them durable); a sync ingests
thousands of episodes per part at about the speed the log can be parsed, and runs where the
tables are read (``score``, ``sql``, ``open_run``): an old run gets its tables on first use, a
run still being written gets the new lines only, a Ray run's appends like any other.

**Latest records.** A re-run after an error appends a new line for the same episode; every line
is a row (``line``, ``log_offset``, ``log_length`` say where it is), and the views ``episodes`` /
``steps`` of :meth:`RunColumns.connect` keep only each episode's latest record (the latest ``ok``
one if there is one, else the latest), as ``RunDir.latest_records`` does.

**Crash safety.** A part is named by the log offset its first line starts at and written to a
temporary name, then renamed; ``_state.json`` is rewritten (atomically) after each part. A sync
first deletes parts at or past the recorded offset (left by a crash between the two), so a line is
never in two parts. A log that was rewritten (shorter, or a different first 64 kB) is ingested
from the start again, and so are tables a part of which is unreadable or missing (said with a
``ColumnsRebuiltWarning``): they are derived, the log is the truth.

**Step info as columns.** Each key of the steps' ``info`` becomes a column ``info_<key>`` of its
own Arrow type (scalars, lists such as ``info_pos: list<int64>``, objects as structs), inferred by
Arrow; a key whose values do not share one type within a part is stored as JSON text.
``agent_info`` is JSON text. The column schema is versioned
(``COLUMNS_SCHEMA_VERSION``): tables of another version are rebuilt from the log on first use.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from exploreval.core import (
    EpisodeRecord,
    bound_process_pool,
    gc_paused,
    migrate_record,
    unique_tmp,
    user_cache_dir,
    write_atomic,
)
from exploreval.store._errors import (
    ColumnsRebuiltWarning,
    StoreError,
    describe_os_error,
)
from exploreval.store._run import LogIssue, RunDir, parse_log_line

if TYPE_CHECKING:
    import duckdb
from exploreval.store._columns_batch import CONVERSION_ERRORS, ColumnBatch
from exploreval.store._columns_views import quiet_connection, register_views

#: Bump when the tables' columns (or ``_state.json``) change: tables of another version are
#: rebuilt from the log on first use (version 2: the state keeps the unreadable lines).
COLUMNS_SCHEMA_VERSION = 2
COLUMNS = "columns"
STATE = "_state.json"
#: Finished parts whose footer was read and found sound, by their ``stat`` (size, mtime, inode):
#: a later sync reads a footer again only when its part changed (a 1M run's 2,000 footers cost
#: half a second on every query; their ``stat`` a hundredth).
VERIFIED = ".verified.json"
#: Unreadable lines kept in ``_state.json`` (every one is counted).
MAX_STORED_ISSUES = 1000
#: Log bytes from which a sync runs in worker processes (about 16,000 episodes of ~16 kB).
PARALLEL_SYNC_BYTES = 256 * 1024 * 1024
#: What a sync tells whoever watches it: ``(bytes put in, bytes to put in)`` of the log.
SyncProgress = Callable[[int, int], None]
#: Episodes per part (and per Arrow batch in memory): bounds a sync's memory.
PART_EPISODES = 2048
#: ...or steps per part, whichever comes first.
PART_STEPS = 262_144
_HEAD = 65536

#: Scalar columns of an episode row, in order (besides the JSON text columns).
EPISODE_COLUMNS = (
    "run_id", "episode_id", "line", "log_offset", "log_length", "schema_version", "env_id",
    "family", "preset", "seed", "repeat", "agent", "agent_kind", "status", "error", "n_steps",
    "n_tasks", "tasks_won", "success", "total_reward", "terminated", "truncated", "max_steps",
    "prompt_tokens", "completion_tokens", "reasoning_tokens", "calls", "cached_calls", "cost_usd",
    "unpriced_calls", "started_at", "ended_at",
)  # fmt: skip
STEP_COLUMNS = (
    "episode_id", "line", "t", "phase", "task", "observation", "action", "valid",
    "invalid_reason", "raw_output", "reasoning", "reward", "terminated", "truncated",
    "prompt_tokens", "completion_tokens", "reasoning_tokens", "latency_s", "retries", "cached",
)  # fmt: skip


@dataclass
class SyncStats:
    """What one sync did."""

    episodes: int = 0
    steps: int = 0
    parts: int = 0
    rebuilt: bool = False
    issues: list[LogIssue] = field(default_factory=list)


def _head_hash(path: Path, length: int) -> str:
    """sha256 of the log's first ``length`` bytes (what the tables were built from)."""
    with open(path, "rb") as fh:
        return hashlib.sha256(fh.read(length)).hexdigest()


def columns_cache_root() -> Path:
    """Where the tables of runs that cannot be written to are kept:
    ``$EXPLOREVAL_COLUMNS_CACHE``, else ``$XDG_CACHE_HOME/exploreval/columns`` (``~/.cache``)."""
    return user_cache_dir("columns", "EXPLOREVAL_COLUMNS_CACHE")


def _is_current(folder: Path, log: Path) -> bool:
    """Whether the tables in ``folder`` hold the whole log, in this schema version."""
    try:
        state = json.loads((folder / STATE).read_text(encoding="utf-8"))
        size = os.stat(log).st_size
    except (OSError, ValueError):
        return False
    return (
        isinstance(state, dict)
        and state.get("schema_version") == COLUMNS_SCHEMA_VERSION
        and int(state.get("offset", -1)) == size
    )


class RunColumns:
    """The columnar tables of one run directory (module docstring)."""

    def __init__(self, run: RunDir | str | os.PathLike[str]) -> None:
        self.run = run if isinstance(run, RunDir) else RunDir(run)
        self.dir = self._home()

    def _home(self) -> Path:
        """``RUN/columns``, unless the run cannot be written to and has no current tables of
        its own: then a folder of the user's cache named by the run's absolute path
        (``columns_cache_root()``), so a read-only run (an archive, a shared sweep) is queried
        and scored like any other (docs/records.md, "Read-only runs")."""
        local = self.run.path / COLUMNS
        if self.run.writable() or not self.run.path.is_dir():
            return local
        if _is_current(local, self.run.episodes_path):
            return local  # shipped with its tables, up to date: read them where they are
        key = hashlib.sha256(str(self.run.path.resolve()).encode()).hexdigest()[:24]
        return columns_cache_root() / key

    @property
    def episodes_dir(self) -> Path:
        return self.dir / "episodes"

    @property
    def steps_dir(self) -> Path:
        return self.dir / "steps"

    def _state(self) -> dict[str, Any] | None:
        try:
            data = json.loads((self.dir / STATE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def _write_state(self, state: dict[str, Any]) -> None:
        write_atomic(self.dir / STATE, lambda tmp: Path(tmp).write_text(json.dumps(state)))

    def _reset(self) -> None:
        import shutil

        for sub in (self.episodes_dir, self.steps_dir):
            shutil.rmtree(sub, ignore_errors=True)
        for name in (STATE, VERIFIED):
            with contextlib.suppress(FileNotFoundError):
                (self.dir / name).unlink()

    def sync(
        self, *, part_episodes: int = PART_EPISODES, progress: SyncProgress | None = None
    ) -> SyncStats:
        """Bring the tables up to the log's last complete line; returns what was added. A write
        that fails (a full disk) raises ``StoreError`` saying why; what was in stays in, and
        the next sync goes on from there. ``progress(done, total)`` hears the bytes of the log
        put in so far, of those this sync has to read (a million episodes take minutes)."""
        try:
            with self._sync_lock():
                return self._sync(part_episodes, progress)
        except StoreError:
            raise
        except OSError as exc:
            raise describe_os_error("write the column tables in", self.dir, exc) from exc

    @contextlib.contextmanager
    def _sync_lock(self) -> Iterator[None]:
        """One sync of these tables at a time, across processes (``flock`` on
        ``columns/.sync.lock``): a viewer, a score and a query of a run being written each sync
        it, and two syncs at once removed each other's parts in flight. A sync that waited finds
        the tables current and returns at once. Tables that cannot be written to (a read-only
        run's own, current ones) are only read: no lock is needed or taken."""
        import fcntl

        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.dir / ".sync.lock", os.O_RDWR | os.O_CREAT, 0o644)
        except OSError:
            yield  # not writable here: nothing to write, nothing to guard
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # releases the lock

    def _sync(self, part_episodes: int, progress: SyncProgress | None = None) -> SyncStats:
        stats = SyncStats()
        log = self.run.episodes_path
        if not log.exists():
            raise StoreError(f"{self.run.path} has no {log.name}: nothing to put in columns")
        try:
            size = os.stat(log).st_size
            state = self._state()
            known = int(state.get("head_length", 0)) if state else 0
            same_head = (
                state is not None and known <= size and state.get("head") == _head_hash(log, known)
            )
        except OSError as exc:
            raise describe_os_error("read", log, exc) from exc
        current = (
            state is not None
            and state.get("schema_version") == COLUMNS_SCHEMA_VERSION
            and same_head
            and int(state.get("offset", 0)) <= size
        )
        damage = self._damage(int(state.get("offset", 0))) if current and state else None
        if damage is not None:
            import warnings

            warnings.warn(
                f"{damage}; the column tables of {self.run.path} were rebuilt from {log.name}",
                ColumnsRebuiltWarning,
                stacklevel=2,
            )
        if not current or damage is not None:
            stats.rebuilt = state is not None
            self._reset()
            state = {"offset": 0, "line": 0}
        assert state is not None
        offset, line = int(state["offset"]), int(state["line"])
        known_issues: list[dict[str, Any]] = list(state.get("issues", []))
        if offset == size:
            return stats
        self.episodes_dir.mkdir(parents=True, exist_ok=True)
        self.steps_dir.mkdir(parents=True, exist_ok=True)
        self._drop_parts_from(offset)
        run_id = ""
        with contextlib.suppress(StoreError):
            run_id = self.run.read_manifest().run_id
        from exploreval.core import analysis_workers

        workers = analysis_workers(size - offset, PARALLEL_SYNC_BYTES)
        first = offset
        if progress is not None:
            progress(0, size - first)
        if workers > 1:
            position, line = self._sync_parallel(
                offset, line, size, run_id, part_episodes, workers, stats, progress
            )
            self._write_state(
                self._new_state(log, position, line, known_issues + _dicts(stats.issues))
            )
            if progress is not None:
                progress(position - first, size - first)
            return stats

        def checkpoint(position: int, line: int) -> None:
            self._write_state(
                self._new_state(log, position, line, known_issues + _dicts(stats.issues))
            )
            if progress is not None:
                progress(position - first, size - first)

        _ingest(self, offset, None, line, run_id, part_episodes, stats, checkpoint)
        return stats

    def _sync_parallel(
        self,
        offset: int,
        line: int,
        size: int,
        run_id: str,
        part_episodes: int,
        workers: int,
        stats: SyncStats,
        progress: SyncProgress | None = None,
    ) -> tuple[int, int]:
        """Ingest ``[offset, size)`` as ``workers`` byte ranges cut at line starts, one process
        each (spawned: they import only this module). The state is written once, after every
        range is in: a crash leaves parts past the recorded offset, which the next sync drops.
        ``progress`` is told, twice a second, how far the parts written so far reach."""
        from concurrent.futures import wait

        starts, lines = _split_at_lines(self.run.episodes_path, offset, size, line, workers)
        ends: list[int | None] = [*starts[1:], None]
        with bound_process_pool(len(starts), "spawn") as pool:
            futures = [
                pool.submit(
                    _ingest_range, str(self.run.path), start, end, first, run_id, part_episodes
                )
                for start, end, first in zip(starts, ends, lines, strict=True)
            ]
            running = set(futures)
            while progress is not None and running:
                _, running = wait(running, timeout=0.5)
                progress(_bytes_in_parts(self.episodes_dir, starts, size), size - offset)
            results = [f.result() for f in futures]
        position, last_line = offset, line
        for part_stats, end_position, end_line in results:
            stats.episodes += part_stats.episodes
            stats.steps += part_stats.steps
            stats.parts += part_stats.parts
            stats.issues += part_stats.issues
            position, last_line = end_position, end_line
        return position, last_line

    @staticmethod
    def _new_state(
        log: Path, offset: int, line: int, issues: list[dict[str, Any]]
    ) -> dict[str, Any]:
        length = min(offset, _HEAD)
        return {
            "schema_version": COLUMNS_SCHEMA_VERSION, "offset": offset, "line": line,
            "head_length": length, "head": _head_hash(log, length),
            "issues": issues[:MAX_STORED_ISSUES], "issue_count": len(issues),
        }  # fmt: skip

    def state(self) -> dict[str, Any]:
        """``_state.json``: how much of the log is in (``offset``, ``line``), its identity, the
        schema version and the unreadable lines ({} before the first sync)."""
        return dict(self._state() or {})

    def issues(self) -> list[LogIssue]:
        """Lines of the log that could not be put in the tables (not JSON, not an episode
        record, a newer schema), as every sync so far found them (the first
        ``MAX_STORED_ISSUES``)."""
        state = self._state() or {}
        return [LogIssue(int(i["line"]), str(i["message"])) for i in state.get("issues", [])]

    def _damage(self, offset: int) -> str | None:
        """What is wrong with the finished parts (those before ``offset``, the log bytes the
        state says are in): one that is not a readable Parquet file (its footer is read, a few
        kB, unless ``VERIFIED`` holds the part's unchanged ``stat``), or one whose partner in
        the other table is gone; None when nothing is. Parts at or past ``offset`` are a
        crash's leftovers or another sync's, which a sync drops anyway."""
        import pyarrow.parquet as pq

        verified = self._verified()
        sound: dict[str, list[int]] = {}
        kinds: dict[str, set[str]] = {}
        for sub in (self.episodes_dir, self.steps_dir):
            for part in sorted(sub.glob("part-*.parquet")) if sub.is_dir() else []:
                try:
                    start = int(part.stem.split("-", 1)[1])
                except ValueError:
                    continue
                if start >= offset:
                    continue
                kinds.setdefault(part.name, set()).add(sub.name)
                key = f"{sub.name}/{part.name}"
                st = part.stat()
                signature = [st.st_size, st.st_mtime_ns, st.st_ino]
                if verified.get(key) != signature:
                    try:
                        pq.read_metadata(part)
                    except Exception as exc:  # a truncated or foreign file: arrow says why
                        return f"{part} is not a readable Parquet file ({exc})"
                sound[key] = signature
        for name, present in sorted(kinds.items()):
            for missing in sorted({self.episodes_dir.name, self.steps_dir.name} - present):
                return f"{self.dir / missing / name} is missing"
        if sound != verified:
            with contextlib.suppress(OSError):  # a cache: tables read in place stay unwritten
                write_atomic(
                    self.dir / VERIFIED, lambda tmp: Path(tmp).write_text(json.dumps(sound))
                )
        return None

    def _verified(self) -> dict[str, list[int]]:
        try:
            data = json.loads((self.dir / VERIFIED).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def _drop_parts_from(self, offset: int) -> None:
        for sub in (self.episodes_dir, self.steps_dir):
            for part in sub.glob("part-*.parquet"):
                try:
                    start = int(part.stem.split("-", 1)[1])
                except ValueError:
                    continue
                if start >= offset:
                    part.unlink(missing_ok=True)

    def _flush(self, batch: ColumnBatch, stats: SyncStats) -> None:
        import pyarrow.parquet as pq

        if not batch.n_episodes:
            return
        try:
            episodes, steps = batch.tables()
        except CONVERSION_ERRORS:
            # a record whose fields do not fit their columns (a step's ``t`` that is text): the
            # records are checked one by one, the unfit ones reported and left out, as a read
            # of the log reports and skips them
            batch.drop_unfit(stats.issues)
            if not batch.n_episodes:
                return
            episodes, steps = batch.tables()
        name = f"part-{batch.start:016d}.parquet"
        for table, target in ((steps, self.steps_dir / name), (episodes, self.episodes_dir / name)):
            tmp = unique_tmp(target)
            try:
                pq.write_table(table, tmp, compression="zstd")
                os.replace(tmp, target)
            finally:  # a full disk leaves no half-written temporary behind
                tmp.unlink(missing_ok=True)
        stats.episodes += batch.n_episodes
        stats.steps += batch.n_steps
        stats.parts += 1

    # -- reading ----------------------------------------------------------------------------
    def connect(
        self, con: duckdb.DuckDBPyConnection | None = None, *, prefix: str = ""
    ) -> duckdb.DuckDBPyConnection:
        """A DuckDB connection with this run's views (after a sync): ``episodes`` and ``steps``
        (latest record per episode), ``all_episodes`` and ``all_steps`` (every line), and
        ``results`` when the run has been scored. ``prefix`` names them apart (``a_episodes``)."""
        self.sync()
        con = con or quiet_connection()
        register_views(con, [self], prefix=prefix)
        return con

    def sql(self, query: str) -> duckdb.DuckDBPyRelation:
        """Run ``query`` over this run's views; returns a DuckDB relation (``.df()``,
        ``.to_arrow_table()``, ``.pl()``, ``.fetchall()``)."""
        return self.connect().sql(query)

    def latest_offsets(self) -> list[tuple[int, int]]:
        """(log offset, length) of each episode's latest record, in log order."""
        con = self.connect()
        rows = con.sql("select log_offset, log_length from episodes order by line").fetchall()
        return [(int(a), int(b)) for a, b in rows]

    def record(self, offset: int, length: int) -> EpisodeRecord:
        """The record at ``offset`` in the log (one episode materialised where a person looks
        at it or a metric needs it)."""
        with open(self.run.episodes_path, "rb") as fh:
            fh.seek(offset)
            raw = fh.read(length)
        data = parse_line(raw, 0, None)
        if data is None:
            raise StoreError(f"{self.run.episodes_path}: no record at byte {offset}")
        return EpisodeRecord.model_validate(data)


def _ingest(
    columns: RunColumns,
    offset: int,
    end: int | None,
    line: int,
    run_id: str,
    part_episodes: int,
    stats: SyncStats,
    checkpoint: Any = None,
) -> tuple[int, int]:
    """Put the complete lines of ``[offset, end)`` (``end`` None: to the last complete line)
    into parts; ``checkpoint(position, line)`` after each part. Returns where it stopped."""
    batch = ColumnBatch(offset)
    position = offset
    with gc_paused(), open(columns.run.episodes_path, "rb") as fh:
        fh.seek(offset)
        for raw in fh:
            if end is not None and position >= end:
                break
            if not raw.endswith(b"\n"):
                break  # a line still being written (or torn by a crash): later
            start = position
            position += len(raw)
            line += 1
            data = parse_line(raw, line, stats.issues)
            if data is not None:
                batch.add(data, line, start, len(raw), run_id)
            if batch.n_episodes >= part_episodes or batch.n_steps >= PART_STEPS:
                columns._flush(batch, stats)
                if checkpoint is not None:
                    checkpoint(position, line)
                batch = ColumnBatch(position)
        if batch.n_episodes or position != offset:
            columns._flush(batch, stats)
            if checkpoint is not None:
                checkpoint(position, line)
    return position, line


def _ingest_range(
    run_path: str, start: int, end: int | None, first_line: int, run_id: str, part_episodes: int
) -> tuple[SyncStats, int, int]:
    """One worker's share of a parallel sync (``RunColumns._sync_parallel``)."""
    stats = SyncStats()
    position, line = _ingest(
        RunColumns(run_path), start, end, first_line, run_id, part_episodes, stats
    )
    return stats, position, line


def _bytes_in_parts(folder: Path, starts: Sequence[int], size: int) -> int:
    """How much of the byte ranges starting at ``starts`` (the last one ending at ``size``) the
    parts written so far cover: a part is named by the log offset it starts at, so each range
    is done up to its last part's start (one part behind: a progress figure, not a position)."""
    offsets = []
    with contextlib.suppress(OSError):
        for path in folder.iterdir():
            name = path.name
            if name.startswith("part-") and name.endswith(".parquet") and name[5:-8].isdigit():
                offsets.append(int(name[5:-8]))
    done = 0
    for start, end in zip(starts, [*starts[1:], size], strict=True):
        inside = [o for o in offsets if start <= o < end]
        done += (max(inside) - start) if inside else 0
    return done


def _split_at_lines(
    log: Path, offset: int, size: int, line: int, pieces: int
) -> tuple[list[int], list[int]]:
    """Cut ``[offset, size)`` into about equal byte ranges that start at line starts; returns
    the starts and the number of lines before each (counted, not parsed)."""
    step = (size - offset) // pieces
    starts = [offset]
    with open(log, "rb") as fh:
        for index in range(1, pieces):
            fh.seek(offset + index * step)
            fh.readline()  # to the next line start
            cut = fh.tell()
            if starts[-1] < cut < size:
                starts.append(cut)
        lines = [line]
        for begin, finish in zip(starts, starts[1:], strict=False):
            fh.seek(begin)
            count, left = 0, finish - begin
            while left:
                chunk = fh.read(min(left, 1 << 24))
                count += chunk.count(b"\n")
                left -= len(chunk)
            lines.append(lines[-1] + count)
    return starts, lines


def _dicts(issues: list[LogIssue]) -> list[dict[str, Any]]:
    return [{"line": i.line, "message": i.message} for i in issues]


def parse_line(raw: bytes, line: int, issues: list[LogIssue] | None) -> dict[str, Any] | None:
    data = parse_log_line(raw, line, issues)
    if data is None:
        return None
    if not isinstance(data.get("episode_id"), str):
        if issues is not None:
            issues.append(LogIssue(line, "not an episode record (no episode_id)"))
        return None
    try:
        return migrate_record(data)
    except ValueError as exc:
        if issues is not None:
            issues.append(LogIssue(line, str(exc)))
        return None


def open_columns(paths: Sequence[str | os.PathLike[str] | RunDir]) -> duckdb.DuckDBPyConnection:
    """One DuckDB connection over several runs' tables (synced): views ``episodes``,
    ``steps``, ``all_episodes``, ``all_steps`` and ``results``, each with a ``run_dir`` column,
    so a sweep of many runs is one dataset."""
    runs = [RunColumns(p) for p in paths]
    for run in runs:
        if not run.run.exists():
            raise StoreError(f"{run.run.path} is not a run directory (no manifest.json)")
        run.sync()
    con = quiet_connection()
    register_views(con, runs, label=True)
    return con


def iter_log_lines(path: Path, spans: Sequence[tuple[int, int]]) -> Iterator[bytes]:
    """The raw lines at ``spans`` (offset, length) of the log, in the given order."""
    with open(path, "rb") as fh:
        for offset, length in spans:
            fh.seek(offset)
            yield fh.read(length)
