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
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

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
    UnreadableResultsWarning,
    describe_os_error,
)
from exploreval.store._run import LogIssue, RunDir, parse_log_line, validation_issue

if TYPE_CHECKING:
    import duckdb
    import numpy as np
    import numpy.typing as npt
    import pyarrow as pa

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
#: What Arrow raises when a value does not fit its column's type.
_CONVERSION_ERRORS: tuple[type[BaseException], ...] = (TypeError, ValueError, OverflowError)
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


def _json_text(value: Any) -> str:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()


class _Batch:
    """The parsed records of one part; turned into Arrow columns at once (``tables``), mostly by
    Arrow's own conversion of the parsed dicts, not a Python loop per step and column."""

    def __init__(self, start: int) -> None:
        self.start = start
        self.records: list[dict[str, Any]] = []
        self.where: list[tuple[int, int, int]] = []  # (line, offset, length)
        self.n_episodes = 0
        self.n_steps = 0

    def add(self, data: dict[str, Any], line: int, offset: int, length: int, run_id: str) -> None:
        if not data.get("run_id"):
            data["run_id"] = run_id
        self.records.append(data)
        self.where.append((line, offset, length))
        self.n_episodes += 1
        self.n_steps += len(data.get("steps") or ())

    def drop_unfit(self, issues: list[LogIssue]) -> None:
        """Leave out the records that are not valid episode records (each reported by line,
        as a read of the log reports it) and store the others as validated, so a value the
        record model coerces fits its column."""
        from pydantic import ValidationError

        keep: list[int] = []
        for index, (data, (line, _, _)) in enumerate(zip(self.records, self.where, strict=True)):
            try:
                # what a read of the log would make of it: coerced values ("3" for a step's t)
                # are stored as the record has them
                fitted = EpisodeRecord.model_validate(data).model_dump(mode="json")
                fitted["run_id"] = data.get("run_id") or fitted.get("run_id")
                _Batch._alone(fitted).tables()
                self.records[index] = fitted
            except ValidationError as exc:
                issues.append(validation_issue(line, exc))
                continue
            except _CONVERSION_ERRORS as exc:
                issues.append(LogIssue(line, f"does not fit the column types: {exc}"))
                continue
            keep.append(index)
        self.records = [self.records[i] for i in keep]
        self.where = [self.where[i] for i in keep]
        self.n_episodes = len(self.records)
        self.n_steps = sum(len(r.get("steps") or ()) for r in self.records)

    @staticmethod
    def _alone(data: dict[str, Any]) -> _Batch:
        batch = _Batch(0)
        batch.records, batch.where = [data], [(0, 0, 0)]
        batch.n_episodes, batch.n_steps = 1, len(data.get("steps") or ())
        return batch

    def tables(self) -> tuple[pa.Table, pa.Table]:
        import numpy as np
        import pyarrow as pa

        records = self.records
        lines = np.fromiter((w[0] for w in self.where), np.int64, len(self.where))
        episodes = _struct_table(records, "episode")
        tasks = [r.get("tasks") or [] for r in records]
        episodes = episodes.append_column("line", pa.array(lines))
        for name, values in (
            ("log_offset", [w[1] for w in self.where]),
            ("log_length", [w[2] for w in self.where]),
            ("n_steps", [len(r.get("steps") or ()) for r in records]),
            ("n_tasks", [len(t) for t in tasks]),
            (
                "tasks_won",
                [sum(1 for x in t if isinstance(x, dict) and x.get("success")) for t in tasks],
            ),  # fmt: skip
        ):
            episodes = episodes.append_column(name, pa.array(values, pa.int64()))
        texts: list[tuple[str, list[Any]]] = [
            ("env_options", [r.get("env_options") or {} for r in records]),
            ("agent_config", [(r.get("agent") or {}).get("config") or {} for r in records]),
            ("reset_info", [r.get("reset_info") or {} for r in records]),
            ("ground_truth", [r.get("ground_truth") or {} for r in records]),
            ("tasks", tasks),
        ]
        for name, objects in texts:
            episodes = episodes.append_column(name, pa.array([_json_text(v) for v in objects]))
        steps_flat = [step for r in records for step in (r.get("steps") or ())]
        counts = np.fromiter((len(r.get("steps") or ()) for r in records), np.int64, len(records))
        steps = _struct_table(steps_flat, "step")
        steps = steps.add_column(0, "episode_id", pa.array(
            np.repeat(np.array([r["episode_id"] for r in records], dtype=object), counts),
            pa.string()))  # fmt: skip
        steps = steps.add_column(1, "line", pa.array(np.repeat(lines, counts)))
        for name, column in _info_columns([s.get("info") or {} for s in steps_flat]):
            steps = steps.append_column(name, column)
        steps = steps.append_column("agent_info", pa.array(
            [_json_text(s["agent_info"]) if s.get("agent_info") else None for s in steps_flat],
            pa.string()))  # fmt: skip
        return episodes, steps


