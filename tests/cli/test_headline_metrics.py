"""One summary, everywhere (issue 42 §2): each suite's headline metrics, declared once in the
metrics registry, lead ``score``'s output and end ``run`` with one line per agent, with CIs.
On Task2Quiz the three agents all succeed; EUS is what tells them apart, and it was only in
the HTML report."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pandas as pd
import pytest

from _cli import cli
from exploreval.analysis import headline_lines, headline_table
from exploreval.metrics import COMMON_HEADLINE, headline_metrics


@pytest.fixture(scope="module")
def quiz_run(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, subprocess.CompletedProcess[str]]:
    root = tmp_path_factory.mktemp("headline")
    done = cli("run", "exploreval/Task2Quiz-v0", "--preset", "easy", "--seeds", "0-1",
               "--agent", "explorer", "--agent", "walkthrough", "--out", "run", cwd=root)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return root, done


def test_run_ends_with_a_line_per_agent_naming_its_suites_headline_metrics(
    quiz_run: tuple[Path, subprocess.CompletedProcess[str]],
) -> None:
    _, done = quiz_run
    lines = [line.strip() for line in done.stderr.splitlines() if "(task2quiz, 2 episodes)" in line]
    assert [line.split(" ")[0] for line in lines] == ["explorer", "walkthrough"]
    for line in lines:
        assert "success 1.000 [" in line and "; eus " in line and "; tsr " in line
    explorer, walkthrough = lines
    assert "eus 1.000 [1.000, 1.000]" in explorer and "eus 1.000" not in walkthrough


def test_score_leads_with_the_headline_table_even_in_a_narrow_terminal(
    quiz_run: tuple[Path, subprocess.CompletedProcess[str]],
) -> None:
    root, _ = quiz_run
    narrow = cli("score", "run", cwd=root, columns=120)
    assert narrow.returncode == 0
    table = narrow.stdout[narrow.stdout.index("headline metrics: exploreval/Task2Quiz-v0") :]
    header = next(line for line in table.splitlines() if "agent" in line)
    # the suite's own metrics come before the common ones a narrow terminal leaves out
    assert "success" in header and "tsr" in header and "eus" in header
    assert "left out at 120 columns: " in table and "tide_auv" in table.split("left out")[1]


def test_the_headline_table_orders_success_then_the_familys_own_metrics() -> None:
    rows = [
        {"family": "task2quiz", "env_id": "e", "preset": "p", "agent": a, "success": 1.0,
         "eus": eus, "tsr": 1.0, "steps": 10.0, "tide_auv": 0.5}
        for a, eus in (("x", 1.0), ("x", 1.0), ("y", 0.4), ("y", 0.2))
    ]  # fmt: skip
    (frame,) = headline_table(pd.DataFrame(rows)).values()
    columns = list(frame.columns)
    own = [c for c in headline_metrics("task2quiz") if c not in COMMON_HEADLINE]
    assert columns[: columns.index("success")] == ["env", "preset", "agent", "n"]
    assert columns.index("success") < columns.index("tsr") < columns.index("steps")
    assert columns.index("eus") < columns.index("tide_auv") and "eus" in own
    assert frame.set_index("agent").loc["y", "eus"] == "0.300 [0.200, 0.400]"
    line_y = next(line for line in headline_lines(pd.DataFrame(rows)) if line.startswith("y "))
    assert "eus 0.300 [0.200, 0.400]" in line_y and "tide_auv" not in line_y


def test_compare_prints_each_runs_headline_lines_and_leads_its_deltas_with_them(
    quiz_run: tuple[Path, subprocess.CompletedProcess[str]],
) -> None:
    """`compare` says what each run scored before the paired deltas, and the deltas start with
    success and the suite's own metrics (EUS, TSR), not with whatever column came first."""
    root, _ = quiz_run
    shown = cli("compare", "run", "run", "--agent-a", "walkthrough", "--agent-b", "explorer",
                cwd=root)  # fmt: skip
    assert shown.returncode == 0, shown.stderr
    before_deltas = shown.stdout[: shown.stdout.index("(A) vs")]
    summary = [
        line.strip() for line in before_deltas.splitlines() if "(task2quiz, 2 episodes)" in line
    ]
    assert len(summary) == 4 and all("; eus " in line for line in summary)  # 2 runs x 2 agents
    as_json = cli("compare", "run", "run", "--agent-a", "walkthrough", "--agent-b", "explorer",
                  "--json", cwd=root)  # fmt: skip
    import json

    (comparison,) = json.loads(as_json.stdout)["comparisons"]
    metrics = [m["metric"] for m in comparison["metrics"]]
    own = [m for m in headline_metrics("task2quiz") if m not in COMMON_HEADLINE and m in metrics]
    assert metrics[0] == "success" and metrics[1 : 1 + len(own)] == own, metrics
    eus = next(m for m in comparison["metrics"] if m["metric"] == "eus")
    assert eus["mean_b"] == 1.0 and eus["delta"] > 0  # explorer (B) understood more


def test_score_table_prints_a_suite_table_and_refuses_an_unknown_name(
    quiz_run: tuple[Path, subprocess.CompletedProcess[str]],
) -> None:
    root, _ = quiz_run
    listing = cli("score", "run", cwd=root).stdout
    name = listing.split("tables: ")[1].splitlines()[0].split(", ")[0]
    table = pd.read_parquet(root / "run" / "tables" / f"{name}.parquet")
    shown = cli("score", "run", "--table", name, "--wide", cwd=root)
    assert shown.returncode == 0, shown.stderr
    assert f"{name}: {len(table)} row" in shown.stdout
    assert "headline metrics" not in shown.stdout  # the table instead of the summary
    assert all(str(c) in shown.stdout for c in table.columns)
    typo = cli("score", "run", "--table", name[:-1], cwd=root)
    assert typo.returncode == 2
    assert f"Unknown table {name[:-1]!r} for this run." in typo.stderr
    assert name in typo.stderr.split("Did you mean: ")[1].split("?")[0]
