"""Coverage-oriented tasks: targets, one candidate per target, greedy weighted set cover (Alg. 1).

Targets (the "reachable universe") are strings with a type prefix:

* ``room:<r>`` every room reachable from the start (all rooms, after lock refinement);
* ``object:<id>`` the matching keys (universe ``paper``, the default), or every portable
  object, food and matching key (universe ``broad``); distractors (objects no task needs,
  useless keys) are never targets;
* ``interaction:open(<x>)`` every door/container not open at the start,
  ``interaction:unlock(<x>,<k>)`` every locked one, ``interaction:eat(<f>)`` every food.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from exploreval.suites.task2quiz._contract import CoverageSignature
from exploreval.suites.task2quiz._locks import reachability
from exploreval.suites.task2quiz._planner import Goal, Plan, plan
from exploreval.suites.task2quiz._world import World

#: Which things are targets (docs/task2quiz.md, "Tasks"): ``paper`` = rooms + interactions +
#: keys, the reading of the paper's entity-level signatures that reproduces Table 1's task
#: counts best; ``broad`` = every non-distractor portable object as well (earlier default).
TASK_UNIVERSES = ("paper", "broad")
DEFAULT_TASK_UNIVERSE = "paper"

#: Type weights of GAIN: interactions > objects > rooms.
WEIGHTS: dict[str, float] = {"interaction": 3.0, "object": 2.0, "room": 1.0}


@dataclass(frozen=True)
class Candidate:
    goal: Goal
    plan: Plan

    @property
    def cover(self) -> frozenset[str]:
        return frozenset(signature_targets(signature_of(self.plan)))


def signature_of(p: Plan) -> CoverageSignature:
    return CoverageSignature(
        rooms=tuple(p.rooms), objects=tuple(p.objects), interactions=tuple(p.interactions)
    )


def signature_targets(sig: CoverageSignature) -> list[str]:
    return (
        [f"room:{r}" for r in sig.rooms]
        + [f"object:{o}" for o in sig.objects]
        + [f"interaction:{i}" for i in sig.interactions]
    )


def check_universe(universe: str) -> str:
    if universe not in TASK_UNIVERSES:
        raise ValueError(f"task universe {universe!r}: expected one of {', '.join(TASK_UNIVERSES)}")
    return universe


def extract_targets(world: World, universe: str = DEFAULT_TASK_UNIVERSE) -> set[str]:
    """EXTRACTTARGETS: the reachable universe (checked with the independent search)."""
    check_universe(universe)
    reach = reachability(world)
    targets = {f"room:{r}" for r in reach.rooms}
    for item in world.items.values():
        if item.id in reach.items and not item.distractor:
            if universe == "broad" or item.kind == "k":
                targets.add(f"object:{item.id}")
            if item.kind == "f":
                targets.add(f"interaction:eat({item.id})")
    for x in world.lockables():
        state = world.state_of(x)
        if state == "locked" and x in reach.unlockable:
            targets.add(f"interaction:unlock({x},{world.key_of(x)})")
        if state != "open":
            targets.add(f"interaction:open({x})")
    return targets


def candidate_goals(world: World) -> list[Goal]:
    """One goal per target (the start room is covered by every walk and has none)."""
    goals = [Goal("go", r) for r in world.rooms if r != world.start]
    for item in world.items.values():
        if not item.distractor:
            goals.append(Goal("take", item.id))
            if item.kind == "f":
                goals.append(Goal("eat", item.id))
    for x in world.lockables():
        if world.state_of(x) != "open":
            goals.append(Goal("open", x))
        if world.state_of(x) == "locked":
            goals.append(Goal("unlock", x))
    return goals


def plan_candidates(world: World) -> list[Candidate]:
    """PLANPATHS: a walkthrough per candidate goal."""
    return [Candidate(g, plan(world, g)) for g in candidate_goals(world)]


def gain(delta: Iterable[str], weights: Mapping[str, float] = WEIGHTS) -> float:
    """GAIN: type-weighted size of the marginal coverage."""
    return sum(weights[t.split(":", 1)[0]] for t in delta)


def greedy_cover(
    universe: set[str],
    covers: Sequence[frozenset[str]],
    weights: Mapping[str, float] = WEIGHTS,
) -> list[int]:
    """Algorithm 1's loop: indices of the chosen candidates, in selection order.

    Ties go to the earliest candidate (strict ``>`` as in the paper), so callers order
    candidates by preference (``select_tasks``: shorter walkthrough first, then goal key).
    Stops when the universe is covered or nothing left has positive gain.
    """
    uncovered = set(universe)
    chosen: list[int] = []
    while uncovered:
        best, best_gain = None, 0.0
        for i, cover in enumerate(covers):
            if i in chosen:
                continue
            g = gain(cover & uncovered, weights)
            if g > best_gain:
                best, best_gain = i, g
        if best is None:
            break
        chosen.append(best)
        uncovered -= covers[best]
    return chosen


def select_tasks(
    world: World, universe_name: str = DEFAULT_TASK_UNIVERSE
) -> tuple[set[str], list[Candidate], list[Candidate]]:
    """(universe, all candidates in preference order, selected candidates in order)."""
    universe = extract_targets(world, universe_name)
    candidates = sorted(plan_candidates(world), key=lambda c: (len(c.plan.commands), c.goal.key))
    chosen = greedy_cover(universe, [c.cover for c in candidates])
    return universe, candidates, [candidates[i] for i in chosen]
