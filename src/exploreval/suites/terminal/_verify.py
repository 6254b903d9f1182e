"""Verification after the episode: the task's tests, run as shipped, judged on what really ran.

The sequence (docs/terminal.md, "Verification"):

1. **The agent is gone.** :meth:`Sandbox.terminate` kills the agent's whole PID namespace and
   checks that no process of its uid is left anywhere.
2. **A fresh, sealed sandbox** (:mod:`._verifier`): new namespaces over the episode's final
   files, the verifier's own mounts (tests, logs, harness, home, venv, uv project), ``/proc``
   read-only, no process reaching into another (:mod:`._seccomp`).
3. **The verifier's environment** (:mod:`._sealed`): pytest pinned to the tests' own
   configuration, Python's start-up and the test environment (uv, pip) built from the
   verifier's files only: nothing the agent wrote is read.
4. **Checked from outside** (:mod:`._trace`, :mod:`._audit`): every file the run opened,
   executed or wrote, by which process; agent code may run in a test process only when the
   tests import it. The results channel's messages carry their sender's pid, stamped by the
   kernel.
5. **Resolved** (Terminal-Bench, ``pytest``): at least one pytest session reported, every
   session ended with exit status 0, no test failed or errored in any phase, every test the
   hidden test files define (collected from their source on the host) was collected from the
   verifier's copy under /tests and passed, the test command exited 0 within its timeout, and
   the audit found nothing. Harbor (``reward_file``): the reward written to the fresh
   /logs/verifier during this run is >= 1, any pytest session it ran passed as above, and the
   audit found nothing (a reward written by a process that ran agent code included).

What remains (documented): the code the tests import from the agent (the task's subject) runs
inside the test process; the audit lists it.

Concurrent verifications are capped separately from concurrent episodes (they are what uses the
CPU): :func:`set_verification_limit` sets the process-wide cap (default: the number of cores).
"""

from __future__ import annotations

import ast
import asyncio
import json
import os
import re
import time
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from exploreval.suites.terminal._audit import VerificationAudit
from exploreval.suites.terminal._base_source import emulation_reason
from exploreval.suites.terminal._errors import SandboxError
from exploreval.suites.terminal._index import DEFAULT_INDEX, requested_tools
from exploreval.suites.terminal._output import truncate_middle
from exploreval.suites.terminal._reachability import internet_host
from exploreval.suites.terminal._sandbox import Sandbox
from exploreval.suites.terminal._sealed import (
    harness_files,
    image_pytest_plugins,
    pristine_pip_env,
    sealed_env,
    shipped_pytest_config,
    verification_env,
    verification_project,
)
from exploreval.suites.terminal._trace import TraceUnavailable
from exploreval.suites.terminal._verifier import VerifierRun, run_verifier

TestOutcome = Literal["passed", "failed", "error", "skipped", "xfailed", "xpassed"]
_PYTEST_LINE = re.compile(r"^(PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)\s+(\S+)(?:\s+-\s+(.*))?$")
_SUMMARY = re.compile(r"^=+ short test summary info =+$")
_RULE = re.compile(r"^=+( .*)? =+$|^=+$")
_OUTCOME: dict[str, TestOutcome] = {
    "PASSED": "passed",
    "FAILED": "failed",
    "ERROR": "error",
    "SKIPPED": "skipped",
    "XFAIL": "xfailed",
    "XPASS": "xpassed",
}
#: Outcomes that count as passing (a skipped test is not a pass: the task did not show it works).
_GOOD = frozenset({"passed", "xfailed"})
MISSING = "not reported by the test run (not collected, not run, or its result was lost)"


class TestResult(BaseModel):
    __test__ = False  # not a pytest class

    name: str
    outcome: TestOutcome
    message: str = ""
    #: The test file the session collected it from, as the sandbox sees it (an expected test
    #: counts only from the verifier's copy under /tests).
    path: str = ""


