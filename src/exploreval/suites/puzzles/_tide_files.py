"""TIDE's published instance files (github.com/yayayacc/TIDE, ``data/``), read as shipped.

The repository has no licence, so nothing of it is copied into exploreval: a user passes the path
of their own copy (``--env-option instances=PATH``) and seed k plays instance k of that file. The
file is read when the env is made and again at every reset, and the SHA-256 of the bytes that were
played goes into the episode's ground truth: an instance is named by its content, not by a path
whose file may change between a run and its resume.

The three formats, as TIDE's files have them (each item a JSON object in one top-level list):

* FrozenLake (``frozen_lake/100_6_15.json``): ``grid_size`` and ``seed``; the board is what
  RAGEN's generator draws for them (:func:`._frozenlake.ragen_lake`).
* Sudoku (``sudoku/100_gs3_1_15.json``): ``grid_size`` (the box side: 3 is 9x9), ``level`` (cells
  removed) and ``seed``; the puzzle is TIDE's generator's (:func:`._sudoku.tide_sudoku`).
* BlocksWorld (``blocksworld/100_1_10.json``): ``level`` and ``label``, a PDDL problem whose
  ``:init`` and ``:goal`` are played (:func:`._blocksworld.parse_pddl_problem`); ``system`` and
  ``query`` (TIDE's prompt text) are kept but not needed.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from exploreval.suites.puzzles._errors import PuzzleParamError

#: The fields each kind of file must give per instance, with their JSON type.
REQUIRED_FIELDS: dict[str, dict[str, type]] = {
    "frozenlake": {"grid_size": int, "seed": int},
    "sudoku": {"grid_size": int, "level": int, "seed": int},
    "blocksworld": {"level": int, "label": str},
}

#: Fields a file of each kind may give besides the required ones (TIDE's prompt text).
OPTIONAL_FIELDS: dict[str, tuple[str, ...]] = {
    "frozenlake": (),
    "sudoku": (),
    "blocksworld": ("system", "query"),
}

#: What the file of each kind is called in TIDE's repository (for messages).
TIDE_FILE_NAMES = {
    "frozenlake": "data/frozen_lake/100_6_15.json",
    "sudoku": "data/sudoku/100_gs3_1_15.json",
    "blocksworld": "data/blocksworld/100_1_10.json",
}

#: Checks one instance beyond its field types (e.g. that a PDDL label parses); raises ValueError.
InstanceCheck = Callable[[Mapping[str, Any]], None]


class InstanceFileError(PuzzleParamError):
    """An instance file cannot be played; the message names the file, the instance and the field."""


@dataclass(frozen=True)
class InstanceFile:
    """The instances of one file, named by the SHA-256 of the bytes they were read from."""

    path: str
    sha256: str
    kind: str
    items: tuple[Mapping[str, Any], ...]

    def item(self, index: int | None) -> Mapping[str, Any]:
        """Instance ``index`` (the episode's seed); a clear error for no seed or one too large."""
        count = len(self.items)
        if index is None:
            raise InstanceFileError(
                f"{self.path}: instances from a file are played by seed: reset(seed=k) plays "
                f"instance k (0..{count - 1}); an unseeded reset has no instance"
            )
        if index >= count:
            raise InstanceFileError(
                f"{self.path}: seed {index}: the file has {count} instances (seeds 0..{count - 1})"
            )
        return self.items[index]

    def source(self, index: int) -> dict[str, Any]:
        """What the ground truth says about where instance ``index`` came from."""
        return {"file": self.path, "sha256": self.sha256, "index": index, "kind": self.kind}


def read_instance_file(path: str, kind: str, check: InstanceCheck | None = None) -> InstanceFile:
    """The instances of ``path`` as a ``kind`` file, every one checked (fields, then ``check``)."""
    if kind not in REQUIRED_FIELDS:
        raise ValueError(f"unknown instance file kind {kind!r}")
    try:
        data = Path(path).expanduser().read_bytes()
    except OSError as exc:
        raise InstanceFileError(
            f"option 'instances': cannot read {path!r} ({exc.strerror or exc}); expected TIDE's "
            f"{TIDE_FILE_NAMES[kind]} or a file of its format"
        ) from None
    return _parse(path, hashlib.sha256(data).hexdigest(), data, kind, check)


@lru_cache(maxsize=32)
def _parse(
    path: str, sha256: str, data: bytes, kind: str, check: InstanceCheck | None
) -> InstanceFile:
    # cached by content (the hash and bytes are the key): a changed file is parsed again
    try:
        items = json.loads(data)
    except UnicodeDecodeError as exc:
        raise InstanceFileError(f"{path}: not UTF-8 text ({exc.reason})") from None
    except json.JSONDecodeError as exc:
        raise InstanceFileError(
            f"{path}: line {exc.lineno}, column {exc.colno}: not JSON ({exc.msg})"
        ) from None
    if not isinstance(items, list) or not items:
        raise InstanceFileError(
            f"{path}: expected a non-empty JSON list of instances (as TIDE's "
            f"{TIDE_FILE_NAMES[kind]}), got {type(items).__name__ if items else 'an empty list'}"
        )
    for index, item in enumerate(items):
        _check_item(path, kind, index, item)
        if check is not None:
            try:
                check(item)
            except ValueError as exc:
                raise InstanceFileError(f"{path}: instance {index}: {exc}") from None
    return InstanceFile(path=path, sha256=sha256, kind=kind, items=tuple(items))


def _check_item(path: str, kind: str, index: int, item: Any) -> None:
    where = f"{path}: instance {index}"
    if not isinstance(item, dict):
        raise InstanceFileError(f"{where}: expected a JSON object, got {type(item).__name__}")
    required = REQUIRED_FIELDS[kind]
    missing = [name for name in required if name not in item]
    unknown = sorted(set(item) - set(required) - set(OPTIONAL_FIELDS[kind]))
    if missing or unknown:
        other = next(
            (k for k, fields in REQUIRED_FIELDS.items() if k != kind and set(fields) <= set(item)),
            None,
        )
        hint = f"; this looks like a {other} file" if other else ""
        problem = (
            f"missing field(s) {', '.join(missing)}"
            if missing
            else f"unknown field(s) {', '.join(unknown)}"
        )
        raise InstanceFileError(
            f"{where}: {problem}: a {kind} file gives {', '.join(required)} per instance{hint}"
        )
    for name, expected in required.items():
        value = item[name]
        if isinstance(value, bool) or not isinstance(value, expected):
            raise InstanceFileError(
                f"{where}: field '{name}': expected {expected.__name__}, got {value!r}"
            )
        if isinstance(value, int) and value < 0:
            raise InstanceFileError(f"{where}: field '{name}': expected >= 0, got {value}")
