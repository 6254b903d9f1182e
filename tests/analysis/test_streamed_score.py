"""``score_run`` streams a run's log (worker processes, one record at a time, run metrics as
map/reduce) and must give exactly what scoring every record held in memory gives
(``score_records``): the same results rows and the same run tables, on every suite, and keep
nothing but rows and summaries.

The runs are real: scripted agents on grid, bandit and the three puzzles (with repeats, so
pass@k has tables, and one errored episode), real TextWorld games for Task2Quiz, built-in
terminal tasks in real sandboxes, and a real Terminal-Bench run imported as shipped."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from exploreval.analysis import _score, score_records, score_run
from exploreval.core import WORKERS_ENV, EpisodeRecord
from exploreval.runner import run_experiment, spec_from_dict
from exploreval.store import LazyRecords, RunDir, import_logs

FIXTURES = Path(__file__).parents[1] / "fixtures" / "import"
TB_RUN = FIXTURES / "real" / "terminal-bench" / "2025-08-07__20-46-16"

NATIVE = {
    "name": "streamed",
    "suites": [
        {"env_id": "exploreval/GridDAG-v0", "presets": ["explore-low/dag-small"], "seeds": "0-2"},
        {"env_id": "exploreval/Bandit-v0", "presets": ["smoke"], "seeds": "0-1"},
        {"env_id": "exploreval/FrozenLake-v0", "presets": ["small"], "seeds": "0-1"},
        {"env_id": "exploreval/BlocksWorld-v0", "seeds": "0-1"},
        {"env_id": "exploreval/Sudoku-v0", "seeds": "0"},
    ],
    "agents": [
        {"kind": "scripted", "agent": "random_valid", "suites": [2, 3, 4]},
        {"kind": "scripted", "agent": "frontier", "suites": [0]},
        {"kind": "scripted", "agent": "random", "suites": [0, 1]},
        {"kind": "scripted", "agent": "ucb", "suites": [1]},
    ],
    "repeats": 2,
}


def _native(root: Path) -> RunDir:
    run_experiment(spec_from_dict(NATIVE, "test"), str(root / "native"))
    run = RunDir(root / "native")
    # an errored episode after its ok record, and a new errored one: errors stay out of scores
    lines = run.episodes_path.read_bytes().splitlines(keepends=True)
    import orjson

    first = orjson.loads(lines[0])
    broken = {**first, "status": "error", "error": "boom", "steps": []}
    fresh = {**broken, "episode_id": "never-ok"}
    with open(run.episodes_path, "ab") as fh:
        fh.write(orjson.dumps(broken) + b"\n" + orjson.dumps(fresh) + b"\n")
    return run


def _task2quiz(root: Path, cache: Path) -> RunDir:
    os.environ["EXPLOREVAL_TEXTWORLD_CACHE"] = str(cache)
    spec = {
        "suites": [{"env_id": "exploreval/Task2Quiz-v0", "presets": ["easy"], "seeds": [0, 1]}],
        "agents": [{"kind": "scripted", "agent": a} for a in ("explorer", "walkthrough")],
    }
    run_experiment(spec_from_dict(spec, "test"), str(root / "t2q"))
    return RunDir(root / "t2q")


def _terminal(root: Path) -> RunDir:
    """Built-in terminal tasks in real bubblewrap sandboxes, with and without an injected
    solution, two attempts each (so the @k tables exist)."""
    spec = {
        "suites": [
            {"env_id": "exploreval/Terminal-v0", "seeds": [0]},
            {"env_id": "exploreval/Terminal-v0", "seeds": [0], "options": {"injection_level": 1}},
        ],
        "agents": [{"kind": "scripted", "agent": a} for a in ("curious", "oracle")],
        "repeats": 2,
    }
    run_experiment(spec_from_dict(spec, "test"), str(root / "terminal"))
    return RunDir(root / "terminal")


def _imported(root: Path) -> RunDir:
    import_logs([TB_RUN], root / "tb", fmt="terminal-bench")
    return RunDir(root / "tb")


def _plain(frame: pd.DataFrame) -> pd.DataFrame:
    """Values as Python objects, every missing value as None: chunks of a streamed score are
    typed one by one (a chunk without presets has an object column of None, not a string
    column of NaN), which changes dtypes, never values."""
    frame = frame.reset_index(drop=True).astype(object)
    return frame.where(frame.notna(), None)


def _assert_same(streamed: _score.ScoreResult, held: _score.ScoreResult) -> None:
    assert len(streamed.table) == len(held.table) > 0
    columns = list(held.table.columns)
    assert set(streamed.table.columns) == set(columns)
    pd.testing.assert_frame_equal(
        _plain(streamed.table[columns]), _plain(held.table), check_dtype=False
    )
    assert set(streamed.tables) == set(held.tables)
    for name, table in held.tables.items():
        pd.testing.assert_frame_equal(
            _plain(streamed.tables[name]), _plain(table), check_dtype=False, obj=f"table {name}"
        )
    assert [r.episode_id for r in streamed.errors] == [r.episode_id for r in held.errors]
    assert list(streamed.all_rows()["episode_id"]) == list(held.all_rows()["episode_id"])


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, RunDir]:
    root = tmp_path_factory.mktemp("streamed")
    return {
        "native": _native(root),
        "task2quiz": _task2quiz(root, tmp_path_factory.mktemp("tw-cache")),
        "terminal": _terminal(root),
        "import:terminal-bench": _imported(root),
    }


@pytest.mark.slow
@pytest.mark.parametrize("name", ["native", "task2quiz", "terminal", "import:terminal-bench"])
@pytest.mark.parametrize("workers", ["1", "2"])
def test_streamed_score_equals_scoring_the_records_in_memory(
    runs: dict[str, RunDir], name: str, workers: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = runs[name]
    monkeypatch.setenv(WORKERS_ENV, workers)
    monkeypatch.setattr(_score, "CHUNK_EPISODES", 3)  # several chunks, merged in log order
    streamed = score_run(run, write=False)
    held = score_records(list(run.latest_records().values()), run.read_manifest().run_id)
    _assert_same(streamed, held)
    # nothing held: the records are read back from the log when iterated
    assert isinstance(streamed.records, LazyRecords)
    assert [r.episode_id for r in streamed.records] == [r.episode_id for r in held.records]
    families = {r.family for r in held.records}
    if name == "native":
        assert families == {"grid", "bandit", "frozenlake", "blocksworld", "sudoku"}
        for table in ("pass_at_k", "bandit_summary", "grid_errors_by_agent", "tide_summary"):
            assert table in streamed.tables
        assert "never-ok" in set(streamed.error_table["episode_id"])
    else:
        assert families == {name}
    if name == "terminal":
        assert {"at_k", "curiosity"} <= set(streamed.tables)


@pytest.mark.slow
def test_stored_scores_are_what_a_fresh_streamed_score_gives(runs: dict[str, RunDir]) -> None:
    run = runs["native"]
    written = score_run(run)
    again = score_run(run, write=False)  # from results.parquet and tables/
    _assert_same(again, written)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["native", "task2quiz", "terminal", "import:terminal-bench"])
def test_report_sections_from_rows_tables_and_columns_equal_sections_from_records(
    runs: dict[str, RunDir], name: str, tmp_path: Path
) -> None:
    """Every report section, given what ``report`` gives it after a streamed score (records that
    stay in the log, their rows, the stored run tables), says what it says when it is given the
    records in memory and computes everything from them."""
    from exploreval.report import report_plugins

    run = runs[name]
    streamed = score_run(run, write=False)
    held = score_records(list(run.latest_records().values()), run.read_manifest().run_id)
    drawn = 0
    for entry in report_plugins():
        family = entry.family
        listed = [r for r in held.records if family in ("*", r.family)]
        assert isinstance(streamed.records, LazyRecords)
        lazy = streamed.records.where(family)
        assert len(lazy) == len(listed)
        if not listed:
            continue

        def rows(table: pd.DataFrame, family: str = family) -> pd.DataFrame:
            return table if family == "*" else table[table["family"] == family]

        (tmp_path / "a").mkdir(exist_ok=True)
        (tmp_path / "b").mkdir(exist_ok=True)
        from_columns = entry.run(lazy, rows(streamed.table), tmp_path / "a", streamed.tables)
        from_records = entry.run(listed, rows(held.table), tmp_path / "b", None)
        assert [s.title for s in from_columns] == [s.title for s in from_records], entry.name
        assert [s.markdown for s in from_columns] == [s.markdown for s in from_records], entry.name
        drawn += len(from_records)
    assert drawn > 0


def _longest_per_agent(records: Sequence[EpisodeRecord]) -> dict[str, pd.DataFrame]:
    """A third party's run metric in the plain form: all records in, one table out."""
    longest: dict[str, int] = {}
    for record in records:
        longest[record.agent.name] = max(longest.get(record.agent.name, 0), len(record.steps))
    return {"longest": pd.DataFrame(sorted(longest.items()), columns=["agent", "steps"])}


