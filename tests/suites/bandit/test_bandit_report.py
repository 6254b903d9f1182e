"""The bandit report: Figure 4 table, Figures 1/3/8/9 as PNGs, run tables and result rows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from exploreval.analysis import build_report, score_run
from exploreval.models import ScriptedModel
from exploreval.runner import run_experiment, spec_from_dict
from exploreval.store import RunDir
from exploreval.suites.bandit import stats as B


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("bandit_report") / "run"
    spec = spec_from_dict(
        {
            "name": "bandit-report-test",
            "suites": [
                {"env_id": "exploreval/Bandit-v0", "presets": ["smoke", "easy"], "seeds": "0-7"}
            ],
            "agents": [
                {"agent": "ts"},
                {"agent": "greedy"},
                {"kind": "llm", "model": "scripted", "harness": "BSSeC0", "label": "llm-BSSeC0"},
            ],
        }
    )
    replies = ["<Answer>blue</Answer>", "<Answer>green</Answer>", "garbage"]
    model = ScriptedModel(reply_fn=lambda messages, i: replies[i % 3])
    run_experiment(spec, str(out), client_factory=lambda _spec: model)
    return out


def test_report_has_the_table_and_five_figures_per_instance(run_dir: Path) -> None:
    report = build_report(RunDir(run_dir))
    text = report.read_text()
    records = list(RunDir(run_dir).latest_records().values())
    groups = B.group_records(records)
    assert {inst for inst, _ in groups} == {"K=3, Δ=0.5, T=10", "K=4, Δ=0.5, T=100"}
    for inst in ("K=3, Δ=0.5, T=10", "K=4, Δ=0.5, T=100"):
        assert f"## Bandit: {inst}" in text
    # the table's values are the statistics of the stored records
    section = text.split("## Bandit: K=3, Δ=0.5, T=10")[1].split("## ")[0]
    header = next(line for line in section.splitlines() if line.startswith("| | "))
    columns = [c.strip() for c in header.strip("|").split("|")][1:]
    assert columns == ["TS (sim)", "UCB (sim)", "Greedy (sim)", "greedy", "llm-BSSeC0", "ts"]
    row = next(line for line in section.splitlines() if line.startswith("| SuffFailFreq(T/2)"))
    cells = [c.strip() for c in row.strip("|").split("|")][1:]
    expected = B.suffix_failure_freq(groups[("K=3, Δ=0.5, T=10", "greedy")])
    assert cells[3] == f"{expected:.2f}"
    replicates = next(line for line in section.splitlines() if line.startswith("| Replicates"))
    assert replicates.split("|")[2:4] == [" 1000 ", " 1000 "] and " 8 " in replicates
    invalid_line = next(line for line in section.splitlines() if line.startswith("| llm-BSSeC0"))
    llm_steps = [
        s for r in records if r.agent.name == "llm-BSSeC0" and r.preset == "smoke" for s in r.steps
    ]
    invalid = sum(not s.valid for s in llm_steps) / len(llm_steps)
    assert 0 < invalid < 1
    assert invalid_line.rstrip(" |").endswith(f"{invalid:.3f}")
    pngs = sorted(p.name for p in report.parent.glob("bandit_*.png"))
    assert len(pngs) == 10 and sum("_fig6_uniform" in n for n in pngs) == 2
    for name in pngs:
        assert f"![{name}]({name})" in text
        with Image.open(report.parent / name) as image:
            assert image.size[0] > 600 and image.size[1] > 300


def test_score_writes_bandit_tables_and_rows(run_dir: Path) -> None:
    result = score_run(RunDir(run_dir))
    summary = result.tables["bandit_summary"]
    assert set(summary["agent"]) == {"ts", "greedy", "llm-BSSeC0"}
    assert (run_dir / "tables" / "bandit_summary.parquet").exists()
    curves = pd.read_parquet(run_dir / "tables" / "bandit_curves.parquet")
    easy_ts = curves[(curves.agent == "ts") & (curves.instance == "K=4, Δ=0.5, T=100")]
    assert len(easy_ts) == 100 and easy_ts["suff_fail_freq"].is_monotonic_increasing
    rows = result.table
    greedy = rows[(rows.agent == "greedy") & (rows.preset == "easy")]
    # per-episode flags average to the run statistic
    traj = B.group_records(result.records)[("K=4, Δ=0.5, T=100", "greedy")]
    assert greedy["suffix_failure_half"].mean() == pytest.approx(B.suffix_failure_freq(traj))
    assert greedy["greedy_frac"].mean() == pytest.approx(1.0)
    llm = rows[rows.agent == "llm-BSSeC0"]
    assert (llm["invalid_actions"] > 0).all() and (llm["arms_never_pulled"] >= 1).all()


def test_many_agents_keep_figures_readable(run_dir: Path, tmp_path: Path) -> None:
    from exploreval.core import AgentInfo
    from exploreval.suites.bandit import bandit_report

    base = [r for r in RunDir(run_dir).latest_records().values() if r.preset == "smoke"]
    records = [
        r.model_copy(update={"agent": AgentInfo(name=f"cfg{i:02d}", kind="llm")})
        for i in range(14)
        for r in base
    ]
    (section,) = bandit_report(records, pd.DataFrame(), tmp_path)
    assert "Figure 1 shows the first 8 agents" in section.markdown
    assert "Figures 8 and 9 the first 12" in section.markdown
    assert all(f"cfg{i:02d}" in section.markdown for i in range(14))  # all in the table
    assert len(section.files) == 5 and all(p.exists() for p in section.files)


def test_figure6_draws_k_minfrac_over_time_for_every_agent_and_baseline(
    run_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Figure 6 (issue 44): the middle panel is K·MinFrac(t) of each agent, so a uniform-like
    failure (it stays high) can be seen; the left is SuffFailFreq(t); the simulated baselines
    are drawn too."""
    import exploreval.suites.bandit._report as R

    drawn: list[Any] = []
    monkeypatch.setattr(R, "save_figure", lambda fig, path, **_: drawn.append(fig))
    records = [r for r in RunDir(run_dir).latest_records().values() if r.preset == "easy"]
    agents = {name: traj for (_, name), traj in B.group_records(records).items()}
    R.bandit_report(records, pd.DataFrame(), tmp_path)
    (fig6,) = [f for f in drawn if len(f.axes) > 1 and f.axes[1].get_ylabel() == "K · MinFrac(t)"]
    left, middle, _ = fig6.axes
    assert left.get_ylabel() == "Suffix Failure Frequency @ t"
    lines = {line.get_label(): line for line in middle.get_lines()}
    for name, traj in agents.items():
        label = next(k for k in lines if name in k.split(" = "))
        assert np.allclose(lines[label].get_ydata(), traj.n_arms * B.min_frac_curve(traj))
    assert any(k.endswith("(simulated)") for k in lines)


