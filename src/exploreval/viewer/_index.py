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
import math
import os
from array import array
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from exploreval.core import EpisodeRecord, load_record
from exploreval.store import EPISODES, RESULTS, RunDir, StoreError

INDEX_DIR = "viewer_index"
_META, _ROWS, _LIST, _OFFSETS = "meta.json", "rows.json", "list.js", "offsets.bin"
#: One data script per metric column, ``metrics/<position>.js``: the page loads a metric only
#: when a range or a sort asks for it (at a million rows the metrics are four fifths of a list
#: the page would otherwise parse whole before it can show page one).
_METRICS_DIR = "metrics"
#: 2: metric values moved out of ``list.js`` into ``metrics/`` (a version-1 cache is rebuilt).
#: 3: a ``condition`` column (the env options' label, as the report's tables name it).
INDEX_SCHEMA_VERSION = 3

#: Text columns, dictionary-encoded (values list + one code per row) to keep the index small.
TEXT_COLUMNS = ("env", "family", "suite", "preset", "condition", "agent", "status")
#: Numeric columns of every row.
NUMBER_COLUMNS = (
    "seed",
    "repeat",
    "success",
    "steps",
    "invalid",
    "reward",
    "tokens",
    "cost",
    "retries",
    "has_errors",
)
#: Columns of results.parquet that the list already shows under another name (or are not metrics).
_SKIP_METRICS = {"seed", "repeat", "success", "steps", "total_reward", "invalid_actions"}
_HEAD_BYTES = 4096


def _suite_of_family() -> dict[str, str]:
    from exploreval.core import SUITE_PLUGINS, load_plugins

    load_plugins()
    return {family: plugin.name for plugin in SUITE_PLUGINS.values() for family in plugin.families}


def _round(value: Any) -> float | int | None:
    """Metric values at 4 significant digits (the list filters and shows them, nothing else)."""
    if value is None or isinstance(value, bool):
        return None if value is None else int(value)
    number = float(value)
    if not math.isfinite(number):
        return None
    if number == int(number) and abs(number) < 2**53:
        return int(number)
    return float(f"{number:.4g}")


