"""The gold solution run as the task's own harness runs it.

Harbor's oracle uploads the task's whole ``solution/`` folder to ``/solution`` and runs
``solve.sh`` there (``chmod +x /solution/solve.sh && /solution/solve.sh``, from the image's
work dir, with ``DEBIAN_FRONTEND=noninteractive`` and the task's ``[solution] env``): a gold
that copies ``solution/files/...`` or applies ``solution/patches/...`` reads its siblings
there. Terminal-Bench 1's oracle writes ``solution.sh`` (or the commands of ``solution.yaml``)
to a file and runs it with bash in the pane.

The folder travels with the episode's ground truth as one archive (gzip tar, base64), made once
at load from the task's files as they are then: deterministic (names sorted, times, owners
zeroed, modes kept), symbolic links kept as links (never followed out of the task's folder),
and typed into the pane through a here-document, as the script alone always was.
"""

from __future__ import annotations

import base64
import gzip
import io
import re
import shlex
import tarfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from exploreval.suites.terminal._errors import TaskFormatError

#: Where Harbor's oracle puts the solution folder.
HARBOR_SOLUTION_DIR = "/solution"
#: Above this (compressed), the folder is not carried: typing it into the pane would take
#: longer than most golds run. The task then says so in its notes.
MAX_ARCHIVE_BYTES = 8 << 20
GOLD_MARKER = "EXPLOREVAL_GOLD_EOF"
#: Where a Terminal-Bench gold solution is written before it runs (Terminal-Bench's oracle
#: copies it to ``/oracle/solution.sh``; ``/tmp`` is writable in every kind of sandbox). Its
#: name spells no injected artefact's name (``solution.sh``...), or the paper's interaction
#: rule, a string match on the commands, would count the privileged agent as interacting.
GOLD_SCRIPT = "/tmp/exploreval-gold/gold.sh"
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_TEMPLATE = re.compile(r"\$\{[^}]*\}")


def solution_archive(folder: Path) -> tuple[str | None, str | None]:
    """(the folder as a base64 gzip tar, or None; a note when something was left out).

    Regular files, directories and symbolic links are kept; anything else (a socket, a FIFO)
    is left out and named."""
    buffer = io.BytesIO()
    skipped: list[str] = []
    with (
        gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0) as gz,
        tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar,
    ):
        for path in sorted(folder.rglob("*")):
            rel = path.relative_to(folder).as_posix()
            if not (path.is_symlink() or path.is_dir() or path.is_file()):
                skipped.append(rel)
                continue
            info = tar.gettarinfo(str(path), arcname=rel)
            info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, "", ""
            if info.isfile():
                with path.open("rb") as data:
                    tar.addfile(info, data)
            else:
                tar.addfile(info)
    size = buffer.tell()
    note = f"solution/: left out (not a file, directory or link): {', '.join(skipped)}"
    if size > MAX_ARCHIVE_BYTES:
        return None, (
            f"solution/ is {size / 2**20:.1f} MB compressed, above the {MAX_ARCHIVE_BYTES >> 20} "
            "MB the oracle types into the pane: the gold runs solve.sh alone"
        )
    return base64.b64encode(buffer.getvalue()).decode(), note if skipped else None


def solution_env(table: Any, where: Path) -> tuple[dict[str, str], list[str]]:
    """Harbor's ``[solution] env``: (the variables the oracle sets, notes). A value that names
    the host's environment (``${VAR}``, which Harbor resolves on its host) is not carried: the
    gold's command line is typed into the pane and kept in the episode's log, so a secret
    would be written there."""
    if table is None:
        return {}, []
    if not isinstance(table, dict):
        raise TaskFormatError(f"{where}: [solution] env must be a table of strings")
    env: dict[str, str] = {}
    notes: list[str] = []
    for key, value in table.items():
        if not _ENV_NAME.match(str(key)) or not isinstance(value, str | int | float | bool):
            raise TaskFormatError(
                f"{where}: [solution] env.{key}: expected a NAME = string entry, got {value!r}"
            )
        if isinstance(value, str) and _TEMPLATE.search(value):
            notes.append(
                f"[solution] env.{key} names the host's environment ({value}); not carried "
                "(the gold's command line is logged): set it in the image if the gold needs it"
            )
            continue
        env[str(key)] = str(value).lower() if isinstance(value, bool) else str(value)
    return env, notes


def gold_keystrokes(
    solution: str, *, archive: str | None = None, env: dict[str, str] | None = None
) -> str:
    """Keystrokes that run the gold as the task's harness does, as one command line (its
    here-document after it: the pane's next prompt is the gold's end).

    Without ``archive``: Terminal-Bench's oracle, ``solution`` written to a file and run as
    ``bash <file>`` (standard input the terminal, as there). With it: Harbor's, the folder
    unpacked at ``/solution`` and ``solve.sh`` run there. The data goes through the
    here-document in base64: text typed into an interactive shell is read by readline, where a
    TAB is completion (terminal-bench-core's ``write-compressor``: its gold's tab-indented Rust
    came out as ``dout.push``)."""
    if archive is None:
        data = base64.encodebytes(solution.encode()).decode()
        folder = GOLD_SCRIPT.rsplit("/", 1)[0]
        return (
            f"mkdir -p {folder} && base64 -d > {GOLD_SCRIPT} <<'{GOLD_MARKER}' && bash "
            f"{GOLD_SCRIPT}\n{data}{GOLD_MARKER}\n"
        )
    lines = "\n".join(archive[i : i + 76] for i in range(0, len(archive), 76))
    assignments = " ".join(
        f"{key}={shlex.quote(value)}"
        for key, value in {"DEBIAN_FRONTEND": "noninteractive", **(env or {})}.items()
    )
    target = HARBOR_SOLUTION_DIR
    return (
        f"mkdir -p {target} && base64 -d <<'{GOLD_MARKER}' | tar -xzf - -C {target} && "
        f"chmod +x {target}/solve.sh && {assignments} {target}/solve.sh\n"
        f"{lines}\n{GOLD_MARKER}\n"
    )


def oracle_keystrokes(truth: Mapping[str, Any]) -> str | None:
    """:func:`gold_keystrokes` for an episode's ground truth (``TerminalTask.oracle_truth``):
    what every privileged agent and bench types; None when the task ships no gold."""
    solution = truth.get("solution")
    if not solution:
        return None
    env = truth.get("solution_env") or {}
    return gold_keystrokes(str(solution), archive=truth.get("solution_archive"), env=dict(env))
