"""Coverage targets, the pruned planner and greedy weighted set cover (Algorithm 1)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from exploreval.suites.task2quiz._coverage import (
    WEIGHTS,
    candidate_goals,
    extract_targets,
    gain,
    greedy_cover,
    select_tasks,
)
from exploreval.suites.task2quiz._generate import generate_world
from exploreval.suites.task2quiz._planner import Goal, plan


def test_paper_example_fetch_task_covering_living_room_bedroom_chest() -> None:
    # "fetch an apple from the kitchen" traverses living room and bedroom and opens a chest
    universe = {"room:living room", "room:bedroom", "room:kitchen", "interaction:open(chest)",
                "object:apple", "object:lamp"}  # fmt: skip
    fetch = frozenset({"room:living room", "room:bedroom", "room:kitchen",
                       "interaction:open(chest)", "object:apple"})  # fmt: skip
    walk = frozenset({"room:living room", "room:bedroom"})
    lamp = frozenset({"room:living room", "object:lamp"})
    chosen = greedy_cover(universe, [walk, lamp, fetch])
    assert chosen == [2, 1]  # the fetch task first (gain 3+2+1+1+1=8), then the lamp (2)
    assert gain(fetch & universe) == 8.0


def test_interactions_outweigh_objects_outweigh_rooms() -> None:
    assert WEIGHTS["interaction"] > WEIGHTS["object"] > WEIGHTS["room"] > 0
    universe = {"room:a", "room:b", "object:x", "interaction:open(c)"}
    rooms_only = frozenset({"room:a", "room:b"})  # gain 2
    opener = frozenset({"interaction:open(c)"})  # gain 3
    chosen = greedy_cover(universe, [rooms_only, opener, frozenset({"object:x"})])
    assert chosen == [1, 0, 2]


def test_ties_go_to_the_earliest_candidate_and_uncoverable_targets_stop_the_loop() -> None:
    universe = {"room:a", "room:b", "room:z"}
    chosen = greedy_cover(universe, [frozenset({"room:a"}), frozenset({"room:b"}),
                                     frozenset({"room:a"})])  # fmt: skip
    assert chosen == [0, 1]  # room:z is covered by nobody: the loop breaks (s* is null)


def _brute_force_greedy(universe: set[str], covers: list[frozenset[str]]) -> list[int]:
    """Reference: recompute every gain from scratch and take the first maximum."""
    uncovered, chosen = set(universe), []
    while uncovered:
        gains = [
            -1.0 if i in chosen else sum(WEIGHTS[t.split(":")[0]] for t in c if t in uncovered)
            for i, c in enumerate(covers)
        ]
        best = max(gains)
        if best <= 0:
            break
        i = gains.index(best)
        chosen.append(i)
        uncovered -= covers[i]
    return chosen


targets = st.sampled_from(
    [f"{kind}:{i}" for kind in ("room", "object", "interaction") for i in range(6)]
)


@given(st.lists(st.frozensets(targets, max_size=8), min_size=1, max_size=12))
@settings(max_examples=300, deadline=None)
def test_greedy_matches_reference_covers_and_never_picks_zero_gain(
    covers: list[frozenset[str]],
) -> None:
    universe = set().union(*covers)
    chosen = greedy_cover(universe, covers)
    assert chosen == _brute_force_greedy(universe, covers)
    assert set().union(*(covers[i] for i in chosen)) >= universe
    uncovered = set(universe)
    for i in chosen:
        assert gain(covers[i] & uncovered) > 0
        uncovered -= covers[i]


worlds = st.tuples(st.sampled_from(["easy", "medium", "hard"]), st.integers(0, 10_000))


@given(worlds)
@settings(max_examples=200, deadline=None)
def test_selected_tasks_cover_the_reachable_universe(case: tuple[str, int]) -> None:
    world = generate_world(*case)
    universe, candidates, selected = select_tasks(world)
    assert len(candidates) == len(candidate_goals(world))
    covered = set().union(*(c.cover for c in selected))
    assert covered >= universe
    assert len({c.goal for c in selected}) == len(selected)
    # every candidate covers its own target
    for cand in candidates:
        kind = cand.goal.kind
        expected = {
            "go": f"room:{cand.goal.target}",
            "take": f"object:{cand.goal.target}",
            "eat": f"interaction:eat({cand.goal.target})",
            "open": f"interaction:open({cand.goal.target})",
        }.get(kind)
        if kind == "unlock":
            assert any(i.startswith(f"unlock({cand.goal.target},") for i in cand.plan.interactions)
        else:
            assert expected in cand.cover
    # distractors are never targets
    for item in world.items.values():
        if item.distractor:
            assert f"object:{item.id}" not in universe


def test_universe_definition_on_one_world() -> None:
    world = generate_world("easy", 0)
    universe = extract_targets(world)
    rooms = {t for t in universe if t.startswith("room:")}
    assert rooms == {f"room:{r}" for r in world.rooms}
    for x in world.lockables():
        assert (f"interaction:open({x})" in universe) == (world.state_of(x) != "open")


def test_walkthrough_ends_when_the_goal_first_holds() -> None:
    # an "open" goal never passes through the door it must open
    for seed in range(30):
        world = generate_world("medium", seed)
        for x in world.doors:
            if world.state_of(x) == "open":
                continue
            p = plan(world, Goal("open", x))
            opens = [c for c in p.commands if c == f"open {world.name(x)}"]
            assert opens == [p.commands[-1]]


def test_planner_never_routes_a_key_fetch_through_a_door_that_needs_another_fetch() -> None:
    # hard/1208: the far side of d_4 is only reachable through d_1, whose key lies behind d_4;
    # a cost-only Dijkstra chose that side and failed. Every candidate must plan now.
    world = generate_world("hard", 1208)
    for goal in candidate_goals(world):
        p = plan(world, goal)
        assert p.commands
    p = plan(world, Goal("open", "d_4"))
    assert p.commands[-1] == f"open {world.name('d_4')}"


def test_every_candidate_of_many_worlds_plans() -> None:
    for difficulty in ("easy", "medium", "hard"):
        for seed in range(150):
            world = generate_world(difficulty, seed)
            for goal in candidate_goals(world):
                plan(world, goal)  # raises PlanningError on failure


@settings(max_examples=20, deadline=None)
@given(st.sampled_from(["easy", "medium", "hard"]), st.integers(0, 10_000))
def test_the_paper_universe_is_rooms_interactions_and_keys(difficulty: str, seed: int) -> None:
    """``paper`` drops the portable objects that are not keys; everything else is ``broad``'s,
    and its selected tasks still cover it all."""
    from exploreval.suites.task2quiz._coverage import select_tasks

    world = generate_world(difficulty, seed)  # type: ignore[arg-type]
    paper, broad = extract_targets(world, "paper"), extract_targets(world, "broad")
    assert paper <= broad
    dropped = {t.split(":", 1)[1] for t in broad - paper}
    assert all(t.startswith("object:") for t in broad - paper)
    assert all(world.items[i].kind != "k" for i in dropped)
    kept = [t.split(":", 1)[1] for t in paper if t.startswith("object:")]
    assert all(world.items[i].kind == "k" for i in kept)
    universe, _, selected = select_tasks(world, "paper")
    assert universe == paper
    assert paper <= set().union(*(c.cover for c in selected)) if selected else not paper


def test_an_unknown_universe_is_refused_with_the_choices() -> None:
    import pytest

    with pytest.raises(ValueError, match="expected one of paper, broad"):
        extract_targets(generate_world("easy", 0), "everything")
