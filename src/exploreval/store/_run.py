"""The run directory: manifest, append-only episode log, prompt blobs, results table.

Layout::

    RUN_DIR/
      manifest.json      config, config hash, package version, status, start/end (atomic rewrite)
      episodes.jsonl     one EpisodeRecord per line, appended + flushed + fsynced per episode
      blobs.sqlite       prompt text by sha256 (steps reference it)
      cache.sqlite       model response cache (owned by the model layer)
      results.parquet    one row per episode: metadata + every episode metric (from `score`)
      tables/*.parquet   run-level metric tables
      report/            report.md, figures

The log is append-only: a crash can at worst leave a torn last line, which readers skip
(and name) and writers fence off with a newline before appending.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from exploreval.core import (
    SCHEMA_VERSION,
    CorruptDatabaseError,
    EpisodeRecord,
    Usage,
    gc_paused,
    migrate_record,
    utcnow,
)
from exploreval.core import unique_tmp as unique_tmp  # re-exported (store API)
from exploreval.core import write_atomic as write_atomic
from exploreval.store._blobs import BlobStore
from exploreval.store._errors import StoreError, describe_os_error

MANIFEST = "manifest.json"
EPISODES = "episodes.jsonl"
BLOBS = "blobs.sqlite"
CACHE = "cache.sqlite"
RESULTS = "results.parquet"
TABLES = "tables"
REPORT = "report"

RunStatus = Literal[
    "created", "running", "finished", "partial", "failed", "interrupted", "imported"
]


#: Held (flock) by the process running an experiment into the directory.
LOCK_FILE = ".exploreval.lock"


class RunManifest(BaseModel):
    """What a run is and how far it got."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = SCHEMA_VERSION
    run_id: str
    name: str = ""
    kind: Literal["experiment", "import"] = "experiment"
    config: dict[str, Any] = Field(default_factory=dict)
    config_hash: str = ""
    package_version: str = ""
    created_at: datetime = Field(default_factory=utcnow)
    started_at: datetime | None = None
    ended_at: datetime | None = None
    status: RunStatus = "created"
    error: str | None = None
    episodes_planned: int = 0
    episodes_done: int = 0
    invocations: int = 0
    total_steps: int = 0
    usage: Usage = Field(
        default_factory=Usage, description="Tokens and cost of the stored episodes"
    )


@dataclass
class LogIssue:
    """A line of episodes.jsonl that could not be read."""

    line: int
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}"


def parse_log_line(raw: bytes, number: int, issues: list[LogIssue] | None) -> dict[str, Any] | None:
    """One line of ``episodes.jsonl`` as a JSON object; None for a blank line, or (recorded in
    ``issues``) a line that is not JSON or not an object. One reader for the log and its columns.
    """
    if not raw.strip():
        return None
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError:
        # orjson refuses what the standard library reads (lone surrogates, stored escaped) and
        # the standard library's message names the column
        try:
            data = json.loads(raw.decode("utf-8", errors="replace"))
        except RecursionError:
            if issues is not None:
                issues.append(LogIssue(number, "not valid JSON (nested too deeply to read)"))
            return None
        except json.JSONDecodeError as exc:
            if issues is not None:
                issues.append(LogIssue(number, f"not valid JSON ({exc.msg} at column {exc.colno})"))
            return None
    if not isinstance(data, dict):
        if issues is not None:
            issues.append(LogIssue(number, "not a JSON object"))
        return None
    return data


def validation_issue(line: int, exc: ValidationError) -> LogIssue:
    """A line that is JSON but not a valid record, named by its first bad field (every reader
    of the log says it the same way)."""
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"])
    return LogIssue(line, f"field {where!r}: {first['msg']}")


