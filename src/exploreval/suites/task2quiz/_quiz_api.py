"""Stage 2: deterministic questions about the initial world, answerable or not given Stage 1.

Questions are generated from the world's structured ground truth (``QuizWorld.summary``) for the
paper's five types and the answer formats of its Appendix C; each carries evidence checkpoints,
and its reference answer is the true answer only if the Stage-1 steps met them, else
``non-answerable``. Everything here is a pure function of (world, stage-1 step facts, seed), so
the metrics recompute it from the record. The rules (which evidence answers which question) are
in docs/task2quiz.md, "Quiz".
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from exploreval.suites.task2quiz._contract import (
    NON_ANSWERABLE,
    Question,
    QuizWorld,
    Stage1StepFacts,
)
from exploreval.suites.task2quiz._layout import OPPOSITE

#: Marks whether this module is the stand-in (False: the real quiz).
PLACEHOLDER = False

#: Appendix C, "QA Type-specific Guidelines" (verbatim; ``what`` and ``default`` as printed).
GUIDELINES: dict[str, str] = {
    "yes_no": 'Answer "yes" or "no" only.',
    "which": "Answer with the exact choice text from the given choices.",
    "description": (
        "Provide a concise, categorical description. Focus on object types/categories rather "
        "than specific item names. Do NOT include exits, doors, or room connections. Valid "
        "options: [object, container, supporter, food, key]."
    ),
    "where": "Answer with the location/room name.",
    "what": "Answer concisely with the specific information requested.",
    "default": "Answer concisely.",
}
#: TextWorld entity types -> the category words of the ``description`` guideline.
KINDS = {"o": "object", "k": "key", "f": "food", "c": "container", "s": "supporter"}
DIRECTIONS = ("north", "south", "east", "west")

_ARTICLES = re.compile(r"\b(the|a|an)\b")
_NON_ANSWERABLE_SYNONYMS = {
    "non answerable",
    "nonanswerable",
    "not answerable",
    "unanswerable",
    "unknown",
    "cannot answer",
    "can not answer",
    "i dont know",
    "cannot be determined",
}
#: TextWorld's reply to opening a locked door or container names its key.
KEY_NAMING = re.compile(r"You have to unlock the (?P<thing>.+?) with the (?P<key>.+?) first")


def normalise(text: str) -> str:
    """Lower case, no articles, no punctuation, single spaces; synonyms of non-answerable folded."""
    text = text.lower().replace("-", " ").replace("'", "")
    text = re.sub(r"[^a-z0-9 ]+", " ", text)
    text = _ARTICLES.sub(" ", text)
    text = " ".join(text.split())
    return "non answerable" if text in _NON_ANSWERABLE_SYNONYMS else text


def parse_answer(raw: str) -> tuple[str | None, str | None]:
    """The ``answer`` of a JSON reply (code fences and text around it tolerated), or an error."""
    text = raw.strip()
    fenced = re.search(r"```(?:json)?\s*(.*?)```", text, re.S)
    if fenced:
        text = fenced.group(1).strip()
    start, end = text.find("{"), text.rfind("}")
    if start == -1 or end <= start:
        return None, "no JSON object in the reply"
    try:
        data = json.loads(text[start : end + 1])
    except json.JSONDecodeError as exc:
        return None, f"invalid JSON: {exc.msg}"
    if not isinstance(data, dict) or "answer" not in data:
        return None, 'the JSON object has no "answer" field'
    answer = data["answer"]
    if isinstance(answer, bool):
        answer = "yes" if answer else "no"
    if not isinstance(answer, str | int | float):
        return None, '"answer" is not a string'
    return str(answer), None


# -- evidence ---------------------------------------------------------------------------------


@dataclass
class Evidence:
    """What the Stage-1 steps showed (computed from ``Stage1StepFacts`` alone)."""

    visited: set[str] = field(default_factory=set)
    moves: set[frozenset[str]] = field(default_factory=set)  # rooms crossed between directly
    opened: set[str] = field(default_factory=set)
    unlocked: set[str] = field(default_factory=set)
    held: set[str] = field(default_factory=set)
    #: doors/containers whose key the game named (an open attempt while locked)
    keynamed: set[str] = field(default_factory=set)
    #: (thing, state) the text stated while the thing was still in its initial state
    described: set[tuple[str, str]] = field(default_factory=set)

    def atoms(self) -> set[str]:
        """The evidence as checkpoint atoms (``visited:r_1``, ``moved:r_0:r_1``...)."""
        out = {f"visited:{r}" for r in self.visited}
        for pair in self.moves:
            a, b = sorted(pair)
            out |= {f"moved:{a}:{b}", f"moved:{b}:{a}"}
        out |= {f"opened:{x}" for x in self.opened}
        out |= {f"unlocked:{x}" for x in self.unlocked}
        out |= {f"held:{x}" for x in self.held}
        out |= {f"keynamed:{x}" for x in self.keynamed}
        out |= {f"described:{x}:{state}" for x, state in self.described}
        return out


def evidence_from_steps(world: QuizWorld, steps: Sequence[Stage1StepFacts]) -> Evidence:
    """Rooms visited, direct moves, things opened/unlocked, items held, keys named by the game.

    Each task restarts in the start room (its own game), so the first move of a task starts
    there; a change of room counts as a move only between adjacent rooms. A key-naming message counts only when it names the thing's true key (the game's own
    text; a world without that message never produces it)."""
    summary = world.summary or {}
    start = str(summary.get("start_room", "r_0"))
    ids = {name: eid for eid, name in summary.get("names", {}).items()}
    lockables = {**summary.get("doors", {}), **summary.get("containers", {})}
    adjacent = {frozenset((c["src"], c["dst"])) for c in summary.get("connections", [])}
    found = Evidence(visited={start})
    room, task = start, None
    patterns = state_patterns(summary)
    changed: set[str] = set()  # things whose open/lock state this task has changed so far
    for step in steps:
        if step.task_index != task:
            room, task = start, step.task_index
            changed = set()
        found.described |= described_states(step.intro, patterns, changed)
        for fact in (*step.facts_added, *step.facts_removed):
            name, args = split_fact(fact)
            if name in ("open", "closed", "locked") and args:
                changed.add(args[0])
        found.described |= described_states(step.feedback, patterns, changed)
        if step.room and step.room != room:
            if frozenset((room, step.room)) in adjacent:  # (a real trajectory never jumps)
                found.moves.add(frozenset((room, step.room)))
            room = step.room
        if step.room:
            found.visited.add(step.room)
        for fact in step.facts_added:
            name, args = split_fact(fact)
            if name == "open" and args:
                found.opened.add(args[0])
            elif name == "in" and len(args) == 2 and args[1] == "I":
                found.held.add(args[0])
        for fact in step.facts_removed:
            name, args = split_fact(fact)
            if name == "locked" and args:
                found.unlocked.add(args[0])
        for match in KEY_NAMING.finditer(step.feedback or ""):
            thing, key = ids.get(match["thing"]), ids.get(match["key"])
            if thing is not None and thing in lockables and lockables[thing].get("key") == key:
                found.keynamed.add(thing)
    return found


#: TextWorld's room and examine text (``house_room.twg``): a container is "a locked / a closed /
#: an open(ed) X" or "The X is locked / closed"; a door is only "a closed / an open X", and a
#: locked door is called closed, so for doors only "open" tells the state.
_CONTAINER_TEXT = (
    r"\b(?:an?\s+(locked|closed|opened|open)\s+{name}|the\s+{name}\s+is\s+(locked|closed))\b"
)
_DOOR_TEXT = r"\ban?\s+(opened|open)\s+{name}\b"


def state_patterns(summary: dict[str, Any]) -> dict[str, re.Pattern[str]]:
    """Per door and container, the phrases of TextWorld's text that state its open/lock state."""
    names: dict[str, str] = summary.get("names", {})
    out: dict[str, re.Pattern[str]] = {}
    for kind, template in (("containers", _CONTAINER_TEXT), ("doors", _DOOR_TEXT)):
        for thing in summary.get(kind, {}):
            if thing in names:
                name = r"\s+".join(re.escape(w) for w in names[thing].split())
                out[thing] = re.compile(template.format(name=name), re.IGNORECASE)
    return out


