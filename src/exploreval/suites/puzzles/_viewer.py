"""The puzzles in the episode viewer: the board after each step, as SVG.

* FrozenLake: the lake from the ground truth, holes, target, the player and the path so far.
* Sudoku: givens in black, fills so far in blue (red when they contradict the solution).
* BlocksWorld: the stacks and the held block, read from the observation after the step (the env
  words states in fixed sentences, ``render_state``), next to the goal.
"""

from __future__ import annotations

import re
from typing import Any

from exploreval.core import EpisodeRecord
from exploreval.report import StepView, Svg

_CELL = 30


def _after(record: EpisodeRecord, index: int) -> str:
    """The observation after step ``index`` (-1: the first one)."""
    if index + 1 < len(record.steps):
        return record.steps[index + 1].observation
    return record.final_observation or (record.steps[-1].observation if record.steps else "")


def _frozenlake(record: EpisodeRecord, index: int) -> StepView | None:
    rows = record.ground_truth.get("map")
    if not isinstance(rows, list) or not rows:
        return None
    start = record.reset_info.get("position") or record.ground_truth.get("start") or [0, 0]
    path = [tuple(start)]
    for step in record.steps[: index + 1]:
        pos = step.info.get("position")
        if isinstance(pos, list | tuple) and len(pos) == 2:
            path.append(tuple(pos))
    n_rows, n_cols = len(rows), max(len(r) for r in rows)
    svg = Svg(n_cols * _CELL + 20, n_rows * _CELL + 20, title="FrozenLake board", scale=1.5)
    colours = {"H": "#1f3a5f", "G": "#3cb44b", "S": "#dbe9f6", "F": "#eef6fb"}
    for r, line in enumerate(rows):
        for c, ch in enumerate(line):
            svg.rect(
                10 + c * _CELL,
                10 + r * _CELL,
                _CELL,
                _CELL,
                fill=colours.get(ch, "#fff"),
                stroke="#999",
                class_=f"cell {ch}",
            )
            if ch in "HG":
                svg.text(
                    10 + (c + 0.5) * _CELL,
                    10 + (r + 0.6) * _CELL,
                    ch,
                    fill="#fff",
                    text_anchor="middle",
                )

    def centre(cell: tuple[Any, ...]) -> tuple[float, float]:
        return 10 + (cell[1] + 0.5) * _CELL, 10 + (cell[0] + 0.5) * _CELL

    if len(path) > 1:
        svg.polyline([centre(p) for p in path], stroke="#7b3fa0", stroke_width=2, class_="path")
    px, py = centre(path[-1])  # a ring, so the H or G under the player stays readable
    svg.circle(px, py, _CELL / 2 - 2, fill="none", stroke="#7b3fa0", stroke_width=3,
               class_="agent")  # fmt: skip
    moves = len(path) - 1
    return StepView("svg", str(svg), caption=f"after {moves} move{'s' * (moves != 1)}: "
                    f"player at row {path[-1][0]}, column {path[-1][1]}")  # fmt: skip


def _sudoku(record: EpisodeRecord, index: int) -> StepView | None:
    puzzle = record.ground_truth.get("puzzle")
    solution = record.ground_truth.get("solution")
    if not isinstance(puzzle, list) or not puzzle:
        return None
    n = len(puzzle)
    fills: dict[tuple[int, int], tuple[int, bool | None]] = {}
    for step in record.steps[: index + 1]:
        cell, value = step.info.get("cell"), step.info.get("value")
        if isinstance(cell, list | tuple) and len(cell) == 2 and value is not None:
            fills[(int(cell[0]), int(cell[1]))] = (int(value), step.info.get("correct"))
    box = int(round(n**0.5))
    svg = Svg(n * _CELL + 20, n * _CELL + 20, title="Sudoku board", scale=1.5)
    for r in range(n):
        for c in range(n):
            x, y = 10 + c * _CELL, 10 + r * _CELL
            svg.rect(x, y, _CELL, _CELL, fill="#fff", stroke="#bbb")
            given = puzzle[r][c] if c < len(puzzle[r]) else "_"
            if given not in "_0.":
                svg.text(x + _CELL / 2, y + _CELL * 0.65, given, text_anchor="middle", font_size=15)
            elif (r, c) in fills:
                value, correct = fills[(r, c)]
                wrong = correct is False or (
                    correct is None and isinstance(solution, list) and str(value) != solution[r][c]
                )
                svg.text(
                    x + _CELL / 2,
                    y + _CELL * 0.65,
                    value,
                    text_anchor="middle",
                    font_size=15,
                    fill="#d62728" if wrong else "#1f77b4",
                    class_="fill wrong" if wrong else "fill",
                )
    for k in range(0, n + 1, box):
        svg.line(10, 10 + k * _CELL, 10 + n * _CELL, 10 + k * _CELL, stroke="#000", stroke_width=2)
        svg.line(10 + k * _CELL, 10, 10 + k * _CELL, 10 + n * _CELL, stroke="#000", stroke_width=2)
    blanks = sum(1 for row in puzzle for ch in row if ch in "_0.")
    return StepView("svg", str(svg), caption=f"{len(fills)} of {blanks} blank cells filled")


