"""Every published value the card can draw, checked against the papers' own text."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest

from exploreval.profile import ReferenceMark, all_references, battery_parts

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "papers"
PAPERS = ROOT.parent / "shared" / "papers"
PAPER_FILES = {
    "bandits": "bandits-explore-in-context.txt",
    "grid": "grid-dag-explore-exploit-errors.txt",
    "tide": "tide-test-time-improvement.txt",
    "curiosity": "environmental-curiosity-solution-injection.txt",
    "task2quiz": "task2quiz-environment-understanding.txt",
}
REFERENCES = all_references()
MARKS = [
    (paper, i, mark) for paper, refs in REFERENCES.items() for i, mark in enumerate(refs.marks)
]


def test_every_paper_of_the_battery_has_reference_marks() -> None:
    assert {p.paper for p in battery_parts()} <= set(REFERENCES)
    assert all(len(refs.marks) > 0 for refs in REFERENCES.values())


def _printed_value(mark: ReferenceMark) -> float:
    number = float(re.sub(r"[%\s]", "", mark.printed))
    # a percentage (as printed with %, or a table in percent) is a fraction in exploreval
    return (
        number / 100 if "%" in mark.printed or mark.value * 100 == pytest.approx(number) else number
    )


@pytest.mark.parametrize(("paper", "index", "mark"), MARKS, ids=lambda v: str(v)[:30])
def test_mark_is_the_value_the_paper_prints_where_it_prints_it(
    paper: str, index: int, mark: ReferenceMark
) -> None:
    fixture = FIXTURES / mark.excerpt
    lines = fixture.read_text().splitlines()
    row = (mark.model_extra or {}).get("row")
    assert row is not None, f"{paper}[{index}] names no printed row"
    assert row in lines, f"{paper}[{index}]: its row is not a line of {fixture.name}"
    assert re.search(rf"(?<![\d.]){re.escape(mark.printed)}(?![\d])", row), (
        f"{paper}[{index}]: {mark.printed!r} is not in its row {row!r}"
    )
    assert mark.value == pytest.approx(_printed_value(mark), abs=1e-9)
    assert 0.0 <= mark.value <= 1.0 or mark.metric not in {"success", "tsr", "eus"}
    assert re.fullmatch(r"(Table|Figure) \d+(\([a-z]\))?", mark.source), mark.source


def _sums() -> dict[str, str]:
    pairs = (line.split() for line in (FIXTURES / "SHA256SUMS").read_text().splitlines())
    return {name: digest for digest, name in pairs}


@pytest.mark.parametrize("fixture", sorted({m.excerpt for _, _, m in MARKS}))
def test_every_excerpt_line_is_in_its_paper(fixture: str) -> None:
    """Against the paper's text where this checkout has it (``../shared/papers``); elsewhere
    against the digest the excerpt had when it was last checked so (``SHA256SUMS``, which
    ``test_sums_are_current`` rewrites only beside the papers)."""
    paper = next(p for p in PAPER_FILES if fixture.startswith(p))
    source = PAPERS / PAPER_FILES[paper]
    data = (FIXTURES / fixture).read_bytes()
    if source.exists():
        paper_lines = set(source.read_text().splitlines())
        for line in data.decode().splitlines():
            assert line in paper_lines or not line.strip(), f"{fixture}: {line[:80]!r} not in it"
    assert _sums().get(fixture) == hashlib.sha256(data).hexdigest(), (
        f"{fixture} changed since it was checked against {source.name}: run this test beside "
        "the papers (../shared/papers) and update tests/fixtures/papers/SHA256SUMS"
    )


def test_marks_name_their_excerpt_and_source_consistently() -> None:
    """A mark from Table N keeps its excerpt in that table's fixture (or a shared one)."""
    for paper, _, mark in MARKS:
        number = mark.source.split()[-1]
        assert mark.excerpt.startswith(paper)
        assert number in mark.excerpt or "-table" in mark.excerpt or "-figure" in mark.excerpt
