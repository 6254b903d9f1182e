"""Terminal-Bench's Terminus 1 and Terminus 2 scaffolds: a JSON reply per turn with the keys to
send, how long to wait and whether the task is complete (Terminus 2 asks to confirm completion).
"""

from __future__ import annotations

import json
from typing import Any

from exploreval.agents import EpisodeContext, ParsedAction
from exploreval.core import Message
from exploreval.models import Constraint
from exploreval.suites.terminal._actions import MAX_BLOCK_S
from exploreval.suites.terminal._harness import (
    CONFIRM_COMPLETION,
    KEYS_RULES,
    MAX_WAIT_S,
    NON_BLOCKING_S,
    TerminalHarnessBase,
    json_object,
    parse_seconds,
)

TERMINUS_1_BASE = """You are an AI assistant tasked with solving command-line tasks in a Linux environment. You will be given a task instruction and the output from previously executed commands. Your goal is to solve the task by providing batches of shell commands.

For each response:
1. Analyze the current state based on any terminal output provided
2. Determine the next set of commands needed to make progress
3. Decide if you need to see the output of these commands before proceeding

Your response must be a JSON object that matches this schema:

{
  "state_analysis": "string: description of the current state of the terminal",
  "explanation": "string: brief explanation of what these commands will do",
  "commands": [
    {
      "keystrokes": "string: keystrokes to execute in the terminal",
      "is_blocking": "boolean: wait for the command to finish before the next one (false for interactive programs such as less or vim, and for commands that never end)",
      "timeout_sec": "number: the most seconds to wait for a blocking command"
    }
  ],
  "is_task_complete": "boolean: whether the task is complete following the execution of these commands"
}

Don't include markdown formatting.

Note that you operate directly on the terminal from inside a tmux session. Use tmux keystrokes like `C-x` or `Escape` to interactively navigate the terminal. If you would like to execute a command that you have written you will need to append a newline character to the end of your command.

For example, if you write "ls -la" you will need to append a newline character to the end of your command like this: `ls -la\\n`.

One thing to be very careful about is handling interactive sessions like less, vim, or git diff. In these cases, you should not wait for the output of the command. Instead, you should send the keystrokes to the terminal as if you were typing them."""


TERMINUS_2_BASE = (
    """You are an AI assistant tasked with solving command-line tasks in a Linux environment. You will be given a task description and the output from previously executed commands. Your goal is to solve the task by providing batches of shell commands.

Format your response as JSON with the following structure:

{
  "analysis": "Analyze the current state based on the terminal output provided. What do you see? What has been accomplished? What still needs to be done?",
  "plan": "Describe your plan for the next steps. What commands will you run and why? Be specific about what you expect each command to accomplish.",
  "commands": [
    {
      "keystrokes": "ls -la\\n",
      "duration": 0.1
    }
  ],
  "task_complete": false
}

Required fields:
- "analysis": your analysis of the current situation
- "plan": your plan for the next steps
- "commands": an array of command objects to execute (may be empty)

Optional fields:
- "task_complete": true when the task is complete (defaults to false); you will be asked to confirm

Command object structure:
- "keystrokes": the text to type into the terminal (required)
- "duration": seconds to wait for the command to complete before the next command runs (defaults to 1.0, at most 60)

"""
    + KEYS_RULES
    + """

Wait times: use 0.1 for immediate commands (cd, ls, echo, cat), 1.0 for normal commands (gcc, find, rustc), longer for slow ones (make, python3 [long running script], wget [file]). Never wait longer than 60 seconds; prefer polling with an empty "keystrokes" to see intermediate status.

Your response must be the JSON object only."""
)


class Terminus1Harness(TerminalHarnessBase):
    name = "terminus-1"
    base_prompt = TERMINUS_1_BASE

    def format_observation(self, observation: str, info: dict[str, Any]) -> str:
        if self._first(observation, info):
            screen = f"Current Terminal Screen:\n{info.get('output', '')}"
            return (
                f"Instruction:\n{info['instruction']}\n\nThe current terminal state is:\n{screen}"
            )
        text = self._terminal_text(observation, info)
        if info.get("block_timed_out"):
            text += "\n\n[a blocking command did not finish within its timeout_sec]"
        return text

    def constraint(self, observation: str, info: dict[str, Any]) -> Constraint | None:
        """Terminus 1's reply object (``state_analysis``, ``explanation``, ``commands`` of
        ``{keystrokes, is_blocking, timeout_sec}``, ``is_task_complete``)."""
        command = {"type": "object", "properties": {
            "keystrokes": {"type": "string", "maxLength": 2000},
            "is_blocking": {"type": "boolean"},
            "timeout_sec": {"type": "number", "minimum": 0, "maximum": 600}},
            "required": ["keystrokes", "is_blocking", "timeout_sec"],
            "additionalProperties": False}  # fmt: skip
        schema = {"type": "object", "properties": {
            "state_analysis": {"type": "string", "maxLength": 600},
            "explanation": {"type": "string", "maxLength": 600},
            "commands": {"type": "array", "items": command, "maxItems": 8},
            "is_task_complete": {"type": "boolean"}},
            "required": ["state_analysis", "explanation", "commands", "is_task_complete"],
            "additionalProperties": False}  # fmt: skip
        return Constraint(name="terminus-1 reply", json_schema=schema)

    def _parse(self, text: str) -> ParsedAction:
        data, why = json_object(text)
        if data is None:
            return ParsedAction(None, why)
        if "editor" in data:
            if self.tools != "bash+editor" or not isinstance(data["editor"], dict):
                return ParsedAction(None, "str_replace_editor is not available or not an object")
            return ParsedAction(json.dumps({"editor": data["editor"], "task_complete": False}))
        for key in ("state_analysis", "explanation"):
            if not isinstance(data.get(key), str):
                return ParsedAction(None, f"'{key}' (a string) is required")
        done = data.get("is_task_complete")
        if not isinstance(done, bool):
            return ParsedAction(None, "'is_task_complete' (true or false) is required")
        raw = data.get("commands")
        if not isinstance(raw, list):
            return ParsedAction(None, "'commands' (a list) is required")
        commands = []
        for i, cmd in enumerate(raw):
            if not isinstance(cmd, dict) or not isinstance(cmd.get("keystrokes"), str):
                return ParsedAction(None, f"commands[{i}] needs a 'keystrokes' string")
            block = cmd.get("is_blocking")
            if not isinstance(block, bool):
                return ParsedAction(None, f"commands[{i}].is_blocking must be true or false")
            timeout = parse_seconds(cmd.get("timeout_sec"), f"commands[{i}].timeout_sec")
            if isinstance(timeout, str):
                return ParsedAction(None, timeout)
            commands.append(
                {
                    "keystrokes": cmd["keystrokes"],
                    "duration": min(timeout, MAX_BLOCK_S) if block else NON_BLOCKING_S,
                    "block": block,
                }
            )
        if not commands and not done:
            return ParsedAction(None, "no commands and is_task_complete is false")
        return ParsedAction(
            json.dumps({"commands": commands, "task_complete": done}),
            reasoning=data["state_analysis"],
        )


