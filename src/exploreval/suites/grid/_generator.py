"""Seeded task generator of Appendix C.1: a layered task DAG mapped onto a carved grid map.

The generator runs in two stages, both driven by one ``numpy.random.Generator`` so a
``(config, seed)`` pair always yields the same task:

1. **Task DAG.** ``n_nodes`` nodes in layers of at most ``max_per_layer`` nodes; the unique
   goal alone in the last layer. Every non-primitive node draws an option count from
   ``option_count_probs`` (alternative prerequisite sets = OR branching) and, per option, a
   dependency count from ``dependency_count_probs`` (``goal_dependency_count_probs`` for the
   goal) = AND arity. Parents come from shallower layers with weight
   ``exp(-beta * ((D - 1) - d))``. Nodes the goal does not depend on are repaired into the
   goal's prerequisites. Names are random 4-character tokens.
2. **Grid map.** The map size follows from the node density (nodes / cells) and the aspect
   ratio; start and nodes get distinct random cells; corridors of the preset's widths are
   carved from every node to the nearest already-connected point, so the traversable region
   (the carved cells) is connected by construction. Everything else is an obstacle.

Interpretation choices are documented in ``docs/grid.md`` (section "Generator").
"""

from __future__ import annotations

import math
import string
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from exploreval.suites.grid._task import Cell, GridNode, GridTask, reachable_cells

#: Characters of symbolic node names (Appendix C.1: "random four-character visible token").
NAME_ALPHABET = string.ascii_uppercase + string.digits
NAME_LENGTH = 4

ProbTable = dict[int, float]


def _check_probs(value: dict[int, float], field_name: str) -> dict[int, float]:
    if not value:
        raise ValueError(f"{field_name} must not be empty")
    for key, prob in value.items():
        if key < 1:
            raise ValueError(f"{field_name}: counts must be >= 1, got {key}")
        if prob < 0:
            raise ValueError(f"{field_name}: probability of {key} is negative ({prob})")
    total = sum(value.values())
    if not math.isclose(total, 1.0, abs_tol=1e-6):
        raise ValueError(f"{field_name}: probabilities sum to {total:g}, expected 1")
    return {int(k): float(v) for k, v in sorted(value.items())}


