"""AUV (TIDE Eq. 1), success/progress curves and bootstrap CIs."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exploreval.metrics._tide_auv import progress_curves
from exploreval.metrics.tide import (
    auv,
    auv_ci,
    auv_from_curve,
    bootstrap_mean_ci,
    paired_difference_ci,
    progress_auv,
    progress_curve,
    success_curve,
    task_auv,
    task_progress_auv,
)

turns = st.lists(st.one_of(st.none(), st.integers(0, 40)), min_size=1, max_size=60)
t_maxes = st.integers(1, 35)


def test_hand_counted_curve_and_area() -> None:
    # tasks solved at turns 1, 3, 2 and never; t_max 4
    curve = success_curve([1, 3, None, 2], 4)
    assert curve.tolist() == [0.0, 0.25, 0.5, 0.75, 0.75]
    # (0+.25)/2 + (.25+.5)/2 + (.5+.75)/2 + (.75+.75)/2 = 1.875, / 4
    assert auv([1, 3, None, 2], 4) == pytest.approx(0.46875)


def test_bounds_instantaneous_and_never() -> None:
    assert auv([0, 0, 0], 20) == 1.0  # solved before acting: the paper's upper bound
    assert auv([None, None], 20) == 0.0
    assert auv([1], 20) == pytest.approx(1 - 0.5 / 20)  # one-step success
    assert auv([25], 20) == 0.0  # solved after the window does not count


@given(turns, t_maxes)
def test_auv_is_mean_of_task_auvs_eq18(values: list[int | None], t_max: int) -> None:
    assert auv(values, t_max) == pytest.approx(float(np.mean(task_auv(values, t_max))))


@given(turns, t_maxes)
def test_weighted_increment_lemma1(values: list[int | None], t_max: int) -> None:
    """AUV = (1/H) sum_k (t_max - k - 0.5) delta_k, delta_k = P_{k+1} - P_k (Appendix A, Lemma 1)."""
    curve = success_curve(values, t_max)
    delta = np.diff(curve)
    weights = t_max - np.arange(t_max) - 0.5
    lemma = (curve[0] * t_max + (weights * delta).sum()) / t_max
    assert auv(values, t_max) == pytest.approx(lemma)


@given(turns, t_maxes)
def test_curve_is_monotone_and_bounded(values: list[int | None], t_max: int) -> None:
    curve = success_curve(values, t_max)
    assert curve.size == t_max + 1
    assert np.all(np.diff(curve) >= 0)
    assert 0.0 <= auv(values, t_max) <= 1.0
    solved = sum(v is not None and v <= t_max for v in values) / len(values)
    assert curve[-1] == pytest.approx(solved)


@given(st.lists(st.integers(1, 20), min_size=2, max_size=30), st.data())
def test_earlier_success_raises_auv_not_sr_prop1(values: list[int], data: st.DataObject) -> None:
    """Proposition 1: moving a success to an earlier turn keeps SR and strictly raises AUV."""
    index = data.draw(st.integers(0, len(values) - 1))
    if values[index] == 1:
        return
    earlier = list(values)
    earlier[index] = data.draw(st.integers(1, values[index] - 1))
    assert success_curve(earlier, 20)[-1] == success_curve(values, 20)[-1]
    assert auv(earlier, 20) > auv(values, 20)


# TIDE Table 1: SR and AUV (percent) per model for BlocksWorld, FrozenLake, Sudoku, AlfWorld, WebShop.
TABLE1 = """Qwen3-4B-Instruct 40.0 30.8 59.0 46.1 29.0 19.3 52.1 38.3 15.0 9.6
Qwen3-30B-A3B-Instruct 64.0 45.4 61.0 49.0 77.0 48.8 62.1 48.1 20.8 13.7
Llama-3.1-8B-Instruct 32.0 21.9 12.0 8.4 4.0 2.1 16.4 12.8 20.8 13.1
Llama-3.3-70B-Instruct 96.0 68.2 44.0 34.7 40.0 24.9 59.3 46.7 26.8 17.6
GLM-4-9B-Chat 23.0 18.2 10.0 7.2 4.0 2.0 25.7 21.8 16.4 11.5
GLM-4-32B-0414 83.0 57.5 67.0 49.9 55.0 34.4 37.9 29.0 25.4 17.2
Mistral-7B-Instruct 7.0 5.0 6.0 4.6 1.0 0.4 8.6 7.6 6.6 4.4
Ministral-3-14B-Instruct 72.0 39.0 56.0 35.8 18.0 13.3 22.1 15.8 15.2 5.4
Phi-4 56.0 41.2 66.0 50.8 33.0 21.4 25.0 18.6 18.8 12.2
DeepSeek-V3.2 98.0 71.1 97.0 73.1 93.0 56.8 80.7 59.0 41.0 24.8
Gemini-2.5-Flash 99.0 72.0 97.0 70.7 97.0 60.4 78.6 58.1 35.0 21.6
Qwen3-4B-Thinking 77.0 47.9 91.0 66.7 55.0 30.7 57.1 40.9 12.2 8.2
Qwen3-30B-A3B-Thinking 98.0 69.8 93.0 68.0 95.0 55.6 66.4 50.7 21.0 14.6
Phi-4-reasoning 68.0 51.3 62.0 48.8 51.0 37.4 15.7 9.8 22.6 14.3
gpt-oss-120b 100.0 73.7 99.0 73.8 97.0 60.2 50.7 29.0 26.2 11.1
DeepSeek-R1 100.0 74.9 96.0 72.6 95.0 59.4 83.6 64.1 38.4 24.1
Gemini-2.5-Pro 100.0 75.2 100.0 75.0 99.0 60.2 80.7 62.9 43.2 27.1"""
T_MAX = (20, 30, 20, 60, 15)


def test_paper_table1_is_consistent_with_eq1_and_turn_convention() -> None:
    """Under Eq. 1 with turns counted from 1, a task solved within t_max adds between 0.5/t_max and
    (t_max - 0.5)/t_max to AUV, so SR * 0.5/t_max <= AUV <= SR * (t_max - 0.5)/t_max. Every one of
    the 85 (model, environment) pairs of Table 1 satisfies it (to the table's rounding)."""
    checked = 0
    for line in TABLE1.splitlines():
        values = [float(v) / 100 for v in line.split()[1:]]
        for env, t_max in enumerate(T_MAX):
            sr, value = values[2 * env], values[2 * env + 1]
            assert sr * 0.5 / t_max - 5e-4 <= value <= sr * (t_max - 0.5) / t_max + 5e-4, line
            checked += 1
    assert checked == 85
    # The bound is tight enough to matter: a 100%-SR row must average below t_max / 4 turns.
    mean_turn = 20.5 - 0.752 * 20  # Gemini 2.5 Pro, BlocksWorld: AUV = mean (t_max - s + .5)/t_max
    assert auv([round(mean_turn)] * 10, 20) == pytest.approx((20 - 5 + 0.5) / 20)


def test_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="t_max must be a positive integer"):
        auv([1], 0)
    with pytest.raises(ValueError, match=r"steps_to_success\[1\]"):
        auv([1, -2], 5)
    with pytest.raises(ValueError, match="at least one task"):
        success_curve([], 5)
    with pytest.raises(ValueError, match="at least two points"):
        auv_from_curve([1.0])


