"""The one real client: the official ``openai`` SDK against any OpenAI-compatible endpoint.

The SDK's own retries are off; this client retries itself so that every retry is
recorded (attempt, reason, wait) in the step that paid for it, honours ``Retry-After``,
and uses exponential backoff with jitter. Failures are sorted by who must act:

* 401/403/404, unreachable endpoint, retries exhausted -> ``ModelError``: the run stops,
  finished episodes are kept, the message says what to fix.
* 400/413/422 (e.g. the context is too long) -> ``ModelRequestError``: that episode is
  recorded as errored and the run goes on.

The API key is read from the environment variable the spec names, handed to the SDK,
and scrubbed from every message this module produces; it never reaches a record, the
cache or a report.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import os
import random
import re
import time
from collections.abc import Callable, Sequence
from typing import Any

import openai

from exploreval.core import (
    DEFAULT_API_KEY_ENV,
    DEFAULT_CONCURRENCY,
    DEFAULT_MAX_RETRIES,
    DEFAULT_REQUEST_TIMEOUT_S,
    Message,
    Usage,
)
from exploreval.models._base import (
    Completion,
    Constraint,
    ModelClient,
    SamplingParams,
    ToolCall,
    token_entropy,
)
from exploreval.models._cache import ResponseCache, TransitCache, cache_key
from exploreval.models._errors import ModelError, ModelRequestError
from exploreval.models._pricing import PriceTable, default_price_table

#: Placeholder sent to servers that need no key (llama.cpp, vLLM, Ollama); never a secret.
NO_KEY = "no-key-needed"

CONSTRAIN_WIRES = ("auto", "grammar", "json_schema")
_RETRYABLE_STATUS = {408, 409, 425, 429, 500, 502, 503, 504, 520, 522, 524, 529}


def redact(text: str, secret: str | None) -> str:
    """Remove ``secret`` (and any long prefix of it) from ``text``."""
    if not secret or len(secret) < 6:
        return text
    for cut in (len(secret), 12, 8):
        if cut <= len(secret):
            text = text.replace(secret[:cut], "[redacted]")
    return text


def _retry_after_s(exc: openai.APIStatusError) -> float | None:
    """Seconds the server asked us to wait (``retry-after-ms``, ``retry-after`` s or date)."""
    headers = exc.response.headers
    value = headers.get("retry-after-ms")
    if value:
        try:
            return max(0.0, float(value) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:  # an HTTP date; anything unparseable falls back to our own backoff
        parsed = email.utils.parsedate_to_datetime(value)
        return max(0.0, parsed.timestamp() - time.time())
    except (TypeError, ValueError, IndexError, OverflowError):
        return None


class MalformedReply(ValueError):
    """A 200 reply that is not a chat completion (HTML, bad JSON, no choices, bad usage)."""


#: More tokens than this in one call is a broken server, not a reply (contexts are ~10^6).
MAX_TOKENS_PER_CALL = 100_000_000


def _token_count(usage: dict[str, Any], field: str, secret: str | None) -> int:
    """A usage count as the API defines it: a non-negative integer (absent or null = 0).
    Anything else (text, a negative or absurd number, a fraction) is a malformed reply."""
    value = usage.get(field)
    if value is None:
        return 0
    if isinstance(value, float) and value.is_integer() and abs(value) <= MAX_TOKENS_PER_CALL:
        value = int(value)  # 12.0 from a lenient server is still a count
    if isinstance(value, bool) or not isinstance(value, int):
        shown = clean_text(repr(value), secret)[:80]
        raise MalformedReply(f"bad usage: {field} is not an integer count ({shown})")
    if not 0 <= value <= MAX_TOKENS_PER_CALL:
        raise MalformedReply(f"bad usage: {field} = {value} is outside 0..{MAX_TOKENS_PER_CALL:,}")
    return value


def clean_text(text: str, secret: str | None) -> str:
    """What we store of server text: the key redacted, lone surrogates escaped (``\\ud800``)
    so the record and the cache can be written (and the call is never paid twice)."""
    text = redact(text, secret)
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


#: Requests in flight per SDK client (HTTP connection pool) of one model client.
SDK_SHARD = 32


#: ``max_tokens`` of an embedded-model request whose agent sets none. llama.cpp otherwise
#: generates until the context (8,192 tokens) is full: a reply the grammar lets run on (a JSON
#: string, a list) took minutes per step on 2 cores, past the client's timeout, and each retry
#: started again while the abandoned request kept the server busy. The longest harness reply
#: seen from the embedded model (a terminal keystroke batch with its analysis) is far shorter.
LOCAL_MAX_TOKENS = 1024


#: Longest string bound kept in a schema sent to llama.cpp (see :func:`llama_schema`).
LLAMA_MAX_LENGTH = 32


# -> Any: a JSON schema (any JSON value) in, the same shape out
def llama_schema(schema: Any) -> Any:
    """``schema`` as llama.cpp can take it. Its JSON-schema-to-grammar converter unrolls a
    string's ``maxLength`` into that many nested optional rules: the terminal harnesses'
    ``maxLength: 2000`` keystrokes made a grammar its parser refuses, and the embedded server
    died with it. Bounds above :data:`LLAMA_MAX_LENGTH` are dropped (the reply is bounded by
    ``max_tokens`` anyway, by default :data:`LOCAL_MAX_TOKENS` for the embedded model, and
    the harness's parser still checks what it reads)."""
    if isinstance(schema, list):
        return [llama_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {key: llama_schema(value) for key, value in schema.items()}
    if isinstance(out.get("maxLength"), int) and out["maxLength"] > LLAMA_MAX_LENGTH:
        del out["maxLength"]
    return out


def _wire(message: Message) -> dict[str, Any]:
    """A message as the chat API takes it (a native call and its answer keep their fields)."""
    out: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.tool_calls is not None:
        out["tool_calls"] = message.tool_calls
    if message.tool_call_id is not None:
        out["tool_call_id"] = message.tool_call_id
    return out


class OpenAIClient(ModelClient):
    """Chat completions through the ``openai`` SDK, with retries, a cache and costs."""

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        *,
        api_key_env: str = DEFAULT_API_KEY_ENV,
        cache: ResponseCache | TransitCache | None = None,
        cache_endpoint: str | None = None,
        max_connections: int = DEFAULT_CONCURRENCY,
        request_timeout: float = DEFAULT_REQUEST_TIMEOUT_S,
        max_retries: int = DEFAULT_MAX_RETRIES,
        backoff_base_s: float = 0.5,
        backoff_max_s: float = 60.0,
        prices: PriceTable | None = None,
        server_death: Callable[[], str | None] | None = None,
        constrain_wire: str = "auto",
        default_max_tokens: int | None = None,
    ) -> None:
        self.model = model
        #: Sent as ``max_tokens`` when the agent sets none (the embedded model: see
        #: ``LOCAL_MAX_TOKENS``). Not part of the cache key: it bounds a runaway reply, and a
        #: reply that ends by itself is the same with or without it.
        self.default_max_tokens = default_max_tokens
        #: For a server we started (the embedded model): how it died, or None while it runs. A
        #: failed connection asks it first, so a crashed server stops the run at once with its
        #: exit signal and log instead of after every retry as "cannot connect".
        self.server_death = server_death
        if constrain_wire not in CONSTRAIN_WIRES:
            raise ValueError(
                f"constrain_wire {constrain_wire!r}: expected one of {', '.join(CONSTRAIN_WIRES)}"
            )
        #: ``auto``: a GBNF grammar to the embedded model (llama.cpp), a JSON schema
        #: (``response_format``) to any other endpoint; ``grammar`` for your own llama.cpp server.
        self.constrain_wire = constrain_wire
        self.base_url = base_url
        self.api_key_env = api_key_env
        self.cache = cache
        #: What identifies the server in cache keys (a local model's port changes per run).
        self.cache_endpoint = cache_endpoint or base_url or "openai"
        # any OpenAI-compatible endpoint takes tools, except the embedded model's server (it
        # decodes the call's schema as text instead: docs/models.md, "Native tool calls")
        self.native_tools = not self.cache_endpoint.startswith("local:")
        self.max_retries = max_retries
        self.backoff_base_s = backoff_base_s
        self.backoff_max_s = backoff_max_s
        self.request_timeout = request_timeout
        self.prices = prices or default_price_table()
        self._key = os.environ.get(api_key_env) or None
        self._slots = asyncio.Semaphore(max_connections)
        self._jitter = random.Random()
        # One SDK client (and HTTP connection pool) per SDK_SHARD requests in flight: httpcore's
        # pool assigns each request by scanning every connection, so one pool of 256 spends
        # more CPU on bookkeeping than on the requests (issue 18: 250 req/s at 256 in flight).
        shards = max(1, -(-max_connections // SDK_SHARD))
        self._sdks = [
            openai.AsyncOpenAI(
                api_key=self._key or NO_KEY,
                base_url=base_url,
                max_retries=0,
                timeout=request_timeout,
            )
            for _ in range(shards)
        ]
        self._shard = 0

    def config(self) -> dict[str, Any]:
        return {"model": self.model, "base_url": self.base_url, "api_key_env": self.api_key_env}

    @property
    def endpoint(self) -> str:
        return self.base_url or "https://api.openai.com/v1"

    # -- the call ----------------------------------------------------------------------
    async def complete(
        self,
        messages: Sequence[Message],
        params: SamplingParams | None = None,
        *,
        repeat: int = 0,
        sample: int = 0,
        scope: str = "",
    ) -> Completion:
        params = params or SamplingParams()
        key = cache_key(
            model=self.model,
            endpoint=self.cache_endpoint,
            messages=messages,
            params=params,
            scope=scope,
            repeat=repeat,
            sample=sample,
        )
        if self.cache is not None:
            hit = self.cache.get(key)
            if hit is not None:
                usage = hit.usage.model_copy(update={"cached_calls": 1})
                return hit.model_copy(update={"cached": True, "latency_s": 0.0, "usage": usage})
        if self.base_url is None and self._key is None:
            raise ModelError(
                f"no API key for {self.model}: set the environment variable {self.api_key_env} "
                "(or point --base-url at a server that needs none)"
            )
        async with self._slots:
            completion = await self._call_with_retries(messages, params)
        if self.cache is not None:
            self.cache.put(key, self.model, completion)
        return completion

    async def _call_with_retries(
        self, messages: Sequence[Message], params: SamplingParams
    ) -> Completion:
        # ``client.post`` is the SDK's documented way to send a raw body: same HTTP stack,
        # auth and error types as ``chat.completions.create``, minus a recursive TypedDict
        # transform that costs ~2 ms of CPU per call and does nothing for plain role/content
        # messages (measured in bench/bench_runner.py).
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [_wire(m) for m in messages],
            **params.model_dump(exclude_none=True, exclude={"constraint"}),
        }
        if params.constraint is not None:
            body.update(self.constraint_body(params.constraint))
        if params.top_logprobs is not None:
            body["logprobs"] = True
        if params.max_tokens is None and self.default_max_tokens is not None:
            body["max_tokens"] = self.default_max_tokens
        retry_log: list[str] = []
        attempt = 0
        while True:
            started = time.perf_counter()
            try:
                sdk = self._sdks[self._shard]
                self._shard = (self._shard + 1) % len(self._sdks)
                response = await sdk.post("/chat/completions", body=body, cast_to=object)
                latency = time.perf_counter() - started
                return self._completion(response, latency, attempt, retry_log)
            except (
                MalformedReply,
                openai.APIResponseValidationError,
                json.JSONDecodeError,
            ) as exc:
                reason, wait = f"malformed reply: {self._describe(exc)}", None
                if attempt >= self.max_retries:
                    raise ModelRequestError(
                        f"{self.endpoint} sent a malformed reply for model {self.model} "
                        f"{attempt + 1} times; last: {self._describe(exc)}"
                    ) from None
            except openai.APIStatusError as exc:
                status = exc.status_code
                if status in (401, 403):
                    raise ModelError(
                        f"{self.endpoint} refused the credentials (HTTP {status}) for model "
                        f"{self.model}: check the key in ${self.api_key_env}"
                    ) from None
                if status == 404:
                    raise ModelError(
                        f"{self.endpoint} answered 404 for model {self.model!r}: "
                        f"{self._describe(exc)} (is the model name or --base-url right?)"
                    ) from None
                if status not in _RETRYABLE_STATUS:
                    raise ModelRequestError(
                        f"{self.endpoint} rejected the request (HTTP {status}): {self._describe(exc)}"
                    ) from None
                reason = f"HTTP {status}"
                wait = _retry_after_s(exc)
            except openai.APITimeoutError:
                reason, wait = f"timed out after {self.request_timeout:g}s", None
                await self._raise_if_server_died()
            except openai.APIConnectionError as exc:
                cause = exc.__cause__ or exc.__context__
                detail = self._describe(cause) if cause is not None else self._describe(exc)
                reason, wait = f"cannot connect: {detail}", None
                await self._raise_if_server_died()
            if attempt >= self.max_retries:
                raise ModelError(
                    f"{self.endpoint} failed for model {self.model} after {attempt} retries; "
                    f"last error: {reason}"
                    + ("" if "connect" not in reason else " (is the server running?)")
                )
            delay = self._backoff(attempt) if wait is None else min(wait, self.backoff_max_s)
            retry_log.append(
                f"attempt {attempt + 1}: {reason}; waited {delay:.2f}s"
                + (" (Retry-After)" if wait is not None else "")
            )
            attempt += 1
            await asyncio.sleep(delay)

    def constraint_wire(self, constraint: Constraint) -> str:
        """How ``constraint`` reaches this endpoint: ``grammar`` (llama.cpp's GBNF),
        ``json_object`` (llama.cpp's schema-constrained JSON), ``json_schema`` (OpenAI's
        ``response_format``), or ``unsupported`` (a grammar-only constraint, remote endpoint)."""
        wire = self.constrain_wire
        if wire == "auto":
            wire = "grammar" if self.cache_endpoint.startswith("local:") else "json_schema"
        if wire == "grammar":
            if constraint.grammar is not None:
                return "grammar"
            return "json_object" if constraint.json_schema is not None else "unsupported"
        return "json_schema" if constraint.json_schema is not None else "unsupported"

    def constraint_body(self, constraint: Constraint) -> dict[str, Any]:
        wire = self.constraint_wire(constraint)
        if wire == "grammar":
            return {"grammar": constraint.grammar}
        if wire == "json_object":
            schema = llama_schema(constraint.json_schema)
            return {"response_format": {"type": "json_object", "schema": schema}}
        if wire == "json_schema":
            name = re.sub(r"[^A-Za-z0-9_-]", "_", constraint.name)[:64] or "answer"
            return {"response_format": {"type": "json_schema", "json_schema": {
                "name": name, "schema": constraint.json_schema, "strict": True}}}  # fmt: skip
        return {}

    async def _raise_if_server_died(self) -> None:
        if self.server_death is None:
            return
        report = await asyncio.to_thread(self.server_death)
        if report is not None:
            raise ModelError(redact(report, self._key))

    def _backoff(self, attempt: int) -> float:
        """Exponential backoff with equal jitter: half fixed, half random."""
        cap = float(min(self.backoff_max_s, self.backoff_base_s * (2**attempt)))
        return cap / 2 + float(self._jitter.uniform(0, cap / 2))

    def _describe(self, exc: BaseException) -> str:
        message = str(exc) or type(exc).__name__
        return redact(message, self._key)[:500]

    def _completion(
        self, response: Any, latency: float, retries: int, retry_log: list[str]
    ) -> Completion:
        """Read the JSON body (a dict: building the SDK's pydantic model costs ~0.25 ms of
        CPU per call, a fifth of the client's share). Servers vary; read defensively."""
        if not isinstance(response, dict):
            shown = str(response)[:80]
            raise MalformedReply(f"the body is not a JSON object (starts {shown!r})")
        choices = response.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise MalformedReply("no choices in the reply")
        choice = choices[0]
        message = choice.get("message") or {}
        if not isinstance(message, dict):
            raise MalformedReply("choices[0].message is not an object")
        reasoning = message.get("reasoning_content") or message.get("reasoning")
        finish_reason = choice.get("finish_reason")
        if finish_reason is not None and not isinstance(finish_reason, str):
            shown = clean_text(str(finish_reason), self._key)[:80]
            raise MalformedReply(f"finish_reason is not a string: {shown!r}")
        usage = Usage(calls=1)
        raw_usage = response.get("usage")
        if raw_usage is not None:
            if not isinstance(raw_usage, dict):
                shown = clean_text(str(raw_usage), self._key)[:80]
                raise MalformedReply(f"usage is not an object: {shown!r}")
            details = raw_usage.get("completion_tokens_details") or {}
            if not isinstance(details, dict):
                raise MalformedReply("usage.completion_tokens_details is not an object")
            usage = Usage(
                prompt_tokens=_token_count(raw_usage, "prompt_tokens", self._key),
                completion_tokens=_token_count(raw_usage, "completion_tokens", self._key),
                reasoning_tokens=_token_count(details, "reasoning_tokens", self._key),
                calls=1,
            )
        if self.prices.lookup(self.model) is None:
            usage.unpriced_calls = 1
            usage.cost_usd = None  # unknown, never $0
        else:
            usage.cost_usd = self.prices.cost(self.model, usage)
        return Completion(
            text=clean_text(str(message.get("content") or ""), self._key),
            tool_calls=self._tool_calls(message.get("tool_calls")),
            reasoning=clean_text(str(reasoning), self._key) if reasoning else None,
            usage=usage,
            latency_s=latency,
            retries=retries,
            retry_log=retry_log,
            finish_reason=clean_text(finish_reason, self._key) if finish_reason else None,
            **self._entropy(choice.get("logprobs")),
        )

    @staticmethod
    def _entropy(logprobs: Any) -> dict[str, Any]:
        scored = token_entropy(logprobs.get("content")) if isinstance(logprobs, dict) else None
        return {} if scored is None else {"token_entropy": scored[0], "tokens_scored": scored[1]}

    def _tool_calls(self, raw: Any) -> list[ToolCall]:
        """``message.tool_calls`` as (name, arguments); entries that are not function calls are
        skipped (servers vary), a list that is not a list is a malformed reply."""
        if raw is None:
            return []
        if not isinstance(raw, list):
            raise MalformedReply("message.tool_calls is not a list")
        calls = []
        for item in raw:
            function = item.get("function") if isinstance(item, dict) else None
            if isinstance(function, dict) and isinstance(function.get("name"), str):
                arguments = function.get("arguments")
                if not isinstance(arguments, str):
                    arguments = json.dumps(arguments) if arguments is not None else ""
                call_id = item.get("id")
                calls.append(
                    ToolCall(
                        name=function["name"],
                        arguments=clean_text(arguments, self._key),
                        id=str(call_id) if isinstance(call_id, str | int) else "",
                    )
                )
        return calls

    async def aclose(self) -> None:
        for sdk in self._sdks:
            await sdk.close()
