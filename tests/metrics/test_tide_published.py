"""TIDE's Loop Ratio, one-step loop ratio and windowed AUV as the authors' code computes them.

Hand-worked trajectories give the values of each reading; a property checks the default against
a plain transcription of the authors' scan (quadratic, list slices, as their analysis does it).
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from exploreval.metrics.tide import (
    DEFAULT_LOOP_DEFINITION,
    LOOP_DEFINITIONS,
    Trajectory,
    loop_ratio,
    loop_stats,
    loop_steps,
    one_step_loop_mask,
    published_loop_mask,
    windowed_auv,
)


def _pairs(states: str, actions: str) -> list[tuple[str, str]]:
    return list(zip(states, actions, strict=True))


def _authors_scan(obs: list[object], act: list[object]) -> list[bool]:
    """The scan as their analysis reads: the first return to obs[i], distinct states between,
    the next lap compared by slices, then a jump to the return."""
    n = len(obs)
    repeating = [False] * n
    i = 0
    while i < n:
        end = -1
        for j in range(i + 1, n):
            if obs[j] == obs[i]:
                if len(set(obs[i:j])) == j - i:
                    end = j
                break
        if end < 0:
            i += 1
            continue
        length = end - i
        same_obs = obs[i:end] == obs[end : end + length]
        if end + length <= n and same_obs and act[i:end] == act[end : end + length]:
            for k in range(end, end + length):
                repeating[k] = True
        i = end
    return repeating


def test_the_published_scan_is_the_default() -> None:
    assert DEFAULT_LOOP_DEFINITION == "published"
    assert set(LOOP_DEFINITIONS) == {"published", "exhaustive"}


def test_three_laps_of_two_steps() -> None:
    """ABABAB: cycle AB at 0, its lap repeated at 2-3; cycle AB at 2, repeated at 4-5 (4 of 6).
    The exhaustive reading needs the repeated lap to close on A: 4-5 does not (no final state),
    so it marks 2-4 (the rotated lap BA at 3-4 closes on B at 5)."""
    trajectory = _pairs("ABABAB", "xyxyxy")
    assert loop_steps(trajectory) == [False, False, True, True, True, True]
    mask, stats = loop_stats(trajectory)
    assert (stats.loop_steps, stats.cycles, stats.loops, stats.steps) == (4, 2, 2, 6)
    assert mask.tolist() == loop_steps(trajectory)
    assert loop_steps(trajectory, definition="exhaustive") == [
        False,
        False,
        True,
        True,
        True,
        False,
    ]


def test_an_open_last_lap_counts_only_in_the_published_scan() -> None:
    """ABAB: the scan compares AB (0-1) with AB (2-3) and counts 2 of 4; the exhaustive reading
    counts the lap only once the final state A closes it."""
    trajectory = _pairs("ABAB", "xyxy")
    assert loop_ratio([trajectory]) == 0.5
    assert loop_ratio([trajectory], definition="exhaustive") == 0.0
    closed = Trajectory(trajectory, final_state="A")
    assert loop_ratio([closed], definition="exhaustive") == 0.5
    assert loop_ratio([closed]) == 0.5  # the authors' code has no final state


def test_a_rotated_lap_counts_only_in_the_exhaustive_reading() -> None:
    """ACBABABA: the scan finds cycle ACB (0-2), whose next lap ABA differs; then cycle AB at 3,
    repeated at 5-6 (2 of 8); then AB at 5, whose lap would pass the end. The exhaustive reading
    also sees the lap BA (4-5) repeating BA (2-3): steps 4-6, 3 of 8."""
    trajectory = _pairs("ACBABABA", "acbababa")
    mask, cycles, loops = published_loop_mask(list("ACBABABA"), list("acbababa"))
    assert [t for t, looped in enumerate(mask) if looped] == [5, 6]
    assert (cycles, loops) == (3, 1)
    assert loop_ratio([trajectory]) == 2 / 8
    looped = loop_steps(trajectory, definition="exhaustive")
    assert [t for t, v in enumerate(looped) if v] == [4, 5, 6]


def test_a_nested_return_moves_the_scan_by_one() -> None:
    """ABBA: from 0 the first return to A is 3, but B repeats inside, so no cycle at 0; from 1,
    B returns at 2 (a one-step cycle, action y) and its next lap, step 2 (state B, action y),
    repeats it: 1 loop step. With z at step 2 the lap differs: 0."""
    mask, cycles, loops = published_loop_mask(list("ABBA"), list("xyyx"))
    assert mask == [False, False, True, False]
    assert (cycles, loops) == (1, 1)
    mask, cycles, loops = published_loop_mask(list("ABBA"), list("xyzx"))
    assert mask == [False] * 4
    assert (cycles, loops) == (1, 0)


def test_different_actions_break_a_lap() -> None:
    """ABABAB with z at step 3: lap 2-3 (x z) differs from 0-1 (x y), and lap 4-5 (x y) from
    2-3 (x z), so the scan counts nothing although the states repeat."""
    assert loop_steps(_pairs("ABABAB", "xyxzxy")) == [False] * 6


def test_pooled_over_trajectories_as_eq4() -> None:
    first = _pairs("ABABAB", "xyxyxy")  # 4 of 6
    second = _pairs("ABCD", "wxyz")  # 0 of 4
    assert loop_ratio([first, second]) == pytest.approx(4 / 10)


def test_an_unknown_definition_is_named() -> None:
    with pytest.raises(ValueError, match="unknown loop definition 'strict'.*published, exhaustive"):
        loop_ratio([_pairs("AB", "xy")], definition="strict")  # type: ignore[arg-type]


@given(st.lists(st.tuples(st.sampled_from("ABCD"), st.sampled_from("xy")), min_size=0, max_size=40))
def test_the_default_agrees_with_the_authors_scan(steps: list[tuple[str, str]]) -> None:
    states = [s for s, _ in steps]
    actions = [a for _, a in steps]
    expected = _authors_scan(states, actions)
    assert loop_steps(steps) == expected
    assert published_loop_mask(states, actions)[0] == expected
    ratio = sum(expected) / len(steps) if steps else 0.0
    assert loop_ratio([steps]) == pytest.approx(ratio)


def test_one_step_loops_compare_normalised_text_and_skip_the_no_op() -> None:
    states = ["at  s1", "AT s1", "at s1", "at s1", "at s1", "at s2"]
    actions = ["up", " Up", "do_nothing", "do_nothing", "up", "up"]
    # step 1 repeats step 0 after normalising both; 3 repeats 2 but is the no-op; 5 moved state
    assert one_step_loop_mask(states, actions) == [False, True, False, False, False, False]


def test_one_step_loops_need_the_same_observation() -> None:
    assert one_step_loop_mask(["a", "b", "b"], ["go", "go", "go"]) == [False, False, True]


def test_windowed_auv_by_hand() -> None:
    """Solved at 1, 5, 20 and never: pass@1 over turns 1..20 is 0.25 (1-4), 0.5 (5-19), 0.75
    (20); minus the minimum 0.25 the trapezoids sum to 0.125 + 14 * 0.25 + 0.375 = 4.0, / 19."""
    assert windowed_auv([1, 5, None, 20]) == pytest.approx(4.0 / 19)


def test_windowed_auv_from_zero_starts_at_zero() -> None:
    """start=0 is the authors' Table 1 window: their curve has no turn 0, read as 0, so the
    minimum is 0. One task solved at turn 2, window 0..4: trapezoids 0, 0.5, 1 and 1, / 4."""
    assert windowed_auv([2], start=0, end=4) == pytest.approx((0 + 0.5 + 1 + 1) / 4)


@pytest.mark.parametrize(("start", "end"), [(5, 5), (-1, 3), (4, 2)])
def test_windowed_auv_refuses_an_empty_window(start: int, end: int) -> None:
    with pytest.raises(ValueError, match="0 <= start < end"):
        windowed_auv([1], start=start, end=end)


def test_lengths_must_match() -> None:
    with pytest.raises(ValueError, match="3 states, 1 actions"):
        published_loop_mask(["a", "b", "c"], ["x"])
