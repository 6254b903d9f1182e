"""A score says what it is doing while it runs (``score_run(progress=...)``, and a live line on
the CLI's stderr on a terminal): a 100k-episode sweep maps for a minute or more, and a silent
terminal for that long reads as a hang. Checked on a real run (grid and bandit, scripted
agents), in this process and with forked map workers, and through the CLI."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from _scored import score_copy
from exploreval.analysis import _score, score_run
from exploreval.core import WORKERS_ENV
from exploreval.runner import run_experiment, spec_from_dict
from exploreval.store import RunDir

SPEC = {
    "name": "progress",
    "suites": [
        {"env_id": "exploreval/GridDAG-v0", "presets": ["explore-low/dag-small"], "seeds": "0-3"},
        {"env_id": "exploreval/Bandit-v0", "presets": ["smoke"], "seeds": "0-3"},
    ],
    "agents": [{"kind": "scripted", "agent": "random"}],
}
CHUNK = 3


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("progress") / "run"
    run_experiment(spec_from_dict(SPEC, "test"), str(root))
    return root


@pytest.fixture
def run(template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> RunDir:
    return score_copy(template, tmp_path, monkeypatch, CHUNK)


def _check(said: list[tuple[str, int | None, int | None]], episodes: int, log: int = 0) -> None:
    """The stages in order; with ``log`` (bytes), the columns' sync read that many."""
    stages = [stage for stage, _, _ in said]
    assert stages[0] == "columns" and stages[-1] == "tables" and stages.count("tables") == 1
    synced = [(done, total) for stage, done, total in said if stage == "columns"]
    assert stages[: len(synced)] == ["columns"] * len(synced) and synced[0] == (None, None)
    assert synced[-1] == ((log, log) if log else (None, None))
    mapped = [(done, total) for stage, done, total in said if stage == "map"]
    assert stages.index("tables") > max(i for i, s in enumerate(stages) if s == "map")
    assert {total for _, total in mapped} == {episodes}
    done = [d for d, _ in mapped]
    assert done[0] == 0 and done[-1] == episodes and done == sorted(done)
    assert len(done) == 1 + -(-episodes // CHUNK)  # the start, then once per chunk


@pytest.mark.parametrize("workers", [1, 2])
def test_a_score_says_its_stages_and_the_episodes_mapped(
    run: RunDir, workers: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(WORKERS_ENV, str(workers))
    monkeypatch.setattr(_score, "PARALLEL_FROM", 1)
    said: list[tuple[str, int | None, int | None]] = []
    result = score_run(run, progress=lambda *a: said.append(a))
    episodes = len(result.table)
    assert episodes == 8
    _check(said, episodes, log=run.episodes_path.stat().st_size)  # its first sync
    # chunks read back from the score cache count as done too
    shutil.rmtree(run.tables_dir)
    said.clear()
    again = score_run(run, progress=lambda *a: said.append(a))
    assert again.chunks_cached == again.chunks
    _check(said, episodes)


def test_stored_results_reused_whole_say_no_map(run: RunDir) -> None:
    score_run(run)
    said: list[tuple[str, int | None, int | None]] = []
    score_run(run, progress=lambda *a: said.append(a))
    assert said == [("columns", None, None)]  # nothing to sync, map or reduce


def _cli_score(run: RunDir, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "exploreval", "score", str(run.path)],
        capture_output=True, text=True, timeout=300, env={**os.environ, **env},
    )  # fmt: skip


def test_the_cli_shows_the_score_on_a_terminal_and_keeps_pipes_clean(run: RunDir) -> None:
    piped = _cli_score(run)
    assert piped.returncode == 0, piped.stderr
    assert "scoring episodes" not in piped.stderr  # a log or a pipe gets the result only
    shutil.rmtree(run.tables_dir)
    live = _cli_score(run, FORCE_COLOR="1", COLUMNS="120")  # rich: as on a terminal
    assert live.returncode == 0, live.stderr
    assert "scoring episodes" in live.stderr and "8/8" in live.stderr
    assert "scoring episodes" not in live.stdout  # the table's stream stays the table
    assert "8 episodes" in live.stdout


def test_a_report_says_its_runs_score_then_the_report(run: RunDir, tmp_path: Path) -> None:
    """``exploreval report`` passes the live line to ``build_report(progress=...)``: the run's
    score (its map, episode by episode), then the report itself, in that order."""
    live = subprocess.run(
        [sys.executable, "-m", "exploreval", "report", str(run.path), "--out", str(tmp_path / "r")],
        capture_output=True, text=True, timeout=300,
        env={**os.environ, "FORCE_COLOR": "1", "COLUMNS": "120"},
    )  # fmt: skip
    assert live.returncode == 0, live.stderr
    said = live.stderr
    assert "8/8" in said and "writing the report" not in live.stdout
    assert said.index("scoring episodes") < said.index("writing the report")
    assert (tmp_path / "r" / "report.md").is_file()
