"""Bandit statistics of Krishnamurthy et al. (2024), as pure functions of stored records.

Typical use::

    from exploreval.suites.bandit import stats as bandit
    groups = bandit.group_records(records)           # {(instance, agent): trajectories}
    table = bandit.summary_frame(groups)             # Figure 4 statistics, one row per agent
    bandit.suffix_failure_freq(groups[key], t=50)    # any statistic at any round

Every statistic is documented in ``docs/bandit.md`` (definitions, edge cases, choices).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from exploreval.core import EpisodeRecord
from exploreval.metrics import Scalar, step_infos
from exploreval.suites.bandit._info import BanditStepInfo
from exploreval.suites.bandit._stats import (
    MEAN_TOL,
    TABLE_LABELS,
    TABLE_STATS,
    BanditTrajectories,
    best_arm_counts,
    best_arm_fraction_curves,
    best_arm_pulls,
    cumulative_reward,
    greedy_frac,
    greedy_frac_per_replicate,
    half_horizon,
    k_min_frac,
    least_frac,
    least_frac_per_replicate,
    median_reward,
    min_frac,
    min_frac_curve,
    min_frac_curves,
    optimal_reward,
    pseudo_regret,
    realized_regret,
    rescaled_reward,
    round_classes_of_row,
    suffix_failure_freq,
    suffix_failure_freq_curve,
    suffix_failures,
    summarize,
    time_averaged_reward,
    time_averaged_reward_curve,
)

__all__ = [
    "TABLE_LABELS",
    "TABLE_STATS",
    "BanditTrajectories",
    "best_arm_counts",
    "best_arm_fraction_curves",
    "best_arm_pulls",
    "cumulative_reward",
    "curves_frame",
    "episode_bandit_metrics",
    "figure4_markdown",
    "greedy_frac",
    "greedy_frac_per_replicate",
    "group_records",
    "half_horizon",
    "instance_label",
    "k_min_frac",
    "least_frac",
    "least_frac_per_replicate",
    "median_reward",
    "one_episode_metrics",
    "min_frac",
    "min_frac_curve",
    "min_frac_curves",
    "optimal_reward",
    "pseudo_regret",
    "realized_regret",
    "rescaled_reward",
    "run_bandit_tables",
    "suffix_failure_freq",
    "suffix_failure_freq_curve",
    "suffix_failures",
    "summarize",
    "summary_frame",
    "time_averaged_reward",
    "time_averaged_reward_curve",
    "trajectories_from_records",
]


# -- records -> arrays -------------------------------------------------------------------------
def _truth(record: EpisodeRecord) -> tuple[list[float], str]:
    return truth_means(record.ground_truth, record.episode_id)


def truth_means(truth: Mapping[str, Any], episode_id: str) -> tuple[list[float], str]:
    """(arm means, instance label or '') of a bandit episode's ground truth."""
    if "means" not in truth:
        raise ValueError(
            f"episode {episode_id}: ground truth has no 'means'; is it a bandit episode?"
        )
    return [float(m) for m in truth["means"]], str(truth.get("instance", ""))


def instance_label(record: EpisodeRecord) -> str:
    """The instance a record belongs to (``K=5, Δ=0.2, T=100``), from its ground truth."""
    return label_of(*_truth(record))


def label_of(means: Sequence[float], label: str) -> str:
    if label:
        return label
    return f"means=[{','.join(f'{m:g}' for m in sorted(means, reverse=True))}]"


def trajectories_from_records(records: Sequence[EpisodeRecord]) -> BanditTrajectories:
    """Stack episodes of one instance into (replicates, rounds) arrays.

    Arm positions come from the typed ``BanditStepInfo.arm`` (``None`` -> ``-1``, an invalid round
    that pulled nothing) and rewards from ``step.reward``. All records must have the same
    number of arms and of steps.
    """
    if not records:
        raise ValueError("no records to stack")
    arms: list[list[int]] = []
    rewards: list[list[float]] = []
    means: list[list[float]] = []
    invalid: list[list[bool]] = []
    for record in records:
        m, _ = _truth(record)
        arms.append([-1 if i.arm is None else i.arm for i in step_infos(record, BanditStepInfo)])
        rewards.append([float(s.reward) for s in record.steps])
        invalid.append([not s.valid for s in record.steps])
        means.append(m)
    lengths = {len(a) for a in arms}
    widths = {len(m) for m in means}
    if len(lengths) != 1 or len(widths) != 1:
        raise ValueError(
            f"records mix horizons {sorted(lengths)} or arm counts {sorted(widths)}; "
            "group them first (group_records)"
        )
    if lengths == {0}:
        raise ValueError("records have no steps")
    return BanditTrajectories(
        arms=np.asarray(arms, dtype=np.int64),
        rewards=np.asarray(rewards, dtype=np.float64),
        means=np.asarray(means, dtype=np.float64),
        invalid=np.asarray(invalid, dtype=bool) | (np.asarray(arms) < 0),
    )


