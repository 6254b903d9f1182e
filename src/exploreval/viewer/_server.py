"""Serve the episode viewer on 127.0.0.1, or write it as a static bundle.

Server and bundle share one layout, so the page has one code path::

    index.html  viewer.js  viewer.css        the page (package data, no CDN)
    data/runs.js                             the runs: id, name, episode count, chunk size
    data/<k>/index.js                        run k's episode list (EpisodeIndex.client_payload)
    data/<k>/m/<i>.js                        run k's metric i, one value per row (on demand)
    data/<k>/ep/<c>.js                       episodes c*chunk .. (c+1)*chunk-1 of run k

Data files are JavaScript (``EXV.receive(key, {...})``; key null = the one the page asked for) loaded with ``<script>`` tags rather
than JSON fetched with ``fetch``: browsers refuse ``fetch`` from ``file://`` pages, and the
bundle must open from a plain folder. The server renders one episode per chunk on request; the
bundle pre-renders every episode in chunks of ``chunk_size``.
"""

from __future__ import annotations

import os
import re
import shutil
import threading
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

from exploreval.core import EpisodeRecord
from exploreval.viewer._data import PromptReader, episode_payload, judgements_by_episode
from exploreval.viewer._episode_index import EpisodeIndex, data_script
from exploreval.viewer._index import index_from_records, load_index

STATIC_DIR = Path(__file__).with_name("_static")
STATIC_FILES = ("index.html", "viewer.js", "viewer.css")
_CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
}


@dataclass
class ViewerRuns:
    """The runs a viewer shows, with their indexes (run ids made unique by a suffix)."""

    indexes: list[EpisodeIndex]

    @classmethod
    def open(cls, run_dirs: Sequence[str | os.PathLike[str]]) -> ViewerRuns:
        if not run_dirs:
            raise ValueError("give at least one run directory")
        return cls.of([load_index(run_dir) for run_dir in run_dirs])

    @classmethod
    def of(cls, indexes: list[EpisodeIndex]) -> ViewerRuns:
        """The runs of ``indexes``; a run id given twice gets a ``~2`` (``~3``...) suffix."""
        seen: dict[str, int] = {}
        for index in indexes:
            count = seen.get(index.run_id, 0)
            seen[index.run_id] = count + 1
            if count:
                index.run_id = f"{index.run_id}~{count + 1}"
        return cls(indexes)

    def runs_payload(self, chunk_size: int) -> dict[str, Any]:
        return {
            "chunk": chunk_size,
            "runs": [
                {
                    "run_id": ix.run_id,
                    "name": ix.name,
                    "dir": str(ix.run_dir),
                    "n": len(ix),
                    "bundled": len(ix),
                }
                for ix in self.indexes
            ],
        }

    def chunk(
        self, run: int, chunk: int, chunk_size: int, only: Collection[str] | None = None
    ) -> dict[str, Any]:
        """Episodes of rows ``chunk * chunk_size`` on (those with ids in ``only``, if given)."""
        index = self.indexes[run]
        start = chunk * chunk_size
        if not 0 <= start < len(index):
            raise IndexError(f"run {run} has no chunk {chunk}")
        prompts = PromptReader(index.run_dir)
        judged = judgements_by_episode(index.run_dir)
        try:
            episodes = {}
            for row in range(start, min(start + chunk_size, len(index))):
                record = index.read_record(row)
                if only is not None and record.episode_id not in only:
                    continue
                episodes[str(row)] = episode_payload(
                    record, row=row, run_id=index.run_id, prompts=prompts,
                    judgements=judged.get(record.episode_id),
                )  # fmt: skip
        finally:
            prompts.close()
        return {"episodes": episodes}


