"""Atomic writes: what a crash in the middle of one leaves, and who cleans it up."""

from __future__ import annotations

from pathlib import Path


def test_a_temp_file_left_by_a_killed_writer_is_swept_by_the_next_write(tmp_path: Path) -> None:
    """Issue 21: each kill -9 during a Parquet or report write left a hidden temp file that
    nothing removed. A real writer process is killed mid-write; the next write removes its file,
    never a live writer's."""
    import signal
    import subprocess
    import sys
    import time

    from exploreval.core import write_atomic, write_text_atomic

    target = tmp_path / "results.parquet"
    code = (
        "import sys, time\n"
        "from pathlib import Path\n"
        "from exploreval.core import write_atomic\n"
        "def slow(tmp):\n"
        "    tmp.write_bytes(b'x' * 1000)\n"
        "    print('writing', flush=True)\n"
        "    time.sleep(60)\n"
        f"write_atomic(Path({str(target)!r}), slow)\n"
    )
    writer = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert writer.stdout is not None and writer.stdout.readline().strip() == "writing"
    writer.send_signal(signal.SIGKILL)
    writer.wait()
    stale = list(tmp_path.glob(".results.parquet.*.tmp"))
    assert len(stale) == 1 and str(writer.pid) in stale[0].name
    # a live writer's temp file (this process is alive) must survive the sweep
    live = tmp_path / f".results.parquet.{__import__('os').getpid()}.abcd1234.tmp"
    live.write_bytes(b"in progress")
    time.sleep(0.01)
    write_text_atomic(target, "new")
    assert target.read_text() == "new"
    assert not stale[0].exists() and live.exists()
    write_atomic(target, lambda tmp: tmp.write_text("again"))
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([live.name, target.name])
