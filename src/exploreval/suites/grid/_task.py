"""The grid task: a map (traversable cells, obstacles, start) plus a hidden task DAG.

One ``GridTask`` is the whole truth of a grid episode. The generator produces it, custom
maps are loaded from JSON into it, the env plays it, and the exploration/exploitation
metric replays a trajectory against it (it is stored as the episode's ground truth).

Coordinates: ``(x, y)`` with x growing right and y growing up, ``(0, 0)`` bottom-left.

Preconditions are a list of alternative prerequisite sets ("options"): a node's
precondition holds when every parent of at least one set is achieved; no sets means no
precondition. ``[[A, B]]`` is an AND node, ``[[A], [B]]`` an OR node, ``[[A, B], [C]]``
an OR of ANDs (the generator's ``option_count`` > 1 with ``dependency_count`` > 1).
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Iterable
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

#: Version of the custom-map / ground-truth JSON format.
GRID_TASK_SCHEMA_VERSION = 1

Cell = tuple[int, int]

#: Moves in the order the env lists them; (dx, dy) with y growing up.
MOVES: dict[str, Cell] = {"up": (0, 1), "down": (0, -1), "left": (-1, 0), "right": (1, 0)}


class GridTaskError(ValueError):
    """A map or task is invalid; the message names the source and the field."""


class GridNode(BaseModel):
    """A task node at a cell, with its alternative prerequisite sets."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1, description="Unique node id, e.g. a random token 'B4KD'")
    name: str | None = Field(
        default=None, description="Name shown to the agent (semantic maps); defaults to the id"
    )
    cell: Cell
    requires: list[list[str]] = Field(
        default_factory=list,
        description="Alternative prerequisite sets: met when all parents of one set are achieved",
    )

    # -> Any: pydantic before-validator: raw input in, raw out
    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, data: Any) -> Any:
        """Accept ``"type": "AND"|"OR", "parents": [...]`` as well as ``requires``."""
        if not isinstance(data, dict) or ("type" not in data and "parents" not in data):
            return data
        data = dict(data)
        if "requires" in data:
            raise ValueError("give either 'requires' or 'type'/'parents', not both")
        kind = str(data.pop("type", "AND")).upper()
        parents = data.pop("parents", [])
        if not isinstance(parents, list) or not all(isinstance(p, str) for p in parents):
            raise ValueError("'parents' must be a list of node ids")
        if kind == "AND":
            data["requires"] = [list(parents)] if parents else []
        elif kind == "OR":
            data["requires"] = [[p] for p in parents]
        else:
            raise ValueError(f"'type' must be 'AND' or 'OR', got {kind!r}")
        return data

    @model_validator(mode="after")
    def _check_requires(self) -> GridNode:
        for i, option in enumerate(self.requires):
            if not option:
                raise ValueError(f"requires[{i}] is an empty prerequisite set")
            if len(set(option)) != len(option):
                raise ValueError(f"requires[{i}] lists a parent twice: {option}")
            if self.id in option:
                raise ValueError(f"node {self.id!r} requires itself")
        return self

    @property
    def label(self) -> str:
        """What the agent sees for this node."""
        return self.name or self.id

    @property
    def parents(self) -> list[str]:
        """Every node that appears in some prerequisite set (sorted, unique)."""
        return sorted({p for option in self.requires for p in option})

    @property
    def kind(self) -> Literal["NONE", "AND", "OR", "MIXED"]:
        """AND = one set of parents; OR = several single-parent sets; MIXED = OR of ANDs."""
        if not self.requires:
            return "NONE"
        if len(self.requires) == 1:
            return "AND"  # one set (a single parent is AND and OR at once)
        if all(len(option) == 1 for option in self.requires):
            return "OR"
        return "MIXED"

    def precondition_met(self, achieved: Iterable[str]) -> bool:
        """Eq. 4, generalised to OR-of-AND options."""
        if not self.requires:
            return True
        done = achieved if isinstance(achieved, set | frozenset) else set(achieved)
        return any(all(p in done for p in option) for option in self.requires)


