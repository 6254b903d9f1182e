import atexit
import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from exploreval.suites.terminal._limits import LEASED_UIDS

# Materialised work-dir templates go to a throwaway cache, not the user's ~/.cache.
_CACHE = tempfile.mkdtemp(prefix="exploreval-terminal-cache-")
os.environ.setdefault("EXPLOREVAL_TERMINAL_CACHE", _CACHE)
atexit.register(shutil.rmtree, _CACHE, True)


def sandbox_processes(uids: set[int] | None = None) -> list[int]:
    """Host pids running under a sandbox uid this test process leased (none may survive a
    test), or under ``uids``. Other processes on the machine may run sandboxes of their own
    in the same uid range: they are not ours to count."""
    watched = LEASED_UIDS if uids is None else uids
    pids = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                uid = os.stat(entry.path).st_uid
                with open(f"{entry.path}/stat", "rb") as fh:
                    fields = fh.read().rsplit(b")", 1)[1].split()
            except (FileNotFoundError, ProcessLookupError):
                continue
            # A zombie handed to the machine's PID 1 is dead; reaping it is that init's job
            # (some container inits never reap). Anything else is a survivor.
            if fields[0] == b"Z" and fields[1] == b"1":
                continue
            if uid in watched:
                pids.append(int(entry.name))
    return pids


@pytest.fixture
def template(tmp_path: Path) -> Path:
    root = tmp_path / "template"
    root.mkdir()
    (root / "hello.txt").write_text("hello world\n")
    (root / "sub").mkdir()
    (root / "sub" / "data.csv").write_text("a,b\n1,2\n")
    return root


@pytest.fixture(scope="session")
def builtin():
    from exploreval.suites.terminal._builtin import builtin_tasks

    return builtin_tasks()


@contextlib.contextmanager
def local_registry(root: Path) -> Iterator[tuple[str, Callable[..., None]]]:
    """Debian's docker-registry serving from ``root`` on a free loopback port, up and answering:
    yields its ``host:port`` and ``umoci(*args)`` for making images in ``root/layout``."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    (root / "config.yml").write_text(
        f"version: 0.1\nstorage:\n  filesystem:\n    rootdirectory: {root}/data\n"
        f"http:\n  addr: 127.0.0.1:{port}\n"
    )
    server = subprocess.Popen(["docker-registry", "serve", str(root / "config.yml")],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip

    def umoci(*args: str) -> None:
        subprocess.run(["umoci", *args], check=True, capture_output=True)

    try:
        for _ in range(100):
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.05)
        umoci("init", "--layout", f"{root}/layout")
        yield f"127.0.0.1:{port}", umoci
    finally:
        server.kill()
        server.wait()
