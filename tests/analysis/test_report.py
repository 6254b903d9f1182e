"""The report on real runs: report.md + index.html, multi-run, and each listed report defect."""

from __future__ import annotations

import json
import re
from pathlib import Path

import matplotlib.figure
import pandas as pd
import pytest
from rich.console import Console
from typer.testing import CliRunner

from _figures import saved_name
from exploreval.analysis import (
    budget_notes,
    build_report,
    markdown_to_html,
    score_records,
    score_run,
    summary_table,
)
from exploreval.cli import app
from exploreval.cli._report import rich_table
from exploreval.report import ReportEntry, merge_identical_series, wilson_interval
from exploreval.report._tide import tide_report
from exploreval.report._tide_frames import constant_columns
from exploreval.runner import run_experiment, spec_from_dict
from exploreval.store import LazyRecords, RunDir
from exploreval.suites.grid._explore_exploit_report import log_fit

SPEC = {
    "name": "mixed",
    "suites": [
        {"env_id": "exploreval/GridDAG-v0", "presets": ["explore-low/dag-small"], "seeds": "0-1"},
        {"env_id": "exploreval/Bandit-v0", "presets": ["smoke"], "seeds": "0-1"},
        {"env_id": "exploreval/FrozenLake-v0", "presets": ["small"], "seeds": "0-2"},
    ],
    "agents": [
        {"kind": "scripted", "agent": "frontier", "suites": [0]},
        {"kind": "scripted", "agent": "random", "suites": [0, 1]},
        {"kind": "scripted", "agent": "ucb", "suites": [1]},
        {"kind": "scripted", "agent": "optimal", "suites": [2]},
        {"kind": "scripted", "agent": "random_valid", "suites": [2]},
    ],
    "concurrency": 2,
}


@pytest.fixture(scope="module")
def mixed_run(tmp_path_factory: pytest.TempPathFactory) -> RunDir:
    out = tmp_path_factory.mktemp("mixed") / "run"
    run_experiment(spec_from_dict(SPEC, "test"), str(out))
    return RunDir(out)


@pytest.fixture(scope="module")
def mixed_report(mixed_run: RunDir) -> Path:
    return build_report(mixed_run)


def test_figures_are_not_inside_tables(mixed_report: Path) -> None:
    lines = mixed_report.read_text().splitlines()
    images = [i for i, line in enumerate(lines) if line.startswith("![")]
    assert len(images) >= 5
    for i in images:
        assert lines[i - 1] == "", f"image on line {i + 1} follows {lines[i - 1][:40]!r}"


def test_results_parquet_identity_columns(mixed_run: RunDir, mixed_report: Path) -> None:
    table = pd.read_parquet(mixed_run.results_path)
    for column in ("run_id", "model", "harness", "history", "status", "error"):
        assert column in table.columns
    assert set(table["run_id"]) == {mixed_run.read_manifest().run_id}
    assert set(table["status"]) == {"ok"}


def test_errored_episodes_are_rows_with_status(mixed_run: RunDir) -> None:
    records = list(mixed_run.latest_records().values())
    broken = records[0].model_copy(
        update={"episode_id": "broken", "status": "error", "error": "boom"}
    )
    result = score_records([*records, broken], "rid")
    rows = result.all_rows()
    assert len(rows) == len(records) + 1
    failed = rows[rows["status"] == "error"]
    assert list(failed["episode_id"]) == ["broken"] and list(failed["error"]) == ["boom"]
    assert "broken" not in set(result.table["episode_id"])


def test_summary_has_n_ci_budget_and_all_tokens() -> None:
    table = pd.DataFrame(
        {
            "run_id": ["r"] * 4,
            "episode_id": list("abcd"),
            "env_id": ["e"] * 4,
            "family": ["f"] * 4,
            "preset": ["p"] * 4,
            "seed": [0, 1, 0, 1],
            "repeat": [0] * 4,
            "agent": ["llm", "llm", "base", "base"],
            "success": [True, False, True, True],
            "steps": [10, 15, 20, 30],
            "max_steps": [15, 15, 69, 69],
            "invalid_rate": [0.0] * 4,
            "prompt_tokens": [100, 200, 0, 0],
            "completion_tokens": [10, 20, 0, 0],
            "total_tokens": [110, 220, 0, 0],
            "cost_usd": [0.1, 0.2, 0.0, 0.0],
        }
    )
    summary = summary_table(table).set_index("agent")
    assert summary.loc["llm", "tokens"] == 330  # prompt + completion, not prompt only
    assert summary.loc["llm", "completion_tokens"] == 30
    assert summary.loc["llm", "n"] == 2 and summary.loc["llm", "budget"] == "15"
    assert summary.loc["base", "budget"] == "69"
    assert summary.loc["llm", "success_ci_low"] <= 0.5 <= summary.loc["llm", "success_ci_high"]
    notes = budget_notes(table)
    assert len(notes) == 1 and "llm: 15" in notes[0] and "base: 69" in notes[0]
    assert budget_notes(table.assign(max_steps=69)) == []


