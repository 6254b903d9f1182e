"""Per-step exploration labels (``exploration_steps``) against the episode totals: the totals of
``exploration_diagnostics`` are unchanged by the refactor into per-step labels (checked against
the pre-refactor implementation, kept here verbatim as the reference) and are sums of the labels.
Synthetic Stage-1 walks on generated worlds (no TextWorld), so every seed is cheap."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from exploreval.core import AgentInfo, EpisodeRecord, Step
from exploreval.suites.task2quiz._contract import CompiledTask, CoverageSignature, QuizWorld
from exploreval.suites.task2quiz._quiz_metrics import (
    _Graph,
    _target_rooms,
    exploration_diagnostics,
    exploration_steps,
    quiz_world,
    stage1_from_record,
)

# -- synthetic episodes ------------------------------------------------------------------------


def synthetic_world(difficulty: str, seed: int) -> QuizWorld:
    """A generated world with its selected coverage tasks, not compiled (no TextWorld)."""
    from exploreval.suites.task2quiz._coverage import select_tasks
    from exploreval.suites.task2quiz._generate import generate_world

    world = generate_world(difficulty, seed)
    _, _, selected = select_tasks(world)
    tasks = tuple(
        CompiledTask(
            task_id=f"t{i}",
            goal=f"{c.goal.kind} {c.goal.target}",
            game_file="",
            walkthrough=tuple(c.plan.commands),
            signature=CoverageSignature(),
            goal_kind=c.goal.kind,
            target=c.goal.target,
        )
        for i, c in enumerate(selected)
    )
    return QuizWorld(
        difficulty=difficulty,  # type: ignore[arg-type]
        seed=seed,
        content_hash="synthetic",
        world={},
        tasks=tasks,
        summary=world.summary(),
    )


def random_walk_record(world: QuizWorld, walk_seed: int, steps_per_task: int = 12) -> EpisodeRecord:
    """Stage 1 as a random walk over the room graph (doors ignored), with random opens and
    unlocks of the world's lockables, then two quiz steps (which the labels must skip)."""
    rng = np.random.default_rng(walk_seed)
    summary = world.summary or {}
    neighbours: dict[str, list[str]] = {r: [] for r in summary["rooms"]}
    for c in summary["connections"]:
        neighbours[c["src"]].append(c["dst"])
        neighbours[c["dst"]].append(c["src"])
    lockables = [*summary["doors"], *summary["containers"]]
    steps: list[Step] = []
    for task in range(len(world.tasks)):
        room = summary["start_room"]
        for _ in range(int(rng.integers(1, steps_per_task))):
            added: list[str] = []
            removed: list[str] = []
            roll = rng.random()
            if roll < 0.6 and neighbours[room]:
                room = neighbours[room][int(rng.integers(len(neighbours[room])))]
            elif roll < 0.8 and lockables:
                thing = lockables[int(rng.integers(len(lockables)))]
                added, removed = [f"open({thing})"], [f"locked({thing})"]
            info: dict[str, Any] = {
                "task_index": task,
                "command": "x",
                "feedback": "",
                "room": room,
                "facts_added": added,
                "facts_removed": removed,
            }
            steps.append(
                Step(t=len(steps), observation="", action="x", info=info, phase="task", task=task)
            )
    for q in range(2):
        steps.append(
            Step(
                t=len(steps),
                observation="",
                action="{}",
                info={"question_index": q},
                phase="quiz",
                task=q,
            )
        )
    return EpisodeRecord(
        episode_id=f"synthetic-{walk_seed}",
        env_id="exploreval/Task2Quiz-v0",
        family="task2quiz",
        seed=world.seed,
        agent=AgentInfo(name="walker", kind="scripted"),
        steps=steps,
        ground_truth={"quiz_world": world.model_dump(mode="json")},
    )


def same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return a.keys() == b.keys() and all(
        a[k] == b[k] or (isinstance(a[k], float) and math.isnan(a[k]) and math.isnan(b[k]))
        for k in a
    )


@settings(max_examples=60, deadline=None)
@given(
    difficulty=st.sampled_from(["easy", "medium", "hard"]),
    seed=st.integers(0, 60),
    walk=st.integers(0, 10_000),
)
def test_totals_are_unchanged_by_the_per_step_refactor(
    difficulty: str, seed: int, walk: int
) -> None:
    record = random_walk_record(synthetic_world(difficulty, seed), walk)
    assert same(exploration_diagnostics(record), reference_diagnostics(record))


@settings(max_examples=40, deadline=None)
@given(
    difficulty=st.sampled_from(["easy", "medium"]),
    seed=st.integers(0, 40),
    walk=st.integers(0, 999),
)
def test_totals_are_sums_of_the_per_step_labels(difficulty: str, seed: int, walk: int) -> None:
    record = random_walk_record(synthetic_world(difficulty, seed), walk)
    labels = exploration_steps(record)
    totals = exploration_diagnostics(record)
    assert len(labels) == len(record.steps)
    # quiz steps and only they have no label
    assert [label is None for label in labels] == [s.phase == "quiz" for s in record.steps]
    moves = [m for m in labels if m is not None and m.moved]
    for kind in ("explore", "exploit"):
        assert totals[f"{kind}_steps"] == sum(m.kind == kind for m in moves)
        assert totals[f"{kind}_errors"] == sum(m.kind == kind and bool(m.error) for m in moves)
    assert all((m.error is None) == (m.kind not in ("explore", "exploit")) for m in moves)
    if moves:
        assert totals["revisit_share"] == sum(m.revisit for m in moves) / len(moves)
    # a room is new exactly once, the first time the walk enters it (the start room never)
    world = quiz_world(record)
    assert world is not None and world.summary is not None
    entered = [m.room for m in moves if m.new_room]
    assert len(entered) == len(set(entered))
    assert world.summary["start_room"] not in entered
    seen = {world.summary["start_room"], *entered}
    assert seen == {s.room for s in stage1_from_record(record)} | {world.summary["start_room"]}
    assert totals["rooms_visited_share"] == len(seen) / len(world.summary["rooms"])
    # labels of non-moves carry the room and nothing else
    assert all(m.kind is None and not m.new_room for m in labels if m is not None and not m.moved)


