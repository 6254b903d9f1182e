"""The episode's asciinema cast, built from the pane's recording within a byte budget.

tmux's ``pipe-pane`` appends every byte the pane's programs print to a file in the control dir
(on the episode's disk). The host reads what is new at each observation and stamps it. What the
agent prints is unbounded, and bytes a terminal never shows cost the most once stored: a
``cat`` of a 64 MB sparse file became a 366 MB cast, each NUL written as ``"\\u0000"`` (6
bytes), and several times that in this process's memory while the cast was built. So:

* NULs, which a terminal does not display, are dropped before anything is stored;
* each read takes at most :data:`READ_BYTES` of the recording; what lies beyond is skipped
  (never read), counted, and marked in the cast where it happened;
* what is kept is charged at its *encoded* size (the JSON line it becomes, escapes included),
  against ``max_bytes`` for the whole cast: once that is spent, nothing more is read and the
  cast ends with one marker event, ``[exploreval: N bytes of output not recorded]``. The cast
  file is therefore at most ``max_bytes`` plus its header and that last marker.
"""

from __future__ import annotations

import codecs
import json
import os
import stat
from pathlib import Path
from typing import Any

#: The most of the recording read in one observation (the rest of a burst is skipped).
READ_BYTES = 1_000_000
#: The cast's budget when none is given (env option ``max_cast_bytes``).
DEFAULT_MAX_CAST_BYTES = 4_000_000
#: Room kept in the budget for a skip marker (its event line is shorter than this).
_MARKER_ROOM = 120


def marker(skipped: int) -> str:
    """The text of the event that stands for ``skipped`` bytes of output not recorded."""
    return f"\r\n[exploreval: {skipped} bytes of output not recorded]\r\n"


def _line(t: float, text: str) -> str:
    """One event line; ``text`` holds undecodable bytes as lone surrogates (shown as U+FFFD)."""
    shown = text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return json.dumps([round(t, 6), "o", shown], ensure_ascii=False)


def _cost(line: str) -> int:
    return len(line.encode()) + 1  # the line and its newline


class CastRecorder:
    """Reads the pane's recording into cast events, the cast at most ``max_bytes``."""

    def __init__(self, max_bytes: int = DEFAULT_MAX_CAST_BYTES) -> None:
        self.max_bytes = max(max_bytes, 4 * _MARKER_ROOM)
        #: The event lines kept (JSON, one per line of the cast after its header).
        self.lines: list[str] = []
        #: Bytes of the cast's events so far (each line and its newline).
        self.size = 0
        #: Bytes of the recording not recorded (skipped past a read, or past the budget).
        self.skipped = 0
        #: NULs dropped (never displayed, never stored).
        self.nuls = 0
        #: How far the recording has been consumed (read or skipped).
        self.offset = 0
        #: The budget is spent: nothing more is read.
        self.full = False
        self._tail = 0  # skipped once the budget was spent: the final marker's count
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="surrogateescape")

    def _room(self) -> int:
        return self.max_bytes - _MARKER_ROOM - self.size

    def _add(self, line: str) -> bool:
        cost = _cost(line)
        if cost > self._room():
            return False
        self.lines.append(line)
        self.size += cost
        return True

    def _fit(self, t: float, text: str) -> int:
        """Keep the longest head of ``text`` whose event fits the budget; its length."""
        if self._add(_line(t, text)):
            return len(text)
        low, high = 0, min(len(text), self._room())  # a character costs at least a byte
        while low < high:
            mid = (low + high + 1) // 2
            if _cost(_line(t, text[:mid])) <= self._room():
                low = mid
            else:
                high = mid - 1
        if low:
            self._add(_line(t, text[:low]))
        return low

    def _lose(self, count: int) -> None:
        self.skipped += count
        self._tail += count

    def tick(self, directory: Path, name: str, t: float) -> None:
        """Read what the recording gained since the last tick (``t``: seconds since start)."""
        fd = _open_plain(directory, name)
        if fd is None:
            return
        try:
            pending = os.fstat(fd).st_size - self.offset
            if pending <= 0:
                return
            if self.full:  # counted, never read
                self.offset += pending
                self._lose(pending)
                return
            data = os.pread(fd, min(pending, READ_BYTES), self.offset)
        except OSError:
            return
        finally:
            os.close(fd)
        beyond = pending - len(data)
        self.offset += pending  # what lies beyond one read is skipped, never read
        visible = data.replace(b"\0", b"")
        self.nuls += len(data) - len(visible)
        text = self._decoder.decode(visible)
        kept = self._fit(t, text) if text else 0
        if kept < len(text):  # the budget is spent: the rest of this read and all that follows
            self.full = True
            self._lose(len(text[kept:].encode("utf-8", "surrogateescape")) + beyond)
        elif beyond:  # a burst longer than one read: its rest is skipped, and marked here
            self.skipped += beyond
            self._decoder.reset()
            if not self._add(_line(t, marker(beyond))):
                self.full = True
                self._tail += beyond

    def document(self, header: dict[str, Any], end: float) -> str:
        """The cast: ``header``, the events kept, and a last marker if the budget ran out."""
        lines = [json.dumps(header), *self.lines]
        if self._tail:
            lines.append(_line(end, marker(self._tail)))
        return "\n".join(lines) + "\n"


def _open_plain(directory: Path, name: str) -> int | None:
    """``directory/name`` opened without following a link, a regular file only (the agent
    writes the control dir: a link to a host file or a FIFO there is never followed or opened
    for real); None when absent or not a plain file."""
    try:
        dir_fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        fd = os.open(
            name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd
        )
    except OSError:
        return None
    finally:
        os.close(dir_fd)
    try:
        if stat.S_ISREG(os.fstat(fd).st_mode):
            return fd
    except OSError:
        pass
    os.close(fd)
    return None