def described_states(
    text: str, patterns: dict[str, re.Pattern[str]], changed: set[str]
) -> set[tuple[str, str]]:
    """(thing, locked|closed|open) stated by ``text`` for things still in their initial state
    (``changed``: those this task's actions have opened, closed, locked or unlocked)."""
    found: set[tuple[str, str]] = set()
    if not text:
        return found
    for thing, pattern in patterns.items():
        if thing in changed:
            continue
        for match in pattern.finditer(text):
            word = (match.group(1) or match.group(match.lastindex or 1)).lower()
            found.add((thing, "open" if word.startswith("open") else word))
    return found


def split_fact(fact: str) -> tuple[str, list[str]]:
    """``"at(o_1,r_2)"`` -> ``("at", ["o_1", "r_2"])``."""
    name, _, rest = fact.partition("(")
    return name, [a.strip() for a in rest.rstrip(")").split(",") if a.strip()]


def satisfied(checkpoint: Any, atoms: set[str]) -> bool:
    """A checkpoint formula (``{"all": [...]}``, ``{"any": [...]}`` or an atom) over atoms."""
    if isinstance(checkpoint, dict):
        if "all" in checkpoint:
            return all(satisfied(c, atoms) for c in checkpoint["all"])
        return any(satisfied(c, atoms) for c in checkpoint["any"])
    if not isinstance(checkpoint, str) or checkpoint.split(":", 1)[0] not in _ATOM_KINDS:
        raise ValueError(f"unknown checkpoint {checkpoint!r}")
    return checkpoint in atoms