_ON = re.compile(r"^(\w+) is on (\w+)\.$")
_TABLE = re.compile(r"^(\w+) is on the table\.$")
_HAND = re.compile(r"^(\w+) is in your hand\.$")


def blocks_from_text(text: str) -> tuple[list[list[str]], str | None]:
    """Stacks (bottom first) and the held block, from the env's state sentences."""
    on: dict[str, str] = {}
    table: list[str] = []
    held: str | None = None
    for line in text.splitlines():
        line = line.strip()
        if m := _TABLE.match(line):
            table.append(m.group(1))
        elif m := _ON.match(line):
            on[m.group(1)] = m.group(2)
        elif m := _HAND.match(line):
            held = m.group(1)
    above = {below: block for block, below in on.items()}
    stacks = []
    for base in table:
        stack, seen = [base], {base}
        while stack[-1] in above and above[stack[-1]] not in seen:
            stack.append(above[stack[-1]])
            seen.add(stack[-1])
        stacks.append(stack)
    return stacks, held


def _blocksworld(record: EpisodeRecord, index: int) -> StepView | None:
    text = record.initial_observation if index < 0 and not record.steps else _after(record, index)
    if index < 0 and record.steps:
        text = record.steps[0].observation
    stacks, held = blocks_from_text(text)
    if not stacks and held is None:
        return None
    goal_lines = record.ground_truth.get("goal") or []
    tallest = max((len(s) for s in stacks), default=1)
    width = max(len(stacks), 2) * 50 + 20
    svg = Svg(width, (tallest + 2) * 24 + 30, title="BlocksWorld state", scale=1.5)
    ground = (tallest + 1) * 24 + 14
    svg.line(4, ground, len(stacks) * 50 + 10, ground, stroke="#333", stroke_width=2)
    for k, stack in enumerate(stacks):
        for level, block in enumerate(stack):
            y = ground - (level + 1) * 24
            svg.rect(10 + k * 50, y, 40, 22, fill="#f5a623", stroke="#333", class_="block")
            svg.text(30 + k * 50, y + 15, block, text_anchor="middle")
    if held is not None:
        svg.text(10, 14, "in hand:")
        svg.rect(60, 2, 40, 20, fill="#9ecae1", stroke="#333", class_="block held")
        svg.text(80, 16, held, text_anchor="middle")
    # the goal goes in the caption (HTML wraps it), never beside the stacks (it would clip)
    goal = "; ".join(str(g).rstrip(".") for g in goal_lines) if isinstance(goal_lines, list) else ""
    lines = [f"{len(stacks)} stack{'s' * (len(stacks) != 1)}"
             + (f", holding {held}" if held else ", hand empty")]  # fmt: skip
    if goal:
        lines.append(f"goal: {goal}")
    return StepView("svg", str(svg), caption="\n".join(lines))


def step_view(record: EpisodeRecord, index: int) -> StepView | None:
    """The board after step ``index`` (-1: at the start) for any of the three puzzles."""
    draw = {"frozenlake": _frozenlake, "sudoku": _sudoku, "blocksworld": _blocksworld}.get(
        record.family
    )
    return draw(record, index) if draw is not None else None
