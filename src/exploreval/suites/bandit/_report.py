"""Report plugin: the paper's summary table and Figures 1, 3, 8 and 9 for every instance.

Reference baselines (TS, UCB, Greedy and the ε-Greedy sweep) are simulated with the
vectorised batch simulation on the same instance, 1,000 replicates with a fixed seed, as
the paper compares LLM runs against 1,000 baseline replicates. They are reference
columns, not a re-run of the recorded episodes.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from exploreval.core import EpisodeRecord
from exploreval.report import (
    ReportSection,
    figure_legend_below,
    legend_outside,
    merge_identical_series,
    save_figure,
)
from exploreval.store import ChainedRecords, LazyRecords
from exploreval.suites.bandit._instance import BanditInstance
from exploreval.suites.bandit._simulate import PAPER_BASELINES, epsilon_curve, simulate
from exploreval.suites.bandit.stats import (
    BanditEpisode,
    BanditTrajectories,
    bandit_episode,
    bandit_episodes_from_steps,
    best_arm_counts,
    best_arm_fraction_curves,
    figure4_markdown,
    group_episodes,
    min_frac_curve,
    optimal_reward,
    suffix_failure_freq_curve,
    summary_frame,
    time_averaged_reward_curve,
)

REFERENCE_REPLICATES = 1000
REFERENCE_SEED = 0
MAX_TRACE_AGENTS = 12
MAX_DETAIL_AGENTS = 8
MAX_LEGEND_AGENTS = 12
TRACES_PER_AGENT = 4
MAX_CURVES_PER_PANEL = 40
BASELINE_COLOURS = {"TS": "tab:orange", "UCB": "tab:green", "Greedy": "tab:red"}


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower() or "instance"


def _instance_for(truth: dict[str, Any], horizon: int) -> BanditInstance:
    means = truth.get("canonical_means") or sorted(truth["means"], reverse=True)
    gap = truth.get("gap")
    return BanditInstance(
        means=tuple(float(m) for m in means),
        horizon=horizon,
        gap=None if gap is None else float(gap),
    )


def _colours(names: Sequence[str]) -> dict[str, Any]:
    from matplotlib import colormaps

    cmap = colormaps["tab10" if len(names) <= 10 else "tab20"]
    palette = [c for i, c in enumerate(cmap.colors) if i not in (1, 2, 3)] or list(cmap.colors)  # type: ignore[attr-defined]
    return {n: palette[i % len(palette)] for i, n in enumerate(names)}


@dataclass(frozen=True)
class _Replicate:
    """Who a Figure 8 panel is (what its link needs), without the record."""

    seed: int
    repeat: int
    run_id: str
    episode_id: str
    agent: str
    steps: int
    instance: str


def _from_step_columns(
    records: Sequence[EpisodeRecord],
) -> list[tuple[BanditEpisode, dict[str, Any]]] | None:
    """The bandit episodes of ``records`` from their runs' step columns when the records are a
    run's (``LazyRecords``, or several runs'), else None (then the records are read)."""
    runs = list(records.parts) if isinstance(records, ChainedRecords) else [records]
    if not runs or not all(isinstance(p, LazyRecords) for p in runs):
        return None
    out: list[tuple[BanditEpisode, dict[str, Any]]] = []
    for part in runs:
        assert isinstance(part, LazyRecords)
        table = part.step_table(["info_arm", "reward", "valid"])
        episodes = part.episode_table(
            ["run_id", "episode_id", "agent", "seed", "repeat", "ground_truth"]
        )
        if table is None or episodes is None or episodes.num_rows != len(part):
            return None
        try:
            pairs = bandit_episodes_from_steps(table, episodes)
        except (ValueError, TypeError):
            return None
        rename = part.rename
        for episode, row in pairs:
            if episode.agent in rename:
                episode = dataclasses.replace(episode, agent=rename[episode.agent])
            out.append((episode, row))
    return out


def bandit_report(
    records: Sequence[EpisodeRecord], rows: pd.DataFrame, out_dir: Path
) -> list[ReportSection]:
    episodes: list[BanditEpisode] = []
    truths: dict[str, dict[str, Any]] = {}
    who: list[_Replicate] = []
    from_columns = _from_step_columns(records)
    if from_columns is not None:  # the arrays straight from the run's step columns
        for episode, row in from_columns:
            episodes.append(episode)
            truths.setdefault(episode.instance, row["ground_truth"])
            who.append(
                _Replicate(
                    episode.seed, episode.repeat, str(row["run_id"]), str(row["episode_id"]),
                    episode.agent, int(row["steps"]), episode.instance,
                )
            )  # fmt: skip
    else:  # records held in memory: one pass, each kept as its arrays and a few identifiers
        for record in records:
            made = bandit_episode(record)
            if made is None:
                continue
            episodes.append(made)
            truths.setdefault(made.instance, record.ground_truth)
            who.append(
                _Replicate(
                    record.seed, record.repeat, record.run_id, record.episode_id,
                    record.agent.name, len(record.steps), made.instance,
                )
            )  # fmt: skip
    groups = group_episodes(episodes)
    if not groups:
        return []
    by_instance: dict[str, dict[str, BanditTrajectories]] = {}
    for (inst, agent), traj in groups.items():
        by_instance.setdefault(inst, {})[agent] = traj
    sections: list[ReportSection] = []
    for inst, agents in by_instance.items():
        horizon = next(iter(agents.values())).horizon
        base = inst.split(" [")[0]
        instance = _instance_for(truths[base], horizon)
        refs = {
            p.label: simulate(
                p, instance, REFERENCE_REPLICATES, np.random.default_rng([REFERENCE_SEED, i])
            )
            for i, p in enumerate(PAPER_BASELINES)
        }
        replicates = {
            agent: sorted(
                (
                    w
                    for w in who
                    if w.instance == base and w.agent == agent and w.steps == traj.horizon
                ),
                key=lambda w: (w.seed, w.repeat),
            )  # fmt: skip
            for agent, traj in agents.items()
        }
        fails = _fails(rows, replicates)
        sections.extend(
            _instance_sections(inst, instance, agents, refs, out_dir, replicates, fails)
        )
    return sections


def _fails(rows: pd.DataFrame, replicates: dict[str, list[_Replicate]]) -> dict[str, int]:
    """Figure 13's "fails" row: per agent, its episodes on this instance's presets that did not
    complete (errored, or ended before the horizon); 0 = every replicate completed."""
    needed = {"episode_id", "agent", "preset", "family"}
    if rows.empty or not needed <= set(rows.columns):
        return {agent: 0 for agent in replicates}
    bandit = rows[rows["family"] == "bandit"]
    out: dict[str, int] = {}
    for agent, done in replicates.items():
        ids = {w.episode_id for w in done}
        mine = bandit[bandit["agent"] == agent]
        presets = set(mine.loc[mine["episode_id"].isin(ids), "preset"])
        others = mine[mine["preset"].isin(presets) & ~mine["episode_id"].isin(ids)]
        out[agent] = int(len(others))
    return out


#: One line per row of the Figure 4 table and per column of the reward table (Section 3.3).
ROW_DEFINITIONS = (
    "- **MedianReward**: the median over replicates of the time-averaged reward, rescaled so "
    "that 0 is the worst arm's mean and 1 the best arm's (footnote 10: below 0 is worse than "
    "always pulling the worst arm).\n"
    "- **SuffFailFreq(T/2)**: the share of replicates that never pull a best arm in the second "
    "half of the rounds (an exploration failure).\n"
    "- **K\\*MinFrac**: K times the smallest share of rounds any arm got, 0 to 1 (near 0: some "
    "arm was all but never tried; 1: uniform).\n"
    "- **GreedyFrac**: the share of rounds that pulled an arm with the best average so far (an "
    "exploitation measure).\n"
    "- `best_arm_fraction`: share of rounds that pulled a best arm; `least_frac`: share that "
    "pulled a least-pulled-so-far arm; `pseudo_regret`: T × best mean − the sum of the pulled "
    "arms' means; `mean_reward`: reward per round, not rescaled. An episode's `success` is a "
    "best arm among its most-pulled arms."
)


def _panel_links(
    agents: dict[str, BanditTrajectories], replicates: dict[str, list[_Replicate]]
) -> list[str]:
    """The episodes behind Figure 8's panels (``agent #r``), each with a viewer link."""
    from exploreval.report import episode_link

    lines = ["| Figure 8 panel | seed | repeat | episode |", "|---|---|---|---|"]
    for name, traj in list(agents.items())[:MAX_TRACE_AGENTS]:
        for r in range(min(TRACES_PER_AGENT, traj.replicates)):
            records = replicates.get(name, [])
            if r >= len(records):
                continue
            record = records[r]
            lines.append(
                f"| {name} #{r} | {record.seed} | {record.repeat} | "
                f"{episode_link(record.run_id, record.episode_id)} |"
            )
    return lines if len(lines) > 2 else []


