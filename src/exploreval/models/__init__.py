"""Model layer: OpenAI-compatible client, SQLite cache, retries, costs, local model.

Names load on first use (``exploreval.core._lazy``), so importing the package is cheap."""

from typing import TYPE_CHECKING

from exploreval.core import lazy_exports

if TYPE_CHECKING:
    from exploreval.models._base import (
        Completion,
        Constraint,
        ModelClient,
        SamplingParams,
        ScriptedModel,
        ToolCall,
    )
    from exploreval.models._cache import (
        CACHE_FORMAT,
        CALL_EPISODE,
        CacheRow,
        ResponseCache,
        TransitCache,
        cache_key,
    )
    from exploreval.models._errors import (
        ModelError,
        ModelRequestError,
    )
    from exploreval.models._local import (
        LOCAL_MODELS,
        LOCAL_SERVERS,
        PORTABLE_CMAKE_ARGS,
        LocalServer,
        describe_exit,
        local_model_path,
    )
    from exploreval.models._openai import (
        OpenAIClient,
        redact,
    )
    from exploreval.models._pricing import (
        DEFAULT_PRICES,
        ModelPrice,
        PriceTable,
        default_price_table,
        load_prices,
        parse_prices,
    )
    from exploreval.models._session import (
        acquire_local,
        is_local_model,
        model_session,
        open_model_client,
        release_local,
    )
    from exploreval.models._smoke import REBUILD, SmokeResult, smoke_local_model

_EXPORTS: dict[str, str] = {
    "REBUILD": "._smoke",
    "acquire_local": "._session",
    "is_local_model": "._session",
    "model_session": "._session",
    "open_model_client": "._session",
    "release_local": "._session",
    "CACHE_FORMAT": "._cache",
    "CALL_EPISODE": "._cache",
    "CacheRow": "._cache",
    "TransitCache": "._cache",
    "Completion": "._base",
    "ToolCall": "._base",
    "Constraint": "._base",
    "DEFAULT_PRICES": "._pricing",
    "LOCAL_MODELS": "._local",
    "LOCAL_SERVERS": "._local",
    "LocalServer": "._local",
    "PORTABLE_CMAKE_ARGS": "._local",
    "describe_exit": "._local",
    "SmokeResult": "._smoke",
    "smoke_local_model": "._smoke",
    "ModelClient": "._base",
    "ModelError": "._errors",
    "ModelPrice": "._pricing",
    "ModelRequestError": "._errors",
    "OpenAIClient": "._openai",
    "PriceTable": "._pricing",
    "ResponseCache": "._cache",
    "SamplingParams": "._base",
    "ScriptedModel": "._base",
    "cache_key": "._cache",
    "default_price_table": "._pricing",
    "load_prices": "._pricing",
    "local_model_path": "._local",
    "parse_prices": "._pricing",
    "redact": "._openai",
}


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
__all__ = [
    "REBUILD",
    "acquire_local",
    "is_local_model",
    "model_session",
    "open_model_client",
    "release_local",
    "CACHE_FORMAT",
    "CALL_EPISODE",
    "CacheRow",
    "TransitCache",
    "Completion",
    "ToolCall",
    "Constraint",
    "DEFAULT_PRICES",
    "LOCAL_MODELS",
    "LOCAL_SERVERS",
    "LocalServer",
    "PORTABLE_CMAKE_ARGS",
    "describe_exit",
    "SmokeResult",
    "smoke_local_model",
    "ModelClient",
    "ModelError",
    "ModelPrice",
    "ModelRequestError",
    "OpenAIClient",
    "PriceTable",
    "ResponseCache",
    "SamplingParams",
    "ScriptedModel",
    "cache_key",
    "default_price_table",
    "load_prices",
    "local_model_path",
    "parse_prices",
    "redact",
]
