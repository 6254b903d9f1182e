"""Real bwrap + tmux: isolation, I/O semantics, exec, file evidence, cast, cleanup."""

import asyncio
import json
import os
import time
from pathlib import Path

import pytest

from exploreval.suites.terminal._errors import SandboxError
from exploreval.suites.terminal._sandbox import Sandbox
from exploreval.suites.terminal._sandbox_config import SandboxConfig
from exploreval.suites.terminal._verifier import run_verifier

from .conftest import sandbox_processes


async def run(sb: Sandbox, command: str, wait: float = 0.3) -> str:
    await sb.send_keys(command + "\n", wait=wait)
    for _ in range(100):
        if not await sb.in_progress():
            break
        await asyncio.sleep(0.05)
    return await sb.history()


async def test_work_dir_is_a_fresh_copy_and_the_template_is_untouched(template: Path) -> None:
    async with await Sandbox.start(SandboxConfig(workdir_template=template)) as sb:
        text = await run(sb, "cat hello.txt; echo changed > hello.txt; pwd")
        assert "hello world" in text and "/app" in text
        assert sb.host_workdir is not None
        assert (sb.host_workdir / "hello.txt").read_text() == "changed\n"
    assert (template / "hello.txt").read_text() == "hello world\n"


async def test_escapes_fail(template: Path, tmp_path: Path) -> None:
    marker = tmp_path / "host-marker"
    async with await Sandbox.start(SandboxConfig(workdir_template=template)) as sb:
        probe = (
            "import os, socket, subprocess\n"
            "r = {}\n"
            "def attempt(name, fn):\n"
            "    try:\n"
            "        fn(); r[name] = 'ESCAPED'\n"
            "    except Exception as e:\n"
            "        r[name] = type(e).__name__\n"
            f"attempt('write_host_tmp', lambda: open('{marker}', 'w').write('x'))\n"
            "attempt('write_usr', lambda: open('/usr/escape', 'w').write('x'))\n"
            "attempt('write_etc', lambda: open('/etc/escape', 'w').write('x'))\n"
            "attempt('write_root_fs', lambda: open('/escape', 'w').write('x'))\n"
            "attempt('loopback', lambda: socket.create_connection(('127.0.0.1', 22), 1))\n"
            "attempt('outside', lambda: socket.create_connection(('1.1.1.1', 80), 1))\n"
            "attempt('dns', lambda: socket.getaddrinfo('pypi.org', 443))\n"
            "def remount():\n"
            "    p = subprocess.run(['mount', '-o', 'remount,rw', '/usr'], capture_output=True)\n"
            "    assert p.returncode == 0\n"
            "attempt('remount', remount)\n"
            "def bind():\n"
            "    p = subprocess.run(['mount', '--bind', '/tmp', '/usr'], capture_output=True)\n"
            "    assert p.returncode == 0\n"
            "attempt('bind_mount', bind)\n"
            "r['home_visible'] = os.path.exists('/work') or os.path.exists('/root/.pyenv')\n"
            "r['caps'] = [l for l in open('/proc/self/status') if l.startswith('CapEff')][0]\n"
            "r['uid'] = os.getuid()\n"
            "r['host_pids'] = len([p for p in os.listdir('/proc') if p.isdigit()])\n"
            "print('RESULT' + __import__('json').dumps(r))\n"
        )
        result = await sb.exec(["python3", "-c", probe], timeout=30)
    line = next(ln for ln in result.stdout.splitlines() if ln.startswith("RESULT"))
    report = json.loads(line[len("RESULT") :])
    escaped = [k for k, v in report.items() if v == "ESCAPED"]
    assert escaped == [], report
    assert not marker.exists()
    assert not Path("/usr/escape").exists() and not Path("/etc/escape").exists()
    assert report["home_visible"] is False
    assert report["caps"].split()[1] == "0000000000000000"
    assert report["uid"] == 0  # root inside, but a dedicated unprivileged uid on the host
    assert report["host_pids"] < 10  # own PID namespace