# -- the pre-refactor implementation (t2q 34b7836), verbatim apart from its name --


def reference_diagnostics(record: EpisodeRecord) -> dict[str, Any]:
    """The grid suite's explore/exploit error idea on the room graph (docs/task2quiz.md).

    Per Stage-1 move (a step that changed room), with the agent's knowledge before it (rooms it
    stood in, passages it crossed, over all tasks so far): when the task's target room is known
    and a known route to it crosses no door that is still locked in this task, the move is an
    *exploit* step, an error unless it shortens the known route; otherwise it is an *explore*
    step, an error unless it crosses a passage never crossed before or shortens the known route
    to the nearest room with such a passage. Moves while the target is known but a key stands in
    the way (the target or the route is still locked) are key-fetching detours and are not
    classified. Also coverage: share of rooms visited and of
    closed doors/containers opened, and the share of moves into a room already visited in the
    same task (every task restarts in the start room, so earlier tasks do not count)."""
    world = quiz_world(record)
    steps = stage1_from_record(record)
    empty = {
        "rooms_visited_share": float("nan"),
        "opened_share": float("nan"),
        "revisit_share": float("nan"),
        "explore_steps": 0,
        "explore_errors": 0,
        "exploit_steps": 0,
        "exploit_errors": 0,
        "explore_error_rate": float("nan"),
        "exploit_error_rate": float("nan"),
    }
    if world is None or not world.summary:
        return empty
    summary = world.summary
    graph = _Graph({r: {} for r in summary["rooms"]})
    for c in summary["connections"]:
        graph.neighbours[c["src"]][c["dst"]] = c["door"]
        graph.neighbours[c["dst"]][c["src"]] = c["door"]
    lockables = {**summary["doors"], **summary["containers"]}
    start = summary["start_room"]
    visited: set[str] = {start}
    crossed: set[frozenset[str]] = set()
    opened: set[str] = set()
    counts = {"explore_steps": 0, "explore_errors": 0, "exploit_steps": 0, "exploit_errors": 0}
    moves = revisits = 0
    task, room, locked = None, start, set()
    in_task: set[str] = set()
    for step in steps:
        if step.task_index != task:
            task, room, in_task = step.task_index, start, {start}
            locked = {x for x, v in lockables.items() if v["state"] == "locked"}
        spec = world.tasks[task] if task is not None and task < len(world.tasks) else None
        targets = _target_rooms(
            summary, spec.goal_kind if spec else None, spec.target if spec else None
        )
        new_room = step.room if step.room and step.room != room else None
        if new_room is not None:
            moves += 1
            revisits += new_room in in_task
            in_task.add(new_room)
            needs_key = bool(spec and spec.target in locked)
            _reference_classify(
                graph,
                room,
                new_room,
                targets & visited,
                needs_key,
                visited,
                crossed,
                locked,
                counts,
            )
            crossed.add(frozenset((room, new_room)))
            visited.add(new_room)
            room = new_room
        for fact in step.facts_added:
            if fact.startswith("open("):
                opened.add(fact[5:-1])
        for fact in step.facts_removed:
            if fact.startswith("locked("):
                locked.discard(fact[7:-1])
    closed = [x for x, v in lockables.items() if v["state"] != "open"]
    out: dict[str, Any] = {
        **counts,
        "rooms_visited_share": len(visited) / len(summary["rooms"]),
        "opened_share": len(opened & set(closed)) / len(closed) if closed else float("nan"),
        "revisit_share": revisits / moves if moves else float("nan"),
    }
    for kind in ("explore", "exploit"):
        n = counts[f"{kind}_steps"]
        out[f"{kind}_error_rate"] = counts[f"{kind}_errors"] / n if n else float("nan")
    return out


def _reference_classify(
    graph: _Graph,
    room: str,
    new_room: str,
    known_targets: set[str],
    needs_key: bool,
    visited: set[str],
    crossed: set[frozenset[str]],
    locked: set[str],
    counts: dict[str, int],
) -> None:
    open_edges = {e for e in crossed if graph.neighbours[min(e)].get(max(e)) not in locked}
    before = graph.path_length(room, known_targets, open_edges) if known_targets else None
    if known_targets and (needs_key or before is None):
        return  # the target is known but a key stands in the way: a fetch detour, not classified
    if before is not None:
        counts["exploit_steps"] += 1
        after = graph.path_length(
            new_room, known_targets, open_edges | {frozenset((room, new_room))}
        )
        if after is None or after >= before:
            counts["exploit_errors"] += 1
        return
    counts["explore_steps"] += 1
    if frozenset((room, new_room)) not in crossed:
        return  # a passage never crossed: exploring
    frontier = {
        r for r in visited if any(frozenset((r, o)) not in crossed for o in graph.neighbours[r])
    }
    d_before = graph.path_length(room, frontier, crossed)
    d_after = graph.path_length(new_room, frontier, crossed)
    if d_before is None or d_after is None or d_after >= d_before:
        counts["explore_errors"] += 1
