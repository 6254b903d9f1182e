"""A-MEM (``a-mem``, the ``[amem]`` extra) as an agent's memory: ``--history amem[:K]``.

A-MEM's own ``AgenticMemorySystem`` does the work: each stored turn becomes a note whose
keywords, context and tags the model writes (one call), then the note "evolves" against its
nearest neighbours (a second call once the memory holds notes: strengthen links, rewrite the
neighbours' context and tags), and is kept in a local ChromaDB collection. Retrieval is its
vector search. exploreval supplies its two transports:

- the model: ``llm_controller.llm`` is replaced by an object with A-MEM's controller interface
  (``get_completion(prompt, response_format, temperature)``) that calls the agent's client, with
  A-MEM's own system line and the response format's JSON schema as the reply's constraint;
- the embedder: A-MEM builds ChromaDB's ``SentenceTransformerEmbeddingFunction`` by the name
  its retriever module imports; that name is bound to :class:`EpisodeEmbeddingFunction`, which
  embeds with the episode's cached local MiniLM (same model A-MEM's default names).

Notes get ids and timestamps from the episode (``note-0``, ``note-1``...; one minute per
stored turn from a fixed start) instead of uuid4 and the wall clock: A-MEM shows both to the
model in its evolution prompt, and a resumed episode must send the same prompts to replay them
from the cache.
"""

from __future__ import annotations

import datetime as dt
import threading
from pathlib import Path
from typing import Any

from exploreval.agents._memory import Embedder, MemoryBackend

#: Embedders of the A-MEM memories open in this process, by the name given to A-MEM.
_EMBEDDERS: dict[str, Embedder] = {}
_LOCK = threading.Lock()
_T0 = dt.datetime(2026, 1, 1)


class EpisodeEmbeddingFunction:
    """ChromaDB's embedding-function interface over an episode's :class:`Embedder`, found by the
    ``model_name`` A-MEM passes (``exploreval:<id>``)."""

    def __init__(self, model_name: str = "", **kwargs: Any) -> None:
        self.model_name = model_name

    def __call__(self, input: list[str]) -> list[Any]:  # noqa: A002 - chromadb's name
        import numpy as np

        embedder = _EMBEDDERS[self.model_name]
        return [np.asarray(v, dtype=np.float32) for v in embedder.embed(list(input))]

    def embed_documents(self, input: list[str]) -> list[Any]:  # noqa: A002
        return self(input)

    def embed_query(self, input: list[str]) -> list[Any]:  # noqa: A002
        return self(input)

    @staticmethod
    def name() -> str:
        return "exploreval-minilm"

    def is_legacy(self) -> bool:
        return True

    def default_space(self) -> str:
        return "cosine"

    def supported_spaces(self) -> list[str]:
        return ["cosine", "l2", "ip"]

    def get_config(self) -> dict[str, Any]:
        return {"model_name": self.model_name}

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> EpisodeEmbeddingFunction:
        return EpisodeEmbeddingFunction(str(config.get("model_name", "")))

    @staticmethod
    def validate_config(config: dict[str, Any]) -> None:
        return None

    def validate_config_update(self, old: dict[str, Any], new: dict[str, Any]) -> None:
        return None


class _Controller:
    """A-MEM's LLM-controller interface over the agent's client."""

    def __init__(self, backend: AMemMemory) -> None:
        self.backend = backend

    def get_completion(
        self, prompt: str, response_format: dict[str, Any] | None = None,
        temperature: float = 1.0, max_tokens: int | None = None,
    ) -> str:  # fmt: skip
        bridge = self.backend.bridge
        assert bridge is not None
        schema = None
        if isinstance(response_format, dict):
            inner = response_format.get("json_schema")
            schema = inner.get("schema") if isinstance(inner, dict) else {"type": "object"}
        completion = bridge.complete(
            [{"role": "system", "content": "You must respond with a JSON object."},
             {"role": "user", "content": prompt}],
            json_schema=schema,
        )  # fmt: skip
        return completion.text


class AMemMemory(MemoryBackend):
    name = "amem"

    def _open(self, directory: Path) -> None:
        import os

        # A-MEM imports litellm, which fetches a price list from GitHub at import unless told
        # to use the copy it ships (offline machines wait for 3 failed attempts otherwise)
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        import agentic_memory.retrievers as retrievers

        # the name A-MEM's retriever builds its embedding function by (see module docstring)
        retrievers.SentenceTransformerEmbeddingFunction = EpisodeEmbeddingFunction
        from agentic_memory.memory_system import AgenticMemorySystem

        self._key = f"exploreval:{id(self)}:{directory}"
        with _LOCK:
            _EMBEDDERS[self._key] = self.transports()[1]
        self._system = AgenticMemorySystem(
            model_name=self._key, llm_backend="openai", llm_model=self.client.model,
            api_key="unused", storage_path=str(directory / "chroma"),
        )  # fmt: skip
        self._system.llm_controller.llm = _Controller(self)
        self._notes = 0

    def _search(self, query: str, k: int) -> list[str]:
        if self._system.retriever.count() == 0:
            return []
        found: list[str] = []
        for hit in self._system.search(query, k):
            note = self._system.read(hit["id"])
            if note is not None:
                found.append(f"{note.content} (context: {note.context})")
        return found

    def _add(self, observation: str, reply: str) -> list[str]:
        n = self._notes
        self._notes += 1
        content = f"{observation}\n\nThe agent replied: {reply}"
        time = (_T0 + dt.timedelta(minutes=n)).strftime("%Y%m%d%H%M")
        note_id = self._system.add_note(content, time=time, id=f"note-{n}")
        note = self._system.read(note_id)
        summary = note.context if note is not None else content[:200]
        return [f"ADD {note_id}: {summary}"]

    def _close(self) -> None:
        with _LOCK:
            _EMBEDDERS.pop(getattr(self, "_key", ""), None)
        self._system = None
