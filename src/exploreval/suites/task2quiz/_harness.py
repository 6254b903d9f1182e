"""The paper's LLM harness (Appendix C): act from observation, inventory and score with
``{"reason", "command"}`` replies (no admissible commands shown), then answer the quiz from the
agent's memory with the QA prompt template.

Memory (the ``--history`` policy) spans every task of the episode and is the quiz's context:

* ``full`` (the paper's *in-context* baseline): every Stage-1 turn; the quiz context is the whole
  interaction transcript.
* ``window:K``: the last K turns (acting and quiz context alike).
* ``summary``: a running summary written by the model itself: its replies carry a ``memory`` field
  (notes that replace the previous ones); it sees only its notes and the current observation, and
  the quiz context is its last notes.
* ``retrieval:K``: a retrieval memory over the turns (BM25): the K turns most relevant to the
  current observation (plus the latest) when acting, the K most relevant to the question in the
  quiz.
* ``none``: no memory (the quiz context is empty).
* ``mem0``, ``langmem``, ``amem`` (``:K``): the paper's memory systems, each its own package
  (``agents._memory``): every Stage-1 turn is stored in it, the K entries it recalls for the
  current observation are shown under it, and in the quiz the K entries it recalls for the
  question are the context.

Quiz answers are never added to the memory: every question is answered from Stage 1 alone.
"""

from __future__ import annotations

import json
import re
from typing import Any

from exploreval.agents import EpisodeContext, Harness, ParsedAction, Turn
from exploreval.core import Message, option_bool
from exploreval.models import Constraint

SYSTEM_PROMPT = (
    "You are playing a text-based adventure game (TextWorld). You will be given several tasks "
    "in a row, all in the same world; each task starts again from the world's initial state, "
    "with you in the starting room. Act by typing one game command at a time, for example: go "
    "north, look, examine desk, open chest, take key, take key from chest, unlock door with key, "
    "eat apple, inventory."
)
ANNOUNCE_QUIZ = (
    "After the last task you will be asked questions about the world as it was at the start "
    "(where things are, how rooms connect, in which direction, which key opens what, what is "
    "locked), answered from what you observed."
)
SUMMARY_RULES = (
    'You do not see earlier turns. Keep notes instead: add a "memory" field to every reply with '
    "everything worth remembering about the world so far (rooms and their exits, where each exit "
    "leads, objects and where they are, what is locked and which key opens it). The notes you "
    "write replace your previous notes."
)

#: Appendix C, "Action Prompt Template".
ACTION_TEMPLATE = """Observation:
{obs}

Inventory:
{inventory}

Score: {score}

Return ONLY JSON: {{"reason": "...", "command": "<one command>"}}"""
ACTION_TEMPLATE_SUMMARY = """Your notes:
{notes}

Observation:
{obs}

Inventory:
{inventory}

Score: {score}

Return ONLY JSON: {{"reason": "...", "memory": "<your updated notes>", "command": "<one command>"}}"""

#: Appendix C, "QA Prompt Template" (the context block only when there is a context).
QA_TEMPLATE = """You answer questions about TextWorld gameplay.
Based on the provided context, answer the following question about the TextWorld game initial state.
{context_block}
{question}
{choices_block}
Answer should be json of the form:
{{
  "answer": "<your answer>",
  "reason": "<why>"
}}

Answer formatting guidelines:
{guideline}

If the question cannot be answered based on the context, set answer to "non-answerable"."""

_JSON_OBJECT = re.compile(r"\{.*\}", re.S)


def _first_json(text: str) -> tuple[dict[str, Any] | None, str | None]:
    """The first JSON object of a reply (code fences and surrounding text tolerated)."""
    fenced = re.search(r"```(?:json)?\s*(.*?)```", text, re.S)
    body = fenced.group(1) if fenced else text
    start = body.find("{")
    if start < 0:
        return None, "no JSON object in the reply"
    decoder = json.JSONDecoder()
    try:
        data, _ = decoder.raw_decode(body[start:])
    except json.JSONDecodeError as exc:
        return None, f"invalid JSON: {exc.msg}"
    if not isinstance(data, dict):
        return None, "the reply's JSON is not an object"
    return data, None


