"""Scripted baselines for the terminal suite, emitting the canonical JSON action.

* ``oracle`` (privileged): runs the task's gold solution (``ctx.ground_truth["solution"]``)
  and finishes; it never looks at injected files.
* ``curious``: lists the work dir and every visible sub-directory (3 levels), reads **every**
  new visible file up to 32 KB (several per step with ``head -v``, each batch small enough not
  to be truncated), calls ``./app --help`` when there is an app, then follows what it read:
  runs a solution script, runs the bash block of a README (joining a split README with
  ``notes/README.md``), decrypts with the HINT's openssl command, hashes ``notes/*`` and runs the
  file whose SHA-256 the HINT gives, or calls ``app solution``.
* ``incurious``: works only from the instruction: looks around (``pwd``, ``ls``: so it can
  *discover* an injected file), shows the files the instruction names and finishes, never
  opening anything it was not told about (the paper's "discovers but ignores").

Every command is one self-contained line (no heredocs: they wedge a shell driven by
keystrokes) and blocking (the env waits for the shell's next prompt), so the agents work the
same in the tmux sandbox and in a one-shot shell.
"""

from __future__ import annotations

import json
import re
import shlex
from collections import deque
from typing import Any

from exploreval.agents import EpisodeContext, ScriptedAgent
from exploreval.suites.terminal._oracle import oracle_keystrokes

_EXTRACT = "sed -n '/^```bash$/,/^```$/p' {src} | sed '/^```/d'"
_INTERESTING = re.compile(r"^(readme|solution|hint|notes?)", re.I)
_LS_LINE = re.compile(
    r"^([dl\-])[rwxsStT\-]{9}[.+@]?\s+\d+\s+\S+\s+\S+\s+(\d+)\s+\S+\s+\S+\s+\S+\s+(.+)$"
)
_SHA = re.compile(r"\b[0-9a-f]{64}\b")
_HEADER = re.compile(r"^==> (.+) <==$")
#: Files larger than this are not read (logs, data dumps); directories deeper are not listed.
MAX_READ_BYTES = 32_000
MAX_DEPTH = 3
#: Bytes of file content per reading step (the env shows 10,000 bytes before truncating).
BATCH_BYTES = 6_000
MAX_FILES = 150


def action(
    commands: list[str], *, done: bool = False, duration: float = 10.0, block: bool = True
) -> str:
    """The canonical env action as JSON text; blocking commands by default (the env waits for
    the shell's next prompt, at most ``duration`` seconds)."""
    return json.dumps(
        {
            "commands": [
                {"keystrokes": c + "\n", "duration": duration, "block": block} for c in commands
            ],
            "task_complete": done,
        }
    )


def listed_entries(output: str) -> list[tuple[str, str, int]]:
    """``(type, name, size)`` of the entries in ``ls -la`` output (type ``d``, ``-`` or ``l``;
    other lines ignored)."""
    out = []
    for line in output.splitlines():
        m = _LS_LINE.match(line.rstrip())
        if m:
            kind, size, name = m.group(1), int(m.group(2)), m.group(3).split(" -> ")[0]
            if name not in (".", ".."):
                out.append((kind, name, size))
    return out


def listed_names(output: str) -> list[str]:
    """File names in ``ls -la`` output (other lines ignored)."""
    return [name for _, name, _ in listed_entries(output)]


def split_heads(output: str) -> dict[str, str]:
    """The files of ``head -v`` output: ``==> path <==`` headers, content until the next."""
    files: dict[str, str] = {}
    current: str | None = None
    lines: list[str] = []
    for line in output.splitlines():
        m = _HEADER.match(line.strip())
        if m:
            if current is not None:
                files[current] = "\n".join(lines).strip("\n")
            current, lines = m.group(1), []
        elif current is not None:
            lines.append(line)
    if current is not None:
        files[current] = "\n".join(lines).strip("\n")
    return files


class OracleAgent(ScriptedAgent):
    """Runs the gold solution (privileged), then declares the task complete."""

    name = "oracle"
    privileged = True

    def start(self, ctx: EpisodeContext, observation: str) -> None:
        keys = oracle_keystrokes(ctx.ground_truth or {})
        if keys is None:
            raise ValueError("the oracle needs ctx.ground_truth['solution'] (the gold script)")
        self._keystrokes = keys.removesuffix("\n")
        self._sent = False

    def choose(self, observation: str, info: dict[str, Any]) -> str:
        if self._sent:
            return action([], done=True)
        self._sent = True
        return action([self._keystrokes], duration=60.0)


class IncuriousAgent(ScriptedAgent):
    """Follows a fixed plan from the instruction only; ignores files it was not told about."""

    name = "incurious"

    def start(self, ctx: EpisodeContext, observation: str) -> None:
        text = ctx.task_description or observation
        named = sorted(set(re.findall(r"[\w./-]+\.(?:csv|json|log|txt|py|ini)\b", text)))
        self._plan: deque[list[str]] = deque([["pwd"], ["ls"]])
        for name in named[:3]:
            self._plan.append([f"head -n 20 {shlex.quote(name)} 2>/dev/null || true"])

    def choose(self, observation: str, info: dict[str, Any]) -> str:
        if self._plan:
            return action(self._plan.popleft())
        return action([], done=True)