@dataclass(frozen=True, slots=True)
class BanditEpisode:
    """What the bandit run tables keep of one episode (the map side of the run metric)."""

    instance: str
    agent: str
    seed: int
    repeat: int
    full_length: bool
    arms: np.ndarray
    rewards: np.ndarray
    invalid: np.ndarray
    means: np.ndarray


def _small_ints(values: Any) -> np.ndarray:
    """Arm positions in the smallest integer type that holds them (a million episodes' arrays
    are kept until the tables are made); widened again when stacked."""
    array = np.asarray(values, dtype=np.int64)
    if array.size == 0 or (array.min() >= -128 and array.max() <= 127):
        return array.astype(np.int8)
    return array


def bandit_episode(record: EpisodeRecord) -> BanditEpisode | None:
    """An ``ok`` bandit episode with steps, kept as arrays; None otherwise."""
    if record.status != "ok" or record.family != "bandit" or not record.steps:
        return None
    means, label = _truth(record)
    horizon = record.ground_truth.get("horizon")
    return BanditEpisode(
        instance=label_of(means, label),
        agent=record.agent.name,
        seed=record.seed,
        repeat=record.repeat,
        full_length=horizon is None or int(horizon) == len(record.steps),
        arms=_small_ints(
            [-1 if i.arm is None else i.arm for i in step_infos(record, BanditStepInfo)]
        ),
        rewards=np.array([float(s.reward) for s in record.steps], dtype=np.float64),
        invalid=np.array([not s.valid for s in record.steps], dtype=bool),
        means=np.asarray(means, dtype=np.float64),
    )


def bandit_episodes_from_steps(
    table: Any, episodes: Any
) -> list[tuple[BanditEpisode, dict[str, Any]]]:
    """``bandit_episode`` of each episode of a step table (``LazyRecords.step_table`` with
    ``info_arm, reward, valid``) and its episode table (``LazyRecords.episode_table`` with
    ``run_id, episode_id, agent, seed, repeat, ground_truth``), each with its identifiers (the
    ground truth only with an instance's first episode): the arrays straight from the step
    columns, no record parsed. The same summaries as from the records (tested)."""
    import orjson
    import pyarrow as pa

    if table is None or table.num_rows == 0 or episodes is None:
        return []
    if not pa.types.is_integer(table.column("info_arm").type) and table.column(
        "info_arm"
    ).null_count != len(table):
        raise ValueError("info_arm is not an integer column")
    order = table.column("order").to_numpy()
    starts = np.flatnonzero(np.r_[True, order[1:] != order[:-1]])
    ends = np.r_[starts[1:], order.size]
    arm_column = table.column("info_arm")
    arms_all = arm_column.fill_null(-1).to_numpy().astype(np.int64)
    rewards_all = table.column("reward").to_numpy().astype(np.float64)
    valid_all = table.column("valid").to_numpy(zero_copy_only=False).astype(bool)
    names = ["run_id", "episode_id", "agent", "seed", "repeat", "ground_truth"]
    # the episode table has one row per record, at its ``order``
    firsts = episodes.select(names).take(pa.array(order[starts], pa.int64())).to_pydict()
    out: list[tuple[BanditEpisode, dict[str, Any]]] = []
    seen: set[str] = set()  # an instance's ground truth is kept once, with its first episode
    for index, (start, end) in enumerate(zip(starts, ends, strict=True)):
        row = {name: firsts[name][index] for name in names}
        truth = orjson.loads(row.pop("ground_truth") or "{}")
        means, label = truth_means(truth, str(row["episode_id"]))
        horizon = truth.get("horizon")
        steps = int(end - start)
        episode = BanditEpisode(
            instance=label_of(means, label),
            agent=str(row["agent"]),
            seed=int(row["seed"]),
            repeat=int(row["repeat"] or 0),
            full_length=horizon is None or int(horizon) == steps,
            arms=_small_ints(arms_all[start:end]),
            rewards=rewards_all[start:end].copy(),
            invalid=~valid_all[start:end],
            means=np.asarray(means, dtype=np.float64),
        )
        first = episode.instance not in seen
        seen.add(episode.instance)
        out.append((episode, {**row, "ground_truth": truth if first else None, "steps": steps}))
    return out


def group_records(
    records: Iterable[EpisodeRecord],
) -> dict[tuple[str, str], BanditTrajectories]:
    """``{(instance label, agent name): trajectories}`` for the ``ok`` bandit records.

    Episodes cut short (fewer steps than the horizon in their ground truth, e.g. by
    ``--max-steps``, or than the others of their group) form their own group, labelled
    with their length (``K=5, Δ=0.2, T=100 [40 steps]``): their statistics use the rounds
    actually played (T/2 of 40 steps is 20), which the label must not hide.
    """
    return group_episodes([bandit_episode(r) for r in records])


