"""Task2Quiz report helpers on synthetic tables (no TextWorld): agent labels, identical agents
merged only when their points and n agree, the note when agents pooled different difficulties."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from exploreval.suites.task2quiz._report import _pooling_note, figure4_section
from exploreval.suites.task2quiz._report_frames import agent_label


def test_agent_labels_name_the_memory_once() -> None:
    assert agent_label("walkthrough", "-") == "walkthrough"
    assert agent_label("gpt-4.1/default/window:3", "window:3") == "gpt-4.1/default/window:3"
    assert agent_label("my-llm", "summary") == "my-llm [summary]"


def episodes(rows: list[tuple[str, str, int, int, int, int]]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "agent": agent,
                "name": agent,
                "memory": "-",
                "difficulty": difficulty,
                "seed": i,
                "run_id": "r",
                "episode_id": f"e{i}",
                "tasks": tasks,
                "tasks_won": won,
                "questions": questions,
                "correct": correct,
            }
            for i, (agent, difficulty, tasks, won, questions, correct) in enumerate(rows)
        ]
    )


def test_figure4_merges_equal_points_only_with_equal_n(tmp_path: Path) -> None:
    same_rates = episodes([("a", "easy", 2, 2, 10, 5), ("b", "easy", 4, 4, 20, 10)])
    text = figure4_section(same_rates, tmp_path).markdown
    assert "Identical:" not in text  # equal rates, different n: two panels
    same = episodes([("a", "easy", 2, 2, 10, 5), ("b", "easy", 2, 2, 10, 5)])
    section = figure4_section(same, tmp_path)
    assert "Identical: `a = b`." in section.markdown
    assert section.files[0].exists()
    assert (
        "| a | easy | 1 | 2 | 1.000 [0.342, 1.000] | 10 | 0.500 [0.237, 0.763] |"
        in section.markdown
    )


def test_pooling_note_only_when_difficulties_differ() -> None:
    both = episodes([("a", "easy", 1, 1, 1, 1), ("a", "hard", 1, 1, 1, 1),
                     ("b", "hard", 1, 1, 1, 1), ("b", "easy", 1, 1, 1, 1)])  # fmt: skip
    assert _pooling_note(both, "bars") == []
    apart = episodes([("a", "easy", 1, 1, 1, 1), ("b", "hard", 1, 1, 1, 1)])
    assert "did not all play the same difficulties" in " ".join(_pooling_note(apart, "bars"))


def test_task2quiz_panels_move_their_legend_when_the_title_needs_the_line(tmp_path: Path) -> None:
    """One narrow panel under a long title (Figures 4 and 8 with one agent): the legend goes
    below the panels instead of over the title."""
    import matplotlib.pyplot as plt

    from exploreval.report import text_collisions
    from exploreval.suites.task2quiz._report import _finish_panels

    fig, axes = plt.subplots(1, 1, figsize=(3, 3), squeeze=False)
    axes[0, 0].plot([0, 1], [0, 1], label="TSR (tasks won / tasks)")
    axes[0, 0].plot([0, 1], [1, 0], label="EUS (correct / questions)")
    _finish_panels(fig, axes, 1, "rate", "Figure 4: TSR and EUS by difficulty", tmp_path / "f.png")
    assert text_collisions(fig) == []
    assert (tmp_path / "f.png").stat().st_size > 0
