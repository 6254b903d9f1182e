"""What a score's map computed, chunk by chunk, kept for the next score of the same run.

A score's map (every metric of every latest record) is nearly all of its time: 86 s for a
100k-episode run here. Its chunks are pure functions of their log bytes, the run id and the
metric code, so a chunk whose inputs are unchanged need not be mapped again. That makes two
things cheap that were not: scoring a sweep again after more episodes were appended (only the
new chunks, and a chunk whose episode was retried, are mapped) and a score that was killed
(its finished chunks are kept; the next score maps the rest).

Each chunk's result is one zstd-compressed pickle, named by a hash of everything it depends
on: the score stamp without the log's size and time (the exploreval version, the registered
metrics, the metric code's files, the run id...), the chunk's spans and their bytes. So a
changed line, a new metric or an edited metric module is a miss, never a stale row. The files
are pickles, so they live in the user's cache (``score_cache_root()``), never in the run
directory: a run shared with others must not carry code into their scores; a chunk file another
user owns (a cache folder set to a shared place) is never loaded. After a score only
that score's chunk files are kept, so a run's cache is at most one score's worth (about 0.2 kB
an episode).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.util
import json
import math
import os
import pickle
import struct
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from exploreval.core import user_cache_dir
from exploreval.store import RunNote

#: Bumped when what a chunk file holds changes shape: older files are then misses.
FORMAT = 1
_SUFFIX = ".chunk.zst"
#: ``EXPLOREVAL_SCORE_CACHE``: a directory, or ``off`` to map every chunk every time.
ENV_VAR = "EXPLOREVAL_SCORE_CACHE"
#: ``EXPLOREVAL_SCORE_CACHE_GB``: the whole cache's size past which the runs scored longest
#: ago lose their chunks (runs deleted or moved leave theirs behind otherwise).
LIMIT_ENV_VAR = "EXPLOREVAL_SCORE_CACHE_GB"
DEFAULT_LIMIT_GB = 4.0


def score_cache_root() -> Path | None:
    """``$EXPLOREVAL_SCORE_CACHE``, else ``$XDG_CACHE_HOME/exploreval/score`` (``~/.cache``);
    None when the variable says ``off``."""
    if os.environ.get(ENV_VAR, "").lower() == "off":
        return None
    return user_cache_dir("score", ENV_VAR)


@functools.lru_cache(maxsize=1)
def runtime_versions() -> dict[str, str]:
    """Python's and the numeric libraries' versions: a chunk mapped before an upgrade of one
    of them (a pandas that types a column differently, a numpy that rounds a mean otherwise)
    is a miss, not a row computed by other code."""
    from importlib import metadata

    versions = {"python": sys.version.split()[0]}
    for package in ("numpy", "pandas", "pyarrow", "pydantic"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = ""
    return versions


def code_fingerprint(modules: Iterable[str]) -> str:
    """A hash of the source files (path, size, mtime) of exploreval and of every top-level
    package in ``modules``: an edited metric in an editable install changes it, where the
    version number would not."""
    roots = {"exploreval", *(m.split(".", 1)[0] for m in modules if m)}
    digest = hashlib.sha256()
    for root in sorted(roots):
        for path in _source_files(root):
            with contextlib.suppress(OSError):
                st = path.stat()
                digest.update(f"{path}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def _source_files(top: str) -> list[Path]:
    module = sys.modules.get(top)
    locations: list[str] = []
    if module is not None and getattr(module, "__path__", None):
        locations = list(module.__path__)
    elif module is not None and getattr(module, "__file__", None):
        return [Path(str(module.__file__))]
    else:
        try:
            spec = importlib.util.find_spec(top)
        except (ImportError, ValueError):
            return []
        if spec is None:
            return []
        if spec.submodule_search_locations:
            locations = list(spec.submodule_search_locations)
        elif spec.origin and spec.origin not in ("built-in", "frozen"):
            return [Path(spec.origin)]
    files: list[Path] = []
    for location in locations:
        for folder, dirs, names in os.walk(location):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__" and not d.startswith("."))
            files.extend(Path(folder, n) for n in sorted(names) if n.endswith(".py"))
    return files


class ScoreCacheWarning(RunNote):
    """A score could not keep its chunks in the score cache: it is right, but the next score
    of the run maps everything again (``EXPLOREVAL_SCORE_CACHE`` names an unusable place)."""


@dataclass(frozen=True)
class MapCache:
    """One run's chunk results in ``folder`` (picklable: each map worker gets a copy)."""

    folder: str
    #: What every chunk of this score depends on besides its own bytes (JSON of the stamp).
    context: str

    @classmethod
    def for_run(cls, run_path: Path, stamp: dict[str, Any]) -> MapCache | None:
        try:
            root = score_cache_root()
        except (RuntimeError, KeyError):  # no home to find: score without a cache
            return None
        if root is None:
            return None
        name = hashlib.sha256(str(run_path.resolve()).encode()).hexdigest()[:24]
        context = {k: v for k, v in stamp.items() if not k.startswith("log_")}
        context["runtime"] = runtime_versions()
        return cls(str(root / name), json.dumps(context, sort_keys=True))

    def key(self, spans: Sequence[tuple[int, int, int]], lines: Sequence[bytes]) -> str:
        """The hash of the chunk's context, its spans and the bytes ``lines`` read at them."""
        digest = hashlib.sha256(f"{FORMAT}\0{self.context}\0".encode())
        for (offset, length, line), raw in zip(spans, lines, strict=True):
            digest.update(struct.pack("<qqq", offset, length, line))
            digest.update(raw)
        return digest.hexdigest()

    def _path(self, key: str) -> Path:
        return Path(self.folder) / f"{key}{_SUFFIX}"

    def load(self, key: str) -> Any | None:
        """The result stored under ``key``; None when there is none or it does not read back
        whole (a torn or foreign file is a miss: the chunk is mapped again)."""
        import zstandard

        try:
            with open(self._path(key), "rb") as fh:
                if os.fstat(fh.fileno()).st_uid != os.getuid():
                    return None  # planted by another user (a shared cache folder): never load
                data = zstandard.ZstdDecompressor().decompress(fh.read())
            stored_format, stored_key, value = pickle.loads(data)
        except Exception:
            return None
        return value if (stored_format, stored_key) == (FORMAT, key) else None

    def store(self, key: str, value: Any) -> str | None:
        """Keep ``value`` under ``key``; None, or why it could not be kept (a full disk, a
        folder that is a file): that only means the next score maps this chunk again."""
        import zstandard

        from exploreval.core import write_atomic

        payload = pickle.dumps((FORMAT, key, value), protocol=pickle.HIGHEST_PROTOCOL)
        data = zstandard.ZstdCompressor(level=3).compress(payload)
        try:
            Path(self.folder).mkdir(mode=0o700, parents=True, exist_ok=True)
            write_atomic(self._path(key), lambda tmp: Path(tmp).write_bytes(data))
        except OSError as exc:
            return f"{self.folder}: {exc.strerror or exc}"
        return None

    def keep_only(self, keys: Iterable[str]) -> str:
        """Delete this run's chunk files but ``keys`` (the last score's): a run's cache is
        never more than one score's worth. Then, if the whole cache is past its limit
        (``EXPLOREVAL_SCORE_CACHE_GB``), the other runs' folders go, least recently scored
        first. Returns what is wrong with the limit's variable ('' when nothing is)."""
        wanted = {f"{k}{_SUFFIX}" for k in keys}
        folder = Path(self.folder)
        with contextlib.suppress(OSError):
            for path in folder.iterdir():
                if path.name.endswith(_SUFFIX) and path.name not in wanted:
                    path.unlink(missing_ok=True)
            os.utime(folder)  # scored now: the last folder to go
        limit, problem = cache_limit_bytes()
        _prune(folder.parent, keep=folder.name, limit=limit)
        return problem


