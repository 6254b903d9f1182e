"""SWE-agent's scaffold on a terminal task: its system and instance prompts, its ``bash`` and
``str_replace_editor`` tools (native tool calls where the endpoint takes them, its text form
elsewhere), and its handling of empty output and long commands.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from exploreval.agents import ParsedAction
from exploreval.models import Constraint
from exploreval.suites.terminal._harness import (
    EDITOR_DESCRIPTION,
    EDITOR_SCHEMA,
    TerminalHarnessBase,
    closed_object,
    function_tool,
    json_object,
)
from exploreval.suites.terminal._prompts import (
    with_variant,
)

#: SWE-agent's default templates (``config/default.yaml``: system, next step, no output), with
#: the instance template's PR wording made a task's ("task description" for "PR description";
#: the sentences about test files dropped: a terminal task's tests are hidden, not edited).
SWE_AGENT_SYSTEM = "You are a helpful assistant that can interact with a computer to solve tasks."


SWE_AGENT_INSTANCE = """<uploaded_files>
{workdir}
</uploaded_files>
I've uploaded files in the directory {workdir}. Consider the following task description:

<task_description>
{instruction}
</task_description>

Can you help me implement the necessary changes in the {workdir} directory so that the requirements specified in the <task_description> are met?
Follow these steps to resolve the task:
1. As a first step, it might be a good idea to find and read what is relevant to the <task_description>
2. Make the changes the task asks for, using the bash tool
3. Check your result, and think about edge cases
Your thinking should be thorough and so it's fine if it's very long."""


SWE_AGENT_NO_OUTPUT = "Your command ran successfully and did not produce any output."


#: The tools of SWE-agent's ``registry`` (bash), ``edit_anthropic`` (str_replace_editor) and
#: ``submit`` bundles, as SWE-agent declares them to a function-calling model.
SWE_AGENT_TOOLS = """## Tools
- bash: run a bash command in the terminal; its output is returned. Arguments: {"command": "<the command>"}. Commands run one at a time and block until they finish (at most 60 seconds); do not start interactive programs.
- submit: submit your work when the task is done. Arguments: {}."""


SWE_AGENT_EDITOR_TOOL = """- str_replace_editor: view, create and edit files under {root} (absolute paths). Arguments: {{"command": "view" | "create" | "str_replace" | "insert" | "undo_edit", "path": ..., plus "file_text" (create), "old_str" and "new_str" (str_replace), "insert_line" and "new_str" (insert), "view_range" (view)}}. `view` shows a file numbered like `cat -n` or a directory 2 levels deep; `create` refuses an existing file; `old_str` must match exactly one place."""


#: SWE-agent calls tools natively; here one call is written as a JSON object (as terminal_use).
SWE_AGENT_CALLING = """## How to call a tool
Think as long as you need, then end your reply with exactly one tool call as a JSON object: {"name": "<tool>", "arguments": {...}}."""


SWE_AGENT_BASH_TIMEOUT_S = 60.0


#: The calling section when the endpoint takes the tools natively (the paper's setting).
SWE_AGENT_NATIVE = """## How to call a tool
Think as long as you need, then call exactly one tool."""


class SWEAgentHarness(TerminalHarnessBase):
    """SWE-agent's default scaffold (the paper's Section 3.1 comparison): bash only, or bash +
    ``str_replace_editor`` with the env option ``tools=bash+editor``; ``OBSERVATION:`` turns,
    full history, ``submit`` ends the episode. What differs from Terminus (docs/terminal.md,
    "Scaffolds"): a bash command blocks until it ends and its output is the observation (no
    keystrokes, no screen, no waits), one tool call per reply, no completion check."""

    name = "swe-agent"
    base_prompt = SWE_AGENT_SYSTEM

    def system_prompt(self) -> str:
        text = with_variant(self.base_prompt, self.variant) + "\n\n" + SWE_AGENT_TOOLS
        if self.tools == "bash+editor":
            text += "\n" + SWE_AGENT_EDITOR_TOOL.format(root=self.root)
        calling = SWE_AGENT_NATIVE if self.call_form == "native" else SWE_AGENT_CALLING
        return f"{text}\n\n{calling}"

    def native_tools(self) -> list[dict[str, Any]] | None:
        """SWE-agent's ``bash``, ``submit`` (and ``str_replace_editor``), as it declares them."""
        tools = [
            function_tool("bash", "Run a bash command in the terminal; its output is returned.",
                      closed_object({"command": {"type": "string"}}, ["command"])),
            function_tool("submit", "Submit your work when the task is done.", closed_object({}, [])),
        ]  # fmt: skip
        if self.tools == "bash+editor":
            tools.append(function_tool("str_replace_editor", EDITOR_DESCRIPTION, EDITOR_SCHEMA))
        return tools

    def parse_calls(self, calls: Sequence[Any], text: str) -> ParsedAction:
        def as_text(name: str, arguments: dict[str, Any]) -> ParsedAction:
            return self._parse(json.dumps({"name": name, "arguments": arguments}))

        return self._native(calls, text, as_text)

    def format_observation(self, observation: str, info: dict[str, Any]) -> str:
        if self._first(observation, info):
            return SWE_AGENT_INSTANCE.format(workdir=self.root, instruction=info["instruction"])
        if info.get("valid") is False:
            return f"OBSERVATION:\nInvalid tool call: {self._invalid_reason(info)}"
        output = str(info.get("output") or "").strip()
        if info.get("block_timed_out"):
            output += f"\n[the command did not finish within {SWE_AGENT_BASH_TIMEOUT_S:.0f} s]"
        text = f"OBSERVATION:\n{output}" if output else SWE_AGENT_NO_OUTPUT
        if info.get("intervention_message"):
            text += f"\n\n{info['intervention_message']}"
        return text

    def constraint(self, observation: str, info: dict[str, Any]) -> Constraint | None:
        """One tool call object: ``{"name": "bash"|"submit"|"str_replace_editor", ...}``."""
        names = ["bash", "submit"] + (["str_replace_editor"] if self.tools == "bash+editor" else [])
        # each tool's own arguments: with a bare {"type": "object"} the embedded model wrote
        # {"command_list": [1]} for bash 10 times in 10 (issue 42's measurement)
        shapes: list[dict[str, Any]] = [
            closed_object({"command": {"type": "string", "minLength": 1}}, ["command"]),
            closed_object({}, []),  # submit
        ]
        if self.tools == "bash+editor":
            shapes.append(EDITOR_SCHEMA)
        schema = closed_object(
            {"name": {"type": "string", "enum": names}, "arguments": {"anyOf": shapes}},
            ["name", "arguments"],
        )
        return Constraint(name="swe-agent tool call", json_schema=schema)

    def _parse(self, text: str) -> ParsedAction:
        data, why = json_object(text)
        if data is None:
            return ParsedAction(None, f"no tool call ({why})")
        name, arguments = data.get("name"), data.get("arguments", {})
        if not isinstance(arguments, dict):
            return ParsedAction(None, "'arguments' must be an object")
        thought = text[: text.find("{")].strip() or None  # what the model wrote before its call
        if name == "submit":
            return ParsedAction(
                json.dumps({"commands": [], "task_complete": True}), reasoning=thought
            )
        if name == "str_replace_editor":
            if self.tools != "bash+editor":
                return ParsedAction(None, "str_replace_editor is not available (tools=bash)")
            editor = {"editor": arguments, "task_complete": False}
            return ParsedAction(json.dumps(editor), reasoning=thought)
        if name != "bash":
            return ParsedAction(None, f"unknown tool {name!r}: use bash, submit"
                                + (" or str_replace_editor" if self.tools == "bash+editor" else ""))  # fmt: skip
        command = arguments.get("command")
        if not isinstance(command, str) or not command.strip():
            return ParsedAction(None, "bash needs a non-empty 'command' string")
        keystrokes = command if command.endswith("\n") else command + "\n"
        step = {"keystrokes": keystrokes, "duration": SWE_AGENT_BASH_TIMEOUT_S, "block": True}
        return ParsedAction(
            json.dumps({"commands": [step], "task_complete": False}), reasoning=thought
        )
