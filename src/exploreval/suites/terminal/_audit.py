"""What a verification's trace means: which code ran, whose it was, and whether it may count.

The rule (docs/terminal.md, "Verification"): **the agent's code may run in a test process only
when the tests import it.** Everything that runs without the tests asking for it (the
interpreter and its start-up, the test tools, their plugins and configuration, the programs that
start pytest, the packages the test script installs) is the verifier's, and must not be, or come
from, something the agent wrote.

Provenance of a file the trace saw:

* **agent**: the agent created or changed it (an image's overlay layer at the end of the agent's
  phase; a host-system sandbox's work dir, ``/tmp`` and ``/root``, minus the task's own files);
* **derived**: written during the verification by a process that had already run agent code, or
  by a process outside the verification (the agent's own, with ``agent_processes=keep``);
* otherwise the image's, the host's, or written by the verification's own tools.

A process becomes *tainted* when it executes or opens agent or derived **code** (a program it
runs; a Python module, byte code or ``.pth`` with code, opened by a Python interpreter; a shell
script opened by a shell; a shared library or an archive, by any process: native tools such as
uv or cp read Python files as data, but installers unpack archives); a child inherits its
parent's taint. The episode is not
resolved when:

1. a pytest session loaded agent code **before its tests began** (collection): start-up hooks,
   plugins, an interpreter or library swapped, configuration code;
2. a session loaded, at any time, an agent ``conftest.py``; agent code in the interpreter's
   standard library, in a test tool (pytest and what it needs: pytest imports some lazily) or in
   the verifier's own mounts (its venv, written by a process that ran agent code);
3. a program in the chain that started a session (the test script's shell, uv, a ``pytest``
   wrapper...) had run agent code before the session started, or the test command's own shell
   is a program of the agent's;
4. a process that ran agent code wrote the verifier's reward file, or changed its copy of the
   tests (a server of the agent's that the test script starts could rewrite them);
5. the trace is incomplete.

What remains allowed, and is listed (``imported``): agent code a session loaded after its tests
began, other than the above: the code the tests import (the task's subject). One exemption
(:mod:`._index`, listed in ``from_index``): an agent-written file of a *test tool* (a
distribution the image ships, that the test scripts install, or that pytest needs) that is
byte for byte its release on the package index is not agent code: a solution that upgraded
pip still has its tests run.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import json
import posixpath
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass, field

from pydantic import BaseModel, Field

from exploreval.suites.terminal._index import IndexCheck
from exploreval.suites.terminal._reads import (
    CONFIGURATION,
    COUNTED,
    program_kind,
    python_script,
    role,
    shell_script,
)
from exploreval.suites.terminal._trace import (
    EXEC,
    LIST,
    OPEN,
    WRITE,
    Trace,
    TracedProcess,
    TraceEvent,
)
from exploreval.suites.terminal._view import SandboxView, stat_in_root

AGENT = "the agent's"
#: The verifier's marker, opened by the results plugin when collection begins (the boundary
#: between "the test tools started" and "the tests import their subject").
MARKER = "/opt/exploreval/verify/collecting"
PLUGIN_FILE = "/opt/exploreval/verify/exploreval_results.py"
#: Where nothing is the agent's to plant (the kernel's file systems, the verifier's own).
_NOT_SURFACE = ("/proc", "/sys", "/dev", "/tests", "/logs", "/opt/exploreval")
#: A Python interpreter that imports pip is a package manager (``python -m pip``).
_PIP_MODULE = re.compile(r"/(site|dist)-packages/pip/__init__\.py$")
_CONFIG_NAMES = frozenset(
    {
        "pytest.ini",
        ".pytest.ini",
        "pytest.toml",
        ".pytest.toml",
        "pyproject.toml",
        "tox.ini",
        "setup.cfg",
    }
)


class SessionRecord(BaseModel):
    """One pytest session as the trace saw it (not as it described itself)."""

    schema_version: int = 1
    #: The program the session's process ran (its interpreter) and the chain that started it,
    #: outermost first (e.g. bash -> uv -> python3.11).
    program: str = ""
    chain: list[str] = Field(default_factory=list)
    #: Test configuration and conftest files the session opened.
    config_files: list[str] = Field(default_factory=list)
    conftests: list[str] = Field(default_factory=list)
    #: Distributions whose metadata the session read: "name version (origin[, source])".
    distributions: list[str] = Field(default_factory=list)
    #: Agent code the session loaded after its tests began (the code the tests import).
    imported: list[str] = Field(default_factory=list)
    collected: bool = False


class VerificationAudit(BaseModel):
    """What the verification actually ran, checked from outside (``_audit`` module docstring)."""

    schema_version: int = 2
    traced: bool = False
    events: int = 0
    processes: int = 0
    #: Seconds the audit took (the host's work after the run, index checks included).
    duration_s: float = 0.0
    #: Files the agent created or changed, as the verification found them.
    agent_files: int = 0
    #: The pytest configuration the sessions were pinned to, and their rootdir.
    config_file: str = ""
    rootdir: str = ""
    sessions: list[SessionRecord] = Field(default_factory=list)
    #: Why the run cannot count, one line each, naming the file and the process.
    violations: list[str] = Field(default_factory=list)
    #: The files named by the violations.
    files: list[str] = Field(default_factory=list)
    #: Files the agent wrote that a test tool loaded, found identical to that tool's release on
    #: the package index (a correct solution that upgraded pip, say): not counted as its code.
    from_index: list[str] = Field(default_factory=list)
    #: Test files collected outside /tests that are copies of the hidden tests the test command
    #: made (same content, written by none of the agent's code): their tests count.
    test_copies: list[str] = Field(default_factory=list)
    #: Every file of the agent's (or written during the run by a process that ran the agent's
    #: code) that a process of the verification opened, and what it was for that process:
    #: ``path: role (program)``, roles from :mod:`._reads` (``executed``, ``read by a shell``,
    #: ``Python start-up configuration``... count; ``data``, ``distribution metadata``,
    #: ``system data`` do not). What verification touched of the agent's, for a reader and for
    #: the self-attack tests.
    agent_reads: list[str] = Field(default_factory=list)
    #: The reward file the host read, and who wrote it (by inode, not by name).
    reward_writer: str = ""
    #: The attack surface this run showed: every directory a process of the verification listed,
    #: or opened a file in, before the tests began (outside the verifier's own mounts, /proc,
    #: /sys and /dev). A file the agent plants there is either never read or judged (the
    #: self-attack tests plant one in each).
    surface: list[str] = Field(default_factory=list)


# -- the audit ------------------------------------------------------------------------------------
@dataclass
class _Proc:
    info: TracedProcess
    verification: bool
    parent: _Proc | None
    #: The first agent code it ran (or its parent had run when it started): (file, why).
    taint: tuple[str, str] | None = None
    taint_seq: int = 0

    def taint_text(self) -> str:
        return f"{self.taint[0]} ({self.taint[1]})" if self.taint else ""

    exe: str = ""
    #: What its current program is (:func:`._reads.program_kind` of the files executed by its
    #: latest ``execve``: a script, then its interpreter): "python", "shell", "tool".
    kinds: set[str] = field(default_factory=set)
    #: Its latest event was an exec (the next exec belongs to the same ``execve``).
    in_exec: bool = False
    #: It has run an ``execve`` of its own (before that, a forked child is its parent's program).
    execed: bool = False
    #: Started, directly or not, by a pytest session after its tests began: what the tests run
    #: (the task's subject), not the verifier's chain.
    subject: bool = False
    #: It (or a parent before it started) ran code of the agent's, not only read configuration:
    #: it is running the agent's program from then on.
    ran_agent_code: bool = False


@dataclass
class _Write:
    seq: int
    tainted: str | None


@dataclass
class Auditor:
    """Decides what a trace means for one verification run (module docstring)."""

    trace: Trace
    view: SandboxView
    #: Host pids that started the verification (bwrap, and its pid 1 in the new namespace).
    roots: set[int]
    #: Host pids of the processes that reported a pytest session on the results channel.
    session_pids: set[int]
    config_file: str = ""
    rootdir: str = ""
    #: Tells an agent-written file that is a test tool's release from the package index
    #: (``_index``); None: nothing is exempt.
    index: IndexCheck | None = None
    #: (device, inode) of the reward file the host read (None: none was read).
    reward: tuple[int, int] | None = None
    _procs: dict[tuple[int, int], _Proc] = field(default_factory=dict)
    _writes: dict[tuple[int, int], _Write] = field(default_factory=dict)
    _reads: dict[tuple[str, str, str], None] = field(default_factory=dict)
    _site_dirs: set[str] = field(default_factory=set)
    #: seq -> (origin, code) of every open, as :meth:`_on_open` classified it.
    _opened: dict[int, tuple[str | None, bool]] = field(default_factory=dict)
    #: Agent-written files found to be a test tool's release from the index.
    genuine: list[str] = field(default_factory=list)
    #: session pid -> seq of its marker (its tests began), as the run reaches them.
    _markers: dict[int, int] = field(default_factory=dict)
    #: process key -> the kinds of the program its first ``execve`` ran (:meth:`_first_execs`).
    _first_exec: dict[tuple[int, int], set[str]] = field(default_factory=dict)

    def run(self) -> VerificationAudit:
        audit = VerificationAudit(
            traced=True,
            events=len(self.trace.events),
            agent_files=len(self.view.agent_paths),
            config_file=self.config_file,
            rootdir=self.rootdir,
        )
        violations = _Violations()
        if self.trace.overflow:
            violations.add("the file-access trace is incomplete (too many events)")
        sessions: dict[int, SessionRecord] = {}
        markers = self._markers
        self._site_dirs = _site_dirs(e.path for e in self.trace.events)
        self._first_exec = self._first_execs()
        began = min((e.seq for e in self.trace.events if e.path == MARKER), default=1 << 62)
        surface: dict[str, None] = {}
        for event in sorted(self.trace.events, key=lambda e: e.seq):
            proc = self._proc(event.pid, event.seq)
            if event.seq < began and proc.verification and len(surface) < MAX_NAMED:
                where = event.path if event.kind & LIST else posixpath.dirname(event.path)
                if not where.startswith(_NOT_SURFACE) and not self.view.is_verifier_mount(where):
                    surface.setdefault(where, None)
            if event.kind & (OPEN | EXEC):
                event = self._on_open(event, proc, violations)
                if event.pid in self.session_pids and proc.verification:
                    self._session_event(event, proc, sessions, markers, violations)
            if event.kind & WRITE:
                self._on_write(event, proc, violations)
        for pid in sorted(self.session_pids):
            self._check_session(pid, sessions.setdefault(pid, SessionRecord()), violations)
        audit.sessions = [sessions[p] for p in sorted(sessions)]
        audit.processes = len(self._procs)
        audit.agent_reads = [f"{path}: {what} ({who})" for path, what, who in self._reads]
        audit.surface = list(surface)
        if self.reward is not None:
            audit.reward_writer = self._check_reward(self.reward, violations)
        audit.violations, audit.files = violations.lines()
        return audit

    def _check_reward(self, identity: tuple[int, int], violations: _Violations) -> str:
        """The reward file the host read, by inode: written during this run, and only by
        processes of the verification that ran nothing of the agent's."""
        writers = [e for e in self.trace.events if e.kind & WRITE and (e.dev, e.ino) == identity]
        if not writers:
            violations.add("the reward file the host read was not written during the verification")
            return ""
        names = []
        for event in writers:
            proc = self._proc(event.pid, event.seq)
            names.append(self._who(proc))
            if not proc.verification:
                violations.add(
                    "the reward file was written by a process outside the verification", event.path
                )
            elif proc.taint is not None:
                violations.add(
                    f"the reward file was written by {self._who(proc)}, which had run agent code",
                    *proc.taint,
                )
        return ", ".join(dict.fromkeys(names))

    # -- per-event rules --------------------------------------------------------------------
    def _on_open(self, event: TraceEvent, proc: _Proc, violations: _Violations) -> TraceEvent:
        """What a process that opened or executed a file became (module docstring); returns the
        event under the name its file had when the verification began."""
        kinds, argv = proc.kinds, event.argv
        if event.kind & EXEC:
            proc.exe = proc.exe if proc.execed else event.path
            kind = program_kind(event.path)
            if not proc.in_exec:  # a new program: what it is now, not what it was
                proc.kinds = set()
            if kind:
                proc.kinds.add(kind)
            proc.in_exec = proc.execed = True
            kinds = proc.kinds
        else:
            future = None if proc.execed else self._first_exec.get(_key(proc.info))
            if future is not None:
                # a forked child opening a file before its exec: a redirection, the input of
                # the program it then runs (``sh < x`` runs x; ``check < /app/out`` reads data)
                kinds, argv = future, ()
            proc.in_exec = False
            if "python" in proc.kinds and _PIP_MODULE.search(event.path):
                proc.kinds.add("tool")  # python -m pip: a package manager from now on
        # an agent file is known by its identity, under the name it had when the verification
        # began (its code may rename or delete it as it runs)
        event = self._as_begun(event)
        origin = self._origin(event.path, event.dev, event.ino, event.seq)
        code = False
        if origin:
            what = role(
                event.path,
                kinds=kinds,
                executed=bool(event.kind & EXEC),
                head=event.head,
                argv=argv,
                cwd=event.cwd,
            )
            code = what in COUNTED
            if origin == AGENT and code and self._from_the_index(event):
                origin, what = None, "a test tool's release from the package index"
            self._note_read(event.path, what, proc)
            if origin and what in CONFIGURATION and self._runs_an_agent_script(event, proc):
                proc.ran_agent_code = True  # the agent's program, configured by its own files
            elif origin and what in CONFIGURATION and self._in_the_chain(proc):
                why = f"{self._who(proc)}, of the verification's own chain, read a file of the "
                violations.add(why + f"agent's as its {what}", event.path, origin)
            elif code:
                proc.ran_agent_code = True
        self._opened[event.seq] = (origin, code)
        if origin and code and proc.taint is None:
            proc.taint, proc.taint_seq = (event.path, origin), event.seq
        if origin and event.kind & EXEC and self._runs_the_test_command(proc):
            violations.add("the test command itself ran a program of the agent's", event.path,
                           origin)  # fmt: skip
        return event

    def _note_read(self, path: str, what: str, proc: _Proc) -> None:
        if len(self._reads) < MAX_NAMED:
            self._reads.setdefault((path, what, self._who(proc)), None)

    def _on_write(self, event: TraceEvent, proc: _Proc, violations: _Violations) -> None:
        """A file written: by whom (the taint it carries), and the verifier's own files."""
        tainted = proc.taint_text() if proc.verification else "outside the verification"
        known = self._writes.get((event.dev, event.ino))
        if known is not None and known.tainted:
            return  # once written by agent code, the file stays derived for the whole run
        self._writes[(event.dev, event.ino)] = _Write(event.seq, tainted or None)
        if not tainted:
            return
        in_tests = event.path == "/tests" or event.path.startswith("/tests/")
        if in_tests and event.pid not in self.session_pids:  # pytest's own cache is allowed
            violations.add(
                f"{self._who(proc)} changed the verifier's copy of the tests after "
                f"running agent code ({tainted})",
                event.path,
            )

    def _check_session(self, pid: int, record: SessionRecord, violations: _Violations) -> None:
        """A session's process and the chain of programs that started it."""
        procs = [p for (q, _), p in self._procs.items() if q == pid]
        if not procs:
            violations.add(f"a pytest session (pid {pid}) was never seen running")
            return
        proc = procs[-1]
        if not proc.verification:
            violations.add(f"a pytest session (pid {pid}) ran outside the verification's "
                           "process tree")  # fmt: skip
            return
        record.program = proc.exe or proc.info.comm
        chain = self._ancestors(proc)
        record.chain = [a.exe or a.info.comm for a in reversed(chain)]
        for ancestor in chain:
            if ancestor.taint and ancestor.taint_seq < proc.info.first_seq:
                violations.add(f"{self._who(ancestor)} started a pytest session after running "
                               "agent code", *ancestor.taint)  # fmt: skip
                return

    # -- per-event rules --------------------------------------------------------------------
    def _session_event(
        self,
        event: TraceEvent,
        proc: _Proc,
        sessions: dict[int, SessionRecord],
        markers: dict[int, int],
        violations: _Violations,
    ) -> None:
        """What a pytest session opened: before its tests began, or after (module docstring)."""
        origin, code = self._opened.get(event.seq, (None, False))
        record = sessions.setdefault(event.pid, SessionRecord())
        path = event.path
        name = posixpath.basename(path)
        if path == MARKER:
            markers.setdefault(event.pid, event.seq)
            record.collected = True
            return
        collecting = event.pid in markers
        if name == "conftest.py" and path not in record.conftests:
            record.conftests.append(path)
        elif name in _CONFIG_NAMES and not collecting and path not in record.config_files:
            record.config_files.append(path)
        if ".dist-info/" in path:
            self._note_distribution(record, event, origin)
        if origin and origin != AGENT and not collecting:
            code = True  # written during the run by agent code: whatever its name now
        if not origin or not code:
            return
        session = f"a pytest session ({self._who(proc)})"
        if not collecting:
            violations.add(f"{session} loaded agent code before its tests began", path, origin)
        elif name == "conftest.py":
            violations.add(f"{session} loaded a conftest of the agent's", path, origin)
        elif _in_stdlib(path):
            violations.add(f"{session} loaded a standard-library module the agent changed",
                           path, origin)  # fmt: skip
        elif self.view.is_verifier_mount(path):
            violations.add(f"{session} loaded code of the verifier's own that a process running "
                           "agent code had written", path, origin)  # fmt: skip
        elif self._is_tool_module(path):
            violations.add(f"{session} loaded a test tool the agent changed (after its tests "
                           "began)", path, origin)  # fmt: skip
        elif path not in record.imported:
            record.imported.append(path)

    def _note_distribution(
        self, record: SessionRecord, event: TraceEvent, origin: str | None
    ) -> None:
        """A distribution whose metadata the session read, with where it came from."""
        head, _, _ = event.path.partition(".dist-info/")
        site, _, dist = head.rpartition("/")
        name, _, version = dist.partition("-")
        if any(e.startswith(f"{name} {version} ") for e in record.distributions):
            return
        if origin:
            kind = origin
        elif self.view.is_verifier_mount(event.path) or (event.dev, event.ino) in self._writes:
            kind = "installed by the test command"
        else:
            kind = "the image's"
        raw = self.view.read(f"{head}.dist-info/direct_url.json", 20_000)
        if raw:
            try:
                url = str(json.loads(raw).get("url", "?"))
            except (ValueError, AttributeError):
                url = "?"
            kind += f", from {url}"
        record.distributions.append(f"{name} {version} ({kind}) in {site}")

    # -- provenance -------------------------------------------------------------------------
    def _as_begun(self, event: TraceEvent) -> TraceEvent:
        """``event`` under the path its file had when the verification began, if the agent
        wrote it; ``(deleted)`` dropped from a path read after the file was removed."""
        path = self.view.agent_inodes.get((event.dev, event.ino))
        if path is None:
            path = event.path.removesuffix(" (deleted)")
        if path == event.path:
            return event
        return dataclasses.replace(event, path=path)

    def _origin(self, path: str, dev: int, ino: int, seq: int) -> str | None:
        """Why a file counts as the agent's when opened at ``seq`` (None: it does not)."""
        written = self._writes.get((dev, ino))
        if written is not None and written.seq < seq:
            return f"written by a process that ran {written.tainted}" if written.tainted else None
        if (dev, ino) in self.view.agent_inodes or self.view.agent_wrote(path):
            return AGENT
        return None

    def verifier_copy(self, path: str, hidden: bytes) -> bool:
        """``path`` holds ``hidden``'s bytes and nothing of the agent's wrote it (checked after
        the run: by its identity, against the agent's files and the run's writes)."""
        host, inner = self.view.host_path(path)
        identity = stat_in_root(host, inner)
        if identity is None or identity in self.view.agent_inodes:
            return False
        written = self._writes.get(identity)
        if written is None or written.tainted:  # not made by this run, or by agent code
            return False
        # what the sessions read, when they opened it (every write is traced: it was captured)
        expected = _sha256(hidden)
        events = [e for e in self.trace.events if (e.dev, e.ino) == identity]
        # an open its own process then wrote through is the writer's open, not a read (whether
        # the kernel merged it into the write's event depends on how soon the host read it)
        last_write = {e.pid: e.seq for e in events if e.kind & WRITE}
        reads = [e for e in events if e.kind == OPEN and e.seq > last_write.get(e.pid, 0)]
        return bool(reads) and all(e.digest == expected and not e.rewritten for e in reads)

    def _is_tool_module(self, path: str) -> bool:
        """A module of the test tools (pytest, what it needs, what the test scripts install),
        which pytest may import after its tests began (pygments, to colour a failure)."""
        if self.index is None:
            return False
        for site in self._site_dirs:
            if path.startswith(site + "/"):
                top = path[len(site) + 1 :].split("/", 1)[0]
                top = re.sub(r"\.(py|pyc|pth)$|\..*\.so$|\.so$", "", top)
                return top in self.index.tool_modules(self._site_dirs)
        return False

    def _from_the_index(self, event: TraceEvent) -> bool:
        """An agent-written file that is a test tool's release from the package index (judged
        by what it held when it was opened)."""
        if self.index is None:
            return False
        if event.rewritten:  # changed after it was opened: what was read cannot be named
            return False
        path = event.path
        captured = (event.digest, event.head) if event.digest else None
        if self.index.genuine(path, self._site_dirs, captured):
            if path not in self.genuine:
                self.genuine.append(path)
            return True
        return False

    # -- processes --------------------------------------------------------------------------
    def _proc(self, pid: int, seq: int, depth: int = 0) -> _Proc:
        info = self.trace.process_at(pid, seq)
        if info is None:
            info = TracedProcess(pid=pid, ppid=None, start=None, first_seq=seq)
        key = _key(info)
        found = self._procs.get(key)
        if found is not None:
            return found
        parent = None
        verification = pid in self.roots
        # the parent that forked it, as the kernel's process events told (a process that exited
        # before its /proc could be read, or one handed to pid 1 by a double fork, still has
        # its real parent); else the parent /proc showed when it was first seen
        ppid = self.trace.forks.get(pid) or info.ppid
        if ppid and not verification and depth < 64:
            parent = self._proc(ppid, info.first_seq, depth + 1)
            verification = parent.verification
        proc = _Proc(info=info, verification=verification, parent=parent)
        if parent is not None:
            began = self._markers.get(parent.info.pid)
            proc.subject = parent.subject or (began is not None and began < info.first_seq)
            proc.ran_agent_code = parent.ran_agent_code
            # until its own exec, a forked child is its parent's program (a subshell that
            # sources a file is the shell sourcing it)
            proc.kinds, proc.exe = set(parent.kinds), parent.exe
        if parent is not None and parent.taint is not None:
            path, why = parent.taint
            proc.taint = (path, f"{why}, run by its parent {self._who(parent)}")
            proc.taint_seq = info.first_seq
        self._procs[key] = proc
        return proc

    def _first_execs(self) -> dict[tuple[int, int], set[str]]:
        """Per process, the kinds of the program its first ``execve`` ran (every file that one
        execve executed: a script, then its interpreter)."""
        found: dict[tuple[int, int], set[str]] = {}
        done: set[tuple[int, int]] = set()
        for event in sorted(self.trace.events, key=lambda e: e.seq):
            info = self.trace.process_at(event.pid, event.seq)
            if info is None:
                continue
            key = _key(info)
            if key in done:
                continue
            if event.kind & EXEC:
                found.setdefault(key, set()).add(program_kind(event.path))
            elif key in found:
                done.add(key)
        return {key: kinds - {""} for key, kinds in found.items()}

    def _runs_an_agent_script(self, event: TraceEvent, proc: _Proc) -> bool:
        """The opener's command line runs a script of the agent's (the test script's ``python3
        hello.py``): it is the agent's program from its start-up on, tainted, not the chain."""
        script = ""
        if "python" in proc.kinds:
            script = python_script(event.argv, event.cwd)
        elif "shell" in proc.kinds:
            script = shell_script(event.argv, event.cwd)
        return bool(script) and self.view.agent_wrote(script)

    def _in_the_chain(self, proc: _Proc) -> bool:
        """The verification's own chain: its processes that are not running the agent's code
        (a process configured by the agent's files still is, and every such file is named) nor
        the tests' subject (a pytest session has rules of its own)."""
        return (
            proc.verification
            and not proc.ran_agent_code
            and not proc.subject
            and proc.info.pid not in self.session_pids
        )

    def _runs_the_test_command(self, proc: _Proc) -> bool:
        """The process bwrap started the test command in (its shell), before any child."""
        parent = proc.parent
        return proc.verification and parent is not None and parent.info.pid in self.roots

    def _ancestors(self, proc: _Proc) -> list[_Proc]:
        out: list[_Proc] = []
        current = proc.parent
        while current is not None and len(out) < 64:
            out.append(current)
            if current.info.pid in self.roots:
                break
            current = current.parent
        return out

    @staticmethod
    def _who(proc: _Proc) -> str:
        return proc.exe or proc.info.comm or f"pid {proc.info.pid}"


