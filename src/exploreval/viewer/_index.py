"""The viewer's episode index: one compact row per episode plus the byte offset of its line.

Opening a 100,000-episode run must not parse 100,000 records. The index is built by one scan of
``episodes.jsonl`` (JSON only, no pydantic validation), then written next to it as
``episodes.index.json`` and reused while the log is unchanged. The log is append-only, so when it
has grown the index scans only the new bytes; when it shrank or its first bytes changed (a
different file) the index is rebuilt. Episode metrics for the list's range filters come from
``results.parquet`` (written by ``exploreval score``), re-read when that file changes.

Row order is the order in which episode ids first appear; the row of an id points at its latest
record with ``ok`` beating ``error`` (the same rule as ``RunDir.latest_records``).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from exploreval.core import EpisodeRecord
from exploreval.store import RESULTS, RunDir, StoreError
from exploreval.viewer._episode_index import (
    INDEX_DIR,
    INDEX_SCHEMA_VERSION,
    LIST_FILE,
    META_FILE,
    METRICS_DIR,
    NUMBER_COLUMNS,
    OFFSETS_FILE,
    TEXT_COLUMNS,
    EpisodeIndex,
    RawJson,
    compact_json,
    round_value,
    suite_of_family,
)
from exploreval.viewer._index_scan import empty_columns, row_values, scan_columns, scan_records

#: Columns of results.parquet that the list already shows under another name (or are not metrics).
_SKIP_METRICS = {"seed", "repeat", "success", "steps", "total_reward", "invalid_actions"}
_HEAD_BYTES = 4096


def _head_hash(path: Path, n_bytes: int) -> str:
    """Hash of the log's first ``min(n_bytes, 4096)`` bytes: an appended log keeps it."""
    if n_bytes <= 0 or not path.exists():
        return ""
    with open(path, "rb") as fh:
        return hashlib.sha256(fh.read(min(n_bytes, _HEAD_BYTES))).hexdigest()


#: From this many new log bytes on, the index reads the run's columns (synced if need be: one
#: columnar query) instead of parsing every new line itself.
COLUMNS_FROM_BYTES = 8 * 1024 * 1024


def _results_stamp(run_dir: Path) -> str:
    try:
        stat = (run_dir / RESULTS).stat()
    except OSError:
        return ""
    return f"{stat.st_size}:{stat.st_mtime_ns}"


def _load_metrics(index: EpisodeIndex) -> None:
    """Numeric episode metrics from results.parquet, aligned to the index rows (None = missing).

    Read one column at a time, and each kept as its JSON text (``RawJson``): the list only
    sends them to the page, and a million rows of seventy metrics are half a gigabyte of text
    but over two gigabytes of Python numbers."""
    index.metrics = {}
    stamp = _results_stamp(index.run_dir)
    index.results_stamp = stamp
    if not stamp:
        return
    import pyarrow.parquet as pq
    import pyarrow.types as pat

    path = index.run_dir / RESULTS
    try:
        results = pq.ParquetFile(path)
        schema = results.schema_arrow
        if "episode_id" not in schema.names:
            return
        import numpy as np

        ids = results.read(columns=["episode_id"]).column(0).to_pylist()
        rows = np.fromiter(
            (-1 if (row := index.row_of(str(eid))) is None else row for eid in ids),
            dtype=np.int64,
            count=len(ids),
        )
        del ids
        kept = rows >= 0
        for name in schema.names:
            column_type = schema.field(name).type
            if name in _SKIP_METRICS or not (
                pat.is_integer(column_type)
                or pat.is_floating(column_type)
                or pat.is_boolean(column_type)
            ):
                continue
            text = _metric_json(results.read(columns=[name]).column(0), rows, kept, len(index))
            if text is not None:
                index.metrics[name] = RawJson(text)
    except Exception as exc:  # a torn parquet must not keep the viewer from opening
        index.metrics = {}
        index.issues.append(f"{path}: unreadable ({exc}); no metric filters")


def _metric_json(column: Any, rows: Any, kept: Any, n: int) -> str | None:
    """One results column as the list's JSON array: ``round_value`` of each row's value at its index
    row (null where the index has no row for it), or None when every value is missing. Each
    distinct value is rounded once (a column of a million rows holds a few thousand), and the
    rows are placed by numpy, not one by one."""
    import numpy as np
    import pyarrow.compute as pc

    encoded = pc.dictionary_encode(column.combine_chunks())
    rounded = [round_value(value) for value in encoded.dictionary.to_pylist()]
    present = np.array([v is not None for v in rounded] + [False], dtype=bool)
    codes = pc.fill_null(encoded.indices, -1).to_numpy(zero_copy_only=False)  # -1: null
    if not present[codes[kept]].any():
        return None
    values = np.full(n, None, dtype=object)
    values[rows[kept]] = np.array([*rounded, None], dtype=object)[codes[kept]]
    return compact_json(values.tolist())


