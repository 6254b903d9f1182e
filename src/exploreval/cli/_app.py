"""The ``exploreval`` command: a thin layer over runner, store, metrics and report."""

from __future__ import annotations

import inspect
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape

from exploreval.cli._progress import score_progress
from exploreval.cli._tables import print_listing
from exploreval.core import OPTIONS_BY_NAME, RUN_OPTIONS, RunOption
from exploreval.core import VERSION as __version__

if TYPE_CHECKING:
    from exploreval.runner import ExperimentSpec, RunSummary


def _rich_help() -> bool:
    """Boxed help on a terminal wide enough for it; plain help otherwise (a pipe, or fewer
    than 110 columns), where nothing is cut: rich's tables end long option names with "…"."""
    import shutil

    return sys.stdout.isatty() and shutil.get_terminal_size((80, 24)).columns >= 110


app = typer.Typer(
    name="exploreval",
    help="Measure how LLM agents explore and exploit: run suites, score trajectories, report.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    rich_markup_mode="rich" if _rich_help() else None,
)
console = Console(stderr=True)
out = Console()

#: Errors that are the user's to fix: printed as one clear message, no traceback.
USER_ERRORS: tuple[type[BaseException], ...] = ()


def _user_errors() -> tuple[type[BaseException], ...]:
    from exploreval.core import CorruptDatabaseError, MissingExtraError, UnknownNameError
    from exploreval.models import ModelError
    from exploreval.runner import ConfigMismatchError, RunFailedError, SpecError
    from exploreval.store import StoreError

    return (
        MissingExtraError,
        CorruptDatabaseError,
        UnknownNameError,
        SpecError,
        ConfigMismatchError,
        RunFailedError,
        StoreError,
        ModelError,
        ValueError,
        FileNotFoundError,
    )


_DEBUG = {"on": False}


