"""Experiment specs: suite (env × presets × seeds) × agents × repeats, with clear validation."""

from __future__ import annotations

import difflib
import re
import tomllib
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from exploreval.core import DEFAULT_API_KEY_ENV as DEFAULT_API_KEY_ENV
from exploreval.core import spec_field, stable_hash
from exploreval.models import ModelPrice, SamplingParams
from exploreval.runner._errors import SpecError
from exploreval.runner._spec_versions import SPEC_VERSION, migrate_spec, rename_suite_entry

#: More seeds than this in one spec is a typo (``0-99999999``), not an experiment.
MAX_SEEDS = 100_000


def _check_seed(seed: int, text: Any) -> int:
    if seed < 0:
        raise ValueError(
            f"seed {text!r} is negative: seeds are non-negative integers (Gymnasium's reset(seed=...))"
        )
    return seed


def parse_seeds(value: Any) -> list[int]:
    """Accept ``[0, 1, 2]``, ``3``, ``"0-23"``, ``"0,2,5-7"``; refuse negatives, absurd ranges and
    a seed listed twice (it would plan the same episode twice: one of them silently dropped)."""
    seeds = _parse_seeds(value)
    if len(seeds) > MAX_SEEDS:
        raise ValueError(f"{len(seeds)} seeds requested; at most {MAX_SEEDS} per spec")
    repeated = repeated_items(seeds)
    if repeated:
        listed = ", ".join(str(s) for s in repeated)
        raise ValueError(
            f"seed {listed} listed more than once in {value!r}: each seed is one task "
            "(use repeats for several attempts at the same task)"
        )
    return seeds


def repeated_items(items: list[Any]) -> list[Any]:
    """Items that occur more than once, in first-occurrence order."""
    seen: set[Any] = set()
    repeated: list[Any] = []
    for item in items:
        if item in seen and item not in repeated:
            repeated.append(item)
        seen.add(item)
    return repeated


def _parse_seeds(value: Any) -> list[int]:
    if isinstance(value, bool):
        raise ValueError("seeds must be integers or ranges like '0-23', not a boolean")
    if isinstance(value, int):
        return [_check_seed(value, value)]
    if isinstance(value, str):
        seeds: list[int] = []
        for part in value.split(","):
            part = part.strip()
            match = re.fullmatch(r"(-?\d+)\s*-\s*(-?\d+)", part)
            if match:
                lo, hi = int(match.group(1)), int(match.group(2))
                if hi < lo:
                    raise ValueError(f"seed range {part!r} is empty (end before start)")
                _check_seed(lo, part)
                if hi - lo + 1 > MAX_SEEDS:
                    raise ValueError(
                        f"seed range {part!r} holds {hi - lo + 1} seeds; at most {MAX_SEEDS} per spec"
                    )
                seeds.extend(range(lo, hi + 1))
            elif re.fullmatch(r"-?\d+", part):
                seeds.append(_check_seed(int(part), part))
            else:
                raise ValueError(f"seed {part!r} is not an integer or a range like '0-23'")
        return seeds
    if isinstance(value, list | tuple):
        out: list[int] = []
        for item in value:
            out.extend(_parse_seeds(item))
        return out
    raise ValueError(
        f"seeds must be a list, an integer or a range string, got {type(value).__name__}"
    )


