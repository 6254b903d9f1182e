"""LLM harnesses of the terminal family: model text in, the canonical JSON action out.

Three reply formats, each its own harness (docs/terminal.md, "Harnesses"):

* ``terminal_use`` (= ``default``): the paper's tool (Appendix E, Figure 10). The reply is the
  tool call's arguments ``{"commands": [{"keystrokes", "wait"}]}`` (``wait`` <= 60 s) or, once
  the task is done, the final response ``DONE``. Tool results are rendered as the prompt
  promises: ``{"terminal_status": "New Terminal History: ..." | "Current Terminal Screen: ...",
  "in_progress": bool, "truncated": bool}``.
* ``terminus-1``: ``{state_analysis, explanation, commands: [{keystrokes, is_blocking,
  timeout_sec}], is_task_complete}``; a blocking command waits until the shell prints its next
  prompt (at most ``timeout_sec``, no marker on screen).
* ``terminus-2`` (alias ``terminus``): ``{analysis, plan, commands: [{keystrokes, duration}],
  task_complete}`` with ``duration`` <= 60 s; completion must be confirmed: the first
  ``task_complete: true`` is answered with Terminus 2's "Are you sure...?" and only a second,
  consecutive one ends the episode.

Options of every terminal harness: ``prompt_variant`` (Table 12: ``base``, ``exploration``,
``curiosity``, ``reflection``, ``investigate`` = the paper's default; also settable as an env
option so named suites can sweep it) and ``reasoning_history`` (re-send the model's reasoning
in earlier turns). Table 5's "solution in first thought" (env option ``intervention``) is
applied here: the first prompt ends with the agent's own first thought holding the solution.
With the ``bash+editor`` tool suite every prompt also offers ``str_replace_editor``. Replies
that do not parse become invalid actions with the reason; completion is explicit and strict.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from exploreval.agents import EpisodeContext, Harness, ParsedAction
from exploreval.core import Message
from exploreval.models import Constraint
from exploreval.suites.terminal._prompts import (
    DEFAULT_PROMPT_VARIANT,
    PROMPT_VARIANTS,
    with_variant,
)

MAX_WAIT_S = 60.0
MAX_BLOCK_S = 600.0
#: Terminus 1 sends non-blocking keystrokes and looks at once; we let the screen settle briefly.
NON_BLOCKING_S = 0.1

KEYS_RULES = """## keystrokes
- Each "keystrokes" will be sent to the terminal completely verbatim via `tmux send-keys`, so write them exactly as you want it.
- Ctrl keys may be prefixed with 'C-' or '^', Shift keys with 'S-' and Alt (meta) with 'M-'. In addition, the following special key names are accepted: Up, Down, Left, Right, BSpace, BTab, DC (Delete), End, Enter, Escape, F1 to F12, Home, IC (Insert), NPage/PageDown/PgDn, PPage/PageUp/PgUp, Space, and Tab.
- If it's an actual command you want to execute (e.g. "ls"), make sure to end it with a newline (\\n) which signals "enter".
- Do not include extra whitespaces before or after the keystrokes unless necessary.
- only include multiple commands at a time when you expect the commands to finish almost instantly (like cd), otherwise use one command at a time!"""

_WAIT_AND_RESULT = """## wait
- "wait" specifies the number of seconds to wait before the next "keystrokes" will be sent or, in case it's already the last one, the seconds to wait before the terminal screen will get captured (via `tmux capture-pane`) and returned as tool result.
- For slow commands (e.g. make, python3 [long running script], wget [file]), allow enough time for execution.
- Do NOT wait longer than 60 seconds in one go. Prefer polling in shorter intervals to see intermediate status.