def test_figure12_gives_each_scenario_its_panel_and_figure13_counts_fails(
    run_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Figure 12 (issue 44): agents of the buttons (B...) and advertisements (A...) designs get
    a scatter each, the baselines and agents of no design in both; Figure 13's "fails" row
    counts an agent's episodes on the instance that did not complete."""
    import exploreval.suites.bandit._report as R
    from exploreval.core import AgentInfo

    drawn: list[Any] = []
    monkeypatch.setattr(R, "save_figure", lambda fig, path, **_: drawn.append(fig))
    base = [r for r in RunDir(run_dir).latest_records().values() if r.preset == "smoke"]
    greedy = [r for r in base if r.agent.name == "greedy"]
    records = [r for r in base if r.agent.name == "ts"] + [
        r.model_copy(update={"agent": AgentInfo(name=name, kind="llm")})
        for name in ("m/BNRN0/none", "m/ANRN0/none")
        for r in greedy
    ]
    rows = pd.DataFrame(
        [{"episode_id": r.episode_id, "agent": r.agent.name, "preset": r.preset,
          "family": "bandit"} for r in records]
        + [{"episode_id": f"errored-{i}", "agent": "m/BNRN0/none", "preset": "smoke",
            "family": "bandit"} for i in range(2)]
    )  # fmt: skip
    (section,) = R.bandit_report(records, rows, tmp_path)
    scatter = next(f for f in drawn if f.axes[0].get_xlabel().startswith("SuffFailFreq(T/2)"))
    titles = [ax.get_title() for ax in scatter.axes]
    assert titles == ["Buttons, K=3, Δ=0.5, T=10", "Advertisements, K=3, Δ=0.5, T=10"]
    for ax, mine, other in zip(scatter.axes, ("BNRN0", "ANRN0"), ("ANRN0", "BNRN0"), strict=True):
        labels = " ".join(str(c.get_label()) for c in ax.collections)
        assert mine in labels and other not in labels
        assert "ts (n=" in labels and "Greedy (simulated)" in labels  # in every panel
    header = next(ln for ln in section.markdown.splitlines() if ln.startswith("| | "))
    agents = [c.strip() for c in header.strip("|").split("|")][1:]
    fails_line = next(ln for ln in section.markdown.splitlines() if ln.startswith("| fails |"))
    fails = dict(
        zip(agents, [c.strip() for c in fails_line.strip("|").split("|")][1:], strict=True)
    )
    assert fails == {"TS (sim)": "0", "UCB (sim)": "0", "Greedy (sim)": "0",
                     "m/ANRN0/none": "0", "m/BNRN0/none": "2", "ts": "0"}  # fmt: skip
    drawn.clear()
    R.bandit_report([r for r in records if "ANRN0" not in r.agent.name], rows, tmp_path)
    one = next(f for f in drawn if f.axes[0].get_xlabel().startswith("SuffFailFreq(T/2)"))
    assert len(one.axes) == 1  # one scenario: Figure 3's single panel


def test_long_summary_tables_put_the_agents_in_rows_as_figures_14_to_19() -> None:
    """Up to 13 agents the statistics are rows (Figure 4: 3 baselines and 10 configurations);
    more (every configuration of a model, Figures 14-19) are rows of their own."""
    import numpy as np

    from exploreval.suites.bandit import BanditInstance, Policy, simulate
    from exploreval.suites.bandit import stats as B

    instance = BanditInstance.two_level(5, 0.2, 20)
    groups = {
        ("hard", f"agent-{i:02d}"): simulate(
            Policy("greedy" if i % 2 else "ts"), instance, 4, np.random.default_rng(i)
        )
        for i in range(14)
    }
    long = B.figure4_markdown(B.summary_frame(groups), {"agent-03": 1}).splitlines()
    assert long[0] == (
        "| agent | MedianReward | SuffFailFreq(T/2) | K*MinFrac | GreedyFrac | Replicates | fails |"
    )
    assert [line.split(" | ")[0] for line in long[2:]] == [f"| agent-{i:02d}" for i in range(14)]
    assert long[5].endswith("| 4 | 1 |") and long[2].endswith("| 4 | 0 |")
    frame = B.summary_frame(dict(list(groups.items())[:13]))
    wide = B.figure4_markdown(frame).splitlines()
    assert wide[0].startswith("| | agent-00 | agent-01 |") and len(wide) == 2 + 5
    assert wide[2].startswith("| MedianReward | ")