@dataclass
class EpisodeIndex:
    """Rows of one run: ``columns[name][row]``, ``offsets``/``lengths`` of each row's line.

    An index opened from a fresh cache holds only its metadata; the rows (``columns``,
    ``offsets``...) are read on first use, and the page's list is served from ``list.js`` as is.
    """

    run_dir: Path
    run_id: str
    name: str
    columns: dict[str, list[Any]] = field(default_factory=dict)
    offsets: list[int] = field(default_factory=list)
    lengths: list[int] = field(default_factory=list)
    #: Per metric, a value per row, or (freshly loaded) the JSON text of those values.
    metrics: dict[str, list[float | int | None] | str] = field(default_factory=dict)
    scanned_bytes: int = 0
    head_hash: str = ""
    results_stamp: str = ""
    issues: list[str] = field(default_factory=list)
    n_rows: int = 0
    rows_loaded: bool = True
    #: The metrics' names in column order, from meta.json: what a lazily opened index knows of
    #: its metrics without reading its rows.
    cached_metric_names: list[str] = field(default_factory=list)
    _row_of: dict[str, int] = field(default_factory=dict)
    _spans: array[int] | None = None
    _records: dict[int, EpisodeRecord] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.offsets) if self.rows_loaded else self.n_rows

    @property
    def cache_dir(self) -> Path:
        return self.run_dir / INDEX_DIR

    def ensure_rows(self) -> None:
        """Read the rows of a lazily opened index from the cache."""
        if self.rows_loaded:
            return
        data = json.loads((self.cache_dir / _ROWS).read_text(encoding="utf-8"))
        self.columns, self.offsets = data["columns"], data["offsets"]
        self.lengths, self.metrics = data["lengths"], data.get("metrics", {})
        self.rows_loaded = True
        if len(self.offsets) != self.n_rows:
            raise StoreError(
                f"{self.cache_dir / _ROWS} holds {len(self.offsets)} rows, its meta.json says "
                f"{self.n_rows}; delete {self.cache_dir} to rebuild the index"
            )

    def row_of(self, episode_id: str) -> int | None:
        return self._rows_by_id().get(episode_id)

    def _rows_by_id(self) -> dict[str, int]:
        self.ensure_rows()
        if not self._row_of:
            self._row_of = {eid: row for row, eid in enumerate(self.columns.get("id", []))}
        return self._row_of

    def _span(self, row: int) -> tuple[int, int]:
        """(offset, length) of ``row``'s line; a lazy index reads only the binary offsets file."""
        if not self.rows_loaded:
            if self._spans is None:
                spans = array("q")
                spans.frombytes((self.cache_dir / _OFFSETS).read_bytes())
                if len(spans) != 2 * self.n_rows:
                    raise StoreError(
                        f"{self.cache_dir / _OFFSETS} does not match {self.cache_dir / _META}; "
                        f"delete {self.cache_dir} to rebuild the index"
                    )
                self._spans = spans
            return self._spans[2 * row], self._spans[2 * row + 1]
        return self.offsets[row], self.lengths[row]

    def read_record(self, row: int) -> EpisodeRecord:
        """The full record of ``row`` (one seek and one line read)."""
        if not 0 <= row < len(self):
            raise IndexError(f"episode row {row} out of range (run has {len(self)} episodes)")
        if row in self._records:
            return self._records[row]
        path = self.run_dir / EPISODES
        offset, length = self._span(row)
        with open(path, "rb") as fh:
            fh.seek(offset)
            line = fh.read(length)
        try:
            return load_record(json.loads(line))
        except (ValueError, TypeError) as exc:
            raise StoreError(
                f"{path} at byte {offset}: episode row {row} is unreadable ({exc}); "
                f"delete {self.cache_dir} if the log was rewritten"
            ) from exc

    # -- what the browser gets ------------------------------------------------------------------
    def client_payload(self) -> dict[str, Any]:
        """Columns for the list (text columns dictionary-encoded), without the byte offsets, and
        the metrics' names only: each metric's values are ``metric_script(position)``."""
        self.ensure_rows()
        cols: dict[str, Any] = {"id": self.columns["id"]}
        for name in TEXT_COLUMNS:
            values: dict[str, int] = {}
            codes = [values.setdefault(v, len(values)) for v in self.columns[name]]
            cols[name] = {"values": list(values), "codes": codes}
        for name in NUMBER_COLUMNS:
            cols[name] = self.columns[name]
        return {
            "run_id": self.run_id,
            "name": self.name,
            "n": len(self),
            "columns": cols,
            "metric_names": self.metric_names(),
            "issues": self.issues[:20],
        }

    def metric_names(self) -> list[str]:
        """The metrics' names; ``metric_script(position)`` is the one at ``position``."""
        return list(self.metrics) if self.rows_loaded else list(self.cached_metric_names)

    def list_script(self) -> bytes:
        """``client_payload`` as a data script (from the cache when it is fresh)."""
        cached = self.cache_dir / _LIST
        if not self.rows_loaded and cached.exists():
            return cached.read_bytes()
        return data_script(None, self.client_payload())

    def metric_script(self, position: int) -> bytes:
        """The values of metric ``metric_names()[position]``, one per row, as a data script (from
        the cache when it is fresh)."""
        names = self.metric_names()
        if not 0 <= position < len(names):
            raise IndexError(f"no metric {position} (the run has {len(names)} metrics)")
        if self.rows_loaded:
            return data_script(
                None, _metric_payload(names[position], self.metrics[names[position]])
            )
        try:
            script = (self.cache_dir / _METRICS_DIR / f"{position}.js").read_bytes()
        except OSError:
            script = b""
        if _script_metric_name(script) == names[position]:
            return script
        # The saved index changed under this (lazily opened) one: a score refreshed the run's
        # metrics. The page must not get another metric's values, nor a 404 it cannot explain.
        problem = (
            f"the viewer index of {self.run_dir} changed since this viewer opened it (a score "
            "refreshed its metrics): restart exploreval view"
        )
        return data_script(None, {"name": names[position], "error": problem})

    # -- persistence ----------------------------------------------------------------------------
    def _meta(self) -> dict[str, Any]:
        return {
            "schema_version": INDEX_SCHEMA_VERSION,
            "run_id": self.run_id,
            "name": self.name,
            "n_rows": len(self),
            "scanned_bytes": self.scanned_bytes,
            "head_hash": self.head_hash,
            "results_stamp": self.results_stamp,
            "issues": self.issues,
            "metrics": self.metric_names(),
        }

    def save(self) -> bool:
        """Write rows, list and meta (meta last: it vouches for the other two); False when the run
        directory is read-only (the index then lives in memory only)."""
        self.ensure_rows()
        rows = {
            "columns": self.columns,
            "offsets": self.offsets,
            "lengths": self.lengths,
            "metrics": self.metrics,
        }
        try:
            self.cache_dir.mkdir(exist_ok=True)
            (self.cache_dir / _META).unlink(missing_ok=True)
            spans = array(
                "q", [v for pair in zip(self.offsets, self.lengths, strict=True) for v in pair]
            )
            _atomic_write(self.cache_dir / _OFFSETS, spans.tobytes())
            _atomic_write(self.cache_dir / _ROWS, (p.encode() for p in _json_pieces(rows)))
            _atomic_write(self.cache_dir / _LIST, _data_script_pieces(None, self.client_payload()))
            metrics_dir = self.cache_dir / _METRICS_DIR
            metrics_dir.mkdir(exist_ok=True)
            for stale in metrics_dir.glob("*.js"):  # a metric no longer in results.parquet
                stale.unlink()
            for position, (name, values) in enumerate(self.metrics.items()):
                payload = _metric_payload(name, values)
                _atomic_write(metrics_dir / f"{position}.js", _data_script_pieces(None, payload))
            _atomic_write(self.cache_dir / _META, json.dumps(self._meta(), indent=1).encode())
        except OSError:
            return False
        return True


