"""Text maps of Task2Quiz worlds: every room and every connection drawn exactly once, where the
world's grid positions put them, doors marked with their state, Stage-1 marks counted right, and
the size bounded. Generated worlds (no TextWorld), read back from the text by a small parser."""

from __future__ import annotations

import re
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from exploreval.suites.task2quiz._contract import Stage1StepFacts
from exploreval.suites.task2quiz._generate import generate_world
from exploreval.suites.task2quiz._map import ascii_map, path_lines, stage1_path

MARK = {"open": "o", "closed": "c", "locked": "L"}


def boxes(text: str, summary: dict[str, Any]) -> dict[str, tuple[int, int, int]]:
    """Room -> (name line, left border column, right border column), read from the text; each
    room's name line must occur exactly once, inside a closed box."""
    lines = text.split("\n")
    found = {}
    for room in summary["rooms"]:
        name = summary["names"][room]
        hits = [
            (i, m.start())
            for i, line in enumerate(lines)
            for m in re.finditer(r"\| " + re.escape(name) + r" *\|", line)
        ]
        assert len(hits) == 1, f"{name} drawn {len(hits)} times"
        i, left = hits[0]
        right = lines[i].index("|", left + 1)
        border = "+" + "-" * (right - left - 1) + "+"
        assert lines[i - 1][left : right + 1] == border and lines[i + 2][left : right + 1] == border
        found[room] = (i, left, right)
    return found


def at(lines: list[str], i: int, a: int, b: int) -> str:
    return lines[i][a:b] if i < len(lines) else ""


def check_map(summary: dict[str, Any], text: str) -> None:
    lines = text.split("\n")
    where = boxes(text, summary)
    pos = {r: tuple(p) for r, p in summary["positions"].items()}
    doors = {d: v["state"] for d, v in summary["doors"].items()}
    links = {frozenset((c["src"], c["dst"])): c["door"] for c in summary["connections"]}
    horizontal = vertical = 0
    for a in summary["rooms"]:
        for b in summary["rooms"]:
            (ax, ay), (bx, by) = pos[a], pos[b]
            ia, la, ra = where[a]
            ib, lb, rb = where[b]
            door = links.get(frozenset((a, b)), "none")
            if (bx, by) == (ax + 1, ay):  # b east of a: same name line, one gap apart
                assert ib == ia and lb > ra
                gap = at(lines, ia, ra + 1, lb)
                if door == "none":
                    assert gap.strip() == "", f"connector between unconnected {a} and {b}"
                else:
                    expected = "==[" + MARK[doors[door]] + "]==" if door else "=" * len(gap)
                    assert gap == expected
                    horizontal += 1
            if (bx, by) == (ax, ay - 1):  # b south of a: same columns, a's box above b's
                assert (la, ra) == (lb, rb) and ib > ia
                middle = (la + ra) // 2
                column = "".join(
                    at(lines, k, middle - 1, middle + 2) for k in range(ia + 3, ib - 1)
                )
                if door == "none":
                    assert column.strip() == "", f"connector between unconnected {a} and {b}"
                else:
                    mark = f"[{MARK[doors[door]]}]" if door else "||"
                    assert mark in column and column.count("||") >= 2
                    vertical += 1
    assert horizontal + vertical == len(summary["connections"])
    # each connection once: the connectors in the whole text are exactly these
    assert sum(len(re.findall(r"==\[.\]==|=======", line)) for line in lines) == horizontal
    for state, mark in MARK.items():
        assert text.count(f"[{mark}]") == sum(1 for s in doors.values() if s == state)


@settings(max_examples=80, deadline=None)
@given(difficulty=st.sampled_from(["easy", "medium", "hard"]), seed=st.integers(0, 2000))
def test_every_room_and_connection_is_drawn_exactly_once(difficulty: str, seed: int) -> None:
    summary = generate_world(difficulty, seed).summary()
    text = ascii_map(summary)
    check_map(summary, text)
    # bounded: 23 characters per grid column, 7 lines per grid row
    xs = [p[0] for p in summary["positions"].values()]
    ys = [p[1] for p in summary["positions"].values()]
    cols, rows = max(xs) - min(xs) + 1, max(ys) - min(ys) + 1
    assert max(len(line) for line in text.split("\n")) <= 23 * cols
    assert len(text.split("\n")) <= 7 * rows
    assert len(text) < 30_000


def test_a_removed_connection_disappears_from_the_map() -> None:
    summary = generate_world("medium", 3).summary()
    plain = next(c for c in summary["connections"] if c["door"] is None)
    fewer = {**summary, "connections": [c for c in summary["connections"] if c is not plain]}
    before, after = ascii_map(summary), ascii_map(fewer)
    check_map(fewer, after)
    old, new = before.split("\n"), after.split("\n")
    assert len(old) == len(new)
    width = max(map(len, old + new))
    changed = sum(
        a != b
        for x, y in zip(old, new, strict=True)
        for a, b in zip(x.ljust(width), y.ljust(width), strict=True)
    )
    assert changed == (7 if plain["direction"] in ("east", "west") else 6)  # "=======" or "||" x 3


def test_stage1_marks_count_first_visits_and_entries() -> None:
    summary = generate_world("easy", 1).summary()
    start = summary["start_room"]
    other = next(c["dst"] if c["src"] == start else c["src"] for c in summary["connections"]
                 if start in (c["src"], c["dst"]))  # fmt: skip

    def step(task: int, room: str) -> Stage1StepFacts:
        return Stage1StepFacts(task_index=task, command="go", feedback="", room=room)

    # task 0: start -> other -> start -> other; task 1 restarts at start: other
    steps = [step(0, other), step(0, start), step(0, other), step(1, start), step(1, other)]
    path = stage1_path(summary, steps)
    assert path.order == {start: 1, other: 2}
    assert path.entries == {other: 3, start: 1}
    assert path.tasks == [[start, other, start, other], [start, other]]
    text = ascii_map(summary, path)
    check_map(summary, text)
    assert "| S #1 x1" in text and "| #2 x3" in text
    never = [r for r in summary["rooms"] if r not in (start, other)]
    assert text.count("| -  ") == len(never)
    lines = path_lines(summary, path, ["Go there.", "Again."], [True, False])
    names = summary["names"]
    assert lines == [
        f"task 1 won  Go there.  rooms: {names[start]} > {names[other]} > {names[start]} > {names[other]}",
        f"task 2 lost Again.  rooms: {names[start]} > {names[other]}",
    ]
