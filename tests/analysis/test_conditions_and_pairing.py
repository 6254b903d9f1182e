"""Conditions (env options) in report tables and comparisons; which agents pair; run labels."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from exploreval.analysis import (
    agent_pairs,
    build_report,
    compare_tables,
    metric_ci_table,
    run_labels,
    score_run,
    summary_table,
)
from exploreval.cli import app
from exploreval.core import AgentInfo, EpisodeRecord
from exploreval.metrics import condition_label, default_condition_label, register_condition_label
from exploreval.runner import run_experiment, spec_from_dict
from exploreval.store import RunDir, RunManifest

GRID = {"env_id": "exploreval/GridDAG-v0", "presets": ["explore-low/dag-small"], "seeds": "0-1"}


def _table(agent: str, conditions: list[str], success: list[bool], run: str = "r") -> pd.DataFrame:
    n = len(conditions)
    return pd.DataFrame(
        {
            "run_id": [run] * n,
            "episode_id": [f"{run}-{agent}-{i}" for i in range(n)],
            "env_id": ["exploreval/Terminal-v0"] * n,
            "family": ["terminal"] * n,
            "preset": [None] * n,
            "condition": conditions,
            "seed": [0] * n,
            "repeat": [0] * n,
            "agent": [agent] * n,
            "status": ["ok"] * n,
            "success": success,
            "steps": [5.0] * n,
            "invalid_rate": [0.0] * n,
        }
    )


def test_default_condition_labels_are_readable_stable_and_distinct() -> None:
    assert default_condition_label({}) == "-"
    assert default_condition_label({"b": 2, "a": "x"}) == "a=x, b=2"
    assert default_condition_label({"flag": True, "n": None}) == "flag=true, n=null"
    long_a = default_condition_label({"files": ["a" * 40, "b" * 40]})
    long_b = default_condition_label({"files": ["a" * 40, "c" * 40]})
    assert len(long_a) <= 60 and long_a != long_b and "#" in long_a
    assert long_a == default_condition_label({"files": ["a" * 40, "b" * 40]})


def test_a_suite_registers_its_condition_formatter() -> None:
    register_condition_label("cond-test-family", lambda o: f"level {o['injection_level']}")
    record = EpisodeRecord(
        episode_id="e",
        env_id="x/Y-v0",
        family="cond-test-family",
        seed=0,
        env_options={"injection_level": 3},
        agent=AgentInfo(name="a", kind="scripted"),
    )
    assert condition_label(record) == "level 3"
    assert condition_label(record.model_copy(update={"env_options": {}})) == "-"


def test_summary_splits_conditions_instead_of_pooling() -> None:
    table = _table("curious", ["injection_level=1", "-", "injection_level=1", "-"], [True] * 4)
    table["success"] = [True, False, True, False]
    summary = summary_table(table)
    assert list(summary["condition"]) == ["-", "injection_level=1"]
    assert list(summary["success_rate"]) == [0.0, 1.0] and list(summary["n"]) == [2, 2]
    ci = metric_ci_table(table)
    assert set(ci["condition"]) == {"-", "injection_level=1"}
    # one condition: no extra key column (and rows are not split)
    single = summary_table(table.assign(condition="injection_level=1"))
    assert "condition" not in single and list(single["n"]) == [4]


def test_condition_column_in_results_and_report_of_a_real_run(tmp_path: Path) -> None:
    spec = {
        "name": "conditions",
        "suites": [GRID, {**GRID, "options": {"budget": 15}}],
        "agents": [{"kind": "scripted", "agent": "frontier"}],
    }
    run_experiment(spec_from_dict(spec, "test"), str(tmp_path / "run"))
    run = RunDir(tmp_path / "run")
    report = build_report(run)
    results = pd.read_parquet(run.results_path)
    assert sorted(set(results["condition"])) == ["-", "budget=15"]
    summary = report.read_text().split("## Summary")[1].split("\n## ")[0]
    header = next(line for line in summary.splitlines() if line.startswith("| env |"))
    assert "| condition |" in header
    rows = [line for line in summary.splitlines() if "| frontier |" in line]
    assert len(rows) == 2 and any("| budget=15 |" in line for line in rows)
    # TIDE never pools conditions either: one row (and one curve panel) per condition
    from exploreval.metrics.tide import tide_run_tables

    tide = tide_run_tables(list(run.latest_records().values()))
    assert sorted(tide["tide_summary"]["condition"]) == ["-", "budget=15"]
    assert set(tide["tide_curves"]["condition"]) == {"-", "budget=15"}
    section = report.read_text().split("## TIDE")[1].split("\n## ")[0]
    header = next(line for line in section.splitlines() if line.startswith("| env_id"))
    assert "| condition |" in header


def test_compare_pairs_within_conditions_and_drops_nothing_silently() -> None:
    a = _table("x", ["level=1", "-"], [True, False], run="a")
    b = _table("x", ["level=1", "-"], [True, True], run="b")
    result = compare_tables(a, b)
    (item,) = result.comparisons
    assert item.pairs == 2  # (same env, preset, seed, repeat) but two conditions: two pairs
    assert [f.condition for f in item.flipped] == ["-"]
    assert result.warnings == []
    # a real duplicate (same condition too) is named, not silently dropped
    dup = compare_tables(pd.concat([a, a.assign(episode_id=["d1", "d2"])]), b)
    assert any("only the last is paired" in w for w in dup.warnings)


def test_agent_pairs_rules() -> None:
    assert agent_pairs(["gpt"], ["llama"]) == ([("gpt", "llama")], [])
    pairs, alone = agent_pairs(["frontier", "random"], ["frontier", "oracle"])
    assert pairs == [("frontier", "frontier")] and alone == ["A:random", "B:oracle"]
    assert agent_pairs(["a", "b"], ["c", "d"], agent_a="a", agent_b="d") == ([("a", "d")], [])
    assert agent_pairs(["a", "b"], ["a", "c"], agent_a="a")[0] == [("a", "a")]
    two = compare_tables(
        pd.concat([_table("frontier", ["-"], [True]), _table("random", ["-"], [False])]),
        pd.concat([_table("frontier", ["-"], [True], "b"), _table("oracle", ["-"], [True], "b")]),
    )
    assert [(c.agent_a, c.agent_b) for c in two.comparisons] == [("frontier", "frontier")]
    assert any("A:random" in w and "B:oracle" in w for w in two.warnings)


def test_run_labels_fall_back_when_names_clash(tmp_path: Path) -> None:
    def manifest(name: str, run_id: str) -> RunManifest:
        return RunManifest(run_id=run_id, name=name)

    runs = [
        (manifest("GridDAG-v0", "r1"), tmp_path / "a"),
        (manifest("GridDAG-v0", "r2"), tmp_path / "b"),
        (manifest("other", "r3"), tmp_path / "c"),
    ]
    assert run_labels(runs) == ["a", "b", "other"]
    same_dir = [
        (manifest("n", "r1"), tmp_path / "x" / "run"),
        (manifest("n", "r2"), tmp_path / "run"),
    ]
    assert run_labels(same_dir) == ["r1", "r2"]
    assert run_labels([runs[0], runs[0]]) == ["r1", "r1~2"]


@pytest.fixture(scope="module")
def two_default_named_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Two runs with the default name (no name given) and the same agents."""
    root = tmp_path_factory.mktemp("same-name")
    spec = {
        "suites": [GRID],
        "agents": [
            {"kind": "scripted", "agent": "frontier"},
            {"kind": "scripted", "agent": "random"},
        ],
    }
    for name in ("first", "second"):
        run_experiment(spec_from_dict(spec, "test"), str(root / name))
    return root / "first", root / "second"