def _metric_payload(name: str, values: Any) -> dict[str, Any]:
    """A metric script's data: its name rides along, so a page whose list came from an older
    index (refreshed by a ``score`` since) says so instead of showing another metric's values."""
    return {"name": name, "values": values}


def _script_metric_name(script: bytes) -> str | None:
    """The name a saved metric script carries (its first field), or None."""
    head = b'EXV.receive(null,{"name":'
    if not script.startswith(head):
        return None
    try:
        name, _end = json.JSONDecoder().raw_decode(
            script[len(head) : len(head) + 4096].decode(errors="replace")
        )
    except (ValueError, UnicodeDecodeError):
        return None
    return name if isinstance(name, str) else None


def data_script(key: str | None, data: Any) -> bytes:
    """``data`` as a script handing it to the page: ``EXV.receive(key, data)``. With ``key``
    None the page uses the key it asked for (the script tag's ``data-key``), so a cached list
    serves any run position. JSON is valid JavaScript once U+2028/9 are escaped."""
    return b"".join(_data_script_pieces(key, data))


def _data_script_pieces(key: str | None, data: Any) -> Iterator[bytes]:
    yield f"EXV.receive({json.dumps(key)},".encode()
    for piece in _json_pieces(data):
        yield piece.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029").encode()
    yield b");\n"


class _RawJson(str):
    """A value kept as its JSON text (a metric column: ``_load_metrics``), written as is."""


def _json_pieces(value: Any) -> Iterator[str]:
    """The compact JSON of ``value`` in pieces, dicts walked and ``_RawJson`` spliced in as is:
    a million-row index is written without ever being one string (``_compact_json`` for
    everything else)."""
    if isinstance(value, _RawJson):
        yield str(value)
    elif isinstance(value, dict):
        yield "{"
        for position, (name, item) in enumerate(value.items()):
            yield ("," if position else "") + json.dumps(str(name), ensure_ascii=False) + ":"
            yield from _json_pieces(item)
        yield "}"
    else:
        yield _compact_json(value)


def _compact_json(value: Any) -> str:
    """Compact JSON text, by orjson (a metric column of a million values is ~10x quicker than
    ``json.dumps``); ``json.dumps`` for what orjson refuses (an integer past 64 bits). Numbers
    may be spelt differently (``1e-5``, not ``1e-05``): the same JSON values."""
    import orjson

    try:
        return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()
    except TypeError:  # orjson.JSONEncodeError is one
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _atomic_write(path: Path, body: bytes | Iterable[bytes]) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as fh:
            if isinstance(body, bytes):
                fh.write(body)
            else:
                for piece in body:
                    fh.write(piece)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def _head_hash(path: Path, n_bytes: int) -> str:
    """Hash of the log's first ``min(n_bytes, 4096)`` bytes: an appended log keeps it."""
    if n_bytes <= 0 or not path.exists():
        return ""
    with open(path, "rb") as fh:
        return hashlib.sha256(fh.read(min(n_bytes, _HEAD_BYTES))).hexdigest()


def _empty_columns() -> dict[str, list[Any]]:
    return {name: [] for name in ("id", *TEXT_COLUMNS, *NUMBER_COLUMNS)}