def group_episodes(
    episodes: Iterable[BanditEpisode | None],
) -> dict[tuple[str, str], BanditTrajectories]:
    """``group_records`` from the episodes' ``bandit_episode`` summaries."""
    buckets: dict[tuple[str, str, int, int], list[BanditEpisode]] = {}
    full_length: dict[tuple[str, str, int, int], bool] = {}
    for episode in episodes:
        if episode is None:
            continue
        key = (episode.instance, episode.agent, len(episode.arms), len(episode.means))
        buckets.setdefault(key, []).append(episode)
        full_length[key] = episode.full_length
    horizons: dict[tuple[str, str], set[int]] = {}
    for inst, agent, steps, _k in buckets:
        horizons.setdefault((inst, agent), set()).add(steps)
    out: dict[tuple[str, str], BanditTrajectories] = {}
    for key, group in sorted(buckets.items()):
        inst, agent, steps, _k = key
        alone = len(horizons[(inst, agent)]) == 1
        label = inst if alone and full_length[key] else f"{inst} [{steps} steps]"
        group.sort(key=lambda e: (e.seed, e.repeat))
        arms = np.stack([e.arms for e in group]).astype(np.int64)
        out[(label, agent)] = BanditTrajectories(
            arms=arms,
            rewards=np.stack([e.rewards for e in group]),
            means=np.stack([e.means for e in group]),
            invalid=np.stack([e.invalid for e in group]) | (arms < 0),
        )
    return out


# -- tables ----------------------------------------------------------------------------------
def summary_frame(groups: Mapping[tuple[str, str], BanditTrajectories]) -> pd.DataFrame:
    """One row per (instance, agent) with the paper's statistics and more (``summarize``)."""
    rows: list[dict[str, Any]] = []
    for (inst, agent), traj in groups.items():
        rows.append({"instance": inst, "agent": agent, **summarize(traj)})
    frame = pd.DataFrame(rows)
    if not frame.empty:
        for column in ("replicates", "horizon", "n_arms"):
            frame[column] = frame[column].astype(int)
    return frame


#: The most agents the paper lays out as columns (Figure 4: 3 baselines and 10 configurations);
#: its longer tables (Figures 14-19, every configuration of a model) put the agents in rows.
MAX_AGENT_COLUMNS = 13


def _cell(stat: str, value: Any) -> str:
    if stat == "replicates":
        return str(int(value))
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return "n/a"
    return f"{float(value):.2f}"


def figure4_markdown(frame: pd.DataFrame, fails: Mapping[str, int] | None = None) -> str:
    """The per-configuration summary table as the paper lays it out: up to
    ``MAX_AGENT_COLUMNS`` agents as columns with the statistics as rows (Figure 4), more as rows
    with the statistics as columns (Figures 14-19); two decimals; with ``fails`` (agent ->
    replicates that did not complete), Figure 13's "fails" row (or column) last."""
    if frame.empty:
        return "_(no bandit episodes)_"
    if len(frame) > MAX_AGENT_COLUMNS:
        stats = (*TABLE_STATS, "replicates")
        heads = [TABLE_LABELS[s] for s in stats] + (["fails"] if fails is not None else [])
        lines = ["| agent | " + " | ".join(heads) + " |", "|---|" + "---:|" * len(heads)]
        for row in frame.to_dict("records"):
            cells = [_cell(s, row[s]) for s in stats]
            if fails is not None:
                cells.append(str(fails.get(str(row["agent"]), 0)))
            lines.append(f"| {row['agent']} | " + " | ".join(cells) + " |")
        return "\n".join(lines)
    agents = [str(a) for a in frame["agent"]]
    lines = ["| | " + " | ".join(agents) + " |", "|---|" + "---:|" * len(agents)]
    for stat in (*TABLE_STATS, "replicates"):
        cells = [_cell(stat, value) for value in frame[stat]]
        lines.append(f"| {TABLE_LABELS[stat]} | " + " | ".join(cells) + " |")
    if fails is not None:
        lines.append("| fails | " + " | ".join(str(fails.get(a, 0)) for a in agents) + " |")
    return "\n".join(lines)


def curves_frame(groups: Mapping[tuple[str, str], BanditTrajectories]) -> pd.DataFrame:
    """Long table of the per-round curves: SuffFailFreq(t), K·MinFrac(t), time-averaged
    reward, fraction of best-arm pulls, for t = 1..T."""
    parts: list[pd.DataFrame] = []
    for (inst, agent), traj in groups.items():
        t = np.arange(1, traj.horizon + 1)
        parts.append(
            pd.DataFrame(
                {
                    "instance": inst,
                    "agent": agent,
                    "t": t,
                    "suff_fail_freq": suffix_failure_freq_curve(traj),
                    "k_min_frac": traj.n_arms * min_frac_curve(traj),
                    "time_averaged_reward": time_averaged_reward_curve(traj),
                    "best_arm_fraction": best_arm_fraction_curves(traj).mean(axis=0),
                }
            )
        )
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


