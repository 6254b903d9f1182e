"""TIDE's figures (paper Figures 2-8): success curves, loop ratio vs AUV, memory index, window
curves, the radar, action entropy on loop vs other steps, and recall lags by outcome.

Each takes the stored run tables (:mod:`exploreval.metrics`), never records, so a figure of a
million-episode run is drawn from its tables alone.
"""

from __future__ import annotations

import math
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from exploreval.report._plotting import legend_outside, save_figure
from exploreval.report._tide_frames import (
    RADAR_MIN_AGENTS,
    markdown_table,
    radar_frame,
    recall_lag_summary,
    spearman,
)


# -> Any: the pyplot module, imported lazily (Agg backend)
def _plt() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _panel_key(env_id: str, preset: str, condition: str = "-") -> str:
    """A panel's title: env and preset, the condition beneath in lines a half-width panel
    holds (an option such as a file path would run into the next panel's title)."""
    key = env_id if preset in ("-", "", None) else f"{env_id} [{preset}]"
    if condition in ("-", "", None):
        return key
    lines = textwrap.wrap(f"[{condition}]", PANEL_TITLE_WIDTH, break_on_hyphens=False)
    return "\n".join([key, *lines])


#: Characters per title line of a panel (two panels side by side, 10 pt).
PANEL_TITLE_WIDTH = 48


def with_condition(frame: pd.DataFrame) -> pd.DataFrame:
    """Tables written before the ``condition`` column existed: one condition, ``-``."""
    return frame if "condition" in frame else frame.assign(condition="-")


def _grid(n: int) -> tuple[int, int]:
    """At most two panels side by side: a wider figure is shrunk to the page's width, and its
    legends and ticks with it (three 7-inch panels were 2,310 px, legends ~5 px tall)."""
    cols = min(n, 2)
    return math.ceil(n / cols), cols


def plot_success_curves(curves: pd.DataFrame, summary: pd.DataFrame, path: Path) -> list[Path]:
    """P_t per env x preset panel, one series per agent (identical series merged), legends
    beside the panels. A panel whose episodes have their own budgets is drawn against the
    fraction of the budget (``x_unit``), where the area under the curve is the AUV; the others
    against the turn. One x-axis per figure: panels of the two kinds go to two files
    (``path`` for turns, ``<stem>_budget.png`` for budget fractions), each ordered by env,
    preset and condition as the Loop Ratio figure is."""
    if "x" not in curves:
        curves = curves.assign(x=curves["t"].astype(float), x_unit="turn")
    curves, summary = with_condition(curves), with_condition(summary)
    panels = sorted(
        dict.fromkeys(zip(curves["env_id"], curves["preset"], curves["condition"], strict=True))
    )
    fraction_of = {
        panel: bool(
            (
                curves[
                    (curves["env_id"] == panel[0])
                    & (curves["preset"] == panel[1])
                    & (curves["condition"] == panel[2])
                ]["x_unit"]
                == "budget fraction"
            ).any()
        )
        for panel in panels
    }
    paths = []
    for fraction, target in ((False, path), (True, path.with_name(f"{path.stem}_budget.png"))):
        chosen = [panel for panel in panels if fraction_of[panel] == fraction]
        if chosen:
            paths.append(_success_curve_figure(curves, summary, chosen, fraction, target))
    return paths