## "terminal_use" result
- After all the commands are sent and the wait is over, you'll see the latest terminal status in "terminal_status". It will show either "Current Terminal Screen" which is obtained by `tmux capture-pane -p` and contains only the visible contents of the pane, or "New Terminal History" which is obtained by `tmux capture-pane -p -S -` (i.e. capturing the full history) and then dropping the old history that has previously been seen.
- The "in_progress" attribute signals whether the terminal screen is still receiving new contents when capture-pane happens (e.g. when "wait" is over before the command completes execution). If you want to keep waiting to receive a fresher status, send {"keystrokes": ""} with some additional wait time.
- The "truncated" attribute signals whether "terminal_status" gets truncated in the middle. If it does, it will also mention how many bytes get truncated."""

_IMPORTANT = """- You must complete the task all by yourself without ever asking the user for clarification or help.
- Make sure you use "terminal_use" to complete the task and actually get things done. You have root access to the terminal and can install packages, edit files and execute programs.
- The user wants you to GET THINGS DONE on their behalf. They do NOT want you to suggest solutions to them in the response but instead you must implement the soluion using commands. Make sure you actually execute commands (including writing and running code or scripts) to complete the task.
- Only when you are absolutely certain the task has been successfully completed will you write your final response. You will be graded based on what happens in the terminal session, NOT your final response. So be concise and only write "DONE" at the end."""

#: Figure 10 without its "## Exploration" section: the paper's ``{{base prompt}}``.
TERMINAL_USE_BASE = f"""You are an AI assistant tasked with solving command-line tasks in a Linux environment. Your goal is to solve the task by iteratively interacting with a terminal session using the provided "terminal_use" tool.

As an example, its "commands" parameter can look like:
{{"commands": [{{"keystrokes": "ls -la\\n", "wait": 0.1}}, {{"keystrokes": "cd project\\n", "wait": 0.1}}]}}

{KEYS_RULES}

{_WAIT_AND_RESULT}

IMPORTANT
{_IMPORTANT}"""

#: Figure 11: the AppWorld system prompt, as printed (its apps are reached through `cli`).
APPWORLD_BASE = f"""You are an AI assistant tasked with completing day-to-day tasks by writing code to interact with apps through their APIs.
You can interact with the API by calling the `cli` command. Your goal is to solve the task by iteratively interacting with a terminal session using the provided "terminal_use" tool.

As an example, its "commands" parameter can look like:
{{"commands": [{{"keystrokes": "cli --help\\n", "wait": 2.0}}, {{"keystrokes": "ls -a\\n", "wait": 2.0}}]}}

{KEYS_RULES}

{_WAIT_AND_RESULT}

IMPORTANT
{_IMPORTANT}

Before attempting to complete the task, you must discover what APIs are available to you by calling `cli --help`"""

#: Figure 12: the SWE-Bench system prompt, as printed, with the paper's ``/testbed`` standing for
#: the task's work dir (``{{root}}``); its typos ("terminal?use", "sourcecode") kept.
SWE_BENCH_BASE = f"""You are a helpful assistant that can interact with a computer to solve tasks.
I've uploaded a python code repository in the directory {{root}}
Your goal is to solve the pull request by iteratively interacting with a terminal session using the provided "terminal_use" tool.

As an example, its "commands" parameter can look like:
{{{{"commands": [{{{{"keystrokes": "ls -la\\n", "wait": 2.0}}}}, {{{{"keystrokes": "cd project\\n", "wait": 2.0}}}}]}}}}

{KEYS_RULES.replace("{", "{{").replace("}", "}}")}

{_WAIT_AND_RESULT.replace("{", "{{").replace("}", "}}")}

## IMPORTANT
{_IMPORTANT}