def _condition(family: str, options: Any) -> str:
    """The episode's condition as the report's tables label it (empty: no env options)."""
    from exploreval.metrics import NO_CONDITION, condition_label_for

    if not isinstance(options, dict) or not options:
        return ""
    try:
        label = condition_label_for(family, options)
    except Exception:  # a suite's formatter failing on odd options: the list still opens
        return ""
    return "" if label == NO_CONDITION else label


def _row_values(data: dict[str, Any], suites: dict[str, str]) -> dict[str, Any]:
    steps = data.get("steps") or []
    acting = [s for s in steps if isinstance(s, dict) and s.get("phase", "task") == "task"]
    invalid = sum(1 for s in acting if s.get("valid", True) is False)
    retries = sum(int(s.get("retries") or 0) for s in steps if isinstance(s, dict))
    usage = data.get("usage") or {}
    status = str(data.get("status", "ok"))
    family = str(data.get("family", ""))
    agent = data.get("agent") or {}
    return {
        "env": str(data.get("env_id", "")),
        "family": family,
        "suite": suites.get(family, family),
        "preset": str(data.get("preset") or ""),
        "condition": _condition(family, data.get("env_options")),
        "agent": str(agent.get("name", "")) if isinstance(agent, dict) else "",
        "status": status,
        "seed": data.get("seed"),
        "repeat": data.get("repeat", 0),
        "success": 1 if data.get("success") else 0,
        "steps": len(acting),
        "invalid": invalid,
        "reward": _round(data.get("total_reward", 0.0)),
        "tokens": int(usage.get("prompt_tokens", 0)) + int(usage.get("completion_tokens", 0)),
        "cost": _round(usage.get("cost_usd", 0.0)),
        "retries": retries,
        "has_errors": 1 if (status != "ok" or invalid > 0) else 0,
    }


def _scan(index: EpisodeIndex, start: int, suites: dict[str, str]) -> None:
    """Index the complete lines of the log from byte ``start`` on."""
    path = index.run_dir / EPISODES
    cols = index.columns
    status_col = cols["status"]
    with open(path, "rb") as fh:
        fh.seek(start)
        offset = start
        for raw in fh:
            if not raw.endswith(b"\n"):
                break  # a torn or still-being-written last line: next time
            length = len(raw)
            here, offset = offset, offset + length
            if not raw.strip():
                continue
            try:
                try:
                    data = orjson.loads(raw)
                except orjson.JSONDecodeError:  # lone surrogates: the standard library reads them
                    data = json.loads(raw)
                eid = data["episode_id"]
                if not isinstance(eid, str):
                    raise TypeError("episode_id is not text")
            except (ValueError, KeyError, TypeError, RecursionError) as exc:
                index.issues.append(f"{path} at byte {here}: unreadable line ({exc})")
                continue
            row = index.row_of(eid)
            values = _row_values(data, suites)
            if row is None:
                row = len(index.offsets)
                index._row_of[eid] = row
                cols["id"].append(eid)
                index.offsets.append(here)
                index.lengths.append(length)
                for name, value in values.items():
                    cols[name].append(value)
            elif values["status"] == "ok" or status_col[row] != "ok":
                index.offsets[row], index.lengths[row] = here, length
                for name, value in values.items():
                    cols[name][row] = value
    index.scanned_bytes = offset


#: From this many new log bytes on, the index reads the run's columns (synced if need be: one
#: columnar query) instead of parsing every new line itself.
COLUMNS_FROM_BYTES = 8 * 1024 * 1024

#: The row of each episode id first seen from byte ``start`` on: its latest ``ok`` line, else its
#: latest line (the store's rule), in the order the ids first appear; with its step counts.
_COLUMN_ROWS = """
    with chosen as (
        select episode_id, min(line) as first_line,
            coalesce(max(line) filter (where coalesce(status, 'ok') = 'ok'), max(line)) as line
        from all_episodes
        where log_offset >= {start}
        group by episode_id
    )
    select e.episode_id, e.log_offset, e.log_length, e.env_id, e.family, e.preset, e.agent,
        e.status, e.seed, e.repeat, e.success, e.total_reward, e.prompt_tokens,
        e.completion_tokens, e.cost_usd, coalesce(s.acting, 0) as acting,
        coalesce(s.invalid, 0) as invalid, coalesce(s.retries, 0) as retries
    from chosen c join all_episodes e on e.line = c.line left join (
        select line, count(*) filter (where phase = 'task') as acting,
            count(*) filter (where phase = 'task' and valid = false) as invalid,
            cast(sum(coalesce(retries, 0)) as bigint) as retries
        from all_steps
        where line in (select line from chosen)
        group by line
    ) s on s.line = c.line
    order by c.first_line
"""