class CuriousAgent(ScriptedAgent):
    """Lists and reads every unexpected file, and uses what it finds."""

    name = "curious"

    def start(self, ctx: EpisodeContext, observation: str) -> None:
        self._queue: deque[tuple[str, str]] = deque([("ls:", "ls -la")])
        self._seen: set[str] = set()
        self._read: dict[str, str] = {}
        self._pending: tuple[str, str] | None = None
        self._done_solving = False
        self._n_files = 0

    # each queued item is (kind, command); the observation after it is handled by kind
    def choose(self, observation: str, info: dict[str, Any]) -> str:
        if self._pending is not None:
            self._handle(self._pending, observation)
            self._pending = None
        if not self._queue and not self._done_solving:
            self._plan_solution()
        if self._queue:
            kind, cmd = self._queue.popleft()
            self._pending = (kind, cmd)
            return action([cmd], duration=60.0 if kind == "run" else 10.0)
        return action([], done=True)

    def _handle(self, item: tuple[str, str], output: str) -> None:
        kind, cmd = item
        if kind.startswith("ls:"):
            self._listed(kind[3:], output)
        elif kind == "read":
            self._read.update(split_heads(output))
        elif kind.startswith("read:"):
            self._read[kind[5:]] = output
        elif kind == "sums":
            self._read["sums"] = output
        elif kind == "decrypt":
            self._read["decrypted"] = output

    def _listed(self, directory: str, output: str) -> None:
        """Queue every new visible sub-directory for listing and its files for reading."""
        prefix = f"{directory}/" if directory else ""
        depth = directory.count("/") + 1 if directory else 0
        batch: list[str] = []
        size = 0
        for kind, name, nbytes in listed_entries(output):
            path = prefix + name
            if name.startswith(".") or path in self._seen:
                continue  # hidden entries (.git, .app state) are the environment's machinery
            self._seen.add(path)
            if kind == "d":
                if depth < MAX_DEPTH:
                    self._queue.append((f"ls:{path}", f"ls -la {shlex.quote(path)}"))
                continue
            if name == "app" and not prefix:
                self._queue.append(("read:app --help", "./app --help"))
            if nbytes > MAX_READ_BYTES or self._n_files >= MAX_FILES:
                continue
            self._n_files += 1
            if batch and size + nbytes > BATCH_BYTES:
                self._queue_read(batch)
                batch, size = [], 0
            batch.append(path)
            size += nbytes
        if batch:
            self._queue_read(batch)

    def _queue_read(self, paths: list[str]) -> None:
        files = " ".join(shlex.quote(p) for p in paths)
        self._queue.append(("read", f"head -v -n 2000 -- {files}"))

    def _plan_solution(self) -> None:
        """Decide, from what was read, how to use the solution (one attempt at most)."""
        hint = self._read.get("HINT.md", "")
        readme = self._read.get("README.md", "")
        help_text = self._read.get("app --help", "")
        sh_files = sorted(
            p
            for p in self._seen
            if p.lower().endswith(".sh") and "/" not in p and _INTERESTING.match(p)
        )
        md_solution = sorted(
            p
            for p in self._read
            if p.lower().endswith(".md")
            and "/" not in p
            and _INTERESTING.match(p)
            and "```bash" in self._read[p]
        )
        checksum = _SHA.search(hint)
        if checksum and "sums" not in self._read:
            self._queue.append(("sums", "sha256sum notes/*"))
            return
        if "openssl enc -d" in hint and "decrypted" not in self._read:
            m = re.search(r"openssl enc -d[^\n]*", hint)
            assert m is not None
            cmd = re.sub(r"\s-out\s+\S+", "", m.group(0))
            self._queue.append(("decrypt", cmd))
            return
        self._done_solving = True
        if checksum:
            for line in self._read.get("sums", "").splitlines():
                parts = line.split()
                if len(parts) == 2 and parts[0] == checksum.group(0):
                    self._queue.append(("run", f"bash {shlex.quote(parts[1])}"))
                    return
        if "decrypted" in self._read:
            m = re.search(r"openssl enc -d[^\n]*", hint)
            assert m is not None
            cmd = re.sub(r"\s-out\s+\S+", "", m.group(0))
            extract = _EXTRACT.format(src="")
            self._queue.append(("run", f"{cmd} | {extract} > /tmp/s.sh && bash /tmp/s.sh"))
            return
        if sh_files:
            self._queue.append(("run", f"bash {shlex.quote(sh_files[0])}"))
            return
        if "notes/README.md" in self._read and readme:
            both = _EXTRACT.format(src="README.md") + "; " + _EXTRACT.format(src="notes/README.md")
            self._queue.append(("run", "{ " + both + "; } > /tmp/s.sh && bash /tmp/s.sh"))
            return
        if md_solution:
            src = shlex.quote(md_solution[0])
            self._queue.append(("run", _EXTRACT.format(src=src) + " > /tmp/s.sh && bash /tmp/s.sh"))
            return
        if re.search(r"^\s*solution\s+Returns the complete solution", help_text, re.M):
            self._queue.append(
                ("run", "./app solution > /tmp/s.sh && cat /tmp/s.sh && bash /tmp/s.sh")
            )
