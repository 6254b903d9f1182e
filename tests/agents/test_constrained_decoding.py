"""Constrained decoding (issue 21): harnesses describe a valid reply; the client sends it in the
form the endpoint understands; the agent records it on every step.

Grammars are checked by llama.cpp's own GBNF parser (the [local] extra), JSON schemas by taking a
reply that satisfies them through the harness's own parser, and the real path by the embedded
model: constrained, every step it takes is a valid action.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st

from exploreval.core import Message
from exploreval.models import Constraint, OpenAIClient, SamplingParams
from exploreval.models.testing import StubServer


def _harnesses() -> list[tuple[str, Any, dict[str, Any]]]:
    from exploreval.suites.bandit._harness import BanditPromptHarness
    from exploreval.suites.grid._harness import ReactHarness
    from exploreval.suites.puzzles._harness import (
        BlocksWorldHarness,
        FrozenLakeHarness,
        SudokuHarness,
    )

    bandit = BanditPromptHarness("BSSeC0")
    bandit.n_arms = 5
    dist = BanditPromptHarness("BSSeCD")
    dist.n_arms = 3
    return [
        ("bandit", bandit, {}),
        ("bandit-distribution", dist, {}),
        ("grid", ReactHarness(), {}),
        ("grid-reasoning", ReactHarness(reasoning=True), {}),
        ("blocksworld", BlocksWorldHarness(), {}),
        ("frozenlake", FrozenLakeHarness(), {}),
        ("sudoku", SudokuHarness(), {}),
    ]


@pytest.mark.local_llm
@pytest.mark.parametrize("name", [n for n, _, _ in _harnesses()])
def test_every_grammar_parses_with_llama_cpp(name: str) -> None:
    import llama_cpp

    harness, info = next((h, i) for n, h, i in _harnesses() if n == name)
    constraint = harness.constraint("", info)
    assert constraint is not None and constraint.grammar
    llama_cpp.LlamaGrammar.from_string(constraint.grammar, verbose=False)  # raises if invalid


def _unbounded_repetitions(grammar: str) -> list[str]:
    """The grammar's lines that repeat without a bound (``*`` or ``+`` outside literals and
    character classes): a reply that can run until the context is full."""
    import re

    bare = [
        re.sub(r'"(\\.|[^"\\])*"|\[(\\.|[^\]\\])*\]', "", line) for line in grammar.splitlines()
    ]
    return [line for line in bare if "*" in line or "+" in line]


@pytest.mark.parametrize("name", [n for n, _, _ in _harnesses()])
def test_every_grammar_is_finite(name: str) -> None:
    """Issue 42's measurement: the distribution answer's open ``pair*`` list let the embedded
    model write pairs until its context was full, minutes per step. Every grammar a harness
    sends bounds each repetition (the bandit distribution: one pair per arm)."""
    harness, info = next((h, i) for n, h, i in _harnesses() if n == name)
    constraint = harness.constraint("", info)
    assert constraint is not None and constraint.grammar
    assert _unbounded_repetitions(constraint.grammar) == []
    assert _unbounded_repetitions('root ::= "a"* [^<]+') == ["root ::= * +"]  # the check sees


@given(
    weights=st.lists(st.integers(0, 999), min_size=3, max_size=3).filter(any),
    spaces=st.lists(st.booleans(), min_size=2, max_size=2),
)
def test_a_distribution_in_the_grammars_shape_is_a_valid_answer(
    weights: list[int], spaces: list[bool]
) -> None:
    """The distribution grammar names every arm once, in order (the parser refuses an arm named
    twice, which the open grammar let the embedded model write 6 times in 10), with some weight
    above zero (all zeros: 2 times in 10); any reply of that shape parses to an arm."""
    import re

    import numpy as np

    from exploreval.agents import EpisodeContext
    from exploreval.suites.bandit._harness import BanditPromptHarness

    harness = BanditPromptHarness("BNRND")
    harness.n_arms = 3
    harness.ctx = EpisodeContext(
        "exploreval/Bandit-v0", "bandit", None, 0, 0, np.random.default_rng(0)
    )
    grammar = harness.constraint("", {}).grammar  # type: ignore[union-attr]
    names = harness.design.arm_names(3)
    harness.env_labels = list(names)  # the env's own labels (set when an episode starts)
    alternatives = grammar.splitlines()[0].split(" | ")
    assert len(alternatives) == 3  # by the position of the first weight above zero
    for alternative in alternatives:
        assert [alternative.count(f'"{n}"') for n in names] == [1, 1, 1]
        assert re.search(" .*".join(f'"{n}"' for n in names), alternative)  # the prompt's order
        assert alternative.count(" nonzero") == 1  # never all zeros (the parser refuses them)
    pairs = [f"{n}:{w}" for n, w in zip(names, weights, strict=True)]
    body = pairs[0] + "".join(("," + " " * s) + p for s, p in zip(spaces, pairs[1:], strict=True))
    parsed = harness.parse(f"I pick.<Answer>{body}</Answer>")
    assert parsed.action is not None, parsed


def test_the_embedded_model_gets_a_max_tokens_when_the_agent_sets_none() -> None:
    """A local model's request carries ``LOCAL_MAX_TOKENS`` unless the agent sets its own; any
    other endpoint gets exactly what the agent set (nothing)."""
    from exploreval.models import open_model_client
    from exploreval.models._openai import LOCAL_MAX_TOKENS

    async def go(client: Any) -> None:
        try:
            await client.complete([Message(role="user", content="a")], SamplingParams())
            await client.complete([Message(role="user", content="b")], SamplingParams(max_tokens=7))
        finally:
            await client.aclose()

    with StubServer(reply_fn=lambda messages: "ok") as server:
        for model in ("local:smollm2", "some-model"):
            asyncio.run(go(open_model_client(model, base_url=server.base_url, max_retries=0)))
        local_default, local_own, remote_default, remote_own = server.requests[-4:]
    assert local_default["max_tokens"] == LOCAL_MAX_TOKENS and local_own["max_tokens"] == 7
    assert "max_tokens" not in remote_default and remote_own["max_tokens"] == 7


def _json_harnesses() -> list[tuple[str, Any, dict[str, Any], dict[str, Any]]]:
    from exploreval.suites.task2quiz._harness import Task2QuizHarness
    from exploreval.suites.terminal._harness import TerminalUseHarness
    from exploreval.suites.terminal._swe_agent import SWEAgentHarness
    from exploreval.suites.terminal._terminus import Terminus1Harness, Terminus2Harness

    quiz = {"phase": "quiz", "question": {"text": "Is the box locked?", "choices": ["yes", "no"]}}
    return [
        ("quiz", Task2QuizHarness(), quiz, {"answer": "yes", "reason": "it said so"}),
        ("textworld", Task2QuizHarness(), {"admissible_commands": ["go north", "look"]},
         {"reason": "explore", "command": "go north"}),
        ("terminal_use", TerminalUseHarness(), {},
         {"commands": [{"keystrokes": "ls\n", "wait": 1}]}),
        ("terminus-1", Terminus1Harness(), {},
         {"state_analysis": "a", "explanation": "b", "is_task_complete": False,
          "commands": [{"keystrokes": "ls\n", "is_blocking": True, "timeout_sec": 5}]}),
        ("terminus-2", Terminus2Harness(), {},
         {"analysis": "a", "plan": "b", "task_complete": False,
          "commands": [{"keystrokes": "ls\n", "duration": 1}]}),
        ("swe-agent", SWEAgentHarness(), {}, {"name": "bash", "arguments": {"command": "ls"}}),
        ("swe-agent-submit", SWEAgentHarness(), {}, {"name": "submit", "arguments": {}}),
    ]  # fmt: skip


@pytest.mark.parametrize("name", [n for n, _, _, _ in _json_harnesses()])
def test_a_reply_that_satisfies_the_schema_is_a_valid_action(name: str) -> None:
    """The schema is the reply format the harness parses: an instance of it parses."""
    harness, info, reply = next((h, i, r) for n, h, i, r in _json_harnesses() if n == name)
    constraint = harness.constraint("", info)
    assert constraint is not None and constraint.json_schema is not None
    schema = constraint.json_schema
    assert set(schema["required"]) == set(reply) and schema["additionalProperties"] is False
    jsonschema.validate(reply, schema)  # the sample is an instance
    parsed = harness.parse(json.dumps(reply))
    assert parsed.action is not None, parsed.reason


def test_the_swe_agent_schema_gives_each_tool_its_own_arguments() -> None:
    """With ``arguments: {"type": "object"}`` the embedded model wrote ``{"command_list": [1]}``
    for bash 10 times in 10: the schema now admits only the tools' own argument shapes."""
    from exploreval.suites.terminal._swe_agent import SWEAgentHarness

    schema = SWEAgentHarness().constraint("", {}).json_schema  # type: ignore[union-attr]
    for wrong in ({"name": "bash", "arguments": {"command_list": [1]}},
                  {"name": "bash", "arguments": {"command": ""}},
                  {"name": "edit", "arguments": {}}):  # fmt: skip
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(wrong, schema)


