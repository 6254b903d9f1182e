"""Test helper: the real ``exploreval`` command in its own process, as a user types it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def cli(
    *args: str, cwd: Path, env: dict[str, str] | None = None, columns: int = 200
) -> subprocess.CompletedProcess[str]:
    """``exploreval ARGS...`` in ``cwd`` (a wide terminal unless ``columns`` says otherwise)."""
    return subprocess.run(
        [sys.executable, "-m", "exploreval", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
        env={**(os.environ if env is None else env), "COLUMNS": str(columns)},
    )
