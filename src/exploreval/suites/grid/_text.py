"""The observation text of GridDAG and its exact inverse, plus action parsing.

One module owns the wording so the env (which writes it), the scripted agents and the memory
harness (which read it back) can never drift apart: ``parse_observation(format_observation(v))
== v`` is a tested property. Scripted agents and the memory harness see the episode only
through this text, which is what makes "uses only what the observation revealed" checkable.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Literal

from exploreval.core import INVALID_ACTION
from exploreval.suites.grid._task import MOVES, Cell

MOVE_NAMES: tuple[str, ...] = tuple(MOVES)
NodeKind = Literal["NONE", "AND", "OR", "MIXED"]
NodeStatus = Literal["activated_now", "already_activated", "not_ready"]
#: Characters a node label may not contain (the observation uses them as separators).
FORBIDDEN_LABEL_CHARS = ",[]\n\r\t"
GOAL_MARK = " (goal)"


@dataclass(frozen=True)
class NodeView:
    """What stepping on (or standing on) a node's cell shows."""

    label: str
    is_goal: bool
    kind: NodeKind
    requires: tuple[tuple[str, ...], ...]
    successors: tuple[str, ...]
    status: NodeStatus
    #: Labels among the prerequisites/successors that are the goal.
    goal_neighbours: frozenset[str] = field(default_factory=frozenset)

    @property
    def parents(self) -> tuple[str, ...]:
        seen: dict[str, None] = {}
        for option in self.requires:
            for parent in option:
                seen.setdefault(parent, None)
        return tuple(seen)


@dataclass(frozen=True)
class CellView:
    """One observation: the current cell, its admissible moves and node, and what happened."""

    step: int
    position: Cell
    moves: tuple[str, ...]
    node: NodeView | None = None
    #: Set when the last action was invalid: the message shown to the agent.
    invalid: str | None = None
    #: "success" when the goal was just activated, "budget" when the steps ran out.
    ended: Literal["success", "budget"] | None = None


def label_problem(label: str) -> str | None:
    """Why ``label`` cannot be shown in the observation text, or None if it can."""
    if not label or label != label.strip():
        return "must be non-empty without leading/trailing spaces"
    bad = sorted({c for c in label if c in FORBIDDEN_LABEL_CHARS})
    if bad:
        return f"must not contain {', '.join(repr(c) for c in bad)} (used as separators)"
    if label.endswith(GOAL_MARK.strip()):
        return "must not end with '(goal)'"
    if label.lower() == "none":
        return "must not be 'none' (the observation uses it for empty lists)"
    return None


def _cell_text(cell: Cell) -> str:
    return f"[{cell[0]}, {cell[1]}]"


def _names(labels: tuple[str, ...], goals: frozenset[str]) -> str:
    return ", ".join(label + (GOAL_MARK if label in goals else "") for label in labels)


_KIND_TEXT: dict[str, str] = {
    "NONE": "none (no prerequisites)",
    "AND": "AND",
    "OR": "OR",
    "MIXED": "OR of AND groups",
}


#: Lines of an observation that are not part of the grid state: the feedback after an invalid
#: action and the step counter. Loop detection (TIDE) drops them when it compares states, so
#: a revisited state reads the same whatever step it is and whatever came before.
TRANSIENT_LINE_PATTERNS = (r"(?m)^Invalid action: .* You did not move\.$", r"(?m)^Step \d+\.\s*")
#: Text every match of each pattern contains (what lets most observations skip the regex).
TRANSIENT_LINE_NEEDS = ("Invalid action: ", "Step ")


def _state_identity() -> object:
    from exploreval.metrics import strip_patterns

    return strip_patterns(*TRANSIENT_LINE_PATTERNS, needs=TRANSIENT_LINE_NEEDS)


#: TIDE loop detection's notion of "same state" for grid observations (registered by the plugin).
STATE_IDENTITY = _state_identity()


def format_observation(view: CellView) -> str:
    """The text the agent receives (see docs/grid.md, "Observation")."""
    lines: list[str] = []
    if view.invalid:
        lines.append(f"Invalid action: {view.invalid} You did not move.")
    lines.append(f"Step {view.step}. You are at {_cell_text(view.position)}.")
    lines.append(f"Admissible moves: {', '.join(view.moves) if view.moves else 'none'}")
    node = view.node
    if node is None:
        lines.append("There is no state here.")
    else:
        lines.append(f"State here: {node.label}{GOAL_MARK if node.is_goal else ''}")
        lines.append(f"  Type: {_KIND_TEXT[node.kind]}")
        goals = node.goal_neighbours
        if node.kind == "NONE":
            lines.append("  Prerequisites: none")
        elif node.kind == "AND":
            lines.append(f"  Prerequisites (all required): {_names(node.requires[0], goals)}")
        elif node.kind == "OR":
            flat = tuple(option[0] for option in node.requires)
            lines.append(f"  Prerequisites (any one suffices): {_names(flat, goals)}")
        else:
            groups = " or ".join(f"[{_names(option, goals)}]" for option in node.requires)
            lines.append(f"  Prerequisites (any one group suffices): {groups}")
        lines.append(f"  Successors: {_names(node.successors, goals) or 'none'}")
        if node.status == "activated_now":
            lines.append(f"  Activated now: {node.label}.")
        elif node.status == "already_activated":
            lines.append(f"  {node.label} was already activated.")
        else:
            lines.append(
                f"  {node.label} is not activated: its prerequisites are not satisfied yet."
            )
    if view.ended == "success":
        lines.append("You activated the goal state. Task complete.")
    elif view.ended == "budget":
        lines.append("The step budget is exhausted. The episode is over.")
    return "\n".join(lines)


