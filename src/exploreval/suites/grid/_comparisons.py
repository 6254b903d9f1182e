"""Grid report: the paper's controlled comparisons, each from the run's score rows.

* **Table 2** (harness engineering): per model, one row per harness (``react``, ``memory``...):
  success rate, exploration and exploitation error, and the mean steps of the successful
  episodes; shown for models run with two harnesses or more.
* **Table 3** (semantic information): per agent, the cooking maps with semantic names and the
  same maps with symbolic ids (presets ``custom-20N/semantic`` and ``/symbolic``), and a
  ``semantic − symbolic`` row; shown for agents run with both namings.
* **Figure 20** (Appendix G): exploration and exploitation error by exploration demand
  (``explore-low/medium/high``) and by task-DAG size (``dag-small/medium/large``) of the main
  presets, each level pooled over the other factor; one group of bars per level, one bar per
  agent and error. *Reading:* the paper varies one factor with the map fixed at 8×8; the main
  presets vary both, so each panel averages over the other factor (balanced in the named main
  suite, which runs every combination on the same seeds).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd
from matplotlib.figure import Figure

from exploreval.core import EpisodeRecord
from exploreval.report import ReportSection, save_figure
from exploreval.suites.grid._catalog import DAG_LEVEL_NAMES, EXPLORE_LEVEL_NAMES

#: The columns of Tables 2 and 3, in the paper's order.
TABLE_COLUMNS = (("success", "success rate"), ("explore_error", "exploration error"),
                 ("exploit_error", "exploitation error"), ("steps_successful", "steps (successful)"))  # fmt: skip
_ERRORS = (("explore_error", "Exploration error", "#1f77b4"),
           ("exploit_error", "Exploitation error", "#d62728"))  # fmt: skip


def _cell(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{float(value):.3f}"


def _measures(group: pd.DataFrame) -> dict[str, Any]:
    """Episodes, success rate, mean errors (over episodes where defined), steps of the wins."""
    won = group[group["success"].astype(bool)]
    out: dict[str, Any] = {"episodes": len(group)}
    for column in ("success", "explore_error", "exploit_error"):
        values = pd.to_numeric(group[column], errors="coerce").dropna()
        out[column] = float(values.mean()) if len(values) else math.nan
    out["steps_successful"] = float(won["steps"].mean()) if len(won) else math.nan
    return out


def _has(rows: pd.DataFrame, *columns: str) -> bool:
    return not rows.empty and all(c in rows for c in columns)


def _grid_rows(rows: pd.DataFrame) -> pd.DataFrame:
    if not _has(rows, "family", "success", "steps", "explore_error", "exploit_error"):
        return pd.DataFrame()
    return rows[rows["family"] == "grid"]


#: Table 2's row order: the plain agent first, then the harness with the explicit memory the
#: table is about (Appendix D), then any other harness alphabetically.
HARNESS_ORDER = ("react", "memory")


def _harness_rank(harness: str) -> tuple[int, str]:
    return (
        HARNESS_ORDER.index(harness) if harness in HARNESS_ORDER else len(HARNESS_ORDER),
        harness,
    )


def table2_frame(rows: pd.DataFrame) -> pd.DataFrame:
    """Table 2: per model, one row per harness (the plain ``react`` first, then ``memory``);
    models with two harnesses or more."""
    part = _grid_rows(rows)
    if part.empty or not _has(part, "model", "harness"):
        return pd.DataFrame()
    part = part[part["model"].notna() & part["harness"].notna()]
    out = []
    for model, group in part.groupby("model", sort=True):
        if group["harness"].nunique() < 2:
            continue
        for harness in sorted(set(group["harness"]), key=_harness_rank):
            g = group[group["harness"] == harness]
            out.append({"model": model, "harness": harness, **_measures(g)})
    return pd.DataFrame(out)


def naming_of(preset: object) -> str | None:
    """``semantic`` / ``symbolic`` for a cooking-map preset (``custom-201/semantic``)."""
    text = str(preset or "")
    tail = text.rsplit("/", 1)[-1]
    return tail if "/" in text and tail in ("semantic", "symbolic") else None


def table3_frame(rows: pd.DataFrame) -> pd.DataFrame:
    """Table 3: per agent, semantic and symbolic rows and their difference; agents that ran
    both namings only (the same maps, the same seeds in the named suite)."""
    part = _grid_rows(rows)
    if part.empty or "preset" not in part:
        return pd.DataFrame()
    part = part.assign(naming=pd.Series([naming_of(p) for p in part["preset"]], index=part.index))
    part = part[part["naming"].notna()]
    out = []
    for agent, group in part.groupby("agent", sort=True):
        if group["naming"].nunique() < 2:
            continue
        by = {n: _measures(g) for n, g in group.groupby("naming")}
        for naming in ("semantic", "symbolic"):
            out.append({"agent": agent, "naming": naming, **by[naming]})
        diff = {c: by["semantic"][c] - by["symbolic"][c] for c, _ in TABLE_COLUMNS}
        out.append({"agent": agent, "naming": "semantic − symbolic", "episodes": None, **diff})
    return pd.DataFrame(out)


def figure20_frame(rows: pd.DataFrame) -> pd.DataFrame:
    """Mean errors per agent at each exploration-demand level and each DAG-size level.

    The paper's setting is the ``figure20`` suite (``8x8/...`` presets): each graph takes its own
    maps, the other factor held at medium. A run without those presets gets the main presets'
    levels, each pooled over the other factor (``setting`` says which)."""
    from exploreval.metrics.bootstrap import mean_ci

    part = _grid_rows(rows)
    if part.empty or "preset" not in part:
        return pd.DataFrame()
    levels = part["preset"].astype(str).str.extract(r"^(8x8/)?explore-(\w+)/dag-(\w+)$")
    part = part.assign(fixed=levels[0].notna(), demand=levels[1], dag=levels[2])
    part = part.dropna(subset=["demand", "dag"])
    fixed = bool(part["fixed"].any())
    if fixed:
        part = part[part["fixed"]]
    out = []
    for factor, names in (("demand", EXPLORE_LEVEL_NAMES), ("dag", DAG_LEVEL_NAMES)):
        other = "dag" if factor == "demand" else "demand"
        graph = part[part[other] == "medium"] if fixed else part
        if graph[factor].nunique() < 2:
            continue
        for agent, group in graph.groupby("agent", sort=True):
            for level in names:
                g = group[group[factor] == level]
                if g.empty:
                    continue
                row: dict[str, Any] = {
                    "factor": factor,
                    "level": level,
                    "agent": agent,
                    "episodes": len(g),
                    "setting": "8x8, other factor medium" if fixed else "main presets, pooled",
                }
                for column, _, _ in _ERRORS:
                    values = pd.to_numeric(g[column], errors="coerce").dropna().to_numpy(float)
                    ci = mean_ci(values)
                    row[column], row[f"{column}_low"], row[f"{column}_high"] = (
                        ci.estimate, ci.low, ci.high)  # fmt: skip
                out.append(row)
    return pd.DataFrame(out)


def plot_figure20(frame: pd.DataFrame, path: Path) -> None:
    """(a) by exploration demand, (b) by DAG size: per level, one bar per agent and error."""
    factors = [f for f in ("demand", "dag") if f in set(frame["factor"])]
    agents = list(dict.fromkeys(frame["agent"]))
    fig = Figure(figsize=(6.2 * len(factors), 4.4), layout="constrained")
    axes = fig.subplots(1, len(factors), squeeze=False)[0]
    bars = [(a, e) for a in agents for e in _ERRORS]
    width = 0.8 / len(bars)
    hatches = ["", "//", "..", "xx", "\\\\", "oo"]
    for ax, factor in zip(axes, factors, strict=True):
        part = frame[frame["factor"] == factor]
        names = EXPLORE_LEVEL_NAMES if factor == "demand" else DAG_LEVEL_NAMES
        shown = [n for n in names if n in set(part["level"])]
        for bi, (agent, (column, _, colour)) in enumerate(bars):
            for li, level in enumerate(shown):
                hit = part[(part["agent"] == agent) & (part["level"] == level)]
                if hit.empty or math.isnan(float(hit[column].iloc[0])):
                    continue
                value = float(hit[column].iloc[0])
                low, high = (
                    float(hit[f"{column}_low"].iloc[0]),
                    float(hit[f"{column}_high"].iloc[0]),
                )
                err = None if math.isnan(low) else [[value - low], [high - value]]
                x = li + (bi - (len(bars) - 1) / 2) * width
                ax.bar(x, value, width * 0.92, color=colour, yerr=err, capsize=3,
                       hatch=hatches[agents.index(agent) % len(hatches)], edgecolor="white")  # fmt: skip
        ax.set_xticks(range(len(shown)))
        ax.set_xticklabels(shown)
        ax.set_xlabel("exploration demand" if factor == "demand" else "task DAG size")
        ax.set_title("(a) by exploration demand" if factor == "demand" else "(b) by DAG size")
        ax.set_ylabel("mean error over episodes")
        ax.grid(axis="y", alpha=0.3)
    from matplotlib.patches import Patch

    handles = [Patch(facecolor=c, label=t) for _, t, c in _ERRORS]
    if len(agents) > 1:
        handles += [Patch(facecolor="0.8", hatch=hatches[i % len(hatches)], label=a)
                    for i, a in enumerate(agents)]  # fmt: skip
    fig.legend(handles=handles, loc="outside lower center", ncol=min(len(handles), 4))
    save_figure(fig, path)


def _table(frame: pd.DataFrame, keys: Sequence[tuple[str, str]]) -> list[str]:
    header = [label for _, label in keys] + ["episodes"] + [label for _, label in TABLE_COLUMNS]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in frame.to_dict("records"):
        episodes = "" if row.get("episodes") is None or (
            isinstance(row["episodes"], float) and math.isnan(row["episodes"])) else str(
            int(row["episodes"]))  # fmt: skip
        cells = [str(row[k]) for k, _ in keys] + [episodes]
        cells += [_cell(row[c]) for c, _ in TABLE_COLUMNS]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def comparisons_report(
    records: Sequence[EpisodeRecord], rows: pd.DataFrame, out_dir: Path
) -> list[ReportSection]:
    sections: list[ReportSection] = []
    table2 = table2_frame(rows)
    if not table2.empty:
        sections.append(ReportSection(
            "Grid: harness engineering (Table 2)",
            "Success rate, exploration and exploitation error, and the mean steps of the "
            "successful episodes per harness of each model (Park et al., Table 2).\n\n"
            + "\n".join(_table(table2, (("model", "model"), ("harness", "harness")))),
        ))  # fmt: skip
    table3 = table3_frame(rows)
    if not table3.empty:
        sections.append(ReportSection(
            "Grid: semantic information (Table 3)",
            "The cooking maps with semantic names against the same maps with symbolic ids, per "
            "agent, and the difference (Park et al., Table 3).\n\n"
            + "\n".join(_table(table3, (("agent", "agent"), ("naming", "names")))),
        ))  # fmt: skip
    figure20 = figure20_frame(rows)
    if not figure20.empty:
        path = Path(out_dir) / "grid_errors_by_demand_and_dag.png"
        plot_figure20(figure20, path)
        lines = ["| factor | level | agent | episodes | exploration error | exploitation error |",
                 "|---|---|---|---|---|---|"]  # fmt: skip
        for r in figure20.itertuples():
            lines.append(f"| {'exploration demand' if r.factor == 'demand' else 'DAG size'} | "
                         f"{r.level} | {r.agent} | {r.episodes} | {_cell(r.explore_error)} | "
                         f"{_cell(r.exploit_error)} |")  # fmt: skip
        sections.append(ReportSection(
            "Grid: errors by exploration demand and DAG size (Figure 20)",
            "Exploration and exploitation error at each level of exploration demand and of "
            + (
                "task-DAG size on the fixed 8x8 map, the other factor held at medium, as the "
                "paper's Figure 20 (the `figure20` suite)"
                if figure20["setting"].iloc[0].startswith("8x8")
                else "task-DAG size of the main presets, each pooled over the other factor (the "
                "paper's Figure 20 fixes the map to 8x8: run `grid-suite figure20` for that)"
            )
            + " (Park et al., Figure 20). Bars: means with 95% bootstrap CIs.\n\n"
            + "\n".join(lines),
            [path],
        ))  # fmt: skip
    return sections


__all__ = [
    "comparisons_report",
    "figure20_frame",
    "naming_of",
    "plot_figure20",
    "table2_frame",
    "table3_frame",
]
