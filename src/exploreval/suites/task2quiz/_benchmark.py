"""Environments and the 30-environment benchmark (T2QBench-like), reproducible from seeds.

Seed scheme: environment ``i`` (0-9) of a difficulty is ``build_world(difficulty, i)``; the
generator's ``np.random.Generator`` is seeded with ``[seed, difficulty salt]`` (easy 1, medium
2, hard 3), so the three difficulties never share a stream.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path
from typing import Any

from exploreval.suites.task2quiz._compile import (
    base_world_json,
    compile_prepared,
    content_hash,
    default_cache_dir,
    goal_text,
    prepare_task,
)
from exploreval.suites.task2quiz._contract import CompiledTask, Difficulty, QuizWorld
from exploreval.suites.task2quiz._coverage import (
    DEFAULT_TASK_UNIVERSE,
    select_tasks,
    signature_of,
)
from exploreval.suites.task2quiz._generate import generate_world
from exploreval.suites.task2quiz._world import World

DIFFICULTIES: tuple[Difficulty, ...] = ("easy", "medium", "hard")
ENVS_PER_DIFFICULTY = 10

#: Table 1 of the paper (ranges, and the averages over its 10 environments per difficulty).
PAPER_TABLE1: dict[str, dict[str, Any]] = {
    "easy": {"rooms": "3-5", "objects": "6-10", "tasks": 2.4, "walkthrough": 4.17, "questions": 34.6},
    "medium": {"rooms": "6-10", "objects": "14-18", "tasks": 5.7, "walkthrough": 5.25, "questions": 65.6},
    "hard": {"rooms": "16-20", "objects": "28-32", "tasks": 12.3, "walkthrough": 5.78, "questions": 94.7},
}  # fmt: skip
#: The paper's stated totals, which its own averages contradict (x 10 gives 204 and 1,949).
PAPER_TOTALS = {"environments": 30, "tasks": 224, "questions": 1967}


def object_count(world: World) -> int:
    """Table 1's "objects": containers, supporters, portable objects, keys and food."""
    return len(world.containers) + len(world.supporters) + len(world.items)


def build_world(
    difficulty: Difficulty,
    seed: int,
    cache_dir: str | Path | None = None,
    compile_threads: int = 2,
    universe: str = DEFAULT_TASK_UNIVERSE,
) -> QuizWorld:
    """Generate, plan, select and compile one environment (compiled games cached on disk).

    Cache misses compile on ``compile_threads`` threads: Inform7 runs as subprocesses, so two
    threads use both cores of a 2-core machine for one environment.
    """
    world = generate_world(difficulty, seed)
    cache = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    base = base_world_json(world)
    _, _, selected = select_tasks(world, universe)
    prepared = [prepare_task(world, c.goal, c.plan.commands) for c in selected]
    with ThreadPoolExecutor(max_workers=max(1, compile_threads)) as pool:
        files = list(pool.map(lambda gd: compile_prepared(gd[0], gd[1], cache), prepared))
    tasks = []
    for i, (cand, (_, digest), game_file) in enumerate(zip(selected, prepared, files, strict=True)):
        tasks.append(
            CompiledTask(
                task_id=f"{difficulty}-{seed}-t{i}",
                goal=goal_text(world, cand.goal),
                game_file=game_file,
                walkthrough=tuple(cand.plan.commands),
                signature=signature_of(cand.plan),
                goal_kind=cand.goal.kind,
                target=cand.goal.target,
                game_hash=digest,
            )
        )
    return QuizWorld(
        difficulty=difficulty,
        seed=seed,
        content_hash=content_hash(base),
        world=base,
        tasks=tuple(tasks),
        summary=world.summary(),
        task_universe=universe,
    )


@dataclass(frozen=True)
class EnvStats:
    difficulty: str
    seed: int
    rooms: int
    objects: int
    tasks: int
    walkthrough_steps: int
    questions: int | None
    seconds: float


