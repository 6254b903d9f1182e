"""A score keeps each chunk of its map in the user's score cache (``analysis._mapcache``): the
next score of the run maps only chunks whose bytes or context changed, and gives exactly what a
cold score gives. Checked on a real run (scripted agents on grid and bandit): appended episodes,
a retried episode, a killed score, a torn cache file, an edited metric module, the cache off,
and forked map workers."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from _scored import score_copy
from exploreval.analysis import _mapcache, _score, score_run
from exploreval.core import WORKERS_ENV
from exploreval.runner import run_experiment, spec_from_dict
from exploreval.store import RunDir

SPEC = {
    "name": "mapcache",
    "suites": [
        {"env_id": "exploreval/GridDAG-v0", "presets": ["explore-low/dag-small"], "seeds": "0-3"},
        {"env_id": "exploreval/Bandit-v0", "presets": ["smoke"], "seeds": "0-1"},
    ],
    "agents": [
        {"kind": "scripted", "agent": "random", "suites": [0, 1]},
        {"kind": "scripted", "agent": "ucb", "suites": [1]},
    ],
    "repeats": 2,
}
CHUNK = 3


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("mapcache") / "run"
    run_experiment(spec_from_dict(SPEC, "test"), str(root))
    return root


@pytest.fixture
def run(template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> RunDir:
    """A private copy of the run, its first lines only (the rest are appended by tests), scored
    in chunks of three with a cache of its own."""
    return score_copy(template, tmp_path, monkeypatch, CHUNK)


def _lines(run: RunDir) -> list[bytes]:
    return run.episodes_path.read_bytes().splitlines(keepends=True)


def _restart(run: RunDir, lines: list[bytes]) -> None:
    run.episodes_path.write_bytes(b"".join(lines))


@pytest.fixture
def mapped(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The number of records each chunk mapped (not read from the cache), in order."""
    calls: list[int] = []
    real = _score._score_chunk

    def counted(log: str, spans: Any, run_id: str, lines: Any = None) -> Any:
        calls.append(len(spans))
        return real(log, spans, run_id, lines)

    monkeypatch.setattr(_score, "_score_chunk", counted)
    return calls