class SuiteSpec(BaseModel):
    """One environment with the presets and seeds to run."""

    model_config = ConfigDict(extra="forbid")

    env_id: str
    presets: list[str | None] = Field(default_factory=lambda: list[str | None]([None]))
    seeds: list[int] = spec_field("suites[*].seeds", default_factory=lambda: [0])
    env_options: dict[str, Any] = spec_field("suites[*].env_options", default_factory=dict)

    @field_validator("seeds", mode="before")
    @classmethod
    def _seeds(cls, value: Any) -> list[int]:
        seeds = parse_seeds(value)
        if not seeds:
            raise ValueError("at least one seed is needed")
        return seeds

    # -> Any: pydantic before-validator: raw input in, raw out
    @field_validator("presets", mode="before")
    @classmethod
    def _presets(cls, value: Any) -> Any:
        if value is None:
            return [None]
        if isinstance(value, str):
            return [p.strip() for p in value.split(",") if p.strip()]
        return value

    @field_validator("presets")
    @classmethod
    def _presets_once(cls, value: list[str | None]) -> list[str | None]:
        repeated = repeated_items(value)
        if repeated:
            raise ValueError(
                f"preset {', '.join(str(p) for p in repeated)} listed more than once: "
                "its episodes would be planned twice"
            )
        return value

    def identity(self) -> dict[str, Any]:
        """The suite as it defines results. ``env_options`` is stored under its v1 key
        (``options``), so config hashes of runs made before spec v2 stay the same."""
        data = self.model_dump()
        data["options"] = data.pop("env_options")
        return data


class AgentSpec(BaseModel):
    """A scripted baseline (``agent``) or an LLM agent (``model`` + ``harness``)."""

    model_config = ConfigDict(extra="forbid")

    label: str | None = Field(default=None, description="Name shown in reports")
    kind: Literal["scripted", "llm"] = "scripted"
    agent: str | None = Field(default=None, description="Scripted agent name, e.g. 'frontier'")
    options: dict[str, Any] = Field(default_factory=dict, description="Scripted agent options")
    model: str | None = Field(default=None, description="Model name, or 'local:smollm2'")
    base_url: str | None = spec_field("agents[llm].base_url")
    api_key_env: str = spec_field("agents[llm].api_key_env")
    harness: str = spec_field("agents[llm].harness")
    harness_options: dict[str, Any] = spec_field(
        "agents[llm].harness_options", default_factory=dict
    )
    history: str = Field(
        default="full",
        description="What the model sees of earlier turns: full | none | window:K | summary | "
        "retrieval:K",
    )
    sampling: SamplingParams = Field(default_factory=SamplingParams)
    constrain: Literal["off", "auto", "grammar", "json_schema"] = spec_field(
        "agents[llm].constrain"
    )
    max_connections: int | None = spec_field("agents[llm].max_connections", ge=1)
    request_timeout: float = spec_field("agents[llm].request_timeout", gt=0)
    max_retries: int = spec_field("agents[llm].max_retries", ge=0)
    suites: list[int] | None = Field(
        default=None,
        description="Indices of the suites this agent plays (default: all). Which episodes "
        "are planned, not how the agent behaves, so it is not part of the agent identity.",
    )

    @model_validator(mode="after")
    def _check_kind(self) -> AgentSpec:
        if self.sampling.constraint is not None:
            raise ValueError(
                "sampling.constraint is set per call by the harness; use constrain: auto"
            )
        if self.kind == "scripted" and not self.agent:
            raise ValueError("a scripted agent needs 'agent' (e.g. agent: frontier)")
        if self.kind == "llm" and not self.model:
            raise ValueError(
                "an llm agent needs 'model' (e.g. model: gpt-4.1-mini or local:smollm2)"
            )
        if self.kind == "llm":
            from exploreval.agents import HistoryPolicy

            HistoryPolicy.parse(self.history)
            if "constrain" not in self.model_fields_set and str(self.model).startswith("local:"):
                # an embedded model plays by default: a 135M model's free replies almost never
                # parse (README's bandit line: 10 of 10 prose), so the harness's grammar is on
                # unless the user says constrain: off; recorded in the run's config as given
                self.constrain = "auto"
        return self

    @property
    def display_name(self) -> str:
        if self.label:
            return self.label
        if self.kind == "scripted":
            if not self.options:
                return str(self.agent)
            # agents that differ only by options must not share a name in tables and reports
            options = ",".join(f"{k}={v}" for k, v in sorted(self.options.items()))
            return f"{self.agent}[{options}]"
        return f"{self.model}/{self.harness}/{self.history}"

    def describe(self) -> str:
        """What the agent is, for messages (``agent random``, ``model m, harness default...``)."""
        if self.kind == "scripted":
            return f"agent {self.agent}" + (f" with options {self.options}" if self.options else "")
        return f"model {self.model}, harness {self.harness}, history {self.history}"

    def identity(self) -> dict[str, Any]:
        """Fields that change behaviour (and so the episode id). Endpoint and key name
        are excluded: the same model served elsewhere is the same agent."""
        if self.kind == "scripted":
            return {"kind": "scripted", "agent": self.agent, "options": self.options}
        return {
            "kind": "llm",
            "model": self.model,
            "harness": self.harness,
            "harness_options": self.harness_options,
            "history": self.history,
            "sampling": self.sampling.model_dump(exclude_none=True),
            # absent when off, so the ids of runs made before the option stay the same
            **({"constrain": self.constrain} if self.constrain != "off" else {}),
        }


