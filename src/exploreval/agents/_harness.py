"""Harnesses: the only place observations become prompts and model text becomes actions."""

from __future__ import annotations

import abc
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from exploreval.agents._base import EpisodeContext
from exploreval.agents._retrieval import BM25Index
from exploreval.core import Message
from exploreval.models import Constraint


@dataclass(frozen=True)
class HistoryPolicy:
    """How much of the past the model sees.

    * ``full``: every earlier turn (observation and the model's reply)
    * ``window:K``: the last K turns
    * ``none``: only the current observation
    * ``summary``: no raw turns; the harness's structured summary of the past instead
    * ``model-summary``: no raw turns; the summary the model itself wrote in its last reply
      (TIDE Table 5's "Summary" setting; harnesses with ``model_summary`` only)
    * ``retrieval:K``: the K earlier turns most similar to the current observation (BM25 over
      the turns' text) plus the latest turn, oldest first
    * ``mem0``, ``langmem``, ``amem`` (``:K``, default 5): a memory system's package stores each
      turn and recalls the K entries most relevant to the current observation, shown under it
      instead of raw turns (``agents._memory``)
    """

    mode: str = "full"
    window: int = 0
    #: The memory system of ``mode == "memory"``.
    backend: str = ""

    @classmethod
    def parse(cls, text: str) -> HistoryPolicy:
        from exploreval.agents._memory import DEFAULT_RECALL, MEMORY_BACKENDS

        text = text.strip().lower()
        if text in ("full", "none", "summary", "model-summary"):
            return cls(mode=text)
        match = re.fullmatch(r"(window|retrieval):(\d+)", text)
        if match:
            if match.group(1) == "retrieval" and int(match.group(2)) < 1:
                raise ValueError(f"history policy {text!r}: retrieval needs K >= 1")
            return cls(mode=match.group(1), window=int(match.group(2)))
        name, _, k = text.partition(":")
        if name in MEMORY_BACKENDS and (not k or k.isdigit()):
            if k and int(k) < 1:
                raise ValueError(f"history policy {text!r}: a memory recalls K >= 1 entries")
            return cls(mode="memory", window=int(k) if k else DEFAULT_RECALL, backend=name)
        raise ValueError(
            f"history policy {text!r} not understood; expected 'full', 'none', 'summary', "
            "'model-summary', "
            f"'window:K', 'retrieval:K' or a memory system ({', '.join(MEMORY_BACKENDS)}, "
            "optionally ':K')"
        )

    def __str__(self) -> str:
        if self.mode == "memory":
            from exploreval.agents._memory import DEFAULT_RECALL

            return (
                self.backend if self.window == DEFAULT_RECALL else f"{self.backend}:{self.window}"
            )
        return f"{self.mode}:{self.window}" if self.mode in ("window", "retrieval") else self.mode


@dataclass
class ParsedAction:
    """Result of parsing model text: an action, or ``None`` plus the reason.

    ``info`` is what the harness read besides the action (a sampled distribution, the
    answer before mapping...); it is logged with the step as ``agent_info``.
    """

    action: str | None
    reason: str | None = None
    reasoning: str | None = None
    info: dict[str, Any] = field(default_factory=dict)


@dataclass
class Turn:
    observation: str
    reply: str
    #: The model's reasoning for this reply (the completion's reasoning field), if any.
    reasoning: str | None = None
    #: The native function call this reply made, in the API's wire form (answered by the
    #: next observation as a ``tool`` message); None: a text reply.
    call: dict[str, Any] | None = None
    #: The observation answered the previous turn's native call (a ``tool`` message).
    answers: str | None = None

    def __post_init__(self) -> None:
        # built once: full-history prompts reuse them at every later step
        make = Message.model_construct
        seen = (
            make(role="tool", content=self.observation, tool_call_id=self.answers)
            if self.answers is not None
            else make(role="user", content=self.observation)
        )
        said = (
            make(role="assistant", content=self.reply, tool_calls=[self.call])
            if self.call is not None
            else make(role="assistant", content=self.reply)
        )
        self.messages = (seen, said)

    def messages_with_reasoning(self) -> tuple[Message, ...]:
        """The turn with its reasoning re-sent: the assistant message is the reasoning in a
        ``<reasoning>`` block followed by the reply (messages carry text content only)."""
        if not self.reasoning:
            return self.messages
        content = f"<reasoning>\n{self.reasoning}\n</reasoning>\n{self.reply}"
        said = Message.model_construct(
            role="assistant", content=content,
            tool_calls=[self.call] if self.call is not None else None,
        )  # fmt: skip
        return (self.messages[0], said)


