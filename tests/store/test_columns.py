"""The columnar tables beside the log (issue 18): they hold exactly what the records hold, stay
current incrementally, keep each episode's latest record, survive a crash mid-sync, and rebuild
when the log or the schema changed. Runs are real (scripted agents on two suites)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from exploreval.runner import run_experiment, spec_from_dict
from exploreval.store import RunColumns, RunDir, open_columns
from exploreval.store import _columns as columns_module

SPEC = {
    "suites": [
        {"env_id": "exploreval/GridDAG-v0", "presets": ["explore-low/dag-small"], "seeds": "0-2"},
        {"env_id": "exploreval/Bandit-v0", "presets": ["smoke"], "seeds": "0-1"},
    ],
    "agents": [
        {"kind": "scripted", "agent": "random", "suites": [0, 1]},
        {"kind": "scripted", "agent": "frontier", "suites": [0]},
    ],
}


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("columns") / "run"
    run_experiment(spec_from_dict(SPEC, "test"), str(out))
    return out


def _copy(run_dir: Path, tmp_path: Path) -> Path:
    target = tmp_path / "run"
    shutil.copytree(run_dir, target, ignore=shutil.ignore_patterns("columns"))
    return target


def _records(path: Path) -> dict[str, Any]:
    return {r.episode_id: r for r in RunDir(path).latest_records().values()}


def test_tables_hold_what_the_records_hold(run_dir: Path, tmp_path: Path) -> None:
    path = _copy(run_dir, tmp_path)
    records = _records(path)
    cols = RunColumns(path)
    stats = cols.sync()
    assert stats.episodes == len(records) and stats.steps == sum(
        len(r.steps) for r in records.values()
    )
    rows = cols.sql(
        "select episode_id, success, n_steps, total_reward, family, agent, seed from episodes"
    ).fetchall()
    assert {r[0]: r[1:] for r in rows} == {
        eid: (r.success, len(r.steps), r.total_reward, r.family, r.agent.name, r.seed)
        for eid, r in records.items()
    }
    steps = cols.sql(
        "select episode_id, t, action, valid, reward, observation from steps"
    ).fetchall()
    assert sorted(steps) == sorted(
        (eid, s.t, s.action, s.valid, s.reward, s.observation)
        for eid, r in records.items() for s in r.steps
    )  # fmt: skip
    # each suite's typed info fields are columns of their own types
    arms = cols.sql(
        "select episode_id, t, info_arm from steps where info_arm is not null"
    ).fetchall()
    assert sorted(arms) == sorted(
        (eid, s.t, s.info["arm"]) for eid, r in records.items() for s in r.steps
        if s.info.get("arm") is not None
    )  # fmt: skip
    kinds = dict(cols.sql("select column_name, column_type from (describe steps)").fetchall())
    assert kinds["info_arm"] == "BIGINT" and kinds["info_pos"] == "BIGINT[]"
    # one episode materialised from its log span, as a person opening it gets it
    eid, offset, length = cols.sql(
        "select episode_id, log_offset, log_length from episodes limit 1"
    ).fetchall()[0]
    assert cols.record(offset, length) == records[eid]


def test_sync_reads_only_what_was_appended(run_dir: Path, tmp_path: Path) -> None:
    path = _copy(run_dir, tmp_path)
    log = path / "episodes.jsonl"
    lines = log.read_bytes().splitlines(keepends=True)
    log.write_bytes(b"".join(lines[:5]))
    cols = RunColumns(path)
    assert cols.sync().episodes == 5
    log.write_bytes(b"".join(lines[:5]) + lines[5][:20])  # a line being written: not yet
    assert cols.sync().episodes == 0
    log.write_bytes(b"".join(lines))
    again = cols.sync()
    assert again.episodes == len(lines) - 5 and not again.rebuilt
    assert cols.sync().episodes == 0  # nothing new
    fresh = tmp_path / "fresh"
    shutil.copytree(path, fresh, ignore=shutil.ignore_patterns("columns"))
    query = "select * exclude (run_id) from all_episodes order by line"
    assert RunColumns(path).sql(query).fetchall() == RunColumns(fresh).sql(query).fetchall()


def test_an_ok_rerun_supersedes_the_error_and_its_steps(run_dir: Path, tmp_path: Path) -> None:
    path = _copy(run_dir, tmp_path)
    log = path / "episodes.jsonl"
    first = json.loads(log.read_text().splitlines()[0])
    errored = {**first, "status": "error", "error": "boom", "steps": first["steps"][:1]}
    lines = log.read_text().splitlines(keepends=True)
    log.write_text(json.dumps(errored) + "\n" + "".join(lines))  # error first, ok later
    cols = RunColumns(path)
    eid = first["episode_id"]
    assert cols.sql(f"select count(*) from all_episodes where episode_id = '{eid}'").fetchall()[
        0
    ] == (2,)
    assert cols.sql(f"select status from episodes where episode_id = '{eid}'").fetchall() == [
        ("ok",)
    ]
    n = cols.sql(f"select count(*) from steps where episode_id = '{eid}'").fetchall()[0][0]
    assert n == len(first["steps"])
    # and an error appended after an ok record does not hide the ok one
    log.write_text(log.read_text() + json.dumps({**errored, "error": "later"}) + "\n")
    assert cols.sql(f"select status from episodes where episode_id = '{eid}'").fetchall() == [
        ("ok",)
    ]


def test_a_crash_between_a_part_and_the_state_leaves_no_duplicate(
    run_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _copy(run_dir, tmp_path)
    monkeypatch.setattr(columns_module, "PART_EPISODES", 4)
    cols = RunColumns(path)
    writes = {"n": 0}
    real = cols._write_state

    def crash_on_second(state: dict[str, Any]) -> None:
        writes["n"] += 1
        if writes["n"] == 2:
            raise OSError("killed")
        real(state)

    monkeypatch.setattr(cols, "_write_state", crash_on_second)
    from exploreval.store import StoreError

    with pytest.raises(StoreError, match="killed"):  # a failed write is said as a StoreError
        cols.sync(part_episodes=4)
    monkeypatch.setattr(cols, "_write_state", real)
    cols.sync(part_episodes=4)
    records = _records(path)
    total = sum(1 for line in (path / "episodes.jsonl").read_text().splitlines() if line.strip())
    assert cols.sql("select count(*) from all_episodes").fetchall()[0] == (total,)
    assert cols.sql("select count(distinct episode_id) from episodes").fetchall()[0] == (
        len(records),
    )


def test_a_rewritten_log_or_a_new_schema_rebuilds(
    run_dir: Path, tmp_path: Path, monkeypatch
) -> None:
    path = _copy(run_dir, tmp_path)
    cols = RunColumns(path)
    cols.sync()
    log = path / "episodes.jsonl"
    lines = log.read_bytes().splitlines(keepends=True)
    log.write_bytes(b"".join(lines[3:]))  # rewritten: shorter, another head
    stats = cols.sync()
    assert stats.rebuilt and stats.episodes == len(lines) - 3
    monkeypatch.setattr(columns_module, "COLUMNS_SCHEMA_VERSION", 999)
    stats = cols.sync()
    assert stats.rebuilt and stats.episodes == len(lines) - 3


@pytest.mark.parametrize("damage", ["truncated", "garbage", "partner deleted"])
def test_a_damaged_part_is_rebuilt_from_the_log_and_said(
    run_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: str
) -> None:
    """The tables are derived: a part cut short, overwritten or deleted (disk, a user, a
    copy) is found by the next sync, which says so and rebuilds them from the log; the
    queries then answer as before and the log is not touched."""
    from exploreval.store import ColumnsRebuiltWarning

    path = _copy(run_dir, tmp_path)
    monkeypatch.setattr(columns_module, "PART_EPISODES", 2)
    cols = RunColumns(path)
    cols.sync(part_episodes=2)
    query = "select episode_id, count(*), sum(reward) from steps group by 1 order by 1"
    before = cols.sql(query).fetchall()
    log = (path / "episodes.jsonl").read_bytes()
    parts = sorted(cols.steps_dir.glob("part-*.parquet"))
    assert len(parts) >= 3
    victim = parts[1]  # in the middle: the state says it is in
    if damage == "truncated":
        victim.write_bytes(victim.read_bytes()[:-100])
    elif damage == "garbage":
        victim.write_bytes(b"not parquet at all")
    else:
        (cols.episodes_dir / victim.name).unlink()
    with pytest.warns(ColumnsRebuiltWarning, match=victim.name) as caught:
        stats = cols.sync(part_episodes=2)
    assert "rebuilt from episodes.jsonl" in str(caught[0].message)
    assert stats.rebuilt and stats.episodes == sum(1 for _ in log.splitlines() if _.strip())
    assert cols.sql(query).fetchall() == before
    assert (path / "episodes.jsonl").read_bytes() == log
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", ColumnsRebuiltWarning)  # sound tables: no word, no work
        assert cols.sync().episodes == 0


def test_a_sync_reads_again_only_the_footers_of_parts_that_changed(
    run_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every reader syncs, and every sync checks the finished parts: a footer found sound is
    not read again while its part's size, mtime and inode stay; a part rewritten in place at
    the same size (its footer damaged) is read, found and rebuilt."""
    import time

    import pyarrow.parquet as pq

    from exploreval.store import ColumnsRebuiltWarning

    path = _copy(run_dir, tmp_path)
    monkeypatch.setattr(columns_module, "PART_EPISODES", 2)
    cols = RunColumns(path)
    cols.sync(part_episodes=2)
    n_parts = len(list(cols.steps_dir.glob("part-*.parquet")))
    assert n_parts >= 3
    read: list[str] = []
    real = pq.read_metadata

    def counted(where: object, *args: object, **kwargs: object) -> object:
        read.append(Path(str(where)).name)
        return real(where, *args, **kwargs)

    monkeypatch.setattr(pq, "read_metadata", counted)
    cols.sync()
    assert len(read) == 2 * n_parts  # the first check reads every footer, of both tables
    read.clear()
    cols.sync()
    assert read == []  # nothing changed: nothing read
    victim = sorted(cols.steps_dir.glob("part-*.parquet"))[1]
    data = victim.read_bytes()
    time.sleep(0.05)  # past the file system's clock tick, as any later damage is
    with open(victim, "r+b") as fh:  # same inode, same size: only the mtime tells
        fh.write(data[:-8] + b"XXXXXXXX")
    with pytest.warns(ColumnsRebuiltWarning, match=victim.name):
        assert cols.sync().rebuilt
    assert read == [victim.name]


