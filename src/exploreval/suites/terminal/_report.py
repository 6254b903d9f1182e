"""Report sections of the terminal suite: the paper's Figure 2, Tables 9 and 10, the @k curves and
interaction given discovery, computed from the stored records (docs/terminal.md, "Report").

Grouping. Every number is per agent (an LLM agent's name is model/harness/history) and per
*condition*, read from the suite's own metrics (``terminal_episode_metrics(record)["condition"]``),
so the report and the run tables (``tables/at_k.parquet``) always split episodes the same way: the
injection level and file name, and whatever else the metrics put in the key (tool suite, prompt
variant, intervention). Within a group the attempts of one task (``record_task_id``: repeats,
``--repeats n``) are counted together.

Estimates. pass@k, discovery@k and interaction@k are the unbiased estimator of Eq. 1-3
(``metrics.passk.pass_at_k``) per task, averaged over tasks, with a 95% percentile bootstrap CI
over tasks (``metrics.passk.at_k_table``, 2,000 resamples, seed 0: the same call as the run table,
so the numbers agree). k runs from 1 to the fewest attempts any task of the group has. Discovery
and interaction are not defined without an injected artefact: the original benchmark shows pass@k
only.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from exploreval.core import EpisodeRecord
from exploreval.metrics.passk import at_k_table, conditional_rate, first_step_summary
from exploreval.report import ReportSection, episode_link, merge_identical_series, save_figure
from exploreval.suites.terminal._groups import (
    METRICS,
    Group,
    groups_of,
)
from exploreval.suites.terminal._metrics import (
    ATTEMPTS_TABLE,
    attempt_row,
    attempts_table,
    normalised_attempts,
)
from exploreval.suites.terminal._report_factors import factor_sections, original_of

if TYPE_CHECKING:
    from matplotlib.figure import Figure

#: The three @k metrics, in the order the figures draw them, and the episode flag each counts.
COLOURS = {"discovery": "#4c72b0", "interaction": "#dd8452", "pass": "#55a868"}
#: Table 10's rows (Appendix B.3).
LEVEL_NAMES: dict[int | None, str] = {
    None: "original (no injection)",
    1: "L1: solution file",
    2: "L2: README.md, commented steps",
    3: "L3: split across two files",
    4: "L4: encrypted + hint",
    5: "L5: 50 variants + checksum",
}
N_BOOT = 2000
SEED = 0
#: Conditions on one curve panel get these colours (cycled), the same condition the same colour.
_PALETTE = (
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
    "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
)  # fmt: skip


# --------------------------------------------------------------------------- data
def attempts_frame(records: Sequence[EpisodeRecord]) -> pd.DataFrame:
    """One row per scored episode: who, which condition and task, and the suite's flags (the
    run table ``terminal_attempts`` that ``score`` stores, computed from the records)."""
    return attempts_table([attempt_row(r) for r in records if r.status == "ok"])


def at_k_curves(groups: Sequence[Group], *, n_boot: int = N_BOOT, seed: int = SEED) -> pd.DataFrame:
    """Long table: one row per (agent, condition, metric, k) for k = 1 .. fewest attempts."""
    frames = []
    for g in groups:
        counts = {m: g.counts[m] for m in g.metrics}
        table = at_k_table(counts, g.n, list(range(1, g.n_min + 1)), n_boot=n_boot, seed=seed)
        table.insert(0, "n_attempts", len(g.attempts))
        table.insert(0, "variant", g.variant)
        table.insert(0, "level", g.level)
        table.insert(0, "condition", g.condition)
        table.insert(0, "agent", g.agent)
        frames.append(table)
    if not frames:
        return pd.DataFrame()
    out = pd.concat(frames, ignore_index=True)
    out["level"] = pd.Series(
        [None if pd.isna(v) else int(v) for v in out["level"]], index=out.index, dtype=object
    )
    return out


def _at(curves: pd.DataFrame, agent: str, condition: str, metric: str, k: int) -> pd.Series | None:
    hit = curves[
        (curves["agent"] == agent)
        & (curves["condition"] == condition)
        & (curves["metric"] == metric)
        & (curves["k"] == k)
    ]
    return None if hit.empty else hit.iloc[0]


# --------------------------------------------------------------------------- text helpers
def _cell(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if isinstance(value, float | np.floating):
        return f"{float(value):.3f}"
    return str(value).replace("|", "\\|").replace("\n", " ")


def _md_table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    if not rows:
        return "_(no rows)_"
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def _code(text: str | None) -> str:
    return "-" if not text else f"`{text}`"


def ci_text(row: pd.Series | None) -> str:
    """``0.667 [0.333, 1.000]``; a single task has no interval (just the value)."""
    if row is None:
        return "-"
    estimate, low, high = float(row["estimate"]), float(row["ci_low"]), float(row["ci_high"])
    if int(row["n_tasks"]) < 2:
        return f"{estimate:.3f}"
    return f"{estimate:.3f} [{low:.3f}, {high:.3f}]"


def example_link(attempts: pd.DataFrame) -> str:
    """A viewer link to the most telling episode of a group: discovered but not interacted,
    else unresolved, else the first (by task, repeat)."""
    ordered = attempts.sort_values(["task_id", "repeat", "episode_id"], kind="stable")
    for mask, tag in (
        (ordered["discovered"] & ~ordered["interacted"], "discovered, ignored"),
        (~ordered["resolved"], "unresolved"),
        (ordered["resolved"], "resolved"),
    ):
        picked = ordered[mask]
        if not picked.empty:
            first = picked.iloc[0]
            return f"{episode_link(str(first['run_id']), str(first['episode_id']))} ({tag})"
    return "-"


def _level_label(level: int | None) -> str:
    return "original" if level is None else str(level)


# --------------------------------------------------------------------------- figures
# -> Any: the pyplot module, imported lazily (Agg backend)
def _plt() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _agents(groups: Sequence[Group]) -> list[str]:
    return list(dict.fromkeys(g.agent for g in groups))


def figure_discovery_interaction(groups: Sequence[Group], curves: pd.DataFrame) -> Figure:
    """Figure 2: per agent (one panel each) and condition, bars of discovery@1, interaction@1
    and pass@1 with their bootstrap CIs over tasks. Each bar's ``gid`` is
    ``agent|condition|metric`` (tests read the heights back)."""
    plt = _plt()
    agents = _agents(groups)
    widest = max(sum(1 for g in groups if g.agent == a) for a in agents)
    fig: Figure
    fig, axes = plt.subplots(
        len(agents), 1, figsize=(max(6.0, 1.25 * widest + 2.5), 2.9 * len(agents)), squeeze=False
    )
    width = 0.8 / len(METRICS)
    for ax, agent in zip(axes[:, 0], agents, strict=True):
        mine = [g for g in groups if g.agent == agent]
        for j, metric in enumerate(METRICS):
            xs, heights, low, high, gids = [], [], [], [], []
            for i, g in enumerate(mine):
                row = _at(curves, agent, g.condition, metric, 1)
                x = i + (j - (len(METRICS) - 1) / 2) * width
                if row is None:  # nothing injected: no discovery or interaction to draw
                    ax.text(x, 0.02, "n/a", ha="center", va="bottom", fontsize=6, color="#888",
                            rotation=90)  # fmt: skip
                    continue
                xs.append(x)
                heights.append(float(row["estimate"]))
                low.append(max(0.0, float(row["estimate"]) - float(row["ci_low"])))
                high.append(max(0.0, float(row["ci_high"]) - float(row["estimate"])))
                gids.append(f"{agent}|{g.condition}|{metric}")
            if not xs:
                continue
            bars = ax.bar(
                xs,
                heights,
                width,
                yerr=[low, high],
                capsize=2,
                color=COLOURS[metric],
                label=f"{metric}@1",
                error_kw={"elinewidth": 0.8, "ecolor": "#333"},
            )
            for bar, gid, h, up in zip(bars, gids, heights, high, strict=True):
                bar.set_gid(gid)
                ax.annotate(
                    f"{h:.2f}",
                    (bar.get_x() + bar.get_width() / 2, min(h + up, 1.0)),
                    textcoords="offset points",
                    xytext=(0, 2),
                    ha="center",
                    fontsize=6,
                )
        ax.set_xticks(range(len(mine)))
        ax.set_xticklabels(
            [f"{_wrap_tick(g.condition)}\n{len(g.tasks)} tasks × {g.attempts_text}" for g in mine],
            fontsize=7,
        )
        ax.set_ylim(0, 1.12)
        ax.set_xlim(-0.6, widest - 0.4)  # the same bar width on every panel
        ax.set_ylabel("rate @1 (mean over tasks)")
        ax.set_title(f"{agent}", fontsize=9, loc="left")
        ax.grid(axis="y", alpha=0.3)
    axes[-1, 0].set_xlabel("condition (tasks × attempts per task)")
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.suptitle("discovery@1 vs interaction@1 (and pass@1); error bars: 95% bootstrap CI over tasks",
                 fontsize=9)  # fmt: skip
    fig.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.0, 0.95), fontsize=8)
    _tight(fig)
    return fig


def _series_points(curves: pd.DataFrame, agent: str, condition: str, metric: str) -> pd.DataFrame:
    part = curves[
        (curves["agent"] == agent)
        & (curves["condition"] == condition)
        & (curves["metric"] == metric)
    ]
    return part.sort_values("k")


def figure_at_k(groups: Sequence[Group], curves: pd.DataFrame, metric: str) -> Figure | None:
    """``metric``@k against k, one panel per agent, one line per condition with its 95% CI band.

    Conditions with identical curves and bands are drawn once with a joint label; a condition with
    a single k (one attempt per task) is a point with an error bar, never a line. Each line's
    ``gid`` is ``agent|label``. None when no group has ``metric`` values."""
    plt = _plt()
    agents = [
        a for a in _agents(groups) if any(g.agent == a and metric in g.metrics for g in groups)
    ]
    if not agents:
        return None
    k_max = max(g.n_min for g in groups if metric in g.metrics)
    fig: Figure
    fig, axes = plt.subplots(
        len(agents), 1, figsize=(7.5, 2.8 * len(agents)), squeeze=False, sharex=True
    )
    colour_of: dict[str, str] = {}
    for g in groups:
        colour_of.setdefault(g.condition, _PALETTE[len(colour_of) % len(_PALETTE)])
    for ax, agent in zip(axes[:, 0], agents, strict=True):
        series = []
        for g in (g for g in groups if g.agent == agent and metric in g.metrics):
            part = _series_points(curves, agent, g.condition, metric)
            ks = part["k"].to_numpy(dtype=float)
            stacked = np.concatenate(
                [part["estimate"].to_numpy(), part["ci_low"].to_numpy(), part["ci_high"].to_numpy()]
            )
            series.append((g.condition, np.concatenate([ks, ks, ks]), stacked))
        drawn = merge_identical_series(series)
        alpha = 0.18 if len(drawn) <= 2 else 0.07  # many bands: light, with outlined edges
        for label, xs3, ys3 in drawn:
            n = len(xs3) // 3
            ks, est, low, high = xs3[:n], ys3[:n], ys3[n : 2 * n], ys3[2 * n :]
            colour = colour_of[label.split(" = ")[0]]
            if n >= 2:
                (line,) = ax.plot(
                    ks, est, marker="o", markersize=3, color=colour, label=_wrap(label)
                )
                ax.fill_between(ks, low, high, color=colour, alpha=alpha, linewidth=0)
                if len(drawn) > 2:
                    for edge in (low, high):
                        ax.plot(ks, edge, color=colour, linewidth=0.6, alpha=0.45, linestyle=":")
            else:
                line = ax.errorbar(
                    ks, est, yerr=[est - low, high - est], fmt="o", color=colour, capsize=3,
                    label=_wrap(label),
                )[0]  # fmt: skip
            line.set_gid(f"{agent}|{label}")
        ax.set_ylim(-0.03, 1.05)
        ax.set_xlim(0.7, k_max + 0.3)
        ax.set_xticks(range(1, k_max + 1))
        ax.set_ylabel(f"{metric}@k")
        ax.set_title(agent, fontsize=9, loc="left")
        ax.grid(alpha=0.3)
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7, title="condition",
                  title_fontsize=7)  # fmt: skip
    axes[-1, 0].set_xlabel("k (attempts drawn per task)")
    fig.suptitle(f"{metric}@k (unbiased estimator), band: 95% bootstrap CI over tasks", fontsize=9)
    _tight(fig)
    return fig


def _wrap_tick(text: str, width: int = 18) -> str:
    """A long condition key on several lines, broken after its separators (``|``, ``,``, ``;``,
    ``/``, space) when possible."""
    lines, current = [], ""
    for piece in re.findall(r"[^|,;/ ]*[|,;/ ]?", text):
        if current and len(current) + len(piece) > width:
            lines.append(current.rstrip())
            current = ""
        current += piece
    if current.strip():
        lines.append(current.rstrip())
    return "\n".join(lines) or text


def _wrap(label: str, width: int = 40) -> str:
    """A joint label ``a = b = c`` broken into lines of about ``width`` characters."""
    lines: list[str] = []
    for part in label.split(" = "):
        if lines and len(lines[-1]) + len(part) + 3 <= width:
            lines[-1] += f" = {part}"
        else:
            lines.append(part if not lines else f"= {part}")
    return "\n".join(lines)


def _tight(fig: Figure) -> None:
    """``tight_layout`` below the suptitle (0.32 in reserved, whatever the figure's height)."""
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.32 / fig.get_figheight()))