def _instance_sections(
    inst: str,
    instance: BanditInstance,
    agents: dict[str, BanditTrajectories],
    refs: dict[str, BanditTrajectories],
    out_dir: Path,
    replicates: dict[str, list[_Replicate]] | None = None,
    fails: dict[str, int] | None = None,
) -> list[ReportSection]:
    slug = _slug(inst)
    ref_groups = {(inst, f"{name} (sim)"): traj for name, traj in refs.items()}
    run_groups = {(inst, name): traj for name, traj in agents.items()}
    frame = summary_frame({**ref_groups, **run_groups})
    table = figure4_markdown(frame, fails if fails is not None else {})
    extra_cols = [
        "agent",
        "replicates",
        "mean_reward",
        "pseudo_regret",
        "best_arm_fraction",
        "least_frac",
        "invalid_rate",
    ]
    extra = frame[extra_cols].copy()
    lines = ["| " + " | ".join(extra_cols) + " |", "|" + "---|" * len(extra_cols)]
    for row in extra.itertuples(index=False):
        cells = [str(row[0]), str(int(row[1]))] + [
            "n/a" if pd.isna(v) else f"{float(v):.3f}" for v in row[2:]
        ]
        lines.append("| " + " | ".join(cells) + " |")
    colours = _colours(list(agents))
    detail = dict(list(agents.items())[:MAX_DETAIL_AGENTS])
    files = [
        _figure3(slug, inst, instance, frame, refs, out_dir, colours, list(agents)),
        _figure1(slug, inst, detail, refs, out_dir, colours),
        _figure1(slug, inst, detail, refs, out_dir, colours, uniform=True),
        _figure8(slug, inst, agents, refs, out_dir),
        _figure9(slug, inst, agents, refs, out_dir),
    ]
    notes = []
    if len(agents) > MAX_DETAIL_AGENTS:
        notes.append(f"Figure 1 shows the first {MAX_DETAIL_AGENTS} agents")
    if len(agents) > MAX_TRACE_AGENTS:
        notes.append(f"Figures 8 and 9 the first {MAX_TRACE_AGENTS}")
    note = f" ({'; '.join(notes)}; every agent is in the tables and Figure 3)" if notes else ""
    markdown = (
        f"Summary table in the layout of the paper's Figure 4. Columns marked (sim) are the "
        f"baselines simulated on this instance ({REFERENCE_REPLICATES} replicates, seed "
        f"{REFERENCE_SEED}); the others are this run's agents.\n\n{table}\n\n"
        + ROW_DEFINITIONS
        + "\n- **fails** (Figure 13): the agent's episodes on this instance that did not "
        "complete (errored, or ended before the horizon); 0 means every replicate completed, "
        "which the paper's row marks. Simulated baselines never fail."
        + "\n\nReward, regret and validity:\n\n"
        + "\n".join(lines)
        + "\n\n"
        "Figures: SuffFailFreq(T/2) vs K·MinFrac(T) with the ε-Greedy curve (Figure 3); "
        "best-arm plays, SuffFailFreq(t) and time-averaged reward (Figure 1); the same with "
        "K·MinFrac(t) in the middle, where a uniform-like failure stays high (Figure 6); arm traces "
        f"(Figure 8); per-replicate fraction of best-arm pulls (Figure 9){note}."
    )
    links = _panel_links(agents, replicates or {})
    if links:
        markdown += "\n\nThe episodes of Figure 8's panels:\n\n" + "\n".join(links)
    return [ReportSection(title=f"Bandit: {inst}", markdown=markdown, files=files)]