def count(n: int, noun: str) -> str:
    """``1 episode``, ``2 episodes``: a count with its noun in the right number."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _print_version(value: bool) -> None:
    if value:  # eager: runs before typer looks for a command
        out.print(__version__, markup=False, highlight=False)
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", help="Print the version and exit.", callback=_print_version, is_eager=True
        ),
    ] = False,
    debug: Annotated[
        bool, typer.Option("--debug", help="Show the traceback behind a one-line error.")
    ] = False,
) -> None:
    _DEBUG["on"] = debug


@app.command("envs")
def envs_cmd(
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """List registered environments with their versioned ids and presets."""
    from exploreval.core import list_envs

    specs = list_envs()
    if as_json:
        out.print_json(
            json.dumps(
                [
                    {
                        "env_id": s.env_id,
                        "family": s.family,
                        "description": s.description,
                        "presets": sorted(s.presets),
                        "default_preset": s.default_preset,
                    }
                    for s in specs
                ]
            )
        )
        return
    rows = [
        [s.env_id, s.family, ", ".join(sorted(s.presets)) if s.presets else "-", s.description]
        for s in specs
    ]
    print_listing(out, "exploreval environments", ("env id", "family", "presets", "description"),
                  rows)  # fmt: skip


def _print_named_entries(kind: str, registry: Any, family: str | None) -> None:
    """One row per registered name and what it is: a name several families register with the
    same description is one row listing them; one they describe differently (``random`` pulls
    an arm in the bandit, moves on the grid) gets a row per description, each with its own
    families. Names are never cut."""
    rows: dict[tuple[str, str, str], set[str]] = {}
    for key, entry in registry.items():
        fam, _, name = key.partition(":")
        if family is not None and fam != family:
            continue
        rows.setdefault((name, entry.suite, entry.description), set()).add(fam)
    plural = "harnesses" if kind == "harness" else f"{kind}s"
    listing = [
        [name, ", ".join(sorted(families)), suite, description]
        for (name, suite, description), families in sorted(
            rows.items(), key=lambda item: (item[0][0], sorted(item[1]))
        )
    ]
    print_listing(out, plural + (f" for family {family}" if family else ""),
                  (kind, "families", "suite", "description"), listing)  # fmt: skip


@app.command("agents")
def agents_cmd(
    family: Annotated[str | None, typer.Option(help="Only this env family")] = None,
) -> None:
    """Scripted agents, per env family (use with --agent)."""
    from exploreval.agents import AGENT_REGISTRY

    _print_named_entries("agent", AGENT_REGISTRY, family)


@app.command("harnesses")
def harnesses_cmd(
    family: Annotated[str | None, typer.Option(help="Only this env family")] = None,
) -> None:
    """LLM harnesses (prompt formats), per env family (use with --model ... --harness)."""
    from exploreval.agents import HARNESS_REGISTRY

    _print_named_entries("harness", HARNESS_REGISTRY, family)


@app.command("suites")
def suites_cmd(
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """List named suites (the papers' task sets), usable as `run --suite NAME`."""
    from exploreval.core import list_suites

    suites = list_suites()
    if as_json:
        out.print_json(
            json.dumps(
                [
                    {
                        "name": s.name,
                        "description": s.description,
                        "tasks": s.tasks(),
                        "suites": list(s.suites),
                    }
                    for s in suites
                ]
            )
        )
        return
    rows = [
        [s.name, ", ".join(sorted({str(e["env_id"]) for e in s.suites})), str(s.tasks()),
         s.description]
        for s in suites
    ]  # fmt: skip
    print_listing(out, "exploreval named suites", ("name", "env ids", "tasks", "description"),
                  rows)  # fmt: skip


def explicit_flags(ctx: Any) -> set[str]:
    """Parameters the user typed on the command line (not defaults, not the environment)."""
    given: set[str] = set()
    for name in ctx.params:
        source = ctx.get_parameter_source(name)
        if source is not None and source.name == "COMMANDLINE":
            given.add(name)
    return given


# -> Any: a rich progress column (rich is imported only when a run shows progress)
def _eta_column() -> Any:
    from rich.progress import TimeRemainingColumn
    from rich.text import Text

    class EtaColumn(TimeRemainingColumn):
        """Rich's time remaining, once the task says its rate means something (``eta_ready``)."""

        def render(self, task: Any) -> Text:
            if not task.fields.get("eta_ready", True):
                return Text("-:--:--", style="progress.remaining")
            return super().render(task)

    return EtaColumn()


def _progress_runner(spec: ExperimentSpec, out_dir: Path, force: bool, quiet: bool) -> RunSummary:
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
        _eta_column(),
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


# -> Any: an Annotated[...] built at run time, a type only typer reads
def _typer_annotation(option: RunOption) -> Any:
    """A run option as typer declares a parameter (type, flags, help) from its table row."""
    if option.argument:
        info: Any = typer.Argument(help=option.help_text(), metavar=option.metavar)
    else:
        # no bounds here: the spec checks values, so the flag and the keyword get one message
        info = typer.Option(*option.flags, help=option.help_text())
    return Annotated[option.cli_type, info]


def _run_signature() -> inspect.Signature:
    """``run``'s parameters, one per row of ``runner.RUN_OPTIONS`` (nothing declared here)."""
    params = [inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                annotation=typer.Context)]  # fmt: skip
    for option in RUN_OPTIONS:
        params.append(
            inspect.Parameter(
                option.name,
                inspect.Parameter.KEYWORD_ONLY,
                default=option.default_value(),
                annotation=_typer_annotation(option),
            )
        )
    return inspect.Signature(params, return_annotation=None)