def test_the_cli_says_the_tables_were_rebuilt_on_stderr_only(run_dir: Path, tmp_path: Path) -> None:
    """``exploreval sql --format csv`` keeps its CSV clean: the note goes to stderr."""
    import subprocess
    import sys

    path = _copy(run_dir, tmp_path)
    cols = RunColumns(path)
    cols.sync()
    part = next(cols.steps_dir.glob("part-*.parquet"))
    part.write_bytes(b"torn")
    done = subprocess.run(
        [sys.executable, "-m", "exploreval", "sql", str(path),
         "select count(*) as n from steps", "--format", "csv"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    steps = sum(len(r.steps) for r in _records(path).values())
    assert done.stdout.split() == ["n", str(steps)]
    assert "note:" in done.stderr and "rebuilt from episodes.jsonl" in done.stderr
    assert part.name in done.stderr.replace("\n", "")


def test_an_unreadable_results_file_is_left_out_of_the_views_and_said(
    run_dir: Path, tmp_path: Path
) -> None:
    """A torn ``results.parquet`` must not stop queries of the episodes and steps: the results
    view leaves it out (with a note naming the file and the command that writes it again)."""
    from exploreval.analysis import score_run
    from exploreval.store import UnreadableResultsWarning

    path = _copy(run_dir, tmp_path)
    score_run(RunDir(path))
    scored = RunColumns(path).sql("select count(*) from results").fetchall()
    (path / "results.parquet").write_bytes(b"torn")
    with pytest.warns(UnreadableResultsWarning, match="exploreval score"):
        con = open_columns([path])
    assert con.sql("select count(*) from episodes").fetchall() == [(len(_records(path)),)]
    views = {row[0] for row in con.sql("select view_name from duckdb_views()").fetchall()}
    assert "results" not in views and "episodes" in views
    with pytest.warns(UnreadableResultsWarning):  # score reads the views, then writes it again
        score_run(RunDir(path))
    assert RunColumns(path).sql("select count(*) from results").fetchall() == scored


@pytest.fixture
def read_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """``make(path)`` -> the run at ``path`` seen through a read-only bind mount (a real
    read-only file system, as an archived or shared sweep is); where this process may not
    mount, the same path with ``RunDir.writable`` answering False (the only thing read)."""
    import subprocess

    mounts: list[Path] = []

    def make(path: Path) -> Path:
        target = tmp_path / f"ro-{len(mounts)}"
        target.mkdir()
        bind = subprocess.run(["mount", "--bind", str(path), str(target)], capture_output=True)
        if bind.returncode == 0:
            mounts.append(target)
            remount = ["mount", "-o", "remount,bind,ro", str(target)]
            if subprocess.run(remount, capture_output=True).returncode == 0:
                assert not RunDir(target).writable()
                return target
        monkeypatch.setattr(RunDir, "writable", lambda self: False)
        return path

    yield make
    for target in mounts:
        subprocess.run(["umount", "--lazy", str(target)], capture_output=True)


def _tree(path: Path) -> dict[str, int]:
    return {str(p.relative_to(path)): p.stat().st_size for p in path.rglob("*") if p.is_file()}


def test_a_read_only_run_is_queried_and_scored_without_writing_to_it(
    run_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, read_only: Any
) -> None:
    """A sweep on a read-only file system: its tables go to the user's cache (named by the
    run's path), ``score`` computes every metric and says it stored nothing, and not a byte of
    the run changes."""
    from exploreval.analysis import score_run
    from exploreval.store import ReadOnlyRunWarning, columns_cache_root

    monkeypatch.setenv("EXPLOREVAL_COLUMNS_CACHE", str(tmp_path / "cache"))
    path = _copy(run_dir, tmp_path)
    writable_copy = tmp_path / "writable"
    shutil.copytree(path, writable_copy)
    expected = score_run(RunDir(writable_copy)).table
    before = _tree(path)
    run = read_only(path)
    cols = RunColumns(run)
    assert cols.dir.parent == columns_cache_root() == tmp_path / "cache"
    query = "select count(*), sum(n_steps) from episodes"
    assert cols.sql(query).fetchall() == RunColumns(writable_copy).sql(query).fetchall()
    with pytest.warns(ReadOnlyRunWarning, match="cannot be written to"):
        result = score_run(RunDir(run))
    assert not result.stored
    pd.testing.assert_frame_equal(
        result.table.reset_index(drop=True), expected.reset_index(drop=True), check_dtype=False
    )
    assert _tree(path) == before


def test_a_read_only_run_with_current_tables_is_read_in_place(
    run_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, read_only: Any
) -> None:
    monkeypatch.setenv("EXPLOREVAL_COLUMNS_CACHE", str(tmp_path / "cache"))
    path = _copy(run_dir, tmp_path)
    RunColumns(path).sync()  # shipped with its tables
    run = read_only(path)
    cols = RunColumns(run)
    assert cols.dir == run / "columns"
    assert cols.sql("select count(*) from episodes").fetchall() == [(len(_records(path)),)]
    assert not (tmp_path / "cache").exists()


def test_a_full_disk_stops_a_sync_with_the_reason_and_the_next_one_finishes(
    run_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The run on a small file system (a real tmpfs where this process may mount one) that
    fills up while the tables are written: the sync says the disk is full, leaves no
    temporary file, and once space is freed the next sync ends with the same tables as a
    sync on a roomy disk."""
    import errno
    import subprocess

    from exploreval.store import StoreError

    roomy = _copy(run_dir, tmp_path / "roomy")
    expected = RunColumns(roomy).sql("select count(*), sum(n_steps) from episodes").fetchall()
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = (
        subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(disk)], capture_output=True
        ).returncode
        == 0
    )
    try:
        path = disk / "run"
        shutil.copytree(roomy, path, ignore=shutil.ignore_patterns("columns"))
        filler = disk / "filler"
        if mounted:
            with contextlib.suppress(OSError), open(filler, "wb", buffering=0) as fh:
                while True:
                    fh.write(b"\0" * 4096)
        else:  # no mount here: the same failure, from Arrow's write
            import pyarrow.parquet as pq

            real = pq.write_table

            def full(*args: Any, **kwargs: Any) -> None:
                raise OSError(errno.ENOSPC, "No space left on device")

            monkeypatch.setattr(pq, "write_table", full)
        cols = RunColumns(path)
        with pytest.raises(StoreError, match="the disk is full"):
            cols.sync(part_episodes=2)
        leftovers = [p.name for p in (path / "columns").rglob("*") if p.name.endswith(".tmp")]
        assert leftovers == []
        if mounted:
            filler.unlink()
        else:
            monkeypatch.setattr(pq, "write_table", real)
        cols.sync(part_episodes=2)
        assert cols.sql("select count(*), sum(n_steps) from episodes").fetchall() == expected
    finally:
        if mounted:
            subprocess.run(["umount", "--lazy", str(disk)], capture_output=True)


def test_syncs_of_one_run_take_turns(run_dir: Path, tmp_path: Path) -> None:
    """A viewer, a score and a query of one run each sync it; two syncs at once removed each
    other's parts in flight (measured: 1 of 6 trials of three syncs of 2,000 episodes failed
    with "No such file or directory"). A sync waits while another holds the run's sync lock,
    then finds the tables to bring current and ends with every line in once."""
    import fcntl
    import subprocess
    import sys
    import time

    path = _copy(run_dir, tmp_path)
    (path / "columns").mkdir()
    held = os.open(path / "columns" / ".sync.lock", os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(held, fcntl.LOCK_EX)  # another sync is running
    code = "import sys\nfrom exploreval.store import RunColumns\nRunColumns(sys.argv[1]).sync()\n"
    waiting = subprocess.Popen([sys.executable, "-c", code, str(path)], stderr=subprocess.PIPE)
    try:
        time.sleep(3.0)  # far longer than this sync takes alone
        assert waiting.poll() is None and not (path / "columns" / "_state.json").exists()
    finally:
        os.close(held)  # the other sync ends
    assert waiting.wait(timeout=300) == 0, waiting.stderr.read() if waiting.stderr else ""
    lines = sum(1 for line in (path / "episodes.jsonl").read_bytes().splitlines() if line)
    assert RunColumns(path).sql(
        "select count(*), count(distinct line) from all_episodes"
    ).fetchall() == [(lines, lines)]


def test_several_runs_are_one_dataset(run_dir: Path, tmp_path: Path) -> None:
    a = _copy(run_dir, tmp_path / "a")
    b = _copy(run_dir, tmp_path / "b")
    con = open_columns([a, b])
    rows = con.sql("select run_dir, count(*) from episodes group by run_dir order by 1").fetchall()
    n = len(_records(a))
    assert rows == [(str(a), n), (str(b), n)]
    assert con.sql("select count(*) from steps").fetchall()[0][0] == 2 * sum(
        len(r.steps) for r in _records(a).values()
    )


_scalar = st.one_of(st.booleans(), st.integers(-5, 5), st.floats(-2, 2, allow_nan=False),
                    st.text(max_size=3), st.none())  # fmt: skip
_value = st.one_of(_scalar, st.lists(st.integers(0, 3), max_size=2))


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(infos=st.lists(st.dictionaries(st.sampled_from(["a", "b", "c"]), _value, max_size=3),
                      min_size=1, max_size=12))  # fmt: skip
def test_any_step_info_is_stored_and_read_back(run_dir: Path, tmp_path_factory, infos) -> None:
    """Whatever mix of types a key's values have in a part, every value reads back: as its own
    type where they share one, as JSON text where they do not."""
    path = _copy(run_dir, tmp_path_factory.mktemp("prop"))
    log = path / "episodes.jsonl"
    record = json.loads(log.read_text().splitlines()[0])
    step = record["steps"][0]
    record["steps"] = [{**step, "t": i, "info": info} for i, info in enumerate(infos)]
    log.write_text(json.dumps(record) + "\n")
    cols = RunColumns(path)
    cols.sync()
    names = [c[0] for c in cols.sql("describe steps").fetchall()]
    for key in ("a", "b", "c"):
        expected = [info.get(key) for info in infos]
        if f"info_{key}" not in names:
            assert all(v is None for v in expected)
            continue
        got = [r[0] for r in cols.sql(f"select info_{key} from steps order by t").fetchall()]
        for want, have in zip(expected, got, strict=True):
            if isinstance(have, str) and not isinstance(want, str):
                have = json.loads(have)  # a mixed key: JSON text
            elif (
                isinstance(have, str)
                and isinstance(want, str)
                and any(isinstance(v, str) for v in expected)
                and any(v is not None and not isinstance(v, str) for v in expected)
            ):
                have = json.loads(have)
            assert have == want or (isinstance(want, float) and have == pytest.approx(want))


@pytest.mark.parametrize("workers", ["2", "3"])
def test_a_parallel_sync_writes_what_one_process_writes(
    run_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: str
) -> None:
    """Worker processes each ingest a byte range cut at a line start (numbered by counting
    the newlines before it): the tables, the line numbers, the unreadable lines and the state
    are those of a sync in one process, and a line still being written waits either way."""
    from exploreval.core import WORKERS_ENV

    serial, parallel = tmp_path / "serial", tmp_path / "parallel"
    for target in (serial, parallel):
        shutil.copytree(run_dir, target, ignore=shutil.ignore_patterns("columns"))
        with open(target / "episodes.jsonl", "ab") as fh:
            fh.write(b"not json\n" + b'{"episode_id": "torn"')  # a bad line, then a torn one
    monkeypatch.setenv(WORKERS_ENV, "1")
    one = RunColumns(serial).sync(part_episodes=4)
    monkeypatch.setenv(WORKERS_ENV, workers)
    many = RunColumns(parallel).sync(part_episodes=4)
    assert (many.episodes, many.steps) == (one.episodes, one.steps) and one.episodes > 0
    assert [(i.line, i.message) for i in many.issues] == [(i.line, i.message) for i in one.issues]
    query = (
        "select episode_id, line, log_offset, log_length, n_steps, success from all_episodes "
        "order by line"
    )
    assert RunColumns(parallel).sql(query).fetchall() == RunColumns(serial).sql(query).fetchall()
    steps = "select episode_id, line, t, action, valid, reward from all_steps order by line, t"
    assert RunColumns(parallel).sql(steps).fetchall() == RunColumns(serial).sql(steps).fetchall()
    state = json.loads((parallel / "columns" / "_state.json").read_text())
    assert state == json.loads((serial / "columns" / "_state.json").read_text())
    # the torn line is finished: either way, only it is ingested next
    for target in (serial, parallel):
        with open(target / "episodes.jsonl", "ab") as fh:
            fh.write(b"}\n")
        again = RunColumns(target).sync()
        assert again.episodes == 1
        last = RunColumns(target).sql("select max(line) from all_episodes").fetchall()[0]
        assert last == (state["line"] + 1,)


def test_a_record_that_does_not_fit_is_reported_and_the_rest_are_kept(
    run_dir: Path, tmp_path: Path
) -> None:
    """A line that is JSON but not a valid record (a step's ``t`` that is text) is reported by
    line and field, as a read of the log reports it, and every other line of its part is kept;
    a value the record model coerces (``"3"`` for ``t``) is stored as the record has it."""
    from exploreval.analysis import score_run

    path = _copy(run_dir, tmp_path)
    lines = (path / "episodes.jsonl").read_text().splitlines()
    bad = json.loads(lines[0]) | {"episode_id": "bad-t"}
    bad["steps"] = [dict(bad["steps"][0], t="soon"), *bad["steps"][1:]]
    coerced = json.loads(lines[1]) | {"episode_id": "coerced-t"}
    coerced["steps"] = [
        dict(coerced["steps"][0], t=str(coerced["steps"][0]["t"])),
        *coerced["steps"][1:],
    ]
    with open(path / "episodes.jsonl", "a") as fh:
        fh.write(json.dumps(bad) + "\n" + json.dumps(coerced) + "\n")
    stats = RunColumns(path).sync()
    assert [(i.line, i.message.split(":")[0]) for i in stats.issues] == [
        (len(lines) + 1, "field 'steps.0.t'")
    ]
    ids = {r[0] for r in RunColumns(path).sql("select episode_id from episodes").fetchall()}
    assert "bad-t" not in ids and "coerced-t" in ids and len(ids) == len(lines) + 1
    result = score_run(RunDir(path), write=False)
    assert "coerced-t" in set(result.table["episode_id"]) and len(result.table) == len(lines) + 1
    assert [i.line for i in result.issues] == [len(lines) + 1]


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_sync_says_how_many_bytes_of_the_log_are_in(
    run_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: str
) -> None:
    """A first sync of a big sweep reads gigabytes: ``sync(progress=fn)`` hears the bytes put
    in so far, never going back and never past the total, ending at the total; an append is
    counted from where the last sync stopped, and a sync with nothing to read says nothing."""
    from exploreval.core import WORKERS_ENV

    monkeypatch.setenv(WORKERS_ENV, workers)
    path = _copy(run_dir, tmp_path)
    log = path / "episodes.jsonl"
    lines = log.read_bytes().splitlines(keepends=True)
    log.write_bytes(b"".join(lines[:-2]))
    heard: list[tuple[int, int]] = []
    RunColumns(path).sync(part_episodes=2, progress=lambda *a: heard.append(a))
    size = log.stat().st_size
    assert heard[0] == (0, size) and heard[-1] == (size, size)
    done = [d for d, _ in heard]
    assert done == sorted(done) and {t for _, t in heard} == {size}
    if workers == "1":
        assert len(heard) >= 3  # once a part: the figure moves while the sync runs
    with open(log, "ab") as fh:
        fh.write(b"".join(lines[-2:]))
    heard.clear()
    RunColumns(path).sync(part_episodes=2, progress=lambda *a: heard.append(a))
    appended = len(lines[-2]) + len(lines[-1])
    assert heard[0] == (0, appended) and heard[-1] == (appended, appended)
    heard.clear()
    RunColumns(path).sync(progress=lambda *a: heard.append(a))
    assert heard == []


#: Long enough for DuckDB to report progress when its bar shows from the first moment.
_SLOW_QUERY = "select count(*) from range(30000000) t(x) where x % 7 = 3"
_BAR_SETTING = "select current_setting('enable_progress_bar')"


def test_queries_never_draw_duckdb_progress_bar_on_stdout(
    run_dir: Path, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """DuckDB draws its progress bar on stdout once a query passes two seconds (as a score's
    or an `exploreval sql` query over a million episodes does), into the results a user
    redirects to a file (a score at a million episodes drew it into its output). Every
    connection exploreval opens has the bar off. Outside pytest (which DuckDB's default sees),
    a plain connection has it on; with its delay set to nothing it draws on stdout."""
    import subprocess
    import sys

    import duckdb

    run = _copy(run_dir, tmp_path / "run")
    code = (
        "import sys, duckdb; from exploreval.store import RunColumns, open_columns\n"
        f"q = {_BAR_SETTING!r}; run = sys.argv[1]\n"
        "print(duckdb.connect().sql(q).fetchall()[0][0], RunColumns(run).connect().sql(q)"
        ".fetchall()[0][0], open_columns([run]).sql(q).fetchall()[0][0])"
    )
    done = subprocess.run([sys.executable, "-c", code, str(run)], capture_output=True, text=True)
    assert done.stdout.split() == ["True", "False", "False"], done.stderr[-2000:]
    plain = duckdb.connect()
    plain.execute("set progress_bar_time = 0")
    expected = plain.sql(_SLOW_QUERY).fetchall()
    assert "%" in capfd.readouterr().out  # the bar, on stdout
    for con in (RunColumns(run).connect(), open_columns([run])):
        assert con.sql(_SLOW_QUERY).fetchall() == expected
        assert con.sql("select count(*) from episodes").fetchall()[0][0] == len(_records(run))
    assert capfd.readouterr().out == ""
