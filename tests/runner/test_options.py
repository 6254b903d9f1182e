"""One option type (issue 23): every run option reaches the same spec field whether it is given as
a flag of ``exploreval run``, a keyword of ``exploreval.run(...)`` or a key of the experiment file.

The config side and the reading side are written here independently of ``runner._options`` (a
bug in its path handling cannot make all three agree by accident)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import typer

from exploreval import _api
from exploreval.cli._app import app, explicit_flags
from exploreval.core import EXPERIMENT_OPTIONS, OPTIONS_BY_NAME, RUN_OPTIONS
from exploreval.runner import (
    SpecError,
    experiment_from_options,
    spec_from_dict,
)

GRID = "exploreval/GridDAG-v0"
MODEL = "gpt-4.1-mini"  # priced in the built-in table, so a cost budget is accepted


def _prices(tmp: Path) -> Path:
    path = tmp / "prices.yaml"
    path.write_text("my-model: {input: 1.5, output: 6}\n")
    return path


#: name -> (command-line words, Python value, config value, expected value at the target).
#: A callable gets the test's tmp dir (for files).
SAMPLES: dict[str, tuple[Any, Any, Any, Any]] = {
    "env": ([GRID], GRID, GRID, [GRID]),
    "presets": (["--preset", "explore-low/dag-small"], "explore-low/dag-small",
                ["explore-low/dag-small"], [["explore-low/dag-small"]]),
    "suites": (["--suite", "bandit-easy"], ["bandit-easy"], "bandit-easy", None),
    "seeds": (["--seeds", "3-4"], "3-4", [3, 4], [[3, 4]]),
    "env_options": (["--env-option", "a=1", "--env-option", "b=x"], {"a": 1, "b": "x"},
                    {"a": 1, "b": "x"}, [{"a": 1, "b": "x"}]),
    "agents": (["--agent", "frontier"], ["frontier"], "frontier", ["frontier"]),
    "models": (["--model", "other-model"], "other-model", "other-model", ["other-model"]),
    "base_url": (["--base-url", "http://127.0.0.1:9/v1"], "http://127.0.0.1:9/v1",
                 "http://127.0.0.1:9/v1", ["http://127.0.0.1:9/v1"]),
    "api_key_env": (["--api-key-env", "MY_KEY"], "MY_KEY", "MY_KEY", ["MY_KEY"]),
    "harness": (["--harness", "grid"], "grid", "grid", ["grid"]),
    "harness_options": (["--harness-option", "k=[1, 2]"], ["k=[1, 2]"], {"k": [1, 2]},
                        [{"k": [1, 2]}]),
    "history": (["--history", "window:3"], ["window:3"], "window:3", ["window:3"]),
    "temperature": (["--temperature", "0.5"], 0.5, 0.5, [0.5]),
    "top_p": (["--top-p", "0.9"], 0.9, 0.9, [0.9]),
    "max_tokens": (["--max-tokens", "77"], 77, 77, [77]),
    "sampling_seed": (["--sampling-seed", "11"], 11, 11, [11]),
    "reasoning_effort": (["--reasoning-effort", "low"], "low", "low", ["low"]),
    "top_logprobs": (["--top-logprobs", "5"], 5, 5, [5]),
    "constrain": (["--constrain", "grammar"], "grammar", "grammar", ["grammar"]),
    "request_timeout": (["--request-timeout", "30"], 30.0, 30.0, [30.0]),
    "max_retries": (["--max-retries", "2"], 2, 2, [2]),
    "prices": (lambda tmp: ["--prices", str(_prices(tmp))], _prices,
               {"my-model": {"input": 1.5, "output": 6.0}},
               [{"my-model": {"input": 1.5, "output": 6.0}}]),
    "repeats": (["--repeats", "3"], 3, 3, [3]),
    "max_steps": (["--max-steps", "9"], 9, 9, [9]),
    "executor": (["--executor", "ray"], "ray", "ray", ["ray"]),
    "concurrency": (["--concurrency", "5"], 5, 5, [5]),
    "workers": (["--workers", "2"], 2, 2, [2]),
    "max_total_steps": (["--max-total-steps", "100"], 100, 100, [100]),
    "max_total_tokens": (["--max-total-tokens", "1000"], 1000, 1000, [1000]),
    "max_cost_usd": (["--max-cost-usd", "2.5"], 2.5, 2.5, [2.5]),
    "max_connections": (["--max-connections", "4"], 4, 4, [4]),
    "episode_timeout": (["--episode-timeout", "60"], 60.0, 60.0, [60.0]),
    "name": (["--name", "walk"], "walk", "walk", ["walk"]),
    "plugins": (["--plugin", "json"], ["json"], ["json"], [["json"]]),
}  # fmt: skip


def _config_base() -> dict[str, Any]:
    return {
        "name": "GridDAG-v0",
        "suites": [{"env_id": GRID, "seeds": "0"}],
        "agents": [{"kind": "scripted", "agent": "random"}, {"kind": "llm", "model": MODEL}],
    }


def _holders(data: dict[str, Any], path: str) -> list[dict[str, Any]]:
    """Independent reading of a target's parent dicts (``agents[llm].sampling`` ...)."""
    holders = [data]
    for part in path.split("."):
        key, _, selector = part.partition("[")
        selector = selector.rstrip("]")
        nxt: list[dict[str, Any]] = []
        for holder in holders:
            value = holder.setdefault(key, {} if not selector else [])
            if selector == "":
                nxt.append(value)
            elif selector in ("*", "0"):
                nxt.extend(value[:1] if selector == "0" else value)
            else:
                nxt.extend(v for v in value if v.get("kind", "scripted") == selector)
        holders = nxt
    return holders