def run_cmd(ctx: typer.Context, **values: Any) -> None:
    """Run (or resume) an experiment: env × presets × seeds × agents × repeats.

    With only --out RUN_DIR, resumes that run from the config stored in its manifest."""
    from exploreval.runner import experiment_from_options, load_spec

    given = explicit_flags(ctx)
    out_dir: Path = values["out"]
    config: Path | None = values["config"]
    if values["rebuild_cache"]:
        _rebuild_caches(out_dir)
    resuming = (
        config is None
        and values["env"] is None
        and not values["suites"]
        and (out_dir / "manifest.json").exists()
    )
    if config is not None:
        spec = experiment_from_options(values, given, stored=load_spec(config), source="--config")
    elif resuming:
        spec = experiment_from_options(
            values, given, stored=_stored_spec(out_dir), source=f"resuming {out_dir}"
        )
    else:
        spec = experiment_from_options(values, given)
    judge = None
    if values["judge_model"] is not None:
        from exploreval.cli._judge import Judge

        judge = Judge(values["judge_model"], values["judge_base_url"], values["judge_api_key_env"])
        judge.check()  # a judge without its key is refused before the run, not after it
    summary = _progress_runner(spec, out_dir, values["force"], values["quiet"])
    _finish_run(summary, out_dir, values["report"], judge)


run_cmd.__signature__ = _run_signature()  # type: ignore[attr-defined]
app.command("run")(run_cmd)


def _rebuild_caches(out_dir: Path) -> None:
    """Move unreadable SQLite files of a run aside (never delete evidence)."""
    from exploreval.core import is_readable_sqlite, move_aside

    for name in ("cache.sqlite", "blobs.sqlite"):
        path = out_dir / name
        if not is_readable_sqlite(path):
            kept = move_aside(path)
            console.print(
                f"[yellow]{escape(str(path))} was unreadable: kept as {escape(str(kept))}"
            )


def _stored_spec(out_dir: Path) -> ExperimentSpec:
    """The experiment a run directory was made with (resume/retry from the directory alone)."""
    from exploreval.runner import spec_from_dict
    from exploreval.store import RunDir

    manifest = RunDir(out_dir).read_manifest()
    if manifest.kind != "experiment" or not manifest.config:
        raise ValueError(f"{out_dir / 'manifest.json'} holds no experiment config to resume")
    return spec_from_dict(manifest.config, str(out_dir / "manifest.json"))


def _print_outputs(report_md: Path, out_dir: Path) -> None:
    """Where to look: the report (markdown and HTML) and the command that opens the viewer."""
    out.print(f"report: {report_md}", markup=False, soft_wrap=True)
    out.print(f"HTML report: {report_md.parent / 'index.html'}", markup=False, soft_wrap=True)
    out.print(f"step through the episodes: exploreval view {out_dir}", markup=False, soft_wrap=True)


# -> Any: a pandas DataFrame (pandas is imported only by the commands that print tables)
def _trailing_fit(frame: Any, width: int) -> tuple[Any, list[str]]:
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


def _print_headlines(results: Path) -> None:
    """One line per agent: success and its suite's own headline metrics, with CIs (from the
    results the report's scoring just wrote)."""
    if not results.exists():
        return
    import pandas as pd

    from exploreval.analysis import headline_lines

    for line in headline_lines(pd.read_parquet(results)):
        console.print(f"  {escape(line)}", soft_wrap=True, highlight=False)


def _finish_run(summary: Any, out_dir: Path, report: bool, judge: Any = None) -> None:
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
        _print_judged(judge.run(run, records))
    if report:
        from exploreval.analysis import build_report
        from exploreval.store import RunDir

        with score_progress(console) as progress:
            path = build_report(RunDir(out_dir), progress=progress)
        _print_headlines(RunDir(out_dir).results_path)
        _print_outputs(path, out_dir)
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


def _print_judged(tables: dict[str, Any]) -> None:
    """One line per judged table: how many rows, how many with a valid answer, where it is."""
    for name, table in tables.items():
        valid = int(table["error"].isna().sum()) if "error" in table else len(table)
        console.print(
            f"judged ({name}): {len(table)} rows, {valid} with a valid answer, "
            f"{len(table) - valid} with the reason there is none (tables/judged/{name}.parquet)",
            soft_wrap=True,
        )