#: Files a violation names in ``VerificationAudit.files`` (a replaced installer taints every
#: file it wrote: the first ones say enough).
MAX_NAMED = 400


class _Violations:
    """Violations grouped by what happened and why the files count as the agent's: one line
    each, naming the first file and how many more (a replaced installer taints every file it
    wrote; the reader needs the cause, not a thousand paths)."""

    def __init__(self) -> None:
        self._groups: dict[tuple[str, str], list[str]] = {}

    def add(self, what: str, path: str = "", origin: str = "") -> None:
        files = self._groups.setdefault((what, origin), [])
        if path and path not in files:
            files.append(path)

    def lines(self) -> tuple[list[str], list[str]]:
        lines, files = [], []
        for (what, origin), paths in self._groups.items():
            if not paths:
                lines.append(what)
                continue
            more = f" and {len(paths) - 1} more" if len(paths) > 1 else ""
            lines.append(f"{what}: {paths[0]} ({origin}){more}" if origin
                         else f"{what}: {paths[0]}{more}")  # fmt: skip
            files += [p for p in paths[:MAX_NAMED] if p not in files]
        return lines, files


def _key(info: TracedProcess) -> tuple[int, int]:
    """A process by its pid and its first event (pids are reused)."""
    return (info.pid, info.first_seq)


