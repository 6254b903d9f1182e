"""Versioned stored data: records, experiment files. Readers migrate older versions step by step
and refuse only a version newer than they know, naming it and what to do."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any


def migrate_versions(
    data: dict[str, Any],
    *,
    field: str,
    current: int,
    steps: Mapping[int, Callable[[dict[str, Any]], dict[str, Any]]],
    source: str = "",
) -> dict[str, Any]:
    """``data`` brought from its ``field`` version (absent: 1) up to ``current``, one step per
    version (``steps[v]`` turns version v into v + 1); the result carries ``field: current``.
    Raises ``ValueError`` (prefixed by ``source``) for a version that is not a positive integer
    or is newer than ``current``."""
    prefix = f"{source}: " if source else ""
    version = data.get(field, 1)
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise ValueError(f"{prefix}{field} must be a positive integer, got {version!r}")
    if version > current:
        raise ValueError(
            f"{prefix}{field} {version} is newer than this exploreval ({current}); upgrade "
            "exploreval"
        )
    while version < current:
        data = {**steps[version](data), field: version + 1}
        version += 1
    return {**data, field: current}
