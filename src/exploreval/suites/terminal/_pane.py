"""The agent's terminal: a tmux pane inside the sandbox, typed into and read from.

Every tmux client command runs *inside* the sandbox, so whatever the agent configured on its tmux
server (hooks, run-shell) acts only there. A blocking command's end is read from a file the
pane's shell rewrites at each prompt (host side), so nothing is typed into the pane or shown on
it. The pane's raw output is also the episode's asciinema cast.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Literal

from exploreval.suites.terminal._cast import CastRecorder
from exploreval.suites.terminal._errors import SandboxError
from exploreval.suites.terminal._harness_tree import HARNESS_TMUX
from exploreval.suites.terminal._output import (
    PASTE_THRESHOLD,
    key_name,
    new_output,
    strip_trailing_blank,
    truncate_middle,
)
from exploreval.suites.terminal._sandbox_config import (
    SHELLS,
    TMUX_SOCK,
    EndReason,
    Observation,
    SandboxConfig,
    read_plain_file,
)


class PaneMixin:
    """The pane half of :class:`._sandbox.Sandbox`: what it declares here, the sandbox sets."""

    config: SandboxConfig
    env: dict[str, str]
    end_reason: EndReason
    host_ctl: Path | None
    child_pid: int
    terminated: bool
    started_at: float
    started_wall: float
    _pane: str
    _closed: bool
    _last_history: str | None
    cast_recorder: CastRecorder
    #: ``argv`` run inside the sandbox: (returncode, stdout, stderr, seconds).
    _run_inside: Callable[..., Awaitable[tuple[int | None, str, str, float]]]

    @property
    def alive(self) -> bool:
        raise NotImplementedError

    # -- tmux ------------------------------------------------------------------------
    async def _tmux(self, *args: str, input: bytes | None = None, timeout: float = 10) -> str:
        """One tmux client command, run *inside* the sandbox: whatever the agent configured on
        its server (hooks that save or load buffers, run-shell) can act only in the sandbox."""
        if not self.child_pid or self.terminated:
            raise SandboxError("sandbox not running")
        returncode, out, err, _ = await self._run_inside(
            [HARNESS_TMUX, "-S", TMUX_SOCK, *args],
            env=self.env,
            cwd="/",
            timeout=timeout,
            input=input,
            max_output_bytes=4_000_000,
        )
        if returncode != 0 or err.startswith("access not allowed"):
            raise SandboxError(
                f"tmux {args[0]} failed ({self.end_reason or 'sandbox running'}): {err.strip()}"
            )
        return out

    async def send_keys(self, keystrokes: str, *, wait: float = 0.0) -> None:
        """Type ``keystrokes`` into the pane, then wait ``wait`` seconds.

        A string that is exactly one tmux key name (``C-c``, ``^C``, ``Up``, ``Escape``, ``F1``...)
        is sent as that key; anything else literally (``\\n`` = Enter). Texts above a few KB go
        through load-buffer/paste-buffer, which has no length limit.
        """
        if not self.alive:
            raise SandboxError(f"sandbox ended ({self.end_reason or 'terminated'})")
        key = key_name(keystrokes)
        if key is not None:
            await self._tmux("send-keys", "-t", self._pane, key)
        elif len(keystrokes.encode()) > PASTE_THRESHOLD:
            name = f"paste-{uuid.uuid4().hex[:8]}"
            await self._tmux("load-buffer", "-b", name, "-", input=keystrokes.encode())
            await self._tmux("paste-buffer", "-d", "-r", "-b", name, "-t", self._pane)
        elif keystrokes:
            await self._tmux("send-keys", "-t", self._pane, "-l", "--", keystrokes)
        if wait > 0:
            await self.wait(wait)

    def _prompt_mark(self) -> bytes:
        """What the pane's shell last wrote when it printed a prompt (see ``BASHRC``)."""
        if self.host_ctl is None:
            return b""
        return read_plain_file(self.host_ctl, "prompt", limit=4096)

    async def run_blocking(self, keystrokes: str, *, timeout: float) -> bool:
        """Type ``keystrokes`` and wait until the shell prints its next prompt (the command
        line finished) or ``timeout`` seconds pass; True when it finished.

        Completion is read from a file the shell's ``PROMPT_COMMAND`` rewrites at every prompt
        (host side, in the control dir): no marker is typed into the pane or shown on it. A
        program that never returns to the shell (an editor, a REPL) waits out the timeout.
        """
        before = self._prompt_mark()
        await self.send_keys(keystrokes)
        deadline = time.monotonic() + timeout
        while self.alive:
            mark = self._prompt_mark()
            if mark != before and mark.endswith(b"\n"):  # a complete, new prompt record
                return True
            if time.monotonic() >= deadline:
                return False
            await asyncio.sleep(0.02)
        return False

    async def wait(self, seconds: float) -> None:
        """Sleep, returning early if the sandbox ends."""
        deadline = time.monotonic() + seconds
        while self.alive:
            left = deadline - time.monotonic()
            if left <= 0:
                return
            await asyncio.sleep(min(left, 0.05))

    async def _capture(self, *, history: bool) -> str:
        args = ["capture-pane", "-p", "-t", self._pane]
        if history:
            args += ["-S", "-", "-J"]
        return strip_trailing_blank(await self._tmux(*args))

    async def screen(self) -> str:
        """The visible pane."""
        return await self._capture(history=False)

    async def history(self) -> str:
        """The full scrollback plus the visible pane."""
        return await self._capture(history=True)

    async def current_command(self) -> str:
        out = await self._tmux("display-message", "-p", "-t", self._pane, "#{pane_current_command}")
        return out.strip()

    async def in_progress(self, settle: float = 0.05) -> bool:
        """Is a foreground command still running, or is the screen still changing?"""
        before = await self.screen()
        if (await self.current_command()) not in SHELLS:
            return True
        await asyncio.sleep(settle)
        return (await self.screen()) != before

    async def new_output(self) -> str | None:
        """History added since the last call (None: not a continuation; show the screen)."""
        current = await self.history()
        diff = new_output(self._last_history, current)
        self._last_history = current
        return diff

    async def observe(self, mode: Literal["auto", "screen"] = "auto") -> Observation:
        """What the agent sees: new output since the last observation (or the screen), truncated.

        ``auto`` follows terminal_use / Terminus 2: the new history when it continues the last
        one seen, else the current screen. ``screen`` always shows the visible pane.
        """
        progress = await self.in_progress()
        diff = await self.new_output()
        if self.config.record_cast:
            self._cast_tick()
        if mode == "auto" and diff is not None:
            text, kind = diff, "new_output"
        else:
            text, kind = await self.screen(), "screen"
        text, omitted = truncate_middle(text, self.config.max_output_bytes)
        return Observation(
            kind=kind,  # type: ignore[arg-type]
            text=text,
            in_progress=progress,
            truncated_bytes=omitted,
        )

    # -- asciinema -------------------------------------------------------------------------
    def _cast_tick(self) -> None:
        if self.host_ctl is not None:
            self.cast_recorder.tick(self.host_ctl, "pane.raw", time.monotonic() - self.started_at)

    def flush_cast(self) -> None:
        """Read what the pane printed since the last observation into the cast's events."""
        if self.config.record_cast and self.child_pid and not self._closed:
            self._cast_tick()

    def cast(self, title: str = "") -> str:
        """The episode's pane as an asciinema cast v2 document (header line + events), at most
        ``max_cast_bytes`` of events plus a last marker (:mod:`._cast`)."""
        header: dict[str, Any] = {
            "version": 2,
            "width": self.config.width,
            "height": self.config.height,
            "timestamp": int(self.started_wall),
            "env": {"SHELL": "/bin/bash", "TERM": "tmux-256color"},
        }
        if title:
            header["title"] = title
        return self.cast_recorder.document(header, time.monotonic() - self.started_at)
