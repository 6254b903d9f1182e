"""BlocksWorld with an arm (the 4-operator PDDL domain TIDE uses): pickup, putdown, stack,
unstack, with their preconditions checked.

A state maps every block to what it rests on: the table, another block, or the hand.
That single map encodes all PDDL facts (``on``, ``ontable``, ``clear``, ``holding``,
``handempty``), so a state can never hold a block twice or put two blocks on one block;
the goal is a full state, as in TIDE's data (``state == goal``, hand included).

Instances are generated with a known optimal plan length (TIDE's "level"): from a random
start, a walk takes one action at a time and keeps it only if an optimal A* search
confirms the distance from the start grew by exactly one.
"""

from __future__ import annotations

import heapq
import itertools
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from exploreval.agents import EpisodeContext, ScriptedAgent
from exploreval.core import StepInfo
from exploreval.suites.puzzles._common import (
    PAPER_MAX_STEPS,
    Outcome,
    PuzzleEnv,
    check_known_params,
    float_param,
    range_param,
)
from exploreval.suites.puzzles._info import BlocksWorldStepInfo

TABLE = -1
HAND = -2

#: A state: ``state[i]`` is what block i rests on (TABLE, HAND or another block index).
State = tuple[int, ...]


@dataclass(frozen=True)
class Action:
    """One grounded operator. ``target`` is the lower block for stack/unstack."""

    op: str
    block: int
    target: int | None = None

    def text(self) -> str:
        if self.target is None:
            return f"{self.op} {block_name(self.block)}"
        return f"{self.op} {block_name(self.block)} {block_name(self.target)}"


def block_name(index: int) -> str:
    return f"b{index + 1}"


def block_index(name: str, n_blocks: int) -> int | None:
    match = re.fullmatch(r"b(\d+)", name.strip().lower())
    if not match:
        return None
    index = int(match.group(1)) - 1
    return index if 0 <= index < n_blocks else None


# -- the simulator -------------------------------------------------------------------
def held_block(state: State) -> int | None:
    for block, support in enumerate(state):
        if support == HAND:
            return block
    return None


def clear_blocks(state: State) -> list[int]:
    """Blocks with nothing on them (a held block is not clear, as in PDDL)."""
    covered = {s for s in state if s >= 0}
    return [b for b, s in enumerate(state) if s != HAND and b not in covered]


def is_valid_state(state: State) -> bool:
    """At most one block in hand, no block under two blocks, no cycles, nothing on the hand."""
    n = len(state)
    if any(not (s in (TABLE, HAND) or 0 <= s < n) for s in state):
        return False
    if sum(1 for s in state if s == HAND) > 1:
        return False
    supports = [s for s in state if s >= 0]
    if len(supports) != len(set(supports)):
        return False
    for block in range(n):  # follow the chain down; it must end on the table
        seen, cur = {block}, block
        while state[cur] >= 0:
            cur = state[cur]
            if cur in seen or state[cur] == HAND:  # a cycle, or resting on a held block
                return False
            seen.add(cur)
    return True


def legal_actions(state: State) -> list[Action]:
    """Every action whose preconditions hold, in a fixed order."""
    held = held_block(state)
    clear = clear_blocks(state)
    if held is not None:
        return [Action("putdown", held)] + [Action("stack", held, y) for y in clear]
    out = []
    for x in clear:
        out.append(Action("pickup", x) if state[x] == TABLE else Action("unstack", x, state[x]))
    return out