# -> Any: pandas DataFrames (pandas is imported only by the commands that print tables)
def _print_suite_tables(tables: dict[str, Any], names: list[str], wide: bool) -> None:
    """``score --table NAME``: the named tables as the terminal shows any other (narrowed to
    its width unless --wide); an unknown name is refused with the close matches."""
    from exploreval.cli._report import print_table
    from exploreval.core import unknown_name_error

    for name in names:
        if name not in tables:
            raise unknown_name_error("table", name, tables, "this run")
    for name in names:
        print_table(out, tables[name], f"{name}: {count(len(tables[name]), 'row')}", wide=wide)


@app.command("score")
def score_cmd(
    run_dir: Annotated[Path, typer.Argument(help="Run directory")],
    as_json: Annotated[bool, typer.Option("--json")] = False,
    wide: Annotated[
        bool, typer.Option("--wide", help="Every summary column, even wider than the terminal")
    ] = False,
    judge_model: Annotated[
        str | None,
        typer.Option(
            help="Also run the metrics that call a model (the terminal suite's LLM judge of "
            "ignored solutions, paper 4 Table 4) with this model (local:smollm2, or any "
            "OpenAI-compatible model); calls are cached in the run's cache.sqlite",
        ),
    ] = None,
    judge_base_url: Annotated[
        str | None, typer.Option(help=OPTIONS_BY_NAME["judge_base_url"].help)
    ] = None,
    judge_api_key_env: Annotated[
        str, typer.Option(help=OPTIONS_BY_NAME["judge_api_key_env"].help)
    ] = OPTIONS_BY_NAME["judge_api_key_env"].default,
    table_names: Annotated[
        list[str] | None,
        typer.Option(
            "--table",
            help="Print this suite table (as in tables/, e.g. bandit_summary) instead of the "
            "summary; repeatable. The end of `score` lists the run's tables",
            metavar="NAME",
        ),
    ] = None,
) -> None:
    """Recompute all metrics from stored trajectories (writes results.parquet, tables/)."""
    from exploreval.analysis import score_run, summary_table
    from exploreval.core import gc_paused
    from exploreval.store import RunDir

    # the records are not needed past scoring: freed before the collector resumes, so that it
    # never walks them (exploreval.core.gc_paused; seconds per 10,000 episodes)
    with gc_paused():
        with score_progress(console) as progress:  # gone before the judge prints its table
            result = score_run(RunDir(run_dir), progress=progress)
        if judge_model is not None:
            from exploreval.cli._judge import Judge

            judge = Judge(judge_model, judge_base_url, judge_api_key_env)
            judged = judge.run(RunDir(run_dir), result.records)
            result.tables.update(judged)
            _print_judged(judged)
        episodes = len(result.records)
        result.forget_records()
    for issue in result.issues:
        console.print(
            f"[yellow]warning[/]: {escape(str(run_dir / 'episodes.jsonl'))} {escape(str(issue))} "
            "(skipped)"
        )
    if as_json:
        out.print_json(
            json.dumps(
                {
                    "episodes": json.loads(result.table.to_json(orient="records")),
                    "tables": {
                        k: json.loads(v.to_json(orient="records")) for k, v in result.tables.items()
                    },
                    "issues": [str(i) for i in result.issues],
                }
            )
        )
        return
    from exploreval.cli._report import print_table

    if table_names:
        _print_suite_tables(result.tables, table_names, wide)
        return
    summary = summary_table(result.table)
    print_table(out, summary, f"{run_dir}: {count(episodes, 'episode')}", wide=wide)
    from exploreval.analysis import headline_table

    # each suite's own headline metrics (EUS, discovery@k, SuffFail...) first, so a narrow
    # terminal cuts the common ones (steps, AUV...) before them; --wide shows every one
    for family, frame in headline_table(result.table).items():
        title = f"headline metrics: {family} (mean [95% CI])"
        if frame["env"].nunique() == 1:  # one env: named in the title, its column left out
            title = f"headline metrics: {frame['env'].iloc[0]} (mean [95% CI])"
            frame = frame.drop(columns="env")
        shown, left_out = (frame, []) if wide else _trailing_fit(frame, out.width)
        print_table(out, shown, title, wide=True)
        if left_out:
            out.print(
                f"left out at {out.width} columns: {', '.join(left_out)} (--wide: all)",
                markup=False,
            )
    where = RunDir(run_dir).results_path if result.stored else "not stored (read-only run)"
    out.print(
        f"results: {where}  tables: {', '.join(sorted(result.tables)) or '-'}",
        markup=False,
        soft_wrap=True,
    )
    if result.chunks_cached:
        out.print(
            f"map: {result.chunks_cached} of {result.chunks} chunks read back from the score "
            f"cache (unchanged since the last score); {result.chunks - result.chunks_cached} "
            "mapped",
            markup=False,
            soft_wrap=True,
        )


