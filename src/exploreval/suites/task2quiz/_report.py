"""Task2Quiz report sections: the paper's Table 2 and Figures 4, 5, 6 and 8, the run's worlds
beside Table 1, exploration diagnostics, and text maps of the worlds with the Stage-1 paths.

Numbers come from the records alone (``rescored_answers``, ``record.tasks``,
``exploration_diagnostics``). An *agent* here is the agent name plus its memory (an LLM harness's
history policy; ``-`` for scripted agents), as the paper's model x memory rows.

Intervals (docs/task2quiz.md, "Report and viewer"): TSR is pooled over tasks (tasks won / tasks,
the paper's Eq. 1 over every task of the group) and EUS over questions (correct / questions,
Eq. 3), each with a 95% Wilson interval on that pooled count. Tasks and questions of one world
are not independent, so with few worlds the intervals are narrower than a bootstrap over worlds
would be; they are honest about n, not about between-world variance.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from exploreval.core import EpisodeRecord
from exploreval.report import (
    ReportSection,
    episode_link,
    merge_identical_series,
    save_figure,
)
from exploreval.suites.task2quiz._quiz_metrics import (
    QTYPES,
    quiz_world,
    stage1_from_record,
)
from exploreval.suites.task2quiz._report_frames import (
    BOOTSTRAP_REPS,
    CI_NOTE,
    MARKERS,
    SHORT,
    ReportEpisode,
    boot_cell,
    ci_text,
    difficulty_order,
    episode_frame,
    eus_by_type,
    fmt_rate,
    md_table,
    question_frame,
    ratio,
    report_episodes,
    tsr_eus_by_difficulty,
    tsr_eus_overall,
)

MAX_MAPS = 12  # world maps in the report (first episode per agent x difficulty)


# -- the tables every figure reads ------------------------------------------------------------


# -- the section --------------------------------------------------------------------------------


def task2quiz_sections(
    records: Sequence[EpisodeRecord], rows: pd.DataFrame, out_dir: Path
) -> list[ReportSection]:
    import matplotlib

    matplotlib.use("Agg")
    episodes = report_episodes(records)
    if not episodes:
        return []
    out_dir = Path(out_dir)
    eps = episode_frame(episodes)
    questions = question_frame(episodes)
    sections = [table2_section(eps, questions)]
    sections.append(figure4_section(eps, out_dir))
    sections.append(figure5_section(eps, out_dir))
    if not questions.empty:
        sections.append(figure6_section(questions, out_dir))
        sections.append(figure8_section(questions, out_dir))
    sections.append(worlds_section(episodes))
    sections.append(diagnostics_section(eps))
    sections.append(maps_section(episodes))
    return sections


def table2_section(eps: pd.DataFrame, questions: pd.DataFrame) -> ReportSection:
    """Table 2: per agent x memory, TSR and EUS per question type and overall, in percent."""
    overall = tsr_eus_overall(eps)
    rows = []
    for item in overall.to_dict("records"):
        row: dict[str, Any] = {
            "agent": item["agent"],
            "memory": item["memory"],
            "difficulties": item["difficulties"],
            "episodes": item["episodes"],
        }
        played = eps[eps["agent"] == item["agent"]]
        row["TSR (tasks)"] = boot_cell(list(played["tasks_won"]), list(played["tasks"]))
        mine = questions[questions["agent"] == item["agent"]]
        for qtype in QTYPES:
            sel = mine[mine["qtype"] == qtype]
            by_episode = sel.groupby("episode_id")["correct"]
            per = [(int(by_episode.sum().get(e, 0)), int(by_episode.size().get(e, 0)))
                   for e in played["episode_id"]]  # fmt: skip
            row[SHORT[qtype]] = boot_cell([p[0] for p in per], [p[1] for p in per])
        row["Tot."] = boot_cell(list(played["correct"]), list(played["questions"]))
        rows.append(row)
    text = [
        "The paper's Table 2 for this run: task success rate and EUS per question type, in "
        "percent, with n in parentheses (tasks for TSR, questions otherwise); pooled over every "
        "task and every asked question of the agent's episodes (all difficulties it played). "
        "In brackets, a 95% bootstrap interval over worlds (the agent's episodes resampled "
        f"with replacement, {BOOTSTRAP_REPS} times, seeded), shown when the agent played two "
        "worlds or more. Memory is the LLM harness's history policy (`-` for scripted agents; "
        "`mem0`, `langmem`, `amem` are the paper's memory systems). Wilson intervals on the "
        "pooled counts are in the figures below.",
        "",
        md_table(pd.DataFrame(rows)),
    ]
    return ReportSection(
        title="Task2Quiz: TSR and EUS per question type (Table 2)", markdown="\n".join(text)
    )


def _errorbar_args(rate: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    return np.vstack([np.maximum(rate - low, 0.0), np.maximum(high - rate, 0.0)])


def _panel_grid(n: int, cols: int = 4) -> tuple[int, int]:
    ncols = min(cols, n)
    return math.ceil(n / ncols), ncols


def figure4_section(eps: pd.DataFrame, out_dir: Path) -> ReportSection:
    """Figure 4: TSR and EUS against difficulty, one panel per agent (identical agents merged)."""
    import matplotlib.pyplot as plt

    table = tsr_eus_by_difficulty(eps)
    levels = difficulty_order(list(table["difficulty"]))
    xs = np.arange(len(levels), dtype=float)
    series = []
    points: dict[str, pd.DataFrame] = {}
    for agent in sorted(table["agent"].unique()):
        part = table[table["agent"] == agent].set_index("difficulty").reindex(levels)
        points[agent] = part
        key = np.concatenate([part["tsr"], part["eus"], part["tasks"], part["questions"]]).astype(
            float
        )
        series.append((agent, np.arange(len(key)), key))
    merged = merge_identical_series(series)
    nrows, ncols = _panel_grid(len(merged))
    fig, axes = plt.subplots(
        nrows, ncols, figsize=(3.3 * ncols, 2.9 * nrows + 0.6), sharey=True, squeeze=False
    )
    styles = {
        "tsr": ("TSR (tasks won / tasks)", "#1f77b4", "o", "tasks", -0.07),
        "eus": ("EUS (correct / questions)", "#d62728", "s", "questions", 0.07),
    }
    for ax, (label, _, _) in zip(axes.flat, merged, strict=False):
        part = points[label.split(" = ")[0]]
        for rate, (name, colour, marker, n_col, shift) in styles.items():
            y = part[rate].to_numpy(dtype=float)
            err = _errorbar_args(
                y,
                part[f"{rate}_low"].to_numpy(dtype=float),
                part[f"{rate}_high"].to_numpy(dtype=float),
            )
            ax.errorbar(
                xs + shift, y, yerr=err, color=colour, marker=marker, capsize=3, lw=1,
                markersize=5, label=name,
            )  # fmt: skip
            for x, value, n in zip(xs + shift, y, part[n_col], strict=True):
                if math.isnan(value):
                    continue
                below = value > 0.5
                ax.annotate(
                    f"n={int(n)}", (x, value), textcoords="offset points",
                    xytext=(-3 if rate == "tsr" else 3, -12 if below else 8),
                    ha="right" if rate == "tsr" else "left", fontsize=6.5, color=colour,
                )  # fmt: skip
        ax.set_title("\n".join(textwrap.wrap(label, 34)), fontsize=8.5)
        ax.set_xticks(xs, levels)
        ax.set_xlim(-0.5, len(levels) - 0.5)
        ax.set_ylim(-0.08, 1.1)
        ax.set_xlabel("difficulty", fontsize=8)
        ax.grid(axis="y", alpha=0.3)
    path = _finish_panels(
        fig, axes, len(merged), "rate (95% Wilson CI)", "Figure 4: TSR and EUS by difficulty",
        out_dir / "task2quiz_fig4_tsr_eus_by_difficulty.png",
    )  # fmt: skip
    detail = pd.DataFrame(
        {
            "agent": table["agent"],
            "difficulty": table["difficulty"],
            "episodes": table["episodes"],
            "tasks": table["tasks"],
            "TSR [95% CI]": [
                ci_text(k, n) for k, n in zip(table["tasks_won"], table["tasks"], strict=True)
            ],
            "questions": table["questions"],
            "EUS [95% CI]": [
                ci_text(k, n) for k, n in zip(table["correct"], table["questions"], strict=True)
            ],
        }
    )
    detail = _sort(detail, levels)
    merged_names = [label for label, _, _ in merged if " = " in label]
    text = [
        "Per agent (one panel; agents with identical points share a panel, named `a = b`), "
        "TSR and EUS at each difficulty the run played. Points of one series are joined only to "
        "guide the eye; every point carries its error bar and n (tasks for TSR, questions for "
        f"EUS). {CI_NOTE}",
    ]
    if merged_names:
        text += ["", "Identical: " + "; ".join(f"`{m}`" for m in merged_names) + "."]
    text += ["", md_table(detail)]
    return ReportSection(
        title="Task2Quiz: TSR and EUS by difficulty (Figure 4)",
        markdown="\n".join(text),
        files=[path],
    )


def _sort(frame: pd.DataFrame, levels: Sequence[str]) -> pd.DataFrame:
    order = {d: i for i, d in enumerate(levels)}
    return (
        frame.assign(_d=frame["difficulty"].map(order))
        .sort_values(["agent", "_d"], kind="stable")
        .drop(columns="_d")
        .reset_index(drop=True)
    )


def figure5_section(eps: pd.DataFrame, out_dir: Path) -> ReportSection:
    """Figure 5: TSR (x) against EUS (y) per agent; colour = agent/model, marker = memory."""
    import matplotlib.pyplot as plt

    table = tsr_eus_overall(eps)
    names = sorted(table["name"].unique())
    memories = sorted(table["memory"].unique())
    cmap = plt.get_cmap("tab10")
    colour = {n: cmap(i % 10) for i, n in enumerate(names)}
    marker = {m: MARKERS[i % len(MARKERS)] for i, m in enumerate(memories)}
    series = [
        (
            str(item["agent"]),
            np.arange(4),
            np.array([item["tsr"], item["eus"], item["tasks"], item["questions"]], dtype=float),
        )
        for item in table.to_dict("records")
    ]
    by_agent = {str(item["agent"]): item for item in table.to_dict("records")}
    fig, ax = plt.subplots(figsize=(10.5, 4.8))
    fig.subplots_adjust(left=0.07, right=0.6, bottom=0.12, top=0.92)
    ax.plot([0, 1], [0, 1], color="#bbbbbb", lw=0.8, ls="--", label="EUS = TSR (reference)")
    for label, _, _ in merge_identical_series(series):
        row = by_agent[label.split(" = ")[0]]
        x, y = float(row["tsr"]), float(row["eus"])
        ax.errorbar(
            [x], [y],
            xerr=_errorbar_args(np.array([x]), np.array([row["tsr_low"]]), np.array([row["tsr_high"]])),
            yerr=_errorbar_args(np.array([y]), np.array([row["eus_low"]]), np.array([row["eus_high"]])),
            color=colour[row["name"]], marker=marker[row["memory"]], markersize=8, capsize=3,
            lw=1, ls="none",
            label="\n".join(
                textwrap.wrap(
                    f"{label} (n = {int(row['tasks'])} tasks, {int(row['questions'])} questions)",
                    44,
                )
            ),
        )  # fmt: skip
    ax.set_xlim(-0.05, 1.05)
    ax.set_ylim(-0.05, 1.05)
    ax.set_xlabel("TSR: tasks won / tasks (95% Wilson CI)")
    ax.set_ylabel("EUS: correct / questions (95% Wilson CI)")
    ax.set_title("Figure 5: TSR vs EUS (colour = agent/model, marker = memory)", fontsize=10)
    ax.grid(alpha=0.3)
    from matplotlib.lines import Line2D

    handles, labels = ax.get_legend_handles_labels()
    if len(memories) > 1:  # a key to the markers, after the points
        handles.append(Line2D([], [], ls="none"))
        labels.append("memory (marker):")
        for m in memories:
            handles.append(Line2D([], [], color="#555555", marker=marker[m], ls="none"))
            labels.append("- (scripted agent)" if m == "-" else m)
    legends = [
        fig.legend(
            handles, labels, loc="upper left", bbox_to_anchor=(0.61, 0.93), fontsize=7.5,
            title="agent (colour), memory (marker)", title_fontsize=8, frameon=False,
            alignment="left",
        )
    ]  # fmt: skip
    path = out_dir / "task2quiz_fig5_tsr_vs_eus.png"
    save_figure(fig, path, dpi=110, bbox_inches="tight", bbox_extra_artists=legends)
    plt.close(fig)
    text = [
        "One point per agent x memory, pooled over every difficulty it played (column "
        "`difficulties` of Table 2); identical points are drawn once with a joint label. The "
        f"dashed diagonal is EUS = TSR, a reference, not a fit. {CI_NOTE}",
    ]
    text += _pooling_note(eps, "points")
    return ReportSection(
        title="Task2Quiz: TSR vs EUS (Figure 5)", markdown="\n".join(text), files=[path]
    )


def _pooling_note(frame: pd.DataFrame, what: str) -> list[str]:
    """A warning when the agents did not all play the same difficulties (pooled numbers of
    different worlds are not comparable)."""
    played = {frozenset(part["difficulty"]) for _, part in frame.groupby("agent")[["difficulty"]]}
    if len(played) <= 1:
        return []
    return [
        "",
        f"**Note:** the agents did not all play the same difficulties, so their {what} pool "
        "different worlds: compare them per difficulty (Figure 4).",
    ]


def figure6_section(questions: pd.DataFrame, out_dir: Path) -> ReportSection:
    """Figure 6: EUS per question type, one bar per agent (identical agents merged)."""
    import matplotlib.pyplot as plt

    table = eus_by_type(questions)
    series = []
    for agent in sorted(table["agent"].unique()):
        part = table[table["agent"] == agent]
        key = np.concatenate([part["eus"], part["n"]]).astype(float)
        series.append((agent, np.arange(len(key)), key))
    merged = merge_identical_series(series)
    k = len(merged)
    width = min(0.8 / k, 0.22)
    xs = np.arange(len(QTYPES), dtype=float)
    fig, ax = plt.subplots(
        figsize=(max(6.5, 1.2 * len(QTYPES) * max(1, k * width / 0.5)) + 2.6, 3.9)
    )
    cmap = plt.get_cmap("tab10")
    for i, (label, _, _) in enumerate(merged):
        part = table[table["agent"] == label.split(" = ")[0]]
        y = part["eus"].to_numpy(dtype=float)
        pos = xs + (i - (k - 1) / 2) * width
        ax.bar(
            pos, np.nan_to_num(y), width=width * 0.92, color=cmap(i % 10),
            yerr=_errorbar_args(np.nan_to_num(y), part["low"].to_numpy(dtype=float), part["high"].to_numpy(dtype=float)),
            capsize=2, error_kw={"lw": 0.8}, label="\n".join(textwrap.wrap(label, 30)),
        )  # fmt: skip
        for x, value, high, n in zip(pos, y, part["high"], part["n"], strict=True):
            top = 0.0 if math.isnan(value) else float(high)
            ax.annotate(f"{int(n)}", (x, top), xytext=(0, 3), textcoords="offset points",
                        ha="center", va="bottom", fontsize=6, rotation=90)  # fmt: skip
    ax.set_xticks(xs, [f"{SHORT[q]}\n{q}" for q in QTYPES], fontsize=8)
    ax.set_xlabel("question type")
    ax.set_ylabel("EUS: correct / questions (95% Wilson CI)")
    ax.set_ylim(0, 1.18)
    ax.grid(axis="y", alpha=0.3)
    ax.set_title("Figure 6: EUS by question type (number above a bar = questions)", fontsize=10)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7.5, frameon=False)
    fig.tight_layout()
    path = out_dir / "task2quiz_fig6_eus_by_type.png"
    save_figure(fig, path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    text = [
        "EUS per question type and agent, pooled over difficulties and episodes; the number "
        "above each bar is its n (questions). Types: Location (where each thing started), "
        "Connectivity (are two rooms adjacent), Direction (which way from one room to the "
        "next), Match (which key opens a lock), Property (was a door/container locked; what "
        "kind of thing something is). 95% Wilson intervals over the questions.",
        *_pooling_note(questions, "bars"),
    ]
    return ReportSection(
        title="Task2Quiz: EUS by question type (Figure 6)", markdown="\n".join(text), files=[path]
    )


def figure8_section(questions: pd.DataFrame, out_dir: Path) -> ReportSection:
    """Figure 8 (Appendix D): accuracy on answerable vs non-answerable questions per type."""
    import matplotlib.pyplot as plt

    yes = eus_by_type(questions, answerable=True)
    no = eus_by_type(questions, answerable=False)
    series = []
    for agent in sorted(yes["agent"].unique()):
        a, b = yes[yes["agent"] == agent], no[no["agent"] == agent]
        key = np.concatenate([a["eus"], a["n"], b["eus"], b["n"]]).astype(float)
        series.append((agent, np.arange(len(key)), key))
    merged = merge_identical_series(series)
    nrows, ncols = _panel_grid(len(merged), cols=3)
    fig, axes = plt.subplots(
        nrows, ncols, figsize=(4.1 * ncols, 3.0 * nrows + 0.6), sharey=True, squeeze=False
    )
    xs = np.arange(len(QTYPES), dtype=float)
    width = 0.38
    styles = (
        ("answerable", "#2ca02c", yes, -width / 2),
        ("non-answerable", "#9467bd", no, width / 2),
    )
    for ax, (label, _, _) in zip(axes.flat, merged, strict=False):
        agent = label.split(" = ")[0]
        for name, colour, table, shift in styles:
            part = table[table["agent"] == agent]
            y = part["eus"].to_numpy(dtype=float)
            ax.bar(
                xs + shift, np.nan_to_num(y), width=width * 0.95, color=colour,
                yerr=_errorbar_args(np.nan_to_num(y), part["low"].to_numpy(dtype=float), part["high"].to_numpy(dtype=float)),
                capsize=2, error_kw={"lw": 0.8}, label=f"{name} accuracy",
            )  # fmt: skip
            for x, high, n in zip(xs + shift, part["high"], part["n"], strict=True):
                # a few points above the error bar's cap, whatever the axis' scale (a fixed
                # data offset put the number on the cap)
                top = 0.0 if n == 0 else float(high)
                ax.annotate(f"{int(n)}", (x, top), xytext=(0, 3), textcoords="offset points",
                            ha="center", va="bottom", fontsize=5.5)  # fmt: skip
        part = yes[yes["agent"] == agent]
        for x, k, n in zip(xs, part["answerable_n"], part["asked_n"], strict=True):
            share = f"{100 * k / n:.0f}%" if n else "-"
            ax.text(
                x, 1.17, f"ans. {share}\n{int(k)}/{int(n)}", ha="center", va="center", fontsize=6
            )
        ax.set_xticks(xs, [SHORT[q] for q in QTYPES], fontsize=8)
        ax.set_ylim(0, 1.26)
        ax.set_yticks([0, 0.25, 0.5, 0.75, 1.0])
        ax.set_title("\n".join(textwrap.wrap(label, 40)), fontsize=8.5)
        ax.set_xlabel("question type", fontsize=8)
        ax.grid(axis="y", alpha=0.3)
    path = _finish_panels(
        fig, axes, len(merged), "accuracy (95% Wilson CI)",
        "Figure 8: answerable vs non-answerable accuracy",
        out_dir / "task2quiz_fig8_answerable.png",
    )  # fmt: skip
    detail = []
    for agent in sorted(yes["agent"].unique()):
        a, b = yes[yes["agent"] == agent], no[no["agent"] == agent]
        for qtype in QTYPES:
            ra = a[a["qtype"] == qtype].iloc[0]
            rb = b[b["qtype"] == qtype].iloc[0]
            detail.append(
                {
                    "agent": agent,
                    "type": SHORT[qtype],
                    "answerable share": f"{int(ra['answerable_n'])}/{int(ra['asked_n'])}",
                    "answerable acc [95% CI]": ci_text(ra["correct"], ra["n"]),
                    "non-answerable acc [95% CI]": ci_text(rb["correct"], rb["n"]),
                }
            )
    text = [
        "Appendix D: where correctness comes from. Per agent and type, accuracy on the "
        "questions the agent's own Stage-1 trajectory made answerable (reference = the true "
        "answer) and on the others (reference = `non-answerable`: correct only by abstaining). "
        "Above each pair: the answerable share (answerable / asked); above each bar: its n "
        "(questions; n = 0: no bar). 95% Wilson intervals over the questions.",
        *_pooling_note(questions, "bars"),
        "",
        md_table(pd.DataFrame(detail)),
    ]
    return ReportSection(
        title="Task2Quiz: answerable vs non-answerable accuracy (Figure 8)",
        markdown="\n".join(text),
        files=[path],
    )


def world_stats(episodes: Sequence[ReportEpisode]) -> pd.DataFrame:
    """One row per distinct world of the run (difficulty, seed, content hash)."""
    from exploreval.suites.task2quiz._quiz_api import generate_questions

    rows = {}
    for e in episodes:
        world = quiz_world(e.record)
        if world is None or not world.summary:
            continue
        key = (world.difficulty, world.seed, world.content_hash)
        if key in rows:
            continue
        summary = world.summary
        objects = len(summary["containers"]) + len(summary["supporters"]) + len(summary["items"])
        rows[key] = {
            "difficulty": world.difficulty,
            "seed": world.seed,
            "rooms": len(summary["rooms"]),
            "objects": objects,
            "tasks": len(world.tasks),
            "walkthrough_steps": sum(len(t.walkthrough) for t in world.tasks),
            "questions": len(generate_questions(world, world.seed)),
        }
    return pd.DataFrame(list(rows.values()))


def worlds_section(episodes: Sequence[ReportEpisode]) -> ReportSection:
    """Table 1 for the worlds this run played, beside the paper's numbers."""
    from exploreval.suites.task2quiz._benchmark import PAPER_TABLE1

    stats = world_stats(episodes)
    rows = []
    for d in difficulty_order(list(stats["difficulty"])):
        part = stats[stats["difficulty"] == d]
        paper = PAPER_TABLE1.get(d, {})
        tasks = int(part["tasks"].sum())
        rows.append(
            {
                "difficulty": d,
                "worlds": len(part),
                "rooms (run / paper)": f"{part['rooms'].min()}-{part['rooms'].max()} / {paper.get('rooms', '-')}",
                "objects (run / paper)": f"{part['objects'].min()}-{part['objects'].max()} / {paper.get('objects', '-')}",
                "avg tasks (run / paper)": f"{tasks / len(part):.1f} / {paper.get('tasks', '-')}",
                "avg walkthrough (run / paper)": f"{part['walkthrough_steps'].sum() / max(tasks, 1):.2f} / {paper.get('walkthrough', '-')}",
                "avg questions (run / paper)": f"{part['questions'].mean():.1f} / {paper.get('questions', '-')}",
            }
        )
    text = [
        "The distinct worlds of this run (each world once, whichever agents played it) beside the "
        "paper's Table 1 (10 worlds per difficulty). Objects = containers, supporters, portable "
        "objects, keys and food; walkthrough = planned steps per task; questions = the full quiz "
        "generated for the world (before any `max_questions` limit). The whole 30-world "
        "benchmark: `exploreval task2quiz-build`.",
        "",
        md_table(pd.DataFrame(rows)),
    ]
    return ReportSection(title="Task2Quiz: the run's worlds (Table 1)", markdown="\n".join(text))