def _fields() -> tuple[Any, Any]:
    import pyarrow as pa

    usage = pa.struct([("prompt_tokens", pa.int64()), ("completion_tokens", pa.int64()),
                       ("reasoning_tokens", pa.int64()), ("calls", pa.int64()),
                       ("cached_calls", pa.int64()), ("cost_usd", pa.float64()),
                       ("unpriced_calls", pa.int64())])  # fmt: skip
    agent = pa.struct([("name", pa.string()), ("kind", pa.string())])
    episode = pa.struct([
        ("run_id", pa.string()), ("episode_id", pa.string()), ("schema_version", pa.int64()),
        ("env_id", pa.string()), ("family", pa.string()), ("preset", pa.string()),
        ("seed", pa.int64()), ("repeat", pa.int64()), ("agent", agent), ("status", pa.string()),
        ("error", pa.string()), ("success", pa.bool_()), ("total_reward", pa.float64()),
        ("terminated", pa.bool_()), ("truncated", pa.bool_()), ("max_steps", pa.int64()),
        ("usage", usage), ("started_at", pa.string()), ("ended_at", pa.string()),
    ])  # fmt: skip
    step = pa.struct([
        ("t", pa.int64()), ("phase", pa.string()), ("task", pa.int64()),
        ("observation", pa.string()), ("action", pa.string()), ("valid", pa.bool_()),
        ("invalid_reason", pa.string()), ("raw_output", pa.string()),
        ("reasoning", pa.string()), ("reward", pa.float64()), ("terminated", pa.bool_()),
        ("truncated", pa.bool_()), ("usage", usage), ("latency_s", pa.float64()),
        ("retries", pa.int64()), ("cached", pa.bool_()),
    ])  # fmt: skip
    return episode, step


_STRUCTS: dict[str, Any] = {}


def _struct_table(rows: list[dict[str, Any]], kind: str) -> pa.Table:
    """``rows`` (parsed dicts) as a flat table of the struct's fields: nested ``agent`` and
    ``usage`` become ``agent``/``agent_kind`` and the usage columns (times stay ISO text, which
    DuckDB casts: ``started_at::timestamptz``)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if not _STRUCTS:
        _STRUCTS["episode"], _STRUCTS["step"] = _fields()
    struct = _STRUCTS[kind]
    array = pa.array(rows, type=struct, from_pandas=False)
    columns: dict[str, Any] = {}
    for index, member in enumerate(struct):
        child = array.field(index)
        if member.name == "agent":
            columns["agent"] = child.field(0)
            columns["agent_kind"] = child.field(1)
        elif member.name == "usage":
            for j, sub in enumerate(member.type):
                columns[sub.name] = child.field(j)
        else:
            columns[member.name] = child
    for name, default in (("status", "ok"), ("phase", "task")):
        if name in columns:
            columns[name] = pc.fill_null(columns[name], default)
    for name in ("success", "terminated", "truncated", "cached"):
        if name in columns:
            columns[name] = pc.fill_null(columns[name], False)
    if "valid" in columns:
        columns["valid"] = pc.fill_null(columns["valid"], True)
    for name in ("repeat", "task", "retries"):
        if name in columns:
            columns[name] = pc.fill_null(columns[name], 0)
    for name in ("total_reward", "reward", "latency_s"):
        if name in columns:
            columns[name] = pc.fill_null(columns[name], 0.0)
    return pa.table(columns)


def _info_columns(infos: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    """Step infos as ``info_<key>`` columns of their own Arrow types (lists and objects too:
    ``info_pos`` is ``list<int64>``), inferred by Arrow in one pass; a key whose values do not
    share one type in the part (two families' ``action``) is stored as JSON text."""
    import pyarrow as pa

    try:
        array = pa.array(infos)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, OverflowError):
        pass
    else:
        if pa.types.is_struct(array.type):
            return sorted(
                (f"info_{field.name}", array.field(i)) for i, field in enumerate(array.type)
            )
    keys: dict[str, None] = {}
    for info in infos:
        keys.update(dict.fromkeys(info))
    out: list[tuple[str, Any]] = []
    for key in keys:
        values = [info.get(key) for info in infos]
        try:
            column = pa.array(values)
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, OverflowError):
            column = pa.array([None if v is None else _json_text(v) for v in values], pa.string())
        out.append((f"info_{key}", column))
    return sorted(out)


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

    def _flush(self, batch: _Batch, stats: SyncStats) -> None:
        import pyarrow.parquet as pq

        if not batch.n_episodes:
            return
        try:
            episodes, steps = batch.tables()
        except _CONVERSION_ERRORS:
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
        data = _parse(raw, 0, None)
        if data is None:
            raise StoreError(f"{self.run.episodes_path}: no record at byte {offset}")
        return EpisodeRecord.model_validate(data)


