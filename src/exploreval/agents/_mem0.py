"""Mem0 (``mem0ai``, the ``[mem0]`` extra) as an agent's memory: ``--history mem0[:K]``.

mem0's own ``Memory`` does the work: its fact-extraction prompt (one model call per stored turn,
JSON out), its local Qdrant store and its ranking. Two of its parts are swapped after it is built,
through the objects it calls (``memory.llm.generate_response`` and
``memory.embedding_model.embed``), never by editing its code: the model is the agent's client
(:class:`~exploreval.agents._memory.ModelBridge`), the embedder the process-wide local MiniLM.
mem0 is built with stand-ins for both that open no connection and load no model (an OpenAI client
object with no key use, a Hugging Face TEI client object), so an episode's memory costs no model
load. Telemetry is off (``MEM0_TELEMETRY=False``) and mem0's home is the episode's directory.
"""

from __future__ import annotations

import logging
import os
import tempfile
from pathlib import Path
from typing import Any

from exploreval.agents._memory import EMBEDDING_DIMS, MemoryBackend


def _quiet_mem0() -> None:
    os.environ.setdefault("MEM0_TELEMETRY", "False")
    # offline machines: mem0 tries to download spaCy's model for its keyword boosts, fails and
    # says so at WARNING on every process; it works without it (semantic ranking)
    logging.getLogger("mem0.utils.spacy_models").setLevel(logging.ERROR)
    # a failed extraction is raised to exploreval and recorded on the step: not logged twice
    logging.getLogger("mem0.memory.main").setLevel(logging.CRITICAL)
    # ...and its BM25 keyword boost needs fastembed's model from Hugging Face: off here, said
    # once in docs/memory.md rather than on every episode
    logging.getLogger("mem0.vector_stores.qdrant").setLevel(logging.ERROR)


class Mem0Memory(MemoryBackend):
    name = "mem0"

    def _open(self, directory: Path) -> None:
        _quiet_mem0()
        # mem0 keeps a config file in its home; read once per process, so not an episode's dir
        os.environ.setdefault("MEM0_DIR", str(Path(tempfile.gettempdir()) / "exploreval-mem0"))
        from mem0 import Memory
        from mem0.configs.llms.base import BaseLlmConfig
        from mem0.embeddings.base import EmbeddingBase
        from mem0.llms.base import LLMBase

        bridge, embedder = self.transports()

        class BridgeLLM(LLMBase):
            def __init__(self) -> None:
                super().__init__(BaseLlmConfig(model=bridge.model))

            def generate_response(
                self,
                messages: list[dict[str, Any]],
                response_format: Any = None,
                tools: list[dict[str, Any]] | None = None,
                tool_choice: str = "auto",
                **kwargs: Any,
            ) -> Any:  # -> Any: mem0's contract: text, or a dict with tool_calls
                json_object = isinstance(response_format, dict) and response_format.get("type") in (
                    "json_object",
                    "json_schema",
                )
                completion = bridge.complete(
                    messages, json_schema={"type": "object"} if json_object else None,
                    tools=tools, tool_choice=tool_choice if tools else None,
                )  # fmt: skip
                if not tools:
                    return completion.text
                import json

                return {
                    "content": completion.text,
                    "tool_calls": [
                        {"name": c.name, "arguments": json.loads(c.arguments or "{}")}
                        for c in completion.tool_calls
                    ],
                }

        class LocalEmbedder(EmbeddingBase):
            def embed(self, text: Any, memory_action: Any = None) -> list[float]:
                return embedder.embed([str(text)])[0]

            def embed_batch(
                self, texts: list[str], memory_action: Any = "add"
            ) -> list[list[float]]:
                return embedder.embed([str(t) for t in texts])

        config = {
            "llm": {"provider": "openai", "config": {"model": bridge.model, "api_key": "unused",
                                                     "openai_base_url": "http://127.0.0.1:9/v1"}},
            "embedder": {"provider": "huggingface",
                         "config": {"huggingface_base_url": "http://127.0.0.1:9/v1",
                                    "api_key": "unused", "embedding_dims": EMBEDDING_DIMS}},
            "vector_store": {"provider": "qdrant",
                             "config": {"path": str(directory / "qdrant"), "on_disk": True,
                                        "collection_name": "memories",
                                        "embedding_model_dims": EMBEDDING_DIMS}},
            "history_db_path": str(directory / "history.sqlite"),
        }  # fmt: skip
        memory = Memory.from_config(config)
        memory.llm = BridgeLLM()
        memory.embedding_model = LocalEmbedder()
        self._memory = memory

    def _search(self, query: str, k: int) -> list[str]:
        found = self._memory.search(query, top_k=k, filters={"user_id": "agent"})
        return [str(r["memory"]) for r in found.get("results", [])][:k]

    def _add(self, observation: str, reply: str) -> list[str]:
        result = self._memory.add(
            [{"role": "user", "content": observation}, {"role": "assistant", "content": reply}],
            user_id="agent",
        )
        return [
            f"{r.get('event', 'ADD')}: {r.get('memory', '')}" for r in result.get("results", [])
        ]

    def _close(self) -> None:
        memory = getattr(self, "_memory", None)
        if memory is None:
            return
        client = getattr(memory.vector_store, "client", None)
        if client is not None:
            client.close()
        db = getattr(memory, "db", None)
        if db is not None and hasattr(db, "close"):
            db.close()
        self._memory = None