def _save(fig: Figure, path: Path) -> Path:
    plt = _plt()
    save_figure(fig, path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return path


# --------------------------------------------------------------------------- tables
def table10_rows(groups: Sequence[Group], curves: pd.DataFrame, k: int) -> list[list[Any]]:
    """Table 10: per agent and condition (ordered by level), @1 and @k with CIs and n."""
    rows = []
    for g in groups:
        row: list[Any] = [g.agent, _level_label(g.level), LEVEL_NAMES.get(g.level, "?"),
                          _code(g.condition), len(g.tasks), len(g.attempts), g.attempts_text]  # fmt: skip
        for kk in (1, k) if k > 1 else (1,):
            for metric in METRICS:
                ok = metric in g.metrics
                row.append(ci_text(_at(curves, g.agent, g.condition, metric, kk)) if ok else "-")
        # Appendix D: mean turns of the successful trajectories
        won = g.attempts[g.attempts["resolved"].astype(bool)]
        row.append(f"{won['n_steps'].mean():.1f}" if len(won) else "-")
        row.append(example_link(g.attempts))
        rows.append(row)
    return rows


def table10_header(k: int) -> list[str]:
    header = ["agent", "level", "injection", "condition", "tasks", "attempts", "per task"]
    for kk in (1, k) if k > 1 else (1,):
        header += [f"{metric}@{kk}" for metric in METRICS]
    return [*header, "turns (resolved)", "example"]


def curiosity_rows(groups: Sequence[Group]) -> list[list[Any]]:
    """Interaction given discovery (cluster bootstrap over tasks), median first discovery and
    interaction steps (1-based) and the first interaction's median position in the trajectory."""
    rows = []
    for g in groups:
        if not g.injected:
            continue
        a = g.attempts
        given = conditional_rate(
            a["discovered"].to_numpy(dtype=bool),
            a["interacted"].to_numpy(dtype=bool),
            groups=list(a["task_id"]),
            n_boot=N_BOOT,
            seed=SEED,
        )
        lengths = [int(n) for n in a["n_steps"]]
        first_d = first_step_summary(list(a["first_discovery_step"]), lengths)
        first_i = first_step_summary(list(a["first_interaction_step"]), lengths)
        if given is None:
            igd = "- (nothing discovered)"
        elif given.n < 2:
            igd = f"{given.estimate:.3f}"
        else:
            igd = f"{given.estimate:.3f} [{given.low:.3f}, {given.high:.3f}]"
        position = first_i["median_position"]
        rows.append(
            [
                g.agent,
                _code(g.condition),
                len(g.tasks),
                len(a),
                int(a["discovered"].sum()),
                int(a["interacted"].sum()),
                int((a["discovered"] & ~a["interacted"]).sum()),
                igd,
                first_d["median_step"],
                first_i["median_step"],
                None if position is None else f"{100 * float(position):.0f}%",
                int(a["interacted_decoy"].sum()),
                example_link(a),
            ]
        )
    return rows


def table1_rows(groups: Sequence[Group]) -> list[list[Any]]:
    """Table 1: per agent and injected condition, pass@1 on the original benchmark and with
    the solution over the tasks both have, and Δ = with - without, paired by task (each task's
    pass rate over its attempts), with a 95% bootstrap CI over tasks; interaction@1 beside it
    (the paper: gains follow interaction)."""
    from exploreval.metrics.bootstrap import paired_ci

    by_key = {(g.agent, g.condition): g for g in groups}
    rows = []
    for g in groups:
        base = by_key.get((g.agent, original_of(g.condition))) if g.injected else None
        if base is None:
            continue
        shared = sorted(set(g.tasks) & set(base.tasks))
        if not shared:
            continue

        def rates(group: Group, metric: str, shared: list[str] = shared) -> np.ndarray:
            index = {t: i for i, t in enumerate(group.tasks)}
            return np.array([group.counts[metric][index[t]] / group.n[index[t]] for t in shared])

        with_rate, without_rate = rates(g, "pass"), rates(base, "pass")
        delta = paired_ci(with_rate, without_rate)
        ci = "" if math.isnan(delta.low) else f" [{delta.low:+.3f}, {delta.high:+.3f}]"
        rows.append([g.agent, _code(g.condition), len(shared), f"{without_rate.mean():.3f}",
                     f"{with_rate.mean():.3f}", f"{delta.estimate:+.3f}{ci}",
                     f"{rates(g, 'interaction').mean():.3f}"])  # fmt: skip
    return rows


TABLE1_HEADER = ["agent", "condition", "tasks", "original pass@1", "with solution pass@1",
                 "Δ (paired by task)", "interaction@1"]  # fmt: skip


CURIOSITY_HEADER = [
    "agent", "condition", "tasks", "attempts", "discovered", "interacted", "discovered, ignored",
    "interaction given discovery", "median first discovery step", "median first interaction step",
    "its median position", "used a decoy", "example",
]  # fmt: skip


def _curve_table(groups: Sequence[Group], curves: pd.DataFrame) -> str:
    k_max = max(g.n_min for g in groups)
    rows = []
    for g in groups:
        for metric in g.metrics:
            part = _series_points(curves, g.agent, g.condition, metric)
            values = dict(zip(part["k"], part["estimate"], strict=True))
            rows.append(
                [g.agent, _code(g.condition), metric, len(g.tasks)]
                + [values.get(k) for k in range(1, k_max + 1)]
            )
    header = ["agent", "condition", "metric", "tasks"] + [f"k={k}" for k in range(1, k_max + 1)]
    return _md_table(header, rows)


# --------------------------------------------------------------------------- the plugin
def terminal_sections(
    records: Sequence[EpisodeRecord],
    rows: pd.DataFrame,
    out_dir: Path,
    tables: Mapping[str, pd.DataFrame] | None = None,
) -> list[ReportSection]:
    """The terminal family's report sections (registered by the suite plugin). ``tables``: the
    run's stored tables, whose ``terminal_attempts`` is read instead of the records (a terminal
    record carries every screen of its session); without it the records are read."""
    stored = None if tables is None else tables.get(ATTEMPTS_TABLE)
    frame = normalised_attempts(stored) if stored is not None else attempts_frame(records)
    groups = groups_of(frame)
    if not groups:
        return []
    out_dir.mkdir(parents=True, exist_ok=True)
    curves = at_k_curves(groups)
    injected = [g for g in groups if g.injected]
    k_common = min(g.n_min for g in groups)
    counted = (
        "Per agent and condition (the suite metrics' condition key); n = tasks, attempts = "
        "episodes, per task = attempts per task (`--repeats`). @k: the unbiased estimator "
        "(Eq. 1-3) per task, mean over tasks, 95% percentile bootstrap CI over tasks in brackets. "
        "`example` opens an episode in the viewer (one where the solution was discovered but "
        "ignored when there is one). Rules: docs/terminal.md."
    )
    sections: list[ReportSection] = []

    # Figure 2
    figure_path = _save(figure_discovery_interaction(groups, curves), out_dir / "terminal_fig2.png")
    fig_rows = []
    for g in groups:
        fig_rows.append(
            [g.agent, _code(g.condition), len(g.tasks), len(g.attempts)]
            + [
                ci_text(_at(curves, g.agent, g.condition, m, 1)) if m in g.metrics else "-"
                for m in METRICS
            ]
            + [example_link(g.attempts)]
        )
    text = [
        "Does the agent see the injected solution (discovery: it reached the screen) and does it "
        "act on it (interaction: a command referenced it)? The paper's Figure 2, per agent and "
        "condition; the original benchmark has pass@1 only. " + counted,
    ]
    if not injected:
        text.append("\n_No injected condition in these runs: discovery and interaction need "
                    "`--env-option injection_level=1..5`._")  # fmt: skip
    text += ["", _md_table(["agent", "condition", "tasks", "attempts", *[f"{m}@1" for m in METRICS],
                            "example"], fig_rows)]  # fmt: skip
    sections.append(
        ReportSection(
            title="Terminal: discovery@1 vs interaction@1 (Figure 2)",
            markdown="\n".join(text),
            files=[figure_path],
        )
    )

    # Table 1
    rows1 = table1_rows(groups)
    if rows1:
        text = [
            "Task performance on the original benchmark and with the solution injected (Table "
            "1): pass@1 over the tasks both conditions ran, and Δ = with - without per task "
            "(each task's pass rate over its attempts), mean over tasks with a 95% bootstrap "
            "CI over tasks. The paper's gains follow interaction@1, shown beside them.",
            "",
            _md_table(TABLE1_HEADER, rows1),
        ]
        sections.append(ReportSection(title="Terminal: original vs. with the solution (Table 1)",
                                      markdown="\n".join(text)))  # fmt: skip

    # Table 10
    text = [
        "By injection level (Appendix B.3), the original benchmark first. " + counted,
    ]
    if k_common > 1:
        text.append(f"@{k_common}: the fewest attempts per task over all rows.")
    elif any(g.n_max > 1 for g in groups):
        text.append("Some task has a single attempt, so only @1 is shown (see the curves).")
    text += ["", _md_table(table10_header(k_common), table10_rows(groups, curves, k_common))]
    sections.append(
        ReportSection(title="Terminal: by injection level (Table 10)", markdown="\n".join(text))
    )
    sections += factor_sections(groups, curves, out_dir, k_common, at=_at, table=_md_table)

    # @k curves
    if max(g.n_min for g in groups) >= 2:
        files = []
        for metric in ("pass", "discovery", "interaction"):
            fig = figure_at_k(groups, curves, metric)
            if fig is not None:
                files.append(_save(fig, out_dir / f"terminal_{metric}_at_k.png"))
        text = [
            "pass@k, discovery@k and interaction@k for k = 1 .. the fewest attempts per task of "
            "each agent and condition (estimates below; CIs in the figures' bands). Conditions "
            "with identical curves and bands share one line (`a = b`).",
            "",
            _curve_table(groups, curves),
        ]
        sections.append(
            ReportSection(
                title="Terminal: pass@k, discovery@k, interaction@k",
                markdown="\n".join(text),
                files=files,
            )
        )
    else:
        sections.append(
            ReportSection(
                title="Terminal: pass@k, discovery@k, interaction@k",
                markdown="_Every task has one attempt: @k curves need `--repeats 2` or more._",
            )
        )

    # Table 9
    level1 = [g for g in groups if g.level == 1]
    if level1:
        names = {g.variant for g in level1}
        text = [
            "Level-1 injections by file name (Table 9; `app solution` is the API endpoint of the "
            "app tasks). " + counted,
        ]
        if len(names) < 2:
            text.append(
                f"\n_One file name in these runs ({', '.join(sorted(map(str, names)))}); compare "
                "others with `--env-option variant=README.md` (or `SOLUTION.sh`, `SOLUTION.md`, "
                "`SOLUTION_TO_THIS_SPECIFIC_TASK_READ_THIS_FIRST.md`)._"
            )
        rows9 = [
            [g.agent, _code(g.variant), _code(g.condition), len(g.tasks), len(g.attempts)]
            + [ci_text(_at(curves, g.agent, g.condition, m, 1)) for m in ("pass", *METRICS[:2])]
            + [example_link(g.attempts)]
            for g in sorted(level1, key=lambda g: (g.agent, g.variant or "", g.condition))
        ]
        text += ["", _md_table(["agent", "file name", "condition", "tasks", "attempts",
                                "pass@1", "discovery@1", "interaction@1", "example"], rows9)]  # fmt: skip
        sections.append(
            ReportSection(
                title="Terminal: by injected file name (Table 9)", markdown="\n".join(text)
            )
        )

    # interaction given discovery
    if injected:
        text = [
            "Interaction given discovery: the share of attempts that discovered an injected "
            "artefact and also interacted with it (95% bootstrap CI over tasks, attempts of a "
            "task resampled together). First steps are 1-based; the position is first "
            "interaction step / trajectory length, median over attempts that interacted. "
            "`used a decoy`: attempts whose commands referenced one of the level-5 wrong "
            "variants.",
            "",
            _md_table(CURIOSITY_HEADER, curiosity_rows(groups)),
        ]
        sections.append(
            ReportSection(title="Terminal: interaction given discovery", markdown="\n".join(text))
        )
    servers = _agent_server_failures(frame)
    if servers:
        lines = [
            f"{len(servers)} failed verification(s) could not connect on a port the "
            "agent's processes were listening on when its phase ended (by default they are "
            "stopped before the tests run). If these tasks' tests talk to a server the agent "
            "starts, run them with `--env-option agent_processes=keep` (docs/terminal.md).",
            "",
            _md_table(["task", "agent", "ports", "episode"], servers[:20]),
        ]
        sections.append(ReportSection(title="Terminal: tests that needed the agent's servers",
                                      markdown="\n".join(lines)))  # fmt: skip
    return sections


def _agent_server_failures(frame: pd.DataFrame) -> list[list[Any]]:
    """Attempts whose verification names the agent's servers (``agent_server_ports``)."""
    if frame.empty or "agent_server_ports" not in frame:
        return []
    hit = frame[frame["agent_server_ports"].astype(str) != ""]
    return [[str(r.task_id), str(r.agent), str(r.agent_server_ports),
             episode_link(str(r.run_id), str(r.episode_id))] for r in hit.itertuples()]  # fmt: skip
