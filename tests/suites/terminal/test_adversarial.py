"""The agent under test attacks the harness (issue 17): each attack fails to escape or to resolve.

Every case runs a real sandbox over a real task, acts as an agent would (keystrokes in its pane),
then verifies through the real sequence. The controls (the gold solution still resolves under
the same hardening) are in test_reward_hacks.py and here.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import uuid
from pathlib import Path

import pytest

from exploreval.core import scratch_root
from exploreval.suites.terminal._builtin import builtin_task
from exploreval.suites.terminal._errors import SandboxError
from exploreval.suites.terminal._sandbox import Sandbox
from exploreval.suites.terminal._sandbox_config import SandboxConfig
from exploreval.suites.terminal._verifier import run_verifier
from exploreval.suites.terminal._verify import verify

from .conftest import sandbox_processes

UNTOUCHED = "csv-region-totals"  # its untouched work dir fails its tests
SWE = "swe-leap-years"  # its tests import the code under test


def _config(task_id: str, **extra: object) -> tuple[SandboxConfig, object]:
    task = builtin_task(task_id)
    config = SandboxConfig(
        workdir_template=task.workdir,
        tests_dir=task.tests_dir,
        env=dict(task.env),
        workdir=task.container_workdir,
        **extra,  # type: ignore[arg-type]
    )
    return config, task


async def _type(sb: Sandbox, *commands: str, wait: float = 0.2) -> None:
    for command in commands:
        await sb.send_keys(command + "\n", wait=wait)


async def test_tmux_hooks_set_inside_never_act_on_the_host(tmp_path: Path) -> None:
    """The agent owns its tmux server: hooks that save a buffer to a path, load a file into a
    buffer or run a shell command fire on the harness's next client command (issue 17: a host
    file was written and a host-only file read back). The harness's clients run inside the
    sandbox, so every such act lands there: no host file is written, and a host-only file is
    never read back. (A failing hook may fail the harness's command: the agent only breaks its
    own terminal, which the env reports.)"""
    marker = Path("/tmp") / f"exploreval-pwned-{uuid.uuid4().hex}"
    secret = tmp_path / "host-only-secret"
    secret.write_text("HOST-ONLY-" + uuid.uuid4().hex)
    sock = "/tmp/.exploreval/tmux.sock"
    config, _ = _config(UNTOUCHED)
    async with await Sandbox.start(config) as sb:
        await _type(
            sb,
            f"tmux -S {sock} set-buffer planted-buffer",
            f"tmux -S {sock} set-hook -g after-send-keys 'save-buffer -a {marker}'",
            f"tmux -S {sock} set-hook -g after-capture-pane 'save-buffer -a {marker}'",
            f"tmux -S {sock} set-hook -g after-list-panes 'run-shell \"touch {marker}.run\"'",
            f"tmux -S {sock} set-hook -g after-display-message 'load-buffer -b leak {secret}'",
        )
        for _ in range(3):  # harness activity that fires every hook
            with contextlib.suppress(SandboxError):
                await sb.observe()
            with contextlib.suppress(SandboxError):
                await sb.send_keys("echo still-here\n", wait=0.2)
            with contextlib.suppress(SandboxError):
                await sb.check_alive()
        inside = await sb.exec(
            ["sh", "-c", f"ls {marker} {marker}.run; tmux -S {sock} show-buffer -b leak; true"]
        )
        with contextlib.suppress(SandboxError):
            screen = await sb.history()
    assert not marker.exists() and not Path(f"{marker}.run").exists(), "a hook wrote on the host"
    assert secret.read_text() not in inside.stdout + inside.stderr + screen
    # the hooks did fire, inside the sandbox (so the test exercises what it claims)
    assert f"{marker}\n" in inside.stdout and f"{marker}.run" in inside.stdout


async def test_processes_left_by_the_agent_are_gone_before_the_tests_are_revealed() -> None:
    """A background process waits for /tests, steals the hidden tests and writes the answer they
    check, and would ptrace the verifier: it is killed with the agent's PID namespace before the
    fresh verification sandbox exists; the untouched task stays failed."""
    config, task = _config(UNTOUCHED)
    async with await Sandbox.start(config) as sb:
        await _type(
            sb,
            "mkdir -p /tmp/stolen",
            "nohup setsid sh -c 'while :; do if [ -d /tests ]; then cp -r /tests /tmp/stolen/; "
            'python3 -c "import pathlib; pathlib.Path(\\"/app/region_totals.csv\\").write_text('
            '\\"forged\\")"; fi; for p in /proc/[0-9]*; do cat $p/cmdline 2>/dev/null | '
            "grep -q pytest && kill -STOP ${p#/proc/} 2>/dev/null; done; sleep 0.01; done' "
            ">/dev/null 2>&1 &",
            "disown -a",
        )
        await asyncio.sleep(0.5)
        assert any("while :" in c for c in _cmdlines(sandbox_processes()))
        result = await verify(sb, task.test_command, parser=task.parser, env=dict(task.env))
        assert sb.terminated
        survivors = [c for c in _cmdlines(sandbox_processes()) if "while :" in c]
        ps = await run_verifier(sb, "ps -eo args", env={"PATH": "/usr/bin:/bin"}, timeout=20)
    assert result.resolved is False and result.sessions == 1
    assert survivors == []
    assert "while :" not in ps.stdout and "sleep 0.01" not in ps.stdout


async def test_a_fake_pytest_summary_printed_at_exit_does_not_resolve() -> None:
    """Code under test registers an exit handler printing a passing pytest summary (and a
    PASSED line per hidden test) to stderr, while the real tests fail: stdout and stderr never
    decide; the results channel and pytest's exit status do."""
    config, task = _config(SWE)
    fake = (
        "import atexit, sys\n"
        "def _fake():\n"
        "    print('=' * 20 + ' short test summary info ' + '=' * 20, file=sys.stderr)\n"
        "    print('PASSED ../tests/test_outputs.py::test_rules', file=sys.stderr)\n"
        "    print('PASSED ../tests/test_outputs.py::test_days', file=sys.stderr)\n"
        "    print('=' * 20 + ' 2 passed in 0.01s ' + '=' * 20, file=sys.stderr)\n"
        "atexit.register(_fake)\n"
    )
    async with await Sandbox.start(config) as sb:
        assert sb.host_workdir is not None
        module = sb.host_workdir / "calendar_tools" / "__init__.py"
        await _type(sb, f"printf '%s' {_shell_quote(fake)} >> calendar_tools/__init__.py")
        await asyncio.sleep(0.3)
        assert "atexit" in module.read_text()
        result = await verify(sb, task.test_command, parser=task.parser, env=dict(task.env))
    assert "2 passed" in result.output  # the forgery was printed...
    assert result.resolved is False  # ...and ignored
    assert any("exited with status" in r for r in result.reasons)


