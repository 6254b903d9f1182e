"""SWE-agent's scaffold beside Terminus (paper 4, Section 3.1): its two tool configurations
(bash only; bash + str_replace_editor) play real built-in tasks in the sandbox, its replies are
one tool call each, and its observations are SWE-agent's OBSERVATION turns."""

from __future__ import annotations

import asyncio
import json
import subprocess
from typing import Any

import pytest

from exploreval.agents import LLMAgent, make_harness
from exploreval.models import ScriptedModel
from exploreval.suites.terminal._swe_agent import (
    SWE_AGENT_NO_OUTPUT,
    SWE_AGENT_SYSTEM,
    SWEAgentHarness,
)

from .test_harness import action, started


def call(name: str, **arguments: Any) -> str:
    return "Let me look.\n" + json.dumps({"name": name, "arguments": arguments})


#: The here-document's delimiter: not "EOF", which some gold solutions use for here-documents
#: of their own (csv-to-json's python3 - <<'EOF'), where it would end the outer one early.
END = "GOLD_SOLUTION_END"


def _heredoc(solution: str) -> str:
    return f"bash <<'{END}'\n{solution}{END}"


def test_prompts_are_swe_agents_and_the_editor_comes_with_its_tool_option() -> None:
    bash = started(SWEAgentHarness())
    assert bash.system_prompt().startswith(SWE_AGENT_SYSTEM)
    assert "str_replace_editor" not in bash.system_prompt()
    editor = started(SWEAgentHarness(), tools="bash+editor", workdir="/srv/task")
    assert "str_replace_editor" in editor.system_prompt() and "/srv/task" in editor.system_prompt()
    first = bash.format_observation("obs", bash.ctx.reset_info)
    assert "<uploaded_files>\n/app\n</uploaded_files>" in first and "Do the thing." in first
    later = {"commands": ["ls"], "output": "a.txt\n", "output_kind": "new_output"}
    assert bash.format_observation("o", later) == "OBSERVATION:\na.txt"
    assert bash.format_observation("o", {**later, "output": ""}) == SWE_AGENT_NO_OUTPUT


def test_one_tool_call_per_reply_strictly() -> None:
    harness = started(SWEAgentHarness())
    ran = action(harness.parse(call("bash", command="ls -la")))
    assert ran == {"commands": [{"keystrokes": "ls -la\n", "duration": 60.0, "block": True}],
                   "task_complete": False}  # fmt: skip
    assert harness.parse(call("bash", command="ls")).reasoning == "Let me look."
    assert action(harness.parse(call("submit"))) == {"commands": [], "task_complete": True}
    for reply, reason in (
        (call("str_replace_editor", command="view", path="/app"), "not available"),
        (call("python", code="1"), "unknown tool"),
        (call("bash", command=" "), "non-empty"),
        ('{"name": "bash", "arguments": "ls"}', "must be an object"),
        ("I will run ls", "no tool call"),
    ):
        parsed = harness.parse(reply)
        assert parsed.action is None and reason in (parsed.reason or ""), reply
    editor = started(SWEAgentHarness(), tools="bash+editor")
    edit = action(editor.parse(call("str_replace_editor", command="view", path="/app")))
    assert edit == {"editor": {"command": "view", "path": "/app"}, "task_complete": False}


@pytest.mark.parametrize("tools", ["bash", "bash+editor"])
async def test_both_configurations_solve_a_built_in_task(tools: str) -> None:
    """A scripted model double drives the real harness and sandbox on `file-create-greeting`:
    look around, write the answer (with bash, or with the editor), run the check, submit."""
    from exploreval.runner import run_episode
    from exploreval.suites.terminal._builtin import builtin_task
    from exploreval.suites.terminal._env import TerminalEnv

    task = builtin_task("file-create-greeting")
    assert task.solution
    env = TerminalEnv(task=task.id, image="host", tools=tools)
    if tools == "bash":
        write = call("bash", command=_heredoc(task.solution))
    else:
        write = call("str_replace_editor", command="create", path="/app/solve.sh",
                     file_text=task.solution)  # fmt: skip
    replies = [call("bash", command="ls -la"), write]
    if tools == "bash+editor":
        replies.append(call("bash", command="bash /app/solve.sh"))
    replies.append(call("submit"))
    model = ScriptedModel(replies=replies)
    agent = LLMAgent(model, make_harness("terminal", "swe-agent"))
    try:
        record = await run_episode(env, agent, seed=0, max_steps=10)
    finally:
        await env.aclose()
    assert all(s.valid for s in record.steps), [s.invalid_reason for s in record.steps]
    assert len(record.steps) == len(replies) and record.success is True
    assert model.calls[1][-1].content.startswith("OBSERVATION:\n")  # ls's output came back
    if tools == "bash+editor":
        assert record.steps[1].info.get("output_kind") == "editor"


def test_every_built_in_solution_survives_the_heredoc_intact() -> None:
    """The scaffold plays a gold solution as one bash call, a quoted here-document: the shell
    passes its body through byte for byte unless a line of it is the delimiter itself. True of
    all 42 tasks (with "EOF" it was not: the outer here-document ended inside csv-to-json's own,
    and the rest ran as luck had it). So the one task of each kind played below stands for the
    rest of its kind; the gold solutions themselves pass on all 42 in test_builtin_tasks."""
    from exploreval.suites.terminal._builtin import builtin_tasks

    for task in builtin_tasks():
        assert task.solution and task.solution.endswith("\n"), task.id
        assert END not in task.solution.splitlines(), task.id
        # what bash would run is the solution, byte for byte
        body = subprocess.run(
            ["bash", "-c", "cat" + _heredoc(task.solution).removeprefix("bash")],
            capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
        assert body == task.solution, task.id


@pytest.mark.slow
async def test_a_built_in_task_of_every_kind_through_the_swe_agent_scaffold() -> None:
    """One built-in task of each kind (the one with the longest gold solution), bash only: the
    solution as one bash call, then submit; the real sandbox checks the result."""
    from exploreval.runner import run_episode
    from exploreval.suites.terminal._builtin import builtin_tasks
    from exploreval.suites.terminal._env import TerminalEnv

    by_kind: dict[str, Any] = {}
    for task in builtin_tasks():
        held = by_kind.get(task.kind)
        if held is None or len(task.solution or "") > len(held.solution or ""):
            by_kind[task.kind] = task
    assert set(by_kind) == {"file", "text", "script", "git", "swe", "api"}
    gate = asyncio.Semaphore(2)  # two sandboxes at a time (2 cores)

    async def play(task: Any) -> str | None:
        assert task.solution
        replies = [call("bash", command=_heredoc(task.solution)), call("submit")]
        agent = LLMAgent(ScriptedModel(replies=replies), make_harness("terminal", "swe-agent"))
        async with gate:
            env = TerminalEnv(task=task.id, image="host")
            try:
                record = await run_episode(env, agent, seed=0, max_steps=4)
            finally:
                await env.aclose()
        ok = record.success and all(s.valid for s in record.steps)
        return None if ok else task.id

    failed = [t for t in await asyncio.gather(*(play(t) for t in by_kind.values())) if t]
    assert failed == []