@app.command("runs")
def runs_cmd(
    root: Annotated[Path, typer.Argument(help="Directory holding runs")] = Path("runs"),
) -> None:
    """List runs under a directory."""
    from exploreval.store import RunDir, list_runs

    rows: list[list[str]] = []
    for path, manifest, error in list_runs(root):
        if manifest is None:
            one_line = " ".join(error.split())  # a cell, not a dump
            rows.append([str(path), "-", f"unreadable: {one_line}", "-", "-", "-"])
        else:
            status: str = manifest.status
            if status == "running" and not RunDir(path).is_locked():
                status = "stale"  # its process died (kill -9, power loss) mid-run
            rows.append([
                str(path), manifest.name, status,
                f"{manifest.episodes_done}/{manifest.episodes_planned}",
                manifest.created_at.strftime("%Y-%m-%d %H:%M"), manifest.config_hash,
            ])  # fmt: skip
    print_listing(out, f"runs under {root}",
                  ("path", "name", "status", "done/planned", "created", "config hash"), rows,
                  keys=2)  # fmt: skip


@app.command("schema")
def schema_cmd() -> None:
    """Print the JSON schema of the episode record."""
    from exploreval.core import episode_json_schema

    out.print_json(json.dumps(episode_json_schema()))


@app.command("demo")
def demo_cmd(
    out_dir: Annotated[Path, typer.Option("--out", "-o")] = Path("runs/demo"),
    llm: Annotated[
        bool, typer.Option(help="Include the embedded local LLM (needs the [local] extra)")
    ] = True,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="No progress bar (the outcome is still printed)")
    ] = False,
) -> None:
    """Small grid-suite evaluation: scripted baselines + the embedded local LLM, then a report."""
    from exploreval.cli._demo import demo_contrast, demo_spec, local_llm_available

    use_llm = llm and local_llm_available()
    if llm and not use_llm:
        console.print(
            "[yellow]local LLM not installed (pip install 'exploreval[local]'); running baselines only"
        )
    spec = demo_spec(with_llm=use_llm)
    summary = _progress_runner(spec, out_dir, False, quiet)
    from exploreval.analysis import build_report
    from exploreval.store import RunDir

    path = build_report(RunDir(out_dir))
    console.print(
        f"[green]{summary.status}[/]: {count(summary.completed, 'episode')} run, {summary.skipped} resumed"
    )
    for line in demo_contrast(out_dir):
        out.print(line, markup=False, highlight=False, soft_wrap=True)
    _print_outputs(path, out_dir)


class _Host:
    """What suite commands may ask of the CLI (``exploreval.core.CommandHost``)."""

    def experiment_size(self, experiment: dict[str, Any], source: str) -> int:
        from exploreval.runner import plan_episodes, spec_from_dict

        return len(plan_episodes(spec_from_dict(experiment, source)))

    def fail(self, message: str) -> None:
        raise ValueError(message)