def diagnostics_section(eps: pd.DataFrame) -> ReportSection:
    """Exploration diagnostics per agent and difficulty (room graph)."""
    levels = difficulty_order(list(eps["difficulty"]))
    rows = []
    for (agent, difficulty), part in eps.groupby(["agent", "difficulty"], sort=False):
        first = part.iloc[0]
        explore_n, explore_e = int(part["explore_steps"].sum()), int(part["explore_errors"].sum())
        exploit_n, exploit_e = int(part["exploit_steps"].sum()), int(part["exploit_errors"].sum())
        rows.append(
            {
                "agent": agent,
                "difficulty": difficulty,
                "episodes": len(part),
                "rooms visited": fmt_rate(float(part["rooms_visited_share"].mean())),
                "opened": fmt_rate(float(part["opened_share"].mean())),
                "revisits": fmt_rate(float(part["revisit_share"].mean())),
                "explore errors": f"{explore_e}/{explore_n}"
                + (f" ({explore_e / explore_n:.2f})" if explore_n else ""),
                "exploit errors": f"{exploit_e}/{exploit_n}"
                + (f" ({exploit_e / exploit_n:.2f})" if exploit_n else ""),
                "example": episode_link(str(first["run_id"]), str(first["episode_id"])),
            }
        )
    text = [
        "Stage-1 exploration on the room graph (docs/task2quiz.md): mean over episodes of the "
        "share of rooms visited, of closed doors/containers opened, and of moves into a room "
        "already visited in the same task; explore/exploit errors pooled over moves (errors / "
        "classified moves, rate in parentheses). Key-fetching detours are not classified.",
        "",
        md_table(_sort(pd.DataFrame(rows), levels)),
    ]
    return ReportSection(title="Task2Quiz: exploration diagnostics", markdown="\n".join(text))