def _put(data: dict[str, Any], target: str, value: Any) -> None:
    parent, _, last = target.rpartition(".")
    for holder in _holders(data, parent) if parent else [data]:
        holder[last] = value


def _read(dump: dict[str, Any], target: str) -> list[Any]:
    parent, _, last = target.rpartition(".")
    holders = _holders(copy.deepcopy(dump), parent) if parent else [dump]
    return [h[last] for h in holders if last in h]


def _cli_spec(words: list[str]) -> Any:
    command = typer.main.get_command(app).commands["run"]  # type: ignore[attr-defined]
    ctx = command.make_context("run", words)
    return experiment_from_options(ctx.params, explicit_flags(ctx))


def _resolve(value: Any, tmp: Path) -> Any:
    return value(tmp) if callable(value) else value


def test_every_option_has_a_sample_and_every_parameter_is_a_table_row() -> None:
    import inspect

    from exploreval.cli._app import run_cmd

    assert set(SAMPLES) == {o.name for o in EXPERIMENT_OPTIONS}
    params = list(inspect.signature(run_cmd).parameters)
    assert params == ["ctx", *[o.name for o in RUN_OPTIONS]]


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_flag_keyword_and_config_key_reach_the_same_value(name: str, tmp_path: Path) -> None:
    option = OPTIONS_BY_NAME[name]
    assert option.target is not None
    cli_words, api_value, config_value, expected = SAMPLES[name]
    cli_words, api_value = _resolve(cli_words, tmp_path), _resolve(api_value, tmp_path)
    named = name == "suites"
    base_cli = [] if named or name == "env" else [GRID]
    base_api: dict[str, Any] = {} if named or name == "env" else {"env": GRID}
    if name != "agents":
        base_cli += ["--agent", "random"]
        base_api["agents"] = ["random"]
    if name != "models":
        base_cli += ["--model", MODEL]
        base_api["models"] = [MODEL]
    cli = _cli_spec([*base_cli, *cli_words])
    api = _api._spec(None, {**base_api, name: api_value})
    config = _config_base()
    if named:
        config["suites"] = [{"suite": config_value}]
    elif name in ("agents", "models"):
        kind = "scripted" if name == "agents" else "llm"
        config["agents"] = [a for a in config["agents"] if a["kind"] != kind]
        config["agents"].insert(
            0 if kind == "scripted" else 1,
            {"kind": kind, ("agent" if kind == "scripted" else "model"): config_value},
        )
    else:
        _put(config, option.target, config_value)
    from_config = spec_from_dict(config, "test")
    target = "suites[*].env_id" if named else option.target
    read = [_read(spec.model_dump(mode="json"), target) for spec in (cli, api, from_config)]
    if expected is None:  # a named suite: its registered entries
        expected = read[2]
        assert expected and all(e == "exploreval/Bandit-v0" for e in expected)
    assert read == [expected, expected, expected], (name, read)


OVERRIDES = sorted(o.name for o in EXPERIMENT_OPTIONS if o.role == "override")
FIXED = sorted(o.name for o in EXPERIMENT_OPTIONS if o.role != "override")


def _stored(tmp: Path) -> Path:
    path = tmp / "exp.yaml"
    import yaml

    path.write_text(yaml.safe_dump(_config_base()))
    return path


@pytest.mark.parametrize("name", OVERRIDES)
def test_an_override_reaches_a_stored_experiment_the_same_way(name: str, tmp_path: Path) -> None:
    option = OPTIONS_BY_NAME[name]
    assert option.target is not None
    cli_words, api_value, config_value, expected = SAMPLES[name]
    cli_words, api_value = _resolve(cli_words, tmp_path), _resolve(api_value, tmp_path)
    exp = _stored(tmp_path)
    command = typer.main.get_command(app).commands["run"]  # type: ignore[attr-defined]
    ctx = command.make_context("run", ["--config", str(exp), *cli_words])
    from exploreval.runner import load_spec

    cli = experiment_from_options(
        ctx.params, explicit_flags(ctx), stored=load_spec(exp), source="--config"
    )
    api = _api._spec(exp, {name: api_value})
    config = _config_base()
    _put(config, option.target, config_value)
    from_config = spec_from_dict(config, "test")
    read = [_read(s.model_dump(mode="json"), option.target) for s in (cli, api, from_config)]
    if name == "plugins":  # appended to the stored list (empty here)
        assert read[0] == read[1] == [["json"]]
    else:
        assert read == [expected, expected, expected], (name, read)