def _cmdlines(pids: list[int]) -> list[str]:
    out = []
    for pid in pids:
        with contextlib.suppress(OSError):
            out.append(Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode())
    return out


def _shell_quote(text: str) -> str:
    import shlex

    return shlex.quote(text)


async def test_the_mount_table_shows_no_host_scratch_path() -> None:
    config, _ = _config(UNTOUCHED)
    root = str(scratch_root())
    async with await Sandbox.start(config) as sb:
        table = (await sb.exec(["cat", "/proc/self/mountinfo"])).stdout
    assert table.strip()
    assert root not in table and "exploreval-scratch" not in table and str(os.getpid()) not in table
    # what it does show: the quota disk's own directories, never where they live on the host
    assert " /app " in table and " /tmp " in table


async def test_links_and_fifos_in_the_control_dir_are_never_followed_by_the_host() -> None:
    """The host reads the prompt marker and the pane recording from a directory the agent can
    write: a symbolic link to a host file or a FIFO there is not followed or opened."""
    config, _ = _config(UNTOUCHED)
    async with await Sandbox.start(config) as sb:
        await _type(
            sb,
            "rm -f /tmp/.exploreval/pane.raw && ln -s /etc/shadow /tmp/.exploreval/pane.raw",
            "rm -f /tmp/.exploreval/prompt && mkfifo /tmp/.exploreval/prompt",
        )
        await asyncio.sleep(0.3)
        started = asyncio.get_running_loop().time()
        assert sb._prompt_mark() == b""  # a FIFO: not opened (it would block)
        assert asyncio.get_running_loop().time() - started < 1.0
        sb.flush_cast()
        cast = sb.cast()
    shadow = Path("/etc/shadow")
    if shadow.exists():
        first = shadow.read_text().splitlines()[0]
        assert first not in cast


async def test_the_gold_solution_resolves_under_the_same_sequence() -> None:
    config, task = _config(SWE)
    async with await Sandbox.start(config) as sb:
        await sb.run_blocking(f"bash <<'EOF'\n{task.solution}EOF\n", timeout=30)
        result = await verify(sb, task.test_command, parser=task.parser, env=dict(task.env))
    assert result.resolved is True, result.reasons
    assert result.sessions == 1 and {t.outcome for t in result.tests} == {"passed"}