def test_textworld_commands_are_the_admissible_ones_when_the_env_lists_them() -> None:
    from exploreval.suites.task2quiz._harness import Task2QuizHarness

    listed = Task2QuizHarness().constraint("", {"admissible_commands": ["look", "go east"]})
    free = Task2QuizHarness().constraint("", {})
    assert listed is not None and free is not None
    assert listed.json_schema["properties"]["command"]["enum"] == ["go east", "look"]  # type: ignore[index]
    assert "enum" not in free.json_schema["properties"]["command"]  # type: ignore[index]


def test_grid_moves_are_the_cells_admissible_ones_when_the_env_lists_them() -> None:
    from exploreval.suites.grid._harness import ReactHarness

    here = ReactHarness().constraint("", {"moves": ["up", "right"]})
    anywhere = ReactHarness().constraint("", {})
    assert here is not None and anywhere is not None
    assert here.json_schema["properties"]["action"]["enum"] == ["up", "right"]  # type: ignore[index]
    assert '"down"' not in (here.grammar or "") and '"down"' in (anywhere.grammar or "")


@pytest.mark.parametrize(
    ("model", "wire", "expected"),
    [
        ("local:smollm2", "auto", "grammar"),  # the embedded model: llama.cpp's GBNF
        ("gpt-4.1-mini", "auto", "response_format"),  # elsewhere: a JSON schema
        ("local", "grammar", "grammar"),  # your own llama.cpp server
    ],
)
def test_the_constraint_goes_in_the_form_the_endpoint_understands(
    model: str, wire: str, expected: str
) -> None:
    grammar_and_schema = Constraint(
        name="grid move", grammar='root ::= "up"', json_schema={"type": "object"}
    )

    async def go(base_url: str) -> None:
        client = OpenAIClient(model, base_url, constrain_wire=wire, max_retries=0)
        if model.startswith("local:"):
            client.cache_endpoint = model
        try:
            params = SamplingParams(max_tokens=4, constraint=grammar_and_schema)
            await client.complete([Message(role="user", content="move")], params)
            await client.complete([Message(role="user", content="move")], SamplingParams())
        finally:
            await client.aclose()

    with StubServer(reply_fn=lambda messages: '{"action": "up"}') as server:
        asyncio.run(go(server.base_url))
        constrained, plain = server.requests[-2:]
    assert expected in constrained and "constraint" not in constrained
    if expected == "response_format":
        assert constrained["response_format"]["type"] == "json_schema"
        assert constrained["response_format"]["json_schema"]["strict"] is True
    assert "grammar" not in plain and "response_format" not in plain


