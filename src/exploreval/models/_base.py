"""The model-client contract used by LLM agents."""

from __future__ import annotations

import abc
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from exploreval.core import Message, Usage, spec_field

#: The values the OpenAI API accepts for ``reasoning_effort`` (the openai SDK's ``ReasoningEffort``
#: type; a test keeps the two equal).
REASONING_EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh", "max")


class Constraint(BaseModel):
    """What the model's reply must look like, for constrained decoding (``--constrain``).

    A harness offers it for the current turn when its action space is finite or has a schema:
    a GBNF ``grammar`` (llama.cpp's own format: bandit arms, grid moves, admissible commands
    with free reasoning before them) and/or a ``json_schema`` (the quiz's answer object, a
    terminal keystroke object). The client sends what its endpoint understands (docs/models.md,
    "Constrained decoding")."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    #: A short name for records ("bandit answer", "grid move"...).
    name: str
    grammar: str | None = None
    json_schema: dict[str, Any] | None = None


class SamplingParams(BaseModel):
    """Sampling settings passed through to the endpoint (``None`` = server default).

    ``nan``/``inf`` and out-of-range values are refused here, at parse time, not by the server
    after the run directory exists."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    temperature: float | None = spec_field("agents[llm].sampling.temperature", ge=0.0, le=2.0)
    top_p: float | None = spec_field("agents[llm].sampling.top_p", ge=0.0, le=1.0)
    max_tokens: int | None = spec_field("agents[llm].sampling.max_tokens", ge=1)
    seed: int | None = spec_field("agents[llm].sampling.seed")
    reasoning_effort: str | None = spec_field("agents[llm].sampling.reasoning_effort")
    #: Ask for the K most likely tokens at each generated position (OpenAI ``logprobs`` +
    #: ``top_logprobs``; llama.cpp's server the same): the completion then carries its mean
    #: token entropy (TIDE's action entropy, Figure 8).
    top_logprobs: int | None = spec_field("agents[llm].sampling.top_logprobs", ge=1, le=20)
    stop: list[str] | None = None
    #: Set per call by an agent that constrains decoding (never from a config file): part of the
    #: cache key, sent as the endpoint understands it, never as a sampling field.
    constraint: Constraint | None = None
    #: Set per call by a caller that offers tools (OpenAI ``tools`` / ``tool_choice``), e.g. the
    #: curiosity judge's ``choice`` tool; part of the cache key, sent as is.
    tools: list[dict[str, Any]] | None = None
    tool_choice: str | dict[str, Any] | None = None

    @field_validator("reasoning_effort")
    @classmethod
    def _effort(cls, value: str | None) -> str | None:
        if value is not None and value not in REASONING_EFFORTS:
            raise ValueError(
                f"reasoning effort {value!r} is not one the API accepts: "
                f"{', '.join(REASONING_EFFORTS)}"
            )
        return value


class ToolCall(BaseModel):
    """A function call in a reply: its name and its arguments as the model wrote them (JSON
    text, unparsed: a malformed call is the caller's to report, never the client's to crash on)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    arguments: str = ""
    #: The call's id (what a ``tool`` message answering it names); "" when the server gave none.
    id: str = ""


class Completion(BaseModel):
    """One model answer plus what it cost."""

    model_config = ConfigDict(extra="forbid")

    text: str
    tool_calls: list[ToolCall] = Field(default_factory=list)
    reasoning: str | None = None
    usage: Usage = Field(default_factory=Usage)
    latency_s: float = 0.0
    retries: int = 0
    retry_log: list[str] = Field(default_factory=list)
    cached: bool = False
    finish_reason: str | None = None
    #: With ``top_logprobs``: the mean over the reply's tokens of the entropy (nats) of the
    #: top-K distribution renormalised, and how many tokens were scored (None: not asked, or
    #: the endpoint returned none).
    token_entropy: float | None = None
    tokens_scored: int | None = None


def token_entropy(content: Any) -> tuple[float, int] | None:
    """(mean entropy in nats, tokens) of ``choices[0].logprobs.content`` (a list of
    ``{logprob, top_logprobs: [{logprob}...]}``); each position's top-K probabilities are
    renormalised to sum to 1, so K=1 gives 0. None when nothing could be scored. *Reading:*
    the paper's "action entropy" is not defined further; this is the model's uncertainty over
    the tokens it wrote, the part of the distribution the API shows."""
    import math

    if not isinstance(content, list):
        return None
    entropies: list[float] = []
    for position in content:
        tops = position.get("top_logprobs") if isinstance(position, dict) else None
        if not isinstance(tops, list) or not tops:
            continue
        logs = [t.get("logprob") for t in tops if isinstance(t, dict)]
        probs = [math.exp(v) for v in logs if isinstance(v, int | float) and math.isfinite(v)]
        total = sum(probs)
        if total <= 0:
            continue
        entropies.append(-sum(p / total * math.log(p / total) for p in probs if p > 0))
    if not entropies:
        return None
    return sum(entropies) / len(entropies), len(entropies)


class ModelClient(abc.ABC):
    """Anything that turns chat messages into a completion."""

    #: Model name, used in configs, caches and cost tables.
    model: str = ""
    #: The endpoint takes ``tools`` and answers with native function calls (a harness whose
    #: agent calls tools natively uses them; else it asks for the call as text).
    native_tools: bool = False

    @abc.abstractmethod
    async def complete(
        self,
        messages: Sequence[Message],
        params: SamplingParams | None = None,
        *,
        repeat: int = 0,
        sample: int = 0,
        scope: str = "",
    ) -> Completion:
        """Answer ``messages``.

        ``scope`` (the episode: env, preset, seed), ``repeat`` (attempt index) and
        ``sample`` (the call's index within the episode) make
        intended re-samples distinct, so the response cache replays a crashed run call for
        call without collapsing independent samples of an identical prompt into one.
        """

    def config(self) -> dict[str, Any]:
        """What identifies this client in an episode id (never secrets)."""
        return {"model": self.model}

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """Release connections."""


class ScriptedModel(ModelClient):
    """Deterministic test double: replies come from a list (cycled) or a function.

    ``reply_fn(messages, call_index)`` lets a test answer based on the prompt.
    """

    def __init__(
        self,
        replies: Sequence[str] | None = None,
        reply_fn: Callable[[Sequence[Message], int], str] | None = None,
        model: str = "scripted",
    ) -> None:
        if replies is None and reply_fn is None:
            raise ValueError("ScriptedModel needs replies or reply_fn")
        self._replies = list(replies or [])
        self._reply_fn = reply_fn
        self.model = model
        self.calls: list[list[Message]] = []

    async def complete(
        self,
        messages: Sequence[Message],
        params: SamplingParams | None = None,
        *,
        repeat: int = 0,
        sample: int = 0,
        scope: str = "",
    ) -> Completion:
        index = len(self.calls)
        self.calls.append(list(messages))
        if self._reply_fn is not None:
            text = self._reply_fn(messages, index)
        else:
            text = self._replies[index % len(self._replies)]
        # ~4 characters per token, like most BPE vocabularies on English text
        prompt_tokens = sum(len(m.content) for m in messages) // 4
        return Completion(
            text=text,
            usage=Usage(prompt_tokens=prompt_tokens, completion_tokens=len(text) // 4, calls=1),
        )
