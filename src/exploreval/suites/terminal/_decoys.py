"""Level-5 decoys: 50 wrong variants of the gold solution, each verified to fail the tests.

Verification runs the tests, so it happens once per task and solution, not per episode: the
built-in tasks ship the chosen candidate ids in ``tasks/<id>/decoys.json`` (rebuilt with
``python -m exploreval.suites.terminal._decoys``); other tasks get them computed on first use
and cached next to the materialised work dir. ``inject`` only regenerates the texts from the ids
and checks them against the recorded SHA-256s, so a changed generator cannot silently change
the decoys.

A decoy set also records what it was verified against (``inputs_sha256``: the task's folder, or
its tests and work dir, its test command and environment): a decoy that failed yesterday's tests proves nothing
about today's, so a set whose inputs changed is stale and rebuilt (or refused) like one whose
solution changed.
"""

from __future__ import annotations

import hashlib
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from exploreval.suites.terminal._bwrap_check import check_task
from exploreval.suites.terminal._contract import TerminalTask
from exploreval.suites.terminal._tasks import cache_root
from exploreval.suites.terminal._variants import (
    body_of,
    build_candidate,
    candidate_ids,
    mutation_sites,
    seed_of,
)

N_DECOYS = 50
GENERATOR_VERSION = 2
MAX_CANDIDATES = 600