async def test_tests_are_invisible_until_revealed(template: Path, tmp_path: Path) -> None:
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test_secret.py").write_text("SECRET = 'xyzzy'\n")
    cfg = SandboxConfig(workdir_template=template, tests_dir=tests)
    async with await Sandbox.start(cfg) as sb:
        before = await sb.exec(
            [
                "sh",
                "-c",
                "ls -A /tests; grep -r xyzzy /app /tmp /root /tests /etc 2>/dev/null; true",
            ]
        )
        assert before.stdout.strip() == ""
        await sb.terminate()
        after = await run_verifier(
            sb,
            "cat /tests/test_secret.py; touch /tests/x",
            env={"PATH": "/usr/bin:/bin"},
            timeout=30,
        )
        assert "xyzzy" in after.stdout
        # the verifier writes to its own copy of the tests (run-tests.sh may write there);
        # the task's tests on the host stay as shipped
        assert after.returncode == 0 and "Read-only" not in after.stderr
        assert sorted(p.name for p in tests.iterdir()) == ["test_secret.py"]


async def test_special_keys_big_paste_and_new_output(template: Path) -> None:
    async with await Sandbox.start(SandboxConfig(workdir_template=template)) as sb:
        assert (await sb.new_output()) is not None  # first read: everything
        await sb.send_keys("sleep 30\n", wait=0.3)
        assert await sb.in_progress()
        await sb.send_keys("C-c", wait=0.2)
        assert not await sb.in_progress()
        await sb.new_output()
        await sb.send_keys("echo first\n", wait=0.2)
        out = await sb.new_output()
        assert out is not None and "first" in out and "sleep 30" not in out
        await sb.send_keys("echo from-history", wait=0.1)
        await sb.send_keys("C-u", wait=0.1)
        await sb.send_keys("Up", wait=0.1)  # recalls "echo first"
        await sb.send_keys("Enter", wait=0.2)
        assert (await sb.history()).count("\nfirst") == 2
        payload = "x" * 40_000
        await sb.send_keys(f"cat > big.txt <<'EOF'\n{payload}\nEOF\n", wait=1.0)
        assert sb.host_workdir is not None
        for _ in range(40):
            if (sb.host_workdir / "big.txt").exists() and len(
                (sb.host_workdir / "big.txt").read_text()
            ) == 40_001:
                break
            await asyncio.sleep(0.1)
        assert (sb.host_workdir / "big.txt").read_text() == payload + "\n"


async def test_observation_truncates_head_and_tail(template: Path) -> None:
    cfg = SandboxConfig(workdir_template=template, max_output_bytes=2_000, height=10)
    async with await Sandbox.start(cfg) as sb:
        await sb.observe()
        await sb.send_keys("seq 1 3000\n", wait=0.5)
        obs = await sb.observe()
        assert obs.kind == "new_output"
        assert obs.truncated and obs.truncated_bytes > 10_000
        assert "bytes omitted ...]" in obs.text
        assert "seq 1 3000" in obs.text.split("\n")[0]
        assert "\n3000" in obs.text
        await sb.send_keys("clear\n", wait=0.3)
        assert (await sb.observe()).kind == "screen"


async def test_exec_timeout_and_file_events(template: Path) -> None:
    async with await Sandbox.start(SandboxConfig(workdir_template=template)) as sb:
        slow = await sb.exec(["sleep", "20"], timeout=0.5)
        assert slow.timed_out and slow.duration_s < 5
        sb.file_events()
        await run(sb, "stat hello.txt > /dev/null; bash -c 'cat sub/data.csv' > /dev/null")
        events = sb.file_events()
        assert ("sub/data.csv", "open") in events
        assert not any(path == "hello.txt" for path, _ in events)  # stat opens nothing
        await run(sb, "grep -r nothing-here . ; echo new > made.txt")
        events = sb.file_events()
        assert ("hello.txt", "open") in events and ("made.txt", "create") in events


async def test_agent_exiting_the_shell_ends_the_sandbox(template: Path) -> None:
    sb = await Sandbox.start(SandboxConfig(workdir_template=template))
    try:
        await sb.send_keys("tmux kill-server\n", wait=0.5)
        for _ in range(40):
            if not sb.alive:
                break
            await asyncio.sleep(0.05)
        assert not await sb.check_alive()
        with pytest.raises(SandboxError):
            await sb.send_keys("ls\n")
    finally:
        await sb.close()
    assert sb.end_reason == "exited"


