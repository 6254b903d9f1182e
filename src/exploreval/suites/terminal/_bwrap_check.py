"""A minimal bubblewrap command line for checking tasks (gold passes, untouched fails, decoys fail).

One process per command, no tmux, no limits, no file-access tracing: it serves the CI checks of
the task set (``check_task``), Dockerfile ``RUN`` lines at load time, the decoy generator and
the one-shot stand-in env (``_oneshot``). Episodes run in :class:`Sandbox`. What it guarantees: all namespaces
unshared (no network), every capability dropped (as root, bwrap would otherwise keep them and a
shell could remount the system read-write), the system bound read-only, only the episode's
work-dir copy (and /tmp, /logs) writable, tests visible read-only at /tests only when asked,
and the sandbox dies with its launcher.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from exploreval.suites.terminal._contract import TerminalTask

#: Runs every ``test_*`` function of a pytest-style file without pytest (~30 ms instead of
#: ~500 ms), so thousands of decoy checks stay cheap. Built-in tests use no fixtures for this.
FAST_RUNNER = r"""
import importlib.util, os, sys, traceback
sys.path.insert(0, os.getcwd())
spec = importlib.util.spec_from_file_location("test_outputs", sys.argv[1])
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
tests = [(n, f) for n, f in vars(mod).items() if n.startswith("test_") and callable(f)]
failed = 0
for name, fn in tests:
    try:
        fn()
    except Exception:
        failed += 1
        print("FAILED", name)
        traceback.print_exc(limit=2)
    else:
        print("PASSED", name)
