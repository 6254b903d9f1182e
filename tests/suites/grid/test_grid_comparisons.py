"""Tables 2-3 and Figure 20 of the grid paper (issue 44), from a small scripted run: harness
engineering per model, semantic against symbolic names per agent, and errors by exploration
demand and by DAG size; each number the mean of the run's own episode rows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from exploreval.analysis import build_report, score_run
from exploreval.models import ScriptedModel
from exploreval.runner import run_experiment, spec_from_dict
from exploreval.store import RunDir
from exploreval.suites.grid import parse_observation
from exploreval.suites.grid._comparisons import (
    figure20_frame,
    naming_of,
    table2_frame,
    table3_frame,
)

PRESETS = ["explore-low/dag-small", "explore-high/dag-small", "explore-low/dag-large",
           "custom-201/semantic", "custom-201/symbolic"]  # fmt: skip


@pytest.fixture(scope="module")
def rows_and_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[pd.DataFrame, Path]:
    spec = spec_from_dict({
        "suites": [{"env_id": "exploreval/GridDAG-v0", "presets": PRESETS, "seeds": "0-1"}],
        "agents": [{"agent": "frontier"}, {"agent": "random"},
                   {"kind": "llm", "model": "scripted", "harness": "react"},
                   {"kind": "llm", "model": "scripted", "harness": "memory"}],
        "max_steps": 40,
    })  # fmt: skip

    def reply(messages: Any, index: int) -> str:
        moves = parse_observation(messages[-1].content).moves or ["up"]
        return f'{{"action": "{moves[index % len(moves)]}"}}'

    out = tmp_path_factory.mktemp("grid_comparisons") / "run"
    run_experiment(spec, str(out), client_factory=lambda _: ScriptedModel(reply_fn=reply))
    return score_run(RunDir(out)).table, out


def _mean(part: pd.DataFrame, column: str) -> float:
    return float(pd.to_numeric(part[column], errors="coerce").dropna().mean())


def test_table2_compares_the_harnesses_of_one_model(
    rows_and_run: tuple[pd.DataFrame, Path],
) -> None:
    rows, _ = rows_and_run
    frame = table2_frame(rows)
    assert list(frame["harness"]) == ["react", "memory"]  # the plain agent first
    assert set(frame["model"]) == {"scripted"}
    for r in frame.itertuples():
        part = rows[(rows["model"] == "scripted") & (rows["harness"] == r.harness)]
        assert r.episodes == len(part) == 2 * len(PRESETS)
        assert r.explore_error == pytest.approx(_mean(part, "explore_error"))
        won = part[part["success"].astype(bool)]
        assert (r.steps_successful == pytest.approx(won["steps"].mean())) if len(won) else (
            pd.isna(r.steps_successful))  # fmt: skip


def test_table3_puts_semantic_beside_symbolic_and_their_difference(
    rows_and_run: tuple[pd.DataFrame, Path],
) -> None:
    rows, _ = rows_and_run
    frame = table3_frame(rows)
    frontier = frame[frame["agent"] == "frontier"]
    assert list(frontier["naming"]) == ["semantic", "symbolic", "semantic − symbolic"]
    semantic, symbolic, diff = frontier.to_dict("records")
    part = rows[(rows["agent"] == "frontier") & (rows["preset"] == "custom-201/semantic")]
    assert semantic["success"] == pytest.approx(part["success"].astype(float).mean())
    assert diff["success"] == pytest.approx(semantic["success"] - symbolic["success"])
    assert (
        naming_of("custom-201/symbolic") == "symbolic"
        and naming_of("explore-low/dag-small") is None
    )


def test_figure20_levels_pool_the_other_factor_and_the_report_draws_it(
    rows_and_run: tuple[pd.DataFrame, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    rows, run = rows_and_run
    frame = figure20_frame(rows)
    demand = frame[(frame["factor"] == "demand") & (frame["agent"] == "frontier")]
    assert list(demand["level"]) == ["low", "high"]  # the run has no medium demand
    low = rows[(rows["agent"] == "frontier") & rows["preset"].isin(
        ["explore-low/dag-small", "explore-low/dag-large"])]  # fmt: skip
    assert int(demand.iloc[0]["episodes"]) == len(low) == 4
    assert demand.iloc[0]["explore_error"] == pytest.approx(_mean(low, "explore_error"))
    dag = frame[(frame["factor"] == "dag") & (frame["agent"] == "frontier")]
    assert list(dag["level"]) == ["small", "large"]
    import exploreval.suites.grid._comparisons as C

    drawn: list[Any] = []
    original = C.save_figure
    monkeypatch.setattr(
        C, "save_figure", lambda fig, path, **k: (drawn.append(fig), original(fig, path, **k))
    )
    report = build_report(RunDir(run)).read_text()
    for title in ("## Grid: harness engineering (Table 2)", "## Grid: semantic information (Table 3)",
                  "## Grid: errors by exploration demand and DAG size (Figure 20)"):  # fmt: skip
        assert title in report
    assert "| scripted | memory |" in report and "| frontier | semantic − symbolic |" in report
    (figure,) = drawn
    assert [ax.get_xlabel() for ax in figure.axes] == ["exploration demand", "task DAG size"]
    assert [t.get_text() for t in figure.axes[0].get_xticklabels()] == ["low", "high"]
    assert (run / "report" / "grid_errors_by_demand_and_dag.png").exists()