class VerificationResult(BaseModel):
    """Per-test results of one verification, from the results channel (module docstring)."""

    schema_version: int = 3
    resolved: bool
    parser: str
    tests: list[TestResult] = Field(default_factory=list)
    #: Test ids the hidden test files define (collected from their source); each must pass.
    expected: list[str] = Field(default_factory=list)
    exit_code: int | None = None
    timed_out: bool = False
    duration_s: float = 0.0
    #: What the test command printed (for people: never read for the verdict).
    output: str = ""
    reward: float | None = None
    error: str | None = None
    #: pytest sessions the results channel reported (and whether each ended).
    sessions: int = 0
    #: Why the episode is not resolved, one line each (empty when resolved).
    reasons: list[str] = Field(default_factory=list)
    #: Files the agent wrote that shaped how the tests ran (the audit's violations name them).
    shadowing: list[str] = Field(default_factory=list)
    #: What the verification actually ran, checked from outside (``_audit``).
    audit: VerificationAudit | None = None
    network: bool = False
    #: The agent's processes ran on through the tests (``agent_processes=keep``).
    agent_kept: bool = False
    #: TCP ports the agent's processes listened on when its phase ended (not kept).
    agent_ports: list[int] = Field(default_factory=list)
    #: A host the tests needed that this machine cannot reach (a failed verification only).
    unreachable_host: str | None = None
    #: The episode's disk quota (MB) when the agent's phase filled it (a failed one only).
    disk_filled_mb: int | None = None
    #: The failed verification ran on an image built over an emulated base (``._base_source``).
    emulated_base: bool = False
    #: Internet names the episode's processes (the agent's, its services', the tests') asked DNS
    #: for and did not get (``._dns_log``), at most 20: a diagnostic, never a verdict.
    unresolved_hosts: list[str] = Field(default_factory=list)

    @property
    def passed(self) -> int:
        return sum(t.outcome == "passed" for t in self.tests)


def _summary_lines(output: str) -> list[str]:
    """The lines of the last ``short test summary info`` section (all lines if there is none)."""
    lines = output.splitlines()
    starts = [i for i, line in enumerate(lines) if _SUMMARY.match(line.strip())]
    if not starts:
        return lines
    body = []
    for line in lines[starts[-1] + 1 :]:
        if _RULE.match(line.strip()):
            break
        body.append(line)
    return body


def parse_pytest(output: str) -> list[TestResult]:
    """Per-test outcomes from pytest's ``-rA`` short summary: the last summary section only
    (a program under test printing look-alike lines earlier or at exit is ignored); within it
    the last line per test id wins."""
    found: dict[str, TestResult] = {}
    for raw in _summary_lines(output):
        match = _PYTEST_LINE.match(raw.strip())
        if match:
            word, name, message = match.groups()
            if "::" not in name and not name.endswith(".py"):
                continue
            found[name] = TestResult(name=name, outcome=_OUTCOME[word], message=message or "")
    return list(found.values())


def _test_files(tests_dir: Path) -> list[Path]:
    files = sorted(
        p
        for p in tests_dir.rglob("*.py")
        if p.name.startswith("test_") or p.name.endswith("_test.py")
    )
    runner = tests_dir / "run-tests.sh"
    if runner.is_file():
        text = runner.read_text(errors="replace")
        named = [p for p in files if p.name in text]
        if named:  # the test command runs these files only
            return named
    return files


def collect_test_ids(tests_dir: Path | None) -> list[str]:
    """The pytest ids the hidden test files define, from their source (never executed):
    module-level ``test*`` functions and ``test*`` methods of ``Test*`` classes, as
    ``<path relative to the tests dir>::[Class::]name``. Parametrised ids (``name[...]``)
    match their function. Empty when the tests are not Python (a shell ``test.sh``)."""
    if tests_dir is None or not tests_dir.is_dir():
        return []
    ids: list[str] = []
    for path in _test_files(tests_dir):
        try:
            tree = ast.parse(path.read_text(errors="replace"))
        except SyntaxError:
            continue  # reported by pytest as a collection error; nothing to expect by name
        rel = path.relative_to(tests_dir).as_posix()
        for node in tree.body:
            if (
                isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
                and node.name.startswith("test")
                and not _is_fixture(node)
            ):
                ids.append(f"{rel}::{node.name}")
            elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
                if any(isinstance(n, ast.FunctionDef) and n.name == "__init__" for n in node.body):
                    continue  # pytest does not collect classes with __init__
                for item in node.body:
                    if (
                        isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)
                        and item.name.startswith("test")
                        and not _is_fixture(item)
                    ):
                        ids.append(f"{rel}::{node.name}::{item.name}")
    return ids