class ChainedRecords(Sequence[EpisodeRecord]):
    """Several runs' records as one sequence (each part a list or ``LazyRecords``)."""

    def __init__(self, parts: Sequence[Sequence[EpisodeRecord]]) -> None:
        self.parts = [p for p in parts if len(p)]

    def __len__(self) -> int:
        return sum(len(p) for p in self.parts)

    def __iter__(self) -> Iterator[EpisodeRecord]:
        for part in self.parts:
            yield from part

    # -> Any: an index gives one record, a slice a list of them (as a Sequence does)
    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return list(self)[index]
        if index < 0:
            index += len(self)
        for part in self.parts:
            if index < len(part):
                return part[index]
            index -= len(part)
        raise IndexError(index)

    def where(self, family: str) -> ChainedRecords:
        """The records of one family; lazy parts are filtered without reading."""
        return ChainedRecords(
            [
                p.where(family)
                if isinstance(p, LazyRecords)
                else [r for r in p if family == "*" or r.family == family]
                for p in self.parts
            ]
        )

    def clear(self) -> None:
        for part in self.parts:
            if hasattr(part, "clear"):
                part.clear()
        self.parts = []


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
    batch = _Batch(offset)
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
            data = _parse(raw, line, stats.issues)
            if data is not None:
                batch.add(data, line, start, len(raw), run_id)
            if batch.n_episodes >= part_episodes or batch.n_steps >= PART_STEPS:
                columns._flush(batch, stats)
                if checkpoint is not None:
                    checkpoint(position, line)
                batch = _Batch(position)
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


