"""Atomic file writes shared by every layer (manifest, parquet tables, report pages, figures).

``write_atomic(path, write)`` has ``write`` fill a temp file beside ``path`` (a name no other
process or thread can share), fsyncs it, renames it over ``path`` and fsyncs the directory, so
after a crash or power loss a reader finds the old file or the new one, whole, never half of one
and never an empty file that a rename reached the disk before its data.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any


def unique_tmp(path: Path) -> Path:
    """A temp name beside ``path`` that no other process or thread can share (atomic rename)."""
    return path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")


def fsync_path(path: Path) -> None:
    """fsync a file's data (or a directory's entries) to disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_dir(path: Path) -> None:
    """fsync a directory so a rename inside it is durable; a no-op where the OS refuses it."""
    # some file systems do not fsync directories; the rename still happened
    with contextlib.suppress(OSError):
        fsync_path(path)


def sweep_stale_tmp(path: Path) -> list[Path]:
    """Remove temp files of ``path`` (``.<name>.<pid>.<hex>.tmp``) whose writer process is gone:
    a ``kill -9`` in the middle of a write leaves one behind, and nothing else would remove it.
    A live writer's temp file (its pid exists) is never touched."""
    removed: list[Path] = []
    prefix = f".{path.name}."
    try:
        entries = list(os.scandir(path.parent))
    except OSError:
        return removed
    for entry in entries:
        name = entry.name
        if not (name.startswith(prefix) and name.endswith(".tmp")):
            continue
        middle = name[len(prefix) : -len(".tmp")].split(".")
        if len(middle) != 2 or not middle[0].isdigit():
            continue
        pid = int(middle[0])
        if pid == os.getpid() or pid_alive(pid):
            continue
        with contextlib.suppress(OSError):
            os.unlink(entry.path)
            removed.append(Path(entry.path))
    return removed


def pid_alive(pid: int) -> bool:
    """Does process ``pid`` exist (someone else's counts: signalling it is refused, not absent)?"""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def write_atomic(path: Path, write: Callable[[Path], Any]) -> None:
    """``write(tmp_path)``, fsync, rename over ``path``, fsync the directory.

    A crash at any point leaves the old file whole; the temp file never outlives the call (and a
    temp file a killed writer left is swept by the next write of the same file).
    """
    path = Path(path)
    sweep_stale_tmp(path)
    tmp = unique_tmp(path)
    try:
        write(tmp)
        fsync_path(tmp)
        os.replace(tmp, path)
        fsync_dir(path.parent)
    finally:
        tmp.unlink(missing_ok=True)


def write_text_atomic(path: Path, text: str) -> None:
    """``write_atomic`` for a UTF-8 text."""
    write_atomic(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))


def user_cache_dir(name: str, env_var: str) -> Path:
    """Where exploreval keeps one kind of per-user cache: ``$<env_var>`` if set, else
    ``$XDG_CACHE_HOME/exploreval/<name>`` (``~/.cache`` without it). One rule for every cache
    (images, task templates, TextWorld games, run tables, score chunks), so a user who moves
    one knows how to move them all."""
    env = os.environ.get(env_var)
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "exploreval" / name
