"""Task2Quiz suite: coverage tasks in TextWorld worlds, then a trajectory-conditioned quiz (TSR, EUS).

World side (this package's public API, re-exported lazily so ``import exploreval`` never imports
TextWorld): the seeded world generator, lock-key refinement and reachability search, the pruned
planner, coverage targets and greedy weighted set cover, compilation with a content-hash cache,
the benchmark builder, and the env ``exploreval/Task2Quiz-v0`` with its scripted players.
"""

from typing import TYPE_CHECKING

from exploreval.core import lazy_exports

if TYPE_CHECKING:
    from exploreval.suites.task2quiz._agents_play import RandomExplorerAgent, WalkthroughAgent
    from exploreval.suites.task2quiz._benchmark import (
        PAPER_TABLE1,
        EnvStats,
        build_benchmark,
        build_world,
        object_count,
        table1,
    )
    from exploreval.suites.task2quiz._compile import (
        base_world_json,
        compile_task,
        content_hash,
        default_cache_dir,
        play,
    )
    from exploreval.suites.task2quiz._contract import (
        NON_ANSWERABLE,
        CompiledTask,
        CoverageSignature,
        Question,
        QuizWorld,
        Stage1StepFacts,
    )
    from exploreval.suites.task2quiz._coverage import (
        WEIGHTS,
        extract_targets,
        gain,
        greedy_cover,
        select_tasks,
    )
    from exploreval.suites.task2quiz._env import Task2QuizEnv
    from exploreval.suites.task2quiz._generate import generate_world
    from exploreval.suites.task2quiz._locks import Reach, reachability
    from exploreval.suites.task2quiz._planner import Goal, Plan, PlanningError, plan
    from exploreval.suites.task2quiz._presets import LOCK_FRACTION, PRESETS, WorldPreset, lock_count
    from exploreval.suites.task2quiz._stepinfo import Task2QuizStepInfo
    from exploreval.suites.task2quiz._world import World

_EXPORTS: dict[str, str] = {
    "CompiledTask": "._contract",
    "CoverageSignature": "._contract",
    "EnvStats": "._benchmark",
    "Goal": "._planner",
    "LOCK_FRACTION": "._presets",
    "NON_ANSWERABLE": "._contract",
    "PAPER_TABLE1": "._benchmark",
    "PRESETS": "._presets",
    "Plan": "._planner",
    "PlanningError": "._planner",
    "Question": "._contract",
    "QuizWorld": "._contract",
    "RandomExplorerAgent": "._agents_play",
    "Reach": "._locks",
    "Stage1StepFacts": "._contract",
    "Task2QuizEnv": "._env",
    "Task2QuizStepInfo": "._stepinfo",
    "WEIGHTS": "._coverage",
    "WalkthroughAgent": "._agents_play",
    "World": "._world",
    "WorldPreset": "._presets",
    "base_world_json": "._compile",
    "build_benchmark": "._benchmark",
    "build_world": "._benchmark",
    "compile_task": "._compile",
    "content_hash": "._compile",
    "default_cache_dir": "._compile",
    "extract_targets": "._coverage",
    "gain": "._coverage",
    "generate_world": "._generate",
    "greedy_cover": "._coverage",
    "lock_count": "._presets",
    "object_count": "._benchmark",
    "plan": "._planner",
    "play": "._compile",
    "reachability": "._locks",
    "select_tasks": "._coverage",
    "table1": "._benchmark",
}
__all__ = [
    "CompiledTask",
    "CoverageSignature",
    "EnvStats",
    "Goal",
    "LOCK_FRACTION",
    "NON_ANSWERABLE",
    "PAPER_TABLE1",
    "PRESETS",
    "Plan",
    "PlanningError",
    "Question",
    "QuizWorld",
    "RandomExplorerAgent",
    "Reach",
    "Stage1StepFacts",
    "Task2QuizEnv",
    "Task2QuizStepInfo",
    "WEIGHTS",
    "WalkthroughAgent",
    "World",
    "WorldPreset",
    "base_world_json",
    "build_benchmark",
    "build_world",
    "compile_task",
    "content_hash",
    "default_cache_dir",
    "extract_targets",
    "gain",
    "generate_world",
    "greedy_cover",
    "lock_count",
    "object_count",
    "plan",
    "play",
    "reachability",
    "select_tasks",
    "table1",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
