"""LLM harnesses for GridDAG: ReAct-style prompts (Appendix C.3) and the memory summary (D).

``react`` (also registered as ``default``): system prompt = environment description +
strategy sentence (base / exploration / exploitation / balance) + action format (direct JSON,
or think first when ``reasoning`` is on). Each turn the user message is the observation.

``memory``: the same, plus a rule-based memory summary appended to every turn's message. The
summary is computed by ``GridBelief`` from the observations this harness has already passed
to the model (and the moves it parsed), so it cannot leak hidden information.
"""

from __future__ import annotations

from typing import Any

from exploreval.agents import (
    EpisodeContext,
    Harness,
    HistoryPolicy,
    ParsedAction,
    gbnf_choice,
    gbnf_free_text,
    gbnf_grammar,
    json_enum_object,
)
from exploreval.core import Message, option_bool
from exploreval.models import Constraint
from exploreval.suites.grid._belief import GridBelief
from exploreval.suites.grid._prompts import STRATEGY_SENTENCES, system_prompt
from exploreval.suites.grid._text import ObservationParseError, parse_model_reply


def _flag(value: Any, name: str) -> bool:
    return option_bool(value, f"harness option {name}")


class ReactHarness(Harness):
    """Observation in, one JSON move out; four strategy variants x reasoning on/off."""

    name = "react"

    def __init__(
        self,
        history: str | HistoryPolicy = "full",
        strategy: str = "base",
        reasoning: bool | str = False,
        lenient: bool | str = False,
        **options: Any,
    ) -> None:
        if options:
            raise ValueError(
                f"grid harness {self.name!r}: unknown option(s) {', '.join(sorted(options))}; "
                "known: strategy, reasoning, lenient"
            )
        if strategy not in STRATEGY_SENTENCES:
            raise ValueError(
                f"grid harness {self.name!r}: strategy must be one of "
                f"{', '.join(STRATEGY_SENTENCES)}, got {strategy!r}"
            )
        self.strategy = strategy
        self.reasoning = _flag(reasoning, "reasoning")
        #: Off by default (the paper's format); on, prose naming exactly one move is read.
        self.lenient = _flag(lenient, "lenient")
        options = {"lenient": True} if self.lenient else {}  # default keeps ids unchanged
        super().__init__(history=history, strategy=strategy, reasoning=self.reasoning, **options)
        #: The paper samples at temperature 0; an explicit spec temperature still wins.
        self.sampling_overrides = {"temperature": 0.0}

    def system_prompt(self) -> str:
        return system_prompt(self.strategy, self.reasoning, memory=False)

    def constraint(self, observation: str, info: dict[str, Any]) -> Constraint | None:
        """The JSON move object (after free reasoning when ``reasoning`` is on), naming one of
        this cell's admissible moves (the observation lists them; all four when it does not)."""
        allowed = info.get("moves")
        moves = tuple(m for m in ("up", "down", "left", "right") if not allowed or m in allowed)
        obj = '"{\\"action\\": \\"" move "\\"}"'
        root = f"{gbnf_free_text(400, without='{')} {obj}" if self.reasoning else obj
        return Constraint(
            name="grid move",
            grammar=gbnf_grammar(root, move=gbnf_choice(moves)),
            json_schema=None if self.reasoning else json_enum_object("action", moves),
        )

    def parse(self, text: str) -> ParsedAction:
        reply = parse_model_reply(text, lenient=self.lenient)
        info = {"parsed_by": reply.how} if reply.how else {}
        return ParsedAction(reply.move, reply.reason, reply.reasoning, info)


class MemoryHarness(ReactHarness):
    """ReAct prompt plus the rule-based memory summary injected into every turn."""

    name = "memory"

    def reset(self, ctx: EpisodeContext, observation: str) -> None:
        super().reset(ctx, observation)
        self.belief = GridBelief(frame=None)
        self._last_move: str | None = None
        self._last_text: str | None = None
        self._summary_text = ""

    def system_prompt(self) -> str:
        return system_prompt(self.strategy, self.reasoning, memory=True)

    def _ingest(self, observation: str) -> None:
        if observation == self._last_text and self.belief.observations:
            return  # the same turn asked twice (a retry): already counted
        try:
            self.belief.observe(observation, self._last_move)
        except ObservationParseError:
            return  # not a GridDAG observation: nothing to remember
        self._last_text = observation
        self._summary_text = self.belief.summary()

    def summary(self) -> str:
        return self._summary_text

    def messages(self, observation: str, info: dict[str, Any]) -> list[Message]:
        self._ingest(observation)
        msgs = super().messages(observation, info)
        if self.history.mode != "summary" and self._summary_text:
            last = msgs[-1]
            msgs[-1] = Message(role=last.role, content=f"{last.content}\n\n{self._summary_text}")
        return msgs

    def record(
        self, observation: str, info: dict[str, Any], reply: str, action: str | None
    ) -> None:
        super().record(observation, info, reply, action)
        self._last_move = action