# -- bundle -----------------------------------------------------------------------------------
def write_static(out_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    for name in STATIC_FILES:
        shutil.copyfile(STATIC_DIR / name, out_dir / name)


def write_viewer_bundle(
    run_dirs: Sequence[str | os.PathLike[str]],
    out_dir: str | os.PathLike[str],
    *,
    chunk_size: int = 20,
    episodes: Collection[str] | None = None,
) -> Path:
    """Write the viewer for ``run_dirs`` as plain files under ``out_dir``; returns index.html.

    Open ``out_dir/index.html`` from disk or any static host. Deep links:
    ``index.html#/run/<run_id>/episode/<episode_id>`` (optionally ``/step/<t>``) and
    ``index.html#/list?suite=grid&success=0`` (the list with filters).

    ``episodes`` (episode ids) limits which episodes are rendered into the bundle: the list still
    has every episode, and opening one left out says so and names the ``exploreval view``
    command. A report of a 100,000-episode run bundles the episodes its tables link to.
    """
    return _write_bundle(ViewerRuns.open(run_dirs), out_dir, chunk_size, episodes)


def write_records_bundle(
    runs: Sequence[tuple[str | os.PathLike[str], Sequence[EpisodeRecord]]],
    out_dir: str | os.PathLike[str],
    *,
    chunk_size: int = 20,
) -> Path:
    """A bundle of given, already parsed records: ``[(run_dir, records), ...]``.

    The list holds exactly these episodes (the report passes the episodes it links to), so no
    run is scanned or indexed; prompts still come from each run's blob store."""
    indexes = [index_from_records(run_dir, records) for run_dir, records in runs]
    return _write_bundle(ViewerRuns.of(indexes), out_dir, chunk_size, None)


def _write_bundle(
    runs: ViewerRuns,
    out_dir: str | os.PathLike[str],
    chunk_size: int,
    episodes: Collection[str] | None,
) -> Path:
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be at least 1, got {chunk_size}")
    out = Path(out_dir)
    write_static(out)
    data = out / "data"
    if data.exists():
        shutil.rmtree(data)  # a re-written bundle must not keep chunks of episodes now gone
    data.mkdir(parents=True)
    only = set(episodes) if episodes is not None else None
    payload = runs.runs_payload(chunk_size)
    for k, index in enumerate(runs.indexes):
        run_data = data / str(k)
        (run_data / "ep").mkdir(parents=True)
        (run_data / "index.js").write_bytes(index.list_script())
        (run_data / "m").mkdir()
        for position in range(len(index.metric_names())):
            (run_data / "m" / f"{position}.js").write_bytes(index.metric_script(position))
        if only is None:
            chunks: Iterable[int] = range((len(index) + chunk_size - 1) // chunk_size)
        else:
            index.ensure_rows()
            rows = [r for r, eid in enumerate(index.columns["id"]) if eid in only]
            chunks = sorted({r // chunk_size for r in rows})
        bundled = 0
        for c in chunks:
            part = runs.chunk(k, c, chunk_size, only)
            bundled += len(part["episodes"])
            (run_data / "ep" / f"{c}.js").write_bytes(data_script(f"chunk:{k}:{c}", part))
        payload["runs"][k]["bundled"] = bundled
    (data / "runs.js").write_bytes(data_script("runs", payload))
    return out / "index.html"


# -- server -----------------------------------------------------------------------------------
VIEWER_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
_DATA_PATH = re.compile(
    r"^/data/(?:runs\.js|(\d+)/index\.js|(\d+)/ep/(\d+)\.js|(\d+)/m/(\d+)\.js)$"
)


class _Handler(BaseHTTPRequestHandler):
    server: ViewerServer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        if self.server.verbose:
            super().log_message(format, *args)

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        # Episode text is data, never code: scripts only from the viewer itself, no inline
        # script, no plugin, no framing; and no MIME sniffing of the data files.
        self.send_header("Content-Security-Policy", VIEWER_CSP)
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:  # noqa: N802 - stdlib name
        path = self.path.split("?", 1)[0].split("#", 1)[0]
        if path in ("/", ""):
            path = "/index.html"
        name = path.lstrip("/")
        if name in STATIC_FILES:
            body = (STATIC_DIR / name).read_bytes()
            self._send(HTTPStatus.OK, body, _CONTENT_TYPES[Path(name).suffix])
            return
        match = _DATA_PATH.match(path)
        if match is None:
            self._send(HTTPStatus.NOT_FOUND, f"not found: {path}".encode(), "text/plain")
            return
        try:
            body = self.server.data(*match.groups())
        except IndexError as exc:
            self._send(HTTPStatus.NOT_FOUND, str(exc).encode(), "text/plain")
            return
        except Exception as exc:  # shown in the page, not a dead connection
            message = f"{type(exc).__name__}: {exc}"
            self._send(HTTPStatus.INTERNAL_SERVER_ERROR, message.encode(), "text/plain")
            return
        self._send(HTTPStatus.OK, body, _CONTENT_TYPES[".js"])


class ViewerServer(ThreadingHTTPServer):
    """The viewer on ``host:port`` (port 0 = any free port; ``url`` says which)."""

    daemon_threads = True

    def __init__(
        self,
        run_dirs: Sequence[str | os.PathLike[str]],
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        verbose: bool = False,
    ) -> None:
        self.runs = ViewerRuns.open(run_dirs)
        self.verbose = verbose
        self._index_cache: dict[int, bytes] = {}
        self._metric_cache: dict[tuple[int, int], bytes] = {}
        self._lock = threading.Lock()
        self._render_lock = threading.Lock()
        super().__init__((host, port), _Handler)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host!s}:{port}/"

    def data(
        self,
        index_run: str | None,
        chunk_run: str | None = None,
        chunk: str | None = None,
        metric_run: str | None = None,
        metric: str | None = None,
    ) -> bytes:
        if metric_run is not None and metric is not None:
            k = int(metric_run)
            if k >= len(self.runs.indexes):
                raise IndexError(f"no run {k}")
            with self._lock:
                key = (k, int(metric))
                if key not in self._metric_cache:
                    self._metric_cache[key] = self.runs.indexes[k].metric_script(int(metric))
                return self._metric_cache[key]
        if index_run is not None:
            k = int(index_run)
            if k >= len(self.runs.indexes):
                raise IndexError(f"no run {k}")
            with self._lock:
                if k not in self._index_cache:
                    self._index_cache[k] = self.runs.indexes[k].list_script()
                return self._index_cache[k]
        if chunk_run is not None and chunk is not None:
            k, c = int(chunk_run), int(chunk)
            if k >= len(self.runs.indexes):
                raise IndexError(f"no run {k}")
            with self._render_lock:  # plugin loading and suite memo caches are not thread-safe
                return data_script(f"chunk:{k}:{c}", self.runs.chunk(k, c, 1))
        return data_script("runs", self.runs.runs_payload(1))

    def serve_in_thread(self) -> threading.Thread:
        """Serve from a daemon thread (tests, notebooks); stop with ``shutdown()``."""
        thread = threading.Thread(target=self.serve_forever, name="exploreval-viewer", daemon=True)
        thread.start()
        return thread


# -- links (for the HTML report) --------------------------------------------------------------
def episode_link(run_id: str, episode_id: str, *, step: int | None = None) -> str:
    """The page fragment that opens one episode (append to ``viewer/index.html``)."""
    link = f"#/run/{quote(run_id, safe='')}/episode/{quote(episode_id, safe='')}"
    return link if step is None else f"{link}/step/{step}"


def list_link(**filters: str | int) -> str:
    """The list with filters, e.g. ``list_link(suite="grid", success=0)``; metric ranges as
    ``m="metric:min:max"`` (either bound may be empty)."""
    unknown = set(filters) - {"run", "suite", "env", "preset", "agent", "success", "errors", "m"}
    if unknown:
        raise ValueError(f"unknown list filter(s) {sorted(unknown)}")
    query = urlencode({k: str(v) for k, v in filters.items()})
    return "#/list" + (f"?{query}" if query else "")