def test_a_budget_set_as_a_condition_gets_its_own_rows_and_no_false_warning(
    tmp_path: Path,
) -> None:
    from exploreval.cli._demo import DEMO_LLM_BUDGET

    # what the demo does for its LLM, here with a scripted agent standing in for it
    spec = {
        "name": "budgets",
        "suites": [
            {"env_id": "exploreval/GridDAG-v0", "presets": ["explore-low/dag-small"], "seeds": [0]},
            {
                "env_id": "exploreval/GridDAG-v0",
                "presets": ["explore-low/dag-small"],
                "seeds": [0],
                "options": {"budget": DEMO_LLM_BUDGET},
            },
        ],
        "agents": [
            {"kind": "scripted", "agent": "frontier", "suites": [0]},
            {"kind": "scripted", "agent": "random", "suites": [1]},
        ],
    }
    run_experiment(spec_from_dict(spec, "test"), str(tmp_path / "run"))
    text = build_report(RunDir(tmp_path / "run")).read_text()
    # the table splits the budget=15 condition into rows of its own: nothing to warn about
    assert "**Budgets differ**" not in text
    assert f"budget={DEMO_LLM_BUDGET}" in text


def test_no_fit_line_through_two_distinct_values() -> None:
    assert log_fit([0.0, 0.0, 0.3, 0.3], [1.0, 1.0, 0.0, 0.0]) is None
    fit = log_fit([0.01, 0.1, 0.3], [1.0, 0.6, 0.1])
    assert fit is not None and fit.r2 < 1.0


def test_grid_figure1_text_says_no_fit(mixed_report: Path) -> None:
    text = mixed_report.read_text()
    assert "R^2 = 1.000" not in text
    assert "no line fitted" in text


def test_no_radar_and_no_tide_curves_for_bandits(
    mixed_run: RunDir, mixed_report: Path, tmp_path: Path
) -> None:
    assert not (mixed_report.parent / "tide_radar.png").exists()
    bandit = [r for r in mixed_run.latest_records().values() if r.family == "bandit"]
    assert bandit and tide_report(bandit, pd.DataFrame(), tmp_path) == []
    assert not list(tmp_path.glob("*.png"))
    tide_section = mixed_report.read_text().split("## TIDE")[1].split("\n## ")[0]
    assert "Bandit-v0" not in tide_section


def test_constant_columns_helper() -> None:
    # the report's use of it, on a run where the column is constant, is
    # tests/report/test_figures.py::test_constant_tide_column_is_dropped_with_a_note
    frame = pd.DataFrame({"recall_distance": [3.0, 3.0], "loop_ratio": [0.1, 0.2]})
    assert constant_columns(frame, ["recall_distance", "loop_ratio"]) == ["recall_distance"]
    assert constant_columns(frame.head(1), ["recall_distance"]) == []


def test_identical_series_are_merged() -> None:
    merged = merge_identical_series(
        [("a", [1, 2], [0.5, 1.0]), ("b", [1, 2], [0.5, 1.0]), ("c", [1, 2], [0.4, 1.0])]
    )
    assert [label for label, _, _ in merged] == ["a = b", "c"]


def test_difficulty_table_has_ci_and_n(mixed_report: Path) -> None:
    # the error bars drawn in the figure: tests/report/test_figures.py
    text = mixed_report.read_text()
    section = text.split("## frozenlake: success by")[1].split("\n## ")[0]
    assert "| ci_low | ci_high |" in section and "| n |" in section
    low, high = wilson_interval(1, 1)
    assert low < 0.25 and high == 1.0