sys.exit(1 if failed or not tests else 0)
"""

SHIM_DIR = "/opt/exploreval/bin"
SYSTEM_PATH = f"/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin:{SHIM_DIR}"


def bwrap_available() -> bool:
    return shutil.which("bwrap") is not None


@dataclass(frozen=True)
class SandboxRun:
    returncode: int
    output: str
    timed_out: bool


def bwrap_argv(
    workdir: Path,
    *,
    mount: str = "/app",
    tests_dir: Path | None = None,
    extra_ro: dict[str, Path] | None = None,
    logs_dir: Path | None = None,
    env: dict[str, str] | None = None,
) -> list[str]:
    """The bwrap command line (without the command to run)."""
    argv = [
        "bwrap",
        "--unshare-all",
        "--cap-drop",
        "ALL",
        "--die-with-parent",
        "--new-session",
        "--clearenv",
        "--ro-bind",
        "/usr",
        "/usr",
        "--ro-bind",
        "/etc",
        "/etc",
    ]
    for link in ("bin", "lib", "lib64", "sbin"):
        target = os.readlink(f"/{link}") if os.path.islink(f"/{link}") else None
        if target is not None:
            argv += ["--symlink", target, f"/{link}"]
        elif os.path.isdir(f"/{link}"):
            argv += ["--ro-bind", f"/{link}", f"/{link}"]
    argv += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    # Images FROM python:* have `python`; Debian has only python3: a shim keeps such tasks honest.
    argv += ["--dir", SHIM_DIR, "--symlink", "/usr/bin/python3", f"{SHIM_DIR}/python"]
    argv += ["--bind", str(workdir), mount]
    if tests_dir is not None:
        argv += ["--ro-bind", str(tests_dir), "/tests"]
    if logs_dir is not None:
        argv += ["--bind", str(logs_dir), "/logs"]
    for target, source in (extra_ro or {}).items():
        argv += ["--ro-bind", str(source), target]
    base_env = {
        "PATH": SYSTEM_PATH,
        "HOME": "/tmp",
        "LANG": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        "TERM": "dumb",
    }
    for key, value in {**base_env, **(env or {})}.items():
        argv += ["--setenv", key, value]
    argv += ["--chdir", mount]
    return argv


def run_sandboxed(
    workdir: Path,
    command: str,
    *,
    mount: str = "/app",
    tests_dir: Path | None = None,
    extra_ro: dict[str, Path] | None = None,
    logs_dir: Path | None = None,
    env: dict[str, str] | None = None,
    timeout_s: float = 60.0,
) -> SandboxRun:
    """Run ``bash -c command`` in a fresh sandbox over ``workdir`` (modified in place)."""
    if not bwrap_available():
        raise RuntimeError("bubblewrap (bwrap) is not installed: apt-get install bubblewrap")
    argv = bwrap_argv(
        workdir, mount=mount, tests_dir=tests_dir, extra_ro=extra_ro, logs_dir=logs_dir, env=env
    )
    argv += ["/bin/bash", "-c", command]
    proc = subprocess.Popen(
        argv,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        out, _ = proc.communicate(timeout=timeout_s)
        return SandboxRun(proc.returncode, out.decode("utf-8", "replace"), False)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        return SandboxRun(-9, out.decode("utf-8", "replace"), True)


@dataclass(frozen=True)
class CheckResult:
    passed: bool
    solution_output: str
    test_output: str
    timed_out: bool = False


def check_task(
    task: TerminalTask,
    script: str | None,
    *,
    fast: bool = False,
    prepare: dict[str, bytes | tuple[bytes, int]] | None = None,
    timeout_s: float | None = None,
) -> CheckResult:
    """Copy the work dir, run ``script`` (None: leave it untouched), then the task's tests.

    ``fast`` runs ``tests/test_outputs.py`` with :data:`FAST_RUNNER` instead of the task's test
    command (built-in tasks only). ``prepare`` writes extra files (relative path -> bytes) into
    the copy first, e.g. injected artefacts.
    """
    if task.tests_dir is None:
        raise ValueError(f"task {task.id} has no tests to check")
    if fast and not (task.tests_dir / "test_outputs.py").is_file():
        raise ValueError(
            f"task {task.id}: the fast runner needs tests/test_outputs.py; use fast=False"
        )
    limit = timeout_s if timeout_s is not None else task.test_timeout_s
    with tempfile.TemporaryDirectory(prefix=f"exploreval-check-{task.id}-") as tmp:
        root = Path(tmp)
        work = root / "app"
        if task.workdir is None:
            raise ValueError(f"task {task.id} runs in a built image; check it through the env")
        shutil.copytree(task.workdir, work, symlinks=True)
        for rel, item in (prepare or {}).items():
            data, mode = item if isinstance(item, tuple) else (item, 0o644)
            target = work / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            target.chmod(mode)
        env = dict(task.env)
        sol_out = ""
        if script is not None:
            sol_dir = root / "solution"
            sol_dir.mkdir()
            (sol_dir / "solution.sh").write_text(script, encoding="utf-8")
            run = run_sandboxed(
                work,
                "bash /solution/solution.sh",
                mount=task.container_workdir,
                extra_ro={"/solution": sol_dir},
                env=env,
                timeout_s=limit,
            )
            sol_out = run.output
            if run.timed_out:
                return CheckResult(False, sol_out, "", timed_out=True)
        logs = root / "logs"
        (logs / "verifier").mkdir(parents=True)
        if fast:
            command = f"python3 -c {_quote(FAST_RUNNER)} /tests/test_outputs.py"
        else:
            command = task.test_command
        test = run_sandboxed(
            work,
            command,
            mount=task.container_workdir,
            tests_dir=task.tests_dir,
            logs_dir=logs,
            env=env,
            timeout_s=limit,
        )
        if test.timed_out:
            return CheckResult(False, sol_out, test.output, timed_out=True)
        if task.parser == "reward_file" and not fast:
            passed = _reward(logs / "verifier")
        else:
            passed = test.returncode == 0
        return CheckResult(passed, sol_out, test.output)


def _reward(verifier: Path) -> bool:
    txt = verifier / "reward.txt"
    if txt.is_file():
        try:
            return float(txt.read_text().strip() or "0") >= 1.0
        except ValueError:
            return False
    js = verifier / "reward.json"
    if js.is_file():
        import json

        try:
            data = json.loads(js.read_text())
        except json.JSONDecodeError:
            return False
        value = data.get("reward", 0) if isinstance(data, dict) else data
        return isinstance(value, int | float) and float(value) >= 1.0
    return False


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\"'\"'") + "'"
