"""inspect_ai's model as an exploreval ``ModelClient``: how ``inspect eval exploreval/<family>``
drives exploreval's own agents (harness prompts, parsers, constraints) with inspect's models,
limits, retries and transcript.

Every call goes through inspect's ``Model.generate`` inside the running sample, so inspect
records it (a model event with its usage) and applies its own retries, timeouts and limits;
exploreval's response cache is not used (inspect has its own, ``--cache``).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from exploreval.core import Message, Usage
from exploreval.models import Completion, ModelClient, SamplingParams


class InspectModelClient(ModelClient):
    """Answers through an inspect_ai ``Model`` (the eval's ``--model`` by default)."""

    def __init__(self, model: Any, *, constrain_wire: str = "auto") -> None:
        self._model = model
        self.model = str(getattr(model, "name", model))
        #: How a constraint reaches the model: ``auto``/``json_schema``: inspect's structured
        #: output (``response_schema``) when the harness has a JSON schema; ``grammar``: the
        #: GBNF grammar in the request body (llama.cpp servers, ``-T constrain=grammar``).
        self.constrain_wire = constrain_wire

    def config(self) -> dict[str, Any]:
        return {"model": self.model, "via": "inspect_ai"}

    async def complete(
        self,
        messages: Sequence[Message],
        params: SamplingParams | None = None,
        *,
        repeat: int = 0,
        sample: int = 0,
        scope: str = "",
    ) -> Completion:
        from inspect_ai.model import (
            ChatMessageAssistant,
            ChatMessageSystem,
            ChatMessageUser,
            GenerateConfig,
            ResponseSchema,
        )
        from inspect_ai.util import JSONSchema

        kinds = {"system": ChatMessageSystem, "assistant": ChatMessageAssistant}
        chat = [kinds.get(m.role, ChatMessageUser)(content=m.content) for m in messages]
        params = params or SamplingParams()
        options: dict[str, Any] = {
            "temperature": params.temperature,
            "top_p": params.top_p,
            "max_tokens": params.max_tokens,
            "seed": params.seed,
            "stop_seqs": params.stop,
            "reasoning_effort": params.reasoning_effort,
        }
        constraint = params.constraint
        if constraint is not None and self.constrain_wire == "grammar" and constraint.grammar:
            options["extra_body"] = {"grammar": constraint.grammar}
        elif constraint is not None and constraint.json_schema is not None:
            # inspect's structured output: the providers that support it decode to the schema
            options["response_schema"] = ResponseSchema(
                name=constraint.name.replace(" ", "_")[:60] or "reply",
                json_schema=JSONSchema.model_validate(constraint.json_schema),
            )
        config = GenerateConfig(**{k: v for k, v in options.items() if v is not None})
        started = time.perf_counter()
        output = await self._model.generate(chat, config=config)
        latency = time.perf_counter() - started
        used = output.usage
        usage = Usage(
            prompt_tokens=int(getattr(used, "input_tokens", 0) or 0),
            completion_tokens=int(getattr(used, "output_tokens", 0) or 0),
            reasoning_tokens=int(getattr(used, "reasoning_tokens", 0) or 0),
            calls=1,
            # inspect prices calls itself (its log's total_cost); exploreval does not guess
            cost_usd=float(used.total_cost) if getattr(used, "total_cost", None) else None,
            unpriced_calls=0 if getattr(used, "total_cost", None) else 1,
        )
        reasoning = None
        message = output.message if output.choices else None
        if message is not None and isinstance(message.content, list):
            parts = [getattr(c, "reasoning", None) for c in message.content]
            reasoning = "\n".join(p for p in parts if isinstance(p, str)) or None
        return Completion(
            text=output.completion,
            reasoning=reasoning,
            usage=usage,
            latency_s=round(latency, 4),
            finish_reason=str(output.stop_reason) if output.choices else None,
        )
