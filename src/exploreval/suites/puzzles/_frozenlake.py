"""FrozenLake as TIDE plays it: a deterministic (non-slippery) grid walk around holes.

Maps come from Gymnasium's FrozenLake-v1 (``MAPS`` and ``generate_random_map``, seeded
from the env's generator). TIDE follows RAGEN, which draws the start and the target at
random frozen cells rather than the corners; the ``paper`` preset does the same on top of
Gymnasium's hole layout. Dynamics are FrozenLake-v1's with ``is_slippery=False`` (a move
into the border leaves the player in place), plus TIDE's ``safe_step`` rule: a move into a
hole is refused as an invalid action (``holes="block"``). ``holes="terminate"`` restores
Gymnasium's rule (the player falls in and the episode ends as a failure).
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from gymnasium.envs.toy_text.frozen_lake import MAPS, generate_random_map
from gymnasium.utils import seeding

from exploreval.agents import ScriptedAgent
from exploreval.core import StepInfo
from exploreval.suites.puzzles._common import (
    PAPER_MAX_STEPS,
    Outcome,
    PuzzleEnv,
    PuzzleParamError,
    check_known_params,
    choice_param,
    float_param,
    range_param,
)
from exploreval.suites.puzzles._info import FrozenLakeStepInfo
from exploreval.suites.puzzles._tide_data import TIDE_FROZENLAKE_SIZES

#: RAGEN's probability of a frozen cell; TIDE's runner never sets it, so its files use this.
RAGEN_FROZEN_P = 0.8

#: Action names (the paper's) -> (row delta, col delta).
MOVES: dict[str, tuple[int, int]] = {
    "Up": (-1, 0),
    "Down": (1, 0),
    "Left": (0, -1),
    "Right": (0, 1),
}
#: Gymnasium's action indices for the same moves (LEFT=0, DOWN=1, RIGHT=2, UP=3).
GYM_ACTIONS: dict[str, int] = {"Left": 0, "Down": 1, "Right": 2, "Up": 3}
_CANONICAL = {name.lower(): name for name in MOVES}

#: Paper symbols (Appendix C.9): O hole, _ frozen, G target, P player. X = player in a hole
#: (only reachable with ``holes="terminate"``).
HOLE, FROZEN, TARGET, PLAYER, FALLEN = "O", "_", "G", "P", "X"

Cell = tuple[int, int]


@dataclass(frozen=True)
class LakeMap:
    """One instance: the hole layout plus start and target cells."""

    holes: frozenset[Cell]
    size: tuple[int, int]
    start: Cell
    target: Cell

    def passable(self, cell: Cell) -> bool:
        r, c = cell
        return 0 <= r < self.size[0] and 0 <= c < self.size[1] and cell not in self.holes

    def gym_desc(self) -> list[str]:
        """The map in Gymnasium's letters (S, F, H, G)."""
        rows = []
        for r in range(self.size[0]):
            row = []
            for c in range(self.size[1]):
                cell = (r, c)
                row.append(
                    "S"
                    if cell == self.start
                    else "G"
                    if cell == self.target
                    else "H"
                    if cell in self.holes
                    else "F"
                )
            rows.append("".join(row))
        return rows


def move(lake: LakeMap, cell: Cell, action: str) -> Cell:
    """FrozenLake-v1's deterministic transition, ignoring holes: clamp at the border."""
    dr, dc = MOVES[action]
    r = min(max(cell[0] + dr, 0), lake.size[0] - 1)
    c = min(max(cell[1] + dc, 0), lake.size[1] - 1)
    return (r, c)


def distances_to(lake: LakeMap, goal: Cell) -> dict[Cell, int]:
    """BFS distance (in moves, never through holes) from every reachable cell to ``goal``."""
    dist = {goal: 0}
    queue = deque([goal])
    while queue:
        cell = queue.popleft()
        for dr, dc in MOVES.values():
            nxt = (cell[0] + dr, cell[1] + dc)
            if nxt not in dist and lake.passable(nxt):
                dist[nxt] = dist[cell] + 1
                queue.append(nxt)
    return dist


def shortest_path_length(lake: LakeMap, start: Cell | None = None) -> int | None:
    """Fewest moves from ``start`` (default: the map's start) to the target; None if cut off."""
    return distances_to(lake, lake.target).get(lake.start if start is None else start)