def _success_curve_figure(
    curves: pd.DataFrame,
    summary: pd.DataFrame,
    panels: list[tuple[str, str, str]],
    fraction: bool,
    path: Path,
) -> Path:
    from exploreval.report._plotting import (
        legend_outside,
        merge_identical_series,
        overlap_styles,
        save_figure,
    )

    plt = _plt()
    rows, cols = _grid(len(panels))
    fig, axes = plt.subplots(
        rows, cols, figsize=(5.6 * cols, 3.6 * rows), squeeze=False, layout="constrained"
    )
    for ax, (env_id, preset, condition) in zip(axes.flat, panels, strict=False):
        part = curves[
            (curves["env_id"] == env_id)
            & (curves["preset"] == preset)
            & (curves["condition"] == condition)
        ]
        series = [
            (str(agent), line["x"].to_numpy(), line["success"].to_numpy())
            for agent, line in part.groupby("agent", sort=True)
        ]
        merged = merge_identical_series(series)
        for (names, xs, ys), style in zip(merged, overlap_styles(len(merged)), strict=True):
            style.pop("markersize")
            # identical curves have identical AUV and SR: the numbers are given once
            stats = summary[
                (summary["env_id"] == env_id)
                & (summary["preset"] == preset)
                & (summary["condition"] == condition)
                & (summary["agent"] == names.split(" = ")[0])
            ]
            label = names
            if not stats.empty:
                label += (
                    f" (AUV {stats['auv'].iloc[0]:.3f}, SR {stats['success_rate'].iloc[0]:.2f})"
                )
            if fraction:
                ax.plot(xs, ys, label=label, **style)
            else:
                ax.step(xs, ys, where="post", label=label, **style)
        ax.set_title(_panel_key(env_id, preset, condition), fontsize=10, loc="left")
        ax.set_xlabel("fraction of the episode's budget (t / t_max)" if fraction else "turn t")
        ax.set_ylabel("P_t (solved within t turns)")
        ax.set_ylim(-0.02, 1.02)
        ax.grid(alpha=0.3)
        legend_outside(ax)
    for ax in list(axes.flat)[len(panels) :]:
        ax.axis("off")
    against = "the fraction of each episode's budget" if fraction else "the turn"
    # two lines: one narrow panel would otherwise clip a one-line title at both ends
    fig.suptitle(f"TIDE cumulative success curves\nagainst {against} (AUV = area / t_max)",
                 fontsize=10)  # fmt: skip
    save_figure(fig, path)
    plt.close(fig)
    return path


def plot_lr_vs_auv(points: pd.DataFrame, path: Path) -> tuple[Path, dict[str, float | None]]:
    """Per-task Loop Ratio vs AUV, one scatter series per agent; agents whose points are all the
    same are drawn once with a joint label (``exploit_first = frontier``)."""
    from exploreval.report._plotting import legend_outside, merge_identical_series, save_figure

    plt = _plt()
    points = with_condition(points)
    panels = sorted(  # the order of the success-curve figures
        dict.fromkeys(zip(points["env_id"], points["preset"], points["condition"], strict=True))
    )
    rows, cols = _grid(len(panels))
    fig, axes = plt.subplots(
        rows, cols, figsize=(5.4 * cols, 3.8 * rows), squeeze=False, layout="constrained"
    )
    rhos: dict[str, float | None] = {}
    for ax, (env_id, preset, condition) in zip(axes.flat, panels, strict=False):
        part = points[
            (points["env_id"] == env_id)
            & (points["preset"] == preset)
            & (points["condition"] == condition)
        ]
        series = []
        for agent, dots in part.groupby("agent", sort=True):
            dots = dots.sort_values("task", kind="stable")
            series.append((str(agent), dots["loop_ratio"].to_numpy(), dots["auv"].to_numpy()))
        for label, xs, ys in merge_identical_series(series):
            ax.scatter(xs, ys, s=18, alpha=0.7, label=label)
        rho = spearman(part["loop_ratio"].tolist(), part["auv"].tolist())
        title = _panel_key(str(env_id), str(preset), str(condition))
        rhos[title.replace("\n", " ")] = rho  # one line in the report's text
        title += (
            f"\nrho={rho:.2f}" if rho is not None else "\nrho=n/a"
        )  # a line of its own: never past the panel
        ax.set_title(title, fontsize=10, loc="left")
        ax.set_xlabel("Loop Ratio (per task)")
        ax.set_ylabel("AUV (per task)")
        # the data's own range (Loop Ratios cluster low): never a fixed 0-1 squashing them
        high = float(part["loop_ratio"].max(skipna=True)) if len(part) else float("nan")
        high = 1.0 if math.isnan(high) else min(1.0, max(0.05, high * 1.15))
        ax.set_xlim(-0.03 * high, high * 1.03)
        ax.set_ylim(-0.03, 1.03)
        ax.grid(alpha=0.3)
        legend_outside(ax)
    for ax in list(axes.flat)[len(panels) :]:
        ax.axis("off")
    fig.suptitle("Loop Ratio vs AUV per task")
    save_figure(fig, path)
    plt.close(fig)
    return path, rhos