def check_action(state: State, action: Action) -> str | None:
    """Why ``action`` is not applicable in ``state`` (None when it is)."""
    x, y = action.block, action.target
    name = block_name(x)
    held = held_block(state)
    clear = set(clear_blocks(state))

    def where(b: int) -> str:
        s = state[b]
        return (
            "in your hand" if s == HAND else "on the table" if s == TABLE else f"on {block_name(s)}"
        )

    if action.op == "pickup":
        if held is not None:
            return f"cannot pick up {name}: the hand already holds {block_name(held)}"
        if state[x] != TABLE:
            return f"cannot pick up {name}: it is {where(x)}, not on the table (use unstack)"
        if x not in clear:
            return f"cannot pick up {name}: it is not clear"
        return None
    if action.op == "putdown":
        if state[x] != HAND:
            return f"cannot put down {name}: it is not in your hand"
        return None
    assert y is not None
    other = block_name(y)
    if action.op == "stack":
        if x == y:
            return f"cannot stack {name} on itself"
        if state[x] != HAND:
            return f"cannot stack {name}: it is not in your hand"
        if y not in clear:
            return f"cannot stack {name} on {other}: {other} is not clear"
        return None
    if action.op == "unstack":
        if x == y:
            return f"cannot unstack {name} from itself"
        if held is not None:
            return f"cannot unstack {name}: the hand already holds {block_name(held)}"
        if state[x] != y:
            return f"cannot unstack {name} from {other}: {name} is {where(x)}"
        if x not in clear:
            return f"cannot unstack {name}: it is not clear"
        return None
    raise ValueError(f"unknown operator {action.op!r}")


def apply_action(state: State, action: Action) -> State:
    """Successor state; raises ValueError (with the reason) when preconditions fail."""
    reason = check_action(state, action)
    if reason is not None:
        raise ValueError(reason)
    return _successor(state, action)


def _successor(state: State, action: Action) -> State:
    """Successor without precondition checks (for actions from ``legal_actions``)."""
    new = list(state)
    if action.op in ("pickup", "unstack"):
        new[action.block] = HAND
    elif action.op == "putdown":
        new[action.block] = TABLE
    else:
        assert action.target is not None
        new[action.block] = action.target
    return tuple(new)


_ACTION_RE = re.compile(r"^\s*(pickup|putdown|stack|unstack)\s+(.*?)\s*$", re.IGNORECASE)
_ALIASES = {"pick-up": "pickup", "pick_up": "pickup", "put-down": "putdown", "put_down": "putdown"}


def parse_action(text: str, n_blocks: int) -> Action | str:
    """``"stack b1 b2"`` -> Action, or the reason it is not a well-formed action."""
    words = text.strip().rstrip(".").split()
    if len(words) >= 2 and f"{words[0]}_{words[1]}".lower() in _ALIASES:  # "pick up b1"
        words = [f"{words[0]}_{words[1]}", *words[2:]]
    if words and words[0].lower() in _ALIASES:
        words[0] = _ALIASES[words[0].lower()]
    match = _ACTION_RE.match(" ".join(words))
    if not match:
        return (
            f"unknown action {text!r}; expected 'pickup X', 'putdown X', 'stack X Y', "
            "'unstack X Y' or 'stop'"
        )
    op = match.group(1).lower()
    args = [a for a in re.split(r"[\s,]+", match.group(2)) if a]
    arity = 1 if op in ("pickup", "putdown") else 2
    if len(args) != arity:
        return f"{op} takes {arity} block name(s), got {len(args)} in {text!r}"
    indices = [block_index(a, n_blocks) for a in args]
    for arg, index in zip(args, indices, strict=True):
        if index is None:
            return f"unknown block {arg!r}; blocks are b1..b{n_blocks}"
    return Action(op, indices[0], indices[1] if arity == 2 else None)  # type: ignore[arg-type]


# -- optimal planning -------------------------------------------------------------------
def _well_placed(state: State, goal: State) -> list[bool]:
    """Block i is well placed if it and everything under it already rest as in the goal."""
    n = len(state)
    memo: list[bool | None] = [None] * n

    def visit(b: int) -> bool:
        cached = memo[b]
        if cached is not None:
            return cached
        ok = state[b] == goal[b] and (state[b] < 0 or visit(state[b]))
        memo[b] = ok
        return ok

    return [visit(b) for b in range(n)]


