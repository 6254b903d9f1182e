"""Task2Quiz commands: ``exploreval task2quiz-build`` builds the benchmark into the compile cache
and prints the Table 1 comparison."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer

from exploreval.core import CommandHost


def task2quiz_build_cmd(
    cache_dir: Annotated[
        Path | None,
        typer.Option(help="Compile cache (default: $EXPLOREVAL_TEXTWORLD_CACHE or ~/.cache/...)"),
    ] = None,
    workers: Annotated[int, typer.Option(min=1, help="Worker processes")] = 2,
    envs: Annotated[int, typer.Option(min=1, help="Environments per difficulty")] = 10,
    difficulty: Annotated[
        list[str] | None,
        typer.Option(help="Only these difficulties (repeatable): easy, medium, hard"),
    ] = None,
    task_universe: Annotated[
        str,
        typer.Option(
            help="Targets the tasks cover: paper (rooms, interactions, keys) or broad "
            "(every portable object too)"
        ),
    ] = "paper",
) -> None:
    """Build the 30-environment benchmark (compiled games cached) and print Table 1."""
    try:
        import textworld  # noqa: F401
    except ImportError:
        typer.echo("task2quiz-build needs TextWorld: pip install 'exploreval[textworld]'", err=True)
        raise typer.Exit(2) from None
    from exploreval.suites.task2quiz._benchmark import DIFFICULTIES, build_benchmark, table1

    chosen = tuple(difficulty or DIFFICULTIES)
    unknown = sorted(set(chosen) - set(DIFFICULTIES))
    if unknown:
        typer.echo(
            f"--difficulty: unknown {unknown}; expected some of {list(DIFFICULTIES)}", err=True
        )
        raise typer.Exit(2)
    from exploreval.suites.task2quiz._coverage import TASK_UNIVERSES

    if task_universe not in TASK_UNIVERSES:
        typer.echo(f"--task-universe: {task_universe!r}; expected one of {list(TASK_UNIVERSES)}",
                   err=True)  # fmt: skip
        raise typer.Exit(2)
    start = time.perf_counter()
    stats = build_benchmark(
        cache_dir,
        workers=workers,
        difficulties=chosen,  # type: ignore[arg-type]
        envs_per_difficulty=envs,
        universe=task_universe,
    )
    typer.echo(table1(stats))
    typer.echo(f"\nbuilt {len(stats)} environments in {time.perf_counter() - start:.1f} s")


def register(app: typer.Typer, host: CommandHost) -> None:
    """Add the Task2Quiz commands to the ``exploreval`` CLI."""
    app.command("task2quiz-build")(task2quiz_build_cmd)
