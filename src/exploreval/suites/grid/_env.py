"""``exploreval/GridDAG-v0``: a partially observable grid map with a hidden task DAG.

Each step the agent sends one move; the env answers with the new cell, its admissible moves
and, on a node's cell, the node's name, type, prerequisites and successors (never their
locations). Node statuses follow Eq. 3-4: a node is seen once its cell is visited and
achieved ("activated") when visited with its precondition met. The episode ends when the goal
is achieved (success) or after the hidden budget ``B = alpha * |traversable cells|``.
"""

from __future__ import annotations

import difflib
from importlib import resources
from pathlib import Path
from typing import Any, ClassVar

from pydantic import ValidationError

from exploreval.core import INVALID_ACTION, StepInfo, TextEnv
from exploreval.suites.grid._generator import FIGURE20_PRESETS, PRESETS, GeneratorConfig, generate
from exploreval.suites.grid._info import GridStepInfo
from exploreval.suites.grid._paths import oracle_plan
from exploreval.suites.grid._prompts import ENVIRONMENT_DESCRIPTION
from exploreval.suites.grid._task import MOVES, Cell, GridTask, GridTaskError
from exploreval.suites.grid._text import (
    ACTION_HELP,
    CellView,
    NodeStatus,
    NodeView,
    format_observation,
    label_problem,
    parse_env_action,
)

#: Cooking maps of Appendix E shipped with the package (``maps/<name>.json``).
PACKAGED_MAPS = ("custom-201", "custom-202", "custom-203", "custom-204")
NAMINGS = ("semantic", "symbolic")
_ENV_OPTIONS = {"map", "naming", "budget"}


def packaged_map_path(name: str) -> Path:
    return Path(str(resources.files("exploreval.suites.grid").joinpath(f"maps/{name}.json")))


def load_map(map_ref: str | Path) -> GridTask:
    """A packaged map name (``custom-201``) or a path to a custom-map JSON file."""
    text = str(map_ref)
    if text in PACKAGED_MAPS:
        return GridTask.load(packaged_map_path(text))
    path = Path(text)
    if not path.exists():
        close = difflib.get_close_matches(text, PACKAGED_MAPS, n=2, cutoff=0.6)
        hint = f" Did you mean {', '.join(close)}?" if close else ""
        raise GridTaskError(
            f"map {text!r} is neither a packaged map ({', '.join(PACKAGED_MAPS)}) nor an "
            f"existing file.{hint}"
        )
    return GridTask.load(path)


def _presets() -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {name: dict(params) for name, params in PRESETS.items()}
    out.update({name: dict(params) for name, params in FIGURE20_PRESETS.items()})
    for name in PACKAGED_MAPS:
        for naming in NAMINGS:
            out[f"{name}/{naming}"] = {"map": name, "naming": naming}
    return out


