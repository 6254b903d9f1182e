"""``exploreval score-grid``: score a bare grid trajectory with the explore/exploit metric."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table


# -> Any: JSON from a user's file, checked by the caller
def _read_positions(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise FileNotFoundError(f"{path}: no such positions file") from None
    except OSError as exc:
        raise ValueError(f"cannot read positions file {path}: {exc.strerror}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(
            f"{path}: not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})"
        ) from None
    if not isinstance(data, list):
        raise ValueError(
            f"{path}: expected a JSON list of cells (x, y), got a {type(data).__name__}"
        )
    return data


def score_grid_cmd(
    task_path: Annotated[Path, typer.Argument(metavar="TASK.json", help="Custom-map JSON file.")],
    positions_path: Annotated[
        Path,
        typer.Argument(
            metavar="POSITIONS.json",
            help="JSON list of [x, y] cells at t = 0, 1, ... starting at the start cell.",
        ),
    ],
    as_json: Annotated[
        bool, typer.Option("--json", help="Print records and totals as JSON.")
    ] = False,
) -> None:
    """Score one trajectory: per-move case, targets, gain, stale score, errors; totals."""
    from exploreval.suites.grid import GridTask
    from exploreval.suites.grid.explore_exploit import CASE_NAMES, score_trajectory

    if not task_path.exists():
        raise FileNotFoundError(f"{task_path}: no such task file")
    task = GridTask.load(task_path)
    positions = _read_positions(positions_path)
    score = score_trajectory(task, positions, source=str(positions_path))
    if as_json:
        typer.echo(json.dumps(score.to_dict(), indent=2))
        return
    out = Console()
    table = Table(title=escape(f"{task.name or task_path.name}: {len(score)} moves"))
    for column in ("t", "to", "case", "|T|", "gain", "progress", "c", "e", "n", "S", "error"):
        table.add_column(column, justify="right" if column not in ("case", "error") else "left")
    for s in score.steps:
        kind = ""
        if s.error:
            kind = (
                "both"
                if s.explore_error and s.exploit_error
                else ("explore" if s.explore_error else "exploit")
            )
        table.add_row(
            str(s.t),
            f"({s.x},{s.y})",
            f"{s.case} {CASE_NAMES[s.case]}",
            str(s.n_targets),
            "1" if s.gain else "0",
            "*" if s.progress else "",
            str(s.c),
            str(s.e),
            str(s.n),
            str(s.stale),
            kind,
        )
    out.print(table)
    tot = score.totals
    out.print(
        f"exploration error {_rate(tot.explore_error)} ({tot.explore_error_steps}/"
        f"{tot.explore_steps} moves in cases 1, 4); exploitation error "
        f"{_rate(tot.exploit_error)} ({tot.exploit_error_steps}/{tot.exploit_steps} moves in "
        f"cases 2-4); moves per case 1-4: {tot.steps_case1}, {tot.steps_case2}, "
        f"{tot.steps_case3}, {tot.steps_case4}; after the goal: {tot.steps_after_goal}; "
        f"goal {'achieved at move ' + str(tot.goal_step) if tot.success else 'not achieved'}"
    )


def _rate(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"