def _build_stats(args: tuple[Difficulty, int, str | None, str]) -> EnvStats:
    difficulty, seed, cache_dir, universe = args
    start = time.perf_counter()
    qw = build_world(difficulty, seed, cache_dir, universe=universe)
    world = generate_world(difficulty, seed)
    return EnvStats(
        difficulty=difficulty,
        seed=seed,
        rooms=len(world.rooms),
        objects=object_count(world),
        tasks=len(qw.tasks),
        walkthrough_steps=sum(len(t.walkthrough) for t in qw.tasks),
        questions=_question_count(qw),
        seconds=time.perf_counter() - start,
    )


def _question_count(qw: QuizWorld) -> int | None:
    """Questions generated for the world by the quiz side (None while it is a placeholder)."""
    from exploreval.suites.task2quiz import _quiz_api

    if getattr(_quiz_api, "PLACEHOLDER", False):
        return None
    return len(_quiz_api.start_quiz(qw, [], 0).questions)


def build_benchmark(
    cache_dir: str | Path | None = None,
    workers: int = 2,
    difficulties: Sequence[Difficulty] = DIFFICULTIES,
    envs_per_difficulty: int = ENVS_PER_DIFFICULTY,
    universe: str = DEFAULT_TASK_UNIVERSE,
) -> list[EnvStats]:
    """Build every environment of the benchmark (worker processes when ``workers > 1``)."""
    jobs = [
        (d, s, None if cache_dir is None else str(cache_dir), universe)
        for d in difficulties
        for s in range(envs_per_difficulty)
    ]
    if workers <= 1:
        return [_build_stats(j) for j in jobs]
    with ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn")) as pool:
        return list(pool.map(_build_stats, jobs))


def table1(stats: Sequence[EnvStats]) -> str:
    """Markdown table: ours beside the paper's Table 1, plus totals and the paper's inconsistency."""
    lines = [
        "| | rooms (ours / paper) | objects (ours / paper) | avg tasks (ours / paper) "
        "| avg walkthrough (ours / paper) | avg questions (ours / paper) |",
        "|---|---|---|---|---|---|",
    ]
    for d in DIFFICULTIES:
        rows = [s for s in stats if s.difficulty == d]
        if not rows:
            continue
        paper = PAPER_TABLE1[d]
        tasks = sum(r.tasks for r in rows)
        steps = sum(r.walkthrough_steps for r in rows)
        qs = [r.questions for r in rows]
        q = "n/a" if any(x is None for x in qs) else f"{sum(x or 0 for x in qs) / len(rows):.1f}"
        lines.append(
            f"| {d} | {min(r.rooms for r in rows)}-{max(r.rooms for r in rows)} / {paper['rooms']} "
            f"| {min(r.objects for r in rows)}-{max(r.objects for r in rows)} / {paper['objects']} "
            f"| {tasks / len(rows):.1f} / {paper['tasks']} "
            f"| {steps / max(tasks, 1):.2f} / {paper['walkthrough']} | {q} / {paper['questions']} |"
        )
    total_tasks = sum(s.tasks for s in stats)
    qs = [s.questions for s in stats]
    total_q = "n/a" if any(x is None for x in qs) else str(sum(x or 0 for x in qs))
    paper_tasks = round(sum(10 * float(PAPER_TABLE1[d]["tasks"]) for d in DIFFICULTIES))
    paper_q = round(sum(10 * float(PAPER_TABLE1[d]["questions"]) for d in DIFFICULTIES))
    lines += [
        "",
        f"Totals (ours): {len(stats)} environments, {total_tasks} tasks, {total_q} questions.",
        f"Paper: {PAPER_TOTALS['environments']} environments, {PAPER_TOTALS['tasks']} tasks, "
        f"{PAPER_TOTALS['questions']} questions as stated; its Table 1 averages x 10 give "
        f"{paper_tasks} tasks and {paper_q} questions (the paper is inconsistent with itself).",
    ]
    return "\n".join(lines)