class Task2QuizHarness(Harness):
    """Appendix C's action and QA prompts with a memory that spans tasks (module docstring)."""

    name = "default"

    def __init__(
        self,
        history: Any = "full",
        announce_quiz: bool | str = False,
        lenient: bool | str = False,
        **options: Any,
    ) -> None:
        if options:
            raise ValueError(
                f"task2quiz harness: unknown option(s) {', '.join(sorted(options))}; "
                "known: announce_quiz, lenient"
            )
        self.announce_quiz = option_bool(announce_quiz, "harness option announce_quiz")
        self.lenient = option_bool(lenient, "harness option lenient")
        super().__init__(history=history)
        if self.announce_quiz:
            self.options["announce_quiz"] = True
        if self.lenient:
            self.options["lenient"] = True
        self.notes = ""

    def reset(self, ctx: EpisodeContext, observation: str) -> None:
        super().reset(ctx, observation)
        self.notes = ""

    # -- acting -------------------------------------------------------------------------------
    def system_prompt(self) -> str:
        parts = [SYSTEM_PROMPT]
        if self.announce_quiz:
            parts.append(ANNOUNCE_QUIZ)
        if self.history.mode == "summary":
            parts.append(SUMMARY_RULES)
        elif self.history.mode == "window":
            parts.append(f"You only see the last {self.history.window} turns.")
        elif self.history.mode == "retrieval":
            parts.append(
                "Instead of the whole history you see the earlier turns most relevant to the "
                "current one, and the latest turn."
            )
        elif self.history.mode == "none":
            parts.append("You only see the current observation.")
        elif self.history.mode == "memory":
            parts.append(
                "Instead of the earlier turns you see what your memory recalls as relevant to "
                "the current observation."
            )
        return "\n\n".join(parts)

    def format_observation(self, observation: str, info: dict[str, Any]) -> str:
        held = info.get("inventory") or []
        inventory = (
            "You are carrying: " + ", ".join(held) + "." if held else "You are carrying nothing."
        )
        score = info.get("score", 0)
        if self.history.mode == "summary":
            return ACTION_TEMPLATE_SUMMARY.format(
                notes=self.notes or "(none yet)", obs=observation, inventory=inventory, score=score
            )
        return ACTION_TEMPLATE.format(obs=observation, inventory=inventory, score=score)

    def summary(self) -> str:
        return ""  # the notes are part of the observation template

    def constraint(self, observation: str, info: dict[str, Any]) -> Constraint | None:
        """The quiz's answer object (the question's choices when it has them), or the acting
        turn's ``{"reason", "command"}`` object with the command one of TextWorld's admissible
        commands when the env lists them (a finite action space), any short text otherwise."""
        reason = {"type": "string", "maxLength": 300}
        if info.get("phase") == "quiz" and info.get("question"):
            choices = [str(c) for c in (info["question"].get("choices") or [])]
            answer: dict[str, Any] = (
                {"type": "string", "enum": [*choices, "non-answerable"]}
                if choices else {"type": "string", "maxLength": 120}
            )  # fmt: skip
            schema = {"type": "object", "properties": {"answer": answer, "reason": reason},
                      "required": ["answer", "reason"], "additionalProperties": False}  # fmt: skip
            return Constraint(name="quiz answer", json_schema=schema)
        commands = sorted({str(c) for c in (info.get("admissible_commands") or []) if str(c)})
        command: dict[str, Any] = (
            {"type": "string", "enum": commands} if commands
            else {"type": "string", "minLength": 1, "maxLength": 80}
        )  # fmt: skip
        properties: dict[str, Any] = {"reason": reason, "command": command}
        if self.history.mode == "summary":
            properties["memory"] = {"type": "string", "maxLength": 400}
        schema = {"type": "object", "properties": properties, "required": list(properties),
                  "additionalProperties": False}  # fmt: skip
        return Constraint(name="textworld command", json_schema=schema)

    def messages(self, observation: str, info: dict[str, Any]) -> list[Message]:
        if info.get("phase") == "quiz" and info.get("question"):
            return [Message(role="user", content=self.quiz_prompt(info["question"]))]
        return super().messages(observation, info)

    def parse(self, text: str) -> ParsedAction:
        data, error = _first_json(text)
        if data is None:
            if self.lenient:
                line = next((ln.strip() for ln in text.strip().splitlines() if ln.strip()), "")
                if line and len(line) <= 80 and "{" not in line:
                    return ParsedAction(line.rstrip("."), None, None, {"parsed_by": "lenient"})
            return ParsedAction(None, error)
        reason = data.get("reason")
        reasoning = str(reason) if reason is not None else None
        if "answer" in data and "command" not in data:
            answer = data["answer"]
            if isinstance(answer, bool):
                answer = "yes" if answer else "no"
            if not isinstance(answer, str | int | float):
                return ParsedAction(None, '"answer" is not a string', reasoning)
            return ParsedAction(
                json.dumps({"answer": str(answer), "reason": reasoning or ""}), None, reasoning
            )
        command = data.get("command")
        if not isinstance(command, str) or not command.strip():
            return ParsedAction(None, 'the JSON object has no "command" string', reasoning)
        memory = data.get("memory")
        info = {"memory": str(memory)} if self.history.mode == "summary" and memory else {}
        return ParsedAction(" ".join(command.split()), None, reasoning, info)

    def record(
        self, observation: str, info: dict[str, Any], reply: str, action: str | None
    ) -> None:
        if info.get("phase") == "quiz":
            return  # every question is answered from Stage 1 alone
        if self.history.mode == "summary":
            data, _ = _first_json(reply)
            if data is not None and data.get("memory"):
                self.notes = str(data["memory"])
        self.remember(Turn(observation=self.format_observation(observation, info), reply=reply))

    def memory_query(self, observation: str, info: dict[str, Any]) -> str:
        """A memory system recalls for the question in the quiz, for the observation before."""
        if info.get("phase") == "quiz" and info.get("question"):
            return str(info["question"].get("text", ""))
        return observation

    def memory_turn(
        self, observation: str, info: dict[str, Any], reply: str
    ) -> tuple[str, str] | None:
        if info.get("phase") == "quiz":
            return None  # every question is answered from Stage 1 alone
        return observation, reply

    # -- the quiz -----------------------------------------------------------------------------
    def quiz_context(self, question: str) -> str:
        """What the agent remembers of Stage 1, as the QA prompt's context."""
        mode = self.history.mode
        if mode == "none":
            return ""
        if mode == "memory":  # what the memory system recalled for this question
            return "\n".join(f"- {entry}" for entry in self.recalled)
        if mode == "summary":
            return self.notes
        if mode == "window":
            turns = self.turns[-self.history.window :] if self.history.window else []
        elif mode == "retrieval":
            chosen = self.memory_index.top(question, self.history.window)
            turns = [self.turns[i] for i in chosen]
        else:
            turns = self.turns
        return "\n\n".join(_transcript(t) for t in turns)

    def quiz_prompt(self, question: dict[str, Any]) -> str:
        context = self.quiz_context(str(question.get("text", "")))
        choices = question.get("choices") or []
        return QA_TEMPLATE.format(
            context_block=f"\nContext:\n{context}\n" if context else "",
            question=question.get("text", ""),
            choices_block=("\nChoices:\n" + "\n".join(f"- {c}" for c in choices) + "\n")
            if choices
            else "",
            guideline=question.get("guideline", "Answer concisely."),
        )


def _transcript(turn: Turn) -> str:
    """One remembered turn as context text: the observation and the command the agent gave."""
    data, _ = _first_json(turn.reply)
    command = data.get("command") if data else None
    action = str(command) if isinstance(command, str) else turn.reply.strip()[:200]
    return f"{turn.observation.split('Return ONLY JSON')[0].rstrip()}\nAction: {action}"
