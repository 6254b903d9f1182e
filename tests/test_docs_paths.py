"""Every repository path the docs cite exists (issue 44: docs pointed at tests and sources that
had moved). A path is a token starting with ``src/exploreval/`` or ``tests/``; a glob must match
something; ``path::test`` names a test in that file, which must be defined there."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).parents[1]
DOCS = sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]
#: Paths inside a *task's* folder (Terminal-Bench and Harbor layouts), not this repository's.
TASK_LAYOUT = {"tests/test_outputs.py", "tests/run-tests.sh", "tests/test.sh"}
#: Paths a test writes when it runs (so absent from a fresh clone, whatever the test order): each
#: must name the test that writes it, and that test must spell the file's name.
GENERATED = {
    "tests/artifacts/inspect-view-*.png": (
        "tests/interop/test_inspect_view_browser.py",
        "inspect-view-",
    ),
}
_PATH = re.compile(r"(?<![\w/.-])((?:src/exploreval|tests)/[\w./*-]*[\w*])(::[\w\[\]-]+)?")


def _cited() -> list[tuple[str, str, str | None]]:
    found = []
    for doc in DOCS:
        for match in _PATH.finditer(doc.read_text(encoding="utf-8")):
            path, test = match.group(1), match.group(2)
            if path not in TASK_LAYOUT:
                found.append((doc.name, path, test[2:] if test else None))
    return found


def test_the_docs_cite_paths() -> None:
    assert len(_cited()) > 50  # the check sees the citations


def test_every_path_the_docs_cite_exists() -> None:
    missing = []
    for doc, path, test in _cited():
        if path in GENERATED:
            writer, spelled = GENERATED[path]
            if spelled not in ROOT.joinpath(writer).read_text(encoding="utf-8"):
                missing.append(f"{doc}: {path} (not written by {writer})")
            continue
        matches = list(ROOT.glob(path)) if "*" in path else [ROOT / path]
        if not any(m.exists() for m in matches):
            missing.append(f"{doc}: {path}")
        elif test and ROOT.joinpath(path).is_file():
            name = test.split("[")[0]
            if f"def {name}(" not in ROOT.joinpath(path).read_text(encoding="utf-8"):
                missing.append(f"{doc}: {path}::{test}")
    assert missing == []