class BudgetSpec(BaseModel):
    """Global limits checked before each new episode starts."""

    model_config = ConfigDict(extra="forbid")

    max_total_steps: int | None = spec_field("budget.max_total_steps", ge=1)
    max_total_tokens: int | None = spec_field("budget.max_total_tokens", ge=1)
    max_cost_usd: float | None = spec_field("budget.max_cost_usd", gt=0)


class ExperimentSpec(BaseModel):
    """Suites × agents × repeats, plus how to execute them."""

    model_config = ConfigDict(extra="forbid")

    spec_version: int = Field(
        default=SPEC_VERSION,
        ge=SPEC_VERSION,
        le=SPEC_VERSION,
        description="Version of the experiment file's field names (older files are migrated)",
    )
    name: str = spec_field("name", default="run")
    suites: list[SuiteSpec] = Field(min_length=1)
    agents: list[AgentSpec] = Field(min_length=1)
    repeats: int = spec_field("repeats", ge=1)
    max_steps: int | None = spec_field("max_steps", ge=1)
    budget: BudgetSpec = Field(default_factory=BudgetSpec)
    executor: Literal["local", "ray"] = spec_field("executor")
    concurrency: int = spec_field("concurrency", ge=1)
    workers: int = spec_field("workers", ge=1)
    episode_timeout: float | None = spec_field("episode_timeout", gt=0)
    plugins: list[str] = spec_field("plugins", default_factory=list)
    prices: dict[str, ModelPrice] = Field(
        default_factory=dict,
        description="USD per 1M tokens by model name, on top of the built-in table",
    )

    # -> Any: pydantic's raw input (a mapping is migrated, anything else left to validation)
    @model_validator(mode="before")
    @classmethod
    def _migrate(cls, data: Any) -> Any:
        """Every way in (a file, a stored manifest, a Ray worker's copy) reads v1 names too."""
        return migrate_spec(data) if isinstance(data, dict) else data

    def load_plugins(self) -> None:
        """Import plugin modules (also done in every Ray worker)."""
        import importlib

        for module in self.plugins:
            try:
                importlib.import_module(module)
            except ImportError as exc:
                raise SpecError(f"plugin module {module!r} could not be imported: {exc}") from exc

    @model_validator(mode="after")
    def _check_cost_budget_is_priced(self) -> ExperimentSpec:
        """A cost budget over a model without a price would count $0 forever: refuse it."""
        if self.budget.max_cost_usd is None:
            return self
        from exploreval.models import PriceTable

        table = PriceTable(self.prices)
        unpriced = sorted(
            {
                a.model
                for a in self.agents
                if a.kind == "llm" and a.model and not table.lookup(a.model)
            }
        )
        if unpriced:
            raise ValueError(
                f"max_cost_usd (--max-cost-usd) is set but model {', '.join(unpriced)} has no price: give one "
                "(--prices FILE or 'prices:' in the experiment, USD per 1M tokens), or drop the "
                "cost budget"
            )
        return self

    @model_validator(mode="after")
    def _check_agents_differ(self) -> ExperimentSpec:
        """Two agents with the same identity on the same suite plan the same episodes (same ids):
        one of them would silently never run. Refuse, naming both."""
        seen: dict[str, int] = {}
        for i, agent in enumerate(self.agents):
            key = stable_hash(agent.identity())
            j = seen.get(key)
            if j is not None:
                other = self.agents[j]
                everywhere = set(range(len(self.suites)))
                mine = set(agent.suites) if agent.suites is not None else everywhere
                theirs = set(other.suites) if other.suites is not None else everywhere
                if mine & theirs:
                    raise ValueError(
                        f"agents.{i} is the same agent as agents.{j} ({agent.describe()}): the "
                        "two would play the same episodes, so one of them would never run; "
                        "remove it or change what it does (options, harness, history, sampling)"
                    )
            seen.setdefault(key, i)
        return self

    @field_validator("workers")
    @classmethod
    def _check_workers(cls, workers: int, info: ValidationInfo) -> int:
        executor, concurrency = info.data.get("executor"), info.data.get("concurrency")
        if workers > 1 and executor not in (None, "local"):
            raise ValueError(
                f"{workers} worker processes are for the local executor; the {executor} "
                "executor spreads episodes over its own workers"
            )
        if concurrency is not None and workers > concurrency:
            raise ValueError(
                f"{workers} is more than concurrency ({concurrency}): each worker process "
                "plays at least one episode at a time"
            )
        return workers

    @model_validator(mode="after")
    def _check_agent_suites(self) -> ExperimentSpec:
        for i, agent in enumerate(self.agents):
            for index in agent.suites or []:
                if not 0 <= index < len(self.suites):
                    raise ValueError(
                        f"agents.{i}.suites: suite index {index} out of range "
                        f"(the spec has {len(self.suites)} suites, indices 0..{len(self.suites) - 1})"
                    )
        return self

    def identity(self) -> dict[str, Any]:
        """What defines the results; executor and limits may change between resumes."""
        identity: dict[str, Any] = {
            "suites": [s.identity() for s in self.suites],
            "agents": [a.identity() for a in self.agents],
            "repeats": self.repeats,
            "max_steps": self.max_steps,
        }
        if any(a.suites is not None for a in self.agents):  # keeps older hashes unchanged
            identity["agent_suites"] = [a.suites for a in self.agents]
        return identity

    def config_hash(self) -> str:
        return stable_hash(self.identity())