#: Files that would make every test pass if the test tools ran them (pytest replaced, a forcing
#: conftest, a start-up hook): planted in the work dir of a task whose tests fail honestly.
FORCING = {
    "pytest.py": "import sys\nprint('PASSED everything')\nsys.exit(0)\n",
    "conftest.py": (
        "import pytest\n\n\n@pytest.hookimpl(hookwrapper=True)\n"
        "def pytest_runtest_makereport(item, call):\n    outcome = yield\n"
        "    outcome.get_result().outcome = 'passed'\n"
    ),
    "sitecustomize.py": "import os\nos._exit(0)\n",
}


@pytest.mark.parametrize("name", list(FORCING))
async def test_files_that_would_shadow_the_test_tools_are_never_run(name: str) -> None:
    """The verifier's construction never reads them (pytest pinned to /tests, the work dir last
    on sys.path, its own sitecustomize first): the untouched task's tests fail as shipped, and
    the gold solution beside the same file still resolves (an inert file is not held against an
    agent)."""
    config, task = _config(UNTOUCHED)
    async with await Sandbox.start(config) as sb:
        assert sb.host_workdir is not None
        (sb.host_workdir / name).write_text(FORCING[name])
        result = await verify(sb, task.test_command, parser=task.parser, env=dict(task.env),
                              template=task.workdir)  # fmt: skip
    assert result.resolved is False
    assert result.tests and {t.outcome for t in result.tests} == {"failed"}
    config, task = _config(SWE)
    async with await Sandbox.start(config) as sb:
        await sb.run_blocking(f"bash <<'EOF'\n{task.solution}EOF\n", timeout=30)
        assert sb.host_workdir is not None
        (sb.host_workdir / name).write_text(FORCING[name])
        gold = await verify(sb, task.test_command, parser=task.parser, env=dict(task.env),
                            template=task.workdir)  # fmt: skip
    assert gold.resolved is True, gold.reasons
    assert gold.audit is not None and gold.audit.sessions[0].conftests == []


# -- in a built image (the real Harbor hello-world task, its python:3.11-slim image) --------------
HARBOR_HELLO = (
    Path(__file__).parents[2] / "fixtures" / "terminal" / "real" / "harbor" / "hello-world"
)


async def _image_sandbox(**extra: object) -> tuple[Sandbox, object, object]:
    from exploreval.suites.terminal._image import build_image
    from exploreval.suites.terminal._image_recipe import BuildRecipe
    from exploreval.suites.terminal._tasks import load_task

    task = load_task(HARBOR_HELLO, image="build")
    assert task.image is not None
    image = await asyncio.to_thread(build_image, BuildRecipe(**task.image.model_dump()))
    config = SandboxConfig(image=image.rootfs, workdir=task.container_workdir,
                           tests_dir=task.tests_dir, env=image.env, logs_dir=True,
                           **extra)  # type: ignore[arg-type]  # fmt: skip
    return await Sandbox.start(config), task, image


async def _verify_image(sb: Sandbox, task: object) -> object:
    return await verify(sb, task.test_command, parser=task.parser,  # type: ignore[attr-defined]
                        env=dict(task.env), network=False)  # type: ignore[attr-defined]  # fmt: skip


GOLD_HELLO = "printf 'print(\"Hello, World!\")\\n' > /workspace/hello.py"


#: An image's sandbox with one uid and without capability, and its many-user root (Docker's
#: capabilities inside its own user namespace, issue 43): every attack is tried on both.
USERS = pytest.mark.parametrize("users", ["one", "many"])