def test_progress_curves_carry_forward_and_do_not_take_running_max() -> None:
    curve = progress_curve([[0.5, 0.25], [1.0]], 3)
    # task A: 0, .5, .25, .25 ; task B: 0, 1, 1, 1
    assert curve.tolist() == pytest.approx([0.0, 0.75, 0.625, 0.625])
    assert progress_auv([[0.5, 0.25], [1.0]], 3) == pytest.approx(auv_from_curve(curve))
    assert task_progress_auv([[2.0, -1.0]], 2).tolist() == pytest.approx(
        [(0 + 1) / 4 + (1 + 0) / 4]
    )


def _curves_one_by_one(traces: list[list[float]], t_max: int) -> np.ndarray:
    """The per-trace definition ``progress_curves`` vectorises."""
    out = np.zeros((len(traces), t_max + 1), dtype=np.float64)
    for row, trace in enumerate(traces):
        values = np.clip(np.asarray(list(trace), dtype=np.float64)[:t_max], 0.0, 1.0)
        if values.size:
            out[row, 1 : values.size + 1] = values
            out[row, values.size + 1 :] = values[-1]
    return out


@settings(max_examples=300)
@given(
    st.lists(
        st.lists(st.floats(-0.5, 1.5, allow_nan=False), max_size=12).map(
            lambda v: v if len(v) % 3 else np.asarray(v)  # lists, and arrays as summaries hold
        ),
        max_size=8,
    ),
    st.integers(1, 10),
)
def test_progress_curves_equal_the_per_trace_definition(traces: list, t_max: int) -> None:
    got = progress_curves(traces, t_max)
    assert got.shape == (len(traces), t_max + 1)
    assert np.array_equal(got, _curves_one_by_one(traces, t_max))