class ObservationParseError(ValueError):
    """Text that is not a GridDAG observation."""


_STEP = re.compile(r"^Step (\d+)\. You are at \[(-?\d+), (-?\d+)\]\.$")
_MOVES = re.compile(r"^Admissible moves: (.*)$")
_STATE = re.compile(r"^State here: (.+)$")
_TYPE = re.compile(r"^  Type: (.+)$")
_PREREQ = re.compile(r"^  Prerequisites(?: \(([a-z ]+)\))?: (.*)$")
_SUCC = re.compile(r"^  Successors: (.*)$")
_INVALID = re.compile(r"^Invalid action: (.*) You did not move\.$")
_KIND_FROM_TEXT = {v: k for k, v in _KIND_TEXT.items()}


def _split_goal(label: str) -> tuple[str, bool]:
    if label.endswith(GOAL_MARK):
        return label[: -len(GOAL_MARK)], True
    return label, False


def _parse_names(text: str, goals: set[str]) -> tuple[str, ...]:
    if text == "none":
        return ()
    out = []
    for raw in text.split(", "):
        label, is_goal = _split_goal(raw)
        if is_goal:
            goals.add(label)
        out.append(label)
    return tuple(out)


def parse_observation(text: str) -> CellView:
    """Inverse of ``format_observation``; raises ``ObservationParseError`` on other text."""
    lines = text.split("\n")
    i = 0
    invalid = None
    if lines and (m := _INVALID.match(lines[0])):
        invalid = m.group(1)
        i = 1
    if i >= len(lines) or not (m := _STEP.match(lines[i])):
        raise ObservationParseError(f"expected 'Step N. You are at [x, y].' in {text!r}")
    step, position = int(m.group(1)), (int(m.group(2)), int(m.group(3)))
    i += 1
    if i >= len(lines) or not (m := _MOVES.match(lines[i])):
        raise ObservationParseError(f"expected 'Admissible moves: ...' in {text!r}")
    moves = () if m.group(1) == "none" else tuple(m.group(1).split(", "))
    i += 1
    node: NodeView | None = None
    if i < len(lines) and lines[i] == "There is no state here.":
        i += 1
    elif i < len(lines) and (m := _STATE.match(lines[i])):
        label, is_goal = _split_goal(m.group(1))
        try:
            kind_match = _TYPE.match(lines[i + 1])
            prereq_match = _PREREQ.match(lines[i + 2])
            succ_match = _SUCC.match(lines[i + 3])
            status_line = lines[i + 4]
        except IndexError:
            raise ObservationParseError(f"truncated state description in {text!r}") from None
        if not (kind_match and prereq_match and succ_match):
            raise ObservationParseError(f"malformed state description in {text!r}")
        kind_text = kind_match.group(1)
        if kind_text not in _KIND_FROM_TEXT:
            raise ObservationParseError(f"unknown state type {kind_text!r}")
        kind: NodeKind = _KIND_FROM_TEXT[kind_text]  # type: ignore[assignment]
        goals: set[str] = set()
        body = prereq_match.group(2)
        requires: tuple[tuple[str, ...], ...]
        if kind == "NONE":
            requires = ()
        elif kind == "AND":
            requires = (_parse_names(body, goals),)
        elif kind == "OR":
            requires = tuple((name,) for name in _parse_names(body, goals))
        else:
            groups = re.findall(r"\[([^\[\]]*)\]", body)
            requires = tuple(_parse_names(group, goals) for group in groups)
        successors = _parse_names(succ_match.group(1), goals)
        status: NodeStatus
        if status_line == f"  Activated now: {label}.":
            status = "activated_now"
        elif status_line == f"  {label} was already activated.":
            status = "already_activated"
        elif status_line.startswith(f"  {label} is not activated"):
            status = "not_ready"
        else:
            raise ObservationParseError(f"unknown state status line {status_line!r}")
        node = NodeView(
            label=label,
            is_goal=is_goal,
            kind=kind,
            requires=requires,
            successors=successors,
            status=status,
            goal_neighbours=frozenset(goals),
        )
        i += 5
    else:
        raise ObservationParseError(f"expected the cell content line in {text!r}")
    ended: Literal["success", "budget"] | None = None
    if i < len(lines):
        if lines[i] == "You activated the goal state. Task complete.":
            ended = "success"
        elif lines[i] == "The step budget is exhausted. The episode is over.":
            ended = "budget"
    return CellView(
        step=step, position=position, moves=moves, node=node, invalid=invalid, ended=ended
    )