class Harness(abc.ABC):
    """Builds the messages for each turn and parses the reply.

    Subclasses supply ``system_prompt``, ``format_observation`` and ``parse``; the
    base class applies the history policy. ``summary`` is used by the ``summary``
    policy (and may be appended to observations by harnesses that want both).
    """

    name: str = "harness"
    #: The harness asks the model to write its own summary each turn (``history=model-summary``).
    model_summary: bool = False
    #: How the model's action arrives: ``text`` (a reply the harness parses) or ``native`` (a
    #: function call, for harnesses with :meth:`native_tools`; set by the LLM agent).
    call_form: str = "text"

    def __init__(self, history: str | HistoryPolicy = "full", **options: Any) -> None:
        self.history = (
            history if isinstance(history, HistoryPolicy) else HistoryPolicy.parse(history)
        )
        if self.history.mode == "model-summary" and not self.model_summary:
            raise ValueError(
                f"history model-summary: the {self.name!r} harness does not ask the model for a "
                "summary (the puzzle harnesses do); use 'summary' for its structured summary"
            )
        self.options = options
        self.turns: list[Turn] = []
        self.ctx: EpisodeContext | None = None
        self.memory_index = BM25Index()
        reasoning_history = options.get("reasoning_history", False)
        if not isinstance(reasoning_history, bool):
            raise ValueError(
                f"harness option reasoning_history={reasoning_history!r}: expected true or false"
            )
        #: Earlier turns re-send the model's reasoning (option ``reasoning_history``).
        self.reasoning_history = reasoning_history
        #: ``history=mem0|langmem|amem``: what the agent's memory recalled for this turn (set by
        #: the agent before :meth:`messages`), shown under the current observation.
        self.recalled: list[str] = []
        #: The native call the last :meth:`parse_calls` took (wire form), for the next turn.
        self.pending_call: dict[str, Any] | None = None

    def config(self) -> dict[str, Any]:
        return {"name": self.name, "history": str(self.history), **self.options}

    def reset(self, ctx: EpisodeContext, observation: str) -> None:
        self.ctx = ctx
        self.turns = []
        self.memory_index = BM25Index()

    @abc.abstractmethod
    def system_prompt(self) -> str:
        """Rules, strategy and output format."""

    def format_observation(self, observation: str, info: dict[str, Any]) -> str:
        """The user message for the current turn."""
        return observation

    def summary(self) -> str:
        """Structured summary of the past (for ``history=summary``)."""
        return ""

    def constraint(self, observation: str, info: dict[str, Any]) -> Constraint | None:
        """The shape of a valid reply this turn, for constrained decoding (``--constrain``):
        a GBNF grammar and/or a JSON schema that :meth:`parse` accepts. None: unconstrained."""
        return None

    def native_tools(self) -> list[dict[str, Any]] | None:
        """The tools this harness's agent calls natively (OpenAI ``tools``), or None: its
        protocol is text (the harness parses the reply)."""
        return None

    def parse_calls(self, calls: Sequence[Any], text: str) -> ParsedAction:
        """The action of a reply to a request that offered :meth:`native_tools`: from its first
        function call (``calls``: ``models.ToolCall``), else from its text. A harness with
        native tools overrides it; ``info["call_form"]`` says which form the action came in."""
        return self.parse(text)

    @abc.abstractmethod
    def parse(self, text: str) -> ParsedAction:
        """Turn model text into an action (or an invalid action with a reason)."""

    def messages(self, observation: str, info: dict[str, Any]) -> list[Message]:
        # model_construct: built here from strings, nothing to validate.
        make = Message.model_construct
        msgs = [make(role="system", content=self.system_prompt())]
        mode = self.history.mode
        past: list[Turn]
        if mode == "full":
            past = self.turns
        elif mode == "window":
            past = self.turns[-self.history.window :] if self.history.window else []
        elif mode == "retrieval":
            past = self.recall(self.format_observation(observation, info), self.history.window)
        else:
            past = []
        for i, turn in enumerate(past):
            shown = turn.messages_with_reasoning() if self.reasoning_history else turn.messages
            if i == 0 and turn.answers is not None:  # its call is not shown: a user message
                shown = (make(role="user", content=turn.observation), shown[1])
            msgs.extend(shown)
        current = self.format_observation(observation, info)
        if mode in ("summary", "model-summary"):
            summary = self.summary()
            if summary:
                current = f"{current}\n\n{summary}"
        elif mode == "memory":
            from exploreval.agents._memory import memory_block

            current = f"{current}\n\n{memory_block(self.history.backend, self.recalled)}"
        last = past[-1].call if past else None
        if last is not None:  # the observation answers the model's last native call
            msgs.append(make(role="tool", content=current, tool_call_id=str(last["id"])))
        else:
            msgs.append(make(role="user", content=current))
        return msgs

    def memory_query(self, observation: str, info: dict[str, Any]) -> str:
        """What a memory system (``history=mem0|langmem|amem``) is asked to recall for: the env's
        own text by default (not the harness's framing)."""
        return observation

    def memory_turn(
        self, observation: str, info: dict[str, Any], reply: str
    ) -> tuple[str, str] | None:
        """What a memory system stores of a finished turn (None: nothing, e.g. a quiz answer)."""
        return observation, reply

    def recall(self, query: str, k: int) -> list[Turn]:
        """``retrieval:K``: the K turns most similar to ``query`` plus the latest, oldest first."""
        if not self.turns:
            return []
        latest = len(self.turns) - 1
        chosen = set(self.memory_index.top(query, k, exclude=(latest,))) | {latest}
        return [self.turns[i] for i in sorted(chosen)]

    def record(
        self, observation: str, info: dict[str, Any], reply: str, action: str | None
    ) -> None:
        """Remember a finished turn (called after the model replied)."""
        self.remember(self.new_turn(self.format_observation(observation, info), reply))

    def new_turn(self, observation: str, reply: str) -> Turn:
        """A turn; in the native form, its observation answers the last turn's call and its
        reply carries the call :meth:`parse_calls` took (``pending_call``)."""
        previous = self.turns[-1].call if self.turns else None
        call, self.pending_call = self.pending_call, None
        answers = str(previous["id"]) if previous is not None else None
        return Turn(observation=observation, reply=reply, call=call, answers=answers)

    def remember(self, turn: Turn) -> None:
        """Add a turn to the history (and to the retrieval index)."""
        self.turns.append(turn)
        self.memory_index.add(f"{turn.observation}\n{turn.reply}")

    def record_reasoning(self, reasoning: str | None) -> None:
        """Attach the model's reasoning to the turn just recorded (re-sent in later prompts
        only with ``reasoning_history``)."""
        if reasoning and self.turns:
            self.turns[-1].reasoning = reasoning
