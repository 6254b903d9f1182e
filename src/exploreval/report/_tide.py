"""TIDE figures for ``exploreval report`` (registered for every family).

* cumulative success curves P_t per environment (Figures 2 / 10)
* Loop Ratio vs per-task AUV scatter with Spearman's rho (Figure 3)
* Memory Index bars with paired-bootstrap 95% CIs (Figure 4)
* AUV against history window size (Figure 5)
* the radar of Figures 6 / 9, for environments with three or more agents: min-max scaling across
  the agents (Appendix C.6) turns two agents into "best" and "worst" whatever their distance,
  so with two the report says why there is none

Families that declare (``report.disable_tide_curves``) that TIDE curves mean nothing for them
(bandits: every episode runs to the horizon, "success" is not solving) get no curves or scatter,
and their rows are left out of the TIDE tables. A column that is the same on every row (e.g.
``recall_distance`` on the puzzles) is dropped from the table and named in a note.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from exploreval.core import EpisodeRecord
from exploreval.report._plotting import legend_outside, save_figure

#: Appendix C.6: bars start at a visible baseline and stop short of the outer ring.
RADAR_BASELINE = 0.08
RADAR_CEILING = 0.92


# -> Any: the pyplot module, imported lazily (Agg backend)
def _plt() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def normalise_for_radar(values: Sequence[float | None]) -> list[float | None]:
    """Min-max scale across models to [0, 1], then map to [baseline, ceiling] (Appendix C.6).

    Missing values stay None. When every model has the same value there is no spread to show: all
    get the midpoint, so equal bars read as "no difference", never as "best" or "worst".
    """
    present = [v for v in values if v is not None and math.isfinite(v)]
    if not present:
        return [None for _ in values]
    low, high = min(present), max(present)
    out: list[float | None] = []
    for value in values:
        if value is None or not math.isfinite(value):
            out.append(None)
            continue
        scaled = 0.5 if high == low else (value - low) / (high - low)
        out.append(RADAR_BASELINE + (RADAR_CEILING - RADAR_BASELINE) * scaled)
    return out


def spearman(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Spearman's rank correlation (average ranks for ties); None when undefined."""
    if len(x) < 3:
        return None
    rx = pd.Series(list(x)).rank().to_numpy()
    ry = pd.Series(list(y)).rank().to_numpy()
    if rx.std() == 0 or ry.std() == 0:
        return None
    return float(np.corrcoef(rx, ry)[0, 1])


def _panel_key(env_id: str, preset: str, condition: str = "-") -> str:
    key = env_id if preset in ("-", "", None) else f"{env_id} [{preset}]"
    return key if condition in ("-", "", None) else f"{key} [{condition}]"


def _with_condition(frame: pd.DataFrame) -> pd.DataFrame:
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
    curves, summary = _with_condition(curves), _with_condition(summary)
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
    points = _with_condition(points)
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
        rhos[title] = rho
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


def radar_frame(summary: pd.DataFrame, memory: pd.DataFrame | None) -> pd.DataFrame:
    """Raw and normalised AUV, 1 - LR and MI per env x agent (MI attached to the 'with' agent)."""
    frame = summary[["env_id", "preset", "agent", "auv", "loop_ratio"]].copy()
    frame["one_minus_lr"] = [
        None if v is None or pd.isna(v) else 1.0 - v for v in frame["loop_ratio"]
    ]
    frame["mi"] = None
    if memory is not None and not memory.empty:
        for _, row in memory.iterrows():
            hit = (
                (frame["env_id"] == row["env_id"])
                & (frame["preset"] == row["preset"])
                & (frame["agent"] == row["with"])
            )
            frame.loc[hit, "mi"] = row["mi"]
    for column in ("auv", "one_minus_lr", "mi"):
        normalised: list[float | None] = [None] * len(frame)
        frame = frame.reset_index(drop=True)
        for _, index in frame.groupby(["env_id", "preset"]).groups.items():
            positions = [int(i) for i in index]
            values = [frame[column].iloc[p] for p in positions]
            clean = [None if v is None or pd.isna(v) else float(v) for v in values]
            for p, v in zip(positions, normalise_for_radar(clean), strict=True):
                normalised[p] = v
        frame[f"{column}_norm"] = normalised
    return frame


