"""The terminal env's action: keys to send to the pane, then how long to wait or whether to block
until the command returns. A malformed action raises :class:`ActionError` with what was wrong,
which the env records as an invalid action (never a crash).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    pass


MAX_DURATION_S = 60.0


#: A blocking command (Terminus 1) may wait longer than a plain duration.
MAX_BLOCK_S = 600.0


class ActionError(ValueError):
    """The action text is not a valid canonical action; the message is the invalid reason."""


def _number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise ActionError(f"{where} must be a number of seconds >= 0")
    return float(value)


def parse_action(text: str, tools: str = "bash") -> dict[str, Any]:
    """Validate the canonical JSON action; returns ``{"commands": [...], "task_complete": b}``
    or ``{"editor": {...}, "task_complete": b}``."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ActionError(f"action is not JSON ({exc.msg} at char {exc.pos})") from None
    if not isinstance(data, dict):
        raise ActionError("action must be a JSON object with 'commands' or 'editor'")
    unknown = set(data) - {"commands", "task_complete", "editor"}
    if unknown:
        raise ActionError(f"unknown action field(s): {', '.join(sorted(unknown))}")
    done = data.get("task_complete", False)
    if not isinstance(done, bool):
        raise ActionError("'task_complete' must be true or false")
    if "editor" in data:
        if tools != "bash+editor":
            raise ActionError("the file editor is not available with the 'bash' tool suite")
        if not isinstance(data["editor"], dict):
            raise ActionError("'editor' must be an object with 'command' and 'path'")
        return {"editor": data["editor"], "task_complete": done}
    commands = data.get("commands", [])
    if not isinstance(commands, list):
        raise ActionError("'commands' must be a list of {keystrokes, duration}")
    out = []
    for i, cmd in enumerate(commands):
        if not isinstance(cmd, dict) or not isinstance(cmd.get("keystrokes"), str):
            raise ActionError(f"commands[{i}] must be an object with a 'keystrokes' string")
        extra = set(cmd) - {"keystrokes", "duration", "block"}
        if extra:
            raise ActionError(f"commands[{i}]: unknown field(s) {', '.join(sorted(extra))}")
        duration = _number(cmd.get("duration", 1.0), f"commands[{i}].duration")
        block = cmd.get("block", False)
        if not isinstance(block, bool):
            raise ActionError(f"commands[{i}].block must be true or false")
        cap = MAX_BLOCK_S if block else MAX_DURATION_S
        out.append(
            {"keystrokes": cmd["keystrokes"], "duration": min(duration, cap), "block": block}
        )
    if not out and not done:
        raise ActionError("no commands and not task_complete: nothing to do")
    return {"commands": out, "task_complete": done}
