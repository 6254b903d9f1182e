"""What the report's figures draw, checked on their matplotlib artists: no legend over a data area,
identical agent series drawn once with a joint label, error bars where points have few episodes,
and TIDE's AUV the same number in the TIDE table and in the metrics table."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import matplotlib.figure
import numpy as np
import pandas as pd
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.container import ErrorbarContainer

from _figures import saved_name
from exploreval.analysis import build_report, score_run
from exploreval.metrics.tide import tide_run_tables
from exploreval.runner import run_experiment, spec_from_dict
from exploreval.store import RunDir

SPEC = {
    "name": "figures",
    "suites": [
        {
            "env_id": "exploreval/GridDAG-v0",
            "presets": ["explore-low/dag-small", "explore-medium/dag-medium"],
            "seeds": "0-2",
        },
        {"env_id": "exploreval/Bandit-v0", "presets": ["smoke"], "seeds": "0-3"},
        {"env_id": "exploreval/FrozenLake-v0", "presets": ["small"], "seeds": "0-3"},
    ],
    "agents": [
        # frontier and exploit_first play the same moves on these maps (identical series)
        {"kind": "scripted", "agent": "frontier", "suites": [0]},
        {"kind": "scripted", "agent": "exploit_first", "suites": [0]},
        {"kind": "scripted", "agent": "random", "suites": [0, 1]},
        {"kind": "scripted", "agent": "ucb", "suites": [1]},
        {"kind": "scripted", "agent": "optimal", "suites": [2]},
        {"kind": "scripted", "agent": "random_valid", "suites": [2]},
    ],
    "concurrency": 2,
}


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> RunDir:
    out = tmp_path_factory.mktemp("figures") / "run"
    run_experiment(spec_from_dict(SPEC, "test"), str(out))
    return RunDir(out)


@pytest.fixture(scope="module")
def figures(run: RunDir, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Every figure the report saves, by file name (captured at ``savefig``)."""
    saved: dict[str, matplotlib.figure.Figure] = {}
    original = matplotlib.figure.Figure.savefig

    def capture(self: matplotlib.figure.Figure, fname: Any, *args: Any, **kwargs: Any) -> None:
        saved[saved_name(fname)] = self
        original(self, fname, *args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(matplotlib.figure.Figure, "savefig", capture)
        build_report(run, tmp_path_factory.mktemp("report"))
    return saved


def _legends(fig: matplotlib.figure.Figure) -> Iterator[Any]:
    yield from fig.legends
    for ax in fig.axes:
        if ax.get_legend() is not None:
            yield ax.get_legend()


def _overlap(a: Any, b: Any) -> float:
    width = min(a.x1, b.x1) - max(a.x0, b.x0)
    height = min(a.y1, b.y1) - max(a.y0, b.y0)
    return max(width, 0.0) * max(height, 0.0)


def test_no_legend_covers_any_data_area(figures: dict[str, Any]) -> None:
    expected = {
        "tide_success_curves.png",
        "tide_lr_vs_auv.png",
        "grid_exploration_fraction.png",
        "frozenlake_success_by_shortest_path.png",
    }
    assert expected <= set(figures), sorted(figures)
    checked = 0
    for name, fig in figures.items():
        canvas = FigureCanvasAgg(fig)
        canvas.draw()
        renderer = canvas.get_renderer()
        for legend in _legends(fig):
            box = legend.get_window_extent(renderer)
            for ax in fig.axes:
                if not ax.get_visible() or not ax.has_data():
                    continue
                area = _overlap(box, ax.get_window_extent(renderer))
                assert area < 1.0, f"{name}: a legend covers {area:.0f} px² of {ax.get_title()!r}"
            checked += 1
    bandit_fig1 = next(f for n, f in figures.items() if n.endswith("fig1_detail.png"))
    assert bandit_fig1.legends, "bandit Figure 1 has one legend for its three panels"
    assert checked >= 8


def _labels(ax: Any) -> list[str]:
    legend = ax.get_legend()
    return [t.get_text() for t in legend.get_texts()] if legend is not None else []


def test_identical_agent_series_are_drawn_once_with_a_joint_label(
    run: RunDir, figures: dict[str, Any]
) -> None:
    rows = score_run(run, write=False).table
    grid = rows[rows["family"] == "grid"].sort_values(["preset", "seed"])
    same = (
        grid[grid["agent"] == "frontier"]["tide_auv"].to_numpy()
        == grid[grid["agent"] == "exploit_first"]["tide_auv"].to_numpy()
    ).all()
    assert same, "the fixture needs frontier and exploit_first to play alike"
    scatter = figures["tide_lr_vs_auv.png"]
    grid_axes = [ax for ax in scatter.axes if "GridDAG" in ax.get_title(loc="left")]
    assert len(grid_axes) == 2
    for ax in grid_axes:
        labels = _labels(ax)
        assert "exploit_first = frontier" in labels and "frontier" not in labels
        assert len(ax.collections) == len(labels) == 2  # frontier+exploit_first, random
    curves = figures["tide_success_curves.png"]
    for ax in (ax for ax in curves.axes if "GridDAG" in ax.get_title(loc="left")):
        labels = _labels(ax)
        assert any(label.startswith("exploit_first = frontier (AUV") for label in labels)
        assert len(ax.get_lines()) == len(labels) == 2


def test_difficulty_points_carry_error_bars_in_the_figure(figures: dict[str, Any]) -> None:
    fig = figures["frozenlake_success_by_shortest_path.png"]
    (ax,) = [ax for ax in fig.axes if ax.get_visible()]
    bars = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
    assert len(bars) == len(_labels(ax)) >= 2  # one error-bar series per agent
    for container in bars:
        line, _caps, (segments,) = container.lines
        ys = np.asarray(line.get_ydata(), dtype=float)
        spans = [abs(seg[1][1] - seg[0][1]) for seg in segments.get_segments()]
        assert len(spans) == len(ys)
        # Wilson intervals of n <= 2 episodes are wide whatever the rate
        assert all(span > 0.2 for span in spans)


def test_tide_auv_is_the_same_in_the_tide_table_and_the_metrics_table(run: RunDir) -> None:
    result = score_run(run, write=False)
    grid = [r for r in result.records if r.family == "grid"]
    summary = tide_run_tables(grid)["tide_summary"].set_index(["preset", "agent"])
    rows = result.table[result.table["family"] == "grid"]
    per_episode = rows.groupby(["preset", "agent"])["tide_auv"].mean()
    for key, value in per_episode.items():
        assert summary.loc[key, "auv"] == pytest.approx(value, abs=1e-12), key
    # a preset's AUV does not depend on which other presets are in the run
    small = [r for r in grid if r.preset == "explore-low/dag-small"]
    alone = tide_run_tables(small)["tide_summary"].set_index(["preset", "agent"])
    for key in alone.index:
        assert alone.loc[key, "auv"] == pytest.approx(summary.loc[key, "auv"], abs=1e-12)
    # budgets differ between seeds of a preset: the table says so with a range
    assert (summary["t_max_min"] < summary["t_max"]).any()


def test_fraction_curve_area_is_the_auv(run: RunDir) -> None:
    grid = [r for r in score_run(run, write=False).records if r.family == "grid"]
    tables = tide_run_tables(grid)
    curves, summary = tables["tide_curves"], tables["tide_summary"]
    for (preset, agent), line in curves.groupby(["preset", "agent"]):
        line = line.sort_values("x")
        assert set(line["x_unit"]) == {"budget fraction"}
        x, y = line["x"].to_numpy(), line["success"].to_numpy()
        area = float(((y[1:] + y[:-1]) / 2 * np.diff(x)).sum())
        auv = summary[(summary["preset"] == preset) & (summary["agent"] == agent)]["auv"].iloc[0]
        assert area == pytest.approx(auv, abs=0.02), (preset, agent)


def test_constant_tide_column_is_dropped_with_a_note(run: RunDir, tmp_path: Path) -> None:
    from exploreval.report._tide import tide_report

    lake = [r for r in score_run(run, write=False).records if r.family == "frozenlake"]
    summary = tide_run_tables(lake)["tide_summary"]
    assert len(summary) >= 2 and summary["recall_distance"].nunique(dropna=False) == 1
    (section,) = tide_report(lake, pd.DataFrame(), tmp_path)
    header = next(line for line in section.markdown.splitlines() if line.startswith("| env_id"))
    assert "recall_distance" not in header
    assert "`recall_distance` is" in section.markdown


def test_no_figure_draws_words_over_words(figures: dict[str, Any]) -> None:
    """Titles, axis labels and legends never collide in any figure of the report (the test
    session also checks every figure any test saves, through EXPLOREVAL_CHECK_FIGURES)."""
    from exploreval.report import text_collisions

    assert len(figures) >= 4
    assert {name: text_collisions(fig) for name, fig in figures.items()} == {
        name: [] for name in figures
    }


def test_a_title_under_a_legend_is_found_and_refused(tmp_path: Path, monkeypatch: Any) -> None:
    import matplotlib.pyplot as plt

    from exploreval.report import save_figure, text_collisions
    from exploreval.report._plotting import CHECK_FIGURES_ENV, FigureLayoutError

    fig, ax = plt.subplots(figsize=(4, 3))
    ax.plot([0, 1], [0, 1], label="a long series name number one")
    ax.plot([0, 1], [1, 0], label="another long series name")
    fig.legend(loc="upper right", ncol=2)
    fig.suptitle("A long figure title that runs right across", x=0.01, ha="left")
    found = text_collisions(fig)
    assert found and "figure legend" in found[0]
    monkeypatch.setenv(CHECK_FIGURES_ENV, "1")
    with pytest.raises(FigureLayoutError, match="overlaps"):
        save_figure(fig, tmp_path / "bad.png")
    assert not (tmp_path / "bad.png").exists()
    plt.close(fig)


def test_long_tide_panel_titles_stay_inside_the_figure(tmp_path: Path) -> None:
    """A panel's title names the env, preset and condition; with the legend beside the panel
    the axes are narrow, and a centred title ran off the figure's left edge (the demo showed
    "oreval/GridDAG-v0 [explore-medium/dag-medium]"). Titles start at the panel's left edge."""
    import matplotlib
    import pandas as pd

    from exploreval.report._tide_plots import plot_lr_vs_auv, plot_success_curves

    panels = [
        ("exploreval/GridDAG-v0", "explore-low/dag-small", "-"),
        ("exploreval/GridDAG-v0", "explore-medium/dag-medium", "-"),
        ("exploreval/GridDAG-v0", "explore-low/dag-small", "budget=15"),
    ]
    agents = ["exploit_first = frontier", "random = smollm2-135m"]
    curves = pd.DataFrame(
        [
            {"env_id": e, "preset": p, "condition": c, "agent": a, "t": t, "x": t / 10,
             "x_unit": "budget fraction", "success": min(t / 8, 1.0), "progress": None}
            for e, p, c in panels for a in agents for t in range(11)
        ]
    )  # fmt: skip
    summary = pd.DataFrame(
        [
            {"env_id": e, "preset": p, "condition": c, "agent": a, "auv": 0.46, "success_rate": 1.0}
            for e, p, c in panels for a in agents
        ]
    )  # fmt: skip
    points = pd.DataFrame(
        [
            {"env_id": e, "preset": p, "condition": c, "agent": a, "task": f"t{i}",
             "loop_ratio": 0.1 * i, "auv": 0.2 * i}
            for e, p, c in panels for a in agents for i in range(3)
        ]
    )  # fmt: skip
    drawn: list[matplotlib.figure.Figure] = []
    original = matplotlib.figure.Figure.savefig

    def capture(self: matplotlib.figure.Figure, fname: Any, *args: Any, **kwargs: Any) -> None:
        drawn.append(self)
        original(self, fname, *args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(matplotlib.figure.Figure, "savefig", capture)
        plot_success_curves(curves, summary, tmp_path / "curves.png")
        plot_lr_vs_auv(points, tmp_path / "lr.png")
    assert len(drawn) == 2
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    for fig in drawn:
        canvas = FigureCanvasAgg(fig)
        canvas.draw()
        renderer = canvas.get_renderer()
        width = fig.bbox.width
        titles = [t for ax in fig.axes for t in (ax.title, ax._left_title) if t.get_text()]
        assert len(titles) == 3
        for title in titles:
            box = title.get_window_extent(renderer)
            assert box.x0 >= 0 and box.x1 <= width, (title.get_text(), box.x0, box.x1, width)


def test_legend_labels_differ_by_more_than_letter_case(figures: dict[str, Any]) -> None:
    """Issue 42 §8: bandit Figure 1 told the simulated TS from the run's ts agent only by case."""
    for name, fig in figures.items():
        for legend in _legends(fig):
            labels = [t.get_text() for t in legend.get_texts()]
            folded = [label.casefold() for label in labels]
            assert len(set(folded)) == len(folded), f"{name}: legend labels {labels}"
    fig1 = next(f for n, f in figures.items() if n.endswith("fig1_detail.png"))
    labels = [t.get_text() for t in fig1.legends[0].get_texts()]
    assert "UCB (simulated)" in labels and any(label.startswith("ucb") for label in labels)


def test_scatter_labels_sit_above_the_markers(figures: dict[str, Any]) -> None:
    """Issue 42 §8: a bandit Figure 3 label was hidden under a marker."""
    fig3 = next(f for n, f in figures.items() if n.endswith("fig3_scatter.png"))
    (ax,) = fig3.axes
    top_marker = max(c.get_zorder() for c in ax.collections)
    notes = [t for t in ax.texts if t.get_text().startswith("eps=")]
    assert notes and all(t.get_zorder() > top_marker for t in notes)
    assert all(t.get_bbox_patch() is not None for t in notes)  # on a pale ground


def test_every_figure_has_one_x_axis_and_the_tide_figures_one_panel_order(
    figures: dict[str, Any],
) -> None:
    """Issue 42 §8: TIDE success curves put turn panels and budget-fraction panels in one
    figure, ordered differently from the Loop Ratio figure after it."""
    curve_files = sorted(n for n in figures if n.startswith("tide_success_curves"))
    assert curve_files == ["tide_success_curves.png", "tide_success_curves_budget.png"]
    panel_order: list[str] = []
    for name in curve_files:
        labels = {ax.get_xlabel() for ax in figures[name].axes if ax.get_xlabel()}
        assert len(labels) == 1, f"{name} mixes x-axes: {labels}"
        panel_order += [ax.get_title(loc="left") for ax in figures[name].axes if ax.has_data()]
    scatter = [
        ax.get_title(loc="left").split("\n")[0]
        for ax in figures["tide_lr_vs_auv.png"].axes
        if ax.has_data()
    ]
    assert scatter == sorted(scatter) and sorted(panel_order) == sorted(scatter)
    for name in curve_files:
        titles = [ax.get_title(loc="left") for ax in figures[name].axes if ax.has_data()]
        assert titles == sorted(titles)