def best_move(lake: LakeMap, cell: Cell) -> str | None:
    """A first move of a shortest path (ties broken in Up, Down, Left, Right order)."""
    dist = distances_to(lake, lake.target)
    here = dist.get(cell)
    if here is None or here == 0:
        return None
    for name in MOVES:
        nxt = move(lake, cell, name)
        if dist.get(nxt, here) == here - 1 and nxt != cell:
            return name
    return None  # unreachable: a BFS predecessor always exists


def _lake_from_desc(desc: list[str]) -> LakeMap:
    holes = frozenset((r, c) for r, row in enumerate(desc) for c, ch in enumerate(row) if ch == "H")
    start = next((r, c) for r, row in enumerate(desc) for c, ch in enumerate(row) if ch == "S")
    target = next((r, c) for r, row in enumerate(desc) for c, ch in enumerate(row) if ch == "G")
    return LakeMap(holes=holes, size=(len(desc), len(desc[0])), start=start, target=target)


def generate_lake(
    rng: np.random.Generator,
    *,
    size: int,
    p: float,
    endpoints: str,
    max_path: int,
    max_attempts: int = 1000,
) -> LakeMap:
    """A map whose target is reachable from the start in at most ``max_path`` moves.

    Holes come from Gymnasium's ``generate_random_map`` (seeded from ``rng``). With
    ``endpoints="random"`` the start and target are then redrawn among the frozen cells
    (RAGEN's variant, which TIDE uses). Draws whose shortest path exceeds ``max_path``
    are rejected, so the optimal agent always fits in the step limit.
    """
    for _ in range(max_attempts):
        desc = generate_random_map(size=size, p=p, seed=int(rng.integers(0, 2**31 - 1)))
        lake = _lake_from_desc(desc)
        if endpoints == "random":
            frozen = [(r, c) for r in range(size) for c in range(size) if (r, c) not in lake.holes]
            picks = rng.choice(len(frozen), size=2, replace=False)
            lake = LakeMap(
                holes=lake.holes,
                size=lake.size,
                start=frozen[int(picks[0])],
                target=frozen[int(picks[1])],
            )
        d = shortest_path_length(lake)
        if d is not None and 1 <= d <= max_path:
            return lake
    raise RuntimeError(
        f"no FrozenLake map of size {size} with p={p} and a path of at most {max_path} moves "
        f"after {max_attempts} draws; raise max_steps or p"
    )


def ragen_lake(size: int, seed: int, p: float = RAGEN_FROZEN_P) -> LakeMap:
    """The board RAGEN's generator (which TIDE plays) draws for ``size`` and ``seed``.

    Its draws, in its order, from Gymnasium's seeded generator: the hole layout (each cell a
    hole with probability ``1 - p``), then the start and the target cell, each anywhere; a draw
    whose start is its target, or whose target the start cannot reach, is drawn again. Start and
    target overwrite whatever cell they land on, so no instance starts or ends in a hole.
    """
    if isinstance(size, bool) or not isinstance(size, int) or size < 2:
        raise PuzzleParamError(f"FrozenLake grid_size must be an integer >= 2, got {size!r}")
    rng, _ = seeding.np_random(seed)
    while True:
        board = rng.choice(["F", "H"], (size, size), p=[p, 1 - p])
        start_r, start_c = (int(v) for v in rng.integers(size, size=2))
        target_r, target_c = (int(v) for v in rng.integers(size, size=2))
        start_cell, target_cell = (start_r, start_c), (target_r, target_c)
        if start_cell == target_cell:
            continue
        holes = frozenset(
            (r, c)
            for r in range(size)
            for c in range(size)
            if board[r][c] == "H" and (r, c) not in (start_cell, target_cell)
        )
        lake = LakeMap(holes=holes, size=(size, size), start=start_cell, target=target_cell)
        if shortest_path_length(lake) is not None:
            return lake