def _scan_columns(index: EpisodeIndex, start: int, suites: dict[str, str]) -> bool:
    """Index the new lines from the run's columns (``exploreval.store.RunColumns``): the same
    rows as ``_scan`` without parsing the log here. False when the columns cannot be had (a
    read-only run directory): the caller scans the log."""
    from exploreval.store import RunColumns

    columns = RunColumns(index.run_dir)
    try:
        stats = columns.sync()
        con = columns.connect()
    except (OSError, StoreError):
        return False
    try:
        before = con.sql(
            f"select coalesce(max(line), 0) from all_episodes where log_offset < {int(start)}"
        ).fetchall()[0][0]
        state = columns.state()
        path = index.run_dir / EPISODES
        # the unreadable lines past what the index had (this sync's, or an earlier one's)
        new_issues = [i for i in columns.issues() if i.line > int(before)] or stats.issues
        index.issues += [f"{path} line {i.line}: {i.message}" for i in new_issues]
        shared: dict[str, str] = {}
        batches = con.sql(_COLUMN_ROWS.format(start=int(start))).to_arrow_reader(65536)
        for batch in batches:  # a million rows never all held as Python values at once
            _index_batch(index, _batch_values(batch, suites, shared))
    finally:
        con.close()
    index.scanned_bytes = int(state.get("offset", start))
    return True


def _batch_values(
    batch: Any, suites: dict[str, str], shared: dict[str, str]
) -> dict[str, list[Any]]:
    """One batch of ``_COLUMN_ROWS`` as the index's columns (``_row_values`` of each row, a column
    at a time). Text values are shared: one string object per distinct value, not per row."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    # -> Any: a pyarrow array (pyarrow ships no type information)
    def column(name: str) -> Any:
        return batch.column(batch.schema.get_field_index(name))

    def texts(array: Any, default: str = "", mapping: dict[str, str] | None = None) -> list[str]:
        array = pc.fill_null(array.cast(pa.string()), "")
        encoded = pc.dictionary_encode(array)
        values = []
        for value in encoded.dictionary.to_pylist():
            value = value or default
            if mapping is not None:
                value = mapping.get(value, value)
            values.append(shared.setdefault(value, value))
        picked: list[str] = np.array(values, dtype=object)[encoded.indices.to_numpy()].tolist()
        return picked

    def rounded(array: Any) -> list[float | int | None]:
        encoded = pc.dictionary_encode(pc.fill_null(array.cast(pa.float64()), 0.0))
        values = [_round(value) for value in encoded.dictionary.to_pylist()]
        picked: list[float | int | None] = np.array(values, dtype=object)[
            encoded.indices.to_numpy()
        ].tolist()
        return picked

    # -> Any: a numpy int64 array, nulls as 0 (from an untyped pyarrow array)
    def integers(array: Any) -> Any:
        return pc.fill_null(array.cast(pa.int64()), 0).to_numpy()

    status = texts(column("status"), default="ok")
    invalid = integers(column("invalid"))
    not_ok = np.array([value != "ok" for value in status], dtype=bool)
    success = pc.fill_null(column("success"), False).to_numpy(zero_copy_only=False)
    tokens = integers(column("prompt_tokens")) + integers(column("completion_tokens"))
    return {
        "id": column("episode_id").to_pylist(),
        "offset": integers(column("log_offset")).tolist(),
        "length": integers(column("log_length")).tolist(),
        "env": texts(column("env_id")),
        "family": texts(column("family")),
        "suite": texts(column("family"), mapping=suites),
        "preset": texts(column("preset")),
        "agent": texts(column("agent")),
        "status": status,
        "seed": column("seed").to_pylist(),
        "repeat": integers(column("repeat")).tolist(),
        "success": success.astype(np.int64).tolist(),
        "steps": integers(column("acting")).tolist(),
        "invalid": invalid.tolist(),
        "reward": rounded(column("total_reward")),
        "tokens": tokens.tolist(),
        "cost": rounded(column("cost_usd")),
        "retries": integers(column("retries")).tolist(),
        "has_errors": (not_ok | (invalid > 0)).astype(np.int64).tolist(),
    }


def _index_batch(index: EpisodeIndex, batch: dict[str, list[Any]]) -> None:
    """Add the batch's ids new to the index (column by column), and replace the rows of ids it
    has when the batch's line wins (an ``ok`` line, or the row is not ``ok``)."""
    cols = index.columns
    names = [name for name in batch if name not in ("id", "offset", "length")]
    rows_by_id = index._rows_by_id()
    known = [rows_by_id.get(eid) for eid in batch["id"]]
    fresh = [position for position, row in enumerate(known) if row is None]
    if len(fresh) == len(known):  # the usual case (a cold build): whole columns at once
        taken = batch
    else:
        taken = {name: [values[p] for p in fresh] for name, values in batch.items()}
    first = len(index.offsets)
    rows_by_id.update((eid, first + k) for k, eid in enumerate(taken["id"]))
    cols["id"].extend(taken["id"])
    index.offsets.extend(taken["offset"])
    index.lengths.extend(taken["length"])
    for name in names:
        cols[name].extend(taken[name])
    if len(fresh) == len(known):
        return
    status_col = cols["status"]
    for position, row in enumerate(known):
        if row is None or not (batch["status"][position] == "ok" or status_col[row] != "ok"):
            continue
        index.offsets[row], index.lengths[row] = (
            batch["offset"][position],
            batch["length"][position],
        )
        for name in names:
            cols[name][row] = batch[name][position]