class GeneratorConfig(BaseModel):
    """Every knob of the generator (the presets fill these in; see ``PRESETS``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    n_nodes: int = Field(ge=2, le=64, description="Task DAG size including the goal")
    max_per_layer: int = Field(default=3, ge=1, description="At most this many nodes per depth")
    option_count_probs: ProbTable = Field(
        description="Distribution of the number of alternative prerequisite sets (OR branching)"
    )
    dependency_count_probs: ProbTable = Field(
        description="Distribution of the number of parents per prerequisite set (AND arity)"
    )
    goal_dependency_count_probs: ProbTable = Field(
        description="Same as dependency_count_probs, for the goal node"
    )
    parent_depth_bias: float = Field(default=1.0, ge=0, description="beta in exp(-beta((D-1)-d))")
    density: float = Field(gt=0, le=1, description="Task nodes per grid cell")
    corridor_width: tuple[int, int] = Field(description="Inclusive (min, max) corridor width")
    aspect_ratio: float = Field(default=1.0, gt=0, description="Target width / height")
    width: int | None = Field(default=None, ge=2, description="Fix the map width (else density)")
    height: int | None = Field(default=None, ge=2, description="Fix the map height")
    budget_alpha: float = Field(default=3.0, gt=0, description="alpha in B = alpha |O| (Eq. 7)")

    @field_validator("option_count_probs", "dependency_count_probs", "goal_dependency_count_probs")
    @classmethod
    def _probs(cls, value: dict[int, float], info: Any) -> dict[int, float]:
        return _check_probs(value, info.field_name)

    # -> Any: pydantic before-validator: raw input in, raw out
    @field_validator("corridor_width", mode="before")
    @classmethod
    def _width(cls, value: Any) -> Any:
        if isinstance(value, int) and not isinstance(value, bool):
            return (value, value)
        return value

    @model_validator(mode="after")
    def _consistent(self) -> GeneratorConfig:
        low, high = self.corridor_width
        if not 1 <= low <= high:
            raise ValueError(f"corridor_width must be 1 <= min <= max, got {[low, high]}")
        if (self.width is None) != (self.height is None):
            raise ValueError("give both width and height to fix the map size, or neither")
        if (
            self.width is not None
            and self.height is not None
            and self.width * self.height < self.n_nodes + 1
        ):
            raise ValueError(
                f"a {self.width}x{self.height} map cannot hold {self.n_nodes} nodes and the start"
            )
        return self


def _uniform(counts: range) -> ProbTable:
    return {k: 1.0 / len(counts) for k in counts}


#: DAG difficulty (Appendix C.1): small = easy, medium, large = hard.
DAG_LEVELS: dict[str, dict[str, Any]] = {
    "small": {
        "n_nodes": 4,
        "option_count_probs": {1: 1.0},
        "dependency_count_probs": _uniform(range(1, 3)),
        "goal_dependency_count_probs": _uniform(range(1, 3)),
    },
    "medium": {
        "n_nodes": 6,
        "option_count_probs": {1: 0.8, 2: 0.2},
        "dependency_count_probs": _uniform(range(1, 3)),
        "goal_dependency_count_probs": _uniform(range(1, 3)),
    },
    "large": {
        "n_nodes": 8,
        "option_count_probs": {1: 0.6, 2: 0.4},
        "dependency_count_probs": _uniform(range(1, 4)),
        "goal_dependency_count_probs": _uniform(range(1, 4)),
    },
}

#: Exploration demand of the map. Low exploration = high exploitation demand: dense nodes
#: (0.4) joined by 1-wide corridors; high exploration = sparse nodes (0.1), 2-3 wide corridors.
EXPLORE_LEVELS: dict[str, dict[str, Any]] = {
    "low": {"density": 0.4, "corridor_width": (1, 1)},
    "medium": {"density": 0.25, "corridor_width": (1, 3)},
    "high": {"density": 0.1, "corridor_width": (2, 3)},
}

#: The 3 x 3 main grid of the paper: ``explore-{low,medium,high}/dag-{small,medium,large}``.
PRESETS: dict[str, dict[str, Any]] = {
    f"explore-{explore}/dag-{dag}": {
        **EXPLORE_LEVELS[explore],
        **DAG_LEVELS[dag],
        "max_per_layer": 3,
        "parent_depth_bias": 1.0,
        "aspect_ratio": 1.0,
        "budget_alpha": 3.0,
    }
    for explore in EXPLORE_LEVELS
    for dag in DAG_LEVELS
}

#: Seeds of the named main suite (Appendix C.2).
MAIN_SUITE_SEEDS = (0, 1, 2)

#: Figure 20 (Appendix G) fixes "the map size to the full 8x8 grid": one graph varies the
#: exploration demand at the medium DAG size, the other the DAG size at medium demand. With the
#: size fixed, the node density plays no part, so the demand levels differ by corridor width
#: and the DAG sizes by node count (the paper's own knobs, Appendix C.1).
FIGURE20_SIDE = 8
FIGURE20_PRESETS: dict[str, dict[str, Any]] = {
    f"8x8/explore-{explore}/dag-{dag}": {
        **PRESETS[f"explore-{explore}/dag-{dag}"],
        "width": FIGURE20_SIDE,
        "height": FIGURE20_SIDE,
    }
    for explore, dag in [(e, "medium") for e in EXPLORE_LEVELS]
    + [("medium", d) for d in DAG_LEVELS if d != "medium"]
}  # the names are _catalog.figure20_preset_names(), which registers them before any import


def preset_config(preset: str, **overrides: Any) -> GeneratorConfig:
    """The generator config of a main-grid or Figure 20 preset, with optional overrides."""
    known = {**PRESETS, **FIGURE20_PRESETS}
    if preset not in known:
        from exploreval.core import unknown_name_error

        raise unknown_name_error("grid preset", preset, known)
    return GeneratorConfig.model_validate({**known[preset], **overrides})


# ----------------------------------------------------------------------------------------
# Task DAG
# ----------------------------------------------------------------------------------------


@dataclass
class SampledDag:
    """A task DAG over node indices 0..n-1 (the goal is the last index) plus sampling facts."""

    layers: list[list[int]]
    requires: list[list[list[int]]]
    goal: int
    #: Counts as drawn from the distributions, before clipping to the available parents
    #: (per non-primitive node: the option count; per option: the dependency count).
    sampled_option_counts: dict[int, int] = field(default_factory=dict)
    sampled_dependency_counts: dict[int, list[int]] = field(default_factory=dict)
    #: Nodes added to the goal's prerequisite sets because the goal did not depend on them.
    repaired: list[int] = field(default_factory=list)
    #: Options dropped because every redraw duplicated or dominated an earlier option.
    dropped_options: int = 0


def _draw(rng: np.random.Generator, table: ProbTable) -> int:
    """One draw from a categorical table (inverse CDF on one uniform: cheap and exact)."""
    u = rng.random()
    acc = 0.0
    last = 0
    for key, prob in table.items():
        acc += prob
        last = key
        if u < acc:
            return key
    return last  # rounding: u landed in the last sliver


def _weighted_sample(rng: np.random.Generator, weights: list[float], k: int) -> list[int]:
    """``k`` distinct indices, drawn one after another with probability ∝ weight."""
    remaining = list(range(len(weights)))
    picked: list[int] = []
    for _ in range(min(k, len(remaining))):
        total = sum(weights[i] for i in remaining)
        u = rng.random() * total
        acc = 0.0
        choice = remaining[-1]
        for i in remaining:
            acc += weights[i]
            if u < acc:
                choice = i
                break
        picked.append(choice)
        remaining.remove(choice)
    return picked


def _layer_sizes(n_other: int, max_per_layer: int, rng: np.random.Generator) -> list[int]:
    """Split the non-goal nodes into consecutive layers of 1..max_per_layer nodes."""
    sizes: list[int] = []
    remaining = n_other
    while remaining > 0:
        size = int(rng.integers(1, min(max_per_layer, remaining) + 1))
        sizes.append(size)
        remaining -= size
    return sizes


def _ancestors(requires: list[list[list[int]]], node: int) -> set[int]:
    out: set[int] = set()
    stack = [node]
    while stack:
        for option in requires[stack.pop()]:
            for parent in option:
                if parent not in out:
                    out.add(parent)
                    stack.append(parent)
    return out


def sample_dag(config: GeneratorConfig, rng: np.random.Generator) -> SampledDag:
    """Stage 1: layers, prerequisite sets (anchored to the previous layer), goal repair."""
    n = config.n_nodes
    goal = n - 1
    sizes = _layer_sizes(n - 1, config.max_per_layer, rng)
    layers: list[list[int]] = []
    index = 0
    for size in sizes:
        layers.append(list(range(index, index + size)))
        index += size
    layers.append([goal])
    depth_of = {node: d for d, layer in enumerate(layers) for node in layer}
    requires: list[list[list[int]]] = [[] for _ in range(n)]
    dag = SampledDag(layers=layers, requires=requires, goal=goal)
    beta = config.parent_depth_bias
    for depth, layer in enumerate(layers):
        if depth == 0:
            continue
        candidates = [node for d in range(depth) for node in layers[d]]
        weights = [math.exp(-beta * ((depth - 1) - depth_of[c])) for c in candidates]
        for node in layer:
            table = (
                config.goal_dependency_count_probs
                if node == goal
                else config.dependency_count_probs
            )
            n_options = _draw(rng, config.option_count_probs)
            dag.sampled_option_counts[node] = n_options
            dag.sampled_dependency_counts[node] = []
            options: list[frozenset[int]] = []
            for j in range(n_options):
                k = _draw(rng, table)
                dag.sampled_dependency_counts[node].append(k)
                k = min(k, len(candidates))
                chosen: frozenset[int] | None = None
                for _attempt in range(10):
                    picked: list[int] = []
                    pool = list(range(len(candidates)))
                    if j == 0:
                        # Anchor: one parent from the layer right above, so the node's depth
                        # (longest path from a primitive) is exactly its layer.
                        previous = [i for i in pool if depth_of[candidates[i]] == depth - 1]
                        anchor = previous[int(rng.integers(len(previous)))]
                        picked.append(anchor)
                        pool.remove(anchor)
                    extra = k - len(picked)
                    if extra > 0:
                        draws = _weighted_sample(rng, [weights[i] for i in pool], extra)
                        picked.extend(pool[i] for i in draws)
                    attempt = frozenset(candidates[i] for i in picked)
                    # An option equal to, or a superset/subset of, an earlier one adds no
                    # branching (A or (A and B) == A): redraw it.
                    if all(not (attempt <= o or o <= attempt) for o in options):
                        chosen = attempt
                        break
                if chosen is None:
                    dag.dropped_options += 1
                    continue
                options.append(chosen)
            requires[node] = [sorted(o) for o in options]
    # Repair: every node must be an ancestor of the goal. Deepest unconnected nodes first,
    # since connecting a node connects its ancestors too.
    connected = _ancestors(requires, goal)
    for node in sorted(range(goal), key=lambda v: (-depth_of[v], v)):
        if node in connected:
            continue
        for option in requires[goal]:
            option.append(node)
            option.sort()
        dag.repaired.append(node)
        connected |= {node} | _ancestors(requires, node)
    return dag


def random_name(rng: np.random.Generator, taken: set[str] | frozenset[str] = frozenset()) -> str:
    """A 4-character token with at least one letter and one digit (never A/B/C or 1/2/3-like)."""
    while True:
        chars = rng.choice(len(NAME_ALPHABET), size=NAME_LENGTH)
        name = "".join(NAME_ALPHABET[int(i)] for i in chars)
        if is_symbolic_name(name) and name not in taken:
            return name


def is_symbolic_name(name: str) -> bool:
    """Well-formed symbolic name: 4 of A-Z0-9 mixing letters and digits (no order hints)."""
    return (
        len(name) == NAME_LENGTH
        and all(c in NAME_ALPHABET for c in name)
        and any(c.isalpha() for c in name)
        and any(c.isdigit() for c in name)
    )


# ----------------------------------------------------------------------------------------
# Grid map
# ----------------------------------------------------------------------------------------


def map_size(config: GeneratorConfig) -> tuple[int, int]:
    """Integer (width, height) for node density and aspect ratio.

    The density is read as an upper bound (nodes / cells <= density): the map has at least
    ``n_nodes / density`` cells. Height = ceil(sqrt(cells / ratio)), width = the larger of
    ceil(cells / height) and round(ratio * height), so ratio 1 gives square maps.
    """
    if config.width is not None and config.height is not None:
        return config.width, config.height
    cells = max(config.n_nodes / config.density, config.n_nodes + 1)
    ratio = config.aspect_ratio
    height = max(1, math.ceil(math.sqrt(cells / ratio) - 1e-9))
    width = max(math.ceil(cells / height - 1e-9), round(ratio * height), 1)
    return width, height


def _band(start: int, width: int, limit: int, offset: int) -> range:
    """``width`` consecutive indices containing ``start``, shifted by ``offset``, inside the map."""
    low = min(max(start - offset, 0), limit - width)
    return range(low, low + width)


def _carve_corridor(
    open_cells: np.ndarray, a: Cell, b: Cell, width: int, rng: np.random.Generator
) -> None:
    """Open an L-shaped corridor of ``width`` cells between ``a`` and ``b`` (random elbow)."""
    w_map, h_map = open_cells.shape
    horizontal_first = bool(rng.integers(2))
    elbow = (b[0], a[1]) if horizontal_first else (a[0], b[1])
    for p, q in ((a, elbow), (elbow, b)):
        if p[1] == q[1]:  # horizontal leg along row p[1]
            rows = _band(p[1], min(width, h_map), h_map, int(rng.integers(width)))
            x0, x1 = sorted((p[0], q[0]))
            open_cells[x0 : x1 + 1, rows.start : rows.stop] = True
        else:  # vertical leg along column p[0]
            cols = _band(p[0], min(width, w_map), w_map, int(rng.integers(width)))
            y0, y1 = sorted((p[1], q[1]))
            open_cells[cols.start : cols.stop, y0 : y1 + 1] = True


@dataclass
class GeneratedTask:
    """A generated task and how it was made (stored as ``ground_truth["generator"]``)."""

    task: GridTask
    dag: SampledDag
    corridor_widths: list[int]
    config: GeneratorConfig

    def metadata(self) -> dict[str, Any]:
        ids = [node.id for node in self.task.nodes]  # generated in index order
        return {
            "config": self.config.model_dump(mode="json"),
            "layers": [[ids[i] for i in layer] for layer in self.dag.layers],
            "sampled_option_counts": {ids[k]: v for k, v in self.dag.sampled_option_counts.items()},
            "sampled_dependency_counts": {
                ids[k]: v for k, v in self.dag.sampled_dependency_counts.items()
            },
            "repaired": [ids[i] for i in self.dag.repaired],
            "dropped_options": self.dag.dropped_options,
            "corridor_widths": self.corridor_widths,
        }


def generate(
    config: GeneratorConfig, rng: np.random.Generator | int, name: str | None = None
) -> GeneratedTask:
    """Generate one task. ``rng`` may be a seed; ``generate(c, s)`` equals the env's map for
    ``reset(seed=s)`` because Gymnasium seeds ``np_random`` exactly like ``default_rng(s)``."""
    if not isinstance(rng, np.random.Generator):
        rng = np.random.default_rng(rng)
    dag = sample_dag(config, rng)
    names: list[str] = []
    for _ in range(config.n_nodes):
        names.append(random_name(rng, set(names)))
    width, height = map_size(config)
    cells = rng.permutation(width * height)[: config.n_nodes + 1]
    points: list[Cell] = [(int(c) % width, int(c) // width) for c in cells]
    start, node_cells = points[0], points[1:]
    open_cells = np.zeros((width, height), dtype=bool)
    open_cells[start] = True
    connected_points: list[Cell] = [start]
    widths: list[int] = []
    low, high = config.corridor_width
    for i in (int(v) for v in rng.permutation(config.n_nodes)):
        cell = node_cells[i]
        dists = [abs(cell[0] - p[0]) + abs(cell[1] - p[1]) for p in connected_points]
        nearest = [p for p, d in zip(connected_points, dists, strict=True) if d == min(dists)]
        target = nearest[int(rng.integers(len(nearest)))]
        corridor = int(rng.integers(low, high + 1))
        widths.append(corridor)
        _carve_corridor(open_cells, cell, target, corridor, rng)
        connected_points.append(cell)
    reachable = reachable_cells(open_cells, start)
    if len(reachable) != int(open_cells.sum()) or not all(c in reachable for c in node_cells):
        raise AssertionError("generator bug: carved region is not connected")  # pragma: no cover
    obstacles = [(x, y) for x in range(width) for y in range(height) if not open_cells[x, y]]
    nodes = [
        GridNode(
            id=names[i],
            cell=node_cells[i],
            requires=[[names[p] for p in option] for option in dag.requires[i]],
        )
        for i in range(config.n_nodes)
    ]
    task = GridTask(
        name=name,
        width=width,
        height=height,
        obstacles=obstacles,
        start=start,
        nodes=nodes,
        goal=names[dag.goal],
        budget_alpha=config.budget_alpha,
    )
    return GeneratedTask(task=task, dag=dag, corridor_widths=widths, config=config)


def generate_task(preset_or_config: str | GeneratorConfig, seed: int) -> GridTask:
    """Convenience: the task of a preset (or config) and seed, as the env would build it."""
    config = (
        preset_config(preset_or_config) if isinstance(preset_or_config, str) else preset_or_config
    )
    name = f"{preset_or_config}#seed{seed}" if isinstance(preset_or_config, str) else None
    return generate(config, seed, name=name).task