# ----------------------------------------------------------------------------------------
# Actions
# ----------------------------------------------------------------------------------------

ACTION_HELP = 'expected one of up, down, left, right, or a JSON object like {"action": "up"}'


def parse_env_action(action: str) -> tuple[str | None, str | None]:
    """What the env accepts: a bare move name or ``{"action": "<move>"}`` (case-insensitive).

    Returns ``(move, None)`` or ``(None, reason)``.
    """
    if action == INVALID_ACTION:
        return None, "the model reply could not be parsed into a move"
    text = action.strip()
    if text.lower() in MOVES:
        return text.lower(), None
    if text.startswith("{"):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            return None, f"malformed JSON action ({exc.msg}); {ACTION_HELP}"
        if not isinstance(data, dict) or "action" not in data:
            return None, f'JSON action has no "action" field; {ACTION_HELP}'
        value = data["action"]
        if isinstance(value, str) and value.strip().lower() in MOVES:
            return value.strip().lower(), None
        return None, f"unknown move {value!r}; {ACTION_HELP}"
    shown = text if len(text) <= 40 else text[:37] + "..."
    return None, f"unknown action {shown!r}; {ACTION_HELP}"


_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)
_OBJECT = re.compile(r"\{[^{}]*\}")
_LOOSE_ACTION = re.compile(r"""["']?action["']?\s*[:=]\s*["']?([A-Za-z]+)""", re.IGNORECASE)


@dataclass(frozen=True)
class ReplyParse:
    """A model reply read as a move (or the reason it could not be)."""

    move: str | None
    reason: str | None = None
    reasoning: str | None = None
    #: Which rule read the move: "json", "loose" (``action: up``) or "bare" (just the word).
    how: str | None = None


_MOVE_WORD = re.compile(r"\b(up|down|left|right)\b", re.IGNORECASE)


def parse_model_reply(text: str, lenient: bool = False) -> ReplyParse:
    """Tolerant reading of a model reply: the LAST JSON object with an "action" key wins
    (code fences and prose around it are fine); then a loose ``action: up``; then a reply
    that is nothing but a move name. Everything before the action is kept as reasoning.

    ``lenient`` (off by default; not the paper's protocol) adds a last rule for small models
    that answer in prose: a reply naming exactly one move word ("I will move up.") is that
    move; naming several is still invalid, with the words in the reason."""
    if not text or not text.strip():
        return ReplyParse(None, "empty reply")
    body = re.sub(r"<think>.*?</think>", "", text, flags=re.DOTALL)
    candidates = list(_OBJECT.finditer(body))
    for match in reversed(candidates):
        raw = match.group(0)
        try:
            data = json.loads(raw)
        except json.JSONDecodeError:
            try:  # single-quoted pseudo-JSON is common from small models
                data = json.loads(raw.replace("'", '"'))
            except json.JSONDecodeError:
                continue
        if not isinstance(data, dict):
            continue
        keys = {str(k).strip().lower(): v for k, v in data.items()}
        if "action" not in keys:
            continue
        value = keys["action"]
        reasoning = body[: match.start()].strip() or None
        if isinstance(value, str) and value.strip().lower() in MOVES:
            return ReplyParse(value.strip().lower(), None, reasoning, "json")
        return ReplyParse(
            None, f"action {value!r} is not one of {', '.join(MOVE_NAMES)}", reasoning
        )
    loose = list(_LOOSE_ACTION.finditer(body))
    if loose:
        value = loose[-1].group(1).lower()
        reasoning = body[: loose[-1].start()].strip() or None
        if value in MOVES:
            return ReplyParse(value, None, reasoning, "loose")
        return ReplyParse(
            None, f"action {value!r} is not one of {', '.join(MOVE_NAMES)}", reasoning
        )
    fenced = _FENCE.search(body)
    bare = (fenced.group(1) if fenced else body).strip().strip("`'\".!").strip().lower()
    if bare in MOVES:
        return ReplyParse(bare, how="bare")
    if lenient:
        named = sorted({m.lower() for m in _MOVE_WORD.findall(body)})
        if len(named) == 1:
            return ReplyParse(named[0], None, body.strip() or None, "lenient")
        if named:
            return ReplyParse(
                None, f"no JSON action, and the reply names several moves ({', '.join(named)})"
            )
    return ReplyParse(None, 'no JSON action like {"action": "up"} found in the reply')