def heuristic(state: State, goal: State) -> int:
    """Admissible, consistent lower bound on the actions left.

    Each block not well placed must be moved: 2 actions (take + place), 1 if it is
    already held or if its goal is the hand. A block held now and in the goal must still
    be put down and picked up again (2 more) while any other block has to move.
    """
    placed = _well_placed(state, goal)
    cost = 0
    misplaced = False
    for b, ok in enumerate(placed):
        if ok:
            continue
        misplaced = True
        cost += (state[b] != HAND) + (goal[b] != HAND)
    held = held_block(state)
    if misplaced and held is not None and goal[held] == HAND:
        cost += 2
    return cost


def optimal_plan(start: State, goal: State, bound: int | None = None) -> list[Action] | None:
    """A shortest action sequence (A*); None if none exists within ``bound`` actions."""
    if start == goal:
        return []
    counter = itertools.count()
    g_best = {start: 0}
    parent: dict[State, tuple[State, Action]] = {}
    frontier = [(heuristic(start, goal), next(counter), 0, start)]
    while frontier:
        f, _, g, state = heapq.heappop(frontier)
        if g > g_best[state]:  # stale entry: a shorter route was found later
            continue
        if bound is not None and f > bound:
            return None
        if state == goal:
            plan: list[Action] = []
            while state in parent:
                state, act = parent[state]
                plan.append(act)
            return plan[::-1]
        for act in legal_actions(state):
            nxt = _successor(state, act)
            ng = g + 1
            if ng < g_best.get(nxt, 1 << 30):
                g_best[nxt] = ng
                parent[nxt] = (state, act)
                heapq.heappush(frontier, (ng + heuristic(nxt, goal), next(counter), ng, nxt))
    return None


def optimal_length(start: State, goal: State, bound: int | None = None) -> int | None:
    plan = optimal_plan(start, goal, bound)
    return None if plan is None else len(plan)


# -- generation ----------------------------------------------------------------------------
def random_state(rng: np.random.Generator, n_blocks: int, hold_prob: float) -> State:
    """Random towers (random order, random cut points); maybe one block in hand."""
    order = [int(b) for b in rng.permutation(n_blocks)]
    state = [TABLE] * n_blocks
    if rng.random() < hold_prob:
        state[order.pop()] = HAND
    below: int | None = None
    for block in order:
        new_tower = below is None or bool(rng.random() < 0.4)
        state[block] = TABLE if new_tower or below is None else below
        below = block
    return tuple(state)


def generate_instance(
    rng: np.random.Generator,
    n_blocks: int,
    level: int,
    hold_prob: float = 0.5,
    max_attempts: int = 200,
) -> tuple[State, State]:
    """(start, goal) whose optimal plan has exactly ``level`` actions.

    The state graph is undirected (every action has an inverse) and bipartite (each
    action flips the hand between empty and holding), so from a state at distance k-1 a
    neighbour is at distance k-2 or k: a step is kept iff no plan of k-2 actions reaches it.
    """
    for _ in range(max_attempts):
        start = random_state(rng, n_blocks, hold_prob)
        state, visited = start, {start}
        for k in range(1, level + 1):
            options = legal_actions(state)
            order = rng.permutation(len(options))
            for i in order:
                nxt = _successor(state, options[int(i)])
                if nxt in visited:
                    continue
                if k < 2 or optimal_length(start, nxt, bound=k - 2) is None:
                    state = nxt
                    visited.add(nxt)
                    break
            else:
                break  # dead end for this walk: start over
        else:
            return start, state
    raise RuntimeError(
        f"could not generate a BlocksWorld instance with {n_blocks} blocks and optimal "
        f"plan length {level} in {max_attempts} attempts"
    )


# -- text ------------------------------------------------------------------------------------
def render_state(state: State) -> str:
    """TIDE's sentences, in a fixed order so equal states give equal text."""
    n = len(state)
    lines = [f"You have {n} blocks."]
    held = held_block(state)
    if held is not None:
        lines.append(f"{block_name(held)} is in your hand.")
    lines += [f"{block_name(b)} is on {block_name(s)}." for b, s in enumerate(state) if s >= 0]
    lines += [f"{block_name(b)} is on the table." for b, s in enumerate(state) if s == TABLE]
    lines += [f"{block_name(b)} is clear." for b in clear_blocks(state)]
    if held is None:
        lines.append("Your hand is empty.")
    return "\n".join(lines)