def _register_suite_commands() -> None:
    """Commands of cross-suite areas, then every suite plugin's own commands."""
    from exploreval.cli import _doctor, _export, _report, _sql, _tide, _view
    from exploreval.core import SUITE_PLUGINS, load_plugins, resolve

    _doctor.register(app)
    _export.register(app)
    _sql.register(app)
    _report.register(app)
    _tide.register(app)
    _view.register(app)
    load_plugins()
    host = _Host()
    for _name, plugin in SUITE_PLUGINS.items():
        if plugin.commands is None:
            continue
        try:
            resolve(plugin.commands)(app, host)
        except Exception as exc:  # a broken plugin must not take the whole CLI down
            console.print(
                f"[yellow]warning[/]: suite {escape(plugin.name)!s} could not add its commands: "
                f"{escape(str(exc))}"
            )


_register_suite_commands()


def _one_line_paragraphs(text: str) -> str:
    """A docstring's paragraphs with their hard line breaks joined (help rewraps them)."""
    import inspect

    paragraphs = inspect.cleandoc(text).split("\n\n")
    return "\n\n".join(" ".join(p.split()) for p in paragraphs)


def _tidy_help() -> None:
    """Every command's description as flowing paragraphs, never the docstring's line breaks."""
    for info in app.registered_commands:
        doc = info.help or (info.callback.__doc__ if info.callback else None)
        if doc:
            info.help = _one_line_paragraphs(doc)


_tidy_help()


def _usage_names_as_every_cli_writes_them() -> None:
    """typer 0.29 writes a required argument as ``{run_dirs}`` in the usage line; write it as
    click and man pages do: ``RUN_DIRS...`` when required, ``[RUN_DIRS]...`` when not."""
    from typer.core import TyperArgument

    if not hasattr(TyperArgument, "_usage_display_name"):
        return  # another typer: its own usage line stands

    def usage_name(self: TyperArgument) -> str:
        name = self.metavar or (self.name or "").upper()
        name = name if self.required else f"[{name}]"
        return name + ("..." if self.nargs != 1 else "")

    TyperArgument._usage_display_name = usage_name  # type: ignore[method-assign]


_usage_names_as_every_cli_writes_them()


def _show_notes() -> None:
    """Warnings meant for the user (``store.RunNote``: tables rebuilt from the log, a results
    file left out) as one ``note:`` line on stderr, never on stdout, which may be a CSV; any
    other warning as Python shows it."""
    import warnings

    shown = warnings.showwarning

    def show(message: Warning | str, category: type[Warning], *args: Any, **kwargs: Any) -> None:
        from exploreval.store import RunNote

        if issubclass(category, RunNote):
            console.print(f"[yellow]note:[/] {escape(str(message))}", soft_wrap=True)
        else:
            shown(message, category, *args, **kwargs)

    warnings.showwarning = show


def main() -> None:
    """Console entry point: user errors become one clear line and exit code 2."""
    errors = _user_errors()
    _show_notes()
    from exploreval.runner import RunInterruptedError

    try:
        app()
    except RunInterruptedError as exc:
        console.print(f"[yellow]interrupted:[/] {escape(str(exc))}")
        sys.exit(128 + exc.signum)
    except KeyboardInterrupt:
        console.print("[yellow]interrupted[/] (Ctrl-C); re-run the same command to resume")
        sys.exit(130)
    except errors as exc:
        if _DEBUG["on"]:
            console.print_exception()
        console.print(f"[red]error:[/] {escape(str(exc))}", soft_wrap=True)
        if not _DEBUG["on"] and not _raised_by_exploreval(exc):
            console.print("[dim](run with `exploreval --debug ...` for the traceback)[/]")
        sys.exit(2)


def _raised_by_exploreval(exc: BaseException) -> bool:
    """Whether exploreval's own code raised ``exc`` (a refusal it words for the user, whose
    traceback tells nothing more), rather than a library it called (then the traceback may
    help, and the ``--debug`` hint is shown)."""
    package = Path(__file__).resolve().parents[1]
    tb = exc.__traceback__
    last = None
    while tb is not None:
        last, tb = tb, tb.tb_next
    if last is None:
        return False
    return Path(last.tb_frame.f_code.co_filename).resolve().is_relative_to(package)