_ATOM_KINDS = {"visited", "moved", "opened", "unlocked", "held", "keynamed", "described"}


def checkpoint_atoms(checkpoint: Any) -> set[str]:
    """Every atom a checkpoint formula mentions."""
    if isinstance(checkpoint, dict):
        parts = checkpoint.get("all", checkpoint.get("any", []))
        return set().union(*(checkpoint_atoms(c) for c in parts)) if parts else set()
    return {str(checkpoint)}


# -- checkpoints per entity -------------------------------------------------------------------
#: An atom (``visited:r_1``) or ``{"all": [...]}`` / ``{"any": [...]}`` of checkpoints.
Checkpoint = str | dict[str, list["Checkpoint"]]


def _seen(summary: dict[str, Any], entity: str) -> Checkpoint:
    """An entity is seen when the player stood in its room and it was not hidden in a closed
    container (or the container was opened, or the item was held)."""
    if entity in summary.get("containers", {}):
        return f"visited:{summary['containers'][entity]['room']}"
    if entity in summary.get("supporters", {}):
        return f"visited:{summary['supporters'][entity]['room']}"
    info = summary["items"][entity]
    where_kind, where = info["location"]
    room = f"visited:{info['room']}"
    if where_kind == "in" and summary["containers"][where]["state"] != "open":
        return {"any": [{"all": [room, f"opened:{where}"]}, f"held:{entity}"]}
    return {"any": [room, f"held:{entity}"]}


def _lock_revealed(summary: dict[str, Any], thing: str) -> Checkpoint:
    """Whether a door/container was locked at the start: a locked one by trying to open it (the
    game names the key), unlocking it, or text calling it locked (containers only); a closed one
    by opening it or, for a container, text calling it closed (TextWorld never calls a locked
    container closed; it does call a locked door closed); an open one is seen open."""
    info = summary["doors"].get(thing) or summary["containers"][thing]
    container = thing in summary["containers"]
    if info["state"] == "locked":
        told = [f"described:{thing}:locked"] if container else []
        return {"any": [f"keynamed:{thing}", f"unlocked:{thing}", *told]}
    if info["state"] == "closed":
        return (
            {"any": [f"opened:{thing}", f"described:{thing}:closed"]}
            if container
            else (f"opened:{thing}")
        )
    return _open_seen(summary, thing)


def _open_seen(summary: dict[str, Any], thing: str) -> Checkpoint:
    """An open door or container is seen open from its room (the room text says "an open X")."""
    info = summary["doors"].get(thing) or summary["containers"][thing]
    if thing in summary["doors"]:
        return {"any": [f"visited:{r}" for r in info["rooms"]]}
    return f"visited:{info['room']}"


