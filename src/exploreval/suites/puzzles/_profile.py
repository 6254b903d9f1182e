"""The puzzle part of ``exploreval profile``: TIDE's three reasoning-bound puzzles.

The full battery plays 32 of the paper's 100 instances of each puzzle (preset ``paper``, the
TIDE generator's instances, seeds 0-31) with the full history, as TIDE's Table 1 does; each
puzzle is a row of its own, since TIDE reports each. References: uniform legal moves (0) and the
optimal solver (1). ``--quick`` plays four small FrozenLake maps, ten steps each.
"""

from __future__ import annotations

from exploreval.core import CardMetric, ProfilePart

PUZZLES = (
    ("exploreval/FrozenLake-v0", "frozenlake"),
    ("exploreval/BlocksWorld-v0", "blocksworld"),
    ("exploreval/Sudoku-v0", "sudoku"),
)
#: AUV's horizon per puzzle, TIDE's Appendix C.4 (the values the plugin registers), so a
#: paper's AUV is drawn beside a row only when both were integrated to the same t_max.
T_MAX = {"frozenlake": 30, "blocksworld": 20, "sudoku": 20}
FULL_SEEDS = list(range(32))
#: TIDE's step cap (``PAPER_MAX_STEPS``): an episode makes at most this many calls.
PAPER_MAX_STEPS = 30
QUICK_STEPS = 10


def profile_part() -> ProfilePart:
    return ProfilePart(
        name="puzzles",
        paradigm="reasoning-bound puzzles (TIDE)",
        paper="tide",
        version=1,
        suites=tuple(
            {"env_id": env_id, "presets": ["paper"], "seeds": FULL_SEEDS} for env_id, _ in PUZZLES
        ),
        quick_suites=(
            {
                "env_id": "exploreval/FrozenLake-v0",
                "presets": ["small"],
                "seeds": [0, 1, 2, 3],
                "env_options": {"max_steps": QUICK_STEPS},
            },
        ),
        model_agent={"harness": "default", "history": "full"},
        quick_model_agent={
            "harness": "default",
            "history": "none",
            "sampling": {"temperature": 0.0, "max_tokens": 48},
        },
        references=(
            {"label": "random", "agent": "random_valid"},
            {"label": "optimal", "agent": "optimal"},
        ),
        metrics=(
            CardMetric(
                "tide_auv",
                "AUV",
                floor="random",
                ceiling="optimal",
                meaning="area under the solved-within-t curve: how early it got there",
            ),
            CardMetric(
                "tide_loop_ratio",
                "Loop Ratio",
                floor="random",
                ceiling="optimal",
                higher_is_better=False,
                meaning="share of steps back in a state already visited (published definition)",
            ),
            CardMetric(
                "final_progress",
                "final progress",
                floor="random",
                ceiling="optimal",
                meaning="how far toward the goal the last state is",
            ),
        ),
        success="success",
        conditions=tuple(
            {
                "env": family,
                "instances": "paper",
                "history": "full",
                "t_max": T_MAX[family],
                "row": family,
            }
            for _, family in PUZZLES
        ),
        quick_conditions=(
            {
                "env": "frozenlake",
                "instances": "small",
                "history": "none",
                "max_steps": QUICK_STEPS,
                "row": "frozenlake",
            },
        ),
        max_calls=(PAPER_MAX_STEPS,) * len(PUZZLES),
        quick_max_calls=(QUICK_STEPS,),
        description="FrozenLake, BlocksWorld, Sudoku: 32 of TIDE's instances each, full history",
    )