def plot_memory_index(memory: pd.DataFrame, path: Path) -> Path:
    plt = _plt()
    labels = [
        f"{a}\n{_panel_key(e, p)}"
        for a, e, p in zip(memory["agent"], memory["env_id"], memory["preset"], strict=True)
    ]
    mi = memory["mi"].to_numpy(dtype=float)
    err = np.vstack(
        [mi - memory["mi_ci_low"].to_numpy(float), memory["mi_ci_high"].to_numpy(float) - mi]
    )
    fig, ax = plt.subplots(figsize=(max(4.5, 1.3 * len(labels) + 2), 3.8))
    colors = ["tab:green" if v >= 0 else "tab:red" for v in mi]
    ax.bar(range(len(mi)), mi, yerr=err, color=colors, capsize=4)
    ax.axhline(0, color="black", lw=0.8)
    ax.set_xticks(range(len(mi)), labels, fontsize=7)
    ax.set_ylabel("MI = AUV(full) - AUV(none)")
    ax.set_title("Memory Index (95% paired bootstrap CI)")
    fig.tight_layout()
    from exploreval.report._plotting import save_figure

    save_figure(fig, path)
    plt.close(fig)
    return path


def plot_window_curves(window: pd.DataFrame, path: Path) -> Path:
    from exploreval.report._plotting import legend_outside, merge_identical_series, save_figure

    plt = _plt()
    fig, ax = plt.subplots(figsize=(6.0, 3.8), layout="constrained")
    finite = sorted({w for w in window["window"] if math.isfinite(w)})
    full_x = (max(finite) + max(2.0, 0.25 * max(finite, default=1.0))) if finite else 1.0
    series = []
    for (env_id, preset, agent), line in window.groupby(["env_id", "preset", "agent"], sort=True):
        xs = [w if math.isfinite(w) else full_x for w in line["window"]]
        label = f"{agent} — {_panel_key(str(env_id), str(preset))}"
        series.append((label, xs, line["auv"].to_numpy()))
    for label, xs_arr, ys in merge_identical_series(series):
        ax.plot(xs_arr, ys, marker="o", label=label)
    ticks = [*finite, full_x]
    ax.set_xticks(ticks, [f"{t:g}" for t in finite] + ["full"])
    ax.set_xlabel("history window size (turns kept)")
    ax.set_ylabel("AUV")
    ax.set_title("AUV vs memory window")
    ax.grid(alpha=0.3)
    legend_outside(ax)
    save_figure(fig, path)
    plt.close(fig)
    return path


def radar_part(
    summary: pd.DataFrame, memory: pd.DataFrame | None, out_dir: Path, files: list[Path]
) -> list[str]:
    """The radar of Figures 6/9 for the environments with at least ``RADAR_MIN_AGENTS`` agents
    (drawn into ``files``), and a line saying which environments it leaves out and why."""
    agents = summary.groupby(["env_id", "preset"])["agent"].nunique()
    wide = [key for key, n in agents.items() if n >= RADAR_MIN_AGENTS]
    if not wide:
        return ["", f"_No radar (Figures 6/9): it needs {RADAR_MIN_AGENTS} or more agents in an "
                "environment, since min-max scaling across agents (Appendix C.6) makes two "
                "agents best and worst whatever their distance; the table above has the "
                "values._"]  # fmt: skip
    keep = pd.Series(list(zip(summary["env_id"], summary["preset"], strict=True))).isin(wide)
    frame = radar_frame(summary[keep.to_numpy()], memory)
    files.append(plot_radar(frame, out_dir / "tide_radar.png"))
    text = ("Radar (Figures 6/9, `tide_radar.png`): AUV, 1 - LR and MI per agent, min-max "
            "scaled across the agents of each environment (Appendix C.6), so a bar reads only "
            "against the others in its panel.")  # fmt: skip
    if len(wide) < len(agents):
        text += f" Environments with fewer than {RADAR_MIN_AGENTS} agents are left out."
    return ["", text]