@pytest.mark.slow
@USERS
async def test_in_an_image_the_gold_resolves_and_the_untouched_task_does_not(users: str) -> None:
    sb, task, _ = await _image_sandbox(users=users)
    async with sb:
        untouched = await _verify_image(sb, task)
    sb, task, _ = await _image_sandbox(users=users)
    async with sb:
        await sb.run_blocking(GOLD_HELLO + "\n", timeout=10)
        gold = await _verify_image(sb, task)
    assert untouched.resolved is False and untouched.reward == 0  # type: ignore[attr-defined]
    assert gold.resolved is True, gold.reasons  # type: ignore[attr-defined]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("attack", "flagged"),
    [
        # a library injected into every process (the loader reads the list first)
        ("echo /tmp/evil.so > /etc/ld.so.preload", "/etc/ld.so.preload"),
        # the shell that runs the test script (bash), replaced by one that writes the reward
        ("printf '#!/bin/sh\\necho 1 > /logs/verifier/reward.txt\\n' > /tmp/fake && "
         "chmod +x /tmp/fake && mv /tmp/fake /usr/bin/bash", "/usr/bin/bash"),
        # a start-up hook in the interpreter the test script runs the agent's program with: the
        # program is the agent's anyway, but the hook also runs in the shell's own python
        ("echo 'import os' > /usr/local/lib/python3.11/site-packages/zz_hook.pth", None),
    ],
)  # fmt: skip
@USERS
async def test_in_an_image_changes_to_the_programs_the_verification_runs_are_caught(
    attack: str, flagged: str | None, users: str
) -> None:
    """Harbor's hello-world runs ``python hello.py`` and writes the reward from the shell: a
    change to a program the shell itself runs taints the reward it writes (caught, named); a
    start-up hook that only the agent's own program loads shapes nothing the verdict is made of
    (the gold still resolves)."""
    sb, task, _ = await _image_sandbox(users=users)
    async with sb:
        # both must finish before the tests run: a loaded machine must not turn this test into
        # one of an unsolved task (the verdict would be False with nothing to flag)
        assert await sb.run_blocking(GOLD_HELLO + "\n", timeout=60)
        assert await sb.run_blocking(attack + "\n", timeout=60)
        result = await _verify_image(sb, task)
    audit = result.audit  # type: ignore[attr-defined]
    if flagged is None:
        assert result.resolved is True, result.reasons  # type: ignore[attr-defined]
        return
    assert result.resolved is False  # type: ignore[attr-defined]
    assert any(flagged in v for v in audit.violations), (audit.violations, result.reasons)  # type: ignore[attr-defined]
    assert flagged in result.shadowing  # type: ignore[attr-defined]


@pytest.mark.slow
async def test_a_trace_read_after_the_sandbox_ended_still_names_every_file(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """CI's one failure on a loaded machine: the trace was read after the verification's
    namespace had died, when a bind mount's file is named from the mount's own root
    (``/verifier/reward.txt``, not ``/logs/verifier/reward.txt``), so the reward's writer, which
    had run the agent's preload, went unjudged. Here the trace is read only at the end, every
    time: the namespace is held until then, and the writer is judged. The sandbox's own /dev is
    watched too (a script the test command writes to /dev/shm and runs is in the trace)."""
    from exploreval.suites.terminal import _trace, _verifier

    def read_only_at_stop(self: _trace.FileTracer) -> None:
        self._stop.wait()

    monkeypatch.setattr(_trace.FileTracer, "_run", read_only_at_stop)
    traces: list[_trace.Trace] = []
    audit_trace = _verifier.audit_trace

    def keep(trace: _trace.Trace, *args: object, **kwargs: object) -> object:
        traces.append(trace)
        return audit_trace(trace, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(_verifier, "audit_trace", keep)
    sb, task, _ = await _image_sandbox(users="one")
    async with sb:
        assert await sb.run_blocking(GOLD_HELLO + "\n", timeout=60)
        assert await sb.run_blocking("echo /tmp/evil.so > /etc/ld.so.preload\n", timeout=60)
        result = await _verify_image(sb, task)
    audit = result.audit  # type: ignore[attr-defined]
    assert any("/etc/ld.so.preload" in v for v in audit.violations), audit.violations
    writes = [e.path for e in traces[0].events if e.kind & _trace.WRITE]
    assert "/logs/verifier/reward.txt" in writes, writes
    command = ("printf '#!/bin/sh\\necho ok\\n' > /dev/shm/t.sh && chmod +x /dev/shm/t.sh && "
               "/dev/shm/t.sh && echo > /dev/null && ! touch /dev/elsewhere 2>/dev/null")  # fmt: skip
    sb, _, _ = await _image_sandbox(users="one")
    async with sb:
        run = await verify(sb, command, parser="exit_code", env={}, network=False)
    assert run.resolved, run.output  # type: ignore[attr-defined]
    assert any(e.path == "/dev/shm/t.sh" and e.kind & _trace.EXEC for e in traces[-1].events), [
        e.path for e in traces[-1].events
    ]


@pytest.mark.slow
@USERS
async def test_in_an_image_the_quota_covers_the_whole_root_and_mountinfo_is_clean(
    users: str,
) -> None:
    sb, _, image = await _image_sandbox(disk_mb=32, users=users)
    async with sb:
        fill = await sb.exec(["sh", "-c", "head -c 50000000 /dev/zero > /usr/big; echo rc=$?"],
                             timeout=30)  # fmt: skip
        table = (await sb.exec(["cat", "/proc/self/mountinfo"])).stdout
        who = (await sb.exec(["sh", "-c", "id -u; stat -c %u /usr/bin /workspace"])).stdout
    assert "No space left" in fill.stderr
    assert "lowerdir=lower,upperdir=disk/upper" in table
    assert str(scratch_root()) not in table and str(image.path) not in table  # type: ignore[attr-defined]
    assert who.split() == ["0", "0", "0"]  # root inside owns the image's files, as in Docker