class GridTask(BaseModel):
    """A grid map with a hidden task DAG: the full ground truth of one grid episode."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: int = GRID_TASK_SCHEMA_VERSION
    name: str | None = Field(default=None, description="Map name, e.g. 'custom-201'")
    width: int = Field(ge=1, le=4096)
    height: int = Field(ge=1, le=4096)
    obstacles: list[Cell] = Field(default_factory=list)
    start: Cell
    nodes: list[GridNode] = Field(min_length=1)
    goal: str
    budget: int | None = Field(
        default=None, ge=1, description="Step budget; default budget_alpha x traversable cells"
    )
    budget_alpha: float = Field(default=3.0, gt=0, description="alpha in B = alpha |O| (Eq. 7)")

    def __eq__(self, other: object) -> bool:
        # Field values only: the cached derived values (a numpy array among them) live in
        # __dict__ too, and comparing arrays with == has no single truth value.
        if not isinstance(other, GridTask):
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in type(self).model_fields)

    __hash__ = None  # type: ignore[assignment]  # lists inside: not hashable, like a dict

    # -- validation -------------------------------------------------------------------
    @model_validator(mode="after")
    def _validate(self) -> GridTask:
        problems = _structural_problems(self)
        if problems:
            raise ValueError("\n  - ".join(problems))
        return self

    # -- loading ------------------------------------------------------------------------
    @classmethod
    def from_dict(cls, data: Any, source: str = "<task>") -> GridTask:
        """Validate a custom map; errors name ``source`` and the offending field."""
        if not isinstance(data, dict):
            raise GridTaskError(
                f"{source}: expected a JSON object at the top level, got {type(data).__name__}"
            )
        version = data.get("schema_version", GRID_TASK_SCHEMA_VERSION)
        if isinstance(version, bool) or not isinstance(version, int):
            raise GridTaskError(
                f"{source}: schema_version must be an integer (this exploreval writes "
                f"{GRID_TASK_SCHEMA_VERSION}), got {version!r}"
            )
        if version > GRID_TASK_SCHEMA_VERSION:
            raise GridTaskError(
                f"{source}: schema_version {data['schema_version']} is newer than this exploreval "
                f"understands ({GRID_TASK_SCHEMA_VERSION})"
            )
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            lines = [f"invalid grid task in {source}:"]
            for err in exc.errors():
                where = _field_path(err["loc"], data)
                message = str(err["msg"]).removeprefix("Value error, ")
                lines.append(f"  - {where}: {message}" if where else f"  - {message}")
            raise GridTaskError("\n".join(lines)) from None

    @classmethod
    def from_json(cls, text: str, source: str = "<task>") -> GridTask:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise GridTaskError(
                f"{source}: not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})"
            ) from None
        return cls.from_dict(data, source)

    @classmethod
    def load(cls, path: str | Path) -> GridTask:
        """Read a custom map JSON file (schema in docs/grid.md)."""
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise GridTaskError(f"cannot read grid task {path}: {exc.strerror}") from None
        return cls.from_json(text, str(path))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (what the env stores as ground truth); ``from_dict`` reads it back."""
        data = self.model_dump(mode="json")
        for node in data["nodes"]:
            if node["name"] is None:
                del node["name"]
        return data

    # -- derived structure (computed once per task) ---------------------------------------
    @cached_property
    def traversable(self) -> np.ndarray:
        """Boolean array indexed ``[x, y]``: True where the agent may stand."""
        grid = np.ones((self.width, self.height), dtype=bool)
        for x, y in self.obstacles:
            grid[x, y] = False
        return grid

    @cached_property
    def node_by_id(self) -> dict[str, GridNode]:
        return {node.id: node for node in self.nodes}

    @cached_property
    def node_at(self) -> dict[Cell, str]:
        """Cell -> node id (the injective location map l, inverted)."""
        return {node.cell: node.id for node in self.nodes}

    @cached_property
    def children(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {node.id: [] for node in self.nodes}
        for node in self.nodes:
            for parent in node.parents:
                out[parent].append(node.id)
        return {k: sorted(v) for k, v in out.items()}

    @cached_property
    def n_traversable(self) -> int:
        return int(self.traversable.sum())

    @property
    def step_budget(self) -> int:
        """Hidden budget B = alpha * |traversable cells| (Eq. 7) unless set explicitly."""
        if self.budget is not None:
            return self.budget
        return max(1, int(round(self.budget_alpha * self.n_traversable)))

    def in_bounds(self, cell: Cell) -> bool:
        return 0 <= cell[0] < self.width and 0 <= cell[1] < self.height

    def is_traversable(self, cell: Cell) -> bool:
        return self.in_bounds(cell) and bool(self.traversable[cell[0], cell[1]])

    def neighbours(self, cell: Cell) -> dict[str, Cell]:
        """Admissible moves from ``cell``: move name -> traversable neighbour (adj(c))."""
        out: dict[str, Cell] = {}
        for move, (dx, dy) in MOVES.items():
            nxt = (cell[0] + dx, cell[1] + dy)
            if self.is_traversable(nxt):
                out[move] = nxt
        return out

    def reachable_from_start(self) -> set[Cell]:
        return _reachable(self, self.start)

    def precondition_met(self, node_id: str, achieved: Iterable[str]) -> bool:
        return self.node_by_id[node_id].precondition_met(achieved)

    def depth(self) -> dict[str, int]:
        """Longest distance from a primitive (parentless) node: the generator's layers."""
        depth: dict[str, int] = {}

        def visit(node_id: str) -> int:
            if node_id not in depth:
                parents = self.node_by_id[node_id].parents
                depth[node_id] = 1 + max(visit(p) for p in parents) if parents else 0
            return depth[node_id]

        for node in self.nodes:
            visit(node.id)
        return depth


def reachable_cells(open_cells: np.ndarray, start: Cell) -> set[Cell]:
    """Cells connected to ``start`` by 4-neighbour moves over ``open_cells`` (indexed [x, y]).

    Shared by task validation and the generator, which checks its carved maps before a
    ``GridTask`` exists."""
    width, height = open_cells.shape
    seen = {start}
    queue = deque([start])
    while queue:
        x, y = queue.popleft()
        for dx, dy in MOVES.values():
            nxt = (x + dx, y + dy)
            if 0 <= nxt[0] < width and 0 <= nxt[1] < height and open_cells[nxt] and nxt not in seen:
                seen.add(nxt)
                queue.append(nxt)
    return seen


def _reachable(task: GridTask, start: Cell) -> set[Cell]:
    return reachable_cells(task.traversable, start)


def _structural_problems(task: GridTask) -> list[str]:
    """Every structural problem, each naming the field (empty list = valid)."""
    problems: list[str] = []

    def inside(cell: Cell) -> bool:
        return 0 <= cell[0] < task.width and 0 <= cell[1] < task.height

    obstacles = set()
    for i, cell in enumerate(task.obstacles):
        if not inside(cell):
            problems.append(
                f"obstacles[{i}] {list(cell)} is off the {task.width}x{task.height} map"
            )
        obstacles.add(cell)
    if not inside(task.start):
        problems.append(f"start {list(task.start)} is off the {task.width}x{task.height} map")
    elif task.start in obstacles:
        problems.append(f"start {list(task.start)} is an obstacle")
    ids: dict[str, int] = {}
    cells: dict[Cell, str] = {}
    for i, node in enumerate(task.nodes):
        where = f"nodes[{i}] ({node.id})"
        if node.id in ids:
            problems.append(f"{where}: id {node.id!r} is used twice (also nodes[{ids[node.id]}])")
        ids.setdefault(node.id, i)
        if not inside(node.cell):
            problems.append(
                f"{where}: cell {list(node.cell)} is off the {task.width}x{task.height} map"
            )
        elif node.cell in obstacles:
            problems.append(f"{where}: cell {list(node.cell)} is an obstacle")
        if node.cell == task.start:
            problems.append(
                f"{where}: cell {list(node.cell)} is the start cell, which holds no node"
            )
        if node.cell in cells:
            problems.append(
                f"{where}: cell {list(node.cell)} overlaps node {cells[node.cell]!r} (one node per cell)"
            )
        cells.setdefault(node.cell, node.id)
    for i, node in enumerate(task.nodes):
        for parent in node.parents:
            if parent not in ids:
                problems.append(
                    f"nodes[{i}] ({node.id}).requires: unknown parent {parent!r}"
                    + (f" (known: {', '.join(sorted(ids))})" if len(ids) <= 20 else "")
                )
    if task.goal not in ids:
        problems.append(f"goal: {task.goal!r} is not a node id")
    if problems:
        return problems  # the checks below need a consistent node table
    cycle = _find_cycle({n.id: n.parents for n in task.nodes})
    if cycle:
        problems.append(f"nodes: the prerequisites form a cycle {' -> '.join(cycle)}")
    for node in task.nodes:
        if task.goal in node.parents:
            problems.append(f"goal: {task.goal!r} must be a sink, but {node.id!r} requires it")
    if not problems and not (task.start in obstacles or not inside(task.start)):
        reachable = _reachable(task, task.start)
        for i, node in enumerate(task.nodes):
            if node.cell not in reachable:
                problems.append(
                    f"nodes[{i}] ({node.id}): cell {list(node.cell)} is unreachable from the start"
                )
    return problems


def _find_cycle(parents: dict[str, list[str]]) -> list[str] | None:
    """A cycle in the prerequisite graph as a list of ids (first == last), or None."""
    state: dict[str, int] = {}  # 1 = on the stack, 2 = done
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for parent in parents.get(node, []):
            if state.get(parent) == 1:
                return [*stack[stack.index(parent) :], parent]
            if parent not in state:
                found = visit(parent)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(parents):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def _field_path(loc: tuple[int | str, ...], data: Any) -> str:
    """``('nodes', 2, 'cell')`` -> ``nodes[2] (B4KD).cell``; empty for whole-model errors."""
    parts: list[str] = []
    node: Any = data
    for item in loc:
        if isinstance(item, int):
            label = f"[{item}]"
            if isinstance(node, list) and 0 <= item < len(node):
                node = node[item]
                if isinstance(node, dict) and isinstance(node.get("id"), str):
                    label += f" ({node['id']})"
            parts.append(label)
        else:
            parts.append(("." if parts else "") + str(item))
            node = node.get(item) if isinstance(node, dict) else None
    return "".join(parts)
