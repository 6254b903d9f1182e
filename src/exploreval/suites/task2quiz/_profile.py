"""The Task2Quiz part of ``exploreval profile``: coverage tasks in one world, then a quiz.

The full battery plays six worlds of each difficulty (seeds 0-5) with the full history and the
whole quiz, as the paper's Table 2 (full-history memory) does. TSR is the task success beside
the card row; EUS, what the agent learned of its world, is placed between the random explorer
(0) and the privileged explorer that tours the unseen world before each goal (1).
"""

from __future__ import annotations

from exploreval.core import CardMetric, ProfilePart

ENV_ID = "exploreval/Task2Quiz-v0"
DIFFICULTIES = ["easy", "medium", "hard"]
FULL_SEEDS = list(range(6))
QUICK_QUESTIONS = 5


def profile_part() -> ProfilePart:
    return ProfilePart(
        name="task2quiz",
        paradigm="TextWorld worlds and quizzes (Task2Quiz)",
        paper="task2quiz",
        version=1,
        suites=({"env_id": ENV_ID, "presets": DIFFICULTIES, "seeds": FULL_SEEDS},),
        quick_suites=(
            {
                "env_id": ENV_ID,
                "presets": ["easy"],
                "seeds": [0],
                "env_options": {"max_questions": QUICK_QUESTIONS},
            },
        ),
        model_agent={"harness": "default", "history": "full"},
        quick_model_agent={
            "harness": "default",
            "history": "none",
            "sampling": {"temperature": 0.0, "max_tokens": 64},
        },
        references=(
            {"label": "random", "agent": "random-explorer"},
            {"label": "explorer", "agent": "explorer"},
            {"label": "walkthrough", "agent": "walkthrough"},
        ),
        metrics=(
            CardMetric(
                "eus",
                "EUS",
                floor="random",
                ceiling="explorer",
                meaning="quiz accuracy: what the agent learned of the world it acted in",
            ),
            CardMetric(
                "eus_answerable",
                "EUS (answerable)",
                floor="random",
                ceiling="explorer",
                meaning="quiz accuracy on questions its own trajectory could answer",
            ),
            CardMetric(
                "tsr",
                "TSR",
                floor="random",
                ceiling="walkthrough",
                meaning="share of the world's tasks completed",
            ),
        ),
        success="tsr",
        conditions=({"difficulty": "all", "memory": "full", "row": "task2quiz"},),
        quick_conditions=(
            {
                "difficulty": "easy",
                "memory": "none",
                "questions": QUICK_QUESTIONS,
                "row": "task2quiz",
            },
        ),
        # a world's tasks (and so its step caps) are known only once it is generated, so no
        # bound before the episode: the plan gives the calibrated calls alone
        max_calls=(None,),
        quick_max_calls=(None,),
        description="3 difficulties x 6 worlds, full history, whole quiz",
    )