class GridDAGEnv(TextEnv):
    """Partially observable grid map with a hidden task DAG (Park et al.)."""

    run_inline: ClassVar[bool] = True  # microsecond steps: no thread hop
    info_model: ClassVar[type[StepInfo]] = GridStepInfo

    presets: ClassVar[dict[str, dict[str, Any]]] = _presets()
    default_preset: ClassVar[str | None] = "explore-low/dag-small"

    def __init__(self, preset: str | None = None, **options: Any) -> None:
        super().__init__(preset=preset, **options)
        known = set(GeneratorConfig.model_fields) | _ENV_OPTIONS
        for key in options:
            if key not in known:
                close = difflib.get_close_matches(key, sorted(known), n=2)
                hint = f" Did you mean {', '.join(close)}?" if close else ""
                raise ValueError(
                    f"GridDAG-v0: unknown option {key!r}.{hint} Known: {', '.join(sorted(known))}"
                )
        self.naming = str(self.params.get("naming", "semantic"))
        if self.naming not in NAMINGS:
            raise ValueError(f"GridDAG-v0: naming must be one of {NAMINGS}, got {self.naming!r}")
        self.fixed_task: GridTask | None = None
        self.config: GeneratorConfig | None = None
        if "map" in self.params:
            generator_keys = sorted(
                k for k in options if k in GeneratorConfig.model_fields and k != "budget_alpha"
            )
            if generator_keys:
                raise ValueError(
                    f"GridDAG-v0: option(s) {', '.join(generator_keys)} configure the generator "
                    "and cannot be combined with map=..."
                )
            task = load_map(self.params["map"])
            if "budget_alpha" in options:
                alpha = options["budget_alpha"]
                if isinstance(alpha, bool) or not isinstance(alpha, int | float) or alpha <= 0:
                    raise ValueError(
                        f"GridDAG-v0: budget_alpha must be a positive number, got {alpha!r}"
                    )
                task = task.model_copy(update={"budget_alpha": float(alpha)})
            self.fixed_task = task
        else:
            data = {k: v for k, v in self.params.items() if k in GeneratorConfig.model_fields}
            try:
                self.config = GeneratorConfig.model_validate(data)
            except ValidationError as exc:
                problems = "; ".join(
                    f"{'.'.join(str(p) for p in e['loc']) or 'options'}: {e['msg']}"
                    for e in exc.errors()
                )
                raise ValueError(f"GridDAG-v0: invalid generator options: {problems}") from None
        budget = self.params.get("budget")
        if budget is not None and (
            isinstance(budget, bool) or not isinstance(budget, int) or budget < 1
        ):
            raise ValueError(f"GridDAG-v0: budget must be a positive integer, got {budget!r}")
        self.task: GridTask | None = None

    # -- episode setup -------------------------------------------------------------------
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        self._seed = seed  # names generated maps "<preset>#seed<seed>", like generate_task
        return super().reset(seed=seed, options=options)

    def _reset(self, options: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        if self.fixed_task is not None:
            task = self.fixed_task
            self.generator_meta: dict[str, Any] | None = None
        else:
            assert self.config is not None
            name = self.preset or "generated"
            if getattr(self, "_seed", None) is not None:
                name = f"{name}#seed{self._seed}"
            generated = generate(self.config, self.np_random, name=name)
            task = generated.task
            self.generator_meta = generated.metadata()
        if self.params.get("budget") is not None:
            task = task.model_copy(update={"budget": int(self.params["budget"])})
        self.task = task
        self._labels = self._make_labels(task)
        self._moves_at: dict[Cell, tuple[str, ...]] = {}
        self._views: dict[str, tuple[Any, ...]] = {}
        self.pos: Cell = task.start
        self.seen: set[str] = set()
        self.achieved: set[str] = set()
        plan = oracle_plan(task)
        self.oracle_steps = plan.steps if plan is not None else None
        view = CellView(step=0, position=self.pos, moves=self._moves(self.pos))
        info = {
            "pos": list(self.pos),
            "node": None,
            "moves": list(view.moves),
            "discovered": [],
            "achieved": [],
            "entities_seen": [],
            "entities_acted": [],
            "progress": 0.0,
        }
        return format_observation(view), info

    def _make_labels(self, task: GridTask) -> dict[str, str]:
        labels = {
            node.id: (node.label if self.naming == "semantic" else node.id) for node in task.nodes
        }
        owners: dict[str, str] = {}
        for node_id, label in labels.items():
            problem = label_problem(label)
            if problem:
                raise GridTaskError(f"node {node_id!r}: shown name {label!r} {problem}")
            if label in owners:
                raise GridTaskError(
                    f"nodes {owners[label]!r} and {node_id!r} would both be shown as {label!r}"
                )
            owners[label] = node_id
        return labels

    def _moves(self, cell: Cell) -> tuple[str, ...]:
        moves = self._moves_at.get(cell)
        if moves is None:
            assert self.task is not None
            moves = tuple(self.task.neighbours(cell))
            self._moves_at[cell] = moves
        return moves

    def _node_view(self, node_id: str, status: NodeStatus) -> NodeView:
        assert self.task is not None
        parts = self._views.get(node_id)
        if parts is None:
            task, label = self.task, self._labels
            node = task.node_by_id[node_id]
            neighbours = set(node.parents) | set(task.children[node_id])
            parts = (
                label[node_id],
                node_id == task.goal,
                node.kind,
                tuple(tuple(label[p] for p in option) for option in node.requires),
                tuple(label[c] for c in task.children[node_id]),
                frozenset(label[n] for n in neighbours if n == task.goal),
                sorted(neighbours | {node_id}),
            )
            self._views[node_id] = parts
        return NodeView(
            label=parts[0],
            is_goal=parts[1],
            kind=parts[2],
            requires=parts[3],
            successors=parts[4],
            status=status,
            goal_neighbours=parts[5],
        )

    # -- dynamics --------------------------------------------------------------------------
    def _step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        assert self.task is not None, "reset() first"
        task = self.task
        move, reason = parse_env_action(action)
        shown_invalid: str | None = None
        discovered: list[str] = []
        newly_achieved: list[str] = []
        acted: list[str] = []
        here = self.pos
        moves = self._moves(here)
        if move is None:
            assert reason is not None
            shown_invalid = (
                "your reply could not be parsed into a move."
                if action == INVALID_ACTION
                else f"could not read a move from {action.strip()[:40]!r} ({ACTION_HELP})."
            )
        elif move not in moves:
            dx, dy = MOVES[move]
            target = (here[0] + dx, here[1] + dy)
            why = "off the map" if not task.in_bounds(target) else "an obstacle"
            reason = f"{move!r} from {list(here)} leads to {list(target)}, {why}"
            shown_invalid = f"{move!r} is not an admissible move from [{here[0]}, {here[1]}]."
        else:
            dx, dy = MOVES[move]
            here = (here[0] + dx, here[1] + dy)
            self.pos = here
        node_id = task.node_at.get(here)
        status: NodeStatus | None = None
        if node_id is not None:
            entered = shown_invalid is None
            if entered:
                acted.append(node_id)
                if node_id not in self.seen:
                    self.seen.add(node_id)
                    discovered.append(node_id)
            if node_id in self.achieved:
                status = "already_activated"
            elif entered and task.node_by_id[node_id].precondition_met(self.achieved):
                self.achieved.add(node_id)
                newly_achieved.append(node_id)
                status = "activated_now"
            else:
                status = "not_ready"
        success = task.goal in self.achieved
        truncated = not success and self.t >= task.step_budget
        view = CellView(
            step=self.t,
            position=here,
            moves=self._moves(here),
            node=self._node_view(node_id, status) if node_id is not None and status else None,
            invalid=shown_invalid,
            ended="success" if success else ("budget" if truncated else None),
        )
        info: dict[str, Any] = {
            "pos": list(here),
            "node": node_id,
            "moves": list(view.moves),
            "discovered": discovered,
            "achieved": newly_achieved,
            "valid": shown_invalid is None,
            "success": success,
            "progress": len(self.achieved) / len(task.nodes),
            "entities_seen": list(self._views[node_id][6]) if node_id is not None else [],
            "entities_acted": acted,
        }
        if shown_invalid is not None:
            info["invalid_reason"] = reason
        return format_observation(view), 1.0 if success else 0.0, success, truncated, info

    # -- contract hooks ------------------------------------------------------------------------
    def ground_truth(self) -> dict[str, Any]:
        if self.task is None:
            return {}
        return {
            "task": self.task.to_dict(),
            "generator": self.generator_meta,
            "oracle_steps": self.oracle_steps,
            "naming": self.naming,
            "budget": self.task.step_budget,
        }

    def render(self) -> str:
        """The true map with the agent (``@``), then the last observation (ansi mode)."""
        if self.task is None:
            return ""
        from exploreval.suites.grid._render import ascii_map

        return f"{ascii_map(self.task, self.naming, agent=self.pos)}\n\n{self._last_obs}"

    @property
    def max_steps(self) -> int | None:
        return self.task.step_budget if self.task is not None else None

    def task_description(self) -> str:
        return ENVIRONMENT_DESCRIPTION
