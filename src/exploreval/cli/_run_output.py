"""What ``exploreval run`` shows while and after it runs: the live progress bar with its ETA, the
headline table in the terminal, the paths of what was written, and each suite's own tables.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.console import Console
from rich.markup import escape

from exploreval.cli._progress import score_progress

if TYPE_CHECKING:
    from exploreval.runner import ExperimentSpec, RunSummary

#: The run's consoles (``_app`` prints through the same ones, so the live bar and the messages
#: share one terminal writer).
console = Console(stderr=True)
out = Console()


def count(n: int, noun: str) -> str:
    """``1 episode``, ``2 episodes``: a count with its noun in the right number."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


# -> Any: a rich progress column (rich is imported only when a run shows progress)
def eta_column() -> Any:
    from rich.progress import TimeRemainingColumn
    from rich.text import Text

    class EtaColumn(TimeRemainingColumn):
        """Rich's time remaining, once the task says its rate means something (``eta_ready``)."""

        def render(self, task: Any) -> Text:
            if not task.fields.get("eta_ready", True):
                return Text("-:--:--", style="progress.remaining")
            return super().render(task)

    return EtaColumn()


def progress_runner(spec: ExperimentSpec, out_dir: Path, force: bool, quiet: bool) -> RunSummary:
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    from exploreval.runner import Runner, Totals

    progress = Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn(
            "steps {task.fields[steps]}  tokens {task.fields[tokens]}  errors {task.fields[errors]}"
        ),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        eta_column(),
        console=console,
        disable=quiet,
    )
    task_id = progress.add_task(
        "episodes", total=None, steps=0, tokens=0, errors=0, eta_ready=False
    )
    agents = {a.display_name for a in spec.agents}

    def update(totals: Totals, planned: int) -> None:
        progress.update(
            task_id,
            completed=totals.episodes,
            total=planned,
            steps=totals.steps + totals.live_steps,
            tokens=totals.usage.total_tokens + totals.live_tokens,
            errors=totals.errors,
            # an ETA extrapolated from instant scripted episodes says nothing of model ones:
            # none until an episode of every agent has finished in this invocation
            eta_ready=agents <= totals.finished_agents,
        )

    runner = Runner(spec, str(out_dir), force=force, on_progress=update)
    manifest = runner.prepare()
    try:
        update(runner.totals, len(runner.plan))
        if not quiet:
            console.print(
                f"run [bold]{escape(manifest.run_id)}[/] in {escape(str(out_dir))}: "
                f"{count(len(runner.plan), 'episode')} planned, "
                f"{len(runner.plan) - len(runner.pending)} already done"
            )
            for note in runner.notes:
                console.print(f"[dim]note[/]: {escape(note)}", soft_wrap=True)
        with progress:
            summary = runner.execute()
        if runner.placement and not quiet:
            from exploreval.runner import placement_summary

            console.print(escape(placement_summary(runner.placement)), soft_wrap=True)
    except KeyboardInterrupt as exc:  # the manifest already says "interrupted"
        runner.abandon(exc)
        console.print(
            f"[yellow]interrupted[/] (Ctrl-C): {runner.episodes_done} of {len(runner.plan)} episodes "
            f"done and kept in {escape(str(runner.run.episodes_path))}; re-run the same command "
            "to resume",
            soft_wrap=True,
        )
        raise typer.Exit(130) from None
    except BaseException as exc:  # never leave the manifest "running"
        runner.abandon(exc)
        raise
    return summary


def print_outputs(report_md: Path, out_dir: Path) -> None:
    """Where to look: the report (markdown and HTML) and the command that opens the viewer."""
    out.print(f"report: {report_md}", markup=False, soft_wrap=True)
    out.print(f"HTML report: {report_md.parent / 'index.html'}", markup=False, soft_wrap=True)
    out.print(f"step through the episodes: exploreval view {out_dir}", markup=False, soft_wrap=True)


