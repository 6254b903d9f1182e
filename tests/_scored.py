"""Shared by the score tests: a private copy of a stored run, scored in small chunks with a
score cache of its own (``score_copy``)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from exploreval.analysis import _mapcache, _score
from exploreval.store import RunDir


def score_copy(
    template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int
) -> RunDir:
    """A copy of the run at ``template`` without its columns, tables or results (so its first
    score syncs and maps), scored ``chunk`` episodes at a time, its score cache in ``tmp_path``."""
    monkeypatch.setattr(_score, "CHUNK_EPISODES", chunk)
    monkeypatch.setenv(_mapcache.ENV_VAR, str(tmp_path / "score-cache"))
    copy = tmp_path / "run"
    shutil.copytree(template, copy, ignore=shutil.ignore_patterns("columns", "tables", "viewer*"))
    (copy / "results.parquet").unlink(missing_ok=True)
    return RunDir(copy)
