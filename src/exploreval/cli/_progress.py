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
        task = bar.add_task(stages["columns"], total=None)

        def update(stage: str, done: int | None, total: int | None) -> None:
            bar.update(task, description=stages.get(stage, stage), completed=done or 0, total=total)
            bar.refresh()  # once a chunk (about a second of work): every stage is shown

        yield update