def _read_meta(cache: Path) -> dict[str, Any] | None:
    try:
        meta = json.loads((cache / META_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None  # no cache, or a broken one: it is only a cache, rebuild it
    if not isinstance(meta, dict) or meta.get("schema_version") != INDEX_SCHEMA_VERSION:
        return None
    return meta


def _metric_files_exist(cache: Path, meta: dict[str, Any]) -> bool:
    names = meta.get("metrics", [])
    return isinstance(names, list) and all(
        (cache / METRICS_DIR / f"{position}.js").exists() for position in range(len(names))
    )


def _from_cache(run_dir: Path, meta: dict[str, Any]) -> EpisodeIndex | None:
    """The cached rows, read now (to be extended), or None when they do not match the meta."""
    index = EpisodeIndex(
        run_dir=run_dir,
        run_id=str(meta["run_id"]),
        name=str(meta.get("name", "")),
        scanned_bytes=int(meta["scanned_bytes"]),
        head_hash=str(meta["head_hash"]),
        results_stamp=str(meta.get("results_stamp", "")),
        issues=list(meta.get("issues", [])),
        n_rows=int(meta["n_rows"]),
        rows_loaded=False,
    )
    try:
        index.ensure_rows()
    except (OSError, ValueError, KeyError, TypeError, StoreError):
        return None
    expected = ("id", *TEXT_COLUMNS, *NUMBER_COLUMNS)
    if any(len(index.columns.get(name, [])) != len(index.offsets) for name in expected):
        return None
    return index


def load_index(run_path: str | os.PathLike[str], *, save: bool = True) -> EpisodeIndex:
    """The run's episode index: reused as is (rows read lazily), extended, or built; saved back
    under ``RUN_DIR/viewer_index/`` when it changed."""
    run = RunDir(run_path)
    manifest = run.read_manifest()  # a clear error for a directory that is not a run
    log = run.episodes_path
    size = log.stat().st_size if log.exists() else 0
    cache = run.path / INDEX_DIR
    meta = _read_meta(cache)
    if meta is not None and (
        size < int(meta.get("scanned_bytes", 0))
        or _head_hash(log, int(meta.get("scanned_bytes", 0))) != meta.get("head_hash")
    ):
        meta = None  # the log was rewritten, not appended to
    if (
        meta is not None
        and size == meta["scanned_bytes"]
        and meta.get("results_stamp", "") == _results_stamp(run.path)
        and (cache / LIST_FILE).exists()
        and (cache / OFFSETS_FILE).exists()
        and _metric_files_exist(cache, meta)
    ):
        fresh = EpisodeIndex(
            run.path,
            manifest.run_id,
            manifest.name,
            scanned_bytes=size,
            head_hash=str(meta["head_hash"]),
            results_stamp=str(meta.get("results_stamp", "")),
            issues=list(meta.get("issues", [])),
            n_rows=int(meta["n_rows"]),
            rows_loaded=False,
            cached_metric_names=[str(name) for name in meta.get("metrics", [])],
        )
        if meta.get("run_id") == manifest.run_id and meta.get("name") == manifest.name:
            return fresh
    index = _from_cache(run.path, meta) if meta is not None else None
    if index is None:
        index = EpisodeIndex(run.path, manifest.run_id, manifest.name, columns=empty_columns())
    index.run_id, index.name = manifest.run_id, manifest.name
    if size > index.scanned_bytes:
        suites = suite_of_family()
        if size - index.scanned_bytes < COLUMNS_FROM_BYTES or not scan_columns(
            index, index.scanned_bytes, suites
        ):
            scan_records(index, index.scanned_bytes, suites)
    index.head_hash = _head_hash(log, index.scanned_bytes)
    _load_metrics(index)
    if save:
        index.save()
    return index


def refresh_index(run_path: str | os.PathLike[str]) -> str | None:
    """Bring the run's saved index up to date (incremental: only new log bytes are scanned), so the
    next ``exploreval view`` opens from it at once. Called at the end of ``run``, ``score`` (and so
    ``report``) and ``import``. The index is a cache: a failure is returned as a message, never
    raised."""
    try:
        load_index(run_path, save=True)
    except (OSError, ValueError, StoreError) as exc:
        return f"viewer index of {run_path} not updated: {exc}"
    return None


def index_from_records(
    run_path: str | os.PathLike[str], records: Sequence[EpisodeRecord]
) -> EpisodeIndex:
    """An in-memory index of just ``records`` of a run (no scan of its log, nothing saved).

    The report's viewer uses it: the records are already parsed, and the bundle holds the episodes
    the report mentions, so a 100,000-episode run does not pay for a full index."""
    run = RunDir(run_path)
    manifest = run.read_manifest()
    index = EpisodeIndex(run.path, manifest.run_id, manifest.name, columns=empty_columns())
    suites = suite_of_family()
    for record in records:
        if index.row_of(record.episode_id) is not None:
            continue
        row = len(index.offsets)
        index._row_of[record.episode_id] = row
        index.columns["id"].append(record.episode_id)
        index.offsets.append(-1)
        index.lengths.append(0)
        for name, value in row_values(record.model_dump(mode="json"), suites).items():
            index.columns[name].append(value)
        index._records[row] = record
    _load_metrics(index)
    return index
