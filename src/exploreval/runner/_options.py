"""Run options at work: an experiment from flags (``exploreval run``), keywords
(``exploreval.run(...)``) or overrides of a stored experiment, all through the one table
``core.RUN_OPTIONS`` (type, default, help and target of each option, declared once).

Every refusal names the option as the user spelt it (``--seeds`` on the command line, ``seeds=``
in Python), and a spec validation error on a field an option set names that option.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from exploreval.core import (
    EXPERIMENT_OPTIONS,
    OPTIONS_BY_NAME,
    RunOption,
)
from exploreval.runner._errors import SpecError
from exploreval.runner._spec import repeated_items

if TYPE_CHECKING:
    from exploreval.runner._spec import ExperimentSpec

#: How a message names an option: the flag on the command line, the keyword in Python.
Speller = Callable[[RunOption], str]


def cli_speller(option: RunOption) -> str:
    return option.flag


def api_speller(option: RunOption) -> str:
    return f"{option.name}="


def key_values(items: list[str] | Mapping[str, Any], flag: str) -> dict[str, Any]:
    """``KEY=VALUE`` pairs; values are JSON when they parse (numbers, lists...), else text.
    A key given twice is refused (the first value would be silently dropped). A mapping (from
    Python) is taken as it is."""
    if isinstance(items, Mapping):
        return dict(items)
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


def split_models(values: list[str], flag: str = "--model") -> list[str]:
    """``--model a --model b`` and ``--model a,b`` both mean two LLM agents (as inspect_ai);
    a name given twice is refused rather than silently run once."""
    names = [name.strip() for value in values for name in value.split(",") if name.strip()]
    repeated = repeated_items(names)
    if repeated:
        raise ValueError(f"{flag} {', '.join(repeated)} given more than once")
    return names


def refuse_repeats(flag: str, values: list[Any]) -> None:
    """A value given twice to a repeatable option would plan the same episodes twice (one copy
    silently dropped): refuse it, naming the option and the value."""
    repeated = repeated_items([v for v in values if isinstance(v, str)])
    if repeated:
        raise ValueError(
            f"{flag} {', '.join(repeated)} given more than once: give each value once (the "
            "repeat would plan the same episodes again and be silently dropped)"
        )


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, str | dict | Path):
        return [value]
    return list(value)


# -> Any: a value as the experiment file holds it (text, number, list or mapping)
def _converted(option: RunOption, value: Any, spell: Speller) -> Any:
    """A given value as the experiment file holds it."""
    if option.repeatable and option.parse == "plain":
        value = _as_list(value)
        refuse_repeats(spell(option), value)
    if option.parse == "key_values":
        return key_values(value if isinstance(value, Mapping) else _as_list(value), spell(option))
    if option.parse == "prices":
        from exploreval.models import load_prices

        return {model: price.model_dump() for model, price in load_prices(value).items()}
    if isinstance(value, Path):
        return str(value)
    return value


def _selected(data: dict[str, Any], part: str) -> list[dict[str, Any]]:
    """The dicts a target part names: ``suites[*]``, ``suites[0]``, ``agents[llm]``..."""
    key, _, selector = part.partition("[")
    selector = selector.rstrip("]")
    items = data.get(key) or []
    if selector == "*":
        return [i for i in items if isinstance(i, dict)]
    if selector.isdigit():
        return [items[int(selector)]] if int(selector) < len(items) else []
    return [i for i in items if isinstance(i, dict) and i.get("kind", "scripted") == selector]


def set_target(data: dict[str, Any], option: RunOption, value: Any) -> int:
    """Put ``value`` at the option's target in raw experiment data; returns how many places
    took it (0: an agent option with no such agent)."""
    assert option.target is not None
    parts = option.target.split(".")
    holders = [data]
    for part in parts[:-1]:
        if "[" in part:
            holders = [item for holder in holders for item in _selected(holder, part)]
        else:
            holders = [holder.setdefault(part, {}) for holder in holders]
    last = parts[-1]
    for holder in holders:
        if option.merge == "append":
            stored = list(holder.get(last) or [])
            holder[last] = [*stored, *[v for v in value if v not in stored]]
        elif option.merge == "merge":
            holder[last] = {**(holder.get(last) or {}), **value}
        else:
            holder[last] = value
    return len(holders)


def _skeleton(values: Mapping[str, Any], spell: Speller) -> dict[str, Any]:
    """Suites and agents from the shape options (a run from scratch)."""
    env = values.get("env")
    named = _as_list(values.get("suites"))
    presets = _as_list(values.get("presets"))
    refuse_repeats(spell(OPTIONS_BY_NAME["suites"]), named)
    refuse_repeats(spell(OPTIONS_BY_NAME["presets"]), presets)
    if env is None and not named:
        raise ValueError(
            f"give an {spell(OPTIONS_BY_NAME['env'])} (see `exploreval envs`), "
            f"{spell(OPTIONS_BY_NAME['suites'])} NAME (see `exploreval suites`) or a config file"
        )
    if env is not None and named:
        raise ValueError(
            f"give an {spell(OPTIONS_BY_NAME['env'])} or {spell(OPTIONS_BY_NAME['suites'])}, "
            "not both"
        )
    if named and presets:
        raise ValueError(
            f"{spell(OPTIONS_BY_NAME['presets'])} with {spell(OPTIONS_BY_NAME['suites'])}: a "
            "named suite fixes its presets (see `exploreval suites`); give an env id with a "
            "preset instead"
        )
    suites: list[dict[str, Any]] = (
        [{"env_id": env, "presets": presets or [None], "seeds": "0", "env_options": {}}]
        if env is not None
        else [{"suite": name} for name in named]
    )
    scripted = _as_list(values.get("agents"))
    refuse_repeats(spell(OPTIONS_BY_NAME["agents"]), scripted)
    agents: list[dict[str, Any]] = [
        a if isinstance(a, dict) else {"kind": "scripted", "agent": a} for a in scripted
    ]
    history = _as_list(values.get("history"))
    refuse_repeats(spell(OPTIONS_BY_NAME["history"]), history)
    for model in split_models(_as_list(values.get("models")), spell(OPTIONS_BY_NAME["models"])):
        for policy in history or ["full"]:
            agents.append({"kind": "llm", "model": model, "history": policy})
    if not agents:
        raise ValueError(
            f"no agent: give {spell(OPTIONS_BY_NAME['agents'])} NAME (scripted) and/or "
            f"{spell(OPTIONS_BY_NAME['models'])} NAME (LLM)"
        )
    name = env.split("/")[-1] if env else "+".join(named)
    return {"name": name, "suites": suites, "agents": agents}


def unknown_option_message(name: str, where: str) -> str:
    from difflib import get_close_matches

    known = [o.name for o in EXPERIMENT_OPTIONS]
    close = get_close_matches(name, known, n=3)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    return f"{where}: unknown option {name!r}{hint} (options: {', '.join(known)})"


def experiment_from_options(
    values: Mapping[str, Any],
    given: set[str],
    *,
    stored: ExperimentSpec | None = None,
    spell: Speller = cli_speller,
    source: str = "command-line options",
) -> ExperimentSpec:
    """The experiment the options describe: built from scratch, or ``stored`` (a config file or
    the run being resumed) with the given override options applied. Every refusal names the
    option as the user spelt it."""
    from exploreval.runner._spec import ExperimentSpec, expand_named_suites

    for name in given:
        if name not in OPTIONS_BY_NAME:
            raise ValueError(unknown_option_message(name, source))
    if stored is None:
        data = _skeleton(values, spell)
        applied = [
            o
            for o in EXPERIMENT_OPTIONS
            if o.role != "shape"
            and values.get(o.name) is not None
            and values.get(o.name) != []
            # its default depends on the model (auto for local:*): the spec decides unless given
            and (o.name != "constrain" or o.name in given)
        ]
        if not any(a.get("kind") == "llm" for a in data["agents"]):
            refused = [o for o in EXPERIMENT_OPTIONS if o.llm_only and o.name in given]
            if refused:
                raise ValueError(
                    f"{', '.join(spell(o) for o in refused)} only applies to LLM agents, and "
                    f"there is none: add {spell(OPTIONS_BY_NAME['models'])} NAME, or drop it"
                )
    else:
        refused = [o for o in EXPERIMENT_OPTIONS if o.role != "override" and o.name in given]
        if refused:
            raise ValueError(
                f"{', '.join(spell(o) for o in refused)} cannot be combined with {source}: "
                + (
                    "put it in the experiment file"
                    if "config" in source
                    else "the run's experiment is fixed; start a new run with another --out to "
                    "change it"
                )
                + " (options that override it: "
                + ", ".join(spell(o) for o in EXPERIMENT_OPTIONS if o.role == "override")
                + ")"
            )
        data = stored.model_dump(mode="json")
        applied = [o for o in EXPERIMENT_OPTIONS if o.name in given]
    for option in applied:
        value = _converted(option, values[option.name], spell)
        if set_target(data, option, value) == 0 and option.name in given:
            raise ValueError(
                f"{spell(option)} only applies to LLM agents, and the experiment has none"
            )
    if "suites" in data:
        data = {**data, "suites": expand_named_suites(data["suites"], source)}
    try:
        return ExperimentSpec.model_validate(data)
    except ValidationError as exc:
        raise SpecError(_named_errors(exc, values, spell, source)) from None


def _path(target: str) -> list[str]:
    """``agents[llm].sampling.seed`` -> ``["agents", "sampling", "seed"]`` (selectors dropped)."""
    return [part.split("[", 1)[0] for part in target.split(".")]


def _loc_matches(target: str, loc: tuple[int | str, ...]) -> bool:
    path = _path(target)
    keys = [str(p) for p in loc if not isinstance(p, int)]
    return keys == path


def _named_errors(
    exc: ValidationError, values: Mapping[str, Any], spell: Speller, source: str
) -> str:
    """Validation errors, each naming the option that set the field where one did."""
    lines = [f"invalid experiment spec in {source}:"]
    for err in exc.errors():
        option = next(
            (o for o in EXPERIMENT_OPTIONS if o.target and _loc_matches(o.target, err["loc"])),
            None,
        )
        where = ".".join(str(p) for p in err["loc"]) or "(top level)"
        if option is not None and values.get(option.name) not in (None, []):
            where = f"{where} ({spell(option)} {values[option.name]})"
        got = err.get("input")
        got_text = f" (got {got!r})" if got is not None and not isinstance(got, dict | list) else ""
        lines.append(f"  - field {where}: {err['msg']}{got_text}")
    return "\n".join(lines)
