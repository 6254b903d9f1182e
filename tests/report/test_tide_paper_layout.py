"""TIDE's Tables 1, 2 and 6 in the paper's layout: a model per row, environments across in the
paper's order (BlocksWorld, FrozenLake, Sudoku, ...), percent with one decimal."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pandas as pd

from exploreval.agents import make_agent
from exploreval.metrics.tide import tide_tables_from_summaries, trajectory_summaries
from exploreval.report._tide import tide_report
from exploreval.report._tide_frames import paper_matrix
from exploreval.runner._episode import run_single


def test_a_long_table_becomes_the_papers_matrix() -> None:
    summary = pd.DataFrame(
        [
            {
                "env_id": "exploreval/Sudoku-v0",
                "preset": "paper",
                "agent": "a",
                "sr": 0.5,
                "auv": 0.25,
            },
            {
                "env_id": "exploreval/BlocksWorld-v0",
                "preset": "paper",
                "agent": "b",
                "sr": 1.0,
                "auv": 0.753,
            },
            {
                "env_id": "exploreval/BlocksWorld-v0",
                "preset": "paper",
                "agent": "a",
                "sr": 0.04,
                "auv": None,
            },
            {"env_id": "import/WebShop", "preset": "paper", "agent": "a", "sr": 0.15, "auv": 0.096},
        ]
    )
    table = paper_matrix(summary, [("sr", "SR"), ("auv", "AUV")], ["agent"])
    assert list(table.columns) == [
        "agent",
        "BlocksWorld SR",
        "BlocksWorld AUV",
        "Sudoku SR",
        "Sudoku AUV",
        "WebShop SR",
        "WebShop AUV",
    ]
    assert table["agent"].tolist() == ["a", "b"]  # first appearance, as the summary lists them
    a, b = table.to_dict("records")
    assert (a["BlocksWorld SR"], a["Sudoku SR"]) == ("4.0", "50.0")
    assert pd.isna(a["BlocksWorld AUV"])  # no value: an empty cell, not a zero
    assert (a["WebShop SR"], a["WebShop AUV"]) == ("15.0", "9.6")
    assert b["BlocksWorld AUV"] == "75.3" and pd.isna(b["Sudoku SR"])  # b never played Sudoku


def test_the_report_prints_tables_1_and_2_as_the_paper_does(tmp_path: Path) -> None:
    records = []
    for env_id, family in (
        ("exploreval/Sudoku-v0", "sudoku"),
        ("exploreval/FrozenLake-v0", "frozenlake"),
        ("exploreval/BlocksWorld-v0", "blocksworld"),
    ):
        for agent in ("optimal", "random"):
            for seed in range(3):
                records.append(
                    asyncio.run(run_single(env_id, make_agent(family, agent), seed=seed))
                )
    (section,) = tide_report(records, pd.DataFrame(), tmp_path)
    text = section.markdown
    assert "### As the paper prints them (Tables 1 and 2, percent)" in text
    header = next(line for line in text.splitlines() if line.startswith("| agent | BlocksWorld SR"))
    assert header.split(" | ")[1:7] == [
        "BlocksWorld SR",
        "BlocksWorld AUV",
        "FrozenLake SR",
        "FrozenLake AUV",
        "Sudoku SR",
        "Sudoku AUV |",
    ]
    summary = tide_tables_from_summaries([[s for r in records for s in trajectory_summaries(r)]])[
        "tide_summary"
    ]
    optimal = summary[
        (summary["agent"] == "optimal") & (summary["env_id"] == "exploreval/Sudoku-v0")
    ]
    row = next(line for line in text.splitlines() if line.startswith("| optimal | "))
    assert f"{100 * float(optimal['auv'].iloc[0]):.1f}" in row.split(" | ")[6]
    assert any(line.startswith("| agent | BlocksWorld LR") for line in text.splitlines())


def test_each_environments_own_options_do_not_split_a_model_row(tmp_path: Path) -> None:
    """A run whose environments each have their own options (TIDE's instance files) still
    gets one row per model; two conditions of one agent in one environment keep theirs."""
    import json

    lakes, sudokus = tmp_path / "lakes.json", tmp_path / "sudokus.json"
    lakes.write_text(json.dumps([{"grid_size": 6, "seed": 6510}]), encoding="utf-8")
    sudokus.write_text(json.dumps([{"grid_size": 2, "level": 5, "seed": 7}]), encoding="utf-8")
    runs = [
        ("exploreval/FrozenLake-v0", "frozenlake", {"instances": str(lakes)}),
        ("exploreval/Sudoku-v0", "sudoku", {"instances": str(sudokus)}),
    ]

    def play(env_id: str, family: str, options: dict[str, str]) -> object:
        return asyncio.run(run_single(env_id, make_agent(family, "optimal"), seed=0, **options))

    records = [play(*run) for run in runs]
    (section,) = tide_report(records, pd.DataFrame(), tmp_path / "one")  # type: ignore[arg-type]
    lines = section.markdown.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("| agent | FrozenLake SR"))
    assert lines[header + 2].startswith("| optimal | 100.0 |")
    assert not lines[header + 3].startswith("| optimal")  # one row for the model
    # the same agent under two conditions of one environment: a row per condition
    records.append(
        play(
            "exploreval/FrozenLake-v0",
            "frozenlake",
            {"instances": str(lakes), "holes": "terminate"},
        )
    )
    (section,) = tide_report(records, pd.DataFrame(), tmp_path / "two")  # type: ignore[arg-type]
    lines = section.markdown.splitlines()
    header = next(
        i for i, line in enumerate(lines) if line.startswith("| condition | agent | FrozenLake SR")
    )
    assert (
        sum(
            line.endswith("| optimal | 100.0 | 100.0 | - | - |") or "| optimal |" in line
            for line in lines[header + 2 : header + 5]
        )
        == 3
    )