def test_same_named_runs_stay_apart_and_report_pairs_like_the_cli(
    two_default_named_runs: tuple[Path, Path], tmp_path: Path
) -> None:
    first, second = two_default_named_runs
    names = {RunDir(p).read_manifest().name for p in (first, second)}
    assert len(names) == 1, "both runs have the same default name"
    report = build_report([RunDir(first), RunDir(second)], tmp_path / "rep")
    text = report.read_text()
    assert "frontier@first" in text and "frontier@second" in text
    summary = text.split("## Summary")[1].split("\n## ")[0]
    rows = [line for line in summary.splitlines() if line.startswith("|") and "GridDAG" in line]
    agents = [line.split("|")[3].strip() for line in rows]
    assert sorted(agents) == ["frontier@first", "frontier@second", "random@first", "random@second"]
    section = text.split("## Paired comparison: first vs second")[1]
    pairs_in_report = [
        line.removeprefix("### ").split(":")[0]
        for line in section.splitlines()
        if line.startswith("### ")
    ]
    assert pairs_in_report == ["frontier (A) vs frontier (B)", "random (A) vs random (B)"]
    result = CliRunner().invoke(app, ["compare", str(first), str(second), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    cli_pairs = [f"{c['agent_a']} (A) vs {c['agent_b']} (B)" for c in data["comparisons"]]
    assert cli_pairs == pairs_in_report
    assert (data["name_a"], data["name_b"]) == ("first", "second")
    assert score_run(RunDir(first), write=False).table["condition"].eq("-").all()
