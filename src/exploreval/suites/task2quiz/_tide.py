"""TIDE hooks for Task2Quiz: each task's step budget, and what counts as the same state."""

from __future__ import annotations

from exploreval.core import EpisodeRecord
from exploreval.metrics.tide import strip_patterns

#: Observations equal once the "Task i of N." header, the goal line that follows it and the
#: score message are removed (the same room described again is the same state).
STATE_IDENTITY = strip_patterns(
    r"Task \d+ of \d+\.",
    r"Your score has just gone up by one point\.",
    needs=("Task ", "Your score has just gone up by one point."),
)


def task_budget(record: EpisodeRecord) -> int | None:
    """Per-task step cap: the runner's ``--max-steps`` applies to every task (default 50)."""
    from exploreval.suites.task2quiz._env import DEFAULT_TASK_STEP_CAP

    return record.max_steps if record.max_steps is not None else DEFAULT_TASK_STEP_CAP
