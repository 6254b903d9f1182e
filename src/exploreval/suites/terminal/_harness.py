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

_KEYS_RULES = """## keystrokes
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

{_KEYS_RULES}

{_WAIT_AND_RESULT}

IMPORTANT
{_IMPORTANT}"""

#: Figure 11: the AppWorld system prompt, as printed (its apps are reached through `cli`).
APPWORLD_BASE = f"""You are an AI assistant tasked with completing day-to-day tasks by writing code to interact with apps through their APIs.
You can interact with the API by calling the `cli` command. Your goal is to solve the task by iteratively interacting with a terminal session using the provided "terminal_use" tool.

As an example, its "commands" parameter can look like:
{{"commands": [{{"keystrokes": "cli --help\\n", "wait": 2.0}}, {{"keystrokes": "ls -a\\n", "wait": 2.0}}]}}

{_KEYS_RULES}

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

{_KEYS_RULES.replace("{", "{{").replace("}", "}}")}

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


def _function(name: str, description: str, parameters: dict[str, Any]) -> dict[str, Any]:
    """One tool as the chat API declares it."""
    return {"type": "function",
            "function": {"name": name, "description": description, "parameters": parameters}}  # fmt: skip


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
    + _KEYS_RULES
    + """

Wait times: use 0.1 for immediate commands (cd, ls, echo, cat), 1.0 for normal commands (gcc, find, rustc), longer for slow ones (make, python3 [long running script], wget [file]). Never wait longer than 60 seconds; prefer polling with an empty "keystrokes" to see intermediate status.

Your response must be the JSON object only."""
)

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


def _json_object(text: str) -> tuple[Any, str]:
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


def _closed_object(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    """A JSON schema object with exactly these properties (``required`` of them required)."""
    return {"type": "object", "properties": properties, "required": required,
            "additionalProperties": False}  # fmt: skip


def _seconds(value: Any, where: str) -> float | str:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        return f"{where} must be a number of seconds >= 0"
    return float(value)


class _TerminalHarness(Harness):
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


class TerminalUseHarness(_TerminalHarness):
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
        tools = [_function("terminal_use", TERMINAL_USE_DESCRIPTION, constraint.json_schema)]
        if self.tools == "bash+editor":
            tools.append(_function("str_replace_editor", EDITOR_DESCRIPTION, EDITOR_SCHEMA))
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
        data, why = _json_object(text)
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
            wait = _seconds(cmd.get("wait", 1.0), f"commands[{i}].wait")
            if isinstance(wait, str):
                return ParsedAction(None, wait)
            commands.append({"keystrokes": cmd["keystrokes"], "duration": min(wait, MAX_WAIT_S)})
        return ParsedAction(json.dumps({"commands": commands, "task_complete": False}))


class Terminus1Harness(_TerminalHarness):
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
        data, why = _json_object(text)
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
            timeout = _seconds(cmd.get("timeout_sec"), f"commands[{i}].timeout_sec")
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


class Terminus2Harness(_TerminalHarness):
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
        data, why = _json_object(text)
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
            duration = _seconds(cmd.get("duration", 1.0), f"commands[{i}].duration")
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


class SWEAgentHarness(_TerminalHarness):
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
            _function("bash", "Run a bash command in the terminal; its output is returned.",
                      _closed_object({"command": {"type": "string"}}, ["command"])),
            _function("submit", "Submit your work when the task is done.", _closed_object({}, [])),
        ]  # fmt: skip
        if self.tools == "bash+editor":
            tools.append(_function("str_replace_editor", EDITOR_DESCRIPTION, EDITOR_SCHEMA))
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
            _closed_object({"command": {"type": "string", "minLength": 1}}, ["command"]),
            _closed_object({}, []),  # submit
        ]
        if self.tools == "bash+editor":
            shapes.append(EDITOR_SCHEMA)
        schema = _closed_object(
            {"name": {"type": "string", "enum": names}, "arguments": {"anyOf": shapes}},
            ["name", "arguments"],
        )
        return Constraint(name="swe-agent tool call", json_schema=schema)

    def _parse(self, text: str) -> ParsedAction:
        data, why = _json_object(text)
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
