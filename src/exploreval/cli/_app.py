"""The ``exploreval`` command: a thin layer over runner, store, metrics and report."""

from __future__ import annotations

import inspect
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from exploreval.cli._progress import score_progress
from exploreval.cli._tables import print_listing
from exploreval.core import OPTIONS_BY_NAME, RUN_OPTIONS, RunOption
from exploreval.core import VERSION as __version__

if TYPE_CHECKING:
    from exploreval.runner import ExperimentSpec
from exploreval.cli._run_output import (
    console,
    count,
    finish_run,
    out,
    print_judged,
    print_outputs,
    print_suite_tables,
    progress_runner,
    trailing_fit,
)


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
    if not print_run_plan(spec) and values["dry_run"]:
        console.print("no model agents: nothing to pay for", highlight=False)
    if values["dry_run"]:
        return
    summary = progress_runner(spec, out_dir, values["force"], values["quiet"])
    finish_run(summary, out_dir, values["report"], judge)


def print_run_plan(spec: ExperimentSpec) -> bool:
    """Before the first call: each model agent's episodes, calls, tokens, cost and wall time;
    a plan dearer than ``--max-cost-usd`` is refused. False when no model plays."""
    from exploreval.cli._profile import refuse_over_budget
    from exploreval.models import PriceTable
    from exploreval.profile import plan_lines, spec_plans

    plans = spec_plans(spec, PriceTable(spec.prices))
    for plan in plans:
        console.print(f"[bold]plan for {escape(str(plan.model))}[/]", highlight=False)
        for line in plan_lines(plan):
            console.print(escape(line), highlight=False, soft_wrap=True)
    if plans:
        costs = [p.cost_usd for p in plans]
        total = None if any(c is None for c in costs) else sum(c or 0.0 for c in costs)
        refuse_over_budget(total, spec.budget.max_cost_usd, ", ".join(str(p.model) for p in plans))
    return bool(plans)


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
            print_judged(judged)
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
        print_suite_tables(result.tables, table_names, wide)
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
        shown, left_out = (frame, []) if wide else trailing_fit(frame, out.width)
        print_table(out, shown, title, wide=True)
        if left_out:
            out.print(
                f"left out at {out.width} columns: {', '.join(left_out)} (--wide: all)",
                markup=False,
            )
    from exploreval.analysis import metric_definitions

    for metric, definition in metric_definitions(result.table).items():
        out.print(f"definition of {metric}: {definition} (docs/tide.md)", markup=False)
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
    summary = progress_runner(spec, out_dir, False, quiet)
    from exploreval.analysis import build_report
    from exploreval.store import RunDir

    path = build_report(RunDir(out_dir))
    console.print(
        f"[green]{summary.status}[/]: {count(summary.completed, 'episode')} run, {summary.skipped} resumed"
    )
    for line in demo_contrast(out_dir):
        out.print(line, markup=False, highlight=False, soft_wrap=True)
    print_outputs(path, out_dir)


class _Host:
    """What suite commands may ask of the CLI (``exploreval.core.CommandHost``)."""

    def experiment_size(self, experiment: dict[str, Any], source: str) -> int:
        from exploreval.runner import plan_episodes, spec_from_dict

        return len(plan_episodes(spec_from_dict(experiment, source)))

    def fail(self, message: str) -> None:
        raise ValueError(message)


def _register_suite_commands() -> None:
    """Commands of cross-suite areas, then every suite plugin's own commands."""
    from exploreval.cli import _doctor, _export, _profile, _report, _sql, _tide, _view
    from exploreval.core import SUITE_PLUGINS, load_plugins, resolve

    _doctor.register(app)
    _export.register(app)
    _profile.register(app)
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
