"""`exploreval demo`: the embedded job plans what it says and runs end to end without an LLM."""

from __future__ import annotations

from pathlib import Path

import pytest

from exploreval.analysis import build_report
from exploreval.cli._demo import (
    DEMO_BASELINES,
    DEMO_LLM_BUDGET,
    DEMO_LLM_LABEL,
    DEMO_PRESETS,
    demo_contrast,
    demo_spec,
)
from exploreval.runner import plan_episodes, run_experiment
from exploreval.store import RunDir


def test_demo_plan_with_and_without_the_local_llm() -> None:
    baselines = plan_episodes(demo_spec(with_llm=False))
    assert len(baselines) == len(DEMO_BASELINES) * len(DEMO_PRESETS) * 3
    assert {e.preset for e in baselines} == set(DEMO_PRESETS)
    spec = demo_spec(with_llm=True)
    plan = plan_episodes(spec)
    llm_index = next(i for i, a in enumerate(spec.agents) if a.kind == "llm")
    llm = [e for e in plan if e.agent_index == llm_index]
    assert [(e.preset, e.seed) for e in llm] == [(DEMO_PRESETS[0], s) for s in (0, 1, 2)]
    # every baseline also plays the LLM's capped maps: one condition to compare in
    capped = [e for e in plan if e.env_options == {"budget": DEMO_LLM_BUDGET}]
    assert len(capped) == 3 * (len(DEMO_BASELINES) + 1)
    assert len(plan) == len(baselines) + len(capped)
    agent = spec.agents[llm_index]
    assert agent.model == "local:smollm2" and agent.harness == "react"
    assert agent.constrain == "auto"  # on for the embedded model (issue 21)
    # its name in the demo's tables is the one every other command gives the same agent
    assert agent.label is None and agent.display_name == DEMO_LLM_LABEL
    assert all(e.env_options == {"budget": DEMO_LLM_BUDGET} for e in llm)  # short episodes


@pytest.mark.slow
def test_demo_without_llm_runs_and_reports(tmp_path: Path) -> None:
    summary = run_experiment(demo_spec(with_llm=False), str(tmp_path / "demo"))
    assert summary.status == "finished" and summary.errored == 0
    records = list(RunDir(tmp_path / "demo").iter_records())
    for record in records:
        if record.agent.name in ("frontier", "oracle"):
            assert record.success
    report = build_report(RunDir(tmp_path / "demo")).read_text(encoding="utf-8")
    assert "## Grid trajectories" in report and "| oracle |" in report


def test_agent_suite_indices_are_validated() -> None:
    from exploreval.runner import SpecError, spec_from_dict

    with pytest.raises(SpecError, match=r"agents.0.suites: suite index 3 out of range"):
        spec_from_dict(
            {
                "suites": [{"env_id": "exploreval/GridDAG-v0"}],
                "agents": [{"kind": "scripted", "agent": "random", "suites": [3]}],
            }
        )


@pytest.mark.slow
def test_demo_command_ends_with_the_html_report_and_the_view_command(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from exploreval.cli import app

    out = tmp_path / "demo"
    result = CliRunner().invoke(app, ["demo", "--no-llm", "--out", str(out), "-q"])
    assert result.exit_code == 0, result.output
    html = out / "report" / "index.html"
    assert html.exists()
    # the last two things the demo says: where the HTML report is, how to step through episodes
    # (compared without whitespace: the console wraps long paths)
    expected = f"HTML report: {html}\nstep through the episodes: exploreval view {out}"
    assert "".join(result.stdout.split()).endswith("".join(expected.split()))


@pytest.mark.slow
@pytest.mark.local_llm
def test_the_readme_demo_with_the_embedded_model_runs_end_to_end(tmp_path: Path) -> None:
    """The README's main command as a user types it, in its own process (the embedded server
    is started, used and stopped by the command): exit 0, its report, and LLM episodes that
    finished with the model's output on their steps (issue 24: the server died on the first
    completion and the run ended "cannot connect")."""
    import os
    import subprocess
    import sys

    out = tmp_path / "demo"
    exe = Path(sys.executable).with_name("exploreval")
    done = subprocess.run(
        [str(exe), "demo", "--out", str(out), "--quiet"],
        capture_output=True,
        text=True,
        timeout=1200,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert (out / "report" / "index.html").is_file()
    llm = [r for r in RunDir(out).iter_records() if r.agent.kind == "llm"]
    assert len(llm) == 3
    assert all(r.status == "ok" and r.n_steps > 0 for r in llm)
    steps = [s for r in llm for s in r.steps]
    assert all(s.raw_output is not None and s.raw_output.strip() for s in steps)
    assert all(s.usage is not None and s.usage.completion_tokens > 0 for s in steps)
    # constrained: every step a valid action (goal: >= 99%), the constraint on each step
    assert sum(s.valid for s in steps) / len(steps) >= 0.99
    assert all((s.agent_info or {}).get("constraint_wire") == "grammar" for s in steps)
    # the model's row differs from the random walk's on a metric, CIs apart
    contrast = demo_contrast(out)
    assert contrast and any(line.strip().startswith(DEMO_LLM_LABEL) for line in contrast)
    assert "Loop Ratio" in "".join(contrast) and "Loop Ratio" in done.stdout
    # the closing summary leads with the success rate (issue 42 §2)
    llm_line = next(
        line for line in done.stdout.splitlines() if line.strip().startswith(DEMO_LLM_LABEL)
    )
    assert llm_line.split("  ", 2)[-1].lstrip().startswith("success ")
    assert _cis_apart(out, DEMO_LLM_LABEL, "random")


def _cis_apart(out: Path, a: str, b: str) -> bool:
    """Some contrast metric whose 95% CIs for agents ``a`` and ``b`` do not overlap."""
    import pandas as pd

    from exploreval.analysis import bootstrap_mean_ci
    from exploreval.cli._demo import CONTRAST_METRICS

    table = pd.read_parquet(out / "results.parquet")
    table = table[table["condition"] == f"budget={DEMO_LLM_BUDGET}"]
    for column, _ in CONTRAST_METRICS:
        ci = {}
        for agent in (a, b):
            values = pd.to_numeric(table.loc[table["agent"] == agent, column], errors="coerce")
            ci[agent] = bootstrap_mean_ci(values.dropna().to_numpy(float))
        (_, lo_a, hi_a), (_, lo_b, hi_b) = ci[a], ci[b]
        if hi_a < lo_b or hi_b < lo_a:
            return True
    return False