def sr_auv_pairs(summary: pd.DataFrame) -> pd.DataFrame:
    """Table 4: per environment (and condition), every ordered pair of agents (A, B) with
    SR(A) >= SR(B) and AUV(A) <= AUV(B), where the two metrics do not agree on an order; a pair
    equal on both is left out (nothing to tell apart). Sorted by env, then A's SR."""
    keys = [k for k in ("env_id", "preset", "condition") if k in summary]
    rows: list[dict[str, Any]] = []
    for key, part in summary.groupby(keys, sort=True):
        values = [(str(r["agent"]), float(r["success_rate"]), float(r["auv"]))
                  for _, r in part.iterrows()
                  if pd.notna(r["success_rate"]) and pd.notna(r["auv"])]  # fmt: skip
        for a, sr_a, auv_a in values:
            for b, sr_b, auv_b in values:
                if a == b or sr_a < sr_b or auv_a > auv_b or (sr_a == sr_b and auv_a == auv_b):
                    continue
                row = dict(zip(keys, key if isinstance(key, tuple) else (key,), strict=True))
                row.update(agent_a=a, agent_b=b, sr_a=sr_a, sr_b=sr_b, auv_a=auv_a, auv_b=auv_b)
                rows.append(row)
    columns = [*keys, "agent_a", "agent_b", "sr_a", "sr_b", "auv_a", "auv_b"]
    frame = pd.DataFrame(rows, columns=columns)
    return frame.sort_values([*keys, "sr_a", "agent_a", "agent_b"], ascending=[*[True] * len(keys), False, True, True],
                             kind="stable").reset_index(drop=True)  # fmt: skip


#: Agents an environment needs before its radar is drawn: min-max scaling makes any two agents
#: "best" and "worst" whatever their distance; from three on, the middle ones carry information.
RADAR_MIN_AGENTS = 3


