"""The one bootstrap (exploreval.metrics.bootstrap) and the choices it documents; every
consumer (report tables, TIDE, pass@k, grid tables, compare) gives the same interval."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exploreval.metrics import bootstrap
from exploreval.metrics.bootstrap import BootstrapCI, mean_ci, paired_ci

finite = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False)


@settings(max_examples=60, deadline=None)
@given(st.lists(finite, min_size=2, max_size=60), st.integers(0, 5))
def test_interval_is_reproducible_ordered_and_within_the_data(
    values: list[float], seed: int
) -> None:
    ci = mean_ci(values, resamples=300, seed=seed)
    assert ci == mean_ci(values, resamples=300, seed=seed)  # seeded
    assert ci.n == len(values) and ci.method == "bootstrap"
    assert ci.estimate == pytest.approx(float(np.mean(values)), rel=1e-9, abs=1e-6)
    assert min(values) <= ci.low <= ci.high <= max(values)
    assert min(values) <= ci.estimate <= max(values)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(-3, 3), min_size=24, max_size=80))
def test_the_interval_of_negated_values_is_the_mirror(values: list[int]) -> None:
    """mean_ci(-x) = -mean_ci(x), ends swapped: a paired comparison of B - A mirrors A - B.
    Few distinct values take the multinomial path, whose categories once came sorted by value,
    so x and -x drew different values ([-0.458, 0] against [0, 0.5] on 24 steps)."""
    forward = mean_ci([float(v) for v in values])
    backward = mean_ci([float(-v) for v in values])
    assert backward.estimate == -forward.estimate
    # to the last bits: numpy's quantile interpolates from the other end
    assert backward.low == pytest.approx(-forward.high, abs=1e-12)
    assert backward.high == pytest.approx(-forward.low, abs=1e-12)


def test_equal_values_give_a_zero_width_interval_at_that_value() -> None:
    """Found by CI: three equal values whose float mean is one ulp above them gave low > high."""
    value = 699050.7765918162
    ci = mean_ci([value] * 3, resamples=300, seed=0)
    assert ci.low == ci.estimate == ci.high == value


@settings(max_examples=40, deadline=None)
@given(st.lists(finite, min_size=1, max_size=30), st.lists(st.sampled_from([math.nan]), max_size=5))
def test_nan_values_are_left_out(values: list[float], gaps: list[float]) -> None:
    mixed = [*values, *gaps]
    assert mean_ci(mixed, resamples=200) == mean_ci(values, resamples=200)


def test_one_value_has_no_interval_and_none_has_no_estimate() -> None:
    one = mean_ci([0.3])
    assert one.estimate == 0.3 and one.n == 1 and math.isnan(one.low) and math.isnan(one.high)
    # one task repeated: still one cluster, still no interval
    repeated = mean_ci([1.0, 0.0, 1.0], groups=["t", "t", "t"])
    assert repeated.n == 1 and repeated.estimate == pytest.approx(2 / 3)
    assert math.isnan(repeated.low) and math.isnan(repeated.high)
    for empty in ([], [math.nan, math.inf]):
        none = mean_ci(empty)
        assert none.n == 0 and all(math.isnan(v) for v in none.as_tuple())
    assert mean_ci([0.5, 0.5]).as_tuple() == (0.5, 0.5, 0.5)  # constant: zero width


@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.tuples(st.floats(0, 1), st.integers(1, 4)), min_size=2, max_size=15),
    st.integers(0, 3),
)
def test_equal_repeats_cluster_like_their_task_means(
    tasks: list[tuple[float, int]], seed: int
) -> None:
    """k identical repeats of each task: the clustered interval equals the one over tasks."""
    k = tasks[0][1]
    values = [v for v, _ in tasks for _ in range(k)]
    groups = [i for i in range(len(tasks)) for _ in range(k)]
    clustered = mean_ci(values, groups=groups, resamples=300, seed=seed)
    by_task = mean_ci([v for v, _ in tasks], resamples=300, seed=seed)
    assert clustered.n == len(tasks)
    assert (clustered.low, clustered.high) == pytest.approx((by_task.low, by_task.high))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(finite, finite), min_size=1, max_size=40))
def test_paired_is_the_interval_of_the_differences(pairs: list[tuple[float, float]]) -> None:
    a = [x for x, _ in pairs]
    b = [y for _, y in pairs]
    got = paired_ci(a, b, resamples=200)
    want = mean_ci(np.subtract(a, b), resamples=200)
    assert got.n == want.n and got.as_tuple() == pytest.approx(want.as_tuple(), nan_ok=True)


def test_large_samples_use_the_normal_approximation_which_agrees_with_the_bootstrap(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rng = np.random.default_rng(7)
    values = (rng.random(2 * (bootstrap.NORMAL_APPROX_CLUSTERS + 500)) < 0.3).astype(float)
    groups = np.repeat(np.arange(values.size // 2), 2)  # pairs of repeats per task
    normal = mean_ci(values)
    clustered_normal = mean_ci(values, groups=list(groups))
    assert normal.method == "normal" and normal.n == values.size
    assert clustered_normal.method == "normal" and clustered_normal.n == values.size // 2
    half = 1.959963984540054 * values.std(ddof=1) / math.sqrt(values.size)
    assert (normal.low, normal.high) == pytest.approx((values.mean() - half, values.mean() + half))
    monkeypatch.setattr(bootstrap, "NORMAL_APPROX_CLUSTERS", 10**9)
    resampled = mean_ci(values)
    resampled_clustered = mean_ci(values, groups=list(groups))
    assert resampled.method == "bootstrap"
    assert normal.low == pytest.approx(resampled.low, abs=3e-3)
    assert normal.high == pytest.approx(resampled.high, abs=3e-3)
    assert clustered_normal.low == pytest.approx(resampled_clustered.low, abs=3e-3)
    assert clustered_normal.high == pytest.approx(resampled_clustered.high, abs=3e-3)


def test_bad_arguments_are_named() -> None:
    with pytest.raises(ValueError, match="one group per score"):
        mean_ci([0.1, 0.2], groups=["a"])
    with pytest.raises(ValueError, match="confidence level"):
        mean_ci([0.1, 0.2], level=1.5)
    with pytest.raises(ValueError, match="equal lengths"):
        paired_ci([0.1], [0.1, 0.2])
    with pytest.raises(ValueError, match="1-D"):
        mean_ci([[0.1, 0.2]])


def test_every_consumer_gives_the_same_interval() -> None:
    from exploreval.analysis import bootstrap_mean_ci as report_ci
    from exploreval.analysis import paired_bootstrap_ci
    from exploreval.metrics.passk import at_k_table
    from exploreval.metrics.tide import auv_ci, bootstrap_mean_ci, paired_difference_ci
    from exploreval.suites.grid._explore_exploit_tables import bootstrap_ci as grid_ci

    values = [0.0, 1.0, 1.0, 0.5, 0.25, 1.0, 0.0]
    reference = mean_ci(values)
    assert isinstance(reference, BootstrapCI)
    assert report_ci(values) == reference.as_tuple()
    assert grid_ci(values) == (reference.low, reference.high)
    assert bootstrap_mean_ci(values) == reference
    assert paired_bootstrap_ci(np.asarray(values)) == (reference.low, reference.high)
    other = [0.5] * len(values)
    assert paired_difference_ci(values, other) == mean_ci(np.subtract(values, other))
    turns = [3, None, 5, 1, None]
    from exploreval.metrics.tide import task_auv

    assert auv_ci(turns, 10) == mean_ci(task_auv(turns, 10))
    table = at_k_table({"pass": [1, 0, 2, 2]}, 2, ks=[1])
    row = table.iloc[0]
    expected = mean_ci([0.5, 0.0, 1.0, 1.0])
    assert (row.estimate, row.ci_low, row.ci_high) == pytest.approx(expected.as_tuple())
