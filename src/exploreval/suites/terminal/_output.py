"""Pure helpers of the terminal tool: key parsing, head+tail truncation, new-output diffing."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re

#: tmux key names the paper's terminal_use rules accept (besides C-/^/S-/M- prefixed keys).
SPECIAL_KEYS = frozenset(
    [
        "Up",
        "Down",
        "Left",
        "Right",
        "BSpace",
        "BTab",
        "DC",
        "End",
        "Enter",
        "Escape",
        "Home",
        "IC",
        "NPage",
        "PageDown",
        "PgDn",
        "PPage",
        "PageUp",
        "PgUp",
        "Space",
        "Tab",
    ]
    + [f"F{i}" for i in range(1, 13)]
)
_MODIFIED = re.compile(
    r"^(?:(?:C|S|M)-)+(?:[A-Za-z0-9\[\]\\@^_?/ ]|"
    + "|".join(sorted(SPECIAL_KEYS, key=len, reverse=True))
    + r")$"
)
_CARET = re.compile(r"^\^([A-Za-z@\[\]\\^_?])$")

#: Above this many bytes keystrokes go through load-buffer/paste-buffer (send-keys fails ~16 KB).
PASTE_THRESHOLD = 8_000


def key_name(keystrokes: str) -> str | None:
    """The tmux key name when ``keystrokes`` is exactly one special key, else None (literal).

    ``C-c``, ``^C`` (→ ``C-c``), ``M-x``, ``S-Tab``, ``Up``, ``Escape``, ``F5``... are keys; any
    other text, including text that merely contains such a name, is sent literally.
    """
    text = keystrokes
    if text in SPECIAL_KEYS:
        return text
    caret = _CARET.match(text)
    if caret:
        return f"C-{caret.group(1).lower()}"
    if _MODIFIED.match(text):
        return text
    return None


def truncate_middle(text: str, max_bytes: int = 10_000) -> tuple[str, int]:
    """Keep the head and tail of ``text`` within ``max_bytes`` UTF-8 bytes.

    Returns the (possibly) truncated text and the number of bytes omitted (0 = untouched). The
    marker line ``[... N bytes omitted ...]`` replaces the middle; its own length is not counted
    against ``max_bytes``.
    """
    data = text.encode("utf-8", errors="replace")
    if len(data) <= max_bytes:
        return text, 0
    head_n = max_bytes // 2
    tail_n = max_bytes - head_n
    head = data[:head_n].decode("utf-8", errors="ignore")
    tail = data[len(data) - tail_n :].decode("utf-8", errors="ignore")
    omitted = len(data) - len(head.encode()) - len(tail.encode())
    return f"{head}\n[... {omitted} bytes omitted ...]\n{tail}", omitted


def strip_trailing_blank(text: str) -> str:
    """A captured pane without trailing spaces per line and without trailing empty lines."""
    lines = [line.rstrip() for line in text.split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)


def new_output(previous: str | None, current: str) -> str | None:
    """The part of ``current`` (full history) after ``previous``; None when not a continuation.

    Both are normalised captures. When the old capture is not a prefix of the new one (the screen
    was cleared, a full-screen program redrew it, history was trimmed), there is no honest diff
    and the caller shows the current screen instead (as Terminus does).
    """
    if previous is None:
        return current
    if current.startswith(previous):
        return current[len(previous) :].lstrip("\n")
    return None


CAPPED = "\n[... output capped ...]"


def capped_text(data: bytes, limit: int) -> str:
    """``data`` decoded, cut at ``limit`` bytes with a marker saying so."""
    text = data[:limit].decode("utf-8", errors="replace")
    return text + (CAPPED if len(data) > limit else "")


def exit_code(returncode: int | None) -> int | None:
    """A shell's view of a return code: killed by signal N is 128 + N."""
    if returncode is not None and returncode < 0:
        return 128 - returncode
    return returncode


def bwrap_child_pid(status: bytes) -> int | None:
    """The sandbox's pid 1 (as the host sees it) from what bwrap wrote to ``--json-status-fd``
    so far, or None while it has not said."""
    for line in status.split(b"\n"):
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict) and "child-pid" in value:
            return int(value["child-pid"])
    return None


async def communicate_capped(
    proc: asyncio.subprocess.Process, data: bytes, limit: int
) -> tuple[str, str]:
    """Feed stdin, read stdout/stderr keeping at most ``limit`` bytes of each, wait."""

    async def feed() -> None:
        assert proc.stdin is not None
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            if data:
                proc.stdin.write(data)
                await proc.stdin.drain()
            proc.stdin.close()

    async def drain(stream: asyncio.StreamReader | None) -> str:
        assert stream is not None
        kept = bytearray()
        over = False
        while chunk := await stream.read(65536):
            room = limit + 1 - len(kept)
            if room > 0:
                kept += chunk[:room]
            over = over or len(kept) > limit
        text = bytes(kept[:limit]).decode("utf-8", errors="replace")
        return text + (CAPPED if over else "")

    _, out, err = await asyncio.gather(feed(), drain(proc.stdout), drain(proc.stderr))
    await proc.wait()
    return out, err
