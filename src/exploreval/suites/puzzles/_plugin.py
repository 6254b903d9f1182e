"""The puzzle suite (TIDE's FrozenLake, BlocksWorld, Sudoku) as a plugin."""

from __future__ import annotations

from exploreval.core import SuitePlugin

_M = "exploreval.suites.puzzles"

#: env id -> (family, class, presets, description); one family per puzzle so agents, harnesses and
#: metrics stay puzzle-specific.
_ENVS = {
    "exploreval/FrozenLake-v0": (
        "frozenlake",
        "_frozenlake:FrozenLakeEnv",
        ("paper", "small", "4x4", "8x8"),
        "FrozenLake (TIDE/RAGEN variant): reach G around holes, not slippery",
    ),
    "exploreval/BlocksWorld-v0": (
        "blocksworld",
        "_blocksworld:BlocksWorldEnv",
        ("paper", "easy", "hard"),
        "BlocksWorld, 4 operators with an arm; goal is a full state",
    ),
    "exploreval/Sudoku-v0": (
        "sudoku",
        "_sudoku:SudokuEnv",
        ("paper", "4x4-easy", "4x4-hard", "9x9-easy", "9x9-medium", "9x9-hard"),
        "Sudoku 4x4/9x9 with a unique solution; fill 'row col value'",
    ),
}
#: TIDE Appendix C.4: the AUV evaluation window of each puzzle.
_PAPER_T_MAX = {"BlocksWorld": 20, "FrozenLake": 30, "Sudoku": 20}
_BASELINES = {
    "frozenlake": ("_frozenlake", "FrozenLake", "FrozenLakeHarness"),
    "blocksworld": ("_blocksworld", "BlocksWorld", "BlocksWorldHarness"),
    "sudoku": ("_sudoku", "Sudoku", "SudokuHarness"),
}
FAMILIES = tuple(family for family, *_ in _ENVS.values())


#: What ``success`` is per puzzle (the report prints it beside the rate).
_SUCCESS = {
    "frozenlake": "the player reached the goal cell without falling in a hole",
    "blocksworld": "the blocks were in the goal configuration",
    "sudoku": "the grid equals the puzzle's unique solution",
}


def register() -> None:
    from exploreval.agents import register_agent, register_harness
    from exploreval.core import register_env, register_suite
    from exploreval.metrics import (
        register_episode_metrics,
        register_headline_metrics,
        register_run_metrics,
        register_t_max,
    )
    from exploreval.report import register_report, register_step_view

    for family in ("frozenlake", "blocksworld", "sudoku"):
        register_headline_metrics(family, ("final_progress", "excess_steps", "solved_at_step"))
    for name, t_max in _PAPER_T_MAX.items():
        register_t_max(name, t_max, source="paper")

    for env_id, (family, cls, presets, description) in _ENVS.items():
        register_env(
            env_id,
            f"{_M}.{cls}",
            family=family,
            presets=presets,
            default_preset="paper",
            description=description,
            success_means=_SUCCESS[family],
        )
    for family, (module, prefix, harness) in _BASELINES.items():
        where = f"{_M}.{module}:{prefix}"
        families = (family,)
        register_agent(
            "optimal", f"{where}Optimal", families=families, description="optimal planner/solver"
        )
        register_agent(
            "random", f"{where}Random", families=families, description="uniform over all actions"
        )
        register_agent(
            "random_valid",
            f"{where}RandomValid",
            families=families,
            description="uniform over legal actions",
        )
        register_harness(
            "default",
            f"{_M}._harness:{harness}",
            families=families,
            description="TIDE <analysis>/<action> format",
        )
        register_episode_metrics(family, "puzzle_common", f"{_M}._metrics:common_metrics")
        register_run_metrics(
            family,
            "puzzle_by_difficulty",
            f"{_M}._metrics:by_difficulty_from_rows",
            partial=f"{_M}._metrics:difficulty_row",
        )
        register_episode_metrics(family, family, f"{_M}._metrics:{family}_metrics")
        register_report(
            family, "puzzle_difficulty", f"{_M}._report:difficulty_section", uses_tables=True
        )
        register_step_view(family, f"{_M}._viewer:step_view")
    register_suite(
        "puzzles-paper",
        [{"env_id": env_id, "presets": ["paper"], "seeds": list(range(100))} for env_id in _ENVS],
        "TIDE paper puzzles: FrozenLake, BlocksWorld, Sudoku, 100 instances each",
    )
    from exploreval.core import register_profile_part
    from exploreval.suites.puzzles._profile import profile_part

    register_profile_part(profile_part())


PLUGIN = SuitePlugin(
    name="puzzles",
    description="Reasoning-bound puzzles of TIDE: FrozenLake, BlocksWorld, Sudoku",
    register=register,
    families=FAMILIES,
    docs="docs/puzzles.md",
)
