"""Why Task2Quiz's Table 1 averages differ from the paper's (issue 44): measured, not guessed.

Run: python bench/bench_task2quiz_table1.py [--seeds 0-9]

For each difficulty over the seeds (the paper's 10 environments each), from the generator and
planner alone (no TextWorld compile):

1. **Walkthroughs.** The selected tasks' mean walkthrough when every task starts from the world's
   initial state (the toolkit's reading), and when each task is planned from the state the
   previous one left (the tasks played one after another in one game), with the mean and largest
   walking distance from the start room to a room (a lower bound on the walk of a task that
   covers that room from the initial state).
2. **Questions.** Mean counts of the world elements questions can be about (things, rooms,
   connections, doors and containers, locks), and their hard/easy ratios against the paper's
   question ratio: a question set that grows as a non-negative combination of element counts
   grows at least as fast as its slowest element, so a paper ratio below every element's ratio
   needs questions that do not grow with the world (a fixed part, a cap, or sampling).
"""

from __future__ import annotations

import argparse
import statistics
from collections import deque

from exploreval.suites.task2quiz._coverage import select_tasks
from exploreval.suites.task2quiz._generate import generate_world
from exploreval.suites.task2quiz._planner import (
    _NO_GOAL,
    PlanningError,
    _clone,
    _holds,
    _run_to_goal,
    _Sim,
)
from exploreval.suites.task2quiz._quiz_api import generate_questions

#: (question type, the element each question is about, the paper's total over its 30 worlds as
#: implied by Table 2's per-type accuracies; docs/task2quiz.md)
TYPE_TOTALS = (("location", "things", 611), ("connectivity", "connections", 422),
               ("direction", "connections", 405), ("match", "locks", 170),
               ("property", "lockables", 359))  # fmt: skip
PAPER = {  # Table 1: walkthrough, questions
    "easy": (4.17, 34.6),
    "medium": (5.25, 65.6),
    "hard": (5.78, 94.7),
}


def _distances(world) -> dict[str, int]:  # type: ignore[no-untyped-def]
    links: dict[str, set[str]] = {r: set() for r in world.rooms}
    for c in world.connections:
        links[c.src].add(c.dst)
        links[c.dst].add(c.src)
    seen = {world.start: 0}
    queue = deque([world.start])
    while queue:
        room = queue.popleft()
        for other in links[room]:
            if other not in seen:
                seen[other] = seen[room] + 1
                queue.append(other)
    return seen


def _sequential(world, chosen) -> list[int]:  # type: ignore[no-untyped-def]
    """Walkthrough lengths when each task starts where the previous one left the world."""
    sim = _Sim(world, _NO_GOAL)
    lengths = []
    for candidate in chosen:
        goal = candidate.goal
        if _holds(sim, goal):
            lengths.append(0)
            continue
        trial = _clone(sim, goal)
        try:
            plan = _run_to_goal(trial, goal)
        except PlanningError:
            lengths.append(len(candidate.plan.commands))
            continue
        lengths.append(len(plan.commands))
        sim = _clone(trial)  # the state the task left: where the next one starts
    return lengths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="0-9")
    args = parser.parse_args()
    lo, _, hi = args.seeds.partition("-")
    seeds = range(int(lo), int(hi or lo) + 1)
    elements: dict[str, dict[str, float]] = {}
    print(
        "| difficulty | walkthrough, from the start (ours) | walkthrough, one after another "
        "| paper | mean / largest distance to a room | questions (ours) | paper |"
    )
    print("|---|---|---|---|---|---|---|")
    for difficulty in ("easy", "medium", "hard"):
        independent: list[int] = []
        sequential: list[int] = []
        mean_distance: list[float] = []
        far: list[int] = []
        counts: dict[str, list[int]] = {
            k: [] for k in ("things", "rooms", "connections", "lockables", "locks")
        }
        questions: list[int] = []
        for seed in seeds:
            world = generate_world(difficulty, seed)
            _, _, chosen = select_tasks(world)
            independent += [len(c.plan.commands) for c in chosen]
            sequential += _sequential(world, chosen)
            dist = _distances(world)
            mean_distance.append(statistics.mean(dist.values()))
            far.append(max(dist.values()))
            lockables = len(world.doors) + len(world.containers)
            counts["things"].append(
                len(world.items) + len(world.containers) + len(world.supporters)
            )
            counts["rooms"].append(len(world.rooms))
            counts["connections"].append(len(world.connections))
            counts["lockables"].append(lockables)
            counts["locks"].append(
                sum(1 for x in [*world.doors, *world.containers] if world.key_of(x) is not None)
            )
            questions.append(_question_count(world, seed))
        elements[difficulty] = {k: statistics.mean(v) for k, v in counts.items()}
        paper_walk, paper_questions = PAPER[difficulty]
        print(
            f"| {difficulty} | {statistics.mean(independent):.2f} | "
            f"{statistics.mean(sequential):.2f} | {paper_walk:.2f} | "
            f"{statistics.mean(mean_distance):.2f} / {statistics.mean(far):.1f} | "
            f"{statistics.mean(questions):.1f} | {paper_questions:.1f} |"
        )
    print()
    print("| element | easy | hard | hard / easy |")
    print("|---|---|---|---|")
    for key in elements["easy"]:
        easy, hard = elements["easy"][key], elements["hard"][key]
        print(f"| {key} | {easy:.1f} | {hard:.1f} | {hard / easy:.2f} |")
    ratio = PAPER["hard"][1] / PAPER["easy"][1]
    print(f"| the paper's questions | {PAPER['easy'][1]} | {PAPER['hard'][1]} | {ratio:.2f} |")
    # The paper's own per-type totals (implied by Table 2's accuracies over its 1,967 questions)
    # fix, for a rule asking a fixed number of questions per element of each type's kind, that
    # number; the per-difficulty averages it then implies:
    per_element = {}
    for qtype, element, total in TYPE_TOTALS:
        per_element[qtype] = total / (10 * sum(elements[d][element] for d in elements))
    print()
    print("| difficulty | questions implied by the paper's type totals | paper's Table 1 | gap |")
    print("|---|---|---|---|")
    for difficulty in ("easy", "medium", "hard"):
        implied = sum(per_element[q] * elements[difficulty][e] for q, e, _ in TYPE_TOTALS)
        paper = PAPER[difficulty][1]
        print(
            f"| {difficulty} | {implied:.1f} | {paper:.1f} | {100 * (implied / paper - 1):+.0f}% |"
        )


def _question_count(world, seed: int) -> int:  # type: ignore[no-untyped-def]
    """Questions of the world's quiz: the generator reads only the world's summary, so no
    TextWorld game is compiled here."""
    from types import SimpleNamespace

    return len(generate_questions(SimpleNamespace(summary=world.summary()), seed))  # type: ignore[arg-type]


if __name__ == "__main__":
    main()
