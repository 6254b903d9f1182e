"""The audit of a verification's trace (``_audit``): pure rules over a recorded trace.

Each case writes the trace a verification would record (processes, and the files they opened,
executed or wrote, in kernel order) and checks what the audit makes of it. The real traces are
in test_verification_seal.py; these pin each rule, and hypothesis checks the one property every
rule rests on: a trace with nothing of the agent's in it is never held against anyone.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exploreval.suites.terminal._agent_files import agent_files_in_dir, agent_files_in_upper
from exploreval.suites.terminal._audit import MARKER, VerificationAudit, audit_trace
from exploreval.suites.terminal._reads import (
    COUNTED,
    DATA,
    LIBRARY,
    METADATA,
    PYTHON_SCRIPT,
    PYTHON_STARTUP,
    SHELL_READ,
    SHELL_SCRIPT,
    SYSTEM,
    TOOL_READ,
    python_script,
    role,
    shell_script,
)
from exploreval.suites.terminal._trace import EXEC, OPEN, WRITE, Trace, TracedProcess, TraceEvent
from exploreval.suites.terminal._view import SandboxView, list_in_root, read_in_root

BWRAP, PID1, SHELL, UV, PYTEST, SERVER = 100, 101, 102, 103, 104, 105
CHAIN = {PID1: BWRAP, SHELL: PID1, UV: SHELL, PYTEST: UV, SERVER: SHELL}


class Recorder:
    """Builds a trace as the tracer would: a process is seen at its first event."""

    def __init__(self) -> None:
        self.chain = dict(CHAIN)  # pid -> parent pid
        self.trace = Trace()
        self.seq = 0
        self.inode = 1000

    def _event(
        self, pid: int, kind: int, path: str, ino: int | None = None, **captured: object
    ) -> int:
        self.seq += 1
        seen = pid
        while seen not in self.trace.processes and seen != 1:  # ancestors too, as the tracer
            ppid = self.chain.get(seen, 1)
            self.trace.processes[seen] = [TracedProcess(seen, ppid, 0, self.seq)]
            seen = ppid
        if ino is None:
            self.inode += 1
            ino = self.inode
        event = TraceEvent(self.seq, pid, kind, path, 1, ino, False, **captured)  # type: ignore[arg-type]
        self.trace.events.append(event)
        return ino

    def open(self, pid: int, path: str, ino: int | None = None, **captured: object) -> int:
        """An open; ``captured``: what the tracer read of the file then (digest, head, argv)."""
        return self._event(pid, OPEN, path, ino, **captured)

    def exec(self, pid: int, path: str) -> int:
        return self._event(pid, OPEN | EXEC, path)

    def write(self, pid: int, path: str, ino: int | None = None) -> int:
        return self._event(pid, WRITE, path, ino)

    def start_session(self) -> None:
        """bash runs uv, uv runs pytest in the venv (all the verifier's)."""
        self.exec(SHELL, "/usr/bin/bash")
        self.exec(UV, "/root/.local/bin/uv")
        self.exec(PYTEST, "/usr/bin/python3.11")
        self.open(PYTEST, "/usr/lib/python3.11/os.py")
        self.open(PYTEST, "/opt/exploreval-venv/.venv/lib/python3.11/site-packages/_pytest/main.py")


def _view(tmp_path: Path, agent: set[str]) -> SandboxView:
    tests = tmp_path / "vdisk-tests"
    tests.mkdir(exist_ok=True)
    return SandboxView(root=tmp_path, mounts=[("/tests", tests)], agent_paths=agent)


def _audit(
    rec: Recorder,
    view: SandboxView,
    sessions: set[int] | None = None,
    reward: tuple[int, int] | None = None,
) -> VerificationAudit:
    return audit_trace(
        rec.trace,
        view,
        roots={BWRAP, PID1},
        session_pids={PYTEST} if sessions is None else sessions,
        reward=reward,
    )


def test_agent_code_before_the_tests_began_is_a_violation_and_after_it_is_the_subject(
    tmp_path: Path,
) -> None:
    rec = Recorder()
    rec.start_session()
    rec.open(PYTEST, "/usr/local/lib/python3.11/site-packages/evilplug.py")
    rec.open(PYTEST, MARKER)
    rec.open(PYTEST, "/app/solution.py")
    audit = _audit(rec, _view(tmp_path, {"/usr/local/lib/python3.11/site-packages/evilplug.py",
                                         "/app/solution.py"}))  # fmt: skip
    assert audit.files == ["/usr/local/lib/python3.11/site-packages/evilplug.py"]
    assert "before its tests began" in audit.violations[0]
    assert audit.sessions[0].imported == ["/app/solution.py"]
    assert audit.sessions[0].collected is True


def test_data_the_agent_wrote_is_never_code(tmp_path: Path) -> None:
    rec = Recorder()
    rec.start_session()
    for data in ("/etc/passwd", "/etc/localtime", "/etc/ld.so.cache", "/app/answer.txt"):
        rec.open(PYTEST, data)
    rec.open(PYTEST, MARKER)
    audit = _audit(rec, _view(tmp_path, {"/etc/passwd", "/etc/localtime", "/etc/ld.so.cache",
                                         "/app/answer.txt"}))  # fmt: skip
    assert audit.violations == [] and audit.sessions[0].imported == []


def test_a_conftest_or_a_changed_standard_library_counts_at_any_time(tmp_path: Path) -> None:
    rec = Recorder()
    rec.start_session()
    rec.open(PYTEST, MARKER)
    rec.open(PYTEST, "/app/tests/conftest.py")
    rec.open(PYTEST, "/usr/lib/python3.11/json/decoder.py")
    audit = _audit(rec, _view(tmp_path, {"/app/tests/conftest.py",
                                         "/usr/lib/python3.11/json/decoder.py"}))  # fmt: skip
    assert set(audit.files) == {"/app/tests/conftest.py", "/usr/lib/python3.11/json/decoder.py"}
    assert any("conftest" in v for v in audit.violations)
    assert any("standard-library" in v for v in audit.violations)


def test_a_program_that_started_the_session_after_running_agent_code_counts(
    tmp_path: Path,
) -> None:
    rec = Recorder()
    rec.exec(SHELL, "/usr/bin/bash")
    rec.exec(UV, "/root/.local/bin/uv")  # the agent replaced it
    rec.exec(PYTEST, "/usr/bin/python3.11")
    rec.open(PYTEST, MARKER)
    audit = _audit(rec, _view(tmp_path, {"/root/.local/bin/uv"}))
    assert audit.files == ["/root/.local/bin/uv"]
    assert any("started a pytest session after running agent code" in v for v in audit.violations)
    assert audit.sessions[0].chain[-2:] == ["/usr/bin/bash", "/root/.local/bin/uv"]


def test_files_written_by_a_process_that_ran_agent_code_are_the_agents(tmp_path: Path) -> None:
    """A pip whose code the agent changed installs pytest: the session loads what it wrote."""
    rec = Recorder()
    rec.exec(SHELL, "/usr/bin/bash")
    pip = 110
    CHAIN[pip] = SHELL
    rec.exec(pip, "/usr/bin/python3.11")
    rec.open(pip, "/usr/local/lib/python3.11/site-packages/pip/__init__.py")  # the agent's
    ino = rec.write(pip, "/usr/local/lib/python3.11/site-packages/_pytest/reports.py")
    CHAIN[PYTEST] = SHELL
    try:
        rec.exec(PYTEST, "/usr/bin/python3.11")
        rec.open(PYTEST, "/usr/local/lib/python3.11/site-packages/_pytest/reports.py", ino)
        rec.open(PYTEST, MARKER)
        audit = _audit(
            rec, _view(tmp_path, {"/usr/local/lib/python3.11/site-packages/pip/__init__.py"})
        )
    finally:
        CHAIN[PYTEST] = UV
    assert audit.files == ["/usr/local/lib/python3.11/site-packages/_pytest/reports.py"]
    assert "written by a process that ran" in audit.violations[0]


def test_a_child_inherits_the_agent_code_its_parent_ran(tmp_path: Path) -> None:
    rec = Recorder()
    rec.exec(SHELL, "/usr/bin/bash")
    rec.open(SHELL, "/app/env.sh")  # the script sources a file of the agent's
    rec.exec(UV, "/root/.local/bin/uv")
    rec.exec(PYTEST, "/usr/bin/python3.11")
    audit = _audit(rec, _view(tmp_path, {"/app/env.sh"}))
    assert any("/app/env.sh" in v and "started a pytest session" in v for v in audit.violations)


def test_the_reward_and_the_tests_may_only_be_written_by_the_verifiers_processes(
    tmp_path: Path,
) -> None:
    rec = Recorder()
    rec.exec(SHELL, "/usr/bin/bash")
    rec.exec(SERVER, "/usr/bin/python3.11")
    rec.open(SERVER, "/app/server.py")  # the agent's server, started by the test script
    rec.write(SERVER, "/tests/test_outputs.py")
    reward = rec.write(SERVER, "/logs/verifier/reward.txt")
    rec.write(SHELL, "/logs/verifier/ctrf.json")
    audit = _audit(rec, _view(tmp_path, {"/app/server.py"}), sessions=set(), reward=(1, reward))
    assert any("copy of the tests" in v for v in audit.violations)
    assert any("reward file" in v for v in audit.violations)
    assert "/tests/test_outputs.py" in audit.files and "/app/server.py" in audit.files


def test_pytests_own_cache_in_tests_is_not_a_change_of_the_tests(tmp_path: Path) -> None:
    rec = Recorder()
    rec.start_session()
    rec.open(PYTEST, MARKER)
    rec.open(PYTEST, "/app/solution.py")  # the tests import the subject: the session is tainted
    rec.write(PYTEST, "/tests/.pytest_cache/v/cache/nodeids")
    audit = _audit(rec, _view(tmp_path, {"/app/solution.py"}))
    assert audit.violations == []


def test_a_session_outside_the_verification_or_never_seen_counts(tmp_path: Path) -> None:
    rec = Recorder()
    rec.start_session()
    stranger = 999
    rec.exec(stranger, "/usr/bin/python3.11")  # CHAIN has no entry: its parent is pid 1
    audit = _audit(rec, _view(tmp_path, set()), sessions={PYTEST, stranger, 4242})
    assert any("outside the verification" in v for v in audit.violations)
    assert any("never seen" in v for v in audit.violations)


def test_an_incomplete_trace_never_resolves(tmp_path: Path) -> None:
    rec = Recorder()
    rec.start_session()
    rec.trace.overflow = True
    assert _audit(rec, _view(tmp_path, set())).violations == [
        "the file-access trace is incomplete (too many events)"
    ]


def test_every_pth_of_the_agents_is_python_start_up_whatever_it_holds_after_the_run(
    tmp_path: Path,
) -> None:
    """A path-only ``.pth`` extends ``sys.path`` (an archive with a data-like name can follow);
    one with an ``import`` line may rewrite itself into a comment once it has run. Both are
    Python's start-up configuration: counted by what they are, never by what is left."""
    site = tmp_path / "usr/lib/python3/dist-packages"
    site.mkdir(parents=True)
    (site / "paths.pth").write_text("/srv/data\n")
    (site / "hook.pth").write_text("# nothing here now\n")  # what the host would read after
    rec = Recorder()
    rec.start_session()
    rec.open(PYTEST, "/usr/lib/python3/dist-packages/paths.pth")
    rec.open(PYTEST, "/usr/lib/python3/dist-packages/hook.pth", head=b"import forcer\n", digest="x")
    audit = _audit(rec, _view(tmp_path, {"/usr/lib/python3/dist-packages/paths.pth",
                                         "/usr/lib/python3/dist-packages/hook.pth"}))  # fmt: skip
    assert audit.files == [
        "/usr/lib/python3/dist-packages/paths.pth",
        "/usr/lib/python3/dist-packages/hook.pth",
    ]
    assert any(PYTHON_STARTUP in r for r in audit.agent_reads)


def test_an_archive_with_a_data_like_name_is_code_by_its_content(tmp_path: Path) -> None:
    rec = Recorder()
    rec.start_session()
    rec.open(PYTEST, "/srv/data.bin", head=b"PK\x03\x04rest", digest="x")
    rec.open(PYTEST, "/srv/notes.bin", head=b"plain words", digest="y")
    audit = _audit(rec, _view(tmp_path, {"/srv/data.bin", "/srv/notes.bin"}))
    assert audit.files == ["/srv/data.bin"]


def test_a_package_managers_configuration_is_its_code(tmp_path: Path) -> None:
    """apt reads a hook from ``apt.conf.d`` (a command string, run by a shell it starts: no file
    of the agent's is executed); what that shell writes where pytest collects is the agent's."""
    apt, hook = 106, 107
    rec = Recorder()
    rec.chain.update({apt: SHELL, hook: apt})
    rec.exec(SHELL, "/usr/bin/bash")
    rec.exec(apt, "/usr/bin/apt-get")
    rec.open(apt, "/var/lib/dpkg/status")  # the package database: data
    rec.open(apt, "/etc/apt/apt.conf.d/99hook")
    rec.exec(hook, "/usr/bin/sh")
    conftest = rec.write(hook, "/tests/conftest.py")
    rec.exec(UV, "/root/.local/bin/uv")
    rec.exec(PYTEST, "/usr/bin/python3.11")
    rec.open(PYTEST, "/tests/conftest.py", conftest)
    rec.open(PYTEST, MARKER)
    audit = _audit(rec, _view(tmp_path, {"/etc/apt/apt.conf.d/99hook", "/var/lib/dpkg/status"}))
    assert any("copy of the tests" in v for v in audit.violations), audit.violations
    assert "/etc/apt/apt.conf.d/99hook" in audit.violations[0]
    assert any(f"99hook: {TOOL_READ} (/usr/bin/apt-get)" in r for r in audit.agent_reads)
    assert any(f"status: {DATA}" in r for r in audit.agent_reads)


def test_a_file_a_shell_sources_is_code_whatever_its_name(tmp_path: Path) -> None:
    rec = Recorder()
    rec.exec(SHELL, "/usr/bin/bash")
    rec.open(SHELL, "/app/.venv/bin/activate")
    rec.exec(UV, "/root/.local/bin/uv")
    rec.exec(PYTEST, "/usr/bin/python3.11")
    rec.open(PYTEST, MARKER)
    audit = _audit(rec, _view(tmp_path, {"/app/.venv/bin/activate"}))
    assert any("started a pytest session" in v and "activate" in v for v in audit.violations)


def test_configuration_the_verifiers_chain_reads_is_named_at_once(tmp_path: Path) -> None:
    """apt reads an agent's ``apt.conf.d`` file and nothing comes of it that the tests load:
    the read alone is the violation, naming the file and the program (a gold that configures a
    package manager its tests then use gets a verdict that says so)."""
    apt = 106
    rec = Recorder()
    rec.chain[apt] = SHELL
    rec.exec(SHELL, "/usr/bin/bash")
    rec.exec(apt, "/usr/bin/apt-get")
    rec.open(apt, "/etc/apt/sources.list.d/mirror.list")
    rec.start_session()
    rec.open(PYTEST, MARKER)
    audit = _audit(rec, _view(tmp_path, {"/etc/apt/sources.list.d/mirror.list"}))
    direct = [v for v in audit.violations if "verification's own chain" in v]
    assert direct and "/usr/bin/apt-get" in direct[0] and "mirror.list" in direct[0], direct
    assert audit.files == ["/etc/apt/sources.list.d/mirror.list"]


def test_the_agents_program_run_by_the_test_script_may_read_its_own_start_up_files(
    tmp_path: Path,
) -> None:
    """Harbor's hello-world: the test script runs ``python3 hello.py`` itself. An agent ``.pth``
    that this interpreter reads is the agent's program configuring itself, not the chain
    reading agent configuration: no violation, but the process is the agent's from that read
    on (what it writes is derived, a reward from it is refused)."""
    site = "/usr/local/lib/python3.11/site-packages/zz_hook.pth"
    rec = Recorder()
    rec.exec(SHELL, "/usr/bin/bash")
    rec.exec(SERVER, "/usr/local/bin/python3.11")
    rec.open(SERVER, site, argv=("python3", "hello.py"), cwd="/app")
    rec.open(SERVER, "/app/hello.py", argv=("python3", "hello.py"), cwd="/app")
    reward = rec.write(SHELL, "/logs/verifier/reward.txt")
    view = _view(tmp_path, {site, "/app/hello.py"})
    audit = _audit(rec, view, sessions=set(), reward=(1, reward))
    assert audit.violations == [], audit.violations
    forged = rec.write(SERVER, "/logs/verifier/reward.txt", reward)
    audit = _audit(rec, view, sessions=set(), reward=(1, forged))
    assert any("zz_hook.pth" in v for v in audit.violations), audit.violations
    # the same .pth read by an interpreter that runs a script of the verifier's is named
    rec = Recorder()
    rec.exec(SHELL, "/usr/bin/bash")
    rec.exec(SERVER, "/usr/local/bin/python3.11")
    rec.open(SERVER, site, argv=("python3", "/tests/check.py"), cwd="/app")
    audit = _audit(rec, view, sessions=set())
    assert any("verification's own chain" in v for v in audit.violations), audit.violations


def test_a_forked_child_is_its_parents_program_until_it_execs(tmp_path: Path) -> None:
    """A subshell (forked, no exec: ``( . /app/env.sh; ... )``) that sources the agent's file
    is the test script's shell sourcing it; a child's open before its exec is a redirection,
    the input of the program it then runs: code for a shell (``sh < /app/x``), data for a
    checker (``check < /app/out.txt``)."""
    subshell, checker, runner = 106, 107, 108
    rec = Recorder()
    rec.chain.update({subshell: SHELL, checker: SHELL, runner: SHELL})
    rec.exec(SHELL, "/usr/bin/bash")
    rec.open(subshell, "/app/env.sh")
    rec.open(checker, "/app/out.txt")
    rec.exec(checker, "/tests/check")
    rec.open(runner, "/app/steps")
    rec.exec(runner, "/usr/bin/sh")
    rec.start_session()
    rec.open(PYTEST, MARKER)
    audit = _audit(rec, _view(tmp_path, {"/app/env.sh", "/app/out.txt", "/app/steps"}))
    assert "/app/env.sh" in audit.files and "/app/steps" in audit.files, audit.violations
    assert "/app/out.txt" not in audit.files
    assert any(r.startswith(f"/app/out.txt: {DATA} ") for r in audit.agent_reads)
    assert any(r.startswith(f"/app/env.sh: {SHELL_READ}") for r in audit.agent_reads)


def test_what_the_tests_run_may_read_the_agents_shell_files_as_their_subject(
    tmp_path: Path,
) -> None:
    """A test runs ``bash -c 'source /app/env.sh'``: the shell is the tests' subject (started by
    the session after its tests began), not the verifier's chain. The same file sourced by the
    test script's own shell before pytest is a violation."""
    child = 108
    rec = Recorder()
    rec.chain[child] = PYTEST
    rec.start_session()
    rec.open(PYTEST, MARKER)
    rec.exec(child, "/usr/bin/bash")
    rec.open(child, "/app/env.sh", argv=("bash", "-c", "source /app/env.sh"), cwd="/app")
    audit = _audit(rec, _view(tmp_path, {"/app/env.sh"}))
    assert audit.violations == []
    assert any(f"env.sh: {SHELL_READ}" in r for r in audit.agent_reads), audit.agent_reads

    rec = Recorder()
    rec.exec(SHELL, "/usr/bin/bash")
    rec.open(SHELL, "/app/env.sh", argv=("bash", "/tests/run-tests.sh"), cwd="/app")
    rec.start_session()
    rec.open(PYTEST, MARKER)
    audit = _audit(rec, _view(tmp_path, {"/app/env.sh"}))
    assert any("own chain" in v and "env.sh" in v for v in audit.violations), audit.violations


def test_a_checker_that_reads_the_agents_output_may_write_the_reward(tmp_path: Path) -> None:
    """A Harbor script's Python checker reads the agent's output file (data) and writes the
    reward: the verifier's own work. The same checker run *as* the agent's script is not."""
    checker = 108
    rec = Recorder()
    rec.chain[checker] = SHELL
    rec.exec(SHELL, "/usr/bin/bash")
    rec.exec(checker, "/usr/bin/python3.11")
    rec.open(checker, "/app/answer.json", head=b"{}", digest="d", argv=("python3", "-c", "..."))
    reward = rec.write(checker, "/logs/verifier/reward.txt")
    audit = _audit(rec, _view(tmp_path, {"/app/answer.json"}), sessions=set(), reward=(1, reward))
    assert audit.violations == [] and audit.reward_writer == "/usr/bin/python3.11"
    rec = Recorder()
    rec.chain[checker] = SHELL
    rec.exec(SHELL, "/usr/bin/bash")
    rec.exec(checker, "/usr/bin/python3.11")
    rec.open(
        checker, "/app/check", head=b"print(1)", digest="d", argv=("python3", "check"), cwd="/app"
    )
    reward = rec.write(checker, "/logs/verifier/reward.txt")
    audit = _audit(rec, _view(tmp_path, {"/app/check"}), sessions=set(), reward=(1, reward))
    assert any("reward file" in v and "/app/check" in v for v in audit.violations)


def test_the_reward_is_judged_by_its_inode_not_its_name(tmp_path: Path) -> None:
    """The agent's program writes ``r1`` and renames (or links) it to ``reward.txt``: the file
    the host reads was written by agent code, whatever name it had then. A reward file no
    process of the run wrote is not the verification's."""
    rec = Recorder()
    rec.exec(SHELL, "/usr/bin/bash")
    rec.write(SHELL, "/logs/verifier/reward.txt")  # the honest "0" the script wrote first
    rec.exec(SERVER, "/usr/bin/python3.11")
    rec.open(SERVER, "/app/hello.py")
    forged = rec.write(SERVER, "/logs/verifier/r1")
    audit = _audit(rec, _view(tmp_path, {"/app/hello.py"}), sessions=set(), reward=(1, forged))
    assert any("reward file was written by" in v and "hello.py" in v for v in audit.violations)
    audit = _audit(rec, _view(tmp_path, {"/app/hello.py"}), sessions=set(), reward=(1, 99999))
    assert any("not written during the verification" in v for v in audit.violations)


@pytest.mark.parametrize("merged", [False, True], ids=["open-apart", "open-merged"])
def test_the_test_commands_copy_of_the_tests_is_known_however_its_writes_were_read(
    tmp_path: Path, merged: bool
) -> None:
    """``cp`` opens the copy, writes it, closes it; the kernel hands the open apart from the
    write or merged into it, depending on how soon the host read its queue (seen: 1 gold in 12
    failed when they came apart). The writer's open is not a read: the copy is the test
    command's when what the session read holds the hidden file's bytes."""
    hidden = b"def test_answer_exists():\n    pass\n"
    copy = tmp_path / "app" / "tests" / "test_outputs.py"
    copy.parent.mkdir(parents=True)
    copy.write_bytes(hidden)
    ino = copy.stat().st_ino
    digest = "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(hidden).digest()).decode()
    digest = digest.rstrip("=")
    copier = 106
    rec = Recorder()
    rec.chain[copier] = SHELL
    rec.exec(SHELL, "/usr/bin/bash")
    rec.exec(copier, "/usr/bin/cp")
    if merged:
        rec._event(copier, OPEN | WRITE, "/app/tests/test_outputs.py", ino)
    else:
        rec.open(copier, "/app/tests/test_outputs.py", ino)  # before anything was in it
        rec.write(copier, "/app/tests/test_outputs.py", ino)
    rec.start_session()

    dev = copy.stat().st_dev
    events = [dataclasses.replace(e, dev=dev) if e.ino == ino else e for e in rec.trace.events]

    def audit(read: str) -> list[str]:
        session_read = TraceEvent(
            rec.seq + 1, PYTEST, OPEN, "/app/tests/test_outputs.py", dev, ino, False, digest=read
        )
        trace = Trace(events=[*events, session_read], processes=rec.trace.processes)
        result = audit_trace(
            trace,
            _view(tmp_path, set()),
            roots={BWRAP, PID1},
            session_pids={PYTEST},
            collected={"/app/tests/test_outputs.py": hidden},
        )
        return result.test_copies

    assert audit(digest) == ["/app/tests/test_outputs.py"]
    assert audit("sha256=something-else") == []


def test_a_file_once_written_by_agent_code_stays_derived(tmp_path: Path) -> None:
    """Writes are traced as they happen: the first write of a process that ran agent code makes
    the file derived from then on, even if a clean process writes it again later (an append to
    a module does not clean it)."""
    rec = Recorder()
    rec.exec(SHELL, "/usr/bin/bash")
    rec.exec(SERVER, "/usr/bin/python3.11")
    rec.open(SERVER, "/app/server.py")
    module = rec.write(SERVER, "/opt/exploreval-venv/lib/python3.11/site-packages/_pytest/x.py")
    rec.exec(UV, "/root/.local/bin/uv")
    rec.write(UV, "/opt/exploreval-venv/lib/python3.11/site-packages/_pytest/x.py", module)
    rec.exec(PYTEST, "/usr/bin/python3.11")
    rec.open(PYTEST, "/opt/exploreval-venv/lib/python3.11/site-packages/_pytest/x.py", module)
    rec.open(PYTEST, MARKER)
    audit = _audit(rec, _view(tmp_path, {"/app/server.py"}))
    assert any("before its tests began" in v for v in audit.violations), audit.violations


def test_pip_reads_the_agents_metadata_as_data_and_anything_else_as_its_input(
    tmp_path: Path,
) -> None:
    pip = 109
    site = "/usr/local/lib/python3.11/site-packages"
    rec = Recorder()
    rec.chain[pip] = SHELL
    rec.exec(SHELL, "/usr/bin/bash")
    rec.exec(pip, "/usr/local/bin/python3.11")
    rec.open(pip, f"{site}/pip/__init__.py")
    rec.open(pip, f"{site}/numpy-2.0.dist-info/METADATA")
    written = rec.write(pip, f"{site}/pytest/__init__.py")
    rec.exec(PYTEST, "/usr/bin/python3.11")
    rec.open(PYTEST, f"{site}/pytest/__init__.py", written)
    rec.open(PYTEST, MARKER)
    agent = {f"{site}/numpy-2.0.dist-info/METADATA", "/app/requirements.txt"}
    assert _audit(rec, _view(tmp_path, agent)).violations == []
    rec.open(pip, "/app/requirements.txt")
    rec.write(pip, f"{site}/pluggy/__init__.py")
    assert any(
        f"requirements.txt: {TOOL_READ}" in r
        for r in _audit(rec, _view(tmp_path, agent)).agent_reads
    )


def test_an_agent_file_renamed_or_deleted_as_it_runs_is_known_by_its_identity(
    tmp_path: Path,
) -> None:
    """The tracer reads a file's path after the open: code that deletes or renames its own file
    as it runs (``os.unlink(__file__)``) would leave a path that is not code (``... (deleted)``,
    ``x.txt``). The audit knows the agent's files by device and inode, under the names they had
    when the verification began."""
    rec = Recorder()
    rec.start_session()
    hook = rec.open(PYTEST, "/usr/local/lib/python3.11/site-packages/zz.pth (deleted)")
    module = rec.open(PYTEST, "/srv/forcer.txt")  # was /srv/forcer.py
    rec.open(PYTEST, MARKER)
    view = _view(tmp_path, set())
    view.agent_inodes = {(1, hook): "/usr/local/lib/python3.11/site-packages/zz.pth",
                         (1, module): "/srv/forcer.py"}  # fmt: skip
    (tmp_path / "usr/local/lib/python3.11/site-packages").mkdir(parents=True)
    (tmp_path / "usr/local/lib/python3.11/site-packages/zz.pth").write_text("import forcer\n")
    audit = _audit(rec, view)
    assert audit.files == ["/usr/local/lib/python3.11/site-packages/zz.pth", "/srv/forcer.py"]


def test_a_file_written_by_agent_code_and_read_before_the_tests_began_counts_whatever_its_name(
    tmp_path: Path,
) -> None:
    rec = Recorder()
    rec.exec(SHELL, "/usr/bin/bash")
    rec.exec(SERVER, "/usr/bin/python3.11")
    rec.open(SERVER, "/app/server.py")
    ino = rec.write(SERVER, "/tmp/innocent.dat")
    rec.exec(UV, "/root/.local/bin/uv")
    rec.exec(PYTEST, "/usr/bin/python3.11")
    rec.open(PYTEST, "/tmp/innocent.dat", ino)
    rec.open(PYTEST, MARKER)
    audit = _audit(rec, _view(tmp_path, {"/app/server.py"}))
    assert audit.files == ["/tmp/innocent.dat"]


def test_roles() -> None:
    other: set[str] = set()
    python, shell, tool = {"python"}, {"shell"}, {"tool"}
    assert role("/a/x.py", kinds=python) in COUNTED and role("/a/x.py", kinds=other) == DATA
    assert role("/l/libz.so.1.2.13", kinds=other) == LIBRARY
    assert role("/a/data.bin", kinds=other, head=b"\x7fELF....") == LIBRARY
    assert role("/c/pkg.deb", kinds=tool, head=b"!<arch>\ndebian") == LIBRARY
    assert role("/etc/ld.so.preload", kinds=other) == LIBRARY
    assert role("/etc/ld.so.cache", kinds=shell) == SYSTEM
    assert role("/etc/passwd", kinds=tool) == SYSTEM
    assert role("/a/x.txt", kinds=shell) == SHELL_READ
    assert role("/app/run", kinds=shell, argv=("bash", "-e", "run"), cwd="/app") == SHELL_SCRIPT
    assert SHELL_SCRIPT in COUNTED
    # the opener exec'd another program before the host read its command line: what it ran
    # cannot be told, so it counts as its script (code), never as data or configuration
    moved_on = ("python3", "-m", "http.server")
    assert role("/app/start", kinds=shell, argv=moved_on, cwd="/app") == SHELL_SCRIPT
    assert role("/app/check", kinds=python, argv=("sh", "-c", "x"), cwd="/") == PYTHON_SCRIPT
    assert role("/s/a-1.dist-info/entry_points.txt", kinds=python) == METADATA
    assert role("/s/a-1.dist-info/entry_points.txt", kinds=tool) == METADATA
    assert role("/etc/apt/apt.conf.d/99x", kinds=tool) == TOOL_READ
    assert role("/var/lib/dpkg/status", kinds=tool) == DATA
    assert role("/v/pyvenv.cfg", kinds=python) == PYTHON_STARTUP
    assert role("/app/check", kinds=python, argv=("python3", "-u", "check"), cwd="/app") == (
        PYTHON_SCRIPT
    )
    assert role("/app/check", kinds=python, argv=("python3", "-c", "x"), cwd="/app") == DATA


def test_the_script_a_python_command_line_runs() -> None:
    assert python_script(("python3", "x.py", "--flag"), "/app") == "/app/x.py"
    assert python_script(("python3", "-W", "ignore", "-X", "dev", "/t/run"), "/") == "/t/run"
    assert python_script(("python3", "-m", "pytest", "a.py"), "/") == ""
    assert python_script(("python3", "-c", "print(1)", "a.py"), "/") == ""
    assert python_script(("python3", "-cprint(1)"), "/") == ""
    assert python_script(("python3",), "/") == ""


def test_the_script_a_shell_command_line_runs() -> None:
    assert shell_script(("bash", "run.sh", "arg"), "/app") == "/app/run.sh"
    assert shell_script(("bash", "-e", "-o", "pipefail", "/t/run.sh"), "/") == "/t/run.sh"
    assert shell_script(("bash", "-c", "source x", "name"), "/") == ""
    assert shell_script(("sh", "-ec", "true"), "/") == ""
    assert shell_script(("bash", "-s"), "/") == ""
    assert shell_script(("bash",), "/") == ""


def test_the_host_reads_the_sandbox_s_files_without_following_links_out(tmp_path: Path) -> None:
    secret = tmp_path / "host-secret"
    secret.write_text("host only")
    root = tmp_path / "root"
    (root / "etc").mkdir(parents=True)
    (root / "etc/passwd").write_text("sandbox's own\n")
    (root / "link").symlink_to(secret)  # absolute: resolves inside the root, to nothing
    (root / "etc/shadow").symlink_to("/etc/passwd")
    assert read_in_root(root, "/link") is None
    assert read_in_root(root, "/etc/shadow") == b"sandbox's own\n"
    assert read_in_root(root, "/../../" + str(secret)) is None
    assert sorted(list_in_root(root, "/etc")) == [("passwd", True), ("shadow", False)]


def test_agent_files_are_what_differs_from_the_template(tmp_path: Path) -> None:
    template, app = tmp_path / "template", tmp_path / "app"
    for root in (template, app):
        (root / "pkg").mkdir(parents=True)
        (root / "pkg/a.py").write_text("a = 1\n")
        (root / "data.csv").write_text("x\n")
    (app / "pkg/a.py").write_text("a = 2\n")
    (app / "new.py").write_text("")
    assert agent_files_in_dir(app, "/app", template) == {"/app/pkg/a.py", "/app/new.py"}


def test_an_image_file_written_back_unchanged_is_the_images(tmp_path: Path) -> None:
    """An overlay's upper layer holds every file the agent wrote; one whose bytes (or link
    target) are the pristine image's is trusted for that content, as the work dir's files
    equal to the task's template are. Anything else there, new or changed, is the agent's."""
    import os

    upper, lower = tmp_path / "upper", tmp_path / "lower"
    site = "usr/lib/python3/dist-packages"
    for root in (upper, lower):
        (root / site).mkdir(parents=True)
    (lower / site / "same.pth").write_text("/app\n")
    (upper / site / "same.pth").write_text("/app\n")  # pip install -e . again: same bytes
    (lower / site / "changed.pth").write_text("/app\n")
    (upper / site / "changed.pth").write_text("/srv\n")  # same size, other bytes
    (upper / site / "new.pth").write_text("/app\n")
    os.symlink("python3.11", lower / "usr/lib/link")
    os.symlink("python3.11", upper / "usr/lib/link")
    os.symlink("python3.11", lower / "usr/lib/relinked")
    os.symlink("python3.12", upper / "usr/lib/relinked")
    (lower / site / "was_a_dir").mkdir()
    (upper / site / "was_a_dir").write_text("")
    expected = {
        f"/{site}/changed.pth",
        f"/{site}/new.pth",
        "/usr/lib/relinked",
        f"/{site}/was_a_dir",
    }
    assert agent_files_in_upper(upper, lower) == expected
    assert agent_files_in_upper(upper) == expected | {f"/{site}/same.pth", "/usr/lib/link"}


_KINDS = st.sampled_from(["open", "exec", "write"])
_PATHS = st.sampled_from(["/usr/lib/python3.11/os.py", "/usr/bin/python3.11", "/app/x.py",
                          "/tests/test_outputs.py", "/logs/verifier/reward.txt", "/etc/passwd",
                          "/opt/exploreval-venv/.venv/lib/python3.11/site-packages/pytest/__init__.py",
                          "/usr/lib/python3/dist-packages/hook.pth", MARKER])  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([SHELL, UV, PYTEST, SERVER]), _KINDS, _PATHS),
                max_size=40))  # fmt: skip
def test_a_trace_with_nothing_of_the_agents_is_never_held_against_anyone(
    steps: list[tuple[int, str, str]],
) -> None:
    """Whatever the verification's own processes open, run or write, in any order: with no
    file of the agent's and no process outside the verification, no violation."""
    rec = Recorder()
    for pid, kind, path in steps:
        getattr(rec, kind)(pid, path)
    view = SandboxView(root=Path("/nonexistent"), mounts=[], agent_paths=set())
    audit = audit_trace(rec.trace, view, roots={BWRAP, PID1}, session_pids={PYTEST})
    assert [v for v in audit.violations if "never seen" not in v] == []
