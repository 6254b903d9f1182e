"""LangMem (``langmem``, the ``[langmem]`` extra) as an agent's memory: ``--history langmem[:K]``.

LangMem's own ``create_memory_store_manager`` does the work: for each stored turn it searches the
store for related memories, asks the model (through trustcall's tool calls) to insert or update
memories, and writes them to a LangGraph ``BaseStore``. The store is LangGraph's local
``InMemoryStore`` with a vector index over the local MiniLM; the model is a LangChain chat model
whose every call goes through the agent's client (:class:`ExplorevalChatModel`): tool calls
included, cached and replayed on resume like the agent's own.

LangMem names sessions and new memories with ``uuid.uuid4()`` and shows the names to the model
(``<session_...>``, the ids of existing memories): a resumed episode would send new prompts and
pay for every memory call again. Its module's ``uuid`` is therefore a proxy whose ``uuid4`` draws
from the episode's own sequence while a memory operation of that episode runs (a context
variable, so concurrent episodes and every other caller keep the real ``uuid4``).
"""

from __future__ import annotations

import contextvars
import hashlib
import json
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from exploreval.agents._memory import EMBEDDING_DIMS, MemoryBackend, ModelBridge


def chat_model(bridge: ModelBridge) -> Any:  # -> Any: a langchain BaseChatModel (optional extra)
    """A LangChain chat model over the agent's client (tool calls both ways)."""
    from langchain_core.language_models.chat_models import BaseChatModel
    from langchain_core.messages import AIMessage, BaseMessage
    from langchain_core.outputs import ChatGeneration, ChatResult
    from langchain_core.utils.function_calling import convert_to_openai_tool
    from pydantic import ConfigDict

    roles = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool"}

    class ExplorevalChatModel(BaseChatModel):
        model_config = ConfigDict(arbitrary_types_allowed=True)
        bridge: Any

        @property
        def _llm_type(self) -> str:
            return "exploreval"

        # -> Any: a langchain Runnable (the model bound to the tools), an optional extra's type
        def bind_tools(self, tools: Any, *, tool_choice: Any = None, **kwargs: Any) -> Any:
            formatted = [convert_to_openai_tool(t) for t in tools]
            if isinstance(tool_choice, str) and tool_choice not in ("auto", "none", "required"):
                tool_choice = (
                    "required"
                    if tool_choice == "any"
                    else {"type": "function", "function": {"name": tool_choice}}
                )
            return self.bind(tools=formatted, tool_choice=tool_choice, **kwargs)

        def _generate(
            self,
            messages: list[BaseMessage],
            stop: list[str] | None = None,
            run_manager: Any = None,
            **kwargs: Any,
        ) -> ChatResult:
            wire = [
                {"role": roles.get(m.type, "user"), "content": m.content}  # text: the bridge's
                for m in messages
            ]
            completion = self.bridge.complete(
                wire, tools=kwargs.get("tools"), tool_choice=kwargs.get("tool_choice")
            )
            calls = []
            for i, call in enumerate(completion.tool_calls):
                try:
                    args = json.loads(call.arguments or "{}")
                except json.JSONDecodeError:
                    args = {}
                calls.append({"name": call.name, "args": args, "id": f"call_{i}"})
            message = AIMessage(content=completion.text, tool_calls=calls)
            return ChatResult(generations=[ChatGeneration(message=message)])

    return ExplorevalChatModel(bridge=bridge)


#: The running memory operation's uuid4 (None: the real one).
_UUID4: contextvars.ContextVar[Callable[[], uuid.UUID] | None] = contextvars.ContextVar(
    "exploreval_langmem_uuid4", default=None
)


class _EpisodeUuid:
    """``uuid`` as LangMem's module sees it: everything real except ``uuid4`` during an
    episode's memory operation."""

    # -> Any: whatever the uuid module holds under that name
    def __getattr__(self, name: str) -> Any:
        return getattr(uuid, name)

    @staticmethod
    def uuid4() -> uuid.UUID:
        draw = _UUID4.get()
        return draw() if draw is not None else uuid.uuid4()


def _install_uuid_proxy() -> None:
    import langmem.knowledge.extraction as extraction

    if not isinstance(extraction.uuid, _EpisodeUuid):
        extraction.uuid = _EpisodeUuid()


class LangMemMemory(MemoryBackend):
    name = "langmem"

    def _next_uuid(self) -> uuid.UUID:
        assert self.bridge is not None
        self._uuids += 1
        digest = hashlib.sha256(f"{self.bridge.scope}|{self.bridge.repeat}|{self._uuids}".encode())
        return uuid.UUID(bytes=digest.digest()[:16], version=4)

    def _open(self, directory: Path) -> None:
        from langgraph.store.memory import InMemoryStore
        from langmem import create_memory_store_manager

        _install_uuid_proxy()
        self._uuids = 0

        bridge, embedder = self.transports()
        self._store = InMemoryStore(index={"dims": EMBEDDING_DIMS, "embed": embedder.embed})
        self._manager = create_memory_store_manager(
            chat_model(bridge), namespace=("memories",), store=self._store,
            query_limit=self.k,
        )  # fmt: skip

    def _search(self, query: str, k: int) -> list[str]:
        return [_memory_text(item.value) for item in self._manager.search(query=query, limit=k)]

    def _add(self, observation: str, reply: str) -> list[str]:
        token = _UUID4.set(self._next_uuid)
        try:
            return self._add_turn(observation, reply)
        finally:
            _UUID4.reset(token)

    def _add_turn(self, observation: str, reply: str) -> list[str]:
        before = {item.key: item.value for item in self._store.search(("memories",), limit=10_000)}
        self._manager.invoke(
            {"messages": [{"role": "user", "content": observation},
                          {"role": "assistant", "content": reply}]}
        )  # fmt: skip
        after = {item.key: item.value for item in self._store.search(("memories",), limit=10_000)}
        events = [f"ADD: {_memory_text(v)}" for k, v in after.items() if k not in before]
        events += [
            f"UPDATE: {_memory_text(v)}" for k, v in after.items() if k in before and before[k] != v
        ]
        events += [f"DELETE: {_memory_text(v)}" for k, v in before.items() if k not in after]
        return events

    def _close(self) -> None:
        self.__dict__.pop("_store", None)
        self.__dict__.pop("_manager", None)


def _memory_text(value: Any) -> str:
    """A stored LangMem memory as text (``{"kind": "Memory", "content": {"content": ...}}``)."""
    content = value.get("content", value) if isinstance(value, dict) else value
    if hasattr(content, "model_dump"):  # search results hold the schema's model
        content = content.model_dump(mode="json")
    if isinstance(content, dict) and set(content) == {"content"}:
        return str(content["content"])
    return json.dumps(content, sort_keys=True) if isinstance(content, dict) else str(content)
