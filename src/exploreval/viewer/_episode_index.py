"""The viewer's episode index: one row per episode, as the page reads it.

Text columns are dictionary-encoded, numbers are rounded, and each metric is its own data script
(``metrics/<position>.js``) the page loads only when a range or a sort asks for it, so the list of a
million episodes opens without parsing every metric first. :class:`EpisodeIndex` reads and writes
the cached files; :mod:`._index_scan` builds the rows, :mod:`._index` keeps the cache current.
"""

from __future__ import annotations

import json
import math
import os
from array import array
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from exploreval.core import EpisodeRecord, load_record
from exploreval.store import EPISODES, StoreError

INDEX_DIR = "viewer_index"


META_FILE, ROWS_FILE, LIST_FILE, OFFSETS_FILE = "meta.json", "rows.json", "list.js", "offsets.bin"


#: One data script per metric column, ``metrics/<position>.js``: the page loads a metric only
#: when a range or a sort asks for it (at a million rows the metrics are four fifths of a list
#: the page would otherwise parse whole before it can show page one).
METRICS_DIR = "metrics"


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


def suite_of_family() -> dict[str, str]:
    from exploreval.core import SUITE_PLUGINS, load_plugins

    load_plugins()
    return {family: plugin.name for plugin in SUITE_PLUGINS.values() for family in plugin.families}


def round_value(value: Any) -> float | int | None:
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
        data = json.loads((self.cache_dir / ROWS_FILE).read_text(encoding="utf-8"))
        self.columns, self.offsets = data["columns"], data["offsets"]
        self.lengths, self.metrics = data["lengths"], data.get("metrics", {})
        self.rows_loaded = True
        if len(self.offsets) != self.n_rows:
            raise StoreError(
                f"{self.cache_dir / ROWS_FILE} holds {len(self.offsets)} rows, its meta.json says "
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
                spans.frombytes((self.cache_dir / OFFSETS_FILE).read_bytes())
                if len(spans) != 2 * self.n_rows:
                    raise StoreError(
                        f"{self.cache_dir / OFFSETS_FILE} does not match {self.cache_dir / META_FILE}; "
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
        cached = self.cache_dir / LIST_FILE
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
            return data_script(None, metric_payload(names[position], self.metrics[names[position]]))
        try:
            script = (self.cache_dir / METRICS_DIR / f"{position}.js").read_bytes()
        except OSError:
            script = b""
        if script_metric_name(script) == names[position]:
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
            (self.cache_dir / META_FILE).unlink(missing_ok=True)
            spans = array(
                "q", [v for pair in zip(self.offsets, self.lengths, strict=True) for v in pair]
            )
            _atomic_write(self.cache_dir / OFFSETS_FILE, spans.tobytes())
            _atomic_write(self.cache_dir / ROWS_FILE, (p.encode() for p in _json_pieces(rows)))
            _atomic_write(
                self.cache_dir / LIST_FILE, _data_script_pieces(None, self.client_payload())
            )
            metrics_dir = self.cache_dir / METRICS_DIR
            metrics_dir.mkdir(exist_ok=True)
            for stale in metrics_dir.glob("*.js"):  # a metric no longer in results.parquet
                stale.unlink()
            for position, (name, values) in enumerate(self.metrics.items()):
                payload = metric_payload(name, values)
                _atomic_write(metrics_dir / f"{position}.js", _data_script_pieces(None, payload))
            _atomic_write(self.cache_dir / META_FILE, json.dumps(self._meta(), indent=1).encode())
        except OSError:
            return False
        return True


def metric_payload(name: str, values: Any) -> dict[str, Any]:
    """A metric script's data: its name rides along, so a page whose list came from an older
    index (refreshed by a ``score`` since) says so instead of showing another metric's values."""
    return {"name": name, "values": values}


def script_metric_name(script: bytes) -> str | None:
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


class RawJson(str):
    """A value kept as its JSON text (a metric column: ``_load_metrics``), written as is."""


def _json_pieces(value: Any) -> Iterator[str]:
    """The compact JSON of ``value`` in pieces, dicts walked and ``RawJson`` spliced in as is:
    a million-row index is written without ever being one string (``compact_json`` for
    everything else)."""
    if isinstance(value, RawJson):
        yield str(value)
    elif isinstance(value, dict):
        yield "{"
        for position, (name, item) in enumerate(value.items()):
            yield ("," if position else "") + json.dumps(str(name), ensure_ascii=False) + ":"
            yield from _json_pieces(item)
        yield "}"
    else:
        yield compact_json(value)


def compact_json(value: Any) -> str:
    """Compact JSON text, by orjson (a metric column of a million values is ~10x quicker than
    ``json.dumps``); ``json.dumps`` for what orjson refuses (an integer past 64 bits). Numbers
    may be spelt differently (``1e-5``, not ``1e-05``): the same JSON values."""

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