def _is_fixture(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """``@pytest.fixture`` (or ``@fixture(...)``): a ``test*`` name that pytest does not run."""
    for decorator in node.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
        if name in ("fixture", "yield_fixture"):
            return True
    return False


def _matches(expected: str, reported: TestResult, copies: frozenset[str] = frozenset()) -> bool:
    """A reported test (id ``test_outputs.py::t[1]`` collected from
    ``/tests/test_outputs.py``) is an expected one (``test_outputs.py::t``): the same name up to
    parameters, collected from the verifier's own copy of the expected file, or from a copy of
    it that the test command made (``copies``: some test scripts copy the tests into the work
    dir and run them there; the audit checked each such copy's content and writer). A
    same-named file of the agent's never stands in for it."""
    exp_path, _, exp_name = expected.partition("::")
    _rep_path, _, rep_name = reported.name.partition("::")
    if rep_name.split("[", 1)[0] != exp_name:
        return False
    if reported.path == f"/tests/{exp_path}":
        return True
    return reported.path in copies and reported.path.endswith("/" + exp_path)


def check_expected(
    tests: list[TestResult], expected: list[str], copies: frozenset[str] = frozenset()
) -> list[TestResult]:
    """``tests`` plus an ``error`` result for every expected test nobody reported."""
    out = list(tests)
    for exp in expected:
        if not any(_matches(exp, t, copies) for t in tests):
            out.append(TestResult(name=exp, outcome="error", message=MISSING))
    return out


def read_reward(text: str) -> float | None:
    """reward.txt (a number) or reward.json ({"reward": x} or a bare number)."""
    text = text.strip()
    if not text:
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return None
    if isinstance(value, dict):
        value = value.get("reward")
    return float(value) if isinstance(value, (int, float)) else None


class _Session:
    def __init__(self) -> None:
        self.finished = False
        self.exitstatus: int | None = None
        self.tests: dict[str, list[dict[str, Any]]] = {}
        self.paths: dict[str, str] = {}
        self.collect_errors: list[str] = []


def read_sessions(events: list[dict[str, Any]]) -> list[_Session]:
    """pytest sessions from the results channel, by sending process (the pid the kernel stamped
    on each message, ``hostpid``; a message's own claim is not used); what a session sends after
    its own ``finish`` is ignored, and messages of a process that never sent ``start`` are
    dropped."""
    sessions: dict[Any, _Session] = {}
    for event in events:
        pid = event.get("hostpid")
        kind = event.get("e")
        if kind == "start":
            sessions.setdefault(pid, _Session())
            continue
        session = sessions.get(pid)
        if session is None or session.finished:
            continue
        if kind == "finish":
            session.finished = True
            status = event.get("exitstatus")
            session.exitstatus = status if isinstance(status, int) else None
        elif kind == "test" and isinstance(event.get("nodeid"), str):
            session.tests.setdefault(event["nodeid"], []).append(event)
        elif kind == "items" and isinstance(event.get("items"), list):
            for item in event["items"]:
                if isinstance(item, list) and len(item) == 2:
                    session.paths[str(item[0])] = str(item[1])
        elif kind == "collect":
            session.collect_errors.append(str(event.get("nodeid")))
    return list(sessions.values())


def _outcome(phases: list[dict[str, Any]]) -> tuple[TestOutcome, str]:
    """One test's outcome from its setup/call/teardown reports (a failed phase fails it)."""
    message = ""
    for phase in phases:
        if phase.get("outcome") == "failed":
            message = str(phase.get("message") or "")[-500:]
            return ("failed" if phase.get("when") == "call" else "error"), message
    call = next((p for p in phases if p.get("when") == "call"), None)
    if call is None:
        skipped = any(p.get("outcome") == "skipped" for p in phases)
        if skipped:
            return ("xfailed" if any(p.get("xfail") for p in phases) else "skipped"), ""
        return "error", "no call phase reported"
    if call.get("outcome") == "passed":
        return ("xpassed" if call.get("xfail") else "passed"), ""
    if call.get("outcome") == "skipped":
        return ("xfailed" if call.get("xfail") else "skipped"), ""
    return "failed", str(call.get("message") or "")[-500:]


def tests_from_sessions(sessions: list[_Session]) -> list[TestResult]:
    """Every reported test's outcome; a test reported by several sessions keeps the worst."""
    rank = {"passed": 0, "xfailed": 0, "skipped": 1, "xpassed": 2, "failed": 3, "error": 4}
    found: dict[str, TestResult] = {}
    for session in sessions:
        for nodeid, phases in session.tests.items():
            outcome, message = _outcome(phases)
            current = found.get(nodeid)
            if current is None or rank[outcome] > rank[current.outcome]:
                found[nodeid] = TestResult(name=nodeid, outcome=outcome, message=message,
                                           path=session.paths.get(nodeid, ""))  # fmt: skip
        for nodeid in session.collect_errors:
            found[nodeid] = TestResult(name=nodeid, outcome="error", message="collection failed")
    return list(found.values())


def pytest_reasons(
    sessions: list[_Session], tests: list[TestResult], *, require: bool
) -> list[str]:
    """Why the pytest part of a verification does not pass (empty: it passes)."""
    reasons: list[str] = []
    if not sessions:
        if require:
            reasons.append(
                "no pytest session reported on the results channel (the tests did not run, "
                "or ran without exploreval's results plugin)"
            )
        return reasons
    for i, session in enumerate(sessions):
        if not session.finished:
            reasons.append(f"pytest session {i + 1} never finished (killed, or exited early)")
        elif session.exitstatus != 0:
            reasons.append(f"pytest session {i + 1} exited with status {session.exitstatus}")
    bad = [t for t in tests if t.outcome not in _GOOD]
    if bad:
        names = ", ".join(f"{t.name} ({t.outcome})" for t in bad[:5])
        more = f" and {len(bad) - 5} more" if len(bad) > 5 else ""
        reasons.append(f"tests not passed: {names}{more}")
    if require and not any(t.outcome == "passed" for t in tests):
        reasons.append("no test passed")
    return reasons


_LIMIT: dict[str, int] = {"value": os.cpu_count() or 2}
_SEMAPHORES: dict[int, tuple[int, asyncio.Semaphore]] = {}


def set_verification_limit(n: int) -> None:
    """Cap concurrent verifications in this process (per event loop)."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"verification limit must be an integer >= 1, got {n!r}")
    if n == _LIMIT["value"]:
        return  # every env of a run sets it: the semaphores in use stay
    _LIMIT["value"] = n
    _SEMAPHORES.clear()


def verification_limit() -> int:
    return _LIMIT["value"]


def _semaphore() -> asyncio.Semaphore:
    loop = asyncio.get_running_loop()
    key = id(loop)
    entry = _SEMAPHORES.get(key)
    if entry is None or entry[0] != _LIMIT["value"]:
        entry = (_LIMIT["value"], asyncio.Semaphore(_LIMIT["value"]))
        _SEMAPHORES[key] = entry
    return entry[1]


async def verify(
    sandbox: Sandbox,
    test_command: str,
    *,
    parser: Literal["pytest", "reward_file", "exit_code"] = "pytest",
    timeout: float = 120.0,
    env: dict[str, str] | None = None,
    max_output_bytes: int = 20_000,
    expected: list[str] | None = None,
    network: bool = False,
    template: Path | None = None,
    keep_agent: bool = False,
    agent_saw_full_disk: bool = False,
) -> VerificationResult:
    """End the agent's sandbox, then run ``test_command`` (bash, cwd = the work dir) in a fresh,
    traced sandbox over its files, sealed by the verifier (:mod:`._sealed`), and decide from the
    results channel and the audit of what ran (module docstring).

    ``env``: the task's test environment (its ENV, and for an image the test tools'
    variables). ``expected``: the test ids that must all pass (default: collected from the
    sandbox's tests dir with :func:`collect_test_ids`). ``template``: the pristine work dir of a
    host-system task (the agent's files are those that differ from it).
    ``agent_saw_full_disk``: the agent's terminal showed :data:`ENOSPC` (a fast download fills
    the disk and is removed between two samples of its use)."""
    if expected is None:
        expected = collect_test_ids(sandbox.config.tests_dir) if parser == "pytest" else []
    host_system = sandbox.config.image is None
    since = time.monotonic()  # lookups from here on are the tests' (kept or shared networks)
    ended = sandbox.end_reason if sandbox.end_reason not in ("", "closed") else ""
    if keep_agent and not sandbox.alive:
        keep_agent = False  # nothing left to keep (the shell exited, a limit ended it)
    # what the agent left serving: tests that talk to it fail once its processes are gone
    agent_ports = [] if keep_agent else sandbox.listening_ports()
    if not keep_agent:
        await sandbox.terminate()
    if sandbox.disk is None:
        return VerificationResult(
            resolved=False, parser=parser, expected=expected, error="the sandbox was closed"
        )
    lower = None if host_system else sandbox.disk.dir / "lower"
    config_file = shipped_pytest_config(sandbox.config.tests_dir)
    workdir = sandbox.config.workdir
    project = await asyncio.to_thread(verification_project, lower, workdir)
    tools = requested_tools(sandbox.config.tests_dir)
    task_env = verification_env(env, host_system=host_system)
    pip_env = await asyncio.to_thread(pristine_pip_env, lower)
    sealed = sealed_env(
        task_env,
        host_system=host_system,
        config_file=config_file,
        uv_project=not host_system,
        pip_env=pip_env,
        tool_dists=tools | await asyncio.to_thread(image_pytest_plugins, lower),
    )
    async with _semaphore():
        try:
            run = await run_verifier(
                sandbox,
                test_command,
                env=sealed,
                timeout=timeout,
                harness=harness_files(),
                project=project,
                template=template,
                network=network,
                keep_agent=keep_agent,
                config_file=config_file,
                index_url=_simple_index(pip_env.get("PIP_INDEX_URL")) or DEFAULT_INDEX,
                tools=tools,
            )
        except (SandboxError, TraceUnavailable, OSError) as exc:
            return VerificationResult(
                resolved=False, parser=parser, expected=expected, error=str(exc)
            )
        sandbox.file_events()  # the tests' own accesses are not the agent's
    result = decide(run, parser=parser, expected=expected, ended=ended,
                    max_output_bytes=max_output_bytes)  # fmt: skip
    result.agent_kept = keep_agent
    result.agent_ports = agent_ports
    hint = agent_server_hint(result.output, agent_ports) if not result.resolved else None
    if hint:
        result.reasons.append(hint)
    quota = sandbox.config.disk_mb
    disk = sandbox.disk
    if not result.resolved and (agent_saw_full_disk or disk_filled(disk.peak_mb, disk.capacity_mb)):
        result.disk_filled_mb = quota
        result.reasons.append(
            f"the episode's disk ({quota} MB) filled during the agent's phase: what needed more "
            f"space failed (Terminal-Bench's containers have no quota); more with --env-option "
            f"disk_mb={4 * quota} (a tmpfs up to a quarter of this machine's memory, taken "
            "only as it fills; a sparse file on the host's disk above)"
        )
    emulated = emulation_reason(sandbox.config.image) if not result.resolved else None
    if emulated:
        result.emulated_base = True
        result.reasons.append(emulated)
    nets = [n for n in (sandbox._net, getattr(sandbox.network_of, "slirp", None)) if n]
    tests_asked = list(run.unresolved_hosts)
    if keep_agent or sandbox.network_of is not None:  # the tests' lookups went through these too
        tests_asked += [name for net in nets for name in net.unresolved(since)]
    asked = [name for net in nets for name in net.unresolved()] + run.unresolved_hosts
    result.unresolved_hosts = [n for n in dict.fromkeys(asked) if internet_host(n)][:20]
    if not result.resolved and not host_system:
        result.unreachable_host = await asyncio.to_thread(
            _test_time_host, result.output, sandbox.config.tests_dir, tests_asked
        )
        if result.unreachable_host:
            result.reasons.append(
                f"the tests need {result.unreachable_host}, which this machine cannot reach: "
                "the verdict says nothing about the agent"
            )
    return result


#: What a write that found the disk full prints (``strerror(ENOSPC)``).
ENOSPC = "No space left on device"


def disk_filled(peak_mb: float, quota_mb: float) -> bool:
    """Whether the disk's peak came within 1% (at least 8 MB) of what it holds: a write failed."""
    return peak_mb >= quota_mb - max(8.0, quota_mb / 100)


def _test_time_host(output: str, tests_dir: Path | None, asked: list[str]) -> str | None:
    """A host the failed tests fetch from (``._reachability.unreachable_at_test_time``), the test
    files read for hosts they name; else the first name the tests' lookups did not get
    (``asked``, from the DNS log) that this machine cannot reach."""
    from exploreval.suites.terminal._reachability import reachable, unreachable_at_test_time

    sources: list[str] = []
    if tests_dir is not None and tests_dir.is_dir():
        for path in sorted(tests_dir.rglob("*"))[:200]:
            if path.is_file() and path.suffix in (".py", ".sh", ".txt", ".json", ".yaml"):
                sources.append(path.read_text(errors="replace")[:200_000])
    found = unreachable_at_test_time(output, tuple(sources))
    if found:
        return found
    return next((n for n in dict.fromkeys(asked) if internet_host(n) and not reachable(n)), None)


#: How a test says it could not connect (requests/urllib3, Python, curl, Node, Go, or its own
#: assertion: "server is not running on port 8888").
_REFUSED = re.compile(r"Connection refused|ConnectionRefusedError|Errno 111|ECONNREFUSED|"
                      r"Failed to connect to|connect: connection refused|"
                      r"not (?:running|listening|open|reachable) on port")  # fmt: skip


def agent_server_hint(output: str, ports: list[int]) -> str | None:
    """Why a verification may have failed for want of the agent's servers: the tests could
    not connect, naming a port the agent's processes were listening on when its phase ended
    (they are stopped before the tests run). None when the output shows no such thing."""
    if not ports or not _REFUSED.search(output):
        return None
    named = [p for p in ports if re.search(rf"(?<![\d.]){p}(?!\d)", output)]
    if not named:
        return None
    listed = ", ".join(str(p) for p in named)
    return (f"the tests could not connect on port {listed}, where the agent's processes "
            "were listening when its phase ended; they are stopped before the tests run. If the "
            "task's tests need the agent's servers: --env-option agent_processes=keep")  # fmt: skip


def _simple_index(url: str | None) -> str | None:
    """The image's own pip index (its ``index-url``), if it has one: a simple API root."""
    return url.split()[0].rstrip("/") if url and url.startswith(("http://", "https://")) else None


def decide(
    run: VerifierRun,
    *,
    parser: str,
    expected: list[str],
    ended: str = "",
    max_output_bytes: int = 20_000,
) -> VerificationResult:
    """The verdict of one verification run (pure: a function of what the host read and of the
    audit of what ran)."""
    output = run.stdout + (("\n" + run.stderr) if run.stderr else "")
    shown, _ = truncate_middle(output, max_output_bytes)
    sessions = read_sessions(run.events)
    tests = tests_from_sessions(sessions)
    reasons: list[str] = []
    if run.events_error:
        reasons.append(run.events_error)
    reward: float | None = None
    if run.reward_text is not None:
        reward = read_reward(run.reward_text)
    if parser == "pytest":
        copies = frozenset(run.audit.test_copies) if run.audit is not None else frozenset()
        tests = check_expected(tests, expected, copies)
        reasons += pytest_reasons(sessions, tests, require=True)
        if run.returncode not in (0, None):
            reasons.append(f"the test command exited with status {run.returncode}")
    elif parser == "reward_file":
        if reward is None:
            reasons.append("no reward in /logs/verifier (reward.txt or reward.json)")
        elif reward < 1.0:
            reasons.append(f"reward {reward:g} < 1")
        reasons += pytest_reasons(sessions, tests, require=False)
    elif run.returncode != 0:
        reasons.append(f"the test command exited with status {run.returncode}")
    if run.timed_out:
        reasons.append("the test command timed out")
    audit = run.audit
    if audit is None:
        reasons.append("the verification was not traced: what ran cannot be checked")
    else:
        reasons += audit.violations
    return VerificationResult(
        resolved=not reasons,
        parser=parser,
        tests=tests,
        expected=expected,
        exit_code=run.returncode,
        timed_out=run.timed_out,
        duration_s=run.duration_s,
        output=shown,
        reward=reward,
        sessions=len(sessions),
        reasons=reasons,
        shadowing=list(audit.files) if audit is not None else [],
        audit=audit,
        network=run.network,
        error=f"the agent's sandbox ended early ({ended})" if ended else None,
    )