@given(st.lists(st.one_of(st.none(), st.integers(1, 40)), min_size=1, max_size=60), t_maxes)
def test_binary_progress_equals_success_auv(values: list[int | None], t_max: int) -> None:
    """A progress score that jumps to 1 at the solving turn and stays gives the success AUV."""
    traces = [[0.0] * 3 if v is None else [0.0] * (v - 1) + [1.0] for v in values]
    assert progress_auv(traces, t_max) == pytest.approx(auv(values, t_max))


def test_bootstrap_ci_contains_estimate_is_seeded_and_shrinks_like_sqrt_n() -> None:
    base = [1, 2, None, 5, 3, None, 8, 1, 2, 4]
    small = auv_ci(base * 10, 20, seed=1)
    again = auv_ci(base * 10, 20, seed=1)
    large = auv_ci(base * 40, 20, seed=1)
    assert small == again
    assert small.low <= small.estimate <= small.high
    assert small.estimate == pytest.approx(large.estimate)
    # Proposition 2: variance decays as 1/N, so 4x the tasks halves the interval width.
    ratio = (large.high - large.low) / (small.high - small.low)
    assert 0.4 < ratio < 0.6


def test_bootstrap_edge_cases_and_paired_difference() -> None:
    single = bootstrap_mean_ci([0.3])  # one task: an estimate, no interval (metrics.bootstrap)
    assert single.estimate == 0.3 and math.isnan(single.low) and math.isnan(single.high)
    with pytest.raises(ValueError, match="confidence level"):
        bootstrap_mean_ci([0.1, 0.2], level=1.5)
    diff = paired_difference_ci([0.9, 0.8, 0.7, 0.9], [0.5, 0.4, 0.6, 0.5])
    assert diff.estimate == pytest.approx(0.325)
    assert 0 < diff.low <= diff.estimate <= diff.high
    with pytest.raises(ValueError, match="equal lengths"):
        paired_difference_ci([0.1], [0.1, 0.2])