class Terminus2Harness(TerminalHarnessBase):
    name = "terminus-2"
    base_prompt = TERMINUS_2_BASE

    def reset(self, ctx: EpisodeContext, observation: str) -> None:
        super().reset(ctx, observation)
        self.pending_completion = False
        self._confirming = False

    def messages(self, observation: str, info: dict[str, Any]) -> list[Message]:
        self._confirming = self.pending_completion
        return super().messages(observation, info)

    def format_observation(self, observation: str, info: dict[str, Any]) -> str:
        if self._first(observation, info):
            screen = f"Current Terminal Screen:\n{info.get('output', '')}"
            return f"Task Description:\n{info['instruction']}\n\nCurrent terminal state:\n{screen}"
        text = self._terminal_text(observation, info)
        if info.get("intervention_message") and info["intervention_message"] not in text:
            text += f"\n\n{info['intervention_message']}"
        if self._confirming:
            return f"Current terminal state:\n{text}\n\n{CONFIRM_COMPLETION}"
        return text

    def constraint(self, observation: str, info: dict[str, Any]) -> Constraint | None:
        """Terminus 2's reply object (``analysis``, ``plan``, ``commands`` of
        ``{keystrokes, duration}``, ``task_complete``)."""
        command = {"type": "object", "properties": {
            "keystrokes": {"type": "string", "maxLength": 2000},
            "duration": {"type": "number", "minimum": 0, "maximum": MAX_WAIT_S}},
            "required": ["keystrokes", "duration"], "additionalProperties": False}  # fmt: skip
        schema = {"type": "object", "properties": {
            "analysis": {"type": "string", "maxLength": 600},
            "plan": {"type": "string", "maxLength": 600},
            "commands": {"type": "array", "items": command, "maxItems": 8},
            "task_complete": {"type": "boolean"}},
            "required": ["analysis", "plan", "commands", "task_complete"],
            "additionalProperties": False}  # fmt: skip
        return Constraint(name="terminus-2 reply", json_schema=schema)

    def _parse(self, text: str) -> ParsedAction:
        data, why = json_object(text)
        if data is None:
            self.pending_completion = False
            return ParsedAction(None, why)
        if "editor" in data:
            self.pending_completion = False
            if self.tools != "bash+editor" or not isinstance(data["editor"], dict):
                return ParsedAction(None, "str_replace_editor is not available or not an object")
            return ParsedAction(json.dumps({"editor": data["editor"], "task_complete": False}))
        missing = [k for k in ("analysis", "plan", "commands") if k not in data]
        if missing:
            self.pending_completion = False
            return ParsedAction(None, f"missing required field(s): {', '.join(missing)}")
        raw = data["commands"]
        if not isinstance(raw, list):
            self.pending_completion = False
            return ParsedAction(None, "'commands' must be a list")
        done = data.get("task_complete", False)
        if not isinstance(done, bool):
            self.pending_completion = False
            return ParsedAction(None, "'task_complete' must be true or false")
        commands = []
        for i, cmd in enumerate(raw):
            if not isinstance(cmd, dict) or not isinstance(cmd.get("keystrokes"), str):
                self.pending_completion = False
                return ParsedAction(None, f"commands[{i}] needs a 'keystrokes' string")
            duration = parse_seconds(cmd.get("duration", 1.0), f"commands[{i}].duration")
            if isinstance(duration, str):
                self.pending_completion = False
                return ParsedAction(None, duration)
            commands.append(
                {"keystrokes": cmd["keystrokes"], "duration": min(duration, MAX_WAIT_S)}
            )
        confirmed = done and self.pending_completion
        info: dict[str, Any] = {}
        if done and not confirmed:
            info["completion"] = "asked to confirm"
        elif confirmed:
            info["completion"] = "confirmed"
        self.pending_completion = done and not confirmed
        if not commands and not confirmed:
            if not done:
                return ParsedAction(None, "no commands and task_complete is false")
            commands = [{"keystrokes": "", "duration": 0.0}]  # nothing to run: just look again
        analysis = data.get("analysis")
        return ParsedAction(
            json.dumps({"commands": commands, "task_complete": confirmed}),
            reasoning=analysis if isinstance(analysis, str) else None,
            info=info,
        )