def _sha256(data: bytes) -> str:
    """A digest as the trace writes it (a wheel RECORD's form)."""
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def _site_dirs(paths: Iterable[str]) -> set[str]:
    """The site directories (``.../site-packages``, ``.../dist-packages``) the paths are in."""
    found = set()
    for path in paths:
        for marker in ("/site-packages/", "/dist-packages/"):
            head, sep, _ = path.partition(marker)
            if sep:
                found.add(head + sep.rstrip("/"))
    return found


def _in_stdlib(path: str) -> bool:
    """A module of the interpreter's standard library (not one of its site directories)."""
    parts = path.split("/")
    for i, part in enumerate(parts):
        if part.startswith("python3") and i > 0 and parts[i - 1] == "lib":
            rest = parts[i + 1 :]
            return bool(rest) and rest[0] not in ("site-packages", "dist-packages")
    return False


def audit_trace(
    trace: Trace,
    view: SandboxView,
    *,
    roots: Iterable[int],
    session_pids: Iterable[int],
    config_file: str = "",
    rootdir: str = "",
    index: IndexCheck | None = None,
    collected: dict[str, bytes] | None = None,
    reward: tuple[int, int] | None = None,
) -> VerificationAudit:
    """``collected``: test files the sessions collected outside /tests -> the content of the
    hidden file each claims to be (by its path's suffix); those that are copies the test command
    made (same bytes, and not the agent's or written by a process that ran agent code) are
    returned in ``test_copies``."""
    started = time.perf_counter()
    auditor = Auditor(
        trace, view, set(roots), set(session_pids), config_file, rootdir, index, reward
    )
    audit = auditor.run()
    audit.from_index = auditor.genuine[:MAX_NAMED]
    audit.test_copies = [path for path, hidden in sorted((collected or {}).items())
                         if auditor.verifier_copy(path, hidden)]  # fmt: skip
    audit.duration_s = round(time.perf_counter() - started, 4)
    return audit