def _open_revealed(summary: dict[str, Any], thing: str) -> Checkpoint:
    """Whether a door/container was open at the start: an open one is seen open; one that was not
    shows it by being opened, unlocked or named with its key, or by text calling it closed or
    locked (for a door only "open" is told, so a closed door shows by being opened)."""
    info = summary["doors"].get(thing) or summary["containers"][thing]
    if info["state"] == "open":
        return _open_seen(summary, thing)
    told: list[Checkpoint] = [f"described:{thing}:closed", f"described:{thing}:locked"]
    acted: list[Checkpoint] = [f"opened:{thing}", f"unlocked:{thing}", f"keynamed:{thing}"]
    return {"any": acted + (told if thing in summary["containers"] else [])}


def _exits_known(neighbours: dict[str, set[str]], room: str) -> Checkpoint:
    """The player knows where every exit of ``room`` leads (it went through each)."""
    return {"all": [f"moved:{room}:{other}" for other in sorted(neighbours[room])]}


# -- generation -------------------------------------------------------------------------------


#: The question rules: ``paper`` (the default) asks the mix the paper's Table 2 implies;
#: ``per-element`` is the earlier rule, one question per element of each type's kind.
QUIZ_RULES = ("paper", "per-element")
DEFAULT_QUIZ_RULE = "paper"


def check_quiz_rule(value: Any) -> str:
    """The env option ``quiz_rule``: one of QUIZ_RULES (older records used ``per-element``)."""
    rule = DEFAULT_QUIZ_RULE if value is None else value
    if rule not in QUIZ_RULES:
        raise ValueError(
            f"option 'quiz_rule' must be one of {', '.join(QUIZ_RULES)}, got {value!r}"
        )
    return str(rule)