#: A prompt design's code in an agent's name (``model/BNRN0/...``): its first letter is the
#: scenario, B buttons or A advertisements (Section 2).
_DESIGN = re.compile(r"(?<![A-Za-z0-9])([AB])[NS][RS][NC][01D](?![A-Za-z0-9])")
SCENARIOS = {"B": "Buttons", "A": "Advertisements"}


def scenario_of(agent: str) -> str | None:
    """``Buttons`` / ``Advertisements`` for an agent named with a prompt design; else None."""
    match = _DESIGN.search(agent)
    return SCENARIOS[match.group(1)] if match else None


def _figure3(
    slug: str,
    inst: str,
    instance: BanditInstance,
    frame: pd.DataFrame,
    refs: dict[str, BanditTrajectories],
    out_dir: Path,
    colours: dict[str, Any],
    agent_names: list[str],
) -> Path:
    """Figure 3; when the run holds both scenarios, Figure 12's layout: one panel each (the
    baselines, the eps-Greedy curve and agents of no scenario in every panel)."""
    curve = epsilon_curve(instance, REFERENCE_REPLICATES, REFERENCE_SEED)
    scenarios = {name: scenario_of(name) for name in agent_names}
    present = [v for v in SCENARIOS.values() if v in scenarios.values()]
    panels: list[tuple[str, list[str]]] = [(inst, agent_names)]
    if len(present) > 1:
        panels = [
            (f"{scenario}, {inst}", [n for n in agent_names if scenarios[n] in (scenario, None)])
            for scenario in present
        ]
    fig = Figure(figsize=(8.5 * len(panels), 5.5), layout="constrained")
    axes = fig.subplots(1, len(panels), squeeze=False)[0]
    for ax, (title, names) in zip(axes, panels, strict=True):
        _scatter_panel(ax, title, frame, curve, colours, names)
    path = out_dir / f"bandit_{slug}_fig3_scatter.png"
    save_figure(fig, path)
    return path