def _cold(run: RunDir, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """What a score of a fresh copy of the run gives with no cache at all."""
    copy = tmp_path / "cold"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(run.path, copy, ignore=shutil.ignore_patterns("columns", "tables", "viewer*"))
    (copy / "results.parquet").unlink(missing_ok=True)
    with monkeypatch.context() as m:
        m.setenv(_mapcache.ENV_VAR, "off")
        return score_run(RunDir(copy), write=False)


def _same(got: Any, want: Any) -> None:
    drop = ["run_id"]  # the copies are scored under their own run id only if they differ
    pd.testing.assert_frame_equal(
        got.table.drop(columns=drop, errors="ignore"),
        want.table.drop(columns=drop, errors="ignore"),
    )
    assert list(got.tables) == list(want.tables)
    for name in want.tables:
        pd.testing.assert_frame_equal(got.tables[name], want.tables[name], obj=name)


def _chunk_files(run: RunDir) -> dict[str, int]:
    cache = _mapcache.MapCache.for_run(run.path, {})
    assert cache is not None
    folder = Path(cache.folder)
    return {p.name: p.stat().st_mtime_ns for p in folder.glob("*.chunk.zst")}


def test_appended_episodes_map_only_the_new_chunks_and_score_as_a_cold_score(
    run: RunDir, mapped: list[int], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = _lines(run)
    assert len(lines) >= 4 * CHUNK + 2
    _restart(run, lines[: 3 * CHUNK])
    score_run(run)
    assert mapped == [CHUNK] * 3
    assert len(_chunk_files(run)) == 3
    # the sweep goes on: the three full chunks are read back, the rest is mapped
    _restart(run, lines)
    mapped.clear()
    again = score_run(run)
    assert sum(mapped) == len(lines) - 3 * CHUNK
    assert (again.chunks, again.chunks_cached) == (-(-len(lines) // CHUNK), 3)
    _same(again, _cold(run, tmp_path, monkeypatch))
    # and a score of the unchanged run maps nothing (it reuses the stored results)
    mapped.clear()
    score_run(run)
    assert mapped == []


def test_a_retried_episode_maps_its_own_chunk_again(
    run: RunDir, mapped: list[int], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A later line for an episode of the second chunk (a retry that ended ok again, with
    another outcome) changes that chunk's bytes: it is mapped again; the others are not."""
    import orjson

    lines = _lines(run)[: 3 * CHUNK]
    _restart(run, lines)
    score_run(run)
    retried = orjson.loads(lines[CHUNK + 1])
    retried["steps"] = retried["steps"][:1]
    retried["success"] = False
    _restart(run, [*lines, orjson.dumps(retried) + b"\n"])
    mapped.clear()
    again = score_run(run)
    assert mapped == [CHUNK]  # the second chunk only, now holding the retry's line
    want = _cold(run, tmp_path, monkeypatch)
    _same(again, want)
    row = again.table[again.table["episode_id"] == retried["episode_id"]]
    assert row["steps"].tolist() == [1]


def test_a_killed_score_resumes_from_its_finished_chunks(
    run: RunDir, mapped: list[int], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    lines = _lines(run)[: 4 * CHUNK]
    _restart(run, lines)
    real = _score._score_chunk

    def dies_on_the_third(log: str, spans: Any, run_id: str, lines: Any = None) -> Any:
        if len(mapped) == 2:
            raise KeyboardInterrupt
        return real(log, spans, run_id, lines)

    with monkeypatch.context() as m:
        m.setattr(_score, "_score_chunk", dies_on_the_third)
        with pytest.raises(KeyboardInterrupt):
            score_run(run)
    assert len(_chunk_files(run)) == 2  # the two chunks done before the kill
    mapped.clear()
    again = score_run(run)
    assert mapped == [CHUNK, CHUNK]  # the two it had not finished
    _same(again, _cold(run, tmp_path, monkeypatch))


def test_a_torn_cache_file_is_a_miss(
    run: RunDir, mapped: list[int], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _restart(run, _lines(run)[: 2 * CHUNK])
    score_run(run)
    files = sorted(_chunk_files(run))
    cache = _mapcache.MapCache.for_run(run.path, {})
    assert cache is not None
    folder = Path(cache.folder)
    torn = folder / files[0]
    torn.write_bytes(torn.read_bytes()[:20])
    shutil.rmtree(run.tables_dir)  # so the stored results are not simply reused
    mapped.clear()
    again = score_run(run)
    assert mapped == [CHUNK]
    _same(again, _cold(run, tmp_path, monkeypatch))


def test_an_edited_metric_module_maps_everything_again(
    run: RunDir, mapped: list[int], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The context holds the metric code's files: an edit that keeps the version (an editable
    install) is a miss for every chunk, never a stale row."""
    package = tmp_path / "plugin_src" / "cachedmetric"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("def row(record):\n    return {'twice': 2}\n")
    monkeypatch.syspath_prepend(str(package.parent))
    from exploreval.metrics import METRIC_REGISTRY, register_episode_metrics

    register_episode_metrics("*", "cached_metric", "cachedmetric:row")
    try:
        _restart(run, _lines(run)[: 2 * CHUNK])
        first = score_run(run)
        assert set(first.table["twice"]) == {2}
        (package / "__init__.py").write_text("def row(record):\n    return {'twice': 3}\n")
        os.utime(package / "__init__.py", ns=(1, 1))  # whatever the clock's tick
        import sys

        del sys.modules["cachedmetric"]  # as a new process would, import the edited module
        mapped.clear()
        again = score_run(run)
        assert mapped == [CHUNK, CHUNK]
        assert set(again.table["twice"]) == {3}
    finally:
        METRIC_REGISTRY.unregister("episode:*:cached_metric")


def test_off_keeps_nothing(run: RunDir, mapped: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(_mapcache.ENV_VAR, "off")
    _restart(run, _lines(run)[: 2 * CHUNK])
    score_run(run)
    shutil.rmtree(run.tables_dir)
    mapped.clear()
    score_run(run)
    assert mapped == [CHUNK, CHUNK]
    assert _mapcache.MapCache.for_run(run.path, {}) is None


def test_only_the_last_scores_chunks_are_kept_and_none_in_the_run(run: RunDir) -> None:
    lines = _lines(run)
    _restart(run, lines[: 2 * CHUNK])
    score_run(run)
    before = set(_chunk_files(run))
    import orjson

    changed = orjson.loads(lines[0])
    changed["steps"] = changed["steps"][:1]
    _restart(run, [*lines[: 2 * CHUNK], orjson.dumps(changed) + b"\n"])
    score_run(run)
    after = set(_chunk_files(run))
    assert len(after) == 2 and len(after & before) == 1  # the first chunk's old file is gone
    assert not [p for p in run.path.rglob("*") if p.name.endswith(".chunk.zst")]


def test_forked_workers_keep_and_read_chunks(
    run: RunDir, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(WORKERS_ENV, "2")
    monkeypatch.setattr(_score, "PARALLEL_FROM", 1)
    lines = _lines(run)
    _restart(run, lines[: 3 * CHUNK])
    score_run(run)
    first = _chunk_files(run)
    assert len(first) == 3
    _restart(run, lines)
    again = score_run(run)
    second = _chunk_files(run)
    assert {k: v for k, v in second.items() if k in first} == first  # read, not rewritten
    assert len(second) == -(-len(lines) // CHUNK)
    _same(again, _cold(run, tmp_path, monkeypatch))


def test_past_its_limit_the_cache_drops_the_runs_scored_longest_ago(
    run: RunDir, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Runs deleted or moved leave their chunks behind: past ``EXPLOREVAL_SCORE_CACHE_GB`` the
    folders of the runs scored longest ago go, and only as many as needed; never the run just
    scored."""
    _restart(run, _lines(run)[:CHUNK])
    score_run(run)
    ours = _mapcache.MapCache.for_run(run.path, {})
    assert ours is not None
    own = sum(p.stat().st_size for p in Path(ours.folder).iterdir())
    root = Path(ours.folder).parent
    for age, name in ((300, "oldest"), (200, "middle"), (100, "recent")):
        folder = root / name
        folder.mkdir()
        (folder / f"{'0' * 64}.chunk.zst").write_bytes(b"x" * 4000)
        os.utime(folder, (1e9 - age, 1e9 - age))
    limit = own + 8000  # room for two of the three
    monkeypatch.setenv(_mapcache.LIMIT_ENV_VAR, str(limit / 1e9))
    shutil.rmtree(run.tables_dir)  # score again (every chunk read back)
    score_run(run)
    assert sorted(p.name for p in root.iterdir()) == sorted(
        ["middle", "recent", Path(ours.folder).name]
    )
    monkeypatch.setenv(_mapcache.LIMIT_ENV_VAR, "0")  # nothing fits: only the run scored stays
    shutil.rmtree(run.tables_dir)
    score_run(run)
    assert [p.name for p in root.iterdir()] == [Path(ours.folder).name]


def test_a_chunk_file_another_user_owns_is_never_loaded(
    run: RunDir, mapped: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The files are pickles: in a cache folder others can write to (set to a shared place by
    mistake), one they planted must not run code in this user's score."""
    _restart(run, _lines(run)[:CHUNK])
    score_run(run)
    shutil.rmtree(run.tables_dir)
    me = os.getuid()
    monkeypatch.setattr(_mapcache.os, "getuid", lambda: me + 1)  # the files are now another's
    mapped.clear()
    score_run(run)
    assert mapped == [CHUNK]


def test_the_cli_says_how_much_of_the_map_came_from_the_cache(run: RunDir) -> None:
    import subprocess
    import sys

    def score() -> str:
        done = subprocess.run(
            [sys.executable, "-m", "exploreval", "score", str(run.path)],
            capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        return " ".join(done.stdout.split())

    assert "score cache" not in score()  # nothing kept yet: everything mapped
    shutil.rmtree(run.tables_dir)  # results not reused whole: the map runs, from the cache
    assert "map: 1 of 1 chunks read back from the score cache" in score()


def test_a_cache_that_cannot_be_written_is_said_once_and_the_score_is_right(
    run: RunDir, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from exploreval.analysis import ScoreCacheWarning

    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv(_mapcache.ENV_VAR, str(blocker))
    _restart(run, _lines(run)[: 2 * CHUNK])
    with pytest.warns(ScoreCacheWarning, match="the score cache cannot be written") as caught:
        got = score_run(run)
    assert len([w for w in caught if w.category is ScoreCacheWarning]) == 1
    assert "EXPLOREVAL_SCORE_CACHE" in str(caught[0].message)
    _same(got, _cold(run, tmp_path, monkeypatch))


def test_an_upgraded_numeric_library_maps_everything_again(
    run: RunDir, mapped: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A chunk depends on the code that computed it beyond exploreval's own: a pandas or numpy
    upgrade (a column typed otherwise, a mean rounded otherwise) is a miss, not a stale row."""
    _restart(run, _lines(run)[: 2 * CHUNK])
    score_run(run)
    versions = _mapcache.runtime_versions()
    assert {"python", "numpy", "pandas", "pyarrow", "pydantic"} <= set(versions)
    assert all(versions.values())  # each is installed here, and read
    shutil.rmtree(run.tables_dir)
    mapped.clear()
    score_run(run)
    assert mapped == []  # same runtime: every chunk read back
    monkeypatch.setattr(_mapcache, "runtime_versions", lambda: {**versions, "pandas": "9.9"})
    shutil.rmtree(run.tables_dir)
    mapped.clear()
    score_run(run)
    assert mapped == [CHUNK, CHUNK]


@pytest.mark.parametrize("value", ["four", "-1", "nan", "inf"])
def test_a_cache_limit_that_is_not_a_size_is_said_and_the_default_holds(
    run: RunDir, value: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A typo in ``EXPLOREVAL_SCORE_CACHE_GB`` must not pass unnoticed: said once, naming the
    variable and its value; the default limit holds (the other runs' chunks stay)."""
    from exploreval.analysis import ScoreCacheWarning

    _restart(run, _lines(run)[:CHUNK])
    ours = _mapcache.MapCache.for_run(run.path, {})
    assert ours is not None
    other = Path(ours.folder).parent / "another-run"
    other.mkdir(parents=True)
    (other / f"{'0' * 64}.chunk.zst").write_bytes(b"x" * 4000)
    monkeypatch.setenv(_mapcache.LIMIT_ENV_VAR, value)
    with pytest.warns(ScoreCacheWarning) as caught:
        score_run(run)
    said = [str(w.message) for w in caught if w.category is ScoreCacheWarning]
    assert len(said) == 1
    assert f"EXPLOREVAL_SCORE_CACHE_GB={value!r}" in said[0] and "4 GB" in said[0]
    assert other.is_dir()  # 4 GB holds it
    assert _mapcache.cache_limit_bytes() == (4e9, said[0])
    monkeypatch.setenv(_mapcache.LIMIT_ENV_VAR, " 0.5 ")
    assert _mapcache.cache_limit_bytes() == (0.5e9, "")