class DecoySet(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: int = 1
    generator_version: int = GENERATOR_VERSION
    task_id: str
    solution_sha256: str
    candidates: tuple[str, ...]
    sha256: tuple[str, ...]
    #: ``verification_inputs_sha256`` of the task when the decoys were verified ("" before it
    #: was recorded: such a set is stale).
    inputs_sha256: str = ""
    tried: int = 0
    discarded_passing: int = 0
    discarded_unsafe: int = 0


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


#: Files of a task's folder that do not decide a verdict: the decoys themselves, the gold
#: solution (``solution_sha256`` covers it) and the task's description (its test command and
#: environment are hashed as the task has them).
_NOT_VERIFICATION = frozenset({"decoys.json", "solution.sh", "task.yaml", "task.toml"})


def _tree_digest(
    digest: Any, root: Path | None, label: str, skip: frozenset[str] = frozenset()
) -> None:
    """Fold every file under ``root`` (relative path, executable bit, bytes) into ``digest``;
    ``skip``: names left out at the top level."""
    digest.update(f"{label}\0".encode())
    if root is None:
        digest.update(b"none\0")
        return
    for path in sorted(p for p in root.rglob("*") if p.is_file() or p.is_symlink()):
        rel = path.relative_to(root).as_posix()
        if rel in skip or "__pycache__" in rel.split("/"):
            continue  # __pycache__: written by a run of the tests, not part of the task
        link = path.is_symlink()
        body = f"-> {path.readlink()}".encode() if link else path.read_bytes()
        executable = b"x" if not link and path.stat().st_mode & 0o111 else b"-"
        digest.update(f"{rel}\0".encode() + executable + len(body).to_bytes(8, "big") + body)


def verification_inputs_sha256(task: TerminalTask) -> str:
    """SHA-256 of what decides whether a script passes the task's tests besides the script: the
    task's folder (its Dockerfile, starting files and tests), else its work dir and tests as
    given; its test command and environment.

    The folder, not the work dir made from it: a built-in task's work dir is materialised by
    running its Dockerfile, and a git repository made there differs in every byte of its
    objects and index from one machine (or minute) to the next."""
    digest = hashlib.sha256()
    if task.source_dir is not None and task.source_dir.is_dir():
        _tree_digest(digest, task.source_dir, "source", _NOT_VERIFICATION)
    else:
        _tree_digest(digest, task.tests_dir, "tests")
        _tree_digest(digest, task.workdir, "workdir")
    digest.update(f"command\0{task.test_command}\0".encode())
    for key, value in sorted(task.env.items()):
        digest.update(f"env\0{key}={value}\0".encode())
    return digest.hexdigest()


def is_current(decoys: DecoySet, task: TerminalTask, inputs: str | None = None) -> bool:
    """The set was verified for this solution, generator and these tests and starting files
    (``inputs``: the task's ``verification_inputs_sha256`` when the caller has it already)."""
    assert task.solution is not None
    return (
        decoys.solution_sha256 == sha256_text(task.solution)
        and decoys.generator_version == GENERATOR_VERSION
        and decoys.inputs_sha256 == (inputs or verification_inputs_sha256(task))
    )


def _shipped_path(task: TerminalTask) -> Path | None:
    if task.source_dir is not None and (task.source_dir / "decoys.json").is_file():
        return task.source_dir / "decoys.json"
    return None


def _cache_path(task: TerminalTask) -> Path:
    assert task.solution is not None
    return cache_root() / "decoys" / f"{task.id}-{sha256_text(task.solution)[:16]}.json"


def decoy_texts(task: TerminalTask, decoys: DecoySet) -> list[str]:
    """Regenerate the decoy scripts from their ids; refuse when they no longer match."""
    assert task.solution is not None
    texts: list[str] = []
    for cid, digest in zip(decoys.candidates, decoys.sha256, strict=True):
        text = build_candidate(task.solution, cid)
        if text is None or sha256_text(text) != digest:
            raise RuntimeError(
                f"decoy {cid} of task {task.id} no longer matches its recorded checksum "
                "(generator or solution changed): rebuild with "
                f"`python -m exploreval.suites.terminal._decoys {task.source_dir or task.id}`"
            )
        texts.append(text)
    return texts


def load_decoys(task: TerminalTask, *, build: bool = True) -> DecoySet:
    """The task's verified decoy set: shipped, cached, or (``build``) computed now."""
    if not task.solution:
        raise ValueError(f"task {task.id} has no gold solution: level 5 needs one")
    stale = False
    inputs = verification_inputs_sha256(task)  # the task's files, read once for both sets
    for path in (_shipped_path(task), _cache_path(task)):
        if path is not None and path.is_file():
            decoys = DecoySet.model_validate_json(path.read_text())
            if is_current(decoys, task, inputs):
                return decoys
            stale = True
    if not build:
        why = (
            "its decoys were verified against another solution, generator, tests or work dir"
            if stale
            else "none were built"
        )
        raise FileNotFoundError(f"no verified decoys for task {task.id}: {why}")
    decoys = build_decoys(task)
    path = _cache_path(task)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(decoys.model_dump_json(indent=1))
    tmp.replace(path)
    return decoys


def build_decoys(task: TerminalTask, *, workers: int = 2, fast: bool | None = None) -> DecoySet:
    """Draw candidates in their seeded order; keep the first 50 safe ones that fail the tests."""
    if not task.solution:
        raise ValueError(f"task {task.id} has no gold solution")
    solution = task.solution
    use_fast = fast if fast is not None else task.source_layout == "builtin"
    # A decoy means "fails where the gold passes": without a passing gold, failing proves nothing.
    gold = check_task(task, solution, fast=use_fast, timeout_s=60.0)
    if not gold.passed:
        raise ValueError(
            f"task {task.id}: the gold solution does not pass its tests "
            f"({'timed out' if gold.timed_out else 'tests failed'}), so no decoy is built"
        )
    _, body = body_of(solution)
    ids = candidate_ids(len(mutation_sites(body)), seed_of(task.id))[:MAX_CANDIDATES]
    kept: list[tuple[str, str]] = []
    seen = {sha256_text(solution)}
    tried = passing = unsafe = 0

    def verdict(item: tuple[str, str]) -> tuple[str, str, bool, bool]:
        cid, text = item
        result = check_task(task, text, fast=use_fast, timeout_s=20.0)
        return cid, text, result.passed, result.timed_out

    def candidates() -> list[tuple[str, str]]:
        nonlocal unsafe
        out: list[tuple[str, str]] = []
        for cid in ids:
            text = build_candidate(solution, cid)
            if text is None:
                unsafe += 1
                continue
            digest = sha256_text(text)
            if digest not in seen:
                seen.add(digest)
                out.append((cid, text))
        return out

    queue = candidates()
    batch = 4 * workers
    with ThreadPoolExecutor(max_workers=workers) as pool:
        for start in range(0, len(queue), batch):
            for cid, text, passed, timed_out in pool.map(verdict, queue[start : start + batch]):
                tried += 1
                if timed_out:
                    unsafe += 1
                elif passed:
                    passing += 1
                elif len(kept) < N_DECOYS:
                    kept.append((cid, text))
            if len(kept) >= N_DECOYS:
                break
    if len(kept) < N_DECOYS:
        raise RuntimeError(
            f"task {task.id}: only {len(kept)} of {N_DECOYS} wrong variants fail the tests after "
            f"{tried} tries; the gold solution is too short to mutate (add steps or tests)"
        )
    return DecoySet(
        task_id=task.id,
        solution_sha256=sha256_text(solution),
        inputs_sha256=verification_inputs_sha256(task),
        candidates=tuple(c for c, _ in kept),
        sha256=tuple(sha256_text(t) for _, t in kept),
        tried=tried,
        discarded_passing=passing,
        discarded_unsafe=unsafe,
    )


def main(argv: list[str]) -> int:
    """Rebuild ``decoys.json`` for built-in tasks (all, or the ids given)."""
    from exploreval.suites.terminal._builtin import builtin_tasks

    wanted = set(argv)
    for task in builtin_tasks():
        if wanted and task.id not in wanted:
            continue
        decoys = build_decoys(task)
        assert task.source_dir is not None
        (task.source_dir / "decoys.json").write_text(decoys.model_dump_json(indent=1) + "\n")
        print(
            f"{task.id}: {len(decoys.candidates)} decoys from {decoys.tried} runs "
            f"({decoys.discarded_passing} still passed, {decoys.discarded_unsafe} unsafe)",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
