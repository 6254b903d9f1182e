"""The live line a long score or report shows on a terminal (``analysis.ScoreProgress``)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING

from rich.console import Console

if TYPE_CHECKING:
    from exploreval.analysis import ScoreProgress


@contextlib.contextmanager
def score_progress(console: Console) -> Iterator[ScoreProgress | None]:
    """A live line on ``console`` (stderr) while a score or a report runs (a 100k-episode sweep
    maps for a minute or more): what it is doing, and in the map how many episodes are done.
    Nothing when it is not a terminal (logs and pipes get only the result)."""
    if not console.is_terminal:
        yield None
        return
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    stages = {
        "columns": "reading the log into columns",
        "map": "scoring episodes",
        "tables": "reducing run tables",
        "report": "writing the report",
    }
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console,
        transient=True,
    ) as bar:
        # the stage on screen: a new one is a new task, with its own clock and estimate (and
        # no total when it has none: rich keeps an old total through reset and update)
        shown = stages["columns"]
        task = bar.add_task(shown, total=None)

        def update(stage: str, done: int | None, total: int | None) -> None:
            nonlocal shown, task
            description = stages.get(stage, stage)
            if stage == "columns" and total:  # bytes of the log: shown in MB
                description += " (MB)"
                done, total = (done or 0) // 1_000_000, max(total // 1_000_000, 1)
            if description != shown:
                bar.remove_task(task)
                shown = description
                task = bar.add_task(description, total=total, completed=done or 0)
            else:
                bar.update(task, completed=done or 0, total=total)
            bar.refresh()  # once a chunk (about a second of work): every stage is shown

        yield update
