"""The ``exploreval`` command: a thin layer over runner, store, metrics and report."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape

from exploreval import __version__
from exploreval.cli._tables import print_listing

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
    from exploreval.core._extras import MissingExtraError
    from exploreval.core._registry import UnknownNameError
    from exploreval.core._sqlite import CorruptDatabaseError
    from exploreval.models._errors import ModelError
    from exploreval.runner._errors import ConfigMismatchError, RunFailedError, SpecError
    from exploreval.store._errors import StoreError

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


def _key_values(items: list[str], flag: str) -> dict[str, Any]:
    """``KEY=VALUE`` pairs; values are JSON when they parse (numbers, lists...), else text.
    A key given twice is refused (the first value would be silently dropped)."""
    options: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ValueError(f"{flag} {item!r}: expected KEY=VALUE")
        if key in options:
            raise ValueError(f"{flag} {key}=... given more than once: give each key once")
        try:
            options[key] = json.loads(value)
        except json.JSONDecodeError:
            options[key] = value
    return options


def _print_named_entries(kind: str, registry: Any, family: str | None) -> None:
    """One row per registered name: families, suite, description (names never cut)."""
    rows: dict[str, tuple[set[str], str, str]] = {}
    for key, entry in registry.items():
        fam, _, name = key.partition(":")
        if family is not None and fam != family:
            continue
        families, suite, description = rows.setdefault(
            name, (set(), entry.suite, entry.description)
        )
        families.add(fam)
    plural = "harnesses" if kind == "harness" else f"{kind}s"
    listing = [
        [name, ", ".join(sorted(rows[name][0])), rows[name][1], rows[name][2]]
        for name in sorted(rows)
    ]
    print_listing(out, plural + (f" for family {family}" if family else ""),
                  (kind, "families", "suite", "description"), listing)  # fmt: skip


@app.command("agents")
def agents_cmd(
    family: Annotated[str | None, typer.Option(help="Only this env family")] = None,
) -> None:
    """Scripted agents, per env family (use with --agent)."""
    from exploreval.agents._registry import AGENT_REGISTRY

    _print_named_entries("agent", AGENT_REGISTRY, family)


@app.command("harnesses")
def harnesses_cmd(
    family: Annotated[str | None, typer.Option(help="Only this env family")] = None,
) -> None:
    """LLM harnesses (prompt formats), per env family (use with --model ... --harness)."""
    from exploreval.agents._registry import HARNESS_REGISTRY

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


def _build_spec(
    env_id: str | None,
    presets: list[str],
    seeds: str | None,
    agents: list[str],
    models: list[str],
    base_url: str | None,
    api_key_env: str,
    harness: str,
    harness_options: list[str],
    history: list[str],
    sampling: dict[str, Any],
    repeats: int,
    max_steps: int | None,
    executor: str,
    concurrency: int,
    budget: dict[str, Any],
    timeout: float | None,
    name: str | None,
    plugins: list[str],
    client_options: dict[str, Any] | None = None,
    prices: Path | None = None,
    env_options: list[str] | None = None,
    named_suites: list[str] | None = None,
    given: set[str] | None = None,
) -> ExperimentSpec:
    named_suites = named_suites or []
    for flag, flag_values in (
        ("--agent", agents),
        ("--preset", presets),
        ("--history", history),
        ("--suite", named_suites),
        ("--plugin", plugins),
    ):
        refuse_repeats(flag, flag_values)
    if seeds is not None:
        from exploreval.runner import parse_seeds

        try:
            parse_seeds(seeds)
        except ValueError as exc:
            raise ValueError(f"--seeds {seeds}: {exc}") from None
    effort = sampling.get("reasoning_effort")
    if effort is not None:
        from exploreval.models._base import REASONING_EFFORTS

        if effort not in REASONING_EFFORTS:
            raise ValueError(
                f"--reasoning-effort {effort}: expected one of {', '.join(REASONING_EFFORTS)}"
            )
    from exploreval.models import load_prices
    from exploreval.runner import spec_from_dict

    loaded_prices = load_prices(prices) if prices is not None else {}

    if env_id is None and not named_suites:
        raise ValueError(
            "give an ENV_ID (see `exploreval envs`), --suite NAME (see `exploreval suites`) "
            "or --config FILE"
        )
    if env_id is not None and named_suites:
        raise ValueError("give an ENV_ID or --suite, not both")
    if named_suites and presets:
        raise ValueError(
            "--preset with --suite: a named suite fixes its presets (see `exploreval suites`); "
            "give an ENV_ID with --preset instead"
        )
    agent_dicts: list[dict[str, Any]] = [{"kind": "scripted", "agent": a} for a in agents]
    options = _key_values(harness_options, "--harness-option")
    for model in split_models(models):
        for policy in history or ["full"]:
            agent_dicts.append(
                {
                    "kind": "llm",
                    "model": model,
                    "base_url": base_url,
                    "api_key_env": api_key_env,
                    "harness": harness,
                    "harness_options": options,
                    "history": policy,
                    "sampling": {k: v for k, v in sampling.items() if v is not None},
                    **{k: v for k, v in (client_options or {}).items() if v is not None},
                }
            )
    if not agent_dicts:
        raise ValueError("no agent: give --agent NAME (scripted) and/or --model NAME (LLM)")
    if not models:
        check_llm_flags(given or set())
    data: dict[str, Any] = {
        "name": name or (env_id.split("/")[-1] if env_id else "+".join(named_suites)),
        "suites": [
            {
                "suite": suite_name,
                **({"seeds": seeds} if seeds is not None else {}),
                **({"options": _key_values(env_options, "--env-option")} if env_options else {}),
            }
            for suite_name in named_suites
        ]
        if env_id is None
        else [
            {
                "env_id": env_id,
                "presets": presets or [None],
                "seeds": seeds if seeds is not None else "0",
                "options": _key_values(env_options or [], "--env-option"),
            }
        ],
        "agents": agent_dicts,
        "repeats": repeats,
        "max_steps": max_steps,
        "executor": executor,
        "concurrency": concurrency,
        "budget": {k: v for k, v in budget.items() if v is not None},
        "episode_timeout_s": timeout,
        "plugins": plugins,
        "prices": {k: v.model_dump() for k, v in loaded_prices.items()},
    }
    return spec_from_dict(data, "command-line options")


def refuse_repeats(flag: str, values: list[str]) -> None:
    """A value given twice to a repeatable flag would plan the same episodes twice (one copy
    silently dropped): refuse it, naming the flag and the value."""
    repeated = sorted({v for v in values if values.count(v) > 1})
    if repeated:
        raise ValueError(
            f"{flag} {', '.join(repeated)} given more than once: give each value once (the "
            "repeat would plan the same episodes again and be silently dropped)"
        )


def split_models(values: list[str]) -> list[str]:
    """``--model a --model b`` and ``--model a,b`` both mean two LLM agents (as inspect_ai);
    a name given twice is refused rather than silently run once."""
    names = [name.strip() for value in values for name in value.split(",") if name.strip()]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ValueError(f"--model {', '.join(repeated)} given more than once")
    return names


#: Flags that may be combined with --config (or a resume from --out RUN_DIR): they override the
#: stored experiment's fields.
_CONFIG_OVERRIDES = {
    "seeds": "every suite's seeds",
    "repeats": "repeats",
    "max_steps": "max_steps",
    "executor": "executor",
    "concurrency": "concurrency",
    "max_connections": "every LLM agent's max_concurrency",
    "max_total_steps": "budget.max_total_steps",
    "max_total_tokens": "budget.max_total_tokens",
    "max_cost": "budget.max_cost_usd",
    "timeout": "episode_timeout_s",
    "name": "name",
    "plugin": "plugins (appended)",
    "prices": "prices (merged)",
}
#: How an LLM agent is reached and sampled (``--model``'s companions).
_LLM_REQUEST_FLAGS = (
    "base_url",
    "api_key_env",
    "harness",
    "harness_option",
    "history",
    "temperature",
    "top_p",
    "max_tokens",
    "sampling_seed",
    "reasoning_effort",
    "request_timeout",
    "max_retries",
    "constrain",
)
#: Flags that only describe a run from scratch; with --config they would be silently ignored.
_NOT_WITH_CONFIG = (
    "env_id",
    "preset",
    "suite",
    "env_option",
    "agent",
    "model",
    *_LLM_REQUEST_FLAGS,
)
#: Flags about the command itself, valid however the experiment is given.
_COMMAND_FLAGS = (
    "config", "out_dir", "force", "report", "rebuild_cache", "quiet",
    # the judge reads the finished run; it is not part of the experiment (nor of its hash)
    "judge_model", "judge_base_url", "judge_api_key_env",
)  # fmt: skip
#: Flags that only mean something for an LLM agent (``--model``).
_LLM_FLAGS = (*_LLM_REQUEST_FLAGS, "max_connections")


def _flag_name(name: str) -> str:
    return "ENV_ID" if name == "env_id" else "--" + name.replace("_", "-")


def explicit_flags(ctx: Any) -> set[str]:
    """Parameters the user typed on the command line (not defaults, not the environment)."""
    given: set[str] = set()
    for name in ctx.params:
        source = ctx.get_parameter_source(name)
        if source is not None and source.name == "COMMANDLINE":
            given.add(name)
    return given


def check_config_flags(given: set[str], source: str = "--config") -> None:
    """Refuse, naming the flag, what a stored experiment (``--config FILE``, or the manifest of
    the run being resumed) would otherwise silently ignore."""
    refused = [name for name in _NOT_WITH_CONFIG if name in given]
    if refused:
        flags = ", ".join(_flag_name(n) for n in refused)
        where = (
            "put it in the experiment file"
            if source == "--config"
            else "the run's experiment is fixed; start a new run with another --out to change it"
        )
        raise ValueError(
            f"{flags} cannot be combined with {source}: {where} "
            f"(flags that override it: "
            f"{', '.join(_flag_name(k) for k in _CONFIG_OVERRIDES)})"
        )


def check_llm_flags(given: set[str]) -> None:
    """LLM-only flags with no LLM agent would change nothing: refuse them, naming the flag."""
    refused = [name for name in _LLM_FLAGS if name in given]
    if refused:
        raise ValueError(
            f"{', '.join(_flag_name(n) for n in refused)} only applies to LLM agents, and "
            "there is none: add --model NAME, or drop the flag"
        )


def apply_config_overrides(
    spec: ExperimentSpec, values: dict[str, Any], given: set[str]
) -> ExperimentSpec:
    """The stored spec with the explicitly given override flags applied, re-validated."""
    from exploreval.runner import spec_from_dict

    data = spec.model_dump(mode="json")
    if "seeds" in given:
        for suite in data["suites"]:
            suite["seeds"] = values["seeds"]
    for flag, field in (
        ("repeats", "repeats"),
        ("max_steps", "max_steps"),
        ("executor", "executor"),
        ("concurrency", "concurrency"),
        ("timeout", "episode_timeout_s"),
        ("name", "name"),
    ):
        if flag in given:
            data[field] = values[flag]
    for flag, field in (
        ("max_total_steps", "max_total_steps"),
        ("max_total_tokens", "max_total_tokens"),
        ("max_cost", "max_cost_usd"),
    ):
        if flag in given:
            data.setdefault("budget", {})[field] = values[flag]
    if "max_connections" in given:
        llm_agents = [agent for agent in data["agents"] if agent.get("kind") == "llm"]
        if not llm_agents:
            raise ValueError(
                "--max-connections only applies to LLM agents, and the experiment has none"
            )
        for agent in llm_agents:
            agent["max_concurrency"] = values["max_connections"]
    if "plugin" in given:
        refuse_repeats("--plugin", values["plugin"])
        stored = list(data.get("plugins") or [])
        data["plugins"] = [*stored, *[m for m in values["plugin"] if m not in stored]]
    if "prices" in given:
        from exploreval.models import load_prices

        loaded = load_prices(values["prices"])
        data["prices"] = {
            **(data.get("prices") or {}),
            **{model: price.model_dump() for model, price in loaded.items()},
        }
    return spec_from_dict(data, "the stored experiment with command-line overrides")


def _progress_runner(spec: ExperimentSpec, out_dir: Path, force: bool, quiet: bool) -> RunSummary:
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
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
        TimeRemainingColumn(),
        console=console,
        disable=quiet,
    )
    task_id = progress.add_task("episodes", total=None, steps=0, tokens=0, errors=0)

    def update(totals: Totals, planned: int) -> None:
        progress.update(
            task_id,
            completed=totals.episodes,
            total=planned,
            steps=totals.steps,
            tokens=totals.usage.total_tokens,
            errors=totals.errors,
        )

    runner = Runner(spec, str(out_dir), force=force, on_progress=update)
    manifest = runner.prepare()
    try:
        update(runner.totals, len(runner.plan))
        if not quiet:
            console.print(
                f"run [bold]{escape(manifest.run_id)}[/] in {escape(str(out_dir))}: "
                f"{len(runner.plan)} episodes planned, "
                f"{len(runner.plan) - len(runner.pending)} already done"
            )
        with progress:
            summary = runner.execute()
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


#: The judge's endpoint options, shared by `run` and `score` (declared once).
JudgeBaseUrl = Annotated[
    str | None, typer.Option(help="OpenAI-compatible endpoint of --judge-model")
]
JudgeKeyEnv = Annotated[
    str, typer.Option(help="Environment variable holding --judge-model's API key")
]


@app.command("run")
def run_cmd(
    ctx: typer.Context,
    env_id: Annotated[
        str | None, typer.Argument(help="Versioned env id, e.g. exploreval/GridDAG-v0")
    ] = None,
    config: Annotated[
        Path | None, typer.Option("--config", "-c", help="YAML/TOML experiment file")
    ] = None,
    preset: Annotated[list[str], typer.Option("--preset", "-p", help="Preset (repeatable)")] = [],  # noqa: B006
    suite: Annotated[
        list[str],
        typer.Option(
            "--suite", "-s", help="Named suite, e.g. grid-main (repeatable; see `suites`)"
        ),
    ] = [],  # noqa: B006
    seeds: Annotated[
        str | None, typer.Option(help="Seeds: '0-23', '0,2,5' ... (default 0, or the suite's)")
    ] = None,
    env_option: Annotated[
        list[str], typer.Option(help="Env option KEY=VALUE, JSON values (repeatable)")
    ] = [],  # noqa: B006
    agent: Annotated[
        list[str], typer.Option("--agent", "-a", help="Scripted agent (repeatable)")
    ] = [],  # noqa: B006
    model: Annotated[
        list[str],
        typer.Option(help="LLM model name, or local:smollm2 (repeatable, or a,b: one agent each)"),
    ] = [],  # noqa: B006
    base_url: Annotated[str | None, typer.Option(help="OpenAI-compatible endpoint")] = None,
    api_key_env: Annotated[
        str, typer.Option(help="Env var holding the API key")
    ] = "OPENAI_API_KEY",
    harness: Annotated[str, typer.Option(help="Harness name for the LLM agent")] = "default",
    harness_option: Annotated[
        list[str], typer.Option(help="Harness option KEY=VALUE (repeatable)")
    ] = [],  # noqa: B006
    history: Annotated[
        list[str], typer.Option(help="full | none | window:K | summary | retrieval:K (repeatable)")
    ] = [],  # noqa: B006
    temperature: Annotated[
        float | None,
        typer.Option(help="Sampling temperature, 0-2 (default: the harness's or the server's)"),
    ] = None,
    top_p: Annotated[
        float | None, typer.Option(help="Nucleus sampling, 0-1 (default: the server's)")
    ] = None,
    max_tokens: Annotated[int | None, typer.Option(help="Most tokens per model reply")] = None,
    sampling_seed: Annotated[
        int | None, typer.Option(help="Seed passed to the model endpoint")
    ] = None,
    reasoning_effort: Annotated[
        str | None, typer.Option(help="none | minimal | low | medium | high | xhigh | max")
    ] = None,
    constrain: Annotated[
        str | None,
        typer.Option(
            help="Constrained decoding: off | auto | grammar | json_schema. The harness's grammar "
            "or JSON schema of a valid reply goes with each request (auto: a GBNF grammar to "
            "the embedded model, a JSON schema elsewhere). Default off: an invalid action is "
            "itself a diagnostic."
        ),
    ] = None,
    request_timeout: Annotated[
        float | None, typer.Option(help="Per-request timeout, seconds (default 120)")
    ] = None,
    max_retries: Annotated[
        int | None, typer.Option(help="Retries on 429/5xx/timeouts (default 6)")
    ] = None,
    prices: Annotated[
        Path | None, typer.Option(help="Price table YAML/JSON: {model: {input, output}} USD/1M")
    ] = None,
    repeats: Annotated[int, typer.Option(help="Attempts per task (pass@k)")] = 1,
    max_steps: Annotated[int | None, typer.Option(help="Per-episode step cap")] = None,
    out_dir: Annotated[Path, typer.Option("--out", "-o", help="Run directory")] = Path(
        "runs/latest"
    ),
    force: Annotated[
        bool, typer.Option(help="Continue even if the run dir holds another config")
    ] = False,
    executor: Annotated[str, typer.Option(help="local | ray")] = "local",
    concurrency: Annotated[int, typer.Option(help="Episodes in flight")] = 8,
    max_total_steps: Annotated[
        int | None, typer.Option(help="Budget: no new episode once the run took this many steps")
    ] = None,
    max_total_tokens: Annotated[
        int | None, typer.Option(help="Budget: no new episode once the run used this many tokens")
    ] = None,
    max_cost: Annotated[
        float | None, typer.Option(help="Budget in USD (every model needs a price: --prices)")
    ] = None,
    max_connections: Annotated[
        int | None,
        typer.Option(
            min=1,
            help="Requests in flight per model (default: --concurrency, the episodes in flight)",
        ),
    ] = None,
    timeout: Annotated[float | None, typer.Option(help="Per-episode timeout, seconds")] = None,
    name: Annotated[str | None, typer.Option(help="Run name")] = None,
    plugin: Annotated[
        list[str], typer.Option(help="Module registering your own envs/agents (repeatable)")
    ] = [],  # noqa: B006
    report: Annotated[bool, typer.Option(help="Write the report at the end")] = True,
    rebuild_cache: Annotated[
        bool,
        typer.Option(
            help="Move an unreadable cache.sqlite / blobs.sqlite aside (kept) and start fresh ones"
        ),
    ] = False,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="No progress bar (the outcome is still printed)")
    ] = False,
    judge_model: Annotated[
        str | None,
        typer.Option(
            help="At the end, run the metrics that call a model (as `score --judge-model`)"
        ),
    ] = None,
    judge_base_url: JudgeBaseUrl = None,
    judge_api_key_env: JudgeKeyEnv = "OPENAI_API_KEY",
) -> None:
    """Run (or resume) an experiment: env × presets × seeds × agents × repeats.

    With only --out RUN_DIR, resumes that run from the config stored in its manifest."""
    given = explicit_flags(ctx)
    values = dict(locals())
    if rebuild_cache:
        _rebuild_caches(out_dir)
    resuming = (
        config is None and env_id is None and not suite and (out_dir / "manifest.json").exists()
    )
    if config is not None or resuming:
        from exploreval.runner import load_spec

        check_config_flags(given, "--config" if config is not None else f"resuming {out_dir}")
        stored = load_spec(config) if config is not None else _stored_spec(out_dir)
        spec = apply_config_overrides(stored, values, given)
    else:
        spec = _build_spec(
            env_id,
            preset,
            seeds,
            agent,
            model,
            base_url,
            api_key_env,
            harness,
            harness_option,
            history,
            {
                "temperature": temperature,
                "top_p": top_p,
                "max_tokens": max_tokens,
                "seed": sampling_seed,
                "reasoning_effort": reasoning_effort,
            },
            repeats,
            max_steps,
            executor,
            concurrency,
            {
                "max_total_steps": max_total_steps,
                "max_total_tokens": max_total_tokens,
                "max_cost_usd": max_cost,
            },
            timeout,
            name,
            plugin,
            {
                "timeout_s": request_timeout,
                "max_retries": max_retries,
                "max_concurrency": max_connections,
                "constrain": constrain,
            },
            prices,
            env_option,
            suite,
            given,
        )
    judge = None
    if judge_model is not None:
        from exploreval.cli._judge import Judge

        judge = Judge(judge_model, judge_base_url, judge_api_key_env)
        judge.check()  # a judge without its key is refused before the run, not after it
    summary = _progress_runner(spec, out_dir, force, quiet)
    _finish_run(summary, out_dir, report, judge)


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


def _finish_run(summary: Any, out_dir: Path, report: bool, judge: Any = None) -> None:
    """Print the outcome, judge (``--judge-model``), write the report; a run whose every
    episode errored exits 1."""
    colour = {"finished": "green", "partial": "yellow", "failed": "red"}.get(
        summary.status, "yellow"
    )
    console.print(
        f"[{colour}]{summary.status}[/]: {summary.completed} episodes run, {summary.skipped} "
        f"resumed from the log, {summary.errored} errored"
        + (f" ({escape(summary.error)})" if summary.error else ""),
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

        path = build_report(RunDir(out_dir))
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
    judge_base_url: JudgeBaseUrl = None,
    judge_api_key_env: JudgeKeyEnv = "OPENAI_API_KEY",
) -> None:
    """Recompute all metrics from stored trajectories (writes results.parquet, tables/)."""
    from exploreval.analysis import score_run, summary_table
    from exploreval.core import gc_paused
    from exploreval.store import RunDir

    # the records are not needed past scoring: freed before the collector resumes, so that it
    # never walks them (exploreval.core.gc_paused; seconds per 10,000 episodes)
    with gc_paused():
        result = score_run(RunDir(run_dir))
        if judge_model is not None:
            from exploreval.cli._judge import Judge

            judge = Judge(judge_model, judge_base_url, judge_api_key_env)
            judged = judge.run(RunDir(run_dir), result.records)
            result.tables.update(judged)
            _print_judged(judged)
        episodes = len(result.records)
        result.records.clear()
        result.errors.clear()
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

    summary = summary_table(result.table)
    print_table(out, summary, f"{run_dir}: {episodes} episodes", wide=wide)
    out.print(
        f"results: {RunDir(run_dir).results_path}  tables: {', '.join(sorted(result.tables)) or '-'}",
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
        f"[green]{summary.status}[/]: {summary.completed} episodes run, {summary.skipped} resumed"
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


def main() -> None:
    """Console entry point: user errors become one clear line and exit code 2."""
    errors = _user_errors()
    from exploreval.runner._errors import RunInterruptedError

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
        if not _DEBUG["on"]:
            console.print("[dim](run with `exploreval --debug ...` for the traceback)[/]")
        sys.exit(2)