def render_goal(goal: State) -> str:
    """The goal as TIDE words it ("b1 should be on top of b2.")."""
    lines = [f"{block_name(b)} should be clear." for b in clear_blocks(goal)]
    held = held_block(goal)
    lines.append(
        "Your hand should be empty."
        if held is None
        else f"{block_name(held)} should be in your hand."
    )
    lines += [
        f"{block_name(b)} should be on top of {block_name(s)}."
        for b, s in enumerate(goal)
        if s >= 0
    ]
    lines += [f"{block_name(b)} should be on the table." for b, s in enumerate(goal) if s == TABLE]
    return "\n".join(lines)


_FACT_RE = re.compile(
    r"^(b\d+) (?:is|should be) (?:on top of |on )?(the table|b\d+|in your hand)\.$"
)


def parse_state_text(text: str) -> State:
    """Inverse of ``render_state`` / ``render_goal`` (clear and hand lines are implied)."""
    count = re.search(r"You have (\d+) blocks", text)
    supports: dict[int, int] = {}
    for line in text.splitlines():
        match = _FACT_RE.match(line.strip())
        if not match:
            continue
        block = int(match.group(1)[1:]) - 1
        where = match.group(2)
        supports[block] = (
            TABLE
            if where == "the table"
            else HAND
            if where == "in your hand"
            else int(where[1:]) - 1
        )
    n = int(count.group(1)) if count else len(supports)
    if sorted(supports) != list(range(n)):
        raise ValueError(f"BlocksWorld text does not place every block b1..b{n} exactly once")
    return tuple(supports[b] for b in range(n))


def goal_text(goal: State) -> str:
    return "# Goal State\n" + render_goal(goal)


# -- TIDE's PDDL problems ----------------------------------------------------------------------
_PDDL_FACT = re.compile(r"\(\s*([a-z-]+)((?:\s+[\w-]+)*)\s*\)", re.IGNORECASE)


def _pddl_section(text: str, name: str, end: str | None) -> str:
    start = text.lower().find(f"(:{name}")
    if start < 0:
        raise ValueError(f"label: the PDDL problem has no (:{name} ...) section")
    stop = text.lower().find(f"(:{end}", start) if end else len(text)
    return text[start + len(name) + 2 : stop if stop >= 0 else len(text)]


def _pddl_state(facts: list[tuple[str, list[str]]], n_blocks: int, section: str) -> State:
    """The one state a full set of 4-operator facts describes; ValueError naming the fact."""
    support: dict[int, int] = {}
    clear: set[int] = set()
    hand_empty = False

    def block(name: str) -> int:
        index = block_index(name, n_blocks)
        if index is None:
            raise ValueError(f"label: {section}: unknown block {name!r} (objects b1..b{n_blocks})")
        return index

    def place(name: str, where: int, fact: str) -> None:
        index = block(name)
        if index in support:
            raise ValueError(f"label: {section}: {name} has two places ({fact} and another)")
        support[index] = where

    for predicate, args in facts:
        fact = f"({predicate} {' '.join(args)})".replace(" )", ")")
        arity = {"on": 2, "ontable": 1, "holding": 1, "clear": 1, "handempty": 0}.get(predicate)
        if arity is None or len(args) != arity:
            raise ValueError(
                f"label: {section}: {fact}: expected on X Y, ontable X, holding X, clear X or "
                "handempty (the 4-operator domain)"
            )
        if predicate == "on":
            place(args[0], block(args[1]), fact)
        elif predicate == "ontable":
            place(args[0], TABLE, fact)
        elif predicate == "holding":
            place(args[0], HAND, fact)
        elif predicate == "clear":
            clear.add(block(args[0]))
        else:
            hand_empty = True
    unplaced = [block_name(b) for b in range(n_blocks) if b not in support]
    if unplaced:
        raise ValueError(
            f"label: {section}: {', '.join(unplaced)} on nothing: exploreval plays a full "
            "state (every block on the table, on a block or in the hand), as TIDE's files give"
        )
    state = tuple(support[b] for b in range(n_blocks))
    if not is_valid_state(state):
        raise ValueError(f"label: {section}: not a possible state (two blocks on one, or a cycle)")
    if clear != set(clear_blocks(state)) or hand_empty != (held_block(state) is None):
        raise ValueError(
            f"label: {section}: its clear/handempty facts disagree with its on/ontable/holding "
            "facts"
        )
    return state