def test_a_grammar_only_constraint_is_not_sent_to_a_json_schema_endpoint() -> None:
    client = OpenAIClient("gpt-4.1-mini", "http://127.0.0.1:9/v1", max_retries=0)
    only_grammar = Constraint(name="bandit answer", grammar='root ::= "x"')
    assert client.constraint_wire(only_grammar) == "unsupported"
    assert client.constraint_body(only_grammar) == {}


def test_the_constraint_is_part_of_the_cache_key() -> None:
    from exploreval.models import cache_key

    messages = [Message(role="user", content="m")]
    with_c = SamplingParams(constraint=Constraint(name="x", grammar='root ::= "a"'))
    key = {"model": "m", "endpoint": "e", "messages": messages}
    assert cache_key(params=with_c, **key) != cache_key(params=SamplingParams(), **key)


def test_the_spec_refuses_a_constraint_in_sampling() -> None:
    from exploreval.runner import SpecError, spec_from_dict

    with pytest.raises(SpecError, match="constrain: auto"):
        spec_from_dict({
            "suites": [{"env_id": "exploreval/GridDAG-v0"}],
            "agents": [{"kind": "llm", "model": "m", "base_url": "http://x/v1",
                        "sampling": {"constraint": {"name": "x", "grammar": "root ::= \"a\""}}}],
        })  # fmt: skip


