"""Lazy re-exports for package ``__init__`` modules (PEP 562).

A package lists ``{public name: "relative.module"}``; the module is imported when the name is
first used. This keeps ``import exploreval`` and ``exploreval --help`` fast while the public API
stays ``from exploreval.core import EpisodeRecord``. Each package also imports the same names
under ``TYPE_CHECKING`` so type checkers see them; a test checks the two lists agree.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def lazy_exports(
    package: str, exports: dict[str, str], namespace: dict[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package`` exporting ``exports`` lazily."""

    # -> Any: a module's lazily imported attribute (any object)
    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        namespace[name] = value  # later lookups skip __getattr__
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(exports))

    return __getattr__, __dir__