def generate_questions(
    world: QuizWorld, seed: int, rule: str = DEFAULT_QUIZ_RULE
) -> list[Question]:
    """The quiz of one world, in a fixed order (the rng only picks the non-adjacent room pairs).

    Types and formats (docs/task2quiz.md, "Questions"): Location (where) for every item,
    container and supporter; Connectivity (yes/no) for every adjacent pair and non-adjacent
    ones; Direction (what) for every connection; Match (which) for every locked door/container;
    Property: was each door/container locked, and was it open (yes/no). The ``paper`` rule
    (Table 2's mix) adds the start room to Location, asks half as many non-adjacent pairs as
    adjacent ones, asks a door's connection from both sides, and asks Match both ways (which key
    opens a lock, and what each such key opens); ``per-element`` asks as many non-adjacent pairs
    as adjacent ones and none of the additions."""
    paper = check_quiz_rule(rule) == "paper"
    summary = world.summary or {}
    names: dict[str, str] = summary.get("names", {})
    rng = np.random.default_rng([seed, 7919])
    out: list[Question] = []

    def add(qtype: str, fmt: str, text: str, answer: str, checkpoints: Any, choices=()) -> None:  # type: ignore[no-untyped-def]
        out.append(
            Question(
                id=f"q{len(out):03d}",
                qtype=qtype,  # type: ignore[arg-type]
                format=fmt,  # type: ignore[arg-type]
                text=text,
                choices=tuple(choices),
                answer=answer,
                checkpoints=checkpoints,
            )
        )

    items = sorted(summary.get("items", {}), key=_order)
    furniture = sorted([*summary.get("containers", {}), *summary.get("supporters", {})], key=_order)
    things = items + furniture
    rooms = list(summary.get("rooms", []))
    neighbours: dict[str, set[str]] = {r: set() for r in rooms}
    for c in summary.get("connections", []):
        neighbours[c["src"]].add(c["dst"])
        neighbours[c["dst"]].add(c["src"])

    # Location: the room each thing is in at the start (following in/on)
    for thing in things:
        add(
            "location", "where", f"In which room was the {names[thing]} at the start?",
            names[_room_of(summary, thing)], _seen(summary, thing),
        )  # fmt: skip
    start = summary.get("start_room")
    if paper and start in names:
        add("location", "where", "In which room did you start?", names[start], f"visited:{start}")
    # Connectivity: every adjacent pair (yes) and as many non-adjacent pairs (no)
    adjacent = {frozenset((c["src"], c["dst"])) for c in summary.get("connections", [])}
    for pair in sorted(adjacent, key=lambda p: sorted(p, key=_order)):
        a, b = sorted(pair, key=_order)
        add(
            "connectivity", "yes_no", f"Is the {names[a]} directly connected to the {names[b]}?",
            "yes", f"moved:{a}:{b}",
        )  # fmt: skip
    others = [
        (a, b)
        for i, a in enumerate(rooms)
        for b in rooms[i + 1 :]
        if frozenset((a, b)) not in adjacent
    ]
    negatives = (len(adjacent) + 1) // 2 if paper else len(adjacent)
    for index in sorted(rng.permutation(len(others))[:negatives].tolist()):
        a, b = others[index]
        # "not connected" is known once both rooms were seen and every exit of one of them
        # was followed (an exit does not say where it leads until the player goes through)
        add(
            "connectivity", "yes_no", f"Is the {names[a]} directly connected to the {names[b]}?",
            "no",
            {"all": [f"visited:{a}", f"visited:{b}",
                     {"any": [_exits_known(neighbours, a), _exits_known(neighbours, b)]}]},
        )  # fmt: skip
    # Direction: for each connection, which way from src to dst
    for c in summary.get("connections", []):
        add(
            "direction", "what",
            f"Which direction do you go from the {names[c['src']]} to reach the {names[c['dst']]}?",
            c["direction"], f"moved:{c['src']}:{c['dst']}", choices=DIRECTIONS,
        )  # fmt: skip
        if paper and c.get("door"):  # a door is described from both of its rooms
            add(
                "direction",
                "what",
                f"Which direction do you go from the {names[c['dst']]} to reach the "
                f"{names[c['src']]}?",
                OPPOSITE[c["direction"]],
                f"moved:{c['dst']}:{c['src']}",
                choices=DIRECTIONS,
            )
    # Match: which key opens each locked door or container
    lockables = {**summary.get("doors", {}), **summary.get("containers", {})}
    keys = [i for i in items if summary["items"][i]["kind"] == "k"]
    for thing in sorted(lockables, key=_order):
        key = lockables[thing]["key"]
        if key is None:
            continue
        add(
            "match", "which", f"Which key opens the {names[thing]}?", names[key],
            {"any": [f"unlocked:{thing}", f"keynamed:{thing}"]},
            choices=[names[k] for k in keys],
        )  # fmt: skip
    if paper:  # and the other way: what each key that opens something opens
        locked = {
            lockables[t]["key"]: t for t in sorted(lockables, key=_order) if lockables[t]["key"]
        }
        for key in sorted(locked, key=_order):
            thing = locked[key]
            add(
                "match",
                "which",
                f"What does the {names[key]} open?",
                names[thing],
                {"any": [f"unlocked:{thing}", f"keynamed:{thing}"]},
                choices=[names[t] for t in sorted(lockables, key=_order)],
            )
    # Property: latent lock and open state of every door and container (the paper's property
    # type: "locked/unlocked, open/closed"); no per-thing "kind" question (docs/task2quiz.md)
    for thing in sorted(lockables, key=_order):
        add(
            "property", "yes_no", f"Was the {names[thing]} locked at the start?",
            "yes" if lockables[thing]["state"] == "locked" else "no",
            _lock_revealed(summary, thing),
        )  # fmt: skip
    for thing in sorted(lockables, key=_order):
        add(
            "property", "yes_no", f"Was the {names[thing]} open at the start?",
            "yes" if lockables[thing]["state"] == "open" else "no",
            _open_revealed(summary, thing),
        )  # fmt: skip
    return out


def _order(entity: str) -> tuple[str, int]:
    kind, _, number = entity.partition("_")
    return kind, int(number) if number.isdigit() else -1


def _room_of(summary: dict[str, Any], thing: str) -> str:
    if thing in summary.get("items", {}):
        return str(summary["items"][thing]["room"])
    table = (
        summary["containers"] if thing in summary.get("containers", {}) else summary["supporters"]
    )
    return str(table[thing]["room"])


def _kind_of(summary: dict[str, Any], thing: str) -> str:
    if thing in summary.get("items", {}):
        return str(summary["items"][thing]["kind"])
    return "c" if thing in summary.get("containers", {}) else "s"


QUIZ_INSTRUCTIONS = (
    "The tasks are over. Now answer questions about the game's initial state (the world as it "
    "was when each task started), from what you observed while playing."
)


