"""Stable hashing of configurations: the same spec always gets the same id."""

from __future__ import annotations

import hashlib
import json
from typing import Any


def canonical_json(obj: Any) -> str:
    """JSON with sorted keys and no whitespace, so equal configs hash equally."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def content_key(obj: Any) -> str:
    """A key equal for equal JSON content, for grouping within one process (never stored):
    orjson's sorted-key text, one C call (``canonical_json`` costs ~20x more, and a score asks
    once per episode); ``canonical_json`` for what orjson refuses (an integer past 64 bits, a
    non-string key, a non-JSON value)."""
    import orjson

    try:
        return orjson.dumps(obj, option=orjson.OPT_SORT_KEYS).decode()
    except TypeError:  # orjson.JSONEncodeError is one
        return canonical_json(obj)


def stable_hash(obj: Any, length: int = 16) -> str:
    return hashlib.sha256(canonical_json(obj).encode("utf-8")).hexdigest()[:length]


def episode_id(
    *,
    env_id: str,
    preset: str | None,
    seed: int,
    agent_config: dict[str, Any],
    repeat: int,
    env_options: dict[str, Any] | None = None,
) -> str:
    """Deterministic id of one episode: env id (with version) + preset + seed + agent + repeat."""
    return stable_hash(
        {
            "env_id": env_id,
            "preset": preset,
            "seed": seed,
            "agent": agent_config,
            "repeat": repeat,
            "env_options": env_options or {},
        }
    )
