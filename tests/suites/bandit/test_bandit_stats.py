"""Bandit statistics: worked examples, a naive reference implementation, and properties."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exploreval.suites.bandit import stats as B


def traj(
    arms: list[list[int]], rewards: list[list[float]], means: list[list[float]]
) -> B.BanditTrajectories:
    return B.BanditTrajectories(np.array(arms), np.array(rewards, dtype=float), np.array(means))


# -- naive references, written from the paper's sentences, one replicate at a time ----------------
def naive_suffix_fail(arms: list[int], best: set[int], t: int) -> bool:
    """1 if the best arm is never chosen in rounds [t, T] (1-indexed)."""
    return not any(a in best for a in arms[t - 1 :])


def naive_min_frac(arms: list[int], k: int, t: int) -> float:
    return min(sum(1 for a in arms[:t] if a == arm) / t for arm in range(k))


def naive_greedy(arms: list[int], rewards: list[float], k: int) -> tuple[int, int]:
    """(greedy rounds, counted rounds): counted = the pulled arm had been pulled before."""
    n = [0] * k
    s = [0.0] * k
    greedy = counted = 0
    for a, r in zip(arms, rewards, strict=True):
        if a >= 0:
            if n[a] > 0:
                counted += 1
                averages = [s[b] / n[b] for b in range(k) if n[b] > 0]
                if s[a] / n[a] >= max(averages) - 1e-12:
                    greedy += 1
            n[a] += 1
            s[a] += r
    return greedy, counted


def naive_least(arms: list[int], k: int) -> tuple[int, int]:
    n = [0] * k
    least = valid = 0
    for a in arms:
        if a >= 0:
            valid += 1
            least += n[a] == min(n)
            n[a] += 1
    return least, valid


# -- worked examples -------------------------------------------------------------------------------
def test_worked_example_by_hand() -> None:
    # K=3, T=6, best arm at position 2 (mean 0.6). Rounds 1..6 pull 0,1,2,2,0,0.
    tr = traj([[0, 1, 2, 2, 0, 0]], [[1, 0, 0, 1, 1, 0]], [[0.4, 0.4, 0.6]])
    # last best pull is round 4 -> SuffFail(t) for t = 5, 6 only
    assert B.suffix_failure_freq_curve(tr).tolist() == [0, 0, 0, 0, 1, 1]
    assert B.suffix_failure_freq(tr) == 0.0  # T/2 = 3
    # counts after 6 rounds: arm0 3, arm1 1, arm2 2 -> MinFrac(6) = 1/6
    assert B.min_frac(tr) == pytest.approx(1 / 6)
    assert B.k_min_frac(tr) == pytest.approx(3 / 6)
    # MinFrac(t) for t=1..6: arm counts (1,0,0),(1,1,0),(1,1,1),(1,1,2),(2,1,2),(3,1,2)
    assert B.min_frac_curve(tr).tolist() == pytest.approx([0, 0, 1 / 3, 1 / 4, 1 / 5, 1 / 6])
    # Greedy rounds: round 4 pulls arm2 (avg 0 vs arm0 1.0) -> counted, not greedy;
    # round 5 pulls arm0 (avg 1.0, best of {1.0, 0, 0.5}) -> greedy;
    # round 6 pulls arm0 (avg 1.0 vs 0, 0.5) -> greedy. Rounds 1-3 pull new arms: not counted.
    assert B.greedy_frac(tr) == pytest.approx(2 / 3)
    # least-chosen: r1 (all 0) yes, r2 arm1 (0) yes, r3 arm2 (0) yes, r4 arm2 (1 = min) yes,
    # r5 arm0 (1, min 1) yes, r6 arm0 (2, min 1) no
    assert B.least_frac(tr) == pytest.approx(5 / 6)
    # rewards: 3 of 6 -> Φ = 0.5; rescaled (0.5 - 0.4) / 0.2 = 0.5
    assert B.median_reward(tr) == pytest.approx(0.5)
    # Figure 1 (right): reward in [1, t] divided by t
    assert B.time_averaged_reward_curve(tr).tolist() == pytest.approx(
        [1, 1 / 2, 1 / 3, 2 / 4, 3 / 5, 3 / 6]
    )
    assert B.pseudo_regret(tr)[0] == pytest.approx(6 * 0.6 - (0.4 * 4 + 0.6 * 2))
    assert B.best_arm_counts(tr).tolist() == [2]


def test_greedy_always_scores_one_and_never_counts_first_pulls() -> None:
    # Greedy-like: pull each arm once, then always the best average so far.
    tr = traj([[0, 1, 2, 1, 1, 1]], [[0, 1, 0, 1, 0, 1]], [[0.6, 0.4, 0.4]])
    greedy, counted = naive_greedy([0, 1, 2, 1, 1, 1], [0, 1, 0, 1, 0, 1], 3)
    assert (greedy, counted) == (3, 3)
    assert B.greedy_frac(tr) == 1.0


def test_invalid_rounds_count_in_t_but_pull_nothing() -> None:
    tr = traj([[-1, 0, -1, 1]], [[0, 1, 0, 0]], [[0.6, 0.4]])
    assert B.min_frac(tr) == pytest.approx(1 / 4)  # each arm once in 4 rounds
    assert B.best_arm_counts(tr).tolist() == [1]
    assert B.suffix_failure_freq_curve(tr).tolist() == [0, 0, 1, 1]
    assert B.least_frac(tr) == pytest.approx(1.0)  # both valid rounds picked a 0-count arm
    assert math.isnan(B.greedy_frac(tr))  # no arm was pulled twice: nothing counted
    assert B.pseudo_regret(tr)[0] == pytest.approx(4 * 0.6 - 0.6 - 0.4)
    assert B.summarize(tr)["invalid_rate"] == 0.5


def test_ties_in_the_best_average_count_as_greedy() -> None:
    # r3: arm0 (1.0 vs 0.0) greedy; r4: arm1 (0.0 vs 0.5) not; r5: arm1 (0.5 vs 0.5) tie -> greedy
    tr = traj([[0, 1, 0, 1, 1]], [[1, 0, 0, 1, 0]], [[0.6, 0.4]])
    assert naive_greedy([0, 1, 0, 1, 1], [1, 0, 0, 1, 0], 2) == (2, 3)
    assert B.greedy_frac(tr) == pytest.approx(2 / 3)


def test_several_best_arms_all_count_as_best() -> None:
    tr = traj([[0, 1, 2, 1]], [[0, 0, 0, 0]], [[0.7, 0.7, 0.2]])
    assert B.best_arm_counts(tr).tolist() == [3]
    assert B.suffix_failure_freq(tr, 4) == 0.0


def test_rescaled_reward_matches_footnote_10_and_is_nan_without_a_gap() -> None:
    # Φ ranges over [0.4, 0.6] for the hard instance: Φ = 0.4 -> 0, 0.6 -> 1
    tr = traj([[0] * 5, [0] * 5], [[1, 1, 1, 0, 0], [1, 0, 0, 0, 0]], [[0.6, 0.4]] * 2)
    assert B.rescaled_reward(tr).tolist() == pytest.approx([1.0, -1.0])
    assert B.median_reward(tr) == pytest.approx(0.0)
    flat = traj([[0, 1]], [[1, 0]], [[0.5, 0.5]])
    assert math.isnan(B.median_reward(flat))


def test_shapes_and_values_are_validated() -> None:
    with pytest.raises(ValueError, match="arm indices"):
        traj([[0, 3]], [[0, 0]], [[0.5, 0.4, 0.3]])
    with pytest.raises(ValueError, match="replicates, rounds"):
        B.BanditTrajectories(np.zeros((2, 3), int), np.zeros((2, 4)), np.zeros((2, 2)))
    with pytest.raises(ValueError, match="outside"):
        B.suffix_failure_freq(traj([[0, 1]], [[0, 0]], [[0.6, 0.4]]), t=3)


# -- properties --------------------------------------------------------------------------------------
@st.composite
def trajectories(draw: st.DrawFn) -> B.BanditTrajectories:
    k = draw(st.integers(2, 5))
    t = draw(st.integers(1, 25))
    r = draw(st.integers(1, 6))
    arms = draw(
        st.lists(st.lists(st.integers(-1, k - 1), min_size=t, max_size=t), min_size=r, max_size=r)
    )
    rewards = [[float(draw(st.integers(0, 1))) if a >= 0 else 0.0 for a in row] for row in arms]
    means = draw(
        st.lists(
            st.lists(st.sampled_from([0.2, 0.4, 0.5, 0.6, 0.8]), min_size=k, max_size=k),
            min_size=r,
            max_size=r,
        )
    )
    return traj(arms, rewards, means)


@settings(max_examples=150, deadline=None)
@given(trajectories())
def test_vectorised_statistics_equal_the_naive_reference(tr: B.BanditTrajectories) -> None:
    k, horizon = tr.n_arms, tr.horizon
    best = [set(np.flatnonzero(row == row.max()).tolist()) for row in tr.means]
    rows = [(tr.arms[i].tolist(), tr.rewards[i].tolist()) for i in range(tr.replicates)]
    curve = B.suffix_failure_freq_curve(tr)
    for t in range(1, horizon + 1):
        expected = np.mean([naive_suffix_fail(a, best[i], t) for i, (a, _) in enumerate(rows)])
        assert curve[t - 1] == pytest.approx(expected)
        assert B.suffix_failure_freq(tr, t) == pytest.approx(expected)
        assert B.min_frac(tr, t) == pytest.approx(
            np.mean([naive_min_frac(a, k, t) for a, _ in rows])
        )
    assert B.min_frac_curve(tr)[-1] == pytest.approx(B.min_frac(tr))
    per = [naive_greedy(a, r, k) for a, r in rows]
    expected_g = [g / c for g, c in per if c > 0]
    got_g = B.greedy_frac_per_replicate(tr)
    for (g, c), value in zip(per, got_g, strict=True):
        assert (math.isnan(value) and c == 0) or value == pytest.approx(g / c)
    if expected_g:
        assert B.greedy_frac(tr) == pytest.approx(np.mean(expected_g))
    per_l = [naive_least(a, k) for a, _ in rows]
    for (lc, v), value in zip(per_l, B.least_frac_per_replicate(tr), strict=True):
        assert (math.isnan(value) and v == 0) or value == pytest.approx(lc / v)
    summary = B.summarize(tr)
    if expected_g:
        assert summary["greedy_frac"] == pytest.approx(B.greedy_frac(tr))


@settings(max_examples=100, deadline=None)
@given(trajectories())
def test_statistics_stay_in_their_ranges(tr: B.BanditTrajectories) -> None:
    curve = B.suffix_failure_freq_curve(tr)
    assert np.all(np.diff(curve) >= 0), "SuffFailFreq(t) is non-decreasing in t"
    assert np.all((curve >= 0) & (curve <= 1))
    assert np.all(B.min_frac_curves(tr) <= 1 / tr.n_arms + 1e-12), "MinFrac <= 1/K"
    assert 0 <= B.k_min_frac(tr) <= 1 + 1e-12
    fractions = B.best_arm_fraction_curves(tr)
    assert np.all((fractions >= 0) & (fractions <= 1))
    assert np.all(B.pseudo_regret(tr) >= -1e-9), "pseudo-regret is never negative"
    assert B.cumulative_reward(tr) == pytest.approx(tr.horizon * B.time_averaged_reward(tr))


@settings(max_examples=60, deadline=None)
@given(trajectories(), st.randoms(use_true_random=False))
def test_statistics_ignore_arm_relabelling(tr: B.BanditTrajectories, rnd: object) -> None:
    """Permuting arm positions (and their means) consistently changes nothing."""
    k = tr.n_arms
    perm = np.random.default_rng(hash(rnd) % 2**32).permutation(k)  # new position of arm a
    arms = np.where(tr.arms >= 0, perm[np.maximum(tr.arms, 0)], -1)
    means = np.empty_like(tr.means)
    means[:, perm] = tr.means
    moved = B.BanditTrajectories(arms, tr.rewards, means)
    assert B.suffix_failure_freq_curve(moved).tolist() == B.suffix_failure_freq_curve(tr).tolist()
    assert B.min_frac_curve(moved) == pytest.approx(B.min_frac_curve(tr))
    a, b = B.summarize(moved), B.summarize(tr)
    for key in a:
        assert (math.isnan(a[key]) and math.isnan(b[key])) or a[key] == pytest.approx(b[key])


@pytest.mark.parametrize("seed", range(5))
def test_python_and_numpy_round_classification_agree(seed: int) -> None:
    """Few replicates use a plain-Python loop, many use numpy; both must classify alike."""
    from exploreval.suites.bandit._stats import _round_classes_numpy, _round_classes_python

    rng = np.random.default_rng(seed)
    k, t, r = 4, 40, 30
    arms = rng.integers(-1, k, size=(r, t))
    arms[:, :10] = rng.integers(0, 2, size=(r, 10))  # force repeats and ties early
    rewards = np.where(arms >= 0, rng.integers(0, 2, size=(r, t)), 0).astype(float)
    tr = traj(arms.tolist(), rewards.tolist(), rng.choice([0.3, 0.6], size=(r, k)).tolist())
    for a, b in zip(_round_classes_python(tr), _round_classes_numpy(tr), strict=True):
        assert (a == b).all()


def test_invalid_flags_are_kept_apart_from_pulls() -> None:
    """A fallback pull is a pull for every statistic but still an invalid round."""
    arms = np.array([[0, 1, -1, 0]])
    invalid = np.array([[False, True, True, False]])  # round 2 pulled arm 1 as a fallback
    tr = B.BanditTrajectories(arms, np.zeros((1, 4)), np.array([[0.6, 0.4]]), invalid)
    assert B.summarize(tr)["invalid_rate"] == 0.5
    assert B.min_frac(tr) == pytest.approx(1 / 4)
    both = B.BanditTrajectories.concat([tr, tr.subset([0])])
    assert both.invalid_rounds.tolist() == invalid.tolist() * 2
    with pytest.raises(ValueError, match="must be marked invalid"):
        B.BanditTrajectories(arms, np.zeros((1, 4)), np.array([[0.6, 0.4]]), np.zeros((1, 4), bool))


def test_half_horizon_is_the_floor_for_odd_t() -> None:
    # T = 5: T/2 is round 2, so a best pull in round 2 (and none later) is no suffix failure
    tr = traj([[1, 0, 1, 1, 1]], [[0] * 5], [[0.6, 0.4]])
    assert B.half_horizon(5) == 2 and B.half_horizon(1) == 1
    assert B.suffix_failure_freq(tr) == 0.0
    assert B.suffix_failure_freq(tr, 3) == 1.0


def test_median_reward_is_a_median_not_a_mean() -> None:
    # Φ = 2/5, 2/5, 3/5, 5/5 on [0.4, 0.6] -> rescaled 0, 0, 1, 3: median 0.5 (the two middle
    # values averaged, as the paper's 0.47 for TS is), mean 1.0
    rows = [[1, 1, 0, 0, 0], [0, 1, 1, 0, 0], [1, 1, 1, 0, 0], [1, 1, 1, 1, 1]]
    tr = traj([[0] * 5] * 4, rows, [[0.6, 0.4]] * 4)
    assert B.rescaled_reward(tr).tolist() == pytest.approx([0, 0, 1, 3])
    assert B.median_reward(tr) == pytest.approx(0.5)
    assert B.summarize(tr)["median_reward"] == pytest.approx(0.5)


one_replicate = st.integers(2, 5).flatmap(
    lambda k: st.tuples(
        st.just(k),
        st.lists(st.integers(-1, k - 1), min_size=1, max_size=60),
        st.lists(st.sampled_from([0.1, 0.3, 0.5, 0.5 + 1e-13, 0.7, 0.9]), min_size=k, max_size=k),
        st.booleans(),
    )
)


@settings(max_examples=300)
@given(one_replicate, st.integers(0, 2**32 - 1))
def test_one_episodes_metrics_are_the_vectorised_statistics_of_one_row(
    case: tuple[int, list[int], list[float], bool], seed: int
) -> None:
    """A score computes a bandit episode's metrics in plain Python (``one_episode_metrics``);
    each must be, to the bit, what the (replicates, rounds) statistics give for that one row,
    with 0/1 or arbitrary float rewards, invalid rounds and tied or near-tied best arms."""
    k, arms, means, bernoulli = case
    rng = np.random.default_rng(seed)
    rewards = np.where(
        np.asarray(arms) >= 0,
        rng.integers(0, 2, len(arms)) if bernoulli else rng.random(len(arms)),
        0.0,
    ).astype(float)
    tr = traj([arms], [rewards.tolist()], [means])
    stats = B.summarize(tr)
    rescaled = float(B.rescaled_reward(tr)[0])
    expected = {
        "best_arm_pulls": int(B.best_arm_counts(tr)[0]),
        "best_arm_fraction": float(B.best_arm_pulls(tr).mean()),
        "suffix_failure_half": bool(B.suffix_failures(tr, B.half_horizon(tr.horizon))[0]),
        "k_min_frac": stats["k_min_frac"],
        "greedy_frac": None if math.isnan(stats["greedy_frac"]) else stats["greedy_frac"],
        "least_frac": None if math.isnan(stats["least_frac"]) else stats["least_frac"],
        "time_averaged_reward": stats["mean_reward"],
        "rescaled_reward": None if math.isnan(rescaled) else rescaled,
        "pseudo_regret": stats["pseudo_regret"],
        "arms_never_pulled": sum(1 for a in range(k) if a not in arms),
        "fallback_rounds": 3,
    }
    got = B.one_episode_metrics(arms, rewards.tolist(), means, 3)
    assert got == expected
    assert {key: type(v) for key, v in got.items() if v is not None} == {
        key: type(v) for key, v in expected.items() if v is not None
    }


def test_one_episodes_metrics_refuse_an_arm_outside_the_means() -> None:
    with pytest.raises(ValueError, match="do not index 2 arm means"):
        B.one_episode_metrics([0, 2], [1.0, 0.0], [0.3, 0.6], 0)
    with pytest.raises(ValueError, match="at least 2 arms"):
        B.one_episode_metrics([0], [1.0], [0.3], 0)
