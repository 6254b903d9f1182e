"""The file-access trace (``_trace``) on a real file system: judged at the moment of use.

Each case mounts a fresh tmpfs, watches it, and runs real processes against it. What the
audit later decides rests on facts pinned here: what a file held is read through the inode
that was opened, an open followed by a change is marked as unnameable, and a write is seen
when it happens, not when the file is closed.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from exploreval.suites.terminal._trace import EXEC, OPEN, WRITE, FileTracer, Trace

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="fanotify is Linux's")


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[Path]:
    target = tmp_path / "disk"
    target.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(target)], check=True)
    try:
        yield target
    finally:
        subprocess.run(["umount", "-l", str(target)], check=False)


def _traced(disk: Path, interesting: set[tuple[int, int]], script: str) -> Trace:
    tracer = FileTracer(interesting=interesting)
    tracer.mark(disk)
    tracer.start()
    try:
        subprocess.run([sys.executable, "-c", script], check=True, timeout=60)
        time.sleep(0.1)
    finally:
        trace = tracer.stop()
    return trace


def test_a_file_changed_after_it_was_opened_is_marked_so_its_capture_is_never_trusted(
    disk: Path,
) -> None:
    """A ``.pth``-like file whose code turns it into a comment once it ran: the host reads it
    after the opener did, so the open is marked ``rewritten``, whatever the host read."""
    hook = disk / "hook.pth"
    hook.write_text("import forcer\n")
    st = hook.stat()
    script = (
        f"data = open({str(hook)!r}).read()\n"
        f"assert data == 'import forcer\\n'\n"
        f"open({str(hook)!r}, 'w').write('# nothing\\n')\n"
        f"open({str(hook)!r}).read()\n"
    )
    trace = _traced(disk, {(st.st_dev, st.st_ino)}, script)
    opens = [e for e in trace.events if e.path == str(hook) and e.kind & OPEN]
    assert opens and opens[0].rewritten and opens[0].argv[0] == sys.executable
    # the kernel may merge the opens and the write into one event: then that one is unsure too;
    # what is never there is a trusted record of the first form
    assert all(e.rewritten for e in opens if e.head != b"# nothing\n")
    assert any(e.kind & WRITE for e in trace.events if e.path == str(hook))


def test_what_an_open_read_is_named_by_its_inode_though_the_name_is_replaced(disk: Path) -> None:
    """The host reads through the event's own descriptor: a file renamed over the opened one
    afterwards (a new inode) changes nothing of what the open is recorded to have read."""
    hook = disk / "hook.pth"
    hook.write_text("import forcer\n")
    st = hook.stat()
    script = (
        f"import os\nopen({str(hook)!r}).read()\n"
        f"open({str(disk / 'new')!r}, 'w').write('# genuine\\n')\n"
        f"os.replace({str(disk / 'new')!r}, {str(hook)!r})\n"
    )
    trace = _traced(disk, {(st.st_dev, st.st_ino)}, script)
    opens = [e for e in trace.events if (e.dev, e.ino) == (st.st_dev, st.st_ino) and e.kind & OPEN]
    assert [(e.head, e.rewritten) for e in opens] == [(b"import forcer\n", False)]
    assert opens[0].digest.startswith("sha256=")


def test_a_write_is_seen_while_the_writer_keeps_the_file_open(disk: Path) -> None:
    """The writer appends and keeps its descriptor open while another process reads: the write
    is in the trace before that read (only closes were traced before)."""
    module = disk / "module.py"
    module.write_text("x = 1\n")
    script = (
        "import subprocess, sys\n"
        f"fh = open({str(module)!r}, 'a')\n"
        "fh.write('y = 2\\n'); fh.flush()\n"
        f"subprocess.run([sys.executable, '-c', {f'open({str(module)!r}).read()'!r}], check=True)\n"
        "fh.close()\n"
    )
    trace = _traced(disk, set(), script)
    events = [e for e in trace.events if e.path == str(module)]
    first_write = next(e for e in events if e.kind & WRITE)
    reader_open = [e for e in events if e.kind & OPEN and e.seq > first_write.seq]
    assert reader_open, [(e.kind, e.pid) for e in events]
    # the reader's open came after the write: its content was captured, with the append
    assert reader_open[-1].head == b"x = 1\ny = 2\n"


def test_executions_and_directory_listings_are_recorded(disk: Path) -> None:
    program = disk / "prog.sh"
    program.write_text("#!/bin/sh\nexit 0\n")
    program.chmod(0o755)
    (disk / "conf.d").mkdir()
    script = f"import os, subprocess\nsubprocess.run([{str(program)!r}])\nos.listdir({str(disk / 'conf.d')!r})\n"
    trace = _traced(disk, set(), script)
    assert any(e.path == str(program) and e.kind & EXEC for e in trace.events)
    assert any(e.path == str(disk / "conf.d") and e.kind == 8 for e in trace.events)
