"""TIDE commands: ``import`` (other tools' logs -> run directory), ``tide`` (TIDE tables of a run with
optional t_max overrides) and ``tide-mi`` (Memory Index between two runs)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

if TYPE_CHECKING:
    import pandas as pd

console = Console(stderr=True)
out = Console()


def _t_max_option(values: list[str]) -> dict[str, int] | None:
    from exploreval.metrics.tide import parse_t_max_overrides

    return parse_t_max_overrides(values, source="--t-max") if values else None


def _records(run_dir: Path) -> list[Any]:
    from exploreval.store import RunDir, StoreError

    run = RunDir(run_dir)
    if not run.exists():
        raise StoreError(f"{run_dir} is not a run directory (no manifest.json)")
    issues: list[Any] = []
    records = [r for r in run.latest_records(issues).values() if r.status == "ok"]
    for issue in issues:
        console.print(
            f"[yellow]warning[/]: {escape(str(run.episodes_path))} {escape(str(issue))} (skipped)"
        )
    if not records:
        raise ValueError(f"{run_dir} has no finished episodes to score")
    return records


def _print_frame(frame: pd.DataFrame, title: str, columns: list[str]) -> None:
    table = Table(title=escape(title))
    shown = [c for c in columns if c in frame.columns]
    for column in shown:
        table.add_column(escape(column))
    for _, row in frame.iterrows():
        cells = []
        for column in shown:
            value = row[column]
            if value is None or (isinstance(value, float) and value != value):  # NaN
                cells.append("-")
            elif isinstance(value, float):
                cells.append(f"{value:.3f}")
            else:
                cells.append(escape(str(value)))
        table.add_row(*cells)
    out.print(table)


def _json(frames: dict[str, pd.DataFrame]) -> None:
    out.print_json(
        json.dumps({k: json.loads(v.to_json(orient="records")) for k, v in frames.items()})
    )


def register(app: typer.Typer) -> None:
    @app.command("import")
    def import_cmd(
        paths: Annotated[list[Path], typer.Argument(help="Log files or directories")],
        out_dir: Annotated[Path, typer.Option("--out", "-o", help="New run directory")],
        fmt: Annotated[
            str,
            typer.Option(
                "--format", "-f", help="auto | jsonl | swe-agent | terminal-bench | inspect | atif"
            ),
        ] = "auto",
        name: Annotated[str | None, typer.Option(help="Run name")] = None,
        env: Annotated[
            str | None, typer.Option(help="Env name/id for the episodes (sets t_max lookup)")
        ] = None,
        agent: Annotated[str | None, typer.Option(help="Agent name for the episodes")] = None,
        resolved: Annotated[
            Path | None,
            typer.Option(help="SWE-bench report / id list of resolved instances (swe-agent)"),
        ] = None,
        scorer: Annotated[
            str | None, typer.Option(help="inspect: scorer whose value is success")
        ] = None,
        success_threshold: Annotated[
            float, typer.Option(help="inspect: score counted as success")
        ] = 1.0,
        report: Annotated[bool, typer.Option(help="Score and write the report afterwards")] = True,
    ) -> None:
        """Import other tools' trajectories (generic JSONL, SWE-agent .traj, Terminal-Bench runs (Harbor/ATIF too),
        inspect_ai .eval/.json) as a run directory; `score` and `report` then work on it. Files in a given
        folder that are not logs are skipped and listed; the exit status is then 3."""
        from exploreval.store import import_logs

        summary = import_logs(
            paths,
            out_dir,
            fmt=fmt,
            name=name,
            env=env,
            agent=agent,
            resolved=resolved,
            scorer=scorer,
            success_threshold=success_threshold,
        )
        for warning in summary.warnings:
            console.print(f"[yellow]warning[/]: {escape(str(warning))}")
        for skipped in summary.skipped:
            console.print(
                f"[yellow]skipped[/] (not a {summary.format} log): {escape(skipped)}",
                soft_wrap=True,
            )
        out.print(
            f"imported {summary.episodes} episode{'' if summary.episodes == 1 else 's'} ({summary.steps} steps, format {summary.format}) "
            f"into {summary.run_dir}",
            markup=False,
            soft_wrap=True,
        )
        if report:  # scoring also brings the viewer's index up to date
            from exploreval.analysis import build_report
            from exploreval.store import RunDir

            out.print(
                f"report: {build_report(RunDir(summary.run_dir))}", markup=False, soft_wrap=True
            )
        else:
            from exploreval.viewer import refresh_index

            problem = refresh_index(summary.run_dir)
            if problem:
                console.print(f"[yellow]warning[/]: {escape(problem)}")
        if summary.skipped:
            # 3: imported, but some files found in the given folders were skipped (listed above)
            console.print(f"{len(summary.skipped)} file(s) skipped; the rest was imported")
            raise typer.Exit(3)

    @app.command("tide")
    def tide_cmd(
        run_dir: Annotated[Path, typer.Argument(help="Run directory")],
        t_max: Annotated[
            list[str], typer.Option("--t-max", help="Override t_max: NAME=N (repeatable)")
        ] = [],  # noqa: B006
        state_identity: Annotated[
            str | None,
            typer.Option(
                "--state-identity",
                help="Loop Ratio states: exact | embedding[:THRESHOLD] | strip:REGEX (default: per suite)",
            ),
        ] = None,
        as_json: Annotated[bool, typer.Option("--json")] = False,
    ) -> None:
        """TIDE tables of a run (AUV with CIs, Loop Ratio, recall distance, Memory Index, windows)."""
        from exploreval.metrics.tide import (
            MEMORY_INDEX_COLUMNS,
            SUMMARY_COLUMNS,
            EmbeddingUnavailableError,
            parse_identity,
            tide_run_tables,
        )

        identity = parse_identity(state_identity) if state_identity else None
        try:
            tables = tide_run_tables(_records(run_dir), _t_max_option(t_max), identity)
        except EmbeddingUnavailableError as exc:
            raise ValueError(str(exc)) from None
        if as_json:
            _json(tables)
            return
        _print_frame(
            tables["tide_summary"],
            f"TIDE: {run_dir}",
            list(SUMMARY_COLUMNS),
        )
        if "tide_memory" in tables:
            _print_frame(
                tables["tide_memory"],
                "Memory Index (full - none)",
                ["env_id", "preset", "agent", *MEMORY_INDEX_COLUMNS],
            )
        if "tide_window" in tables:
            _print_frame(
                tables["tide_window"],
                "AUV vs history window",
                ["env_id", "preset", "agent", "history", "auv", "episodes"],
            )

    @app.command("tide-mi")
    def tide_mi_cmd(
        with_memory: Annotated[Path, typer.Argument(help="Run with memory (e.g. --history full)")],
        without_memory: Annotated[Path, typer.Argument(help="Run without memory (--history none)")],
        t_max: Annotated[
            list[str], typer.Option("--t-max", help="Override t_max: NAME=N (repeatable)")
        ] = [],  # noqa: B006
        as_json: Annotated[bool, typer.Option("--json")] = False,
    ) -> None:
        """Memory Index between two run directories that differ only in the history policy."""
        from exploreval.metrics.tide import memory_index_between

        frame = memory_index_between(
            _records(with_memory), _records(without_memory), _t_max_option(t_max)
        )
        if frame.empty:
            raise ValueError(
                "no agent pairs: the runs share no env with a matching agent (same model, harness and "
                "sampling, or a single agent per env on each side)"
            )
        if as_json:
            _json({"tide_memory": frame})
            return
        _print_frame(
            frame,
            "Memory Index between runs",
            [
                "env_id",
                "preset",
                "agent",
                "matched_by",
                "t_max",
                "auv_with",
                "auv_without",
                "mi",
                "mi_ci_low",
                "mi_ci_high",
                "paired",
                "tasks",
            ],
        )