def pick_map_episodes(episodes: Sequence[ReportEpisode]) -> list[ReportEpisode]:
    """The first episode (by seed, repeat) of every agent x difficulty, by difficulty then agent."""
    levels = difficulty_order([e.difficulty for e in episodes])
    first: dict[tuple[str, str], ReportEpisode] = {}
    for e in sorted(episodes, key=lambda e: (e.record.seed, e.record.repeat, e.record.episode_id)):
        first.setdefault((e.agent, e.difficulty), e)
    ordered = sorted(first.items(), key=lambda kv: (levels.index(kv[0][1]), kv[0][0]))
    return [e for _, e in ordered]


def world_map_text(record: EpisodeRecord) -> str:
    """The text map of the episode's world with its Stage-1 marks and per-task paths."""
    from exploreval.suites.task2quiz._map import ascii_map, path_lines, stage1_path

    world = quiz_world(record)
    if world is None or not world.summary:
        return ""
    path = stage1_path(world.summary, stage1_from_record(record))
    won = [t.success for t in record.tasks]
    lines = [ascii_map(world.summary, path), ""]
    lines += path_lines(world.summary, path, [t.goal for t in world.tasks], won)
    return "\n".join(lines)


def maps_section(episodes: Sequence[ReportEpisode], limit: int = MAX_MAPS) -> ReportSection:
    """Text maps: the first episode of each agent x difficulty; episodes whose map and path
    are identical share one map; at most ``limit`` maps."""
    from exploreval.suites.task2quiz._map import LEGEND

    maps: list[tuple[list[ReportEpisode], str]] = []
    skipped = 0
    for e in pick_map_episodes(episodes):
        text = world_map_text(e.record)
        same = next((m for m in maps if m[1] == text), None)
        if same is not None:
            same[0].append(e)
        elif len(maps) < limit:
            maps.append(([e], text))
        else:
            skipped += 1
    lines = [
        "Each world as room boxes on its grid (north up) with the agent's Stage-1 path, for the "
        "first episode of each agent x difficulty; agents that played the same world along the "
        f"same path share a map. {LEGEND}. Under the map, each task's rooms in visit order "
        "(every task restarts in the start room). The links open the episodes in the viewer.",
    ]
    if skipped:
        lines += ["", f"{len(maps)} maps shown, {skipped} more agent x difficulty maps left out."]
    for group, text in maps:
        e = group[0]
        won = [t.success for t in e.record.tasks]
        lines += [
            "",
            f"#### {e.difficulty} seed {e.record.seed}: {' = '.join(g.agent for g in group)}",
            "",
        ]
        for g in group:
            eus = ratio(sum(a["correct"] for a in g.answers), len(g.answers))
            lines.append(
                f"- {g.agent}: {episode_link(g.record.run_id, g.record.episode_id, 'open in viewer')}"
                f", tasks won {sum(t.success for t in g.record.tasks)}/{len(won)}, EUS "
                f"{fmt_rate(eus)} ({len(g.answers)} questions)"
            )
        lines += ["", "```", text, "```"]
    return ReportSection(title="Task2Quiz: world maps and Stage-1 paths", markdown="\n".join(lines))


def _finish_panels(fig: Any, axes: Any, used: int, ylabel: str, title: str, path: Path) -> Path:
    """A panel grid's common end: y labels on the first column, unused panels hidden, one legend
    on the title line (from the first panel), written atomically."""
    import matplotlib.pyplot as plt

    for ax in axes[:, 0]:
        ax.set_ylabel(ylabel, fontsize=8)
    for ax in list(axes.flat)[used:]:
        ax.set_visible(False)
    from exploreval.report import text_collisions

    handles, labels = axes.flat[0].get_legend_handles_labels()
    legend = fig.legend(
        handles, labels, loc="upper right", bbox_to_anchor=(0.995, 1.0), ncol=2, fontsize=8,
        frameon=False,
    )  # fmt: skip
    fig.suptitle(title, y=0.995, fontsize=10, x=0.01, ha="left")
    fig.tight_layout()  # leaves room for the suptitle; the legend sits on its line
    if text_collisions(fig):  # a narrow figure (one panel): the legend goes below the panels
        legend.remove()
        legend = fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 0.0),
                            ncol=2, fontsize=8, frameon=False)  # fmt: skip
    save_figure(fig, path, dpi=110, bbox_inches="tight", bbox_extra_artists=[legend])
    plt.close(fig)
    return path
