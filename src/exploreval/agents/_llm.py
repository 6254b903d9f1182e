"""LLM agent = model client + harness."""

from __future__ import annotations

from typing import Any, Literal

from exploreval.agents._base import Agent, Decision, EpisodeContext
from exploreval.agents._harness import Harness
from exploreval.agents._memory import MemoryBackend
from exploreval.core import INVALID_ACTION
from exploreval.models import ModelClient, SamplingParams


class LLMAgent(Agent):
    """Asks the model each step; unparsable replies become invalid actions, never crashes."""

    kind: Literal["scripted", "llm"] = "llm"

    def __init__(
        self,
        client: ModelClient,
        harness: Harness,
        params: SamplingParams | None = None,
        name: str | None = None,
        constrain: bool = False,
        memory: MemoryBackend | None = None,
    ) -> None:
        self.client = client
        self.harness = harness
        #: ``history=mem0|langmem|amem``: the memory system that recalls and stores each turn.
        self.memory = memory
        self.params = params or SamplingParams()
        #: Ask the harness for the shape of a valid reply and send it with each request.
        self.constrain = constrain
        self.name = name or f"{client.model}+{harness.name}"
        self._repeat = 0
        self._scope = ""
        self._calls = 0
        #: The harness's native tools for this episode (None: its protocol is text).
        self._tools: list[dict[str, Any]] | None = None

    def config(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "client": self.client.config(),
            "harness": self.harness.config(),
            "params": self.params.model_dump(exclude_none=True),
            **({"constrain": True} if self.constrain else {}),
        }

    async def reset(self, ctx: EpisodeContext, observation: str) -> None:
        self._repeat = ctx.repeat
        # Cache scope: the task (not the agent, which the cache key covers via the prompt).
        self._scope = f"{ctx.env_id}|{ctx.preset}|{ctx.seed}|{ctx.env_options_hash}"
        self._calls = 0
        self.harness.reset(ctx, observation)
        # the episode's tools (they depend on the env's tool suite, set by reset): built once
        self._tools = self.harness.native_tools()
        self.harness.call_form = self._call_form()
        if self.memory is not None:
            await self.memory.start(ctx)

    def _call_form(self) -> str:
        """``native`` when the harness's agent calls tools natively and the endpoint takes
        tools (harness option ``tool_calls``: auto | native | text), else ``text``."""
        wanted = str(self.harness.options.get("tool_calls", "auto"))
        if self.harness.native_tools() is None:
            return "text"
        if wanted == "native" and not self.client.native_tools:
            raise ValueError(
                f"harness option tool_calls=native: {self.client.model} takes no native tool "
                "calls here (the embedded model decodes the call's schema as text: use "
                "tool_calls=auto or text)"
            )
        if wanted == "text":
            return "text"
        return "native" if self.client.native_tools else "text"

    async def act(self, observation: str, info: dict[str, Any]) -> Decision:
        if self.memory is not None:
            query = self.harness.memory_query(observation, info)
            self.harness.recalled = await self.memory.recall(query)
        messages = self.harness.messages(observation, info)
        # The call's index in the episode: an identical prompt sent again is a fresh sample,
        # and a resumed episode makes the same calls in the same order, so it replays.
        sample, self._calls = self._calls, self._calls + 1
        params = self.params
        constrained: dict[str, Any] = {}
        native = self.harness.call_form == "native"
        if native:  # the tools' schemas shape the call; the text form's constraint is not sent
            params = params.model_copy(update={"tools": self._tools, "tool_choice": "auto"})
        elif self.constrain:
            constraint = self.harness.constraint(observation, info)
            if constraint is not None:
                params = params.model_copy(update={"constraint": constraint})
                wire = getattr(self.client, "constraint_wire", None)
                constrained = {"constraint": constraint.name,
                               "constraint_wire": wire(constraint) if wire else "client"}  # fmt: skip
        completion = await self.client.complete(
            messages, params, repeat=self._repeat, sample=sample, scope=self._scope
        )
        if native:
            parsed = self.harness.parse_calls(completion.tool_calls, completion.text)
        else:
            parsed = self.harness.parse(completion.text)
        self.harness.record(observation, info, completion.text, parsed.action)
        self.harness.record_reasoning(completion.reasoning)
        usage, memory_info = completion.usage, {}
        if self.memory is not None:
            turn = self.harness.memory_turn(observation, info, completion.text)
            if turn is not None:
                await self.memory.store(*turn)
            log = self.memory.take_log()
            usage = usage + log.usage  # the memory's model calls are the agent's cost too
            memory_info = {"memory": {"backend": self.memory.name, **log.as_info()}}
        valid = parsed.action is not None
        return Decision(
            action=parsed.action if parsed.action is not None else INVALID_ACTION,
            valid=valid,
            invalid_reason=None if valid else (parsed.reason or "unparsable model output"),
            raw_output=completion.text,
            reasoning=completion.reasoning or parsed.reasoning,
            prompt=messages,
            usage=usage,
            latency_s=completion.latency_s,
            retries=completion.retries,
            cached=completion.cached,
            agent_info={
                **{k: v for k, v in parsed.info.items() if k != "call_form"},
                **constrained,
                **memory_info,
                **({"retry_log": completion.retry_log} if completion.retry_log else {}),
                **(
                    {"call_form": parsed.info.get("call_form", "text")}
                    if self._tools is not None
                    else {}
                ),  # fmt: skip
                **(
                    {
                        "token_entropy": completion.token_entropy,
                        "tokens_scored": completion.tokens_scored,
                    }
                    if completion.token_entropy is not None
                    else {}
                ),  # fmt: skip
            },
        )

    async def finish(self) -> None:
        if self.memory is not None:
            await self.memory.close()

    async def aclose(self) -> None:
        await self.finish()
        await self.client.aclose()