async def test_cast_is_asciinema_v2(template: Path) -> None:
    async with await Sandbox.start(SandboxConfig(workdir_template=template)) as sb:
        await sb.send_keys("echo cast-marker\n", wait=0.3)
        await sb.observe()
        cast = sb.cast(title="t")
    lines = cast.strip().split("\n")
    header = json.loads(lines[0])
    assert header["version"] == 2 and header["width"] == 160 and header["height"] == 40
    events = [json.loads(line) for line in lines[1:]]
    assert events and all(e[1] == "o" and isinstance(e[0], float) for e in events)
    assert [e[0] for e in events] == sorted(e[0] for e in events)
    assert "cast-marker" in "".join(e[2] for e in events)


async def test_close_is_idempotent_and_leaves_nothing(template: Path) -> None:
    sb = await Sandbox.start(SandboxConfig(workdir_template=template))
    await sb.send_keys("sleep 1000 & sleep 1000 &\n", wait=0.2)
    scratch = sb.scratch
    assert scratch is not None and scratch.exists()
    await sb.close()
    await sb.close()
    assert not scratch.exists()
    time.sleep(0.1)
    assert sandbox_processes() == []


async def test_cancellation_mid_step_leaves_nothing(template: Path) -> None:
    holder: dict[str, Sandbox] = {}

    async def episode() -> None:
        sb = await Sandbox.start(SandboxConfig(workdir_template=template))
        holder["sb"] = sb
        try:
            await sb.send_keys("sleep 1000\n", wait=100)
        finally:
            await sb.close()

    task = asyncio.create_task(episode())
    await asyncio.sleep(1.0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert holder["sb"].scratch is not None and not holder["sb"].scratch.exists()
    assert sandbox_processes() == []


def test_kill_9_of_the_parent_leaves_nothing(template: Path) -> None:
    import shutil
    import subprocess
    import sys
    import tempfile

    # A scratch root of its own under /tmp (always traversable by the sandbox uid), whatever
    # --basetemp pytest was given: a custom basetemp's parents may lack the others-x bit.
    scratch = Path(tempfile.mkdtemp(prefix="exploreval-kill9-"))
    scratch.chmod(0o711)
    script = (
        "import asyncio, sys\n"
        "from pathlib import Path\n"
        "from exploreval.suites.terminal._sandbox import Sandbox, SandboxConfig\n"
        "async def main():\n"
        f"    boxes = [await Sandbox.start(SandboxConfig(workdir_template=Path({str(template)!r}))) for _ in range(3)]\n"
        "    for sb in boxes:\n"
        "        await sb.send_keys('sleep 1000 &\\n', wait=0.1)\n"
        "    print('READY', *[sb._uid for sb in boxes], flush=True)\n"
        "    await asyncio.sleep(1000)\n"
        "asyncio.run(main())\n"
    )
    env = {**os.environ, "EXPLOREVAL_SCRATCH": str(scratch)}
    try:
        proc = subprocess.Popen(
            [sys.executable, "-c", script], stdout=subprocess.PIPE, env=env, text=True
        )
        assert proc.stdout is not None
        ready, *uid_words = proc.stdout.readline().split()
        assert ready == "READY"
        uids = {int(u) for u in uid_words}
        assert len(uids) == 3
        assert len(sandbox_processes(uids)) >= 9
        assert any(scratch.glob("exploreval-scratch-*/terminal-*"))
        proc.kill()
        proc.wait()
        for _ in range(100):
            if not sandbox_processes(uids) and not any(scratch.glob("exploreval-scratch-*")):
                break
            time.sleep(0.05)
        assert sandbox_processes(uids) == []
        assert not any(scratch.glob("exploreval-scratch-*"))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def test_a_sandbox_outlives_the_thread_that_started_it(template: Path) -> None:
    """bwrap's --die-with-parent follows the *thread* that forked it (issue 24's pitfall, here for
    the sandbox): a sandbox started in an event loop on a short-lived thread must stay up after
    that thread ends, until it is closed."""
    import threading

    box: dict[str, Sandbox] = {}

    def start() -> None:
        box["sb"] = asyncio.run(Sandbox.start(SandboxConfig(workdir_template=template)))

    worker = threading.Thread(target=start)
    worker.start()
    worker.join()
    sb = box["sb"]

    async def use() -> str:
        await asyncio.sleep(0.5)
        try:
            assert sb._bwrap_running(), "the sandbox died with the thread that started it"
            return (await sb.exec(["cat", "hello.txt"])).stdout
        finally:
            await sb.close()

    assert asyncio.run(use()).strip() == "hello world"