class RunDir:
    """One run directory. Cheap to construct; files are created on demand."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._blobs: BlobStore | None = None
        self._append_lock = threading.Lock()
        self._run_lock: int | None = None

    # -- paths -----------------------------------------------------------------
    @property
    def manifest_path(self) -> Path:
        return self.path / MANIFEST

    @property
    def episodes_path(self) -> Path:
        return self.path / EPISODES

    @property
    def results_path(self) -> Path:
        return self.path / RESULTS

    @property
    def cache_path(self) -> Path:
        return self.path / CACHE

    @property
    def tables_dir(self) -> Path:
        return self.path / TABLES

    @property
    def report_dir(self) -> Path:
        return self.path / REPORT

    def exists(self) -> bool:
        return self.manifest_path.exists()

    def writable(self) -> bool:
        """Whether files can be written here: False for a run on a read-only file system (an
        archived or shared sweep, a mounted dataset) or a directory this user may not write
        to; readers then keep what they derive elsewhere (``RunColumns``) or do not store it
        (``score``)."""
        try:
            if os.statvfs(self.path).f_flag & os.ST_RDONLY:
                return False
        except OSError:
            return False
        return os.access(self.path, os.W_OK)

    # -- creation and manifest ---------------------------------------------------
    def ensure(self) -> None:
        """Create the directory, failing early with a clear message if we cannot write."""
        try:
            self.path.mkdir(parents=True, exist_ok=True)
            probe = self.path / f".write-probe-{os.getpid()}-{threading.get_ident()}"
            probe.write_text("ok")
            probe.unlink()
        except OSError as exc:
            raise describe_os_error("write to run directory", self.path, exc) from exc

    def read_manifest(self) -> RunManifest:
        try:
            text = self.manifest_path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise StoreError(f"{self.path} is not a run directory (no {MANIFEST})") from None
        except UnicodeDecodeError as exc:
            raise StoreError(
                f"{self.manifest_path} is not UTF-8 text (byte {exc.start}): not a manifest "
                "exploreval wrote; use another --out, or --force to start over in this directory"
            ) from None
        except OSError as exc:
            raise describe_os_error("read", self.manifest_path, exc) from exc
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise StoreError(
                f"{self.manifest_path} is not a valid manifest: not JSON ({exc.msg} at line "
                f"{exc.lineno} column {exc.colno})"
            ) from None
        if not isinstance(data, dict):
            raise StoreError(
                f"{self.manifest_path} is not a valid manifest: a JSON {type(data).__name__}, "
                "not an object"
            )
        try:
            return RunManifest.model_validate(data)
        except ValidationError as exc:
            errors = exc.errors()
            first = errors[0]
            where = ".".join(str(p) for p in first["loc"]) or "(top level)"
            more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
            raise StoreError(
                f"{self.manifest_path} is not a valid manifest: field {where}: {first['msg']}{more}"
            ) from None

    def write_manifest(self, manifest: RunManifest) -> None:
        """Atomic rewrite: readers see the old or the new manifest, never half of one."""
        self.ensure()
        text = manifest.model_dump_json(indent=2)
        try:
            write_atomic(self.manifest_path, lambda tmp: tmp.write_text(text, encoding="utf-8"))
        except OSError as exc:
            raise describe_os_error("write", self.manifest_path, exc) from exc

    def update_manifest(self, **changes: Any) -> RunManifest:
        manifest = self.read_manifest().model_copy(update=changes)
        self.write_manifest(manifest)
        return manifest

    # -- blobs ---------------------------------------------------------------------
    @property
    def blobs(self) -> BlobStore:
        if self._blobs is None:
            self.ensure()
            try:
                self._blobs = BlobStore(self.path / BLOBS)
            except CorruptDatabaseError as exc:
                raise StoreError(str(exc)) from exc
            except Exception as exc:  # sqlite3 errors are not OSError
                raise StoreError(f"cannot open {self.path / BLOBS}: {exc}") from exc
        return self._blobs

    def lock(self) -> None:
        """Hold an OS lock on the run directory for this process's run (``flock``: released
        by the kernel when the process dies, so a crash never leaves a stale lock)."""
        import fcntl

        if self._run_lock is not None:
            return
        path = self.path / LOCK_FILE
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        for attempt in range(5):  # a brief probe by `exploreval runs` (is_locked) is not a run
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if attempt < 4:
                    time.sleep(0.02)
        else:
            holder = os.pread(fd, 64, 0).decode("ascii", "replace").strip() or "?"
            os.close(fd)
            raise StoreError(
                f"{self.path} is in use by another exploreval process (pid {holder}); wait for "
                "it to end, or use another --out"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        self._run_lock = fd

    def is_locked(self) -> bool:
        """Whether a process holds the run lock (a run in progress). A ``running`` manifest
        whose lock nobody holds is stale: its process died without finishing the manifest."""
        import fcntl

        try:
            fd = os.open(self.path / LOCK_FILE, os.O_RDONLY)
        except OSError:  # no lock file: never run by this exploreval, or not readable
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        except OSError:
            return False
        else:
            fcntl.flock(fd, fcntl.LOCK_UN)
            return False
        finally:
            os.close(fd)

    def unlock(self) -> None:
        if self._run_lock is not None:
            os.close(self._run_lock)  # closing the descriptor releases the flock
            self._run_lock = None

    def close(self) -> None:
        if self._blobs is not None:
            self._blobs.close()
            self._blobs = None
        self.unlock()

    # -- episodes ------------------------------------------------------------------
    def append(self, record: EpisodeRecord) -> None:
        """Append one finished episode durably (flush + fsync)."""
        self.append_many([record])

    def append_many(self, records: list[EpisodeRecord]) -> None:
        """Append finished episodes durably with one write and one fsync (a driver that
        receives many at once pays the disk's latency once, not per record)."""
        if not records:
            return
        text = "".join(record.model_dump_json() + "\n" for record in records)
        with self._append_lock:
            self._append_line(text)

    def _append_line(self, line: str) -> None:
        try:
            with open(self.episodes_path, "a+b") as fh:
                fh.seek(0, os.SEEK_END)
                if fh.tell() > 0:
                    fh.seek(-1, os.SEEK_END)
                    if fh.read(1) != b"\n":  # torn line from a crash: fence it off
                        fh.write(b"\n")
                fh.write(line.encode("utf-8"))
                fh.flush()
                os.fsync(fh.fileno())
        except OSError as exc:
            raise describe_os_error("append to", self.episodes_path, exc) from exc

    def iter_records(self, issues: list[LogIssue] | None = None) -> Iterator[EpisodeRecord]:
        """Every readable record in file order; unreadable lines go to ``issues``.

        Lines are parsed with orjson (about 2.5x the standard library's speed on these records:
        reading is most of a large report's time) and validated by pydantic."""
        if not self.episodes_path.exists():
            return
        try:
            fh = open(self.episodes_path, "rb")  # noqa: SIM115 - closed by `with fh` below
        except OSError as exc:
            raise describe_os_error("read", self.episodes_path, exc) from exc
        with fh:
            for number, raw in enumerate(fh, start=1):
                data = parse_log_line(raw, number, issues)
                if data is None:
                    continue
                try:
                    data = migrate_record(data)
                except ValueError as exc:  # newer than this exploreval, or a broken version
                    if issues is not None:
                        issues.append(LogIssue(number, str(exc)))
                    continue
                try:
                    yield EpisodeRecord.model_validate(data)
                except ValidationError as exc:
                    if issues is not None:
                        issues.append(validation_issue(number, exc))

    def latest_records(self, issues: list[LogIssue] | None = None) -> dict[str, EpisodeRecord]:
        """Last record per episode id (a re-run after an error supersedes the error).

        The collector is paused while parsing (``gc_paused``: six times faster on large logs)."""
        latest: dict[str, EpisodeRecord] = {}
        with gc_paused():
            for record in self.iter_records(issues):
                previous = latest.get(record.episode_id)
                if previous is None or record.status == "ok" or previous.status != "ok":
                    latest[record.episode_id] = record
        return latest

    def completed_ids(self) -> set[str]:
        """Ids whose latest record is ``ok``; a light scan (no full validation) for resume."""
        status: dict[str, str] = {}
        if not self.episodes_path.exists():
            return set()
        try:
            fh = open(self.episodes_path, encoding="utf-8", errors="replace")  # noqa: SIM115 - closed by `with fh` below
        except OSError as exc:
            raise describe_os_error("read", self.episodes_path, exc) from exc
        with fh:
            for line in fh:
                try:
                    data = json.loads(line)
                    eid, state = data["episode_id"], data.get("status", "ok")
                except (json.JSONDecodeError, KeyError, TypeError, RecursionError):
                    continue  # unreadable lines are reported by iter_records
                if not isinstance(eid, str):
                    continue
                if state == "ok" or status.get(eid) != "ok":
                    status[eid] = state
        return {eid for eid, state in status.items() if state == "ok"}


def list_runs(root: str | os.PathLike[str]) -> list[tuple[Path, RunManifest | None, str]]:
    """Run directories under ``root`` (recursively), with their manifests or a read error."""
    found: list[tuple[Path, RunManifest | None, str]] = []
    root_path = Path(root)
    if not root_path.exists():
        raise StoreError(f"{root_path} does not exist")
    for manifest_path in sorted(root_path.rglob(MANIFEST)):
        run = RunDir(manifest_path.parent)
        try:
            found.append((run.path, run.read_manifest(), ""))
        except StoreError as exc:
            found.append((run.path, None, str(exc)))
    return found
