"""Named suites: the papers' task sets under one name, expanded like spelled-out suites."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from exploreval.cli import app
from exploreval.core import named_suite, register_suite
from exploreval.runner import SpecError, plan_episodes, spec_from_dict
from exploreval.store import RunDir


def test_grid_main_is_the_papers_3x3_grid_times_three_seeds() -> None:
    spec = spec_from_dict({"suites": [{"suite": "grid-main"}], "agents": [{"agent": "frontier"}]})
    plan = plan_episodes(spec)
    assert len(plan) == 27
    presets = {e.preset for e in plan}
    assert presets == {
        f"explore-{level}/dag-{size}"
        for level in ("low", "medium", "high")
        for size in ("small", "medium", "large")
    }
    assert {e.seed for e in plan} == {0, 1, 2}


def test_named_and_spelled_out_suites_hash_alike_and_seeds_override() -> None:
    named = spec_from_dict({"suites": [{"suite": "grid-main"}], "agents": [{"agent": "random"}]})
    spelled = spec_from_dict(
        {"suites": list(named_suite("grid-main").suites), "agents": [{"agent": "random"}]}
    )
    assert named.config_hash() == spelled.config_hash()
    fewer = spec_from_dict(
        {"suites": [{"suite": "puzzles-paper", "seeds": "0-1"}], "agents": [{"agent": "random"}]}
    )
    plan = plan_episodes(fewer)
    assert len(plan) == 3 * 2 and {e.seed for e in plan} == {0, 1}


def test_bad_named_suites_are_named() -> None:
    with pytest.raises(
        SpecError, match=r"exp.yaml: suites.0: .*'grid-mian'.*Did you mean: grid-main"
    ):
        spec_from_dict({"suites": [{"suite": "grid-mian"}], "agents": [{"agent": "x"}]}, "exp.yaml")
    with pytest.raises(
        SpecError, match=r"takes only 'suite', 'seeds' and 'env_options', got presets"
    ):
        spec_from_dict(
            {"suites": [{"suite": "grid-main", "presets": ["x"]}], "agents": [{"agent": "x"}]}
        )
    with pytest.raises(ValueError, match="no env_id"):
        register_suite("broken", [{"presets": ["a"]}])


def test_cli_runs_and_lists_named_suites(tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["suites", "--json"])
    assert result.exit_code == 0, result.output
    listed = {s["name"]: s for s in json.loads(result.output)}
    assert listed["grid-main"]["tasks"] == 27 and listed["puzzles-paper"]["tasks"] == 300
    out = tmp_path / "r"
    result = runner.invoke(
        app,
        ["run", "--suite", "grid-main", "--seeds", "0", "--agent", "frontier", "--out", str(out)]
        + ["-q", "--no-report"],
    )
    assert result.exit_code == 0, result.output
    records = list(RunDir(out).iter_records())
    assert len(records) == 9 and all(r.success for r in records)
    result = runner.invoke(app, ["run", "exploreval/GridDAG-v0", "--suite", "grid-main"])
    assert result.exit_code != 0 and "not both" in str(result.exception)


def test_env_options_reach_a_named_suite_and_presets_are_refused(tmp_path: Path) -> None:
    """--env-option with --suite is merged over the suite's own options (never dropped);
    --preset with --suite is refused naming both flags, before the run dir exists."""
    runner = CliRunner()
    out = tmp_path / "r"
    result = runner.invoke(
        app,
        ["run", "--suite", "grid-main", "--seeds", "0", "--agent", "random", "--env-option",
         "budget_alpha=0.5", "--out", str(out), "-q", "--no-report"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    records = list(RunDir(out).iter_records())
    assert len(records) == 9 and all(r.env_options == {"budget_alpha": 0.5} for r in records)
    bad = runner.invoke(
        app,
        ["run", "--suite", "grid-main", "--preset", "explore-low/dag-small", "--agent",
         "random", "--out", str(tmp_path / "p")],
    )  # fmt: skip
    assert bad.exit_code != 0 and "--preset with --suite" in str(bad.exception)
    assert not (tmp_path / "p").exists()
    merged = spec_from_dict(
        {"suites": [{"suite": "grid-main", "options": {"budget_alpha": 2}}],
         "agents": [{"agent": "random"}]}
    )  # fmt: skip
    assert {s.env_options["budget_alpha"] for s in merged.suites} == {2}
