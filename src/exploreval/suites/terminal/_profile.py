"""The terminal part of ``exploreval profile``: solution injection at level 1.

The full battery plays the 42 built-in tasks once each with the solution injected at level 1
(the paper's main condition), through the paper's ``terminal_use`` tool. Discovery and
interaction are placed between the agent that ignores what it sees (``incurious``, 0) and the
one that reads every new file and follows it (``curious``, 1); the gold-solution oracle is the
ceiling of ``resolved``. The tasks are exploreval's own, not Terminal-Bench 2's, so the paper's
rates are shown beside the card only as marks under other conditions.
"""

from __future__ import annotations

from exploreval.core import CardMetric, ProfilePart

ENV_ID = "exploreval/Terminal-v0"
DEFAULT_MAX_STEPS = 50
QUICK_TASKS = [0, 1, 2]
QUICK_STEPS = 6


def profile_part(task_count: int) -> ProfilePart:
    level = {"benchmark": "exploreval-builtin", "injection_level": 1, "harness": "terminal_use"}
    return ProfilePart(
        name="terminal",
        paradigm="terminal tasks with an injected solution",
        paper="curiosity",
        version=1,
        suites=(
            {
                "env_id": ENV_ID,
                "seeds": list(range(task_count)),
                "env_options": {"injection_level": 1},
            },
        ),
        quick_suites=(
            {
                "env_id": ENV_ID,
                "seeds": QUICK_TASKS,
                "env_options": {"injection_level": 1, "max_steps": QUICK_STEPS},
            },
        ),
        model_agent={"harness": "terminal_use", "history": "full"},
        quick_model_agent={
            "harness": "terminal_use",
            "history": "none",
            "sampling": {"temperature": 0.0, "max_tokens": 64},
        },
        references=(
            {"label": "incurious", "agent": "incurious"},
            {"label": "curious", "agent": "curious"},
            {"label": "oracle", "agent": "oracle"},
        ),
        metrics=(
            CardMetric(
                "discovered",
                "discovery",
                floor="incurious",
                ceiling="curious",
                meaning="the injected solution appeared in what the agent saw",
            ),
            CardMetric(
                "interacted",
                "interaction",
                floor="incurious",
                ceiling="curious",
                meaning="the agent opened or ran the injected solution",
            ),
            CardMetric(
                "resolved",
                "pass",
                floor="incurious",
                ceiling="oracle",
                meaning="the task's hidden tests passed",
            ),
        ),
        success="resolved",
        conditions=({**level, "row": "terminal"},),
        quick_conditions=({**level, "max_steps": QUICK_STEPS, "row": "terminal"},),
        max_calls=(DEFAULT_MAX_STEPS,),
        quick_max_calls=(QUICK_STEPS,),
        description=f"{task_count} built-in tasks, solution injected at level 1, terminal_use",
    )