def _format_validation_error(
    exc: ValidationError,
    source: str,
    locate: Callable[[tuple[int | str, ...]], int | None] | None = None,
) -> str:
    """The spec's errors in the CLI's own words: an unknown key says which keys that place
    takes (with a did-you-mean), a missing one says it is required; each names the file's line
    where ``locate`` can find it."""
    lines = [f"invalid experiment spec in {source}:"]
    for err in exc.errors():
        loc = tuple(err["loc"])
        where = ".".join(str(p) for p in loc) or "(top level)"
        line = locate(loc) if locate is not None else None
        at = f" (line {line})" if line is not None else ""
        if err["type"] == "extra_forbidden":
            known = _keys_at(loc[:-1])
            close = difflib.get_close_matches(str(loc[-1]), known, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            place = "in " + ".".join(str(p) for p in loc[:-1]) if loc[:-1] else "at the top level"
            lines.append(
                f"  - unknown key {str(loc[-1])!r} {place}{at}{hint} (keys there: "
                f"{', '.join(known)})"
            )
            continue
        if err["type"] == "missing":
            lines.append(f"  - field {where}: required, and not given{at}")
            continue
        got = err.get("input")
        got_text = f" (got {got!r})" if got is not None and not isinstance(got, dict | list) else ""
        lines.append(f"  - field {where}{at}: {err['msg']}{got_text}")
    return "\n".join(lines)


def _keys_at(loc: tuple[int | str, ...]) -> list[str]:
    """The keys the spec takes at ``loc`` (``("suites", 0)`` -> a suite entry's keys)."""
    model: type[BaseModel] = ExperimentSpec
    for part in loc:
        if isinstance(part, int):
            continue
        field = model.model_fields.get(str(part))
        inner = _model_in(field.annotation) if field is not None else None
        if inner is None:
            return []
        model = inner
    return sorted(model.model_fields)


def _model_in(annotation: Any) -> type[BaseModel] | None:
    """The pydantic model inside an annotation (``list[SuiteSpec]`` -> ``SuiteSpec``)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = _model_in(arg)
        if found is not None:
            return found
    return None


def _yaml_locator(text: str) -> Callable[[tuple[int | str, ...]], int | None]:
    """Finds the line of a key path in a YAML document (the key's own line; for a missing
    key, the line of the mapping that lacks it). The document is composed again only when a
    line is asked for, that is, only for a file with an error."""
    composed: list[Any] = []

    def locate(loc: tuple[int | str, ...]) -> int | None:
        if not composed:
            try:
                composed.append(yaml.compose(text))
            except yaml.YAMLError:
                composed.append(None)
        node: Any = composed[0]
        line = node.start_mark.line + 1 if node is not None else None
        for part in loc:
            if isinstance(node, yaml.MappingNode):
                pairs = [(k, v) for k, v in node.value if k.value == str(part)]
                if not pairs:
                    return line
                line, node = pairs[0][0].start_mark.line + 1, pairs[0][1]
            elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
                if part >= len(node.value):
                    return line
                node = node.value[part]
                line = node.start_mark.line + 1
            else:
                return line
        return line

    return locate


# -> Any: raw config data (YAML/TOML) in and out, validated by the spec after
def expand_named_suites(suites: Any, source: str) -> Any:
    """Replace ``{suite: NAME}`` entries by the registered entries; ``seeds`` replaces the
    registered seeds, ``env_options`` are merged over the registered ones (key by key)."""
    if not isinstance(suites, list):
        return suites
    from exploreval.core import UnknownNameError, named_suite

    out: list[Any] = []
    for i, entry in enumerate(suites):
        if not (isinstance(entry, dict) and "suite" in entry):
            out.append(entry)
            continue
        extra = set(entry) - {"suite", "seeds", "env_options"}
        if extra:
            raise SpecError(
                f"{source}: suites.{i}: a named suite takes only 'suite', 'seeds' and "
                f"'env_options', got {', '.join(sorted(extra))}"
            )
        options = entry.get("env_options") or {}
        if not isinstance(options, dict):
            raise SpecError(f"{source}: suites.{i}.env_options: expected a mapping of env options")
        try:
            named = named_suite(str(entry["suite"]))
        except UnknownNameError as exc:
            raise SpecError(f"{source}: suites.{i}: {exc}") from None
        for registered in named.suites:
            # a plugin written before spec v2 registers its entries with 'options'
            expanded = rename_suite_entry(dict(registered), f"named suite {entry['suite']}")
            if "seeds" in entry:
                expanded["seeds"] = entry["seeds"]
            if options:
                expanded["env_options"] = {**(expanded.get("env_options") or {}), **options}
            out.append(expanded)
    return out


def spec_from_dict(
    data: Any,
    source: str = "<dict>",
    locate: Callable[[tuple[int | str, ...]], int | None] | None = None,
) -> ExperimentSpec:
    if not isinstance(data, dict):
        raise SpecError(f"{source}: expected a mapping at the top level, got {type(data).__name__}")
    data = migrate_spec(data, source)
    if "suites" in data:
        data = {**data, "suites": expand_named_suites(data["suites"], source)}
    try:
        return ExperimentSpec.model_validate(data)
    except ValidationError as exc:
        raise SpecError(_format_validation_error(exc, source, locate)) from None


def load_spec(path: str | Path) -> ExperimentSpec:
    """Load a YAML or TOML experiment file with errors that name the file and field."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SpecError(f"cannot read experiment file {path}: {exc.strerror}") from None
    try:
        if path.suffix.lower() == ".toml":
            data: Any = tomllib.loads(text)
        else:
            data = yaml.safe_load(text)
    except (yaml.YAMLError, tomllib.TOMLDecodeError) as exc:
        raise SpecError(
            f"{path} is not valid {path.suffix.lstrip('.').upper() or 'YAML'}: {exc}"
        ) from None
    locate = _yaml_locator(text) if path.suffix.lower() != ".toml" else None
    return spec_from_dict(data, str(path), locate)