def cache_limit_bytes() -> tuple[float, str]:
    """The whole score cache's size limit in bytes (``EXPLOREVAL_SCORE_CACHE_GB``), and what
    is wrong with the variable when it is not a size: then the default holds, and the caller
    says so (a typo must not go unnoticed, nor empty or grow the cache unbounded)."""
    raw = os.environ.get(LIMIT_ENV_VAR, "").strip()
    if not raw:
        return DEFAULT_LIMIT_GB * 1e9, ""
    try:
        gb = float(raw)
    except ValueError:
        gb = math.nan
    if not (math.isfinite(gb) and gb >= 0):
        return DEFAULT_LIMIT_GB * 1e9, (
            f"{LIMIT_ENV_VAR}={raw!r} is not a size in gigabytes (a number, 0 or more); "
            f"the default, {DEFAULT_LIMIT_GB:g} GB, was used"
        )
    return gb * 1e9, ""


def _prune(root: Path, keep: str, limit: float) -> None:
    """Remove whole run folders of ``root``, least recently scored first, until the cache is
    within ``limit`` bytes; ``keep`` (the run just scored) is never removed."""
    import shutil

    folders: list[tuple[float, int, Path]] = []
    total = 0
    with contextlib.suppress(OSError):
        for folder in root.iterdir():
            if not folder.is_dir():
                continue
            size = sum(p.stat().st_size for p in folder.glob(f"*{_SUFFIX}") if p.is_file())
            total += size
            if folder.name != keep:
                folders.append((folder.stat().st_mtime, size, folder))
    for _, size, folder in sorted(folders, key=lambda f: f[0]):
        if total <= limit:
            break
        shutil.rmtree(folder, ignore_errors=True)
        total -= size
