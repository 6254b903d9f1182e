"""Sudoku (4x4 and 9x9) with a guaranteed unique solution.

TIDE's Sudoku removes ``level`` random cells (1..15) from a random full 9x9 grid and
never checks uniqueness; here every removal is kept only if the puzzle still has exactly
one solution, so "solved" has one meaning and progress can be scored against it. The
action is ``row col value`` (0-indexed, as TIDE's prompt says). As in TIDE, a fill is
refused when the cell is a given, is already filled, or repeats a digit in its row,
column or box; a fill that breaks no rule but is wrong is accepted, and since there is
no erase action the puzzle is then a dead end (``info["solvable"]`` turns False).
"""

from __future__ import annotations

import math
import random
import re
from dataclasses import dataclass
from functools import cache
from typing import Any, ClassVar

import numpy as np

from exploreval.agents import EpisodeContext, ScriptedAgent
from exploreval.core import StepInfo
from exploreval.suites.puzzles._common import (
    PAPER_MAX_STEPS,
    Outcome,
    PuzzleEnv,
    PuzzleParamError,
    check_known_params,
    choice_param,
    int_param,
    range_param,
)
from exploreval.suites.puzzles._info import SudokuStepInfo
from exploreval.suites.puzzles._tide_data import TIDE_SUDOKU_BLANKS

EMPTY_SYMBOL = "_"
SUPPORTED_SIZES = (4, 9)

#: A grid, row-major, 0 = empty.
Grid = list[int]


@dataclass(frozen=True)
class Geometry:
    """Index tables of an n x n Sudoku with k x k boxes (n = k * k)."""

    n: int
    k: int
    row: tuple[int, ...]
    col: tuple[int, ...]
    box: tuple[int, ...]
    full: int  # bitmask with bits 1..n set

    @property
    def cells(self) -> int:
        return self.n * self.n