def _results_stamp(run_dir: Path) -> str:
    try:
        stat = (run_dir / RESULTS).stat()
    except OSError:
        return ""
    return f"{stat.st_size}:{stat.st_mtime_ns}"


def _load_metrics(index: EpisodeIndex) -> None:
    """Numeric episode metrics from results.parquet, aligned to the index rows (None = missing).

    Read one column at a time, and each kept as its JSON text (``_RawJson``): the list only
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
                index.metrics[name] = _RawJson(text)
    except Exception as exc:  # a torn parquet must not keep the viewer from opening
        index.metrics = {}
        index.issues.append(f"{path}: unreadable ({exc}); no metric filters")


def _metric_json(column: Any, rows: Any, kept: Any, n: int) -> str | None:
    """One results column as the list's JSON array: ``_round`` of each row's value at its index
    row (null where the index has no row for it), or None when every value is missing. Each
    distinct value is rounded once (a column of a million rows holds a few thousand), and the
    rows are placed by numpy, not one by one."""
    import numpy as np
    import pyarrow.compute as pc

    encoded = pc.dictionary_encode(column.combine_chunks())
    rounded = [_round(value) for value in encoded.dictionary.to_pylist()]
    present = np.array([v is not None for v in rounded] + [False], dtype=bool)
    codes = pc.fill_null(encoded.indices, -1).to_numpy(zero_copy_only=False)  # -1: null
    if not present[codes[kept]].any():
        return None
    values = np.full(n, None, dtype=object)
    values[rows[kept]] = np.array([*rounded, None], dtype=object)[codes[kept]]
    return _compact_json(values.tolist())


def _read_meta(cache: Path) -> dict[str, Any] | None:
    try:
        meta = json.loads((cache / _META).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None  # no cache, or a broken one: it is only a cache, rebuild it
    if not isinstance(meta, dict) or meta.get("schema_version") != INDEX_SCHEMA_VERSION:
        return None
    return meta


def _metric_files_exist(cache: Path, meta: dict[str, Any]) -> bool:
    names = meta.get("metrics", [])
    return isinstance(names, list) and all(
        (cache / _METRICS_DIR / f"{position}.js").exists() for position in range(len(names))
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
        and (cache / _LIST).exists()
        and (cache / _OFFSETS).exists()
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
        index = EpisodeIndex(run.path, manifest.run_id, manifest.name, columns=_empty_columns())
    index.run_id, index.name = manifest.run_id, manifest.name
    if size > index.scanned_bytes:
        suites = _suite_of_family()
        if size - index.scanned_bytes < COLUMNS_FROM_BYTES or not _scan_columns(
            index, index.scanned_bytes, suites
        ):
            _scan(index, index.scanned_bytes, suites)
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
    index = EpisodeIndex(run.path, manifest.run_id, manifest.name, columns=_empty_columns())
    suites = _suite_of_family()
    for record in records:
        if index.row_of(record.episode_id) is not None:
            continue
        row = len(index.offsets)
        index._row_of[record.episode_id] = row
        index.columns["id"].append(record.episode_id)
        index.offsets.append(-1)
        index.lengths.append(0)
        for name, value in _row_values(record.model_dump(mode="json"), suites).items():
            index.columns[name].append(value)
        index._records[row] = record
    _load_metrics(index)
    return index
