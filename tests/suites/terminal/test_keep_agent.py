"""``agent_processes=keep`` (Terminal-Bench's semantics): a server the agent started answers the
tests, and still reaches nothing the verdict is made of.

A small server task is written here (the agent serves a greeting on a port; the tests fetch it),
run in a real sandbox as an agent would (keystrokes in its pane), then verified both ways.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from exploreval.suites.terminal._sandbox import Sandbox
from exploreval.suites.terminal._sandbox_config import SandboxConfig
from exploreval.suites.terminal._verify import verify

from .conftest import sandbox_processes

PORT = 18765
TEST = f"""\
import urllib.request


def test_the_server_answers():
    with urllib.request.urlopen("http://127.0.0.1:{PORT}/greeting.txt", timeout=5) as response:
        assert response.read().decode().strip() == "hello from the agent"
"""
COMMAND = 'exec python3 -m pytest -q -rA -p no:cacheprovider "$TEST_DIR/test_outputs.py"'
SERVE = (
    "echo 'hello from the agent' > greeting.txt && "
    f"(nohup setsid python3 -m http.server {PORT} --bind 127.0.0.1 >/dev/null 2>&1 &)"
)


@pytest.fixture
def server_task(tmp_path: Path) -> SandboxConfig:
    workdir = tmp_path / "app"
    workdir.mkdir()
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test_outputs.py").write_text(TEST)
    return SandboxConfig(
        workdir_template=workdir, tests_dir=tests, env={"TEST_DIR": "/tests"}, workdir="/app"
    )


async def _serve(sb: Sandbox, *extra: str) -> None:
    for command in (SERVE, *extra):
        await sb.send_keys(command + "\n", wait=0.3)
    for _ in range(50):  # the server is listening once it answers inside the sandbox
        probe = await sb.exec(
            ["python3", "-c", f"import socket; socket.create_connection(('127.0.0.1', {PORT}), 1)"]
        )
        if probe.returncode == 0:
            return
        await asyncio.sleep(0.1)
    raise AssertionError("the agent's server never listened")


def _servers() -> list[int]:
    out = []
    for pid in sandbox_processes():
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if b"http.server" in cmdline:
            out.append(pid)
    return out


async def test_a_kept_server_answers_the_tests_and_ends_after_them(
    server_task: SandboxConfig,
) -> None:
    async with await Sandbox.start(server_task) as sb:
        await _serve(sb)
        result = await verify(sb, COMMAND, parser="pytest", env={"TEST_DIR": "/tests"},
                              keep_agent=True)  # fmt: skip
        assert sb.terminated
    assert result.resolved, result.reasons
    assert result.agent_kept is True and result.agent_ports == []
    assert _servers() == []


async def test_by_default_the_server_is_gone_and_the_task_fails(server_task: SandboxConfig) -> None:
    """The control: the same episode under the default (``kill``) does not resolve, so the
    test above shows the kept processes are what answered."""
    async with await Sandbox.start(server_task) as sb:
        await _serve(sb)
        result = await verify(sb, COMMAND, parser="pytest", env={"TEST_DIR": "/tests"})
    assert result.resolved is False
    assert result.agent_kept is False
    assert any("failed" in r or "passed" in r or "test" in r for r in result.reasons)
    # issue 43: the failure is traced to the server the agent left, and the fix is named
    assert result.agent_ports == [PORT]
    hint = next(r for r in result.reasons if "agent_processes=keep" in r)
    assert f"could not connect on port {PORT}" in hint


def test_the_server_hint_needs_a_refusal_naming_a_port_the_agent_listened_on() -> None:
    from exploreval.suites.terminal._verify import agent_server_hint

    refused = "E   urllib.error.URLError: <urlopen error [Errno 111] Connection refused>\n"
    url = f"    urlopen('http://127.0.0.1:{PORT}/x')\n"
    assert agent_server_hint(url + refused, [PORT]) is not None
    assert agent_server_hint(url + refused, []) is None  # the agent served nothing
    assert agent_server_hint(url + "AssertionError: 1 != 2\n", [PORT]) is None  # not refused
    assert agent_server_hint(refused + "port 8080\n", [PORT]) is None  # another port
    assert agent_server_hint(refused + f"port {PORT}1\n", [PORT]) is None  # digits go on
    curl = f"curl: (7) Failed to connect to localhost port {PORT} after 0 ms"
    assert agent_server_hint(curl, [22, PORT]) is not None
    # terminal-bench-core's jupyter-notebook-server asserts it itself (connect_ex, no errno)
    own = f"E       AssertionError: Jupyter server is not running on port {PORT}\n"
    assert agent_server_hint(own, [PORT]) is not None
    assert agent_server_hint(own.replace("not ", ""), [PORT]) is None


async def test_kept_processes_cannot_see_the_tests_or_the_verifier(
    server_task: SandboxConfig,
) -> None:
    """A kept process watches for /tests and for pytest among the processes it can see, writing
    what it finds to the shared work dir: it finds nothing (other PID and mount namespaces),
    while the tests it could not see still pass. (Its own command line names the pattern as
    ``py[t]est`` so it never finds itself.)"""
    spy = (
        "(nohup setsid sh -c 'while :; do echo tick >> /app/seen.txt; ls /tests >> /app/seen.txt 2>/dev/null; "
        'for p in /proc/[0-9]*; do tr "\\0" " " < $p/cmdline 2>/dev/null | grep -q "py[t]est" '
        '&& echo "found $p" >> /app/seen.txt; done; sleep 0.02; done\' >/dev/null 2>&1 &)'
    )
    async with await Sandbox.start(server_task) as sb:
        await _serve(sb, spy)
        await asyncio.sleep(0.3)
        result = await verify(sb, COMMAND, parser="pytest", env={"TEST_DIR": "/tests"},
                              keep_agent=True)  # fmt: skip
        assert sb.host_workdir is not None
        seen = sb.host_workdir / "seen.txt"
        seen_text = seen.read_text() if seen.exists() else ""
    assert result.resolved, result.reasons
    assert seen_text.count("tick") > 5  # it was watching all along
    assert "test_outputs" not in seen_text and "found" not in seen_text


async def test_a_conftest_planted_while_the_tests_run_is_never_loaded(
    server_task: SandboxConfig,
) -> None:
    """The kept processes share the files: one waits for the tests' first request to its
    server, then drops a conftest that would pass every test (and a pytest.ini naming it) into
    the work dir. The tests' configuration is pinned to /tests, so pytest never reads either:
    the server's wrong answer fails its test, as shipped."""
    (server_task.tests_dir / "test_outputs.py").write_text(
        TEST + "\n\ndef test_zz_linger():\n    import time\n    time.sleep(1.5)\n"
    )
    serve_logged = SERVE.replace("hello from the agent", "wrong greeting").replace(
        ">/dev/null 2>&1", ">/dev/null 2>/tmp/access.log"
    )
    forcing = (
        "import pytest\\n@pytest.hookimpl(hookwrapper=True)\\n"
        "def pytest_runtest_makereport(item, call):\\n    o = yield\\n"
        '    o.get_result().outcome = \\"passed\\"\\n'
    )
    plant = (
        "(nohup setsid sh -c 'until grep -q greeting /tmp/access.log 2>/dev/null; do sleep 0.01;"
        f' done; printf "{forcing}" > /app/conftest.py; printf "[pytest]\\n" > /app/pytest.ini\''
        " >/dev/null 2>&1 &)"
    )
    async with await Sandbox.start(server_task) as sb:
        for command in (serve_logged, plant):
            await sb.send_keys(command + "\n", wait=0.3)
        await asyncio.sleep(0.5)
        result = await verify(sb, COMMAND, parser="pytest", env={"TEST_DIR": "/tests"},
                              keep_agent=True)  # fmt: skip
        assert sb.host_workdir is not None
        planted = (sb.host_workdir / "conftest.py").read_text()
    assert "outcome" in planted  # the plant landed while the tests ran...
    outcomes = {t.name.rsplit("::", 1)[1]: t.outcome for t in result.tests}
    assert outcomes == {"test_the_server_answers": "failed", "test_zz_linger": "passed"}
    assert result.resolved is False  # ...and shaped nothing
    assert result.audit is not None and result.audit.sessions[0].conftests == []


async def test_tests_may_write_in_their_own_directory_as_in_a_container(tmp_path: Path) -> None:
    """Terminal-Bench tests build in /tests (``cd /tests && python setup.py build_ext
    --inplace``): the verifier's copy is writable, and the task's own files stay untouched."""
    workdir = tmp_path / "app"
    workdir.mkdir()
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test_outputs.py").write_text(
        "import pathlib\n\n\ndef test_builds_in_place():\n"
        "    pathlib.Path('/tests/built.txt').write_text('ok')\n"
        "    assert pathlib.Path('/tests/built.txt').read_text() == 'ok'\n"
    )
    before = sorted(p.name for p in tests.iterdir())
    config = SandboxConfig(workdir_template=workdir, tests_dir=tests, env={"TEST_DIR": "/tests"},
                           workdir="/app")  # fmt: skip
    async with await Sandbox.start(config) as sb:
        result = await verify(sb, COMMAND, parser="pytest", env={"TEST_DIR": "/tests"})
    assert result.resolved, result.reasons + [result.output[-800:]]
    assert sorted(p.name for p in tests.iterdir()) == before