class LazyRecords(Sequence[EpisodeRecord]):
    """Episode records that stay in the log until used: a ``Sequence`` of the records at some
    byte spans of ``episodes.jsonl``, each parsed and validated when iterated or indexed and
    dropped after. What ``score`` hands report sections and run metrics that want records, so
    that a million-episode run never has a million records in memory at once (the spans are
    two int64 arrays: 16 bytes an episode).

    ``families`` (one per span) lets ``where`` keep a family without reading; ``rename`` maps
    agent names as the records are made (a report of several runs relabels clashing agents)."""

    def __init__(
        self,
        log: Path,
        spans: Sequence[tuple[int, int]] | Any,
        families: Sequence[str] | Any | None = None,
        rename: dict[str, str] | None = None,
    ) -> None:
        import numpy as np

        self.log = Path(log)
        pairs = np.asarray(spans, dtype=np.int64).reshape(-1, 2)
        self._offsets = np.ascontiguousarray(pairs[:, 0])
        self._lengths = np.ascontiguousarray(pairs[:, 1])
        self._families = None if families is None else np.asarray(families, dtype=object)
        self._rename = dict(rename or {})

    def __len__(self) -> int:
        return int(self._offsets.size)

    def __bool__(self) -> bool:
        return bool(self._offsets.size)

    def _make(self, raw: bytes, offset: int) -> EpisodeRecord:
        data = _parse(raw, 0, None)
        if data is None:
            raise StoreError(f"{self.log}: no episode record at byte {offset}")
        record = EpisodeRecord.model_validate(data)
        if record.agent.name in self._rename:
            agent = record.agent.model_copy(update={"name": self._rename[record.agent.name]})
            record = record.model_copy(update={"agent": agent})
        return record

    def __iter__(self) -> Iterator[EpisodeRecord]:
        if not self._offsets.size:
            return
        # lists taken now: a clear() while iterating does not change what this pass reads
        offsets, lengths = self._offsets.tolist(), self._lengths.tolist()
        with open(self.log, "rb") as fh:
            for offset, length in zip(offsets, lengths, strict=True):
                fh.seek(offset)
                yield self._make(fh.read(length), offset)

    def _subset(self, keep: Any) -> LazyRecords:
        import numpy as np

        pairs = np.stack([self._offsets[keep], self._lengths[keep]], axis=1)
        families = self._families[keep] if self._families is not None else None
        return LazyRecords(self.log, pairs, families, self._rename)

    # -> Any: an index gives one record (read now), a slice a LazyRecords of the spans
    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return self._subset(index)
        offset = int(self._offsets[index])
        with open(self.log, "rb") as fh:
            fh.seek(offset)
            return self._make(fh.read(int(self._lengths[index])), offset)

    @property
    def spans(self) -> list[tuple[int, int]]:
        return list(zip(self._offsets.tolist(), self._lengths.tolist(), strict=True))

    @property
    def offsets(self) -> npt.NDArray[np.int64]:
        """The records' byte offsets in the log."""
        return self._offsets

    @property
    def rename(self) -> dict[str, str]:
        """Agent names changed as records are made (``renamed``)."""
        return dict(self._rename)

    def without(self, offsets: Collection[int]) -> LazyRecords:
        """These records but those at ``offsets`` (lines that failed validation, say)."""
        import numpy as np

        if not offsets:
            return self
        return self._subset(~np.isin(self._offsets, np.fromiter(offsets, np.int64)))

    def step_table(self, step_columns: Sequence[str]) -> pa.Table | None:
        """One row per step of these records, in the records' order then step order: ``order``
        (the record's index here) and the ``step_columns``. One DuckDB query over the run's
        Parquet tables, no record parsed: what a report section reads instead of the records.
        None when the tables lack a column asked for (an older run: read the records)."""
        return self._query(
            [f's."{c}"' for c in step_columns],
            "join all_steps s on s.episode_id = e.episode_id and s.line = e.line",
            "order by w.order, s.t",
        )

    def episode_table(self, episode_columns: Sequence[str]) -> pa.Table | None:
        """One row per record, in order: ``order`` and the ``episode_columns`` of its row of the
        episode table (what ``step_table``'s steps belong to, without repeating it per step)."""
        return self._query([f'e."{c}"' for c in episode_columns], "", "order by w.order")

    def _query(self, picked: list[str], join: str, order: str) -> pa.Table | None:
        import duckdb
        import pyarrow as pa

        if not len(self):
            return None
        con = RunColumns(self.log.parent).connect()
        try:
            wanted = pa.table(
                {"log_offset": pa.array(self._offsets), "order": pa.array(range(len(self)))}
            )
            con.register("wanted", wanted)
            return con.sql(
                f"select {', '.join(['w.order', *picked])} from wanted w "
                f"join all_episodes e using (log_offset) {join} {order}"
            ).to_arrow_table()
        except duckdb.BinderException:
            return None
        finally:
            con.close()

    def families(self) -> set[str]:
        if self._families is not None:
            return {str(f) for f in set(self._families.tolist())}
        return {r.family for r in self}

    def where(self, family: str) -> LazyRecords:
        """The records of one family (``"*"``: all), without reading any."""
        if family == "*":
            return self
        if self._families is None:
            raise ValueError("these records were made without their families")
        return self._subset(self._families == family)

    def renamed(self, rename: dict[str, str]) -> LazyRecords:
        copy = self._subset(slice(None))
        copy._rename = {**self._rename, **rename}
        return copy

    def clear(self) -> None:
        """Forget the spans (what ``list.clear`` does for a list of records)."""
        self._offsets = self._offsets[:0]
        self._lengths = self._lengths[:0]
        if self._families is not None:
            self._families = self._families[:0]