@cache
def geometry(n: int) -> Geometry:
    k = math.isqrt(n)
    if k * k != n or n not in SUPPORTED_SIZES:
        raise PuzzleParamError(f"Sudoku size must be one of {SUPPORTED_SIZES}, got {n}")
    cells = range(n * n)
    return Geometry(
        n=n,
        k=k,
        row=tuple(i // n for i in cells),
        col=tuple(i % n for i in cells),
        box=tuple((i // n // k) * k + (i % n) // k for i in cells),
        full=sum(1 << v for v in range(1, n + 1)),
    )


def _masks(grid: Grid, geo: Geometry) -> tuple[list[int], list[int], list[int]] | None:
    """Used-digit bitmasks per row/col/box; None if the givens already clash."""
    rows, cols, boxes = [0] * geo.n, [0] * geo.n, [0] * geo.n
    for i, v in enumerate(grid):
        if v:
            bit = 1 << v
            r, c, b = geo.row[i], geo.col[i], geo.box[i]
            if (rows[r] | cols[c] | boxes[b]) & bit:
                return None
            rows[r] |= bit
            cols[c] |= bit
            boxes[b] |= bit
    return rows, cols, boxes


def _search(
    grid: Grid,
    geo: Geometry,
    limit: int,
    order: np.random.Generator | None = None,
) -> tuple[int, Grid | None]:
    """Count completions up to ``limit`` (bitmask backtracking, fewest candidates first).

    Returns (count, first completion found). ``order`` shuffles candidate digits, which
    turns the same search into a random full-grid generator.
    """
    masks = _masks(grid, geo)
    if masks is None:
        return 0, None
    rows, cols, boxes = masks
    work = list(grid)
    empties = [i for i, v in enumerate(work) if v == 0]
    found: list[Grid] = []
    count = 0

    def recurse(remaining: list[int]) -> bool:
        nonlocal count
        if not remaining:
            count += 1
            if not found:
                found.append(list(work))
            return count >= limit
        best_pos, best_free, best_n = -1, 0, geo.n + 1
        for pos, i in enumerate(remaining):
            free = geo.full & ~(rows[geo.row[i]] | cols[geo.col[i]] | boxes[geo.box[i]])
            n_free = free.bit_count()
            if n_free < best_n:
                best_pos, best_free, best_n = pos, free, n_free
                if n_free <= 1:
                    break
        if best_n == 0:
            return False
        i = remaining[best_pos]
        rest = remaining[:best_pos] + remaining[best_pos + 1 :]
        digits = [v for v in range(1, geo.n + 1) if best_free >> v & 1]
        if order is not None:
            digits = [digits[j] for j in order.permutation(len(digits))]
        r, c, b = geo.row[i], geo.col[i], geo.box[i]
        for v in digits:
            bit = 1 << v
            work[i] = v
            rows[r] |= bit
            cols[c] |= bit
            boxes[b] |= bit
            stop = recurse(rest)
            rows[r] &= ~bit
            cols[c] &= ~bit
            boxes[b] &= ~bit
            work[i] = 0
            if stop:
                return True
        return False

    recurse(empties)
    return count, (found[0] if found else None)


def count_solutions(grid: Grid, n: int, limit: int = 2) -> int:
    """Number of completions of ``grid``, counting no further than ``limit``."""
    return _search(grid, geometry(n), limit)[0]


def solve(grid: Grid, n: int) -> Grid | None:
    """One completion of ``grid`` (the solution, for a unique puzzle), or None."""
    return _search(grid, geometry(n), 1)[1]


def random_full_grid(rng: np.random.Generator, n: int) -> Grid:
    count, grid = _search([0] * (n * n), geometry(n), 1, order=rng)
    assert count == 1 and grid is not None
    return grid


def generate_puzzle(
    rng: np.random.Generator, n: int, blanks: int, max_attempts: int = 50
) -> tuple[Grid, Grid]:
    """(puzzle, solution) with exactly ``blanks`` empty cells and a unique solution.

    Cells are blanked in random order; a removal that would admit a second solution is
    undone. If a grid runs out of removable cells first, a new grid is drawn.
    """
    geo = geometry(n)
    if not 0 <= blanks < geo.cells:
        raise PuzzleParamError(f"blanks must be in [0, {geo.cells - 1}] for {n}x{n}, got {blanks}")
    for _ in range(max_attempts):
        solution = random_full_grid(rng, n)
        puzzle = list(solution)
        removed = 0
        for i in rng.permutation(geo.cells):
            if removed == blanks:
                break
            i = int(i)
            puzzle[i] = 0
            if count_solutions(puzzle, n, limit=2) == 1:
                removed += 1
            else:
                puzzle[i] = solution[i]
        if removed == blanks:
            return puzzle, solution
    raise RuntimeError(
        f"could not blank {blanks} cells of a {n}x{n} Sudoku with a unique solution in "
        f"{max_attempts} grids; ask for fewer blanks (more givens)"
    )


def tide_sudoku(box: int, seed: int, removed: int) -> tuple[Grid, Grid]:
    """(puzzle, solution) as TIDE's generator makes them for a box side, seed and level.

    Its draws, in its order, from Python's ``random`` seeded with ``seed``: a full grid by
    backtracking over the cells in row-major order, each cell trying the digits in a freshly
    shuffled order; then every cell position shuffled and the first ``removed`` blanked (the
    count clamped to the grid). Uniqueness is not checked, as TIDE does not.
    """
    if box not in (2, 3):
        raise PuzzleParamError(f"Sudoku grid_size (box side) must be 2 or 3, got {box!r}")
    rand = random.Random(seed)
    n = box * box
    geo = geometry(n)
    grid = [0] * geo.cells

    def allowed(i: int, value: int) -> bool:
        return not any(
            grid[j] == value
            and (geo.row[j] == geo.row[i] or geo.col[j] == geo.col[i] or geo.box[j] == geo.box[i])
            for j in range(geo.cells)
        )

    def fill(i: int) -> bool:
        if i == geo.cells:
            return True
        candidates = list(range(1, n + 1))
        rand.shuffle(candidates)
        for value in candidates:
            if allowed(i, value):
                grid[i] = value
                if fill(i + 1):
                    return True
                grid[i] = 0
        return False

    if not fill(0):
        raise RuntimeError("no full Sudoku grid found")  # unreachable: an empty grid has one
    solution = list(grid)
    positions = [(r, c) for r in range(n) for c in range(n)]
    rand.shuffle(positions)
    puzzle = list(solution)
    for r, c in positions[: max(0, min(geo.cells, removed))]:
        puzzle[r * n + c] = 0
    return puzzle, solution


# -- text ------------------------------------------------------------------------------
def grid_rows(grid: Grid, n: int) -> list[str]:
    return [
        "".join(str(v) if v else EMPTY_SYMBOL for v in grid[r * n : (r + 1) * n]) for r in range(n)
    ]


def render_grid(grid: Grid, n: int) -> str:
    """TIDE's state text: a sentence listing the empty cells, then the grid with ``_``."""
    empty = [(i // n, i % n) for i, v in enumerate(grid) if v == 0]
    if not empty:
        head = "There are no empty cells."
    elif len(empty) == 1:
        head = f"There is one empty cell to fill, at ({empty[0][0]}, {empty[0][1]})."
    else:
        head = (
            f"There are {len(empty)} empty cells to fill, at "
            + ", ".join(f"({r}, {c})" for r, c in empty)
            + "."
        )
    return "\n".join([head, *grid_rows(grid, n)])


def parse_grid(observation: str) -> tuple[Grid, int]:
    """Inverse of ``render_grid``: the grid lines (digits and ``_``) of an observation."""
    lines = [
        ln.strip()
        for ln in observation.splitlines()
        if ln.strip() and re.fullmatch(r"[1-9_]+", ln.strip())
    ]
    n = len(lines)
    if n not in SUPPORTED_SIZES or any(len(ln) != n for ln in lines):
        raise ValueError(
            f"not a Sudoku observation: found {n} grid lines of lengths {[len(x) for x in lines]}"
        )
    return [0 if ch == EMPTY_SYMBOL else int(ch) for ln in lines for ch in ln], n


_NOISE = re.compile(r"[\s,()\[\]:=]+")


def parse_fill(text: str) -> tuple[int, int, int] | None:
    """``"0 2 4"``, ``"(0, 2, 4)"``, ``"0,2 = 4"`` -> (row, col, value); else None."""
    if _NOISE.sub("", re.sub(r"\d+", "", text)):
        return None
    numbers = re.findall(r"\d+", text)
    if len(numbers) != 3:
        return None
    r, c, v = (int(x) for x in numbers)
    return r, c, v


def _check_item(item: Any) -> None:
    """A Sudoku file's instance beyond its field types: a box side this env plays."""
    if item["grid_size"] not in (2, 3):
        raise ValueError(
            f"field 'grid_size': expected the box side 2 (4x4) or 3 (9x9), got {item['grid_size']}"
        )
    cells = item["grid_size"] ** 4
    if not 1 <= item["level"] < cells:
        raise ValueError(
            f"field 'level': expected 1 to {cells - 1} removed cells, got {item['level']}"
        )


class SudokuEnv(PuzzleEnv):
    """Sudoku (4x4 or 9x9, unique solution): fill ``row col value`` one cell per turn."""

    info_model: ClassVar[type[StepInfo]] = SudokuStepInfo

    presets: ClassVar[dict[str, dict[str, Any]]] = {
        # TIDE's dataset 100_gs3_1_15: 9x9; instance k has TIDE's blank count for instance k.
        "paper": {"size": 9, "blanks": [1, 15], "schedule": "tide", "max_steps": PAPER_MAX_STEPS},
        "4x4-easy": {"size": 4, "givens": 10, "max_steps": PAPER_MAX_STEPS},
        "4x4-hard": {"size": 4, "givens": 6, "max_steps": PAPER_MAX_STEPS},
        "9x9-easy": {"size": 9, "givens": 45, "max_steps": 60},
        "9x9-medium": {"size": 9, "givens": 36, "max_steps": 70},
        "9x9-hard": {"size": 9, "givens": 30, "max_steps": 80},
    }
    default_preset = "paper"
    _OPTIONS = ("size", "blanks", "givens", "schedule", "max_steps", "instances")

    instance_kind = "sudoku"
    instance_checks = (_check_item,)

    def _new_instance(self, options: dict[str, Any]) -> None:
        check_known_params(self.params, self._OPTIONS, self.env_id or "Sudoku")
        self.source: dict[str, Any] | None = None
        played = self._file_instance()
        if played is not None:
            instances, at, item = played
            self.n = item["grid_size"] ** 2
            self.puzzle, self.solution = tide_sudoku(item["grid_size"], item["seed"], item["level"])
            self.grid = list(self.puzzle)
            self.blank_cells = [i for i, v in enumerate(self.puzzle) if v == 0]
            self.wrong_fills = 0
            self.source = {
                **instances.source(at),
                "grid_size": item["grid_size"],
                "level": item["level"],
                "seed": item["seed"],
                "unique_solution": count_solutions(self.puzzle, self.n, limit=2) == 1,
            }
            if len(self.blank_cells) > self._max_steps:
                raise PuzzleParamError(
                    f"{instances.path}: instance {at}: {len(self.blank_cells)} blank cells "
                    f"cannot be filled within max_steps={self._max_steps}"
                )
            return
        n = int_param(self.params, "size", 9)
        if n not in SUPPORTED_SIZES:
            raise PuzzleParamError(f"option 'size' must be one of {SUPPORTED_SIZES}, got {n}")
        cells = n * n
        if ("blanks" in self.params) == ("givens" in self.params):
            raise PuzzleParamError("give exactly one of the options 'blanks' and 'givens'")
        if "blanks" in self.params:
            lo, hi = range_param(self.params, "blanks", (1, 15), low=1, high=cells - 1)
        else:
            g_lo, g_hi = range_param(self.params, "givens", (66, 80), low=1, high=cells - 1)
            lo, hi = cells - g_hi, cells - g_lo
        schedule = choice_param(self.params, "schedule", "random", ("random", "tide"))
        index = self._instance_index()
        if schedule == "tide" and (n != 9 or (lo, hi) != (1, 15)):
            raise PuzzleParamError(
                "schedule 'tide' needs size 9 and blanks [1, 15] (TIDE's dataset)"
            )
        if schedule == "tide" and index is not None and index < len(TIDE_SUDOKU_BLANKS):
            blanks = TIDE_SUDOKU_BLANKS[index]
        else:
            blanks = int(self.np_random.integers(lo, hi + 1))
        if blanks > self._max_steps:
            raise PuzzleParamError(
                f"{blanks} blank cells cannot be filled within max_steps={self._max_steps}"
            )
        self.n = n
        self.puzzle, self.solution = generate_puzzle(self.np_random, n, blanks)
        self.grid = list(self.puzzle)
        self.blank_cells = [i for i, v in enumerate(self.puzzle) if v == 0]
        self.wrong_fills = 0

    def _apply(self, action: str) -> Outcome:
        n, geo = self.n, geometry(self.n)
        fill = parse_fill(action)
        if fill is None:
            return Outcome(
                valid=False,
                reason=f"could not read {action!r}; expected 'row col value', e.g. '0 2 {n}'",
            )
        r, c, v = fill
        if not (0 <= r < n and 0 <= c < n and 1 <= v <= n):
            return Outcome(
                valid=False,
                reason=f"out of range: row and column must be 0..{n - 1} and the value 1..{n}",
            )
        i = r * n + c
        extra: dict[str, Any] = {"cell": [r, c], "value": v}
        if self.puzzle[i]:
            return Outcome(
                False,
                f"cell ({r}, {c}) is a given ({self.puzzle[i]}) and cannot change",
                extra=extra,
            )
        if self.grid[i]:
            return Outcome(
                False, f"cell ({r}, {c}) is already filled with {self.grid[i]}", extra=extra
            )
        for kind, same in (("row", geo.row), ("column", geo.col), ("box", geo.box)):
            if any(self.grid[j] == v and same[j] == same[i] for j in range(geo.cells)):
                where = {
                    "row": f"row {r}",
                    "column": f"column {c}",
                    "box": f"the box of ({r}, {c})",
                }[kind]
                return Outcome(False, f"{v} already appears in {where}", extra=extra)
        self.grid[i] = v
        correct = v == self.solution[i]
        if not correct:
            self.wrong_fills += 1
        extra.update(correct=correct, solvable=self.wrong_fills == 0)
        return Outcome(valid=True, acted=[f"cell:{r},{c}"], extra=extra)

    def _render(self) -> str:
        return render_grid(self.grid, self.n)

    def _solved(self) -> bool:
        # a full grid breaks no rule (every fill was checked): with a unique solution it is the
        # solution; a TIDE instance with several counts any of them, as TIDE's own check does
        return 0 not in self.grid

    def _progress(self) -> float:
        right = sum(1 for i in self.blank_cells if self.grid[i] == self.solution[i])
        return right / len(self.blank_cells)

    def _entities_seen(self) -> list[str]:
        return [f"cell:{i // self.n},{i % self.n}" for i, v in enumerate(self.grid) if v == 0]

    def _reset_info(self) -> dict[str, Any]:
        return {"size": self.n, "blanks": len(self.blank_cells)}

    def ground_truth(self) -> dict[str, Any]:
        return {
            "size": self.n,
            "puzzle": grid_rows(self.puzzle, self.n),
            "solution": grid_rows(self.solution, self.n),
            "blanks": len(self.blank_cells),
            "givens": self.n * self.n - len(self.blank_cells),
            "optimal_length": len(self.blank_cells),
            "max_steps": self._max_steps,
            **({"instance_source": self.source} if self.source is not None else {}),
        }

    def task_description(self) -> str:
        return (
            f"Fill every empty cell (_) so that each row, column and {geometry(self.n).k}x"
            f"{geometry(self.n).k} box holds 1-{self.n} exactly once."
        )


# -- scripted baselines ------------------------------------------------------------------
class SudokuOptimal(ScriptedAgent):
    """Solves the observed grid once, then fills the empty cells in reading order."""

    name = "optimal"

    def start(self, ctx: EpisodeContext, observation: str) -> None:
        grid, n = parse_grid(observation)
        self.n = n
        self.solution = solve(grid, n)

    def choose(self, observation: str, info: dict[str, Any]) -> str:
        grid, n = parse_grid(observation)
        if self.solution is None:
            return "stop"
        for i, v in enumerate(grid):
            if v == 0:
                return f"{i // n} {i % n} {self.solution[i]}"
        return "stop"


class SudokuRandom(ScriptedAgent):
    """Uniform over every ``row col value`` triple (most hit givens or break a rule)."""

    name = "random"

    def choose(self, observation: str, info: dict[str, Any]) -> str:
        _, n = parse_grid(observation)
        r, c = (int(x) for x in self.rng.integers(0, n, size=2))
        return f"{r} {c} {int(self.rng.integers(1, n + 1))}"


class SudokuRandomValid(ScriptedAgent):
    """A random empty cell and a random digit that breaks no rule; ``stop`` at a dead end."""

    name = "random_valid"

    def choose(self, observation: str, info: dict[str, Any]) -> str:
        grid, n = parse_grid(observation)
        geo = geometry(n)
        masks = _masks(grid, geo)
        assert masks is not None
        rows, cols, boxes = masks
        options = []
        for i, v in enumerate(grid):
            if v == 0:
                free = geo.full & ~(rows[geo.row[i]] | cols[geo.col[i]] | boxes[geo.box[i]])
                options += [(i, d) for d in range(1, n + 1) if free >> d & 1]
        if not options:
            return "stop"
        i, d = options[int(self.rng.integers(len(options)))]
        return f"{i // n} {i % n} {d}"