def render_lake(lake: LakeMap, player: Cell, fallen: bool = False) -> str:
    """Grid in the paper's symbols plus one sentence of coordinates (as TIDE's runner adds)."""
    rows = []
    for r in range(lake.size[0]):
        row = []
        for c in range(lake.size[1]):
            cell = (r, c)
            if cell == player:
                row.append(FALLEN if fallen else PLAYER)
            elif cell in lake.holes:
                row.append(HOLE)
            elif cell == lake.target:
                row.append(TARGET)
            else:
                row.append(FROZEN)
        rows.append("".join(row))
    holes = sorted(lake.holes)
    hole_text = (
        "There are no holes."
        if not holes
        else "The holes are at " + ", ".join(f"({r}, {c})" for r, c in holes) + "."
    )
    where = f"The player is at ({player[0]}, {player[1]})"
    if player == lake.target:
        where += ", on the target"
    elif fallen:
        where += ", in a hole"
    return "\n".join(
        [*rows, f"The target is at ({lake.target[0]}, {lake.target[1]}). {hole_text} {where}."]
    )


_TARGET_RE = re.compile(r"The target is at \((\d+), (\d+)\)")
_PLAYER_RE = re.compile(r"The player is at \((\d+), (\d+)\)")


def parse_lake(observation: str) -> tuple[LakeMap, Cell]:
    """Read a rendered observation back (what the planner sees; inverse of ``render_lake``)."""
    lines = observation.strip().splitlines()
    grid = [ln for ln in lines if ln and set(ln) <= {HOLE, FROZEN, TARGET, PLAYER, FALLEN}]
    target_m, player_m = _TARGET_RE.search(observation), _PLAYER_RE.search(observation)
    if not grid or target_m is None or player_m is None:
        raise ValueError("not a FrozenLake observation (grid or coordinates missing)")
    holes = frozenset(
        (r, c) for r, row in enumerate(grid) for c, ch in enumerate(row) if ch == HOLE
    )
    target = (int(target_m.group(1)), int(target_m.group(2)))
    player = (int(player_m.group(1)), int(player_m.group(2)))
    lake = LakeMap(holes=holes, size=(len(grid), len(grid[0])), start=player, target=target)
    return lake, player


def normalise_move(text: str) -> str | None:
    """``up``/``UP``/``Up`` -> ``Up``; anything else -> None."""
    return _CANONICAL.get(text.strip().strip(".").lower())


