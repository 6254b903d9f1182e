"""The condition of an episode: a readable, stable label of the env options it ran with.

Presets name *which* tasks an env draws; env options (``--env-option injection_level=1``) change
how the env behaves on them. Two episodes of the same env, preset, seed and agent but different
options are different experimental conditions and must never be pooled in a table or paired in a
comparison. ``condition_label(record)`` gives every episode its label; results tables hold it as the
``condition`` column.

Default label: the options as ``key=value`` pairs sorted by key and joined by ``", "`` (scalars as
written, other values as canonical JSON), ``"-"`` when there are none; a label longer than
``MAX_LABEL`` characters is cut and ends with a short hash of the full options, so it stays distinct
and stable. A suite registers a better formatter for its family with
``register_condition_label(family, fn)``, ``fn(env_options: dict) -> str`` (or a
``"module:function"`` string), e.g. ``"level 1"``; returning ``""`` or ``None`` falls back to the
default.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from exploreval.core import Registry, load_plugins, resolve

if TYPE_CHECKING:
    from exploreval.core import EpisodeRecord

NO_CONDITION = "-"
MAX_LABEL = 60
ConditionLabelFn = Callable[[Mapping[str, Any]], "str | None"]

#: Keyed by env family.
CONDITION_LABELS: Registry[Any] = Registry("condition label", loader=load_plugins)


def register_condition_label(family: str, fn: ConditionLabelFn | str) -> None:
    """Use ``fn(env_options) -> label`` for the condition of records of ``family``."""
    CONDITION_LABELS.register(family, fn, replace=True)


def _value_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if value is None or isinstance(value, bool | int | float):
        return json.dumps(value)
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def default_condition_label(options: Mapping[str, Any]) -> str:
    """``{"b": 2, "a": "x"}`` -> ``"a=x, b=2"``; ``{}`` -> ``"-"`` (see the module docstring)."""
    if not options:
        return NO_CONDITION
    label = ", ".join(f"{key}={_value_text(options[key])}" for key in sorted(options))
    if len(label) <= MAX_LABEL:
        return label
    digest = hashlib.sha256(
        json.dumps(dict(options), sort_keys=True, default=str).encode()
    ).hexdigest()[:8]
    return f"{label[: MAX_LABEL - 11].rstrip()}… #{digest}"


def condition_label(record: EpisodeRecord) -> str:
    """The condition label of an episode (its family's formatter, else the default)."""
    return condition_label_for(record.family, record.env_options or {})


def condition_label_for(family: str, options: dict[str, Any]) -> str:
    """The condition label of a family's env options (what ``condition_label`` gives a
    record; the viewer's index, which reads raw log lines, calls it directly)."""
    found = CONDITION_LABELS.find(family)
    if found is not None and options:
        label = resolve(found)(options)
        if label:
            return str(label)
    return default_condition_label(options)
