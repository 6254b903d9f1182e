"""Open a model client by name, serving ``local:*`` models on demand.

Used by the runner's client pool and by suite commands that call a model outside a run (the
bandit decision experiments), so both resolve local models and caches the same way.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict, Unpack

from exploreval.core import (
    DEFAULT_API_KEY_ENV,
    DEFAULT_CONCURRENCY,
    DEFAULT_MAX_RETRIES,
    DEFAULT_REQUEST_TIMEOUT_S,
)
from exploreval.models._base import ModelClient
from exploreval.models._pricing import ModelPrice

if TYPE_CHECKING:
    from exploreval.models._cache import ResponseCache, TransitCache


def is_local_model(model: str | None) -> bool:
    return bool(model) and str(model).startswith("local:")


def open_model_client(
    model: str,
    *,
    base_url: str | None = None,
    api_key_env: str = DEFAULT_API_KEY_ENV,
    cache_path: str | Path | None = None,
    max_connections: int = DEFAULT_CONCURRENCY,
    request_timeout: float = DEFAULT_REQUEST_TIMEOUT_S,
    max_retries: int = DEFAULT_MAX_RETRIES,
    prices: dict[str, ModelPrice] | None = None,
    constrain_wire: str = "auto",
    cache: ResponseCache | TransitCache | None = None,
) -> ModelClient:
    """The real client: the openai SDK against ``base_url`` with an optional SQLite cache
    (``cache_path``), or the given ``cache`` (a cluster worker's :class:`TransitCache`)."""
    from exploreval.models._cache import ResponseCache
    from exploreval.models._openai import LOCAL_MAX_TOKENS, OpenAIClient
    from exploreval.models._pricing import default_price_table

    if cache is None and cache_path:
        cache = ResponseCache(cache_path)
    # A local model's port changes from run to run; its cache identity must not.
    local = is_local_model(model)
    endpoint = model if local else base_url
    return OpenAIClient(
        model=model,
        base_url=base_url,
        api_key_env=api_key_env,
        cache=cache,
        cache_endpoint=endpoint,
        max_connections=max_connections,
        request_timeout=request_timeout,
        max_retries=max_retries,
        prices=default_price_table(prices),
        server_death=_local_server_death(model) if local else None,
        constrain_wire=constrain_wire,
        default_max_tokens=LOCAL_MAX_TOKENS if local else None,
    )


def _local_server_death(model: str) -> Callable[[], str | None]:
    """How the embedded server of ``model`` died (None while it runs, or if it is not ours)."""

    def check() -> str | None:
        from exploreval.models._local import LOCAL_SERVERS

        return LOCAL_SERVERS.death_report(model)

    return check


async def acquire_local(model: str) -> str:
    """Start (or share) the embedded server of ``local:*`` model; returns its base URL."""
    from exploreval.models._local import LOCAL_SERVERS

    server = await asyncio.to_thread(LOCAL_SERVERS.acquire, model)
    return server.base_url


def release_local(model: str) -> None:
    from exploreval.models._local import LOCAL_SERVERS

    LOCAL_SERVERS.release(model)


class SessionOptions(TypedDict, total=False):
    """What :func:`model_session` passes on to :func:`open_model_client` (its defaults)."""

    base_url: str | None
    api_key_env: str
    cache_path: str | Path | None
    max_connections: int
    request_timeout: float
    max_retries: int


@contextlib.asynccontextmanager
async def model_session(
    model: str, **options: Unpack[SessionOptions]
) -> AsyncIterator[ModelClient]:
    """A client for ``model`` for the duration of the block (local servers started and released)."""
    local = is_local_model(model) and options.get("base_url") is None
    if local:
        options["base_url"] = await acquire_local(model)
    client = open_model_client(model, **options)
    try:
        yield client
    finally:
        with contextlib.suppress(Exception):
            await client.aclose()
        if local:
            release_local(model)