def _radar_part(
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


def _entropy_part(frame: pd.DataFrame | None, out_dir: Path, files: list[Path]) -> list[str]:
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


def recall_lag_summary(lags: pd.DataFrame) -> pd.DataFrame:
    """Per env, preset and outcome (agents pooled, as the paper pools trajectories): recall
    events, mean and median lag, and the share of lags above 5 steps (the long tail)."""
    rows = []
    for (env_id, preset, outcome), part in lags.groupby(["env_id", "preset", "outcome"]):
        values = np.repeat(part["lag"].to_numpy(int), part["events"].to_numpy(int))
        rows.append({"env_id": env_id, "preset": preset, "outcome": outcome,
                     "events": int(values.size), "mean_lag": float(values.mean()),
                     "median_lag": float(np.median(values)),
                     "share_above_5": float((values > 5).mean())})  # fmt: skip
    frame = pd.DataFrame(rows)
    frame["_order"] = (frame["outcome"] == "fail").astype(int)  # success first, as Figure 7
    return (
        frame.sort_values(["env_id", "preset", "_order"])
        .drop(columns="_order")
        .reset_index(drop=True)
    )


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


def _recall_lag_part(lags: pd.DataFrame | None, out_dir: Path, files: list[Path]) -> list[str]:
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


def _fmt(value: Any) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "-"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def markdown_table(frame: pd.DataFrame, columns: Sequence[str]) -> str:
    if frame.empty:
        return "_(no rows)_"
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for _, row in frame.iterrows():
        lines.append(
            "| " + " | ".join(_fmt(None if pd.isna(row[c]) else row[c]) for c in columns) + " |"
        )
    return "\n".join(lines)


def constant_columns(frame: pd.DataFrame, candidates: Sequence[str]) -> list[str]:
    """Candidate columns holding one value on every row of a table of at least two rows."""
    if len(frame) < 2:
        return []
    out = []
    for column in candidates:
        if column in frame and frame[column].nunique(dropna=False) == 1:
            out.append(column)
    return out


def _own_rows(
    tables: Mapping[str, pd.DataFrame], env_ids: set[str], families: set[str]
) -> dict[str, pd.DataFrame]:
    """The stored run tables cut to the envs this section draws (a stored table covers every
    family of the run, bandits included)."""
    kept: dict[str, pd.DataFrame] = {}
    for name, table in tables.items():
        if not name.startswith("tide_") or table.empty:
            continue
        if "family" in table:
            table = table[table["family"].isin(families)]
        elif "env_id" in table:
            table = table[table["env_id"].isin(env_ids)]
        if not table.empty:
            kept[name] = table.reset_index(drop=True)
    return kept


def tide_report(
    records: Sequence[EpisodeRecord],
    rows: pd.DataFrame,
    out_dir: Path,
    tables: Mapping[str, pd.DataFrame] | None = None,
) -> list[Any]:
    """The ``"*"`` report plugin: TIDE tables and figures for any run.

    ``tables``: the run's stored TIDE tables (``tide_run_tables`` over every record, as ``score``
    wrote them); without them they are computed here from the records."""
    from exploreval.metrics.tide import (
        SUMMARY_COLUMNS,
        TrajectorySummary,
        points_table,
        tide_excluded,
        tide_tables_from_summaries,
        trajectory_summaries,
    )
    from exploreval.report import ReportSection
    from exploreval.report._registry import tide_curves_apply

    if tables is not None and "tide_summary" in tables and {"family", "env_id"} <= set(rows):
        # the stored tables, and from the rows which families and envs are drawn and which
        # episodes TIDE left out: no record is read
        drawn = rows[[tide_curves_apply(str(f)) for f in rows["family"]]]
        out_of_tide = (
            drawn["tide_excluded"].notna()
            if "tide_excluded" in drawn
            else pd.Series(False, index=drawn.index)
        )
        excluded_count = int(out_of_tide.sum())
        reasons = (
            sorted({str(v) for v in drawn.loc[out_of_tide, "tide_excluded"]})
            if excluded_count
            else []
        )
        kept_rows = drawn[~out_of_tide]
        tables = _own_rows(tables, set(kept_rows["env_id"]), set(kept_rows["family"]))
        any_kept = not kept_rows.empty
    else:
        # one pass over the records (several runs, or records in memory): each becomes its
        # trajectory summaries, which is all the tables need, and is dropped
        left_out: list[str] = []
        items: list[TrajectorySummary] = []
        for record in records:
            if not tide_curves_apply(record.family):
                continue
            why = tide_excluded(record)
            if why is not None:
                left_out += [why] if record.status == "ok" else []
                continue
            items += trajectory_summaries(record)
        excluded_count, reasons = len(left_out), sorted(set(left_out))
        tables = tide_tables_from_summaries([items]) if items else {}
        any_kept = bool(items)
    if not any_kept or "tide_summary" not in tables:
        if not excluded_count:
            return []
        return [
            ReportSection(
                title="TIDE: AUV, Loop Ratio, Memory Index",
                markdown=f"_All {excluded_count} episode(s) are left out of TIDE: no agent steps "
                "visible (an installed agent ran inside its launch command; docs/tide.md)._",
            )
        ]
    out_dir.mkdir(parents=True, exist_ok=True)
    summary = tables["tide_summary"]
    constant = constant_columns(summary, ("recall_distance", "progress_auv", "loop_ratio"))
    files: list[Path] = plot_success_curves(
        tables["tide_curves"], summary, out_dir / "tide_success_curves.png"
    )
    # stored by score; a run scored before points were stored gets them computed here
    # stored by score; tables stored before points were get them from one pass over the records
    points = (
        tables["tide_points"]
        if "tide_points" in tables
        else points_table(r for r in records if tide_curves_apply(r.family))
    )
    if "condition" in summary and set(summary["condition"]) == {"-"}:
        constant = [*constant, "condition"]  # no env options anywhere: nothing to show
    #: the columns that tell rows apart in the TIDE tables below
    keys = (
        ["env_id", "preset", "agent"]
        if "condition" in constant
        else ["env_id", "preset", "condition", "agent"]
    )
    shown = summary.copy()
    if "t_max_min" in shown:  # episodes with their own budgets: the range of their windows
        shown["t_max"] = [
            str(int(hi)) if int(lo) == int(hi) else f"{int(lo)}–{int(hi)}"
            for lo, hi in zip(shown["t_max_min"], shown["t_max"], strict=True)
        ]
    parts = [
        "Definitions and interpretation choices: docs/tide.md. AUV uses the t_max shown: the "
        "paper's window where it gives one, else each episode's own step budget (a range "
        "`a–b` when the budgets differ; the AUV is then the mean of the episodes' AUVs, the same "
        "number as the mean of `tide_auv` in the metrics table). CIs are 95% percentile "
        "bootstraps over tasks; LR is pooled (loop steps / steps).",
        "",
        markdown_table(shown, [c for c in SUMMARY_COLUMNS if c not in constant]),
    ]
    for column in (c for c in constant if c != "condition"):
        parts += ["", f"_`{column}` is {_fmt(summary[column].iloc[0])} on every row (omitted)._"]
    if excluded_count:
        parts += [
            "",
            f"_{excluded_count} episode(s) left out of TIDE ({'; '.join(reasons)}: an installed "
            "agent ran inside its launch command, so no agent step was recorded; see "
            "docs/tide.md)._",
        ]
    if not points.empty:
        path, rhos = plot_lr_vs_auv(points, out_dir / "tide_lr_vs_auv.png")
        files.append(path)
        parts += [
            "",
            "Spearman rho(LR, per-task AUV): "
            + ", ".join(f"{k}: {_fmt(v)}" for k, v in rhos.items()),
        ]
    split = summary[summary["tasks_with_loops"] > 0]
    if not split.empty:
        parts += [
            "",
            "### Tasks with and without loops (Table 3)",
            "",
            markdown_table(
                split,
                [
                    *keys,
                    "episodes",
                    "tasks_with_loops",
                    "auv_tasks_with_loops",
                    "auv_tasks_without_loops",
                ],
            ),
        ]
    loop_actions = tables.get("tide_loop_actions")
    if loop_actions is not None and not loop_actions.empty:
        top = _with_condition(loop_actions).groupby(keys, sort=True).head(3)
        parts += [
            "",
            "Most frequent loop actions (share of loop steps):",
            "",
            markdown_table(top, [*keys, "verb", "loop_steps", "share"]),
        ]
    memory = tables.get("tide_memory")
    if memory is not None and not memory.empty:
        files.append(plot_memory_index(memory, out_dir / "tide_memory_index.png"))
        parts += [
            "",
            "### Memory Index",
            "",
            markdown_table(
                memory,
                [
                    *keys,
                    "auv_with",
                    "auv_without",
                    "mi",
                    "mi_ci_low",
                    "mi_ci_high",
                    "tasks",
                ],
            ),
        ]
    window = tables.get("tide_window")
    if window is not None and not window.empty:
        files.append(plot_window_curves(window, out_dir / "tide_window.png"))
    pairs = sr_auv_pairs(summary)
    if not pairs.empty:
        shown_keys = [k for k in keys if k != "agent" and k in pairs]
        parts += [
            "",
            "### Where success rate and AUV disagree (Table 4)",
            "",
            "Every pair of agents (A, B) of an environment with SR(A) ≥ SR(B) but "
            "AUV(A) ≤ AUV(B): the end state ranks A first, the trajectory B.",
            "",
            markdown_table(
                pairs, [*shown_keys, "agent_a", "agent_b", "sr_a", "sr_b", "auv_a", "auv_b"]
            ),  # fmt: skip
        ]
    parts += _radar_part(summary, memory, out_dir, files)
    parts += _recall_lag_part(tables.get("tide_recall_lags"), out_dir, files)
    parts += _entropy_part(tables.get("tide_entropy"), out_dir, files)
    summary_history = tables.get("tide_summary_history")
    if summary_history is not None and not summary_history.empty:
        parts += ["", "### Memory summary (Table 5)", "",
                  "AUV with every earlier turn in the prompt (Naive) and with a summary instead "
                  "(`model-summary`: the model writes it each turn, the paper's setting; "
                  "`summary`: the harness's list of past actions), paired by task.", "",
                  markdown_table(summary_history, [*keys, "summary", "auv_naive", "auv_summary",
                                                   "difference", "tasks"])]  # fmt: skip
    return [
        ReportSection(
            title="TIDE: AUV, Loop Ratio, Memory Index", markdown="\n".join(parts), files=files
        )
    ]