def parse_pddl_problem(label: str) -> tuple[State, State]:
    """(start, goal) of a TIDE BlocksWorld ``label``: a 4-operator PDDL problem, blocks b1..bN."""
    objects = _pddl_section(label, "objects", "init").strip().rstrip(")").split()
    n_blocks = len(objects)
    expected = {block_name(b) for b in range(n_blocks)}
    if n_blocks < 1 or len(set(objects)) != n_blocks or {o.lower() for o in objects} != expected:
        raise ValueError(f"label: (:objects ...) must be b1..bN, got {' '.join(objects)!r}")
    init = _PDDL_FACT.findall(_pddl_section(label, "init", "goal"))
    goal = _PDDL_FACT.findall(_pddl_section(label, "goal", None))
    start_facts = [(p.lower(), a.split()) for p, a in init]
    goal_facts = [(p.lower(), a.split()) for p, a in goal if p.lower() != "and"]
    return (
        _pddl_state(start_facts, n_blocks, ":init"),
        _pddl_state(goal_facts, n_blocks, ":goal"),
    )


def _check_item(item: Any) -> None:
    parse_pddl_problem(item["label"])


# -- the env -----------------------------------------------------------------------------------
class BlocksWorldEnv(PuzzleEnv):
    """BlocksWorld (4 operators, one arm): rearrange blocks to a goal state."""

    info_model: ClassVar[type[StepInfo]] = BlocksWorldStepInfo

    presets: ClassVar[dict[str, dict[str, Any]]] = {
        # TIDE's dataset 100_1_10: optimal plan length ("level") 1..10, ten instances per
        # level (instance k has level k // 10 + 1), 4 to 8 blocks.
        "paper": {"levels": [1, 10], "blocks": [4, 8], "max_steps": PAPER_MAX_STEPS},
        "easy": {"levels": [1, 4], "blocks": [3, 5], "max_steps": PAPER_MAX_STEPS},
        "hard": {"levels": [11, 14], "blocks": [6, 8], "max_steps": PAPER_MAX_STEPS},
    }
    default_preset = "paper"
    _OPTIONS = ("levels", "blocks", "hold_prob", "max_steps", "instances")

    instance_kind = "blocksworld"
    instance_checks = (_check_item,)

    def _new_instance(self, options: dict[str, Any]) -> None:
        check_known_params(self.params, self._OPTIONS, self.env_id or "BlocksWorld")
        self.source: dict[str, Any] | None = None
        played = self._file_instance()
        if played is not None:
            instances, at, item = played
            self.start, self.goal = parse_pddl_problem(item["label"])
            self.state = self.start
            self.level = item["level"]
            # TIDE's level is not always the optimal plan length: the optimum is searched
            self.optimal = optimal_length(self.start, self.goal)
            self.source = {**instances.source(at), "level": item["level"]}
            return
        self.optimal = None
        lo, hi = range_param(self.params, "levels", (1, 10), low=1, high=self._max_steps)
        b_lo, b_hi = range_param(self.params, "blocks", (4, 8), low=2, high=26)
        hold_prob = float_param(self.params, "hold_prob", 0.5, low=0.0, high=1.0)
        index = self._instance_index()
        n_levels = hi - lo + 1
        # Stratified: consecutive blocks of 10 seeds share a level, cycling through the range.
        level = (
            lo + (index // 10) % n_levels
            if index is not None
            else int(self.np_random.integers(lo, hi + 1))
        )
        n_blocks = int(self.np_random.integers(b_lo, b_hi + 1))
        self.start, self.goal = generate_instance(self.np_random, n_blocks, level, hold_prob)
        self.state = self.start
        self.level = level

    def _apply(self, action: str) -> Outcome:
        parsed = parse_action(action, len(self.state))
        if isinstance(parsed, str):
            return Outcome(valid=False, reason=parsed)
        reason = check_action(self.state, parsed)
        if reason is not None:
            return Outcome(valid=False, reason=reason, extra={"operator": parsed.op})
        self.state = apply_action(self.state, parsed)
        acted = [block_name(parsed.block)]
        if parsed.target is not None:
            acted.append(block_name(parsed.target))
        return Outcome(valid=True, acted=acted, extra={"operator": parsed.op})

    def _render(self) -> str:
        return render_state(self.state)

    def _solved(self) -> bool:
        return self.state == self.goal

    def _progress(self) -> float:
        n = len(self.state)
        return sum(1 for b in range(n) if self.state[b] == self.goal[b]) / n

    def _entities_seen(self) -> list[str]:
        return [block_name(b) for b in range(len(self.state))]

    def ground_truth(self) -> dict[str, Any]:
        return {
            "n_blocks": len(self.start),
            "level": self.level,
            "optimal_length": self.level if self.optimal is None else self.optimal,
            "start": render_state(self.start).splitlines(),
            "goal": render_goal(self.goal).splitlines(),
            "start_supports": list(self.start),
            "goal_supports": list(self.goal),
            "max_steps": self._max_steps,
            **({"instance_source": self.source} if self.source is not None else {}),
        }

    def task_description(self) -> str:
        return goal_text(self.goal)


# -- scripted baselines ---------------------------------------------------------------------------
class BlocksWorldOptimal(ScriptedAgent):
    """Plans with A* from the observation and the goal text; replans if the state surprises it."""

    name = "optimal"

    def start(self, ctx: EpisodeContext, observation: str) -> None:
        self.goal = parse_state_text(ctx.task_description)
        self.plan: list[Action] = []
        self.expected: State | None = None

    def choose(self, observation: str, info: dict[str, Any]) -> str:
        state = parse_state_text(observation)
        if state != self.expected or not self.plan:
            plan = optimal_plan(state, self.goal)
            if not plan:
                return "stop"
            self.plan = plan
        action = self.plan.pop(0)
        self.expected = apply_action(state, action)
        return action.text()


def action_space(n_blocks: int) -> list[str]:
    """Every well-formed action text for ``n_blocks`` blocks (legal or not)."""
    names = [block_name(b) for b in range(n_blocks)]
    out = [f"{op} {x}" for op in ("pickup", "putdown") for x in names]
    out += [f"{op} {x} {y}" for op in ("stack", "unstack") for x in names for y in names if x != y]
    return out


class BlocksWorldRandom(ScriptedAgent):
    """Uniform over all well-formed actions; most break a precondition."""

    name = "random"

    def choose(self, observation: str, info: dict[str, Any]) -> str:
        n = len(parse_state_text(observation))
        return str(self.rng.choice(action_space(n)))


class BlocksWorldRandomValid(ScriptedAgent):
    """Uniform over the actions whose preconditions hold."""

    name = "random_valid"

    def choose(self, observation: str, info: dict[str, Any]) -> str:
        options = legal_actions(parse_state_text(observation))
        return options[int(self.rng.integers(len(options)))].text()


def iter_states(n_blocks: int) -> Iterator[State]:
    """Every valid state of ``n_blocks`` blocks (tests and small exhaustive checks)."""
    for supports in itertools.product([TABLE, HAND, *range(n_blocks)], repeat=n_blocks):
        if is_valid_state(supports):
            yield supports


def plan_is_valid(start: State, goal: State, plan: Sequence[Action]) -> bool:
    state = start
    for act in plan:
        if check_action(state, act) is not None:
            return False
        state = apply_action(state, act)
    return state == goal