@pytest.mark.parametrize("name", FIXED)
def test_an_option_that_cannot_override_is_refused_by_its_own_name(
    name: str, tmp_path: Path
) -> None:
    cli_words, api_value, _, _ = SAMPLES[name]
    cli_words, api_value = _resolve(cli_words, tmp_path), _resolve(api_value, tmp_path)
    exp = _stored(tmp_path)
    from exploreval.runner import load_spec

    command = typer.main.get_command(app).commands["run"]  # type: ignore[attr-defined]
    ctx = command.make_context("run", ["--config", str(exp), *cli_words])
    with pytest.raises(ValueError, match="cannot be combined with --config") as cli_error:
        experiment_from_options(
            ctx.params, explicit_flags(ctx), stored=load_spec(exp), source="--config"
        )
    assert str(cli_error.value).startswith(OPTIONS_BY_NAME[name].flag)
    with pytest.raises(ValueError, match="cannot be combined") as api_error:
        _api._spec(exp, {name: api_value})
    assert str(api_error.value).startswith(f"{name}=")


def test_llm_options_without_an_llm_agent_are_refused_by_name() -> None:
    with pytest.raises(ValueError, match=r"^--temperature only applies to LLM agents"):
        _cli_spec([GRID, "--agent", "random", "--temperature", "0.3"])
    with pytest.raises(ValueError, match=r"^temperature= only applies to LLM agents"):
        _api._spec(None, {"env": GRID, "agents": "random", "temperature": 0.3})


def test_a_bad_value_names_the_option_it_came_from() -> None:
    with pytest.raises(SpecError, match=r"--reasoning-effort huge\)"):
        _cli_spec([GRID, "--model", MODEL, "--reasoning-effort", "huge"])
    with pytest.raises(SpecError, match=r"seeds= 5-1\)"):
        _api._spec(None, {"env": GRID, "agents": "random", "seeds": "5-1"})
    with pytest.raises(ValueError, match="unknown option 'temprature'; did you mean temperature"):
        _api._spec(None, {"env": GRID, "agents": "random", "temprature": 0.3})


def test_help_is_the_spec_fields_description() -> None:
    from exploreval.runner import ExperimentSpec

    described = ExperimentSpec.model_fields["repeats"].description
    assert described and OPTIONS_BY_NAME["repeats"].help_text() == described
    # a field's bound is checked by the spec, and the message names the flag
    with pytest.raises(SpecError, match=r"field repeats \(--repeats 0\): Input should be greater"):
        _cli_spec([GRID, "--agent", "random", "--repeats", "0"])


def test_a_spec_field_set_by_an_option_takes_its_help_and_default_from_the_table() -> None:
    """The flag's help is the schema's description: written once, in the table."""
    from exploreval.models import SamplingParams
    from exploreval.runner import AgentSpec, BudgetSpec, ExperimentSpec, SuiteSpec

    models = {"suites": SuiteSpec, "agents": AgentSpec, "budget": BudgetSpec,
              "sampling": SamplingParams}  # fmt: skip
    checked = 0
    for option in EXPERIMENT_OPTIONS:
        if option.role == "shape" or option.name == "prices":
            continue  # shape options build lists of suites/agents; prices is a file, not a dict
        assert option.target is not None
        parts = [p.split("[")[0] for p in option.target.split(".")]
        model = models[parts[-2]] if len(parts) > 1 else ExperimentSpec
        field = model.model_fields[parts[-1]]
        assert field.description == option.help, option.name
        if option.spec_default:
            assert field.default == option.default, option.name
        checked += 1
    assert checked >= 25


def test_each_option_has_its_fields_name_from_flag_to_spec() -> None:
    """One name per option (issue 45): the target's last segment is the option's name, or its
    nested path joined (``sampling_seed`` -> ``sampling.seed``), or the flag's own word for the
    repeatable shape options (``--agent`` -> ``agents[scripted].agent``), so grepping a flag
    reaches the field and the code that reads it."""
    selectors = ("suites[*].", "suites[0].", "agents[llm].", "agents[scripted].")
    for option in EXPERIMENT_OPTIONS:
        assert option.target is not None
        tail = option.target
        for selector in selectors:
            tail = tail.removeprefix(selector)
        last = tail.rpartition(".")[2]
        flag_word = option.flag.lstrip("-").replace("-", "_").lower()
        assert option.name in (last, tail.replace(".", "_")) or last == flag_word, (
            f"{option.name} sets {option.target}"
        )


def test_the_models_client_takes_the_options_under_their_names() -> None:
    """The name reaches the code that uses it: the model client's own keywords."""
    import inspect

    from exploreval.models import OpenAIClient

    keywords = set(inspect.signature(OpenAIClient).parameters)
    assert {"max_connections", "request_timeout", "max_retries"} <= keywords
