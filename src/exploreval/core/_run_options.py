"""Run options, declared once: the table every way of stating an experiment is derived from.

Each row is one option with its type on the command line, its default and its help text.
``exploreval run``'s flags are generated from it, ``exploreval.run(...)`` takes its names as
keywords, the experiment spec's fields take their description (and default, where the option has
one) from it (:func:`spec_field`), and ``runner.experiment_from_options`` puts each value at its
*target*, the option's path in the experiment file, whose last segment is the option's own name
(one name from the flag to the code that uses it; a field may nest, ``sampling_seed`` →
``sampling.seed``):

- ``repeats``, ``budget.max_cost_usd``: a field of the experiment;
- ``suites[*].seeds``: that field of every suite;
- ``agents[llm].sampling.temperature``: that field of every LLM agent.

The table imports nothing heavy (no pydantic): ``exploreval --help`` builds ``run``'s flags
from it without loading the spec. ``tests/runner/test_options.py`` walks every row.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from typing import Any, Literal, TypedDict

#: shape: builds the experiment's suites and agents (from scratch only);
#: setting: a spec field given from scratch only (it changes what the episodes are);
#: override: a spec field that may also override a stored experiment (``--config``, resume);
#: command: how the command runs, never part of the experiment.
Role = Literal["shape", "setting", "override", "command"]
#: How a value joins what is there: replace it, append new items (plugins), merge keys (prices).
Merge = Literal["set", "append", "merge"]

DEFAULT_API_KEY_ENV = "OPENAI_API_KEY"
#: The rows' defaults that code below the table needs too (the model clients): named once here.
DEFAULT_REQUEST_TIMEOUT_S = 120.0
DEFAULT_MAX_RETRIES = 6
DEFAULT_CONCURRENCY = 8


@dataclass(frozen=True)
class RunOption:
    """One run option: its name (the Python keyword), role, target, command-line type and
    spellings, default and help."""

    name: str
    role: Role
    target: str | None
    cli_type: Any
    help: str
    default: Any = None
    flags: tuple[str, ...] = ()
    repeatable: bool = False
    merge: Merge = "set"
    #: ``key_values``: ``KEY=VALUE`` items (JSON values) or a mapping; ``prices``: a price file.
    parse: Literal["plain", "key_values", "prices"] = "plain"
    argument: bool = False
    metavar: str | None = None
    #: The spec field's own default differs (``name``: the env's name; ``seeds``: 0), so the
    #: field takes only the help text from this row.
    spec_default: bool = True

    @property
    def flag(self) -> str:
        """How the command line spells it (in messages too)."""
        if self.argument:
            return self.metavar or self.name.upper()
        return self.flags[0] if self.flags else "--" + self.name.replace("_", "-")

    @property
    def llm_only(self) -> bool:
        return bool(self.target and self.target.startswith("agents[llm]"))

    # -> Any: the option's own default, of its command-line type (cli_type)
    def default_value(self) -> Any:
        return [] if self.repeatable else self.default

    def help_text(self) -> str:
        return self.help + (" (repeatable)" if self.repeatable else "")


def _o(name: str, role: Role, target: str | None, cli_type: Any, help: str, **kw: Any) -> RunOption:
    return RunOption(name=name, role=role, target=target, cli_type=cli_type, help=help, **kw)


_INT = int | None
_FLOAT = float | None
_STR = str | None
_LIST = list[str]

#: Every option of ``exploreval run`` / ``exploreval.run(...)``, in the order ``--help`` lists them.
RUN_OPTIONS: tuple[RunOption, ...] = (
    _o("env", "shape", "suites[0].env_id", _STR, "Versioned env id, e.g. exploreval/GridDAG-v0",
       argument=True, metavar="ENV_ID"),
    _o("config", "command", None, Path | None, "YAML/TOML experiment file",
       flags=("--config", "-c")),
    _o("presets", "shape", "suites[*].presets", _LIST, "Preset", flags=("--preset", "-p"),
       repeatable=True),
    _o("suites", "shape", "suites[*].suite", _LIST, "Named suite, e.g. grid-main (see `suites`)",
       flags=("--suite", "-s"), repeatable=True),
    _o("seeds", "override", "suites[*].seeds", _STR,
       "Seeds: '0-23', '0,2,5' ... (default 0, or the suite's)", spec_default=False),
    _o("env_options", "setting", "suites[*].env_options", _LIST,
       "Env option KEY=VALUE, JSON values", flags=("--env-option",), repeatable=True,
       parse="key_values", merge="merge", spec_default=False),
    _o("agents", "shape", "agents[scripted].agent", _LIST, "Scripted agent",
       flags=("--agent", "-a"), repeatable=True),
    _o("models", "shape", "agents[llm].model", _LIST,
       "LLM model name, or local:smollm2 (or a,b: one agent each)", flags=("--model",),
       repeatable=True),
    _o("base_url", "setting", "agents[llm].base_url", _STR, "OpenAI-compatible endpoint"),
    _o("api_key_env", "setting", "agents[llm].api_key_env", str,
       "Environment variable holding the API key", default=DEFAULT_API_KEY_ENV),
    _o("harness", "setting", "agents[llm].harness", str, "Harness name for the LLM agent",
       default="default"),
    _o("harness_options", "setting", "agents[llm].harness_options", _LIST,
       "Harness option KEY=VALUE, JSON values", flags=("--harness-option",), repeatable=True,
       parse="key_values", spec_default=False),
    _o("history", "shape", "agents[llm].history", _LIST,
       "What the model sees of earlier turns: full | none | window:K | summary | model-summary | "
       "retrieval:K, "
       "or a memory system's recall: mem0 | langmem | amem (:K entries, default 5; docs/memory.md)"
       " (several: one LLM agent each)", repeatable=True),
    _o("temperature", "setting", "agents[llm].sampling.temperature", _FLOAT,
       "Sampling temperature, 0-2 (default: the harness's or the server's)"),
    _o("top_p", "setting", "agents[llm].sampling.top_p", _FLOAT,
       "Nucleus sampling, 0-1 (default: the server's)"),
    _o("max_tokens", "setting", "agents[llm].sampling.max_tokens", _INT,
       "Most tokens per model reply"),
    _o("sampling_seed", "setting", "agents[llm].sampling.seed", _INT,
       "Seed passed to the model endpoint"),
    _o("reasoning_effort", "setting", "agents[llm].sampling.reasoning_effort", _STR,
       "none | minimal | low | medium | high | xhigh | max"),
    _o("top_logprobs", "setting", "agents[llm].sampling.top_logprobs", _INT,
       "Ask for the K most likely tokens per position (1-20) and record each reply's mean token "
       "entropy (TIDE's action entropy on loop vs other steps, Figure 8)"),
    _o("constrain", "setting", "agents[llm].constrain", str,
       "Constrained decoding: off | auto | grammar | json_schema. The harness's grammar or JSON "
       "schema of a valid reply goes with each request (auto: a GBNF grammar to the embedded "
       "model, a JSON schema elsewhere). Default: auto for the embedded local:* models (a small "
       "model's free replies rarely parse), off for the others (an invalid action is itself a "
       "diagnostic).",
       default="off"),
    _o("request_timeout", "setting", "agents[llm].request_timeout", float,
       "Per-request timeout, seconds", default=DEFAULT_REQUEST_TIMEOUT_S),
    _o("max_retries", "setting", "agents[llm].max_retries", int,
       "Retries on 429/5xx/timeouts/connection errors", default=DEFAULT_MAX_RETRIES),
    _o("prices", "override", "prices", Path | None,
       "Price table YAML/JSON: {model: {input, output}} USD/1M", parse="prices", merge="merge",
       spec_default=False),
    _o("repeats", "override", "repeats", int, "Attempts per task (for pass@k)", default=1),
    _o("max_steps", "override", "max_steps", _INT, "Per-episode step cap"),
    _o("out", "command", None, Path, "Run directory", flags=("--out", "-o"),
       default=Path("runs/latest")),
    _o("force", "command", None, bool, "Continue even if the run dir holds another config",
       default=False),
    _o("executor", "override", "executor", str, "local | ray", default="local"),
    _o("concurrency", "override", "concurrency", int, "Episodes in flight",
       default=DEFAULT_CONCURRENCY),
    _o("workers", "override", "workers", int,
       "Local executor: processes that play the episodes, each with its own event loop and "
       "model clients (1: all in this one). Use the cores from ~128 episodes in flight, or for "
       "envs whose steps cost CPU", default=1),
    _o("max_total_steps", "override", "budget.max_total_steps", _INT,
       "Budget: no new episode once the run took this many steps"),
    _o("max_total_tokens", "override", "budget.max_total_tokens", _INT,
       "Budget: no new episode once the run used this many tokens"),
    _o("max_cost_usd", "override", "budget.max_cost_usd", _FLOAT,
       "Budget in USD (every model needs a price: --prices)"),
    _o("max_connections", "override", "agents[llm].max_connections", _INT,
       "Requests in flight per model (default: --concurrency, the episodes in flight)"),
    _o("episode_timeout", "override", "episode_timeout", _FLOAT, "Per-episode timeout, seconds"),
    _o("name", "override", "name", _STR, "Run name (default: the env's or the suites' names)",
       spec_default=False),
    _o("plugins", "override", "plugins", _LIST,
       "Modules to import first (they register your own envs, agents, harnesses)",
       flags=("--plugin",), repeatable=True, merge="append", spec_default=False),
    _o("report", "command", None, bool, "Write the report at the end", default=True),
    _o("rebuild_cache", "command", None, bool,
       "Move an unreadable cache.sqlite / blobs.sqlite aside (kept) and start fresh ones",
       default=False),
    _o("quiet", "command", None, bool, "No progress bar (the outcome is still printed)",
       flags=("--quiet", "-q"), default=False),
    _o("dry_run", "command", None, bool,
       "Print the plan (episodes, model calls, tokens, cost, wall time) and stop", default=False),
    _o("judge_model", "command", None, _STR,
       "At the end, run the metrics that call a model (as `score --judge-model`)"),
    _o("judge_base_url", "command", None, _STR, "OpenAI-compatible endpoint of --judge-model"),
    _o("judge_api_key_env", "command", None, str,
       "Environment variable holding --judge-model's API key", default=DEFAULT_API_KEY_ENV),
)  # fmt: skip

OPTIONS_BY_NAME: dict[str, RunOption] = {o.name: o for o in RUN_OPTIONS}
#: The options that are part of an experiment (everything but how the command runs).
EXPERIMENT_OPTIONS = tuple(o for o in RUN_OPTIONS if o.role != "command")


# -> Any: pydantic's Field() is typed Any so a field may be declared `x: int = Field(...)`
def spec_field(target: str, **constraints: Any) -> Any:
    """A pydantic ``Field`` for the spec field at ``target``: its description (and default) from
    the option that sets it, so the flag's help and the schema's description are one text.

    ``constraints`` are the field's own (``ge=1``...); ``default``/``default_factory`` given there
    win over the option's (a list field's factory)."""
    from pydantic import Field

    option = next((o for o in EXPERIMENT_OPTIONS if o.target == target), None)
    if option is None:
        raise KeyError(f"no run option sets {target!r}")
    if (
        option.spec_default
        and "default" not in constraints
        and "default_factory" not in constraints
    ):
        constraints["default"] = option.default
    return Field(description=option.help, **constraints)


class RunOptions(TypedDict, total=False):
    """The keywords of ``exploreval.run`` / ``arun``: one per option of ``RUN_OPTIONS`` that is
    not the command line's own (``config``, ``out``, ``force``, ``report``...), with the Python
    values each accepts (a test keeps the two equal). Type checkers read ``run(**options)``
    through it (``Unpack[RunOptions]``)."""

    env: str | None
    presets: str | Sequence[str]
    suites: str | Sequence[str]
    seeds: str | int | Sequence[int] | None
    env_options: Mapping[str, Any] | Sequence[str]
    agents: str | Mapping[str, Any] | Sequence[str | Mapping[str, Any]]
    models: str | Sequence[str]
    base_url: str | None
    api_key_env: str
    harness: str
    harness_options: Mapping[str, Any] | Sequence[str]
    history: str | Sequence[str]
    temperature: float | None
    top_p: float | None
    max_tokens: int | None
    sampling_seed: int | None
    reasoning_effort: str | None
    top_logprobs: int | None
    constrain: str
    request_timeout: float
    max_retries: int
    prices: str | PathLike[str] | None
    repeats: int
    max_steps: int | None
    executor: str
    concurrency: int
    workers: int
    max_total_steps: int | None
    max_total_tokens: int | None
    max_cost_usd: float | None
    max_connections: int | None
    episode_timeout: float | None
    name: str | None
    plugins: str | Sequence[str]