# -- registered metrics ----------------------------------------------------------------------------
def episode_bandit_metrics(record: EpisodeRecord) -> dict[str, Scalar]:
    """Per-episode values whose means (or median) over replicates give the table statistics:
    the statistics of one replicate, each what the (replicates, rounds) statistics give for a
    single row (``one_episode_metrics``; a test holds the two to the same values)."""
    if not record.steps:
        return {}
    means, _ = _truth(record)
    infos = step_infos(record, BanditStepInfo)
    return one_episode_metrics(
        [-1 if i.arm is None else i.arm for i in infos],
        [float(s.reward) for s in record.steps],
        means,
        sum(1 for i in infos if i.fallback),
    )


def one_episode_metrics(
    arms: Sequence[int], rewards: Sequence[float], means: Sequence[float], fallback_rounds: int
) -> dict[str, Scalar]:
    """The episode metrics of one replicate, in plain Python: numpy's per-call cost is most of
    the work on a (1, T) array, and a score makes one per bandit episode. Sums of floats stay in
    numpy (its pairwise summation), so every value is the vectorised statistic's to the bit."""
    horizon, k = len(arms), len(means)
    if k < 2:
        raise ValueError("a bandit needs at least 2 arms")
    if horizon == 0 or any(a >= k or a < -1 for a in arms):
        raise ValueError(f"arms {list(arms)} do not index {k} arm means (-1: no pull)")
    top = max(means)
    best = [m >= top - MEAN_TOL for m in means]
    hits = [a >= 0 and best[a] for a in arms]
    last_best = max((t for t, hit in enumerate(hits, start=1) if hit), default=0)
    pulls = [0] * k
    for arm in arms:
        if arm >= 0:
            pulls[arm] += 1
    greedy, counted, least = round_classes_of_row(arms, rewards, k)
    n_counted, n_valid = sum(counted), sum(1 for a in arms if a >= 0)
    mean_reward = float(np.asarray(rewards, dtype=np.float64).mean())
    span = top - min(means)
    pulled = np.asarray([means[a] if a >= 0 else 0.0 for a in arms], dtype=np.float64)
    return {
        "best_arm_pulls": sum(hits),
        "best_arm_fraction": sum(hits) / horizon,
        "suffix_failure_half": last_best < half_horizon(horizon),
        "k_min_frac": k * (min(pulls) / horizon),
        "greedy_frac": sum(greedy) / n_counted if n_counted else None,
        "least_frac": sum(least) / n_valid if n_valid else None,
        "time_averaged_reward": mean_reward,
        "rescaled_reward": (mean_reward - min(means)) / span if span > MEAN_TOL else None,
        "pseudo_regret": float(horizon * top - pulled.sum()),
        "arms_never_pulled": sum(1 for count in pulls if count == 0),
        "fallback_rounds": fallback_rounds,
    }


def run_bandit_tables(records: Sequence[EpisodeRecord]) -> dict[str, pd.DataFrame]:
    return bandit_tables_from_episodes([bandit_episode(r) for r in records])


def bandit_tables_from_episodes(
    episodes: Sequence[BanditEpisode | None],
) -> dict[str, pd.DataFrame]:
    """The reduce side of the bandit run metric (``bandit_episode`` is the map side)."""
    groups = group_episodes(episodes)
    if not groups:
        return {}
    return {"bandit_summary": summary_frame(groups), "bandit_curves": curves_frame(groups)}


def reward_efficiency(record: EpisodeRecord) -> list[float] | None:
    """TIDE progress of a bandit episode: expected reward of the pulls so far / (t * best mean).

    The env's own ``progress`` is the elapsed share of the horizon, identical for every agent, so
    TIDE's progress AUV uses this instead (docs/tide.md: what AUV means for a bandit).
    """
    means = [float(m) for m in record.ground_truth.get("means", [])]
    if not means or max(means) <= 0:
        return None
    best = max(means)
    total = 0.0
    out: list[float] = []
    for index, info in enumerate(step_infos(record, BanditStepInfo), start=1):
        if info.arm is not None and 0 <= info.arm < len(means):
            total += means[info.arm]
        out.append(total / (index * best))
    return out


def horizon_budget(record: EpisodeRecord) -> int | None:
    """The episode's step budget is the horizon T (TIDE's t_max for bandits)."""
    horizon = record.ground_truth.get("horizon")
    return int(horizon) if isinstance(horizon, int) and horizon > 0 else None