def _finish(plt: Any, fig: Any, axes: Any, used: int, path: Path) -> Path:
    """Hide the panels a grid left empty, save the figure, close it."""
    for ax in list(axes.flat)[used:]:
        ax.set_visible(False)
    fig.tight_layout()
    save_figure(fig, path)
    plt.close(fig)
    return path


def plot_entropy(frame: pd.DataFrame, path: Path) -> Path:
    """Figure 8: per agent, the mean token entropy of its replies on non-loop and on loop steps
    (one panel per environment)."""
    plt = _plt()
    panels = list(dict.fromkeys(zip(frame["env_id"], frame["preset"], strict=True)))
    rows, cols = _grid(len(panels))
    fig, axes = plt.subplots(rows, cols, figsize=(5.4 * cols, 3.8 * rows), squeeze=False)
    for ax, (env_id, preset) in zip(axes.flat, panels, strict=False):
        part = frame[(frame["env_id"] == env_id) & (frame["preset"] == preset)]
        x = np.arange(len(part))
        for offset, column, label, colour in ((-0.2, "entropy_other", "non-loop", "tab:blue"),
                                              (0.2, "entropy_loop", "loop", "tab:red")):  # fmt: skip
            values = pd.to_numeric(part[column], errors="coerce").to_numpy(float)
            ax.bar(x + offset, np.nan_to_num(values), 0.4, color=colour, label=label)
        ax.set_xticks(x, [str(a) for a in part["agent"]], fontsize=7, rotation=20, ha="right")
        ax.set_ylabel("mean token entropy (nats)")
        ax.set_title(_panel_key(env_id, preset), fontsize=9)
        legend_outside(ax)
        ax.grid(axis="y", alpha=0.3)
    return _finish(plt, fig, axes, len(panels), path)


def entropy_part(frame: pd.DataFrame | None, out_dir: Path, files: list[Path]) -> list[str]:
    if frame is None or frame.empty:
        return []
    files.append(plot_entropy(frame, out_dir / "tide_entropy.png"))
    return ["", "### Action entropy on loop and non-loop steps (Figure 8)", "",
            "Mean token entropy of the agent's replies (the top-K distribution at each generated "
            "token renormalised, K from `--top-logprobs`) on the steps TIDE marks as loops and on "
            "the others (`tide_entropy.png`). Low entropy on loop steps is the paper's "
            "over-confidence.", "",
            markdown_table(frame, ["env_id", "preset", "agent", "entropy_other", "other_steps",
                                   "entropy_loop", "loop_steps"])]  # fmt: skip