@pytest.mark.slow
@pytest.mark.local_llm
@pytest.mark.parametrize(
    ("env", "preset", "harness", "steps"),
    [("exploreval/Bandit-v0", "hard", "BSSeC0", 8), ("exploreval/GridDAG-v0",
      "explore-low/dag-small", "react", 6)],
)  # fmt: skip
def test_the_embedded_model_constrained_takes_only_valid_actions(
    env: str, preset: str, harness: str, steps: int, tmp_path: Any, local_llm_base_url: str
) -> None:
    from exploreval.runner import run_experiment, spec_from_dict
    from exploreval.store import RunDir

    spec = {
        "suites": [{"env_id": env, "presets": [preset], "seeds": "0"}],
        "agents": [{"kind": "llm", "model": "local:smollm2", "base_url": local_llm_base_url,
                    "harness": harness, "history": "none", "constrain": "grammar",
                    "sampling": {"temperature": 0.0, "max_tokens": 160}}],
        "max_steps": steps,
    }  # fmt: skip
    summary = run_experiment(spec_from_dict(spec), str(tmp_path / "r"))
    assert summary.completed == 1
    (record,) = RunDir(tmp_path / "r").iter_records()
    assert record.n_steps == steps
    assert all(s.valid for s in record.steps), [s.raw_output for s in record.steps]
    assert all(s.agent_info.get("constraint_wire") == "grammar" for s in record.steps)


@pytest.mark.local_llm
@pytest.mark.parametrize("name", [n for n, _, _, _ in _json_harnesses()])
def test_every_schema_sent_to_the_embedded_model_makes_a_grammar_llama_cpp_parses(
    name: str,
) -> None:
    """What the embedded model is sent for a schema-only harness (``constrain: auto``, now the
    default for ``local:*``) becomes a grammar llama.cpp accepts. The terminal harnesses'
    ``maxLength: 2000`` unrolled into a grammar its parser refused, and the server died."""
    import llama_cpp
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    from exploreval.models import Constraint, OpenAIClient

    harness, info, _ = next((h, i, r) for n, h, i, r in _json_harnesses() if n == name)
    constraint = harness.constraint("", info)
    assert constraint is not None and constraint.json_schema is not None
    client = OpenAIClient("local:smollm2", "http://127.0.0.1:9/v1", cache_endpoint="local:smollm2")
    body = client.constraint_body(Constraint(name=name, json_schema=constraint.json_schema))
    sent = body["response_format"]["schema"]
    grammar = json_schema_to_gbnf(json.dumps(sent))
    llama_cpp.LlamaGrammar.from_string(grammar, verbose=False)  # raises if refused
    assert len(grammar) < 20_000, len(grammar)
    if "terminal" in name or "terminus" in name:
        original = json_schema_to_gbnf(json.dumps(constraint.json_schema))
        assert len(original) > 10 * len(grammar)  # what was sent before: unrolled 2,000 times
