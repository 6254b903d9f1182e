"""The episode index: rows agree with the store's reading of the log, appends are indexed
incrementally, rewrites rebuild, torn lines wait, and a cached index is served as is."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from exploreval.store import RunDir
from exploreval.viewer import INDEX_DIR, EpisodeIndex, load_index
from exploreval.viewer._index import OFFSETS_FILE


@pytest.fixture(params=["log", "columns"])
def run(
    runs: dict[str, Path],
    tmp_path: Path,
    request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
) -> Path:
    """A private copy of the grid run (these tests append to and rewrite its log). Every test
    runs twice: the index parses new log lines itself, or reads them from the run's columns
    (what it does from ``COLUMNS_FROM_BYTES`` of new log on); both must give the same rows."""
    from exploreval.viewer import _index

    monkeypatch.setattr(_index, "COLUMNS_FROM_BYTES", 0 if request.param == "columns" else 1 << 60)
    copy = tmp_path / "run"
    shutil.copytree(runs["grid"], copy, ignore=shutil.ignore_patterns(INDEX_DIR))
    return copy


def opened(run: Path) -> EpisodeIndex:
    """The index with its rows read (a fresh cache opens lazily)."""
    index = load_index(run)
    index.ensure_rows()
    return index


def lines(run: Path) -> list[str]:
    return (run / "episodes.jsonl").read_text(encoding="utf-8").splitlines()


def assert_matches_store(run: Path) -> None:
    index = opened(run)
    latest = RunDir(run).latest_records()
    assert index.columns["id"] == list(latest)  # first-appearance order, one row per id
    for row, record in enumerate(latest.values()):
        assert index.columns["status"][row] == record.status
        assert index.columns["success"][row] == int(record.success)
        assert index.columns["steps"][row] == len(record.acting_steps)
        assert index.columns["invalid"][row] == record.n_invalid
        assert index.columns["has_errors"][row] == int(
            record.status != "ok" or record.n_invalid > 0
        )
        tokens = record.usage.prompt_tokens + record.usage.completion_tokens
        assert index.columns["tokens"][row] == tokens
        assert index.read_record(row) == record  # the byte offset points at the chosen line


def test_rows_agree_with_latest_records(run: Path) -> None:
    assert_matches_store(run)
    index = opened(run)
    assert index.columns["suite"][0] == "grid"
    # results.parquet metrics are aligned by episode id
    assert set(index.metrics) >= {"coverage", "explore_error", "tide_loop_ratio"}


def test_error_then_ok_supersedes_and_ok_is_not_replaced_by_error(run: Path) -> None:
    first = json.loads(lines(run)[0])
    load_index(run)  # cached before the appends: they are scanned incrementally
    errored = {**first, "status": "error", "error": "boom", "success": False}
    with open(run / "episodes.jsonl", "a", encoding="utf-8") as fh:
        fh.write(json.dumps(errored) + "\n")  # an error after ok: ok still wins
    index = opened(run)
    assert index.columns["status"][0] == "ok"
    second = json.loads(lines(run)[1])
    retried = {**second, "status": "error", "error": "boom"}
    fixed = {**second, "total_reward": 42.0}
    with open(run / "episodes.jsonl", "a", encoding="utf-8") as fh:
        fh.write(json.dumps(retried) + "\n" + json.dumps(fixed) + "\n")
    index = opened(run)
    assert index.columns["reward"][1] == 42  # the later ok line is the row
    assert_matches_store(run)


def test_appends_are_scanned_incrementally(run: Path) -> None:
    before = load_index(run)
    size = (run / "episodes.jsonl").stat().st_size
    assert before.scanned_bytes == size
    record = json.loads(lines(run)[0])
    record["episode_id"] = "appended0000001"
    with open(run / "episodes.jsonl", "a", encoding="utf-8") as fh:
        fh.write(json.dumps(record) + "\n")
    after = opened(run)
    assert len(after) == len(before) + 1
    assert after.columns["id"][-1] == "appended0000001"
    assert after.offsets[-1] == size  # the new line starts where the old scan stopped
    assert after.read_record(len(after) - 1).episode_id == "appended0000001"


def test_a_torn_last_line_waits_until_it_is_complete(run: Path) -> None:
    record = json.loads(lines(run)[0])
    record["episode_id"] = "torn00000000001"
    text = json.dumps(record)
    with open(run / "episodes.jsonl", "a", encoding="utf-8") as fh:
        fh.write(text[:100])  # a writer in the middle of its line
    n = len(load_index(run))
    assert "torn00000000001" not in opened(run).columns["id"]
    with open(run / "episodes.jsonl", "a", encoding="utf-8") as fh:
        fh.write(text[100:] + "\n")
    index = opened(run)
    assert len(index) == n + 1 and index.columns["id"][-1] == "torn00000000001"


def test_a_rewritten_log_rebuilds_the_index(run: Path) -> None:
    load_index(run)
    kept = lines(run)[::-1][:3]  # different first bytes, fewer lines
    (run / "episodes.jsonl").write_text("\n".join(kept) + "\n", encoding="utf-8")
    assert_matches_store(run)
    assert len(load_index(run)) == 3


def test_unreadable_lines_are_named_not_fatal(run: Path) -> None:
    with open(run / "episodes.jsonl", "a", encoding="utf-8") as fh:
        fh.write("{not json\n")
    index = load_index(run)
    assert any("unreadable line" in i or "not valid JSON" in i for i in index.issues)
    assert_matches_store(run)


def test_a_fresh_cache_is_used_without_reading_the_rows(run: Path) -> None:
    built = load_index(run)
    served = built.list_script()
    cached = load_index(run)
    assert not cached.rows_loaded  # only meta.json was read
    assert cached.list_script() == served
    assert len(cached) == len(built)
    assert cached.read_record(2) == built.read_record(2)  # offsets.bin only
    assert not cached.rows_loaded
    # a broken offsets file is a clear error naming what to delete
    (run / INDEX_DIR / OFFSETS_FILE).write_bytes(b"\0" * 8)
    broken = load_index(run)
    with pytest.raises(Exception, match="delete .*viewer_index"):
        broken.read_record(0)


def test_a_changed_results_table_refreshes_the_metrics(run: Path) -> None:
    load_index(run)
    (run / "results.parquet").unlink()
    assert opened(run).metrics == {}


def test_not_a_run_directory_is_a_clear_error(tmp_path: Path) -> None:
    from exploreval.store import StoreError

    with pytest.raises(StoreError, match="not a run directory"):
        load_index(tmp_path)


def _fresh(run: Path) -> bool:
    """True when `exploreval view` would open the run from its saved index without a scan."""
    index = load_index(run, save=False)
    return not index.rows_loaded  # the fresh-cache path reads only meta.json


def test_run_score_and_import_leave_a_fresh_index(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from exploreval.cli import app

    runner = CliRunner()
    run = tmp_path / "run"
    args = ["run", "exploreval/GridDAG-v0", "--preset", "explore-low/dag-small", "--seeds", "0-1"]
    result = runner.invoke(app, [*args, "--agent", "frontier", "--out", str(run), "--no-report"])
    assert result.exit_code == 0, result.output
    assert (run / INDEX_DIR / "meta.json").exists() and _fresh(run)  # run --no-report
    shutil.rmtree(run / INDEX_DIR)
    result = runner.invoke(app, ["score", str(run)])
    assert result.exit_code == 0, result.output
    assert _fresh(run)  # score (writes results.parquet, then the index with its metrics)
    assert "coverage" in opened(run).metrics
    log = tmp_path / "steps.jsonl"
    log.write_text(
        "\n".join(
            json.dumps({"episode": e, "observation": f"o{t}", "action": f"a{t}"})
            for e in range(2)
            for t in range(3)
        )
        + "\n"
    )
    imported = tmp_path / "imported"
    result = runner.invoke(app, ["import", str(log), "--out", str(imported), "--no-report"])
    assert result.exit_code == 0, result.output
    assert _fresh(imported) and len(load_index(imported)) == 2  # import --no-report
    shutil.rmtree(imported / INDEX_DIR)
    result = runner.invoke(app, ["report", str(imported)])
    assert result.exit_code == 0, result.output
    assert _fresh(imported)  # report (scores the run)


def test_metric_columns_kept_as_text_write_what_the_values_would(run: Path) -> None:
    """A fresh index keeps each metric column as its JSON text (a million rows of numbers would
    be gigabytes of Python objects); what it writes must be exactly what the values, read back
    from its cache, write: the same list script, value for value, aligned to the rows."""
    import pandas as pd

    from exploreval.analysis import score_run
    from exploreval.viewer._episode_index import RawJson, data_script, round_value
    from exploreval.viewer._index import LIST_FILE

    score_run(RunDir(run))  # results.parquet, so there are metrics
    shutil.rmtree(run / INDEX_DIR, ignore_errors=True)
    fresh = load_index(run)
    assert fresh.metrics and all(isinstance(v, RawJson) for v in fresh.metrics.values())
    written = (run / INDEX_DIR / LIST_FILE).read_bytes()
    assert written == data_script(None, fresh.client_payload())
    again = opened(run)  # rows read back from rows.json: plain lists
    assert all(isinstance(v, list) for v in again.metrics.values())
    assert data_script(None, again.client_payload()) == written
    results = pd.read_parquet(run / "results.parquet").set_index("episode_id")
    for row, episode in enumerate(again.columns["id"]):
        expected = results.loc[episode, "coverage"] if episode in results.index else None
        assert again.metrics["coverage"][row] == round_value(expected)


_json_values = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(2**70), 2**70),  # past 64 bits orjson refuses: json.dumps writes it
        st.floats(allow_nan=False, allow_infinity=False),
        st.text(),  # any code point, U+2028 included
    ),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(), inner, max_size=5),
    max_leaves=30,
)


# the values are small (30 leaves at most): a slow draw is the machine being busy, not the test
@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(_json_values)
def test_the_index_writes_the_json_values_json_dumps_would(value: object) -> None:
    """The list's columns are written by orjson, falling back to ``json.dumps``: the text may
    spell a number differently, never a different value."""
    from exploreval.viewer._episode_index import compact_json

    text = compact_json(value)
    assert json.loads(text) == value
    assert "\n" not in text  # one line: a newline in a string is escaped


@settings(max_examples=200)
@given(st.lists(st.text(), max_size=6))
def test_agent_text_in_the_list_script_is_data_never_script(names: list[str]) -> None:
    """Agent names, ids and issues reach the page inside ``EXV.receive(...)``: whatever they
    hold (U+2028/9, quotes, ``</script>``, backslashes), the script carries them as one JSON
    value, with the two JavaScript line separators escaped."""
    from exploreval.viewer._episode_index import data_script

    hostile = [*names, "</script><script>alert(1)</script>", 'a"b\\c', "x\u2028y\u2029z"]
    script = data_script(None, {"columns": {"agent": hostile}}).decode()
    assert script.startswith("EXV.receive(null,") and script.endswith(");\n")
    assert "\u2028" not in script and "\u2029" not in script
    body = script[len("EXV.receive(null,") : -len(");\n")]
    assert json.loads(body) == {"columns": {"agent": hostile}}


def _script_data(script: bytes) -> object:
    text = script.decode()
    assert text.startswith("EXV.receive(null,") and text.endswith(");\n")
    return json.loads(text[len("EXV.receive(null,") : -len(");\n")])


def test_the_list_holds_metric_names_and_each_metric_is_its_own_script(run: Path) -> None:
    """The page's list carries the metrics' names only; metric i's values, aligned to the rows,
    are ``metrics/<i>.js``, loaded when a range or a sort asks for it. A fresh (lazy) index
    serves byte for byte what the built one wrote, without reading its rows."""
    import pandas as pd

    from exploreval.analysis import score_run
    from exploreval.viewer._episode_index import METRICS_DIR, round_value
    from exploreval.viewer._index import LIST_FILE

    score_run(RunDir(run))
    shutil.rmtree(run / INDEX_DIR, ignore_errors=True)
    built = load_index(run)
    listed = _script_data((run / INDEX_DIR / LIST_FILE).read_bytes())
    assert isinstance(listed, dict) and "metrics" not in listed
    names = listed["metric_names"]
    assert names == built.metric_names() and "coverage" in names
    assert len(list((run / INDEX_DIR / METRICS_DIR).glob("*.js"))) == len(names)
    results = pd.read_parquet(run / "results.parquet").set_index("episode_id")
    lazy = load_index(run)
    assert not lazy.rows_loaded and lazy.metric_names() == names
    for position, name in enumerate(names):
        script = lazy.metric_script(position)
        assert script == built.metric_script(position)
        data = _script_data(script)
        assert isinstance(data, dict) and data["name"] == name
        assert len(data["values"]) == len(built)
        if name in results.columns:
            for row, episode in enumerate(built.columns["id"]):
                expected = results.loc[episode, name] if episode in results.index else None
                assert data["values"][row] == round_value(expected)
    assert not lazy.rows_loaded  # every metric came from its cached script
    with pytest.raises(IndexError, match=f"no metric {len(names)}"):
        lazy.metric_script(len(names))
    # a score refreshes the saved index under a viewer that opened it lazily: that viewer's
    # list names the old metrics, so it must say what to do, not serve another metric's values
    (run / "results.parquet").unlink()
    assert load_index(run).metric_names() == []
    stale = _script_data(lazy.metric_script(names.index("coverage")))
    assert isinstance(stale, dict) and stale["name"] == "coverage" and "values" not in stale
    assert "restart exploreval view" in stale["error"]


def test_a_missing_metric_script_or_an_old_cache_rebuilds_the_index(run: Path) -> None:
    """An index whose metric scripts are not all there, or one written before metrics had their
    own scripts (schema 1: the values inside list.js), is not served as fresh: it is rebuilt,
    and a metric gone from results.parquet leaves no script behind."""
    from exploreval.analysis import score_run
    from exploreval.viewer._episode_index import METRICS_DIR
    from exploreval.viewer._index import META_FILE

    score_run(RunDir(run))
    load_index(run)
    metrics = run / INDEX_DIR / METRICS_DIR
    (metrics / "0.js").unlink()
    assert _fresh(run) is False
    load_index(run)
    assert (metrics / "0.js").exists() and _fresh(run)
    meta = json.loads((run / INDEX_DIR / META_FILE).read_text())
    meta["schema_version"] = 1
    (run / INDEX_DIR / META_FILE).write_text(json.dumps(meta))
    assert _fresh(run) is False
    (run / "results.parquet").unlink()
    assert load_index(run).metric_names() == []
    assert list(metrics.glob("*.js")) == [] and _fresh(run)


@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    st.lists(
        st.lists(st.tuples(st.integers(0, 3), st.booleans()), min_size=1, max_size=5),
        min_size=1,
        max_size=3,
    )
)
def test_retried_episodes_keep_the_store_s_record_whatever_the_order(
    run: Path, appends: list[list[tuple[int, bool]]]
) -> None:
    """Lines of a few episode ids, ok or errored, appended in batches with the index refreshed
    after each: every row is the store's latest record of its id (its last ok line, else its
    last line), in the order ids first appear, whether the index parses the new lines itself or
    reads them from the run's columns (the ``run`` fixture's two modes)."""
    template = json.loads(lines(run)[0])
    log = run / "episodes.jsonl"
    original = log.read_bytes()
    try:
        load_index(run)
        written = 0
        for batch in appends:
            with open(log, "a", encoding="utf-8") as fh:
                for which, ok in batch:
                    written += 1  # each line its own reward: the row names the line it took
                    record = {**template, "episode_id": f"retried{which:08d}"}
                    record["total_reward"] = float(written)
                    if not ok:
                        record.update(status="error", error="boom", success=False)
                    fh.write(json.dumps(record) + "\n")
            assert_matches_store(run)
    finally:  # the next example starts from the fixture's run again
        log.write_bytes(original)
        shutil.rmtree(run / INDEX_DIR, ignore_errors=True)
        shutil.rmtree(run / "columns", ignore_errors=True)


@settings(max_examples=200)
@given(st.text(max_size=300))
def test_a_metric_script_s_name_is_read_back_whatever_it_holds(name: str) -> None:
    """The server checks a saved metric script's name before serving it: any name (quotes,
    ``</script>``, U+2028, astral characters) reads back as written."""
    from exploreval.viewer._episode_index import data_script, metric_payload, script_metric_name

    assert script_metric_name(data_script(None, metric_payload(name, [1, None]))) == name
    assert script_metric_name(data_script(None, {"values": [1]})) is None
