"""The structured file editor (SWE-agent's ``str_replace_editor`` semantics), run in the sandbox.

The text operations are pure functions (tested against a model with hypothesis); the file I/O
runs inside the sandbox through :meth:`Sandbox.exec` (so a symlink in /app can never make the
editor touch a host file). Undo history is kept by the host-side :class:`FileEditor`, per path.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from exploreval.suites.terminal._output import CAPPED

if TYPE_CHECKING:
    from exploreval.suites.terminal._sandbox import Sandbox

MAX_RESPONSE_CHARS = 16_000
_MAX_FILE = 8_000_000
CLIPPED_NOTE = (
    "<response clipped><NOTE>To save on context only part of this file has been shown to you. "
    "Use `view` with a view_range, or grep -n, to see the rest.</NOTE>"
)
COMMANDS = ("view", "create", "str_replace", "insert", "undo_edit")
ROOT = "/app"


class EditorError(ValueError):
    """A tool call the editor refuses; the message is what the agent sees."""


def clip(text: str, limit: int = MAX_RESPONSE_CHARS) -> str:
    return text if len(text) <= limit else text[:limit] + CLIPPED_NOTE


def numbered(content: str, start: int = 1) -> str:
    """``cat -n`` style: right-aligned 6-wide line numbers and a tab."""
    lines = content.split("\n")
    return "\n".join(f"{i + start:6}\t{line}" for i, line in enumerate(lines))


def view_lines(content: str, view_range: list[int] | None) -> tuple[str, int]:
    """The part of ``content`` to show and its first line number (``-1`` = to the end)."""
    if view_range is None:
        return content, 1
    if len(view_range) != 2 or not all(isinstance(v, int) for v in view_range):
        raise EditorError("Invalid `view_range`. It should be a list of two integers.")
    lines = content.split("\n")
    n = len(lines)
    first, last = view_range
    if first < 1 or first > n:
        raise EditorError(
            f"Invalid `view_range`: {view_range}. Its first element `{first}` should be within "
            f"the range of lines of the file: [1, {n}]"
        )
    if last == -1:
        last = n
    if last > n:
        raise EditorError(
            f"Invalid `view_range`: {view_range}. Its second element `{last}` should be smaller "
            f"than the number of lines in the file: `{n}`"
        )
    if last < first:
        raise EditorError(
            f"Invalid `view_range`: {view_range}. Its second element `{last}` should be larger "
            f"or equal than its first `{first}`"
        )
    return "\n".join(lines[first - 1 : last]), first


def str_replace(content: str, old: str, new: str) -> str:
    """Replace the single occurrence of ``old``; zero or several occurrences are errors."""
    if old == "":
        raise EditorError("Parameter `old_str` must not be empty for command: str_replace")
    count = content.count(old)
    if count == 0:
        raise EditorError(
            f"No replacement was performed, old_str `{old}` did not appear verbatim in the file."
        )
    if count > 1:
        lines: list[int] = []
        start = 0
        while (idx := content.find(old, start)) != -1:
            lines.append(content.count("\n", 0, idx) + 1)
            start = idx + 1
        raise EditorError(
            f"No replacement was performed. Multiple occurrences of old_str `{old}` in lines "
            f"{lines}. Please ensure it is unique"
        )
    return content.replace(old, new, 1)


def insert(content: str, insert_line: int, new: str) -> str:
    """Insert ``new`` (one or more lines) after line ``insert_line`` (0 = at the top)."""
    lines = content.split("\n")
    if not isinstance(insert_line, int) or insert_line < 0 or insert_line > len(lines):
        raise EditorError(
            f"Invalid `insert_line` parameter: {insert_line}. It should be within the range of "
            f"lines of the file: [0, {len(lines)}]"
        )
    return "\n".join(lines[:insert_line] + new.split("\n") + lines[insert_line:])


def _check_path(path: Any, root: str = ROOT) -> str:
    if not isinstance(path, str) or not path.startswith("/"):
        raise EditorError(
            f"The path {path!r} is not an absolute path, it should start with `/`. "
            f"For example: {root}/file.py"
        )
    parts = [p for p in path.split("/") if p not in ("", ".")]
    if ".." in parts or not (path == root or path.startswith(root + "/")):
        raise EditorError(f"The path {path} is outside {root}; the editor works under {root} only.")
    return path


_PROBE = (
    'if [ -d "$1" ]; then echo D; find "$1" -maxdepth 2 -not -path "*/.*" | sort; '
    'elif [ -f "$1" ]; then echo F; cat -- "$1"; else echo M; fi'
)


class FileEditor:
    """One episode's editor: runs calls in ``sandbox`` and keeps the undo history."""

    def __init__(self, sandbox: Sandbox, root: str | None = None) -> None:
        self.sandbox = sandbox
        #: The directory the editor works under: the sandbox's work dir (the task's WORKDIR).
        self.root = root or sandbox.workdir
        self.history: dict[str, list[str]] = {}

    async def _probe(self, path: str) -> tuple[str, str]:
        result = await self.sandbox.exec(
            ["sh", "-c", _PROBE, "sh", path], timeout=20, max_output_bytes=_MAX_FILE
        )
        if result.stdout.endswith(CAPPED):
            raise EditorError(f"{path} is larger than {_MAX_FILE} bytes; use the shell for it.")
        if result.returncode != 0:
            raise EditorError(f"Could not read {path}: {result.stderr.strip()}")
        kind, _, body = result.stdout.partition("\n")
        return kind, body

    async def _write(self, path: str, content: str) -> None:
        result = await self.sandbox.exec(
            ["sh", "-c", 'cat > "$1"', "sh", path], input=content.encode(), timeout=20
        )
        if result.returncode != 0:
            raise EditorError(f"Could not write {path}: {result.stderr.strip()}")

    async def run(self, call: dict[str, Any]) -> str:
        """Execute one tool call; errors come back as text the agent sees (never raised)."""
        try:
            return clip(await self._run(call))
        except EditorError as exc:
            return f"Error: {exc}"

    async def _run(self, call: dict[str, Any]) -> str:
        command = call.get("command")
        if command not in COMMANDS:
            raise EditorError(
                f"Unrecognized command {command!r}. The allowed commands are: {', '.join(COMMANDS)}"
            )
        path = _check_path(call.get("path"), self.root)
        kind, body = await self._probe(path)
        if command == "create":
            if kind != "M":
                raise EditorError(
                    f"File already exists at: {path}. Cannot overwrite files using command `create`."
                )
            text = call.get("file_text")
            if not isinstance(text, str):
                raise EditorError("Parameter `file_text` is required for command: create")
            await self._write(path, text)
            self.history.setdefault(path, []).append("\0missing")
            return f"File created successfully at: {path}"
        if kind == "M":
            raise EditorError(f"The path {path} does not exist. Please provide a valid path.")
        if kind == "D":
            if command != "view":
                raise EditorError(f"The path {path} is a directory and only `view` works on it.")
            if call.get("view_range") is not None:
                raise EditorError(
                    "The `view_range` parameter is not allowed when `path` points to a directory."
                )
            return (
                f"Here's the files and directories up to 2 levels deep in {path}, "
                f"excluding hidden items:\n{body}"
            )
        content = body
        if command == "view":
            shown, first = view_lines(content, call.get("view_range"))
            return f"Here's the result of running `cat -n` on {path}:\n{numbered(shown, first)}\n"
        if command == "str_replace":
            old, new = call.get("old_str"), call.get("new_str", "")
            if not isinstance(old, str) or not isinstance(new, str):
                raise EditorError("Parameters `old_str` (and `new_str`) must be strings")
            updated = str_replace(content, old, new)
            await self._write(path, updated)
            self.history.setdefault(path, []).append(content)
            line = content.split(old)[0].count("\n") + 1
            return f"The file {path} has been edited. " + _snippet(updated, line, new)
        if command == "insert":
            new, at = call.get("new_str"), call.get("insert_line")
            if not isinstance(new, str):
                raise EditorError("Parameter `new_str` is required for command: insert")
            if not isinstance(at, int):
                raise EditorError("Parameter `insert_line` (an integer) is required for: insert")
            updated = insert(content, at, new)
            await self._write(path, updated)
            self.history.setdefault(path, []).append(content)
            return f"The file {path} has been edited. " + _snippet(updated, at + 1, new)
        # undo_edit
        stack = self.history.get(path)
        if not stack:
            raise EditorError(f"No edit history found for {path}.")
        previous = stack.pop()
        if previous == "\0missing":
            result = await self.sandbox.exec(["rm", "-f", "--", path], timeout=20)
            if result.returncode != 0:
                raise EditorError(f"Could not undo the creation of {path}")
            return f"Last edit to {path} undone successfully (the file was removed)."
        await self._write(path, previous)
        return f"Last edit to {path} undone successfully. " + _snippet(previous, 1, "")


def _snippet(content: str, line: int, new: str, context: int = 4) -> str:
    lines = content.split("\n")
    start = max(1, line - context)
    end = min(len(lines), line + new.count("\n") + context)
    shown = "\n".join(lines[start - 1 : end])
    return (
        f"Here's the result of running `cat -n` on a snippet:\n{numbered(shown, start)}\n"
        "Review the changes and make sure they are as expected. Edit the file again if necessary."
    )
