"""Paired comparison: properties (identical runs, swapping A/B) and known small cases."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exploreval.analysis import compare_tables, permutation_p, sign_test_p


def _table(
    success: list[bool], steps: list[float], agent: str = "x", run: str = "r"
) -> pd.DataFrame:
    n = len(success)
    return pd.DataFrame(
        {
            "run_id": [run] * n,
            "episode_id": [f"{run}-{i}" for i in range(n)],
            "env_id": ["exploreval/GridDAG-v0"] * n,
            "family": ["grid"] * n,
            "preset": ["p"] * n,
            "seed": list(range(n)),
            "repeat": [0] * n,
            "agent": [agent] * n,
            "status": ["ok"] * n,
            "success": success,
            "steps": steps,
        }
    )


outcomes = st.lists(
    st.tuples(st.booleans(), st.integers(min_value=0, max_value=50)), min_size=1, max_size=30
)


@settings(max_examples=40, deadline=None)
@given(outcomes)
def test_identical_runs_give_zero_delta_and_p_one(rows: list[tuple[bool, int]]) -> None:
    table = _table([r[0] for r in rows], [float(r[1]) for r in rows])
    result = compare_tables(table, table.assign(run_id="s"), name_a="A", name_b="B")
    (item,) = result.comparisons
    assert item.pairs == len(rows) and not item.flipped and result.warnings == []
    for metric in item.metrics:
        assert metric.delta == 0.0
        assert metric.p_permutation == 1.0
        if metric.n > 1:
            assert metric.ci_low == 0.0 and metric.ci_high == 0.0
    assert item.success_sign_test_p == 1.0


@settings(max_examples=40, deadline=None)
@given(outcomes, outcomes)
def test_swapping_a_and_b_negates_deltas(
    rows_a: list[tuple[bool, int]], rows_b: list[tuple[bool, int]]
) -> None:
    n = min(len(rows_a), len(rows_b))
    a = _table([r[0] for r in rows_a[:n]], [float(r[1]) for r in rows_a[:n]], agent="m1")
    b = _table([r[0] for r in rows_b[:n]], [float(r[1]) for r in rows_b[:n]], agent="m2", run="s")
    ab = compare_tables(a, b).comparisons[0]
    ba = compare_tables(b, a).comparisons[0]
    for forward, backward in zip(ab.metrics, ba.metrics, strict=True):
        assert forward.metric == backward.metric
        assert forward.delta == pytest.approx(-backward.delta, abs=1e-12)
        if n > 1:
            assert forward.ci_low == pytest.approx(-backward.ci_high, abs=1e-9)
            assert forward.ci_high == pytest.approx(-backward.ci_low, abs=1e-9)
        assert forward.p_permutation == pytest.approx(backward.p_permutation)
        assert forward.ci_low - 1e-9 <= forward.delta <= forward.ci_high + 1e-9 or n == 1
    assert ab.success_sign_test_p == ba.success_sign_test_p
    assert len(ab.flipped) == len(ba.flipped)
    assert {f.solved_by for f in ab.flipped} == {
        {"A": "B", "B": "A"}[f.solved_by] for f in ba.flipped
    }


def test_flipped_episodes_and_tests_on_a_known_case() -> None:
    a = _table([True, True, False, False, True], [5, 6, 9, 9, 4], agent="m1")
    b = _table([True, False, True, True, True], [5, 9, 4, 3, 4], agent="m2", run="s")
    (item,) = compare_tables(a, b).comparisons
    flips = {(f.seed, f.solved_by) for f in item.flipped}
    assert flips == {(1, "A"), (2, "B"), (3, "B")}
    success = next(m for m in item.metrics if m.metric == "success")
    assert success.delta == pytest.approx(0.2)
    # exact sign test with 2 wins for B and 1 for A: P(X<=1 | n=3) * 2 = 1
    assert item.success_sign_test_p == 1.0
    steps = next(m for m in item.metrics if m.metric == "steps")
    assert steps.delta == pytest.approx((0 + 3 - 5 - 6 + 0) / 5)
    # non-zero differences (3, -5, -6): 8 sign patterns, |sum| >= 8 for 4 of them
    assert steps.p_permutation == pytest.approx(4 / 8)


def test_sign_test_and_permutation_known_values() -> None:
    assert sign_test_p(10, 0) == pytest.approx(2 / 2**10)
    assert sign_test_p(0, 0) == 1.0
    assert permutation_p(np.zeros(5)) == 1.0
    # 20 equal positive differences: only the all-positive and all-negative patterns reach it
    p = permutation_p(np.ones(20), permutations=20_000, seed=1)
    assert p < 0.001


def test_no_overlap_warns() -> None:
    a = _table([True, False], [3, 4])
    b = _table([True, False], [3, 4], run="s").assign(seed=[10, 11])
    result = compare_tables(a, b, name_a="A", name_b="B")
    assert result.comparisons == []
    assert any("share no episode spec" in w for w in result.warnings)


def test_partial_overlap_warns_and_pairs_only_shared_specs() -> None:
    a = _table([True, False, True], [3, 4, 5])
    b = _table([True, True], [3, 4], run="s")
    result = compare_tables(a, b, name_a="A", name_b="B")
    assert result.comparisons[0].pairs == 2
    assert any("partial overlap" in w and "1 only in A" in w for w in result.warnings)


def test_errored_episodes_are_not_paired() -> None:
    a = _table([True, True], [3, 4])
    b = _table([False, True], [3, 4], run="s").assign(status=["error", "ok"])
    (item,) = compare_tables(a, b).comparisons
    assert item.pairs == 1 and not item.flipped
    assert not math.isnan(item.metrics[0].delta)


def test_compare_names_each_metrics_definition_and_warns_when_the_runs_differ() -> None:
    a = _table([True, False], [3, 4]).assign(tide_loop_ratio=[0.1, 0.2])
    b = _table([True, False], [3, 4], run="s").assign(tide_loop_ratio=[0.1, 0.3])
    published = {"tide_loop_definition": ["published"] * 2}
    same = compare_tables(a.assign(**published), b.assign(**published), name_a="A", name_b="B")
    assert same.definitions == {"tide_loop_ratio": "published"}
    assert not any("different definitions" in w for w in same.warnings)
    old = compare_tables(a, b.assign(**published), name_a="A", name_b="B")  # A scored before
    assert old.definitions == {"tide_loop_ratio": "A: unlabelled; B: published"}
    assert any("tide_loop_ratio is by different definitions" in w for w in old.warnings)
    exhaustive = b.assign(tide_loop_definition=["exhaustive"] * 2)
    mixed = compare_tables(a.assign(**published), exhaustive, name_a="A", name_b="B")
    assert mixed.definitions["tide_loop_ratio"] == "A: published; B: exhaustive"
    assert compare_tables(_table([True], [3]), _table([True], [3], run="s")).definitions == {}


def test_metric_definitions_name_what_each_row_was_made_by() -> None:
    from exploreval.analysis import metric_definitions

    table = _table([True, False], [3, 4]).assign(tide_loop_ratio=[0.1, 0.2])
    assert metric_definitions(table) == {}  # scored before the label existed: nothing claimed
    labelled = table.assign(tide_loop_definition=["published", "exhaustive"])
    assert metric_definitions(labelled) == {"tide_loop_ratio": "exhaustive, published"}