def _scatter_panel(
    ax: Any,
    title: str,
    frame: pd.DataFrame,
    curve: list[dict[str, Any]],
    colours: dict[str, Any],
    agent_names: list[str],
) -> None:
    xs = [row["suff_fail_freq_half"] for row in curve]
    ys = [row["k_min_frac"] for row in curve]
    ax.plot(xs, ys, "-o", color="0.5", ms=3, lw=1, label="eps-Greedy", zorder=1)
    for row, ha in ((curve[0], "left"), (curve[-1], "right")):
        ax.annotate(
            f"eps={row['epsilon']:g}",
            (row["suff_fail_freq_half"], row["k_min_frac"]),
            textcoords="offset points",
            xytext=(4 if ha == "left" else -4, 4),
            ha=ha,
            fontsize=8,
            color="0.35",
            zorder=6,  # above the baselines' and agents' markers, on a pale ground
            bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.8},
        )
    for _, point in frame.iterrows():
        agent = str(point["agent"])
        base = agent.removesuffix(" (sim)")
        if base in BASELINE_COLOURS and agent.endswith("(sim)"):
            ax.scatter(
                point["suff_fail_freq_half"],
                point["k_min_frac"],
                marker="s",
                s=60,
                color=BASELINE_COLOURS[base],
                label=f"{base} (simulated)",
                zorder=3,
                edgecolors="black",
            )
    crowded = len(agent_names) > MAX_LEGEND_AGENTS
    names_at: dict[tuple[float, float], list[str]] = {}
    for _, point in frame.iterrows():
        agent = str(point["agent"])
        if agent in colours and agent in agent_names:
            xy = (float(point["suff_fail_freq_half"]), float(point["k_min_frac"]))
            ax.scatter(
                *xy,
                marker="o",
                s=30 if crowded else 45,
                color="tab:blue" if crowded else colours[agent],
                label=None if crowded else f"{agent} (n={int(point['replicates'])})",
                zorder=4,
                edgecolors="black",
                linewidths=0.5,
            )
            names_at.setdefault((round(xy[0], 4), round(xy[1], 4)), []).append(agent)
    if crowded:  # too many agents for a legend: name the dots, several per line
        for xy, names in names_at.items():
            lines = [", ".join(names[i : i + 3]) for i in range(0, len(names), 3)]
            ax.annotate(
                "\n".join(lines), xy, textcoords="offset points", xytext=(4, 3), fontsize=5.5,
                zorder=6, bbox={"boxstyle": "round,pad=0.1", "fc": "white", "ec": "none",
                                "alpha": 0.8},
            )  # fmt: skip
    ax.set_xlim(-0.03, 1.03)
    ax.set_ylim(-0.03, 1.03)
    ax.set_xlabel("SuffFailFreq(T/2) (exploration fail)")
    ax.set_ylabel("K * MinFrac(T) (exploitation fail)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    legend_outside(ax, ncol=1 if len(agent_names) < 8 else 2)
    if crowded:
        ax.set_title(f"{title} ({len(agent_names)} agents)")


def _figure1(
    slug: str,
    inst: str,
    agents: dict[str, BanditTrajectories],
    refs: dict[str, BanditTrajectories],
    out_dir: Path,
    colours: dict[str, Any],
    *,
    uniform: bool = False,
) -> Path:
    """Figure 1 (best-arm plays, SuffFailFreq(t), reward), or with ``uniform`` Figure 6: the
    paper's view of uniform-like failures, K·MinFrac(t) in the middle instead of the plays."""
    fig = Figure(figsize=(15, 4.9), layout="constrained")
    if uniform:
        ax_sf, ax_hist, ax_rew = fig.subplots(1, 3)  # the paper's order: SF, K·MinFrac, reward
    else:
        ax_hist, ax_sf, ax_rew = fig.subplots(1, 3)
    horizon = next(iter(agents.values())).horizon
    t = np.arange(1, horizon + 1)
    # The paper's suffix-failure panels stop at 0.8 T: near T the statistic only says
    # whether the last few rounds pulled the best arm.
    sf_end = max(1, int(0.8 * horizon))
    bins = np.linspace(0, horizon, min(horizon, 25) + 1)
    curves = {
        (kind, name): (
            traj.n_arms * min_frac_curve(traj)
            if uniform
            else np.sort(best_arm_counts(traj)).astype(float),
            suffix_failure_freq_curve(traj)[:sf_end],
            time_averaged_reward_curve(traj),
        )
        for kind, group in (("ref", refs), ("agent", agents))
        for name, traj in group.items()
    }
    # agents whose three panels are identical are drawn once, with a joint label
    merged = merge_identical_series(
        [
            (
                name,
                np.concatenate([curves["agent", name][0], curves["agent", name][1]]),
                curves["agent", name][2],
            )
            for name in agents
        ]
    )
    # the simulated baselines say so in their label: "TS" beside the run's own "ts" agent told
    # them apart only by letter case
    series: list[tuple[str, tuple[str, str], Any, str]] = [
        (f"{name} (simulated)", ("ref", name), BASELINE_COLOURS[name], "--") for name in refs
    ] + [
        (label, ("agent", label.split(" = ")[0]), colours[label.split(" = ")[0]], "-")
        for label, _, _ in merged
    ]
    for label, key, colour, style in series:
        counts, sf_curve, reward_curve = curves[key]
        if uniform:  # K·MinFrac(t): a uniform-like failure keeps it high over time
            ax_hist.plot(t, counts, color=colour, ls=style, lw=1.6, label=label)
        else:
            weights = np.full(counts.shape, 1.0 / len(counts))
            ax_hist.hist(
                counts,
                bins=bins,
                weights=weights,
                histtype="step",
                color=colour,
                ls=style,
                lw=1.6,
                label=label,
            )
        ax_sf.plot(t[:sf_end], sf_curve, color=colour, ls=style, lw=1.6, label=label)
        ax_rew.plot(t, reward_curve, color=colour, ls=style, lw=1.6, label=label)
    opt = optimal_reward(next(iter(refs.values())))
    ax_rew.axhline(opt, color="black", ls=":", lw=1.2, label="OPT")
    if uniform:
        ax_hist.set_xlabel("Time step (t)")
        ax_hist.set_ylabel("K · MinFrac(t)")
        ax_hist.set_ylim(-0.02, 1.02)
    else:
        ax_hist.set_xlabel(f"Plays of the best arm in rounds [1,{horizon}]")
        ax_hist.set_ylabel("Fraction of replicates")
    ax_sf.set_xlabel("Time step (t)")
    ax_sf.set_ylabel("Suffix Failure Frequency @ t")
    ax_sf.set_ylim(-0.02, 1.02)
    ax_rew.set_xlabel("Time step (t)")
    ax_rew.set_ylabel("Time-averaged reward")
    for ax in (ax_hist, ax_sf, ax_rew):
        ax.grid(alpha=0.3)
    # one legend for the three panels, below them: inside any panel it covered curves
    figure_legend_below(fig, ax_rew, ncol=6)
    fig.suptitle(f"{inst}: baselines dashed ({REFERENCE_REPLICATES} simulated replicates)")
    path = out_dir / f"bandit_{slug}_{'fig6_uniform' if uniform else 'fig1_detail'}.png"
    save_figure(fig, path, dpi=100)
    return path


def _round_ticks(horizon: int) -> list[int]:
    return [0, horizon // 2, horizon]


def _grid_spacing(fig: Figure, rows: int, left: float = 0.02) -> None:
    """Fixed margins: ``tight_layout`` costs seconds on figures with dozens of panels."""
    height = fig.get_figheight()
    fig.subplots_adjust(
        left=left,
        right=0.99,
        bottom=0.35 / height,
        top=1 - 0.55 / height,
        wspace=0.08,
        # room for one title and one row of tick labels between panels
        hspace=0.45 / max((height - 0.9) / rows - 0.45, 0.3),
    )


def _best_first_rows(traj: BanditTrajectories, r: int) -> np.ndarray[Any, Any]:
    """Arm position -> row on the trace plot: best arm on top, then by mean."""
    order = np.argsort(-traj.means[r], kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(traj.n_arms)
    return rank


def _figure8(
    slug: str,
    inst: str,
    agents: dict[str, BanditTrajectories],
    refs: dict[str, BanditTrajectories],
    out_dir: Path,
) -> Path:
    panels: list[tuple[str, BanditTrajectories, int, Any]] = []
    shown = list(agents.items())[:MAX_TRACE_AGENTS]
    for name, traj in shown:
        for r in range(min(TRACES_PER_AGENT, traj.replicates)):
            panels.append((f"{name} #{r}", traj, r, "0.3"))
    for name, traj in refs.items():
        panels.append((f"{name} (sim)", traj, 0, BASELINE_COLOURS[name]))
    cols = TRACES_PER_AGENT
    rows = int(np.ceil(len(panels) / cols))
    fig = Figure(figsize=(3.2 * cols, 1.6 * rows + 0.6))
    axes = np.atleast_1d(fig.subplots(rows, cols, squeeze=False)).ravel()
    for ax, (title, traj, r, edge) in zip(axes, panels, strict=False):
        rank = _best_first_rows(traj, r)
        arms = traj.arms[r]
        ok = arms >= 0
        k = traj.n_arms
        ys = np.where(ok, k - 1 - rank[np.where(ok, arms, 0)], -1)
        t = np.arange(1, traj.horizon + 1)
        ax.axhspan(k - 1.5, k - 0.5, color="tab:blue", alpha=0.15)
        ax.scatter(t[ok], ys[ok], s=4, color="black", marker="s")
        if (~ok).any():
            ax.scatter(t[~ok], np.full((~ok).sum(), -0.6), s=6, color="tab:red", marker="x")
        ax.set_ylim(-1, k)
        ax.set_xlim(0, traj.horizon + 1)
        ax.set_yticks([])
        ax.set_xticks(_round_ticks(traj.horizon))
        ax.set_title(title, fontsize=8, pad=2)
        ax.tick_params(labelsize=6, length=2)
        for spine in ax.spines.values():
            spine.set_edgecolor(edge)
            spine.set_linewidth(1.5 if edge != "0.3" else 0.8)
    for ax in axes[len(panels) :]:
        ax.set_visible(False)
    for index, ax in enumerate(axes[: len(panels)]):
        if index % cols == 0:
            ax.set_ylabel("arm (best on top)", fontsize=7)
        if index >= len(panels) - cols:
            ax.set_xlabel("round t", fontsize=7)
    fig.suptitle(
        f"{inst}: arm chosen per round (best arm = top row, shaded; red x = invalid)",
        fontsize=10,
        # pinned in inches: at the default y the title sinks into tall grids' first row
        y=1 - 0.08 / fig.get_figheight(),
        va="top",
    )
    _grid_spacing(fig, rows, left=0.05)
    path = out_dir / f"bandit_{slug}_fig8_traces.png"
    save_figure(fig, path, dpi=100)
    return path


def _figure9(
    slug: str,
    inst: str,
    agents: dict[str, BanditTrajectories],
    refs: dict[str, BanditTrajectories],
    out_dir: Path,
) -> Path:
    panels = list(agents.items())[:MAX_TRACE_AGENTS] + [(f"{n} (sim)", t) for n, t in refs.items()]
    cols = min(5, len(panels))
    rows = int(np.ceil(len(panels) / cols))
    fig = Figure(figsize=(3.0 * cols, 2.6 * rows + 0.5))
    axes = np.atleast_1d(fig.subplots(rows, cols, squeeze=False, sharey=True)).ravel()
    for ax, (name, traj) in zip(axes, panels, strict=False):
        curves = best_arm_fraction_curves(traj)[:MAX_CURVES_PER_PANEL]
        t = np.arange(1, traj.horizon + 1)
        for curve in curves:
            ax.plot(t, curve, lw=0.7, alpha=0.6)
        ax.set_title(name, fontsize=9, pad=2)
        ax.set_ylim(-0.02, 1.02)
        ax.set_xlim(0, traj.horizon + 1)
        ax.set_xticks(_round_ticks(traj.horizon))
        ax.set_yticks([0.0, 0.5, 1.0])
        ax.grid(alpha=0.3)
        ax.tick_params(labelsize=7, length=2)
    for ax in axes[len(panels) :]:
        ax.set_visible(False)
    axes[0].set_ylabel("Fraction of pulls of the best arm")
    fig.suptitle(
        f"{inst}: fraction of rounds in [1, t] that pulled the best arm, per replicate",
        fontsize=10,
        y=1 - 0.08 / fig.get_figheight(),
        va="top",
    )
    for index, ax in enumerate(axes[: len(panels)]):
        if index >= len(panels) - cols:
            ax.set_xlabel("round t", fontsize=7)
    _grid_spacing(fig, rows, left=0.06)
    path = out_dir / f"bandit_{slug}_fig9_best_arm.png"
    save_figure(fig, path, dpi=100)
    return path