## General Task Instructions
I've already taken care of all changes to any of the test files described in the PR description. This means you DON'T have to modify the testing logic or any of the tests in any way!
Your task is to make the minimal changes to non-tests files in the {{root}} directory to ensure the PR description is satisfied.
Follow these steps to resolve the issue:
1. As a first step, it might be a good idea to find and read code relevant to the PR description
2. Create a script to reproduce the error and execute it with `python <filename.py>` using the terminal?use, to confirm the error
3. Edit the sourcecode of the repo to resolve the issue
4. Rerun your reproduce script and confirm that the error is fixed!
5. Think about edgecases and make sure your fix handles them as well
Your thinking should be thorough and so it's fine if it's very long."""

#: The ``benchmark`` option of the terminal_use harness: which of the paper's system prompts
#: (Figures 10-12), and the prompt variant each uses by default (Figure 10 is printed with the
#: exploration sections, Figures 11 and 12 without).
BENCHMARK_PROMPTS: dict[str, tuple[str, str]] = {
    "terminal-bench": (TERMINAL_USE_BASE, DEFAULT_PROMPT_VARIANT),
    "appworld": (APPWORLD_BASE, "base"),
    "swe-bench": (SWE_BENCH_BASE, "base"),
}

#: The paper used native function calling; here the call is written as text.
TERMINAL_USE_CALLING = """## How to call "terminal_use"
Reply with exactly one JSON object, the arguments of one "terminal_use" call: {"commands": [...]}. When the task is complete, reply with your final response instead: DONE (alone on its last line, no JSON)."""

TERMINAL_USE_NATIVE = """## How to call "terminal_use"
Act by calling the "terminal_use" tool, one call per reply. When the task is complete, reply with your final response instead of a call: DONE alone on its last line."""
TERMINAL_USE_DESCRIPTION = (
    "Send keystrokes to the terminal, each command followed by a wait in seconds (at most 60); "
    "returns the screen or the new history, whether a command is still in progress, and "
    "whether the output was truncated."
)
EDITOR_DESCRIPTION = (
    "View, create and edit files (absolute paths): view (a file numbered like cat -n, or a "
    "directory), create (refuses an existing file), str_replace (old_str must match exactly one "
    "place), insert (after insert_line), undo_edit."
)
EDITOR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "command": {"type": "string",
                    "enum": ["view", "create", "str_replace", "insert", "undo_edit"]},
        "path": {"type": "string"}, "file_text": {"type": "string"},
        "old_str": {"type": "string"}, "new_str": {"type": "string"},
        "insert_line": {"type": "integer"},
        "view_range": {"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 2},
    },
    "required": ["command", "path"],
    "additionalProperties": False,
}  # fmt: skip


def function_tool(name: str, description: str, parameters: dict[str, Any]) -> dict[str, Any]:
    """One tool as the chat API declares it."""
    return {"type": "function",
            "function": {"name": name, "description": description, "parameters": parameters}}  # fmt: skip


EDITOR_PROMPT = """## The "str_replace_editor" tool
Instead of terminal commands you may reply {{"editor": {{"command": ..., "path": ...}}}}: a file editor for viewing, creating and editing files under {root} (absolute paths).
- view: shows a file with line numbers (`cat -n`), or a directory 2 levels deep; optional "view_range": [start, end] (end -1 = to the end)
- create: "file_text"; refuses to overwrite an existing file
- str_replace: "old_str" must match exactly one place in the file (whitespace included); "new_str" replaces it
- insert: "new_str" is inserted after line "insert_line" (0 = at the top)
- undo_edit: reverts the last edit of that file"""

#: Terminus 2's completion check, word for word.
CONFIRM_COMPLETION = (
    "Are you sure you want to mark the task as complete? This will trigger your solution to be "
    "graded and you won't be able to make any further corrections. If so, include "
    '"task_complete": true in your JSON response again.'
)
_OPTIONS = frozenset({"prompt_variant", "reasoning_history", "benchmark", "tool_calls"})
#: How a harness whose paper's agent called tools natively sends its calls (option
#: ``tool_calls``): ``auto`` (native where the endpoint takes tools, text for the embedded
#: model), ``native`` or ``text`` (docs/terminal.md, "Native tool calls").
TOOL_CALL_FORMS = ("auto", "native", "text")
_DONE_LINE = re.compile(r"^[\s*_`>#.\-]*DONE[\s*_`.!]*$")


def json_object(text: str) -> tuple[Any, str]:
    """The first JSON object of ``text`` (bare, or in a ```json fence), and what precedes it;
    ``(None, reason)`` when there is none."""
    candidates: list[tuple[str, str]] = []
    fence = re.search(r"```(?:json)?\s*(\{.*?\})\s*```", text, re.S)
    if fence:
        candidates.append((fence.group(1), text[: fence.start()]))
    start = text.find("{")
    if start != -1:
        candidates.append((text[start:], text[:start]))
    # strict=False: a raw newline or tab inside a string is read as itself. Keystrokes are
    # the one place a reply means a literal Enter, the embedded model's JSON grammar lets one
    # through (8 of 10 terminal_use replies were refused for it), and the meaning is plain.
    decoder = json.JSONDecoder(strict=False)
    error = "no JSON object in the reply"
    for candidate, before in candidates:
        try:
            value, _ = decoder.raw_decode(candidate)
        except json.JSONDecodeError as exc:
            error = f"the JSON object does not parse ({exc.msg} at char {exc.pos})"
            continue
        if isinstance(value, dict):
            return value, before
        error = "the reply's JSON is not an object"
    return None, error


def closed_object(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    """A JSON schema object with exactly these properties (``required`` of them required)."""
    return {"type": "object", "properties": properties, "required": required,
            "additionalProperties": False}  # fmt: skip


def parse_seconds(value: Any, where: str) -> float | str:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        return f"{where} must be a number of seconds >= 0"
    return float(value)


class TerminalHarnessBase(Harness):
    """Shared parts: options, the system prompt's variant and editor section, the first-thought
    intervention, recording what was actually sent."""

    base_prompt = ""

    def __init__(self, history: str = "full", **options: Any) -> None:
        unknown = set(options) - _OPTIONS
        if unknown:
            raise ValueError(
                f"{self.name} harness: unknown option(s) {', '.join(sorted(unknown))}; "
                f"known: {', '.join(sorted(_OPTIONS))}"
            )
        variant = options.get("prompt_variant")
        if variant is not None and variant not in PROMPT_VARIANTS:
            raise ValueError(
                f"{self.name} harness option prompt_variant={variant!r}: expected one of "
                f"{', '.join(PROMPT_VARIANTS)}"
            )
        form = options.get("tool_calls", "auto")
        if form not in TOOL_CALL_FORMS:
            raise ValueError(
                f"{self.name} harness option tool_calls={form!r}: expected one of "
                f"{', '.join(TOOL_CALL_FORMS)}"
            )
        super().__init__(history=history, **options)
        self.tools = "bash"
        self.root = "/app"
        self.variant = variant or DEFAULT_PROMPT_VARIANT
        self.first_thought: str | None = None
        self._sent_current: str | None = None
        self._last_reason: str | None = None

    def reset(self, ctx: EpisodeContext, observation: str) -> None:
        super().reset(ctx, observation)
        info = ctx.reset_info
        self.tools = str(ctx.env_options.get("tools", info.get("tools", "bash")))
        self.root = str(info.get("workdir") or "/app")
        env_variant = ctx.env_options.get("prompt_variant", info.get("prompt_variant"))
        mine = self.options.get("prompt_variant")
        if env_variant is not None and mine is not None and env_variant != mine:
            raise ValueError(
                f"prompt_variant given twice: env option {env_variant!r} and harness option "
                f"{mine!r}; give one"
            )
        self.variant = mine or env_variant or DEFAULT_PROMPT_VARIANT
        self.first_thought = info.get("first_thought") or None
        self._sent_current = None
        self._last_reason = None

    def system_prompt(self) -> str:
        text = with_variant(self.base_prompt, self.variant)
        if self.tools == "bash+editor":
            text += "\n\n" + EDITOR_PROMPT.format(root=self.root)
        extra = self.calling_notes()
        return f"{text}\n\n{extra}" if extra else text

    def calling_notes(self) -> str:
        return ""

    def _wire_call(self, call: Any) -> dict[str, Any]:
        """A function call in the API's wire form, with an id (the server's, else one made
        here: the next observation's ``tool`` message names it)."""
        call_id = call.id or f"call_{len(self.turns)}"
        return {"id": call_id, "type": "function",
                "function": {"name": call.name, "arguments": call.arguments}}  # fmt: skip

    def _native(self, calls: Sequence[Any], text: str, as_text: Any) -> ParsedAction:
        """The first native call through ``as_text(name, arguments)`` (the text form's parse of
        the same call), or the reply's text in the text form when it made no call."""
        if not calls:
            parsed = self.parse(text)
            parsed.info["call_form"] = "text"
            return parsed
        call = calls[0]
        try:
            arguments = json.loads(call.arguments or "{}")
        except json.JSONDecodeError as exc:
            parsed = ParsedAction(None, f"{call.name} call: arguments are not JSON ({exc.msg})")
        else:
            if not isinstance(arguments, dict):
                parsed = ParsedAction(None, f"{call.name} call: arguments must be an object")
            else:
                parsed = as_text(call.name, arguments)
        self._last_reason = parsed.reason if parsed.action is None else None
        self.pending_call = self._wire_call(call)
        if parsed.reasoning is None and text.strip():
            parsed.reasoning = text.strip()
        parsed.info.update(call_form="native",
                           tool_call={"name": call.name, "arguments": call.arguments})  # fmt: skip
        if len(calls) > 1:
            parsed.info["calls_ignored"] = len(calls) - 1  # one call per turn, as the paper's
        return parsed

    def messages(self, observation: str, info: dict[str, Any]) -> list[Message]:
        msgs = super().messages(observation, info)
        self._sent_current = msgs[-1].content
        if self.first_thought and not self.turns:
            # Table 5 (3): the agent's first reasoning step already holds the solution; the
            # model continues from it (a trailing assistant message = prefill where supported).
            msgs.append(Message.model_construct(role="assistant", content=self.first_thought))
        return msgs

    def record(
        self, observation: str, info: dict[str, Any], reply: str, action: str | None
    ) -> None:
        super().record(observation, info, reply, action)
        turn = self.turns[-1]
        if self._sent_current is not None:  # exactly what the model was shown this turn
            turn.observation = self._sent_current
        if self.first_thought and len(self.turns) == 1:
            turn.reply = f"{self.first_thought}\n\n{reply}"
        turn.__post_init__()
        self._sent_current = None

    def parse(self, text: str) -> ParsedAction:
        parsed = self._parse(text)
        self._last_reason = parsed.reason if parsed.action is None else None
        return parsed

    def _parse(self, text: str) -> ParsedAction:
        raise NotImplementedError

    def _invalid_reason(self, info: dict[str, Any]) -> str:
        """Why the last step was invalid: this harness's own parse error when the env only
        knows that the reply did not parse, else the env's reason."""
        return self._last_reason or str(info.get("invalid_reason") or "invalid")

    # -- observations -----------------------------------------------------------------
    def _terminal_text(self, observation: str, info: dict[str, Any]) -> str:
        """The env's rendering of the step (``New Terminal Output`` / ``Current Terminal
        Screen`` / the editor's answer), or why the last reply was invalid."""
        if info.get("valid") is False:
            return f"Invalid response: {self._invalid_reason(info)}"
        return observation

    def _first(self, observation: str, info: dict[str, Any]) -> bool:
        return "instruction" in info and "task_id" in info and "commands" not in info


class TerminalUseHarness(TerminalHarnessBase):
    """The paper's terminal_use agent. Option ``benchmark`` picks its system prompt: Figure 10
    (``terminal-bench``, the default), 11 (``appworld``) or 12 (``swe-bench``)."""

    name = "terminal_use"
    base_prompt = TERMINAL_USE_BASE

    def __init__(self, history: str = "full", **options: Any) -> None:
        benchmark = str(options.get("benchmark", "terminal-bench"))
        if benchmark not in BENCHMARK_PROMPTS:
            raise ValueError(
                f"terminal_use harness option benchmark={benchmark!r}: expected one of "
                f"{', '.join(BENCHMARK_PROMPTS)}"
            )
        super().__init__(history=history, **options)
        self.benchmark = benchmark
        self._template, self._default_variant = BENCHMARK_PROMPTS[benchmark]
        self.base_prompt = (
            self._template.format(root=self.root) if "{root}" in self._template else self._template
        )

    def reset(self, ctx: EpisodeContext, observation: str) -> None:
        super().reset(ctx, observation)
        if "{root}" in self._template:  # Figure 12's /testbed: the task's work dir
            self.base_prompt = self._template.format(root=self.root)
        if self.options.get("prompt_variant") is None and (
            ctx.env_options.get("prompt_variant", ctx.reset_info.get("prompt_variant")) is None
        ):
            self.variant = self._default_variant  # Figures 11-12 are printed without one

    def calling_notes(self) -> str:
        return TERMINAL_USE_NATIVE if self.call_form == "native" else TERMINAL_USE_CALLING

    def native_tools(self) -> list[dict[str, Any]] | None:
        """Appendix E's ``terminal_use`` (and ``str_replace_editor`` with the editor)."""
        constraint = self.constraint("", {})
        assert constraint is not None and constraint.json_schema is not None
        tools = [function_tool("terminal_use", TERMINAL_USE_DESCRIPTION, constraint.json_schema)]
        if self.tools == "bash+editor":
            tools.append(function_tool("str_replace_editor", EDITOR_DESCRIPTION, EDITOR_SCHEMA))
        return tools

    def parse_calls(self, calls: Sequence[Any], text: str) -> ParsedAction:
        def as_text(name: str, arguments: dict[str, Any]) -> ParsedAction:
            if name == "str_replace_editor":
                return self._parse(json.dumps({"editor": arguments}))
            if name != "terminal_use":
                return ParsedAction(None, f"unknown tool {name!r}: call terminal_use")
            return self._parse(json.dumps(arguments))

        return self._native(calls, text, as_text)

    def format_observation(self, observation: str, info: dict[str, Any]) -> str:
        if self._first(observation, info):
            status = self._status(info)
            return f"{info['instruction']}\n\n{json.dumps(status, ensure_ascii=False)}"
        if info.get("valid") is False:
            return f"Invalid terminal_use call: {self._invalid_reason(info)}"
        if info.get("output_kind") == "editor":
            return json.dumps({"str_replace_editor": info.get("output", "")}, ensure_ascii=False)
        text = json.dumps(self._status(info), ensure_ascii=False)
        if info.get("intervention_message"):
            text += f"\n\n{info['intervention_message']}"
        return text

    def constraint(self, observation: str, info: dict[str, Any]) -> Constraint | None:
        """One terminal_use call: ``{"commands": [{"keystrokes", "wait"}]}`` (a keystroke object:
        the schema Appendix E's tool declares)."""
        command = {"type": "object", "properties": {
            "keystrokes": {"type": "string", "maxLength": 2000},
            "wait": {"type": "number", "minimum": 0, "maximum": MAX_WAIT_S}},
            "required": ["keystrokes", "wait"], "additionalProperties": False}  # fmt: skip
        schema = {"type": "object", "properties": {
            "commands": {"type": "array", "items": command, "minItems": 1, "maxItems": 8}},
            "required": ["commands"], "additionalProperties": False}  # fmt: skip
        return Constraint(name="terminal_use call", json_schema=schema)

    @staticmethod
    def _status(info: dict[str, Any]) -> dict[str, Any]:
        title = (
            "New Terminal History" if info.get("output_kind") == "new_output" else
            "Current Terminal Screen"
        )  # fmt: skip
        omitted = int(info.get("output_truncated_bytes") or 0)
        return {
            "terminal_status": f"{title}:\n{info.get('output', '')}",
            "in_progress": bool(info.get("in_progress")),
            "truncated": omitted > 0,
        }

    def _parse(self, text: str) -> ParsedAction:
        data, why = json_object(text)
        if data is None:
            lines = [line for line in text.strip().splitlines() if line.strip()]
            if lines and _DONE_LINE.match(lines[-1]):
                return ParsedAction(json.dumps({"commands": [], "task_complete": True}))
            return ParsedAction(
                None, f"no terminal_use call ({why}) and no final response ending in DONE"
            )
        if "editor" in data:
            if self.tools != "bash+editor" or not isinstance(data["editor"], dict):
                return ParsedAction(None, "str_replace_editor is not available or not an object")
            return ParsedAction(json.dumps({"editor": data["editor"], "task_complete": False}))
        raw = data.get("commands")
        if not isinstance(raw, list) or not raw:
            return ParsedAction(None, "a terminal_use call needs a non-empty 'commands' list")
        commands = []
        for i, cmd in enumerate(raw):
            if not isinstance(cmd, dict) or not isinstance(cmd.get("keystrokes"), str):
                return ParsedAction(None, f"commands[{i}] needs a 'keystrokes' string")
            wait = parse_seconds(cmd.get("wait", 1.0), f"commands[{i}].wait")
            if isinstance(wait, str):
                return ParsedAction(None, wait)
            commands.append({"keystrokes": cmd["keystrokes"], "duration": min(wait, MAX_WAIT_S)})
        return ParsedAction(json.dumps({"commands": commands, "task_complete": False}))
