"""The seeded world generator: Table 1 sizes, consistent directions, distinct names, locks that
keep everything reachable (checked by an independent search), byte-identical JSON across
processes and PYTHONHASHSEED values."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exploreval.suites.task2quiz import _vocab
from exploreval.suites.task2quiz._benchmark import object_count
from exploreval.suites.task2quiz._generate import generate_world
from exploreval.suites.task2quiz._layout import DIRECTIONS, OPPOSITE
from exploreval.suites.task2quiz._locks import reachability
from exploreval.suites.task2quiz._presets import PRESETS, lock_count

worlds = st.tuples(st.sampled_from(["easy", "medium", "hard"]), st.integers(0, 10_000))


@given(worlds)
@settings(max_examples=150, deadline=None)
def test_sizes_follow_table1(case: tuple[str, int]) -> None:
    difficulty, seed = case
    world = generate_world(difficulty, seed)
    preset = PRESETS[difficulty]
    assert preset.rooms[0] <= len(world.rooms) <= preset.rooms[1]
    assert preset.objects[0] <= object_count(world) <= preset.objects[1]
    assert world.start in world.rooms
    kinds = Counter(i.kind for i in world.items.values())
    assert kinds["o"] >= 1 and kinds["f"] >= 1 and world.containers and world.supporters


@given(worlds)
@settings(max_examples=150, deadline=None)
def test_layout_is_a_connected_grid_with_consistent_directions(case: tuple[str, int]) -> None:
    world = generate_world(*case)
    seen_cells = set()
    for conn in world.connections:
        dx, dy = DIRECTIONS[conn.direction]
        (ax, ay), (bx, by) = world.positions[conn.src], world.positions[conn.dst]
        assert (bx - ax, by - ay) == (dx, dy)
        seen_cells.add((conn.src, conn.dst))
    assert len(set(world.positions.values())) == len(world.rooms)
    # each room has at most one exit per direction
    for room in world.rooms:
        dirs = [d for d, _, _ in world.neighbours(room)]
        assert len(dirs) == len(set(dirs))
        for d, other, door in world.neighbours(room):
            assert (OPPOSITE[d], room, door) in world.neighbours(other)
    # connected when every door is passable
    rooms, frontier = {world.start}, [world.start]
    while frontier:
        for _, other, _ in world.neighbours(frontier.pop()):
            if other not in rooms:
                rooms.add(other)
                frontier.append(other)
    assert rooms == set(world.rooms)


@given(worlds)
@settings(max_examples=150, deadline=None)
def test_locks_keys_and_reachability(case: tuple[str, int]) -> None:
    world = generate_world(*case)
    lockables = world.lockables()
    locked = [x for x in lockables if world.state_of(x) == "locked"]
    assert len(locked) == lock_count(len(lockables))
    assert sorted(world.matches.values()) == sorted(locked)  # one key per lock
    for key, lock in world.matches.items():
        assert world.items[key].kind == "k" and not world.items[key].distractor
        assert world.items[key].location != ("in", lock)  # never inside its own container
        # reachable without passing through its own lock: no cycles
        assert key in reachability(world, blocked=frozenset({lock})).items
    useless = [i for i in world.items.values() if i.kind == "k" and i.id not in world.matches]
    assert all(k.distractor for k in useless)
    assert reachability(world).complete(world)


def test_lock_rounding_is_half_up() -> None:
    assert [lock_count(n) for n in range(0, 8)] == [0, 0, 1, 1, 2, 2, 2, 3]


def test_the_search_detects_a_key_behind_its_own_lock() -> None:
    checked = 0
    for seed in range(40):
        world = generate_world("medium", seed)
        for key, lock in sorted(world.matches.items()):
            if lock in world.containers:
                world.items[key].location = ("in", lock)  # the key inside its own container
            else:  # the key on a side of its door that is cut off while the door is locked
                cut = set(world.rooms) - reachability(world, blocked=frozenset({lock})).rooms
                if not cut:
                    continue
                world.items[key].location = ("room", sorted(cut)[0])
            assert not reachability(world).complete(world)
            checked += 1
            break
    assert checked >= 30


def test_names_are_distinct_and_share_no_distinguishing_word() -> None:
    heads = {"key", "door", "gate", "hatch", "portal"}
    counts = Counter(
        w
        for names in (_vocab.ROOMS, _vocab.DOORS, _vocab.CONTAINERS, _vocab.SUPPORTERS,
                      _vocab.PORTABLE, _vocab.FOOD, _vocab.KEYS)
        for name in names
        for w in name.split()
        if w not in heads
    )  # fmt: skip
    assert [w for w, n in counts.items() if n > 1] == []
    for difficulty, seed in itertools.product(PRESETS, range(20)):
        world = generate_world(difficulty, seed)
        names = list(world.summary()["names"].values())
        assert len(names) == len(set(names))


def test_same_seed_same_world_and_different_seeds_differ() -> None:
    a = generate_world("medium", 5).summary()
    assert a == generate_world("medium", 5).summary()
    assert a != generate_world("medium", 6).summary()
    assert a != generate_world("hard", 5).summary()


_HASH_SCRIPT = """
from exploreval.suites.task2quiz._compile import base_world_json, canonical_json, content_hash
from exploreval.suites.task2quiz._generate import generate_world
data = base_world_json(generate_world("medium", 3))
print(content_hash(data), len(canonical_json(data)))
"""


@pytest.mark.slow
def test_world_json_is_identical_across_processes_and_hash_seeds() -> None:
    outs = []
    for hash_seed in ("1", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        proc = subprocess.run(
            [sys.executable, "-c", _HASH_SCRIPT], env=env, capture_output=True, text=True,
            check=True,
        )  # fmt: skip
        outs.append(proc.stdout.strip())
    assert outs[0] == outs[1] and len(outs[0].split()[0]) == 64


def test_textworld_facts_have_inverse_directions() -> None:
    from exploreval.suites.task2quiz._compile import base_world_json

    for difficulty in PRESETS:
        data = base_world_json(generate_world(difficulty, 1))
        facts = {(f["name"], tuple(a["name"] for a in f["arguments"])) for f in data["world"]}
        inverse = {"north_of": "south_of", "south_of": "north_of",
                   "east_of": "west_of", "west_of": "east_of"}  # fmt: skip
        directional = [f for f in facts if f[0] in inverse]
        assert directional
        for name, (a, b) in directional:
            assert (inverse[name], (b, a)) in facts


def test_table1_averages_are_bounded_and_the_papers_own_totals_disagree_with_them() -> None:
    """Issue 44: the generator's Table 1 averages over the paper's 10 worlds per difficulty stay
    where docs/task2quiz.md says (walkthroughs from the initial state, and played one after
    another; questions), and the question counts the paper's own per-type totals imply for
    worlds of its sizes are within 10% of ours and 19-22% off its Table 1 (the reason ours
    differ: bench/bench_task2quiz_table1.py)."""
    import importlib.util
    import statistics
    from pathlib import Path
    from types import SimpleNamespace

    path = Path(__file__).parents[3] / "bench" / "bench_task2quiz_table1.py"
    spec = importlib.util.spec_from_file_location("bench_t2q_table1", path)
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    from exploreval.suites.task2quiz._coverage import select_tasks
    from exploreval.suites.task2quiz._generate import generate_world
    from exploreval.suites.task2quiz._quiz_api import generate_questions

    ours = {"easy": (5.79, 5.04, 29.1), "medium": (8.04, 5.68, 52.2), "hard": (10.02, 7.40, 112.1)}
    elements: dict[str, dict[str, float]] = {}
    for difficulty, (walk, sequential, questions) in ours.items():
        independent, played, asked = [], [], []
        counts: dict[str, list[int]] = {"things": [], "connections": [], "locks": [],
                                        "lockables": []}  # fmt: skip
        for seed in range(10):
            world = generate_world(difficulty, seed)
            _, _, chosen = select_tasks(world)
            independent += [len(c.plan.commands) for c in chosen]
            played += bench._sequential(world, chosen)
            asked.append(len(generate_questions(SimpleNamespace(summary=world.summary()), seed)))
            counts["things"].append(
                len(world.items) + len(world.containers) + len(world.supporters)
            )
            counts["connections"].append(len(world.connections))
            lockables = [*world.doors, *world.containers]
            counts["locks"].append(sum(world.key_of(x) is not None for x in lockables))
            counts["lockables"].append(len(lockables))
        assert statistics.mean(independent) == pytest.approx(walk, abs=0.01)
        assert statistics.mean(played) == pytest.approx(sequential, abs=0.01)
        assert statistics.mean(played) < statistics.mean(independent)
        assert statistics.mean(asked) == pytest.approx(questions, abs=0.05)
        elements[difficulty] = {k: statistics.mean(v) for k, v in counts.items()}
    for difficulty, (_, _, questions) in ours.items():
        implied = sum(
            total
            / (10 * sum(elements[d][element] for d in elements))
            * elements[difficulty][element]
            for _, element, total in bench.TYPE_TOTALS
        )
        paper = bench.PAPER[difficulty][1]
        assert abs(implied / questions - 1) < 0.10
        assert 0.18 < abs(implied / paper - 1) < 0.23


def test_the_default_quiz_asks_table2s_mix_and_each_rule_asks_what_it_says() -> None:
    """Issue 57: over the paper's 30 worlds (seeds 0-9 per difficulty) the default ``paper``
    rule asks each type within 10% of what the paper's Table 2 implies (611 / 422 / 405 / 170 /
    359), and in total within 10% of its 1,967; each rule's count per world is its formula over
    the world's elements (``per-element``: one question per element, as before)."""
    import importlib.util
    from pathlib import Path
    from types import SimpleNamespace

    from exploreval.suites.task2quiz._generate import generate_world
    from exploreval.suites.task2quiz._quiz_api import generate_questions

    path = Path(__file__).parents[3] / "bench" / "bench_task2quiz_table1.py"
    spec = importlib.util.spec_from_file_location("bench_t2q_table1", path)
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    totals = {qtype: 0 for qtype, _, _ in bench.TYPE_TOTALS}
    for difficulty in ("easy", "medium", "hard"):
        for seed in range(10):
            summary = generate_world(difficulty, seed).summary()
            world = SimpleNamespace(summary=summary)
            things = len(summary["items"]) + len(summary["containers"]) + len(summary["supporters"])
            adjacent = len({frozenset((c["src"], c["dst"])) for c in summary["connections"]})
            connections = len(summary["connections"])
            doors = sum(1 for c in summary["connections"] if c["door"])
            lockables = {**summary["doors"], **summary["containers"]}
            locks = sum(1 for v in lockables.values() if v["key"] is not None)
            rooms = len(summary["rooms"])
            non_adjacent = rooms * (rooms - 1) // 2 - adjacent
            expected = {
                "paper": {
                    "location": things + 1,
                    "connectivity": adjacent + min(non_adjacent, (adjacent + 1) // 2),
                    "direction": connections + doors,
                    "match": 2 * locks,
                    "property": 2 * len(lockables),
                },
                "per-element": {
                    "location": things,
                    "connectivity": adjacent + min(non_adjacent, adjacent),
                    "direction": connections,
                    "match": locks,
                    "property": 2 * len(lockables),
                },
            }
            for rule, counts in expected.items():
                asked = [q.qtype for q in generate_questions(world, seed, rule)]
                assert {t: asked.count(t) for t in counts} == counts, (difficulty, seed, rule)
            for qtype in totals:
                totals[qtype] += expected["paper"][qtype]
    for qtype, _, paper in bench.TYPE_TOTALS:
        assert abs(totals[qtype] / paper - 1) < 0.10, (qtype, totals[qtype], paper)
    assert abs(sum(totals.values()) / 1967 - 1) < 0.10