def test_bootstrap_resamples_tasks_not_repeats() -> None:
    """Ten repeats of each of 6 tasks that are all solved or all not are 6 observations, not 60: the
    task-clustered interval equals the one over the 6 task means and is wider than one that treats
    the 60 episodes as independent."""
    per_task = [1.0, 0.0, 1.0, 1.0, 0.0, 1.0]
    scores = [v for v in per_task for _ in range(10)]
    groups = [task for task in range(6) for _ in range(10)]
    clustered = bootstrap_mean_ci(scores, groups=groups, seed=3)
    by_task = bootstrap_mean_ci(per_task, seed=3)
    naive = bootstrap_mean_ci(scores, seed=3)
    assert clustered.n == 6 and naive.n == 60
    assert clustered.estimate == pytest.approx(4 / 6)
    assert (clustered.low, clustered.high) == pytest.approx((by_task.low, by_task.high))
    assert clustered.high - clustered.low > 2 * (naive.high - naive.low)
    # unequal repeats: the estimate stays the plain mean over episodes
    uneven = bootstrap_mean_ci([1.0, 1.0, 1.0, 0.0], groups=["a", "a", "a", "b"])
    assert uneven.estimate == 0.75 and uneven.n == 2
    with pytest.raises(ValueError, match="one group per score"):
        bootstrap_mean_ci([0.1, 0.2], groups=["a"])


@settings(max_examples=50)
@given(st.lists(st.floats(0, 1), min_size=2, max_size=40))
def test_bootstrap_interval_within_data_range(scores: list[float]) -> None:
    ci = bootstrap_mean_ci(scores, n_boot=200)
    assert min(scores) - 1e-12 <= ci.low <= ci.high <= max(scores) + 1e-12
    assert not math.isnan(ci.estimate)


@settings(max_examples=300)
@given(st.one_of(st.none(), st.integers(0, 400)), st.integers(1, 300))
def test_one_task_auv_is_task_auv_of_that_one_task_to_the_bit(turn: int | None, t_max: int) -> None:
    """A score asks one trajectory's AUV per episode, the run tables one per point: the scalar
    path must give numpy's value exactly (solved at 0, inside, at and past the window, never)."""
    from exploreval.metrics._tide_auv import one_task_auv, task_auv

    assert one_task_auv(turn, t_max) == float(task_auv([turn], t_max)[0])


def test_one_task_auv_refuses_what_task_auv_refuses() -> None:
    from exploreval.metrics._tide_auv import one_task_auv, task_auv

    for turn, t_max in ((-1, 10), (1.5, 10), (True, 10), (3, 0), (3, 2.5)):
        with pytest.raises(ValueError) as scalar:
            one_task_auv(turn, t_max)  # type: ignore[arg-type]
        with pytest.raises(ValueError) as vector:
            task_auv([turn], t_max)  # type: ignore[list-item,arg-type]
        assert str(scalar.value) == str(vector.value)


progress_values = st.one_of(
    st.floats(-0.5, 1.5, allow_nan=False),
    st.sampled_from([0.0, 1.0, 1 / 3, 2 / 3, 0.1, -0.0]),
    st.integers(-1, 2),
)


@settings(max_examples=400)
@given(
    st.lists(progress_values, max_size=320),
    st.one_of(st.integers(1, 20), st.sampled_from([7, 8, 9, 127, 128, 129, 136, 256, 257, 300])),
)
def test_one_task_progress_auv_is_numpys_to_the_bit(trace: list[float], t_max: int) -> None:
    """A score asks one progress AUV per episode without numpy: clipped, carried forward and
    summed in numpy's pairwise order, it must be the array code's value exactly (traces shorter
    and longer than the window, every summation regime: < 8, the 8-way block, split halves)."""
    from exploreval.metrics._tide_auv import one_task_progress_auv

    assert one_task_progress_auv(trace, t_max) == float(task_progress_auv([trace], t_max)[0])


def test_one_task_progress_auv_refuses_a_bad_window_as_the_array_code_does() -> None:
    from exploreval.metrics._tide_auv import one_task_progress_auv

    for t_max in (0, -3, 2.5, True):
        with pytest.raises(ValueError) as scalar:
            one_task_progress_auv([0.5], t_max)  # type: ignore[arg-type]
        with pytest.raises(ValueError) as vector:
            task_progress_auv([[0.5]], t_max)  # type: ignore[arg-type]
        assert str(scalar.value) == str(vector.value)