def _parse(raw: bytes, line: int, issues: list[LogIssue] | None) -> dict[str, Any] | None:
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


_LATEST = """
    select * from {all} qualify row_number() over (
        partition by {key}
        order by (status = 'ok') desc, line desc) = 1
"""


def register_views(
    con: Any, runs: Sequence[RunColumns], *, prefix: str = "", label: bool = False
) -> None:
    """Create the ``episodes`` / ``steps`` / ``all_*`` / ``results`` views over ``runs``
    (several runs: one dataset, with a ``run_dir`` column when ``label``)."""

    def source(kind: str) -> str:
        parts = []
        for run in runs:
            files = sorted((run.dir / kind).glob("part-*.parquet"))
            if not files:
                continue
            listing = ", ".join(f"'{_quote(str(f))}'" for f in files)
            tag = f", '{_quote(str(run.run.path))}' as run_dir" if label else ""
            parts.append(f"select *{tag} from read_parquet([{listing}], union_by_name=true)")
        return " union all by name ".join(parts) if parts else ""

    for kind in ("episodes", "steps"):
        body = source(kind)
        if not body:
            body = _EMPTY[kind]
        con.sql(f'create or replace view "{prefix}all_{kind}" as {body}')
    con.sql(
        f'create or replace view "{prefix}episodes" as '
        + _LATEST.format(
            all=f'"{prefix}all_episodes"', key="run_dir, episode_id" if label else "episode_id"
        )
    )
    con.sql(
        f'create or replace view "{prefix}steps" as select s.* from "{prefix}all_steps" s '
        f'semi join "{prefix}episodes" e on s.episode_id = e.episode_id and s.line = e.line'
        + (" and s.run_dir = e.run_dir" if label else "")
    )
    scored = [r for r in runs if r.run.results_path.exists() and _readable_results(r.run)]
    if scored:
        listing = ", ".join(f"'{_quote(str(r.run.results_path))}'" for r in scored)
        con.sql(
            f'create or replace view "{prefix}results" as '
            f"select * from read_parquet([{listing}], union_by_name=true)"
        )


def _readable_results(run: RunDir) -> bool:
    """Whether ``results.parquet`` reads (its footer); if not, say so: the ``results`` view
    leaves it out, rather than every query of the run failing on a file it may not use."""
    import warnings

    import pyarrow.parquet as pq

    try:
        pq.read_metadata(run.results_path)
    except Exception as exc:  # torn, or not Parquet: arrow says why
        warnings.warn(
            f"{run.results_path} is not a readable Parquet file ({exc}); the results view leaves "
            f"it out until `exploreval score {run.path}` writes it again",
            UnreadableResultsWarning,
            stacklevel=3,
        )
        return False
    return True


_EMPTY = {
    "episodes": "select null::varchar as episode_id, null::bigint as line, "
    "null::varchar as status where false",
    "steps": "select null::varchar as episode_id, null::bigint as line, null::bigint as t "
    "where false",
}


def _quote(text: str) -> str:
    return text.replace("'", "''")


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


def quiet_connection() -> duckdb.DuckDBPyConnection:
    """A new in-memory DuckDB connection with DuckDB's progress bar off. DuckDB draws the bar on
    stdout, where a query's results go (``exploreval sql RUN ... > out.csv``, a score's table),
    once a query passes two seconds, as queries over a million episodes do; exploreval shows
    its own progress on stderr. ``set enable_progress_bar = true`` turns it back on."""
    import duckdb

    con = duckdb.connect()
    con.execute("set enable_progress_bar = false")
    return con


def iter_log_lines(path: Path, spans: Sequence[tuple[int, int]]) -> Iterator[bytes]:
    """The raw lines at ``spans`` (offset, length) of the log, in the given order."""
    with open(path, "rb") as fh:
        for offset, length in spans:
            fh.seek(offset)
            yield fh.read(length)