def test_figure8_and_9_have_axis_labels(
    mixed_run: RunDir, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from exploreval.suites.bandit._report import bandit_report

    saved: dict[str, matplotlib.figure.Figure] = {}
    original = matplotlib.figure.Figure.savefig

    def capture(
        self: matplotlib.figure.Figure, fname: object, *args: object, **kwargs: object
    ) -> None:
        saved[saved_name(fname)] = self
        original(self, fname, *args, **kwargs)

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", capture)
    bandit = [r for r in mixed_run.latest_records().values() if r.family == "bandit"]
    bandit_report(bandit, pd.DataFrame(), tmp_path)
    for suffix in ("fig8_traces.png", "fig9_best_arm.png"):
        fig = next(f for name, f in saved.items() if name.endswith(suffix))
        visible = [ax for ax in fig.axes if ax.get_visible()]
        assert any(ax.get_xlabel() == "round t" for ax in visible), suffix
    fig8 = next(f for name, f in saved.items() if name.endswith("fig8_traces.png"))
    assert any(ax.get_ylabel() for ax in fig8.axes if ax.get_visible())


def test_terminal_table_keeps_env_and_preset_whole() -> None:
    frame = pd.DataFrame(
        {
            "env_id": ["exploreval/GridDAG-v0"] * 2,
            "preset": ["explore-medium/dag-medium", "explore-medium/dag-large"],
            "agent": ["frontier", "frontier"],
            "n": [3, 3],
            "success_rate": [1.0, 0.5],
            "tokens": [123456, 654321],
        }
    )
    console = Console(width=60, record=True)
    console.print(rich_table(frame))
    text = console.export_text()
    assert "…" not in text
    cells = [line.split("│")[2].strip() for line in text.splitlines() if line.startswith("│")]
    assert "".join(cells) == "explore-medium/dag-mediumexplore-medium/dag-large"


def test_html_report_is_self_contained_with_viewer_links(
    mixed_run: RunDir, mixed_report: Path
) -> None:
    html = (mixed_report.parent / "index.html").read_text()
    assert "<table>" in html and html.count("data:image/png;base64,") >= 5
    assert not re.search(r"(src|href)=\"https?://", html)
    run_id = mixed_run.read_manifest().run_id
    ids = {r.episode_id for r in mixed_run.latest_records().values()}
    links = re.findall(r'href="viewer/index.html#/run/([^/"]+)/episode/([^"]+)"', html)
    assert links and all(run == run_id and episode in ids for run, episode in links)
    assert "Errors and invalid actions" in html and "Metrics with 95% CIs: grid" in html


def test_markdown_to_html_tables_and_links() -> None:
    out = markdown_to_html(
        "text **b**\n\n| a | b |\n|---|---|\n| 1 | [x](viewer/index.html#/run/r/episode/e) |"
    )
    assert "<strong>b</strong>" in out and '<td class="num">1</td>' in out
    assert '<a href="viewer/index.html#/run/r/episode/e">x</a>' in out


@pytest.mark.parametrize(
    ("markdown", "html"),
    [
        # an italic note naming a column: the code span's underscores do not end the italic
        ("_`recall_distance` is - on every row (omitted)._",
         "<em><code>recall_distance</code> is - on every row (omitted).</em>"),
        ("**K\\*MinFrac**: x", "<strong>K*MinFrac</strong>: x"),  # an escape inside bold
        ("snake_case stays and _this_ leans", "snake_case stays and <em>this</em> leans"),
        ("a \\_ b", "a _ b"),
    ],
)  # fmt: skip
def test_markdown_emphasis_and_escapes_never_show_their_marks(markdown: str, html: str) -> None:
    out = markdown_to_html(markdown)
    assert html in out, out


def test_multi_run_report_and_cli(mixed_run: RunDir, tmp_path: Path) -> None:
    other = tmp_path / "other"
    spec = {
        "name": "other",
        "suites": [{**SPEC["suites"][0], "seeds": "1-2"}],  # seed 1 shared, seed 2 not
        "agents": [
            {"kind": "scripted", "agent": "frontier"},
            {"kind": "scripted", "agent": "random"},
        ],
    }
    run_experiment(spec_from_dict(spec, "test"), str(other))
    runner = CliRunner()
    result = runner.invoke(
        app, ["report", str(mixed_run.path), str(other), "--out", str(tmp_path / "rep")]
    )
    assert result.exit_code == 0, result.output
    text = (tmp_path / "rep" / "report.md").read_text()
    assert "frontier@mixed" in text and "frontier@other" in text
    assert "## Paired comparison: mixed vs other" in text
    html = (tmp_path / "rep" / "index.html").read_text()
    assert "Paired comparison: mixed vs other" in html
    result = runner.invoke(app, ["compare", str(mixed_run.path), str(other), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["schema_version"] == 1
    pairs = {(c["agent_a"], c["agent_b"]): c for c in data["comparisons"]}
    assert pairs[("frontier", "frontier")]["pairs"] == 1
    assert all(m["delta"] == 0 for m in pairs[("frontier", "frontier")]["metrics"])
    assert any("partial overlap" in w for w in data["warnings"])
    result = runner.invoke(app, ["compare", str(mixed_run.path), str(other)])
    assert result.exit_code == 0 and "frontier (A) vs frontier (B)" in result.output


def test_score_run_reads_manifest_run_id(mixed_run: RunDir) -> None:
    result = score_run(mixed_run, write=False)
    assert set(result.table["run_id"]) == {mixed_run.read_manifest().run_id}


@pytest.mark.parametrize("width", [80, 100, 140])
def test_terminal_tables_fit_and_never_split_numbers(width: int) -> None:
    from exploreval.cli._report import fit_columns, print_table

    frame = summary_table(
        pd.DataFrame(
            {
                "run_id": ["r"] * 6,
                "episode_id": list("abcdef"),
                "env_id": ["exploreval/Terminal-v0"] * 3 + ["exploreval/GridDAG-v0"] * 3,
                "family": ["terminal"] * 3 + ["grid"] * 3,
                "preset": [None] * 3 + ["explore-medium/dag-medium"] * 3,
                "condition": ["injection_level=1", "-", "injection_level=1"] + ["-"] * 3,
                "seed": [0, 0, 1, 0, 1, 2],
                "repeat": [0] * 6,
                "agent": ["curious-gpt-4.1-mini"] * 3 + ["exploit_first"] * 3,
                "success": [True, False, True, True, False, True],
                "steps": [12, 30, 17, 40, 61, 33],
                "max_steps": [50, 50, 50, 69, 69, 60],
                "invalid_rate": [0.1234, 0.0, 0.5, 0.0, 0.0, 0.0],
                "prompt_tokens": [1_234_567, 2_345_678, 987_654, 0, 0, 0],
                "completion_tokens": [123_456, 234_567, 98_765, 0, 0, 0],
                "cost_usd": [12.3456, 23.4567, 9.8765, 0.0, 0.0, 0.0],
            }
        )
    )
    console = Console(width=width, record=True)
    print_table(console, frame, "summary")
    text = console.export_text()
    lines = text.splitlines()
    assert all(len(line) <= width for line in lines), max(len(line) for line in lines)
    shown, dropped, _ = fit_columns(frame, width)
    header = next(line for line in lines if line.startswith("┃"))
    for key in ("env_id", "preset", "condition", "agent"):
        assert key in shown and key in header  # key columns always there
    assert {"n", "success"} <= {cell.strip() for cell in header.split("┃")}
    body = [line for line in lines if line.startswith("│")]
    tokens = {cell.strip() for line in body for cell in line.split("│")}
    from exploreval.cli._report import _cells

    cells = _cells(frame)
    for column in shown:
        if column in ("env_id", "preset", "condition", "agent"):
            continue
        for value in cells[column]:
            assert value in tokens, f"{column}: {value!r} split or cut at width {width}"
    if dropped:
        assert "--wide" in text and all(name in text for name in dropped[:1])
    if width == 140:
        assert "tokens" in shown
    wide = Console(width=width, record=True)
    print_table(wide, frame, "summary", wide=True)
    wide_text = wide.export_text()
    assert "cost_usd" in wide_text and "prompt_tok" in wide_text and "2346k" in wide_text


def test_tables_that_mention_episodes_link_them(mixed_run: RunDir, mixed_report: Path) -> None:
    text = mixed_report.read_text()
    ids = {r.episode_id for r in mixed_run.latest_records().values()}
    link = re.compile(r"\(viewer/index\.html#/run/[^/]+/episode/([0-9a-f]+)\)")
    grid = text.split("## Grid trajectories")[1].split("\n## ")[0]
    rows = [line for line in grid.splitlines() if line.startswith("| ") and "agent" not in line]
    assert rows and all(len(link.findall(row)) == 1 for row in rows)
    assert {m for row in rows for m in link.findall(row)} <= ids
    bandit = text.split("## Bandit:")[1].split("\n## ")[0]
    panels = bandit.split("The episodes of Figure 8's panels:")[1]
    panel_rows = [line for line in panels.splitlines() if line.startswith("| ") and "#" in line]
    # 2 agents (random, ucb) x 2 replicates (seeds 0-1)
    assert len(panel_rows) == 4
    linked = [m for row in panel_rows for m in link.findall(row)]
    assert len(linked) == 4 and set(linked) <= ids
    bundle = (mixed_report.parent / "viewer").rglob("*.js")
    bundled = "".join(p.read_text() for p in bundle)
    assert all(episode in bundled for episode in linked)  # the report's viewer has them


def test_scores_are_reused_only_for_the_same_log_and_metrics(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    from exploreval.analysis import _score

    spec = {"name": "cache", "suites": [SPEC["suites"][0]], "agents": [{"agent": "frontier"}]}
    run_experiment(spec_from_dict(spec, "test"), str(tmp_path / "run"))
    run = RunDir(tmp_path / "run")
    first = score_run(run)
    calls: list[int] = []
    real = _score.score_streamed

    def counting(*args: object, **kwargs: object) -> _score.ScoreResult:
        calls.append(1)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(_score, "score_streamed", counting)
    again = score_run(run)
    assert calls == []  # reused: same log bytes, same metrics
    pd.testing.assert_frame_equal(
        again.table[first.table.columns].reset_index(drop=True),
        first.table.reset_index(drop=True),
        check_dtype=False,
    )
    # the same tables in the same order (a caller iterating them sees no difference)
    assert list(again.tables) == list(first.tables) and len(again.records) == len(first.records)
    for name, table in first.tables.items():
        assert list(again.tables[name].columns) == list(table.columns), name
    monkeypatch.setenv("EXPLOREVAL_TIDE_T_MAX", "GridDAG=7")
    assert score_run(run).table["tide_t_max"].eq(7).all() and calls == [1]
    monkeypatch.delenv("EXPLOREVAL_TIDE_T_MAX")
    score_run(run)
    assert calls == [1, 1]
    # an appended record (a resumed run) is scored
    other = tmp_path / "other"
    shutil.copytree(run.path, other)
    line = (other / "episodes.jsonl").read_text().splitlines()[0]
    with open(run.episodes_path, "a", encoding="utf-8") as fh:
        fh.write(line.replace(first.table["episode_id"][0], "e" * 16) + "\n")
    grown = score_run(run)
    assert calls == [1, 1, 1] and len(grown.table) == len(first.table) + 1


def test_sections_from_stored_tables_equal_sections_from_records(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A report after ``score`` draws TIDE and pass@k from the stored run tables (parquet, all
    families) and must say exactly what it says when computing them from the records."""
    from exploreval.metrics import _tide_records, _tide_tables
    from exploreval.report import report_plugins

    spec = {**SPEC, "repeats": 2}
    run_experiment(spec_from_dict(spec, "test"), str(tmp_path / "run"))
    run = RunDir(tmp_path / "run")
    score_run(run)  # writes tables/
    stored = score_run(run)  # reads them back
    assert {"tide_summary", "tide_points", "pass_at_k"} <= set(stored.tables)
    entries = [e for e in report_plugins() if e.uses_tables]
    assert {e.name for e in entries} >= {"tide", "pass_at_k"}
    records = stored.records
    assert isinstance(records, LazyRecords)

    def given(entry: ReportEntry) -> tuple[LazyRecords, pd.DataFrame]:
        # as build_report gives them: a family's section gets that family's records and rows
        if entry.family == "*":
            return records, stored.table
        return records.where(entry.family), stored.table[stored.table["family"] == entry.family]

    entries = [e for e in entries if len(given(e)[0])]
    fresh = {e.name: e.run(*given(e), tmp_path / "fresh", None) for e in entries}

    def no_recompute(*args: object, **kwargs: object) -> None:
        raise AssertionError("recomputed what score stored")

    monkeypatch.setattr(_tide_tables, "tide_run_tables", no_recompute)
    monkeypatch.setattr(_tide_records, "record_loops", no_recompute)
    for entry in entries:
        reused = entry.run(*given(entry), tmp_path / "reused", stored.tables)
        assert [s.markdown for s in reused] == [s.markdown for s in fresh[entry.name]]
        assert [p.name for s in reused for p in s.files] == [
            p.name for s in fresh[entry.name] for p in s.files
        ]
    assert any("Spearman" in s.markdown for s in fresh["tide"])  # the points were drawn
    assert any("pass@k" in s.markdown for s in fresh["pass_at_k"])


def test_report_frees_its_records_without_the_collector(mixed_run: RunDir, tmp_path: Path) -> None:
    """build_report pauses the collector and must leave no record for it to find: every record
    is freed by reference counting (a full collection over 100,000 records costs ~20 s), even
    though matplotlib keeps frames of the drawing calls alive in reference cycles."""
    import gc

    from exploreval.core import EpisodeRecord

    def alive() -> int:
        return sum(isinstance(o, EpisodeRecord) for o in gc.get_objects())

    gc.collect()
    before = alive()
    gc.disable()
    try:
        build_report(mixed_run, tmp_path / "report")
        left = alive()  # counted before any collection: only what refcounting did not free
        assert not gc.isenabled()  # the report left the collector as it found it
    finally:
        gc.enable()
    assert left == before
