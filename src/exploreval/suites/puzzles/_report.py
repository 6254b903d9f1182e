"""Report section per puzzle family: success rate against difficulty, one line per agent.

Difficulty levels hold few episodes (often 1-10), so every point carries its 95% Wilson interval
as an error bar and its n, and the table lists them; identical lines are drawn once with a joint
label. Points are joined only to guide the eye between adjacent levels."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from exploreval.core import EpisodeRecord
from exploreval.report import (
    ReportSection,
    legend_outside,
    merge_identical_series,
    save_figure,
    wilson_interval,
)
from exploreval.suites.puzzles._metrics import by_difficulty

_LABELS = {
    "level": "optimal plan length (level)",
    "blanks": "blank cells",
    "shortest_path": "shortest path (moves)",
}


def difficulty_section(
    records: Sequence[EpisodeRecord],
    rows: pd.DataFrame,
    out_dir: Path,
    tables: Mapping[str, pd.DataFrame] | None = None,
) -> list[ReportSection]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    families = set(rows["family"]) if "family" in rows else {r.family for r in records}
    stored = {
        name: table
        for name, table in (tables or {}).items()
        if name.split("_by_", 1)[0] in families and "_by_" in name
    }
    # the run tables score stored (every episode of the family), else computed from the records
    chosen = stored if tables is not None and stored else by_difficulty(records)
    sections = []
    if chosen:
        Path(out_dir).mkdir(parents=True, exist_ok=True)
    for name, table in chosen.items():
        family, column = name.split("_by_", 1)
        fig, ax = plt.subplots(figsize=(6.5, 3.8), layout="constrained")
        table = table.copy()
        bounds = [
            wilson_interval(rate * n, int(n))
            for rate, n in zip(table["success_rate"], table["episodes"], strict=True)
        ]
        table["ci_low"] = [b[0] for b in bounds]
        table["ci_high"] = [b[1] for b in bounds]
        series = []
        extents = {}
        for (_env_id, preset, agent), group in table.groupby(["env_id", "preset", "agent"]):
            group = group.sort_values(column)
            label = f"{agent} ({preset})"
            series.append((label, group[column].to_numpy(), group["success_rate"].to_numpy()))
            extents[label] = group
        for offset, (label, xs, ys) in enumerate(merge_identical_series(series)):
            group = extents[label.split(" = ")[0]]
            shift = 0.06 * (offset - (len(series) - 1) / 2)  # keep error bars apart
            ax.errorbar(
                xs + shift,
                ys,
                yerr=[
                    np.maximum(ys - group["ci_low"].to_numpy(), 0.0),
                    np.maximum(group["ci_high"].to_numpy() - ys, 0.0),
                ],
                marker="o",
                capsize=3,
                label=label,
            )
            for x, y, n in zip(xs + shift, ys, group["episodes"], strict=True):
                ax.annotate(
                    f"n={int(n)}", (x, y), textcoords="offset points", xytext=(3, 4), fontsize=6
                )
        levels = sorted({float(v) for v in table[column]})
        if levels:  # ticks on the levels themselves, not on the small offsets between agents
            ax.set_xticks(levels, [f"{v:g}" for v in levels])
            ax.set_xlim(levels[0] - 0.5, levels[-1] + 0.5)
        ax.set_xlabel(_LABELS.get(column, column))
        ax.set_ylabel("success rate (95% Wilson CI)")
        ax.set_ylim(-0.05, 1.05)
        ax.set_title(f"{family}: success by difficulty")
        legend_outside(ax, fontsize=8)  # beside the axes: never over an error bar
        path = out_dir / f"{family}_success_by_{column}.png"
        save_figure(fig, path)
        plt.close(fig)
        overall = (
            table.assign(solved=table["success_rate"] * table["episodes"])
            .groupby(["env_id", "preset", "agent"])[["solved", "episodes"]]
            .sum()
            .reset_index()
        )
        lines = [
            f"- {agent} on {env_id} ({preset}): {round(solved)}/{round(episodes)} solved"
            for env_id, preset, agent, solved, episodes in overall.itertuples(index=False)
        ]
        detail = table[
            ["env_id", "preset", "agent", column, "episodes", "success_rate", "ci_low", "ci_high"]
        ]
        lines += ["", _table(detail.rename(columns={"episodes": "n"}))]
        sections.append(
            ReportSection(
                title=f"{family}: success by {_LABELS.get(column, column)}",
                markdown="\n".join(lines),
                files=[path],
            )
        )
    return sections


def _table(frame: pd.DataFrame) -> str:
    cols = [str(c) for c in frame.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for row in frame.itertuples(index=False):
        cells = [f"{v:.3f}" if isinstance(v, float) else str(v) for v in row]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
