"""How scripted Task2Quiz agents answer the quiz: from a perfect memory of their own Stage 1.

A scripted agent with memory is modelled as remembering perfectly what its own Stage-1 steps
showed: the same evidence function the reference answers use, applied to the steps it saw, so it
knows the true answer of exactly the questions its trajectory made answerable. The quiz policy
says what it remembers and what it does with the rest:

* ``recall``: answers what its trajectory showed, guesses the rest uniformly among the answer's
  options (the choices, yes/no, the five kinds, the rooms it saw). EUS then measures how much of
  the world its play exposed.
* ``honest``: answers what its trajectory showed, "non-answerable" otherwise. EUS is 1.0 for any
  play: a check of the pipeline (the ``quiz-oracle``).
* ``guess``: no memory at all: a uniform guess for every question (a player that does not build
  a world model while it plays).
* ``abstain``: "non-answerable" to everything. EUS = the non-answerable share.

Answering from memory needs the world's true facts, so agents answering ``recall`` or ``honest``
are privileged; their play does not read the ground truth unless they say so (the walkthrough).
"""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np

from exploreval.suites.task2quiz._contract import NON_ANSWERABLE, QuizWorld, Stage1StepFacts

QUIZ_POLICIES = ("recall", "honest", "guess", "abstain")


def check_quiz_policy(policy: str) -> str:
    if policy not in QUIZ_POLICIES:
        raise ValueError(f"agent option quiz={policy!r}: expected one of {list(QUIZ_POLICIES)}")
    return policy


def stage1_facts(info: dict[str, Any]) -> Stage1StepFacts | None:
    """The Stage-1 step facts in a step's info (None for quiz steps and the reset info)."""
    if info.get("command") is None or info.get("facts_added") is None:
        return None
    return Stage1StepFacts(
        task_index=int(info.get("task_index") or 0),
        command=str(info["command"]),
        feedback=str(info.get("feedback") or ""),
        room=info.get("room"),
        facts_added=tuple(info.get("facts_added") or ()),
        facts_removed=tuple(info.get("facts_removed") or ()),
        intro=str(info.get("intro") or ""),
    )


class QuizAnswerer:
    """Answers the quiz from the agent's own Stage-1 evidence under a quiz policy."""

    def __init__(self, policy: str, world: QuizWorld | None, rng: np.random.Generator) -> None:
        self.policy = check_quiz_policy(policy)
        if world is None and policy in ("recall", "honest"):
            raise ValueError(f"quiz={policy!r} needs the Task2Quiz ground truth (privileged)")
        self.world = world
        self.rng = rng
        self.max_questions: int | None = None  # the env option, set by the agent at start
        self.observed: list[Stage1StepFacts] = []
        self._known: list[str] | None = None
        self._seen_rooms: list[str] = []

    def observe(self, info: dict[str, Any]) -> None:
        """Remember the previous step's Stage-1 facts (every step's info carries them)."""
        facts = stage1_facts(info)
        if facts is not None:
            self.observed.append(facts)

    def answer(self, info: dict[str, Any]) -> str:
        index = int((info.get("question") or {}).get("index", info.get("task", 0)))
        if self.policy == "abstain":
            return _reply(NON_ANSWERABLE, "this agent keeps no world model")
        if self.policy == "guess" or self.world is None:
            return _reply(self._guess(info.get("question") or {}), "a guess (no memory)")
        if self._known is None:
            from exploreval.suites.task2quiz._quiz_api import start_quiz

            # the env's quiz seed is the world seed (its ground truth says which)
            session = start_quiz(self.world, self.observed, self.world.seed, self.max_questions)
            self._known = session.references
            names = (self.world.summary or {}).get("names", {})
            self._seen_rooms = [names[r] for r in sorted(session.evidence.visited)]
        return self._recall(index, info)

    def _recall(self, index: int, info: dict[str, Any]) -> str:
        assert self._known is not None
        known = self._known[index] if index < len(self._known) else NON_ANSWERABLE
        if known != NON_ANSWERABLE or self.policy == "honest":
            return _reply(known, "from what I observed")
        return _reply(self._guess(info.get("question") or {}), "a guess")

    def _guess(self, question: dict[str, Any]) -> str:
        from exploreval.suites.task2quiz._quiz_api import KINDS

        fmt = question.get("format")
        options: list[str]
        if question.get("choices"):
            options = list(question["choices"])
        elif fmt == "yes_no":
            options = ["yes", "no"]
        elif fmt == "description":
            options = sorted(set(KINDS.values()))
        elif fmt == "where":
            options = self._seen_rooms or self._room_names() or ["unknown"]
        else:
            options = ["unknown"]
        return str(options[int(self.rng.integers(len(options)))])

    def _room_names(self) -> list[str]:
        """Rooms the agent has been told of: the names in the feedback's room headers."""
        headers = (_ROOM_HEADER.findall(s.feedback) for s in self.observed)
        return sorted({name.lower() for found in headers for name in found})


_ROOM_HEADER = re.compile(r"^-= (.+) =-$", re.MULTILINE)


def _reply(answer: str, reason: str) -> str:
    return json.dumps({"answer": answer, "reason": reason})