class FrozenLakeEnv(PuzzleEnv):
    """FrozenLake (TIDE / RAGEN variant): walk P to G around holes O with Up/Down/Left/Right."""

    info_model: ClassVar[type[StepInfo]] = FrozenLakeStepInfo

    presets: ClassVar[dict[str, dict[str, Any]]] = {
        # TIDE's dataset 100_6_15: instance k has TIDE's grid side for instance k (6..15),
        # p(frozen)=0.8, random start and target, not slippery.
        "paper": {
            "size": [6, 15],
            "schedule": "tide",
            "p": 0.8,
            "endpoints": "random",
            "max_steps": PAPER_MAX_STEPS,
        },
        "small": {"size": [4, 6], "p": 0.8, "endpoints": "random", "max_steps": PAPER_MAX_STEPS},
        # Gymnasium's fixed maps (start top-left, goal bottom-right; every seed is the same map).
        "4x4": {"map": "4x4", "max_steps": PAPER_MAX_STEPS},
        "8x8": {"map": "8x8", "max_steps": PAPER_MAX_STEPS},
    }
    default_preset = "paper"
    _OPTIONS = ("size", "schedule", "p", "endpoints", "map", "holes", "max_steps", "instances")

    instance_kind = "frozenlake"

    def _new_instance(self, options: dict[str, Any]) -> None:
        check_known_params(self.params, self._OPTIONS, self.env_id or "FrozenLake")
        self.hole_rule = choice_param(self.params, "holes", "block", ("block", "terminate"))
        map_name = self.params.get("map")
        played = self._file_instance()
        self.source: dict[str, Any] | None = None
        if played is not None:
            instances, at, item = played
            self.lake = ragen_lake(item["grid_size"], item["seed"])
            self.source = {
                **instances.source(at),
                "grid_size": item["grid_size"],
                "seed": item["seed"],
            }
        elif map_name is not None:
            if map_name not in MAPS:
                raise PuzzleParamError(
                    f"option 'map' must be one of {sorted(MAPS)}, got {map_name!r}"
                )
            self.lake = _lake_from_desc(list(MAPS[map_name]))
        else:
            lo, hi = range_param(self.params, "size", (6, 15), low=2, high=64)
            p = float_param(self.params, "p", 0.8, low=0.05, high=1.0)
            endpoints = choice_param(self.params, "endpoints", "random", ("random", "corners"))
            schedule = choice_param(self.params, "schedule", "random", ("random", "tide"))
            if schedule == "tide" and (lo, hi) != (6, 15):
                raise PuzzleParamError(
                    f"schedule 'tide' uses TIDE's grid sizes 6..15, so option 'size' [{lo}, {hi}] "
                    "would be ignored; pass schedule='random' with it"
                )
            index = self._instance_index()
            if schedule == "tide" and index is not None and index < len(TIDE_FROZENLAKE_SIZES):
                size = TIDE_FROZENLAKE_SIZES[index]
            else:
                size = int(self.np_random.integers(lo, hi + 1))
            self.lake = generate_lake(
                self.np_random, size=size, p=p, endpoints=endpoints, max_path=self._max_steps
            )
        self.player = self.lake.start
        self.fallen = False
        self._dist = distances_to(self.lake, self.lake.target)
        self._start_dist = self._dist.get(self.lake.start, 0)

    def _apply(self, action: str) -> Outcome:
        name = normalise_move(action)
        if name is None:
            return Outcome(
                valid=False,
                reason=f"unknown action {action!r}; expected one of Up, Down, Left, Right or stop",
            )
        nxt = move(self.lake, self.player, name)
        extra: dict[str, Any] = {"move": name}
        if nxt in self.lake.holes:
            hole = f"hole:{nxt[0]},{nxt[1]}"
            if self.hole_rule == "block":
                extra.update(position=list(self.player), moved=False, hole_attempt=True)
                return Outcome(
                    valid=False,
                    reason=f"moving {name} from {self.player} would fall into the hole at {nxt}",
                    extra=extra,
                )
            self.player, self.fallen = nxt, True
            extra.update(position=list(nxt), moved=True, hole_attempt=True)
            return Outcome(valid=True, acted=[hole], extra=extra, failed=True)
        moved = nxt != self.player
        self.player = nxt
        extra.update(position=list(nxt), moved=moved, hole_attempt=False)
        return Outcome(valid=True, acted=["target"] if nxt == self.lake.target else [], extra=extra)

    def _render(self) -> str:
        return render_lake(self.lake, self.player, self.fallen)

    def _solved(self) -> bool:
        return self.player == self.lake.target

    def _progress(self) -> float:
        if self._solved():
            return 1.0
        if self.fallen or self._start_dist == 0:
            return 0.0
        d = self._dist.get(self.player, self._start_dist)
        return float(max(0.0, 1.0 - d / self._start_dist))

    def _entities_seen(self) -> list[str]:
        # Fully observable: every observation shows the target and all holes.
        return ["target", *(f"hole:{r},{c}" for r, c in sorted(self.lake.holes))]

    def _reset_info(self) -> dict[str, Any]:
        return {"position": list(self.player)}

    def ground_truth(self) -> dict[str, Any]:
        return {
            "map": self.lake.gym_desc(),
            "size": list(self.lake.size),
            "start": list(self.lake.start),
            "target": list(self.lake.target),
            "shortest_path": self._start_dist,
            "holes": self.hole_rule,
            "max_steps": self._max_steps,
            **({"instance_source": self.source} if self.source is not None else {}),
        }

    def task_description(self) -> str:
        return "Move the player P to the target G without stepping into a hole O."


# -- scripted baselines -------------------------------------------------------------------
class FrozenLakeOptimal(ScriptedAgent):
    """Shortest path by BFS, recomputed from each observation (never needs ground truth)."""

    name = "optimal"

    def choose(self, observation: str, info: dict[str, Any]) -> str:
        lake, player = parse_lake(observation)
        return best_move(lake, player) or "stop"


class FrozenLakeRandom(ScriptedAgent):
    """Uniform over the four moves, holes included (the action space, no rules)."""

    name = "random"

    def choose(self, observation: str, info: dict[str, Any]) -> str:
        return str(self.rng.choice(list(MOVES)))


class FrozenLakeRandomValid(ScriptedAgent):
    """Uniform over moves that do not walk into a hole."""

    name = "random_valid"

    def choose(self, observation: str, info: dict[str, Any]) -> str:
        lake, player = parse_lake(observation)
        legal = [m for m in MOVES if move(lake, player, m) not in lake.holes]
        return str(self.rng.choice(legal)) if legal else "stop"
