"""Memory systems as an LLM agent's history (issue 19): ``--history mem0|langmem|amem[:K]``:
the policy's grammar, refusals before a run, harnesses that do not take one. Each backend's real
run is in ``tests/suites/task2quiz/test_memory_systems.py``."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from exploreval.agents import MEMORY_BACKENDS, HistoryPolicy
from exploreval.core import EXTRAS


@given(st.sampled_from(sorted(MEMORY_BACKENDS)), st.one_of(st.none(), st.integers(1, 50)))
def test_a_memory_policy_parses_and_prints_back(backend: str, k: int | None) -> None:
    text = backend if k is None else f"{backend}:{k}"
    policy = HistoryPolicy.parse(text)
    assert policy.mode == "memory" and policy.backend == backend
    assert policy.window == (5 if k is None else k)
    assert HistoryPolicy.parse(str(policy)) == policy


@pytest.mark.parametrize("text", ["mem0:0", "mem0:x", "mem1", "langmem:-1"])
def test_a_bad_memory_policy_is_refused_with_the_choices(text: str) -> None:
    with pytest.raises(ValueError, match="mem0, langmem, amem|K >= 1"):
        HistoryPolicy.parse(text)


def test_a_missing_memory_extra_is_refused_before_the_run_with_the_install_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from exploreval.cli._app import app
    from exploreval.core._extras import Extra

    monkeypatch.setitem(
        EXTRAS, "mem0", Extra("mem0", ("no_such_module_for_the_test",), "Mem0 as a memory")
    )
    result = CliRunner().invoke(
        app,
        ["run", "exploreval/GridDAG-v0", "--model", "m", "--base-url", "http://127.0.0.1:9/v1",
         "--history", "mem0", "--out", str(tmp_path / "r"), "-q"],
    )  # fmt: skip
    assert result.exit_code != 0
    message = " ".join(str(result.output).split()) + repr(result.exception)
    assert "--history mem0 needs the [mem0] extra" in message, message
    assert "pip install 'exploreval[mem0]'" in message
    assert not (tmp_path / "r").exists()


def test_bandit_prompt_designs_refuse_a_memory_history() -> None:
    from exploreval.agents import make_harness

    with pytest.raises(ValueError, match="use history 'full', 'window:K' or 'none'"):
        make_harness("bandit", "BSSN0", history="mem0")


TOOLS = [
    {"type": "function", "function": {"name": "Memory", "parameters": {
        "type": "object", "properties": {"content": {"type": "string"}},
        "required": ["content"]}}},
    {"type": "function", "function": {"name": "Done", "parameters": {"type": "object"}}},
]  # fmt: skip


@given(st.sampled_from(["Memory", "Done"]), st.text(max_size=40))
def test_a_tool_call_written_as_json_reads_back_as_that_call(name: str, content: str) -> None:
    import json

    from exploreval.agents._memory import tool_calls_from_text, tools_as_json_schema

    schema = tools_as_json_schema(TOOLS, None)
    assert {o["properties"]["tool"]["const"] for o in schema["anyOf"]} == {"Memory", "Done"}
    # a named tool_choice narrows the schema to that tool
    only = tools_as_json_schema(TOOLS, {"type": "function", "function": {"name": "Memory"}})
    assert only["properties"]["tool"] == {"const": "Memory"}
    assert only["properties"]["arguments"] == TOOLS[0]["function"]["parameters"]
    text = json.dumps({"tool": name, "arguments": {"content": content}})
    (call,) = tool_calls_from_text(text)
    assert call.name == name and json.loads(call.arguments) == {"content": content}
    assert tool_calls_from_text(text[:-1]) == []  # cut short: no call, never a crash
    assert tool_calls_from_text(json.dumps({"arguments": {}})) == []


class _Recording:
    """Records what the bridge sends (a double beside the real runs of test_memory_systems)."""

    def __init__(self, model: str, reply: str) -> None:
        self.model, self.reply, self.sent = model, reply, []

    async def complete(self, messages, params, *, repeat, sample, scope):  # type: ignore[no-untyped-def]
        from exploreval.models import Completion

        self.sent.append((list(messages), params, sample, scope))
        return Completion(text=self.reply)


def test_the_bridge_asks_an_endpoint_without_tools_for_json_and_reads_the_call() -> None:
    import asyncio
    import json

    from exploreval.agents._memory import ModelBridge
    from exploreval.models import SamplingParams

    reply = json.dumps({"tool": "Memory", "arguments": {"content": "the key is in the box"}})

    async def go(model: str) -> tuple[_Recording, object]:
        client = _Recording(model, reply)
        bridge = ModelBridge(client, SamplingParams(), asyncio.get_running_loop(),  # type: ignore[arg-type]
                             scope="memory:x", repeat=0)  # fmt: skip
        done = await asyncio.to_thread(
            bridge.complete,
            [{"role": "user", "content": "hi"}],
            tools=TOOLS,
            tool_choice="required",
        )
        return client, done

    local, done = asyncio.run(go("local:smollm2"))
    messages, params, sample, scope = local.sent[0]
    assert params.tools is None and params.constraint is not None  # asked as JSON text
    assert params.constraint.json_schema == {"anyOf": tools_schema_options()}
    assert "one JSON object" in messages[-1].content and (sample, scope) == (0, "memory:x")
    assert [c.name for c in done.tool_calls] == ["Memory"]  # type: ignore[attr-defined]
    remote, _ = asyncio.run(go("gpt-4.1-mini"))
    _, params, _, _ = remote.sent[0]
    assert params.tools == TOOLS and params.tool_choice == "required"  # real tool calls


def tools_schema_options() -> list[dict[str, object]]:
    from exploreval.agents._memory import tools_as_json_schema

    return tools_as_json_schema(TOOLS, None)["anyOf"]  # type: ignore[no-any-return]


class _Slow:
    """A model that takes a minute to answer (a small local model writing a long reply)."""

    model = "slow"

    async def complete(self, messages, params, *, repeat, sample, scope):  # type: ignore[no-untyped-def]
        import asyncio

        await asyncio.sleep(60)
        raise AssertionError("never answered: the call was cancelled")


def test_an_ended_episode_cancels_the_memory_call_in_flight_and_refuses_new_ones() -> None:
    """A run cancelled by SIGTERM must not wait for a memory library still calling the model."""
    import asyncio
    import time

    from exploreval.agents._memory import MemoryClosedError, ModelBridge
    from exploreval.models import SamplingParams

    async def go() -> tuple[float, BaseException | None]:
        bridge = ModelBridge(_Slow(), SamplingParams(), asyncio.get_running_loop(),  # type: ignore[arg-type]
                             scope="memory:x", repeat=0)  # fmt: skip
        call = asyncio.ensure_future(
            asyncio.to_thread(bridge.complete, [{"role": "user", "content": "hi"}])
        )
        await asyncio.sleep(0.2)  # the call is in flight
        started = time.perf_counter()
        bridge.cancel()
        try:
            await asyncio.wait_for(call, 5)
            error: BaseException | None = None
        except MemoryClosedError as exc:
            error = exc
        waited = time.perf_counter() - started
        with pytest.raises(MemoryClosedError, match="episode ended"):
            bridge.complete([{"role": "user", "content": "again"}])
        return waited, error

    waited, error = asyncio.run(go())
    assert isinstance(error, MemoryClosedError) and waited < 2