# -> Any: a pandas DataFrame (pandas is imported only by the commands that print tables)
def trailing_fit(frame: Any, width: int) -> tuple[Any, list[str]]:
    """``frame`` without its last columns until it fits ``width`` (its columns come most
    telling first: the suite's own headline metrics before the common ones)."""
    columns = list(frame.columns)

    def needed(names: list[str]) -> int:
        return sum(max([len(str(n)), *(len(str(v)) for v in frame[n])]) + 3 for n in names) + 1

    left_out: list[str] = []
    keep = columns.index("success") + 1 if "success" in columns else 1
    while len(columns) > keep and needed(columns) > width:  # keys, n and success always stay
        left_out.insert(0, columns.pop())
    return frame[columns], left_out


def print_headlines(results: Path) -> None:
    """One line per agent: success and its suite's own headline metrics, with CIs (from the
    results the report's scoring just wrote)."""
    if not results.exists():
        return
    import pandas as pd

    from exploreval.analysis import headline_lines

    for line in headline_lines(pd.read_parquet(results)):
        console.print(f"  {escape(line)}", soft_wrap=True, highlight=False)


def finish_run(summary: Any, out_dir: Path, report: bool, judge: Any = None) -> None:
    """Print the outcome, judge (``--judge-model``), write the report; a run whose every
    episode errored exits 1."""
    colour = {"finished": "green", "partial": "yellow", "failed": "red"}.get(
        summary.status, "yellow"
    )
    console.print(
        f"[{colour}]{summary.status}[/]: {count(summary.completed, 'episode')} run, {summary.skipped} "
        f"resumed from the log, {summary.errored} errored"
        + (f" ({escape(summary.error)})" if summary.error else ""),
        soft_wrap=True,
    )
    for agent, (bad, steps) in summary.mostly_invalid().items():
        console.print(
            f"[yellow]warning[/]: {escape(agent)}: {bad} of {count(steps, 'action')} were "
            f"invalid ({100 * bad / steps:.0f}%): its replies did not parse as actions, so the "
            "run measured nothing of how it explores. Fix: --constrain auto (the harness's "
            "grammar goes with each request; the default for local:* models) or a stronger "
            f"model; `exploreval view {escape(str(out_dir))}` shows the replies",
            soft_wrap=True,
        )
    if judge is not None:
        from exploreval.store import RunDir

        run = RunDir(out_dir)
        records = [r for r in run.latest_records().values() if r.status == "ok"]
        print_judged(judge.run(run, records))
    if report:
        from exploreval.analysis import build_report
        from exploreval.store import RunDir

        with score_progress(console) as progress:
            path = build_report(RunDir(out_dir), progress=progress)
        print_headlines(RunDir(out_dir).results_path)
        print_outputs(path, out_dir)
    else:  # the report's scoring does it otherwise: `exploreval view` opens from the index
        from exploreval.viewer import refresh_index

        problem = refresh_index(out_dir)
        if problem:
            console.print(f"[yellow]warning[/]: {escape(problem)}")
    if summary.status in ("partial", "failed"):
        console.print(
            f"[red]episodes errored[/]: their records and tracebacks are in "
            f"{escape(str(out_dir / 'episodes.jsonl'))}; `exploreval view {escape(str(out_dir))}` "
            "shows them",
            soft_wrap=True,
        )
        raise typer.Exit(1)


def print_judged(tables: dict[str, Any]) -> None:
    """One line per judged table: how many rows, how many with a valid answer, where it is."""
    for name, table in tables.items():
        valid = int(table["error"].isna().sum()) if "error" in table else len(table)
        console.print(
            f"judged ({name}): {len(table)} rows, {valid} with a valid answer, "
            f"{len(table) - valid} with the reason there is none (tables/judged/{name}.parquet)",
            soft_wrap=True,
        )


# -> Any: pandas DataFrames (pandas is imported only by the commands that print tables)
def print_suite_tables(tables: dict[str, Any], names: list[str], wide: bool) -> None:
    """``score --table NAME``: the named tables as the terminal shows any other (narrowed to
    its width unless --wide); an unknown name is refused with the close matches."""
    from exploreval.cli._report import print_table
    from exploreval.core import unknown_name_error

    for name in names:
        if name not in tables:
            raise unknown_name_error("table", name, tables, "this run")
    for name in names:
        print_table(out, tables[name], f"{name}: {count(len(tables[name]), 'row')}", wide=wide)