def plot_recall_lags(lags: pd.DataFrame, path: Path) -> Path:
    """Figure 7: per environment, the share of recall events at each lag, success and failure
    trajectories side by side (agents pooled)."""
    from matplotlib.ticker import MaxNLocator

    plt = _plt()
    panels = list(dict.fromkeys(zip(lags["env_id"], lags["preset"], strict=True)))
    rows, cols = _grid(len(panels))
    fig, axes = plt.subplots(rows, cols, figsize=(5.2 * cols, 3.6 * rows), squeeze=False)
    colours = {"success": "tab:green", "fail": "tab:red"}
    for ax, (env_id, preset) in zip(axes.flat, panels, strict=False):
        part = lags[(lags["env_id"] == env_id) & (lags["preset"] == preset)]
        top = int(part["lag"].max())
        for offset, outcome in ((-0.2, "success"), (0.2, "fail")):
            mine = part[part["outcome"] == outcome].groupby("lag")["events"].sum()
            if mine.empty:
                continue
            share = mine / mine.sum()
            ax.bar(share.index.to_numpy(float) + offset, share.to_numpy(float), 0.4,
                   color=colours[outcome], label=f"{outcome} ({int(mine.sum())} events)")  # fmt: skip
        ax.set_xlim(0.3, top + 0.7)
        ax.set_xlabel("memory recall lag (steps since last seen)")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # lags are whole steps
        ax.set_ylabel("share of recall events")
        ax.set_title(_panel_key(env_id, preset), fontsize=9)
        legend_outside(ax)
        ax.grid(axis="y", alpha=0.3)
    return _finish(plt, fig, axes, len(panels), path)


def recall_lag_part(lags: pd.DataFrame | None, out_dir: Path, files: list[Path]) -> list[str]:
    if lags is None or lags.empty:
        return []
    files.append(plot_recall_lags(lags, out_dir / "tide_recall_lags.png"))
    return ["", "### Memory recall lag, success vs failure (Figure 7)", "",
            "Every recall event (an action on a task object seen earlier; the lag is the steps "
            "since it was last seen, Appendix C.5) of the successful and the failed task "
            "trajectories, agents pooled (`tide_recall_lags.png`).", "",
            markdown_table(recall_lag_summary(lags), ["env_id", "preset", "outcome", "events",
                                                      "mean_lag", "median_lag",
                                                      "share_above_5"])]  # fmt: skip


def plot_radar(frame: pd.DataFrame, path: Path) -> Path:
    plt = _plt()
    metrics = [("auv_norm", "AUV ↑"), ("one_minus_lr_norm", "1 - LR ↑"), ("mi_norm", "MI ↑")]
    metrics = [m for m in metrics if frame[m[0]].notna().any()]
    panels = list(dict.fromkeys(zip(frame["env_id"], frame["preset"], strict=True)))
    rows, cols = _grid(len(panels))
    fig = plt.figure(figsize=(4.6 * cols, 4.4 * rows))
    agents = sorted(frame["agent"].unique())
    colors = plt.get_cmap("tab10")
    for number, (env_id, preset) in enumerate(panels, start=1):
        ax = fig.add_subplot(rows, cols, number, projection="polar")
        part = frame[(frame["env_id"] == env_id) & (frame["preset"] == preset)]
        sector = 2 * math.pi / len(metrics)
        width = min(sector * 0.8 / max(len(agents), 1), 0.35)
        for m_index, (column, _) in enumerate(metrics):
            for a_index, agent in enumerate(agents):
                value = part.loc[part["agent"] == agent, column]
                if value.empty or pd.isna(value.iloc[0]):
                    continue
                theta = m_index * sector + (a_index - (len(agents) - 1) / 2) * width
                ax.bar(
                    theta,
                    float(value.iloc[0]),
                    width=width,
                    color=colors(a_index % 10),
                    alpha=0.85,
                    label=agent if m_index == 0 else None,
                )
        ax.set_xticks([i * sector for i in range(len(metrics))], [m[1] for m in metrics])
        ax.set_ylim(0, 1)
        ax.set_yticklabels([])
        ax.set_title(_panel_key(env_id, preset), fontsize=10, pad=14)
    handles, labels = fig.axes[0].get_legend_handles_labels() if fig.axes else ([], [])
    if handles:
        fig.legend(handles, labels, loc="lower center", ncol=min(4, len(labels)), fontsize=7)
    fig.suptitle("TIDE summary\n(min-max across agents, Appendix C.6)", fontsize=10)
    fig.tight_layout(rect=(0, 0.08, 1, 0.95))
    save_figure(fig, path, dpi=110)
    plt.close(fig)
    return path