def question_prompt(question: Question, index: int, total: int) -> str:
    """The question as the env shows it: Appendix C's QA prompt without the context (the
    agent's memory is the context; an LLM harness adds it)."""
    lines = [f"Question {index + 1} of {total}: {question.text}"]
    if question.choices:
        lines += ["", "Choices:", *(f"- {c}" for c in question.choices)]
    lines += [
        "",
        'Answer should be json of the form: {"answer": "<your answer>", "reason": "<why>"}',
        "",
        "Answer formatting guidelines:",
        GUIDELINES.get(question.format, GUIDELINES["default"]),
        "",
        f'If the question cannot be answered based on the context, set answer to "{NON_ANSWERABLE}".',
    ]
    return "\n".join(lines)


def public_question(question: Question, index: int, total: int) -> dict[str, Any]:
    """What the agent may see of a question (no answer, no checkpoints)."""
    return {
        "id": question.id,
        "index": index,
        "total": total,
        "qtype": question.qtype,
        "format": question.format,
        "text": question.text,
        "choices": list(question.choices),
        "guideline": GUIDELINES.get(question.format, GUIDELINES["default"]),
    }


def select_questions(questions: Sequence[Question], limit: int | None, seed: int) -> list[int]:
    """Indices of at most ``limit`` questions (all when None): a seeded draw spread over the
    types in turn (location, connectivity, direction, match, property...), in quiz order."""
    if limit is None or limit >= len(questions):
        return list(range(len(questions)))
    rng = np.random.default_rng([seed, 4243])
    by_type: dict[str, list[int]] = {}
    for i, q in enumerate(questions):
        by_type.setdefault(q.qtype, []).append(i)
    pools = [list(rng.permutation(idx)) for _, idx in sorted(by_type.items())]
    chosen: list[int] = []
    while len(chosen) < limit:
        for pool in pools:
            if pool and len(chosen) < limit:
                chosen.append(int(pool.pop(0)))
    return sorted(chosen)


def check_max_questions(value: Any) -> int | None:
    """The env option ``max_questions`` (None or a positive integer)."""
    if value is None or value == "":
        return None
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise ValueError(f"max_questions={value!r}: expected a positive integer") from None
    if number < 1 or str(number) != str(value).strip():
        raise ValueError(f"max_questions={value!r}: expected a positive integer")
    return number


class QuizSession:
    """The quiz of one episode: questions, reference answers given Stage 1, scoring."""

    def __init__(
        self,
        world: QuizWorld,
        stage1: Sequence[Stage1StepFacts],
        seed: int,
        max_questions: int | None = None,
        rule: str = DEFAULT_QUIZ_RULE,
    ) -> None:
        self.world = world
        self.rule = rule
        self.evidence = evidence_from_steps(world, stage1)
        atoms = self.evidence.atoms()
        every = generate_questions(world, seed, rule)
        self.questions = [every[i] for i in select_questions(every, max_questions, seed)]
        self.references = [
            q.answer if satisfied(q.checkpoints, atoms) else NON_ANSWERABLE for q in self.questions
        ]

    def prompt(self, i: int) -> str:
        text = question_prompt(self.questions[i], i, len(self.questions))
        return f"{QUIZ_INSTRUCTIONS}\n\n{text}" if i == 0 else text

    def public(self, i: int) -> dict[str, Any]:
        return public_question(self.questions[i], i, len(self.questions))

    def record_answer(self, i: int, raw_action: str) -> dict[str, Any]:
        question, reference = self.questions[i], self.references[i]
        answer, error = parse_answer(raw_action)
        return {
            "question_id": question.id,
            "answer": answer,
            "parse_error": error,
            "reference": reference,
            "correct": answer is not None and normalise(answer) == normalise(reference),
            "answerable": reference != NON_ANSWERABLE,
            "qtype": question.qtype,
            "format": question.format,
        }


def start_quiz(
    world: QuizWorld,
    stage1: Sequence[Stage1StepFacts],
    seed: int,
    max_questions: int | None = None,
    rule: str = DEFAULT_QUIZ_RULE,
) -> QuizSession:
    return QuizSession(world, stage1, seed, max_questions, rule)