@pytest.mark.slow
def test_a_run_metric_without_a_map_side_gets_the_records_streamed(
    runs: dict[str, RunDir], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Registered by hand in this process (not by a plugin), even after an in-process run left
    exploreval's thread pools alive: the forked workers see it, and its records arrive as a
    stream from the log, the same records ``score_records`` gives."""
    from exploreval.metrics import METRIC_REGISTRY, register_run_metrics

    register_run_metrics("grid", "longest", _longest_per_agent)
    # which processes mapped the records: the workers, not this one
    register_run_metrics(
        "grid",
        "pids",
        lambda pids: {
            "pids": pd.DataFrame({"pid": sorted(set(pids))}),
            "reduced_in": pd.DataFrame({"pid": [os.getpid()]}),
        },
        partial=lambda record: os.getpid(),
    )
    try:
        monkeypatch.setenv(WORKERS_ENV, "2")
        monkeypatch.setattr(_score, "CHUNK_EPISODES", 3)
        run = runs["native"]
        streamed = score_run(run, write=False)
        held = score_records(list(run.latest_records().values()))
    finally:
        METRIC_REGISTRY.unregister("run:grid:longest")
        METRIC_REGISTRY.unregister("run:grid:pids")
    assert os.getpid() not in set(streamed.tables["pids"]["pid"])
    assert len(streamed.tables["pids"]) >= 2  # the chunks were shared out
    # the reduce ran in a child too (its memory goes back when it ends), and saw the metric
    reducer = int(streamed.tables["reduced_in"]["pid"].iloc[0])
    assert reducer != os.getpid() and reducer not in set(streamed.tables["pids"]["pid"])
    assert not streamed.tables["longest"].empty
    pd.testing.assert_frame_equal(streamed.tables["longest"], held.tables["longest"])


def test_a_line_that_fails_validation_is_reported_and_the_stored_scores_are_reused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A line that fits the columns but is not a valid record (an unknown status) is left out
    of the scores and named with its line and field; the next score reuses the stored results
    and reports it again, without scoring anything."""
    import orjson

    spec = {"suites": [NATIVE["suites"][0]], "agents": [{"kind": "scripted", "agent": "random"}]}
    run_experiment(spec_from_dict(spec, "test"), str(tmp_path / "run"))
    run = RunDir(tmp_path / "run")
    first = orjson.loads(run.episodes_path.read_bytes().splitlines()[0])
    with open(run.episodes_path, "ab") as fh:
        fh.write(orjson.dumps({**first, "episode_id": "odd", "status": "weird"}) + b"\n")
    scored = score_run(run)
    bad = [i for i in scored.issues if "status" in i.message]
    assert [i.line for i in bad] == [4] and "odd" not in set(scored.all_rows()["episode_id"])
    calls: list[int] = []
    monkeypatch.setattr(_score, "score_streamed", lambda *a, **k: calls.append(1))
    again = score_run(run)
    assert calls == [] and [(i.line, i.message) for i in again.issues] == [
        (i.line, i.message) for i in scored.issues
    ]
    assert len(again.records) == len(again.table) == 3


@pytest.mark.slow
@pytest.mark.parametrize("name", ["native", "terminal"])
def test_the_errors_section_from_the_step_columns_equals_it_from_the_records(
    runs: dict[str, RunDir], name: str
) -> None:
    """Invalid actions counted by one query over the step columns, each with its first
    episode, say what counting them in the records says."""
    from exploreval.analysis._errors_section import errors_section, invalid_action_rows

    run = runs[name]
    streamed = score_run(run, write=False)
    held = score_records(list(run.latest_records().values()), run.read_manifest().run_id)
    invalid = invalid_action_rows([run], [(run.read_manifest(), streamed)])
    assert invalid is not None
    from_columns = errors_section(streamed.errors, streamed.records, invalid=invalid)
    from_records = errors_section(held.errors, held.records)
    assert from_columns.markdown == from_records.markdown


def test_the_spill_gives_back_each_key_in_order_once_and_a_copy_reads_the_same_file() -> None:
    import pickle

    with _score.Spill() as spill:
        for index in range(5):
            spill.put("rows" if index % 2 else "list:x", pickle.dumps([index, "v" * index]))
        spill.flush()
        copy = pickle.loads(pickle.dumps(spill))  # what a child process is sent
        assert list(copy.take("list:x")) == [[0, ""], [2, "vv"], [4, "vvvv"]]
        copy.close()  # a copy closes its handle, never the sender's directory
        scratch = spill._path.parent
        assert scratch.is_dir()
        assert list(spill.take("rows")) == [[1, "v"], [3, "vvv"]]
        assert list(spill.take("rows")) == []  # taken once
        assert list(spill.take("list:x")) == [[0, ""], [2, "vv"], [4, "vvvv"]]
    assert not scratch.exists()


@pytest.mark.slow
def test_a_score_killed_with_sigkill_leaves_no_spill_behind(
    runs: dict[str, RunDir], tmp_path: Path
) -> None:
    """The spill lives in the score process's scratch root, whose guardian deletes it once the
    process is gone, however it ended: here SIGKILL while a run table is being reduced."""
    import shutil
    import signal
    import subprocess
    import sys
    import time

    run = RunDir(tmp_path / "run")
    shutil.copytree(runs["native"].path, run.path)
    run.results_path.unlink(missing_ok=True)
    shutil.rmtree(run.tables_dir, ignore_errors=True)
    scratch, release = tmp_path / "scratch", tmp_path / "release"
    script = f"""
import pathlib, time
from exploreval.analysis import _score, score_run
from exploreval.metrics import register_run_metrics
from exploreval.store import RunDir
release = pathlib.Path({str(release)!r})
def stall(values):
    while not release.exists():
        time.sleep(0.05)
    return {{}}
register_run_metrics("grid", "stall", stall, partial=lambda record: 1)
_score.CHUNK_EPISODES = 3
score_run(RunDir({str(run.path)!r}))
"""
    env = {**os.environ, WORKERS_ENV: "2", "EXPLOREVAL_SCRATCH": str(scratch)}
    score = subprocess.Popen([sys.executable, "-c", script], env=env)
    try:
        deadline = time.monotonic() + 120
        spills: list[Path] = []
        while not spills and time.monotonic() < deadline and score.poll() is None:
            spills = list(scratch.glob(f"exploreval-scratch-{score.pid}-*/score-*/spill.bin"))
            time.sleep(0.05)
        assert spills, "the score never spilled"
        time.sleep(0.5)  # well into the reduce: the map is done, the reduce child stalls
        score.send_signal(signal.SIGKILL)
        score.wait()
    finally:
        release.touch()  # the reduce child (still alive) ends; then its guardian cleans up
    root = spills[0].parents[1]
    deadline = time.monotonic() + 30
    while root.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not root.exists()
    # and nothing claims the killed score finished: no stamp, so the next score computes again
    assert not (run.tables_dir / _score.SCORE_META).exists()


@pytest.mark.slow
def test_a_reduce_consumes_its_summaries(runs: dict[str, RunDir]) -> None:
    """``RunPartials.tables`` lets each metric's summaries go once reduced: called again it
    has nothing left, rather than holding every summary next to the tables."""
    from exploreval.metrics import RunPartials

    run = [r for r in runs["native"].latest_records().values() if r.status == "ok"]
    partials = RunPartials()
    for record in run:
        partials.add(record)
    assert {"pass_at_k", "tide_summary"} <= set(partials.tables())
    assert partials.tables() == {} and not partials.frames and not partials.summaries


@pytest.mark.slow
def test_a_large_runs_viewer_index_built_in_a_fresh_process_is_the_one_built_here(
    runs: dict[str, RunDir], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    from exploreval.viewer import load_index, refresh_index

    run = RunDir(tmp_path / "run")
    shutil.copytree(runs["native"].path, run.path)
    shutil.rmtree(run.path / "viewer_index", ignore_errors=True)
    monkeypatch.setenv(WORKERS_ENV, "2")
    monkeypatch.setattr(_score, "CHUNK_EPISODES", 3)
    assert _score.score_workers(len(run.latest_records())) == 2  # the spawned path
    scored = score_run(run)
    assert not scored.warnings
    spawned = load_index(run.path, save=False).client_payload()
    shutil.rmtree(run.path / "viewer_index")
    assert refresh_index(run.path) is None
    here = load_index(run.path, save=False).client_payload()
    assert spawned == here and spawned["n"] == len(scored.all_rows())


@pytest.mark.slow
@pytest.mark.parametrize("overlap", [True, False])
def test_a_large_run_stores_its_rows_while_its_run_tables_are_reduced(
    runs: dict[str, RunDir], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, overlap: bool
) -> None:
    """The reduce (a child process) and storing the rows (then the viewer index) share the two
    cores: a reduce that waits for results.parquet sees it appear. Above ``OVERLAP_UP_TO`` they
    run one after the other, and the reduce ends before the results exist."""
    import shutil
    import time

    from exploreval.metrics import METRIC_REGISTRY, register_run_metrics

    run = RunDir(tmp_path / "run")
    shutil.copytree(runs["native"].path, run.path)
    run.results_path.unlink(missing_ok=True)
    shutil.rmtree(run.tables_dir, ignore_errors=True)
    results = run.results_path

    def reduce(values: list[int]) -> dict[str, pd.DataFrame]:
        deadline = time.monotonic() + (60 if overlap else 0)
        while not results.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        return {
            "stored_meanwhile": pd.DataFrame({"stored": [results.exists()], "pid": os.getpid()})
        }

    register_run_metrics("grid", "overlap", reduce, partial=lambda record: 1)
    try:
        monkeypatch.setenv(WORKERS_ENV, "2")
        monkeypatch.setattr(_score, "CHUNK_EPISODES", 3)
        if not overlap:
            monkeypatch.setattr(_score, "OVERLAP_UP_TO", 0)
        scored = score_run(run)
    finally:
        METRIC_REGISTRY.unregister("run:grid:overlap")
    seen = scored.tables["stored_meanwhile"]
    assert bool(seen["stored"].iloc[0]) is overlap and int(seen["pid"].iloc[0]) != os.getpid()
    assert not scored.warnings  # the index was built meanwhile too, and finished
    stored = pd.read_parquet(results)
    assert len(stored) == len(scored.all_rows())
    assert (run.tables_dir / _score.SCORE_META).exists()


@pytest.mark.slow
def test_a_large_runs_metrics_are_reduced_in_two_processes_and_merged_in_order(
    runs: dict[str, RunDir], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Up to ``OVERLAP_UP_TO`` a score's run metrics are shared between two reduce processes
    by spilled bytes: the two heaviest go to different processes, neither is the score's own,
    and the tables come out as one reduce in this process gives them (names, order, values)."""
    import shutil

    from exploreval.metrics import METRIC_REGISTRY, register_run_metrics

    run = RunDir(tmp_path / "run")
    shutil.copytree(runs["native"].path, run.path)

    def reduced_by(name: str) -> Any:
        def reduce(values: list[str]) -> dict[str, pd.DataFrame]:
            return {name: pd.DataFrame({"pid": [os.getpid()], "values": [len(values)]})}

        return reduce

    heavy = "x" * 200_000  # far heavier than any built-in metric's summaries
    register_run_metrics("grid", "heavy_a", reduced_by("heavy_a"), partial=lambda r: heavy)
    register_run_metrics("grid", "heavy_b", reduced_by("heavy_b"), partial=lambda r: heavy)
    try:
        monkeypatch.setattr(_score, "CHUNK_EPISODES", 3)
        monkeypatch.setenv(WORKERS_ENV, "1")
        here = score_run(run, write=False)
        monkeypatch.setenv(WORKERS_ENV, "2")
        split = score_run(run, write=False)
    finally:
        METRIC_REGISTRY.unregister("run:grid:heavy_a")
        METRIC_REGISTRY.unregister("run:grid:heavy_b")
    pids = {name: int(split.tables[name]["pid"].iloc[0]) for name in ("heavy_a", "heavy_b")}
    assert pids["heavy_a"] != pids["heavy_b"] and os.getpid() not in pids.values()
    assert list(split.tables) == list(here.tables)
    for name, table in here.tables.items():
        if name not in pids:
            pd.testing.assert_frame_equal(_plain(split.tables[name]), _plain(table), obj=name)


@pytest.mark.slow
def test_an_index_process_that_breaks_is_a_warning_not_a_failed_score(
    runs: dict[str, RunDir], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import concurrent.futures
    import shutil
    from concurrent.futures.process import BrokenProcessPool

    class Broken(concurrent.futures.ProcessPoolExecutor):
        def submit(self, *args: Any, **kwargs: Any) -> Any:
            raise BrokenProcessPool("a child process terminated abruptly")

    run = RunDir(tmp_path / "run")
    shutil.copytree(runs["native"].path, run.path)
    monkeypatch.setenv(WORKERS_ENV, "2")
    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", Broken)
    warning = _score.refresh_viewer_index(run, 10_000)
    assert warning is not None and "BrokenProcessPool" in warning and str(run.path) in warning
