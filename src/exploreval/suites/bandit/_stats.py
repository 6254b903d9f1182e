"""Vectorised statistics of bandit trajectories (Krishnamurthy et al. 2024, Sections 3.2-3.4).

Everything works on ``BanditTrajectories``: replicate × round arrays of the arm pulled
(display position, ``-1`` when the round was invalid and nothing was pulled) and the
reward, plus each replicate's arm means. Rounds are 1-indexed in the paper's formulas
(``t`` in ``[1, T]``); arrays are 0-indexed, so column ``i`` holds round ``i + 1``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

#: Two arm means closer than this are the same (several best arms are allowed).
MEAN_TOL = 1e-12
#: Empirical means closer than this count as tied for "an arm with a largest average".
TIE_TOL = 1e-12

FloatArray = np.ndarray[Any, np.dtype[np.float64]]
IntArray = np.ndarray[Any, np.dtype[np.int64]]
BoolArray = np.ndarray[Any, np.dtype[np.bool_]]


@dataclass(frozen=True)
class BanditTrajectories:
    """R replicates of a T-round bandit run with K arms.

    ``arms[r, i]``: display position pulled in round ``i + 1`` (``-1`` = none, invalid
    round); ``rewards[r, i]``: the reward (0 for invalid rounds without a fallback pull);
    ``means[r, a]``: the true mean of the arm at position ``a`` in replicate ``r``;
    ``invalid[r, i]``: the env marked round ``i + 1`` invalid (default: no arm was pulled;
    differs when an invalid answer was replaced by a random fallback pull).
    """

    arms: IntArray
    rewards: FloatArray
    means: FloatArray
    invalid: BoolArray | None = None

    def __post_init__(self) -> None:
        arms = np.asarray(self.arms)
        rewards = np.asarray(self.rewards, dtype=np.float64)
        means = np.asarray(self.means, dtype=np.float64)
        if arms.ndim != 2 or rewards.shape != arms.shape:
            raise ValueError(
                f"arms and rewards must both be (replicates, rounds); got {arms.shape} and {rewards.shape}"
            )
        if means.ndim != 2 or means.shape[0] != arms.shape[0]:
            raise ValueError(
                f"means must be (replicates, arms) with {arms.shape[0]} replicates, got {means.shape}"
            )
        if means.shape[1] < 2:
            raise ValueError("a bandit needs at least 2 arms")
        if arms.size and (arms.min() < -1 or arms.max() >= means.shape[1]):
            raise ValueError(
                f"arm indices must be in [-1, {means.shape[1] - 1}], got range [{arms.min()}, {arms.max()}]"
            )
        invalid = arms < 0 if self.invalid is None else np.asarray(self.invalid, dtype=bool)
        if invalid.shape != arms.shape:
            raise ValueError(
                f"invalid must have the shape of arms {arms.shape}, got {invalid.shape}"
            )
        if (arms < 0).any() and not invalid[arms < 0].all():
            raise ValueError("a round that pulled no arm must be marked invalid")
        object.__setattr__(self, "arms", arms.astype(np.int64, copy=False))
        object.__setattr__(self, "rewards", rewards)
        object.__setattr__(self, "means", means)
        object.__setattr__(self, "invalid", invalid)

    @property
    def replicates(self) -> int:
        return int(self.arms.shape[0])

    @property
    def horizon(self) -> int:
        return int(self.arms.shape[1])

    @property
    def n_arms(self) -> int:
        return int(self.means.shape[1])

    @property
    def best_mask(self) -> BoolArray:
        """(R, K): which positions hold a best arm."""
        return np.asarray(self.means >= self.means.max(axis=1, keepdims=True) - MEAN_TOL)

    @property
    def valid(self) -> BoolArray:
        """(R, T): rounds in which an arm was pulled (a fallback pull included)."""
        return np.asarray(self.arms >= 0)

    @property
    def invalid_rounds(self) -> BoolArray:
        """(R, T): rounds the env marked invalid."""
        assert self.invalid is not None  # set in __post_init__
        return self.invalid

    def subset(self, rows: Sequence[int] | IntArray) -> BanditTrajectories:
        idx = np.asarray(rows, dtype=np.int64)
        return BanditTrajectories(
            self.arms[idx], self.rewards[idx], self.means[idx], self.invalid_rounds[idx]
        )

    @classmethod
    def concat(cls, parts: Sequence[BanditTrajectories]) -> BanditTrajectories:
        if not parts:
            raise ValueError("nothing to concatenate")
        return cls(
            np.concatenate([p.arms for p in parts]),
            np.concatenate([p.rewards for p in parts]),
            np.concatenate([p.means for p in parts]),
            np.concatenate([p.invalid_rounds for p in parts]),
        )


def _round_index(tr: BanditTrajectories, t: int) -> int:
    if not (1 <= t <= tr.horizon):
        raise ValueError(f"round t={t} is outside [1, {tr.horizon}]")
    return t


def half_horizon(horizon: int) -> int:
    """The paper's T/2 as a round number: floor(T / 2), at least 1."""
    return max(1, horizon // 2)


# -- best-arm pulls --------------------------------------------------------------------------
def best_arm_pulls(tr: BanditTrajectories) -> BoolArray:
    """(R, T): whether round i + 1 pulled a best arm."""
    safe = np.where(tr.valid, tr.arms, 0)
    hit = np.take_along_axis(tr.best_mask, safe, axis=1)
    return np.asarray(hit & tr.valid)


def best_arm_counts(tr: BanditTrajectories) -> IntArray:
    """(R,): plays of a best arm per replicate (Figure 1, left)."""
    return np.asarray(best_arm_pulls(tr).sum(axis=1), dtype=np.int64)


def best_arm_fraction_curves(tr: BanditTrajectories) -> FloatArray:
    """(R, T): fraction of rounds in [1, t] that pulled a best arm (Figure 9)."""
    t = np.arange(1, tr.horizon + 1)
    return np.asarray(best_arm_pulls(tr).cumsum(axis=1) / t)


def _last_best_round(tr: BanditTrajectories) -> IntArray:
    """(R,): 1-indexed last round that pulled a best arm, 0 if never."""
    hits = best_arm_pulls(tr)
    rounds = np.where(hits, np.arange(1, tr.horizon + 1), 0)
    return np.asarray(rounds.max(axis=1), dtype=np.int64)


# -- suffix failures --------------------------------------------------------------------------
def suffix_failures(tr: BanditTrajectories, t: int) -> BoolArray:
    """(R,): SuffFail(t, R) = 1 if a best arm is never chosen in rounds [t, T]."""
    return np.asarray(_last_best_round(tr) < _round_index(tr, t))


def suffix_failure_freq_curve(tr: BanditTrajectories) -> FloatArray:
    """(T,): element i is SuffFailFreq(i + 1), the fraction of replicates with a suffix
    failure at round i + 1. Non-decreasing in t by construction."""
    last = _last_best_round(tr)
    hist = np.bincount(last, minlength=tr.horizon + 1)
    # SuffFail(t) <=> last <= t - 1, so SuffFailFreq(t) = P(last <= t - 1)
    return np.asarray(np.cumsum(hist)[: tr.horizon] / tr.replicates)


def suffix_failure_freq(tr: BanditTrajectories, t: int | None = None) -> float:
    """SuffFailFreq(t); ``t`` defaults to the paper's T/2."""
    t = half_horizon(tr.horizon) if t is None else t
    return float(suffix_failures(tr, t).mean())


# -- uniform-like failures ----------------------------------------------------------------------
def _arm_count_curves(tr: BanditTrajectories) -> np.ndarray[Any, np.dtype[np.int32]]:
    """(K, R, T): pulls of each arm in rounds [1, t]."""
    out = np.empty((tr.n_arms, tr.replicates, tr.horizon), dtype=np.int32)
    for a in range(tr.n_arms):
        np.cumsum(tr.arms == a, axis=1, dtype=np.int32, out=out[a])
    return out


def min_frac_curves(tr: BanditTrajectories) -> FloatArray:
    """(R, T): MinFrac(t, R) = min over arms of the fraction of rounds in [1, t] that
    chose the arm. Invalid rounds count in t but for no arm."""
    counts = _arm_count_curves(tr).min(axis=0)
    return np.asarray(counts / np.arange(1, tr.horizon + 1))


def min_frac_curve(tr: BanditTrajectories) -> FloatArray:
    """(T,): MinFrac(t) averaged over replicates; multiply by K for the paper's plots."""
    return np.asarray(min_frac_curves(tr).mean(axis=0))


def min_frac(tr: BanditTrajectories, t: int | None = None) -> float:
    """MinFrac(t) (default t = T); at most 1/K."""
    t = tr.horizon if t is None else _round_index(tr, t)
    counts = np.stack([(tr.arms[:, :t] == a).sum(axis=1) for a in range(tr.n_arms)])
    return float((counts.min(axis=0) / t).mean())


def k_min_frac(tr: BanditTrajectories, t: int | None = None) -> float:
    """K · MinFrac(t), rescaled to [0, 1] (Figure 3's y-axis)."""
    return tr.n_arms * min_frac(tr, t)


# -- greedy / least-chosen rounds ---------------------------------------------------------------
#: Below this many replicates the per-round loop runs in plain Python: numpy's per-call
#: overhead dominates on (1, K) arrays (scoring one episode at a time).
_PYTHON_PATH_MAX_REPLICATES = 8


def _round_classes(tr: BanditTrajectories) -> tuple[BoolArray, BoolArray, BoolArray]:
    """(R, T) each: greedy round, counted for GreedyFrac, least-chosen round.

    A round is *counted* for GreedyFrac when an arm was pulled and that arm had been
    pulled before (so it has an average reward); it is *greedy* when that arm's average
    is the largest among arms pulled so far (ties count). A round is *least-chosen* when
    the pulled arm had the fewest pulls so far (all arms tie at 0 in round 1).
    """
    if tr.replicates <= _PYTHON_PATH_MAX_REPLICATES:
        return _round_classes_python(tr)
    return _round_classes_numpy(tr)


def _round_classes_python(tr: BanditTrajectories) -> tuple[BoolArray, BoolArray, BoolArray]:
    rows = [
        round_classes_of_row(arm_row, reward_row, tr.n_arms)
        for arm_row, reward_row in zip(tr.arms.tolist(), tr.rewards.tolist(), strict=True)
    ]
    return tuple(  # type: ignore[return-value]
        np.array([row[c] for row in rows], dtype=bool).reshape(tr.arms.shape) for c in range(3)
    )


def round_classes_of_row(
    arms: Sequence[int], rewards: Sequence[float], k: int
) -> tuple[list[bool], list[bool], list[bool]]:
    """One replicate's (greedy, counted, least-chosen) flags per round (``_round_classes``)."""
    greedy = [False] * len(arms)
    counted = [False] * len(arms)
    least = [False] * len(arms)
    n = [0] * k
    s = [0.0] * k
    avg = [-np.inf] * k
    best = -np.inf
    for i, (arm, reward) in enumerate(zip(arms, rewards, strict=True)):
        if arm < 0:
            continue
        if n[arm] > 0:
            counted[i] = True
            greedy[i] = avg[arm] >= best - TIE_TOL
        least[i] = n[arm] <= min(n)
        n[arm] += 1
        s[arm] += reward
        avg[arm] = s[arm] / n[arm]
        best = max(avg)
    return greedy, counted, least


def _round_classes_numpy(tr: BanditTrajectories) -> tuple[BoolArray, BoolArray, BoolArray]:
    r_idx = np.arange(tr.replicates)
    n = np.zeros((tr.replicates, tr.n_arms))
    s = np.zeros((tr.replicates, tr.n_arms))
    avg = np.full((tr.replicates, tr.n_arms), -np.inf)  # -inf: no average yet
    greedy = np.zeros(tr.arms.shape, dtype=bool)
    counted = np.zeros(tr.arms.shape, dtype=bool)
    least = np.zeros(tr.arms.shape, dtype=bool)
    all_valid = bool(tr.valid.all())
    for i in range(tr.horizon):
        arm = tr.arms[:, i]
        if all_valid:
            ok = np.ones(tr.replicates, dtype=bool)
            safe, rows, pulled = arm, r_idx, arm
            reward = tr.rewards[:, i]
        else:
            ok = arm >= 0
            safe = np.where(ok, arm, 0)
            rows, pulled, reward = r_idx[ok], arm[ok], tr.rewards[ok, i]
        n_chosen = n[r_idx, safe]
        counted[:, i] = ok & (n_chosen > 0)
        greedy[:, i] = counted[:, i] & (avg[r_idx, safe] >= avg.max(axis=1) - TIE_TOL)
        least[:, i] = ok & (n_chosen <= n.min(axis=1))
        n[rows, pulled] += 1
        s[rows, pulled] += reward
        avg[rows, pulled] = s[rows, pulled] / n[rows, pulled]
    return greedy, counted, least


def _ratio(num: np.ndarray[Any, Any], den: np.ndarray[Any, Any]) -> FloatArray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(np.where(den > 0, num / np.maximum(den, 1), np.nan))


def _nanmean(values: FloatArray) -> float:
    return float(np.nanmean(values)) if np.isfinite(values).any() else float("nan")


def greedy_frac_per_replicate(tr: BanditTrajectories) -> FloatArray:
    """(R,): fraction of counted rounds that were greedy (NaN if no round was counted)."""
    greedy, counted, _ = _round_classes(tr)
    return _ratio(greedy.sum(axis=1), counted.sum(axis=1))


def greedy_frac(tr: BanditTrajectories) -> float:
    """GreedyFrac: per-replicate fraction of greedy rounds, averaged over replicates
    (replicates with no counted round are left out)."""
    return _nanmean(greedy_frac_per_replicate(tr))


def least_frac_per_replicate(tr: BanditTrajectories) -> FloatArray:
    """(R,): fraction of valid rounds that pulled a least-chosen-so-far arm."""
    _, _, least = _round_classes(tr)
    return _ratio(least.sum(axis=1), tr.valid.sum(axis=1))


def least_frac(tr: BanditTrajectories) -> float:
    """LeastFrac over a whole run: per-replicate fraction of least-chosen rounds, averaged."""
    return _nanmean(least_frac_per_replicate(tr))


# -- reward ----------------------------------------------------------------------------------
def cumulative_reward(tr: BanditTrajectories) -> FloatArray:
    """(R,): total reward per replicate."""
    return np.asarray(tr.rewards.sum(axis=1))


def time_averaged_reward(tr: BanditTrajectories) -> FloatArray:
    """(R,): Φ(R), the total reward divided by T."""
    return np.asarray(tr.rewards.mean(axis=1))


def time_averaged_reward_curve(tr: BanditTrajectories) -> FloatArray:
    """(T,): mean over replicates of (reward in rounds [1, t]) / t (Figure 1, right)."""
    return np.asarray((tr.rewards.cumsum(axis=1) / np.arange(1, tr.horizon + 1)).mean(axis=0))


def rescaled_reward(tr: BanditTrajectories) -> FloatArray:
    """(R,): Φ(R) mapped affinely so that E[Φ] spans [0, 1] (footnote 10).

    E[Φ] lies between the worst and the best arm mean; for the paper's instances that is
    [1/2 - Δ/2, 1/2 + Δ/2]. NaN when all arms have the same mean.
    """
    lo = tr.means.min(axis=1)
    hi = tr.means.max(axis=1)
    span = hi - lo
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(np.where(span > MEAN_TOL, (time_averaged_reward(tr) - lo) / span, np.nan))


def median_reward(tr: BanditTrajectories) -> float:
    """MedianReward: the median over replicates of the rescaled time-averaged reward."""
    values = rescaled_reward(tr)
    return float(np.nanmedian(values)) if np.isfinite(values).any() else float("nan")


def pseudo_regret(tr: BanditTrajectories) -> FloatArray:
    """(R,): T·μ* minus the sum of the means of the arms pulled (invalid rounds earn 0)."""
    safe = np.where(tr.valid, tr.arms, 0)
    pulled = np.where(tr.valid, np.take_along_axis(tr.means, safe, axis=1), 0.0)
    return np.asarray(tr.horizon * tr.means.max(axis=1) - pulled.sum(axis=1))


def realized_regret(tr: BanditTrajectories) -> FloatArray:
    """(R,): T·μ* minus the reward actually collected."""
    return np.asarray(tr.horizon * tr.means.max(axis=1) - cumulative_reward(tr))


def optimal_reward(tr: BanditTrajectories) -> float:
    """OPT: the best arm's mean, averaged over replicates (the dashed line of Figure 1)."""
    return float(tr.means.max(axis=1).mean())


#: The statistics of the paper's summary tables (Figure 4), in its row order.
TABLE_STATS = ("median_reward", "suff_fail_freq_half", "k_min_frac", "greedy_frac")
TABLE_LABELS = {
    "median_reward": "MedianReward",
    "suff_fail_freq_half": "SuffFailFreq(T/2)",
    "k_min_frac": "K*MinFrac",
    "greedy_frac": "GreedyFrac",
    "replicates": "Replicates",
}


def summarize(tr: BanditTrajectories) -> dict[str, float]:
    """The paper's four summary statistics plus reward, regret and validity figures."""
    valid = tr.valid
    greedy, counted, least = _round_classes(tr)
    return {
        "median_reward": median_reward(tr),
        "suff_fail_freq_half": suffix_failure_freq(tr),
        "k_min_frac": k_min_frac(tr),
        "greedy_frac": _nanmean(_ratio(greedy.sum(axis=1), counted.sum(axis=1))),
        "least_frac": _nanmean(_ratio(least.sum(axis=1), valid.sum(axis=1))),
        "mean_reward": float(time_averaged_reward(tr).mean()),
        "pseudo_regret": float(pseudo_regret(tr).mean()),
        "best_arm_fraction": float(best_arm_pulls(tr).mean()),
        "invalid_rate": float(tr.invalid_rounds.mean()),
        "replicates": float(tr.replicates),
        "horizon": float(tr.horizon),
        "n_arms": float(tr.n_arms),
    }
