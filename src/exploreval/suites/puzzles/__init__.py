"""Reasoning-bound puzzles from TIDE (Yan et al.): FrozenLake, BlocksWorld and Sudoku.

Each puzzle is its own family (``frozenlake``, ``blocksworld``, ``sudoku``) with scripted
agents ``optimal`` (planner/solver working from the observation text), ``random``
(uniform over the action space) and ``random_valid`` (uniform over legal actions), and
the ``default`` harness in the paper's ``<analysis>``/``<action>`` format. Seed k is
instance k of a preset's dataset: ``exploreval run exploreval/Sudoku-v0 --preset paper
--seeds 0-99 --agent optimal`` plays the 100-instance dataset."""

from typing import TYPE_CHECKING

from exploreval.core import lazy_exports

if TYPE_CHECKING:
    from exploreval.suites.puzzles._blocksworld import (
        BlocksWorldEnv,
        BlocksWorldOptimal,
        BlocksWorldRandom,
        BlocksWorldRandomValid,
        optimal_plan,
        parse_pddl_problem,
        parse_state_text,
        render_goal,
        render_state,
    )
    from exploreval.suites.puzzles._common import (
        PAPER_MAX_STEPS,
        STOP_ACTION,
        PuzzleEnv,
        PuzzleParamError,
    )
    from exploreval.suites.puzzles._dataset import (
        DATASET_SIZE,
        Instance,
        dataset,
        dataset_fingerprint,
    )
    from exploreval.suites.puzzles._frozenlake import (
        FrozenLakeEnv,
        FrozenLakeOptimal,
        FrozenLakeRandom,
        FrozenLakeRandomValid,
        parse_lake,
        ragen_lake,
        render_lake,
    )
    from exploreval.suites.puzzles._harness import (
        BlocksWorldHarness,
        FrozenLakeHarness,
        PuzzleHarness,
        SudokuHarness,
    )
    from exploreval.suites.puzzles._sudoku import (
        SudokuEnv,
        SudokuOptimal,
        SudokuRandom,
        SudokuRandomValid,
        count_solutions,
        generate_puzzle,
        parse_grid,
        render_grid,
        solve,
        tide_sudoku,
    )
    from exploreval.suites.puzzles._tide_files import (
        InstanceFile,
        InstanceFileError,
        read_instance_file,
    )

_EXPORTS: dict[str, str] = {
    "BlocksWorldEnv": "._blocksworld",
    "BlocksWorldHarness": "._harness",
    "BlocksWorldOptimal": "._blocksworld",
    "BlocksWorldRandom": "._blocksworld",
    "BlocksWorldRandomValid": "._blocksworld",
    "DATASET_SIZE": "._dataset",
    "FrozenLakeEnv": "._frozenlake",
    "FrozenLakeHarness": "._harness",
    "FrozenLakeOptimal": "._frozenlake",
    "FrozenLakeRandom": "._frozenlake",
    "FrozenLakeRandomValid": "._frozenlake",
    "Instance": "._dataset",
    "InstanceFile": "._tide_files",
    "InstanceFileError": "._tide_files",
    "PAPER_MAX_STEPS": "._common",
    "PuzzleEnv": "._common",
    "PuzzleHarness": "._harness",
    "PuzzleParamError": "._common",
    "STOP_ACTION": "._common",
    "SudokuEnv": "._sudoku",
    "SudokuHarness": "._harness",
    "SudokuOptimal": "._sudoku",
    "SudokuRandom": "._sudoku",
    "SudokuRandomValid": "._sudoku",
    "count_solutions": "._sudoku",
    "dataset": "._dataset",
    "dataset_fingerprint": "._dataset",
    "generate_puzzle": "._sudoku",
    "optimal_plan": "._blocksworld",
    "parse_grid": "._sudoku",
    "parse_lake": "._frozenlake",
    "parse_pddl_problem": "._blocksworld",
    "ragen_lake": "._frozenlake",
    "read_instance_file": "._tide_files",
    "parse_state_text": "._blocksworld",
    "render_goal": "._blocksworld",
    "render_grid": "._sudoku",
    "render_lake": "._frozenlake",
    "render_state": "._blocksworld",
    "solve": "._sudoku",
    "tide_sudoku": "._sudoku",
}

PUZZLE_ENVS = {
    "exploreval/FrozenLake-v0": "frozenlake",
    "exploreval/BlocksWorld-v0": "blocksworld",
    "exploreval/Sudoku-v0": "sudoku",
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
__all__ = [
    "BlocksWorldEnv",
    "BlocksWorldHarness",
    "BlocksWorldOptimal",
    "BlocksWorldRandom",
    "BlocksWorldRandomValid",
    "DATASET_SIZE",
    "FrozenLakeEnv",
    "FrozenLakeHarness",
    "FrozenLakeOptimal",
    "FrozenLakeRandom",
    "FrozenLakeRandomValid",
    "Instance",
    "InstanceFile",
    "InstanceFileError",
    "PAPER_MAX_STEPS",
    "PUZZLE_ENVS",
    "PuzzleEnv",
    "PuzzleHarness",
    "PuzzleParamError",
    "STOP_ACTION",
    "SudokuEnv",
    "SudokuHarness",
    "SudokuOptimal",
    "SudokuRandom",
    "SudokuRandomValid",
    "count_solutions",
    "dataset",
    "dataset_fingerprint",
    "generate_puzzle",
    "optimal_plan",
    "parse_grid",
    "parse_lake",
    "parse_pddl_problem",
    "parse_state_text",
    "ragen_lake",
    "read_instance_file",
    "render_goal",
    "render_grid",
    "render_lake",
    "render_state",
    "solve",
    "tide_sudoku",
]
