"""One ``Registry`` type for every registry: envs, suites, agents, harnesses, metrics, reports.

A registry maps names to entries and explains itself when a lookup fails (close matches, the full
listing, and any suite plugin that failed to load). Registries that suite plugins fill are created
with ``loader=load_plugins``: the first lookup loads every plugin found through the
``exploreval.suites`` entry point, so ``import exploreval`` stays cheap and built-in suites are found
exactly like a third party's.

Entries may point at their implementation lazily with a ``"module:attribute"`` string (as
Gymnasium's ``entry_point`` does); ``resolve`` imports it on first use, so registering a suite does
not import its heavy modules.
"""

from __future__ import annotations

import difflib
import importlib
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Generic, TypeVar

T = TypeVar("T")
D = TypeVar("D")

#: Extra lines appended to unknown-name errors (set by the plugin loader: plugins that failed).
_ERROR_NOTES: list[Callable[[], str]] = []


class UnknownNameError(KeyError):
    """An unknown id/preset/agent name; the message lists close matches."""

    def __str__(self) -> str:  # KeyError quotes its message; we want plain text.
        return str(self.args[0])


def unknown_name_error(
    kind: str, name: str, known: Iterable[str], context: str = ""
) -> UnknownNameError:
    known = sorted(known)
    close = difflib.get_close_matches(name, known, n=3, cutoff=0.5)
    where = f" for {context}" if context else ""
    hint = f" Did you mean: {', '.join(close)}?" if close else ""
    listing = ", ".join(known) if len(known) <= 30 else ", ".join(known[:30]) + ", ..."
    notes = "".join(note() for note in _ERROR_NOTES)
    return UnknownNameError(
        f"Unknown {kind} {name!r}{where}.{hint} Known: {listing or '(none)'}{notes}"
    )


def add_error_note(note: Callable[[], str]) -> None:
    """Append ``note()`` to every unknown-name error (e.g. 'suite plugin X failed to load')."""
    if note not in _ERROR_NOTES:
        _ERROR_NOTES.append(note)


class LazyRefError(ImportError):
    """A ``module:attribute`` reference that does not resolve; names the reference."""


#: reference -> (its module, the attribute): a metric's function is resolved once per episode
#: scored, and ``import_module`` of a loaded module is still microseconds each time.
_RESOLVED: dict[str, tuple[Any, Any]] = {}


# -> Any: the object a 'module:name' string names (any)
def resolve(target: Any) -> Any:
    """``"pkg.module:attr"`` -> the attribute (imported now); anything else is returned as is."""
    if not isinstance(target, str):
        return target
    hit = _RESOLVED.get(target)
    if hit is not None and sys.modules.get(hit[0].__name__) is hit[0]:  # not removed since
        return hit[1]
    module_name, sep, attr = target.partition(":")
    if not sep or not module_name or not attr:
        raise LazyRefError(f"reference {target!r} is not of the form 'package.module:attribute'")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise LazyRefError(f"cannot import {module_name!r} for {target!r}: {exc}") from exc
    obj: Any = module
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise LazyRefError(f"{module_name!r} has no attribute {attr!r} ({target!r})") from None
    _RESOLVED[target] = (module, obj)
    return obj


class Registry(Generic[T]):
    """A name -> entry map that explains itself when a lookup fails.

    ``loader`` runs (once, idempotently by contract) before any lookup or listing; plugin-filled
    registries pass ``exploreval.core.load_plugins``.
    """

    def __init__(self, kind: str, *, loader: Callable[[], None] | None = None) -> None:
        self.kind = kind
        self._items: dict[str, T] = {}
        self._loader = loader
        #: Bumped by every change: what ``derived`` computed is stale from then on.
        self.version = 0
        self._derived: dict[str, tuple[int, Any]] = {}

    def _load(self) -> None:
        if self._loader is not None:
            self._loader()

    def register(self, name: str, item: T, *, replace: bool = False) -> T:
        if name in self._items and not replace:
            raise ValueError(f"{self.kind} {name!r} is already registered")
        self._items[name] = item
        self.version += 1
        return item

    def derived(self, key: str, compute: Callable[[], D]) -> D:
        """``compute()`` once per state of the entries (plugins loaded first), kept under ``key``:
        what a hot path derives from them (an order, a lookup table), never stale after a
        register or an unregister."""
        self._load()
        hit = self._derived.get(key)
        if hit is None or hit[0] != self.version:
            hit = self._derived[key] = (self.version, compute())
        value: D = hit[1]
        return value

    def unregister(self, name: str) -> None:
        """Remove ``name`` (tests and plugins that replace a built-in)."""
        if self._items.pop(name, None) is not None:
            self.version += 1

    def get(self, name: str, *, context: str = "") -> T:
        self._load()
        try:
            return self._items[name]
        except KeyError:
            raise unknown_name_error(self.kind, name, self._items, context=context) from None

    def find(self, name: str) -> T | None:
        """The entry or ``None`` (no error): for optional hooks."""
        self._load()
        return self._items.get(name)

    def names(self) -> list[str]:
        self._load()
        return sorted(self._items)

    def items(self) -> list[tuple[str, T]]:
        self._load()
        return sorted(self._items.items())

    def values(self) -> list[T]:
        return [item for _, item in self.items()]

    def __contains__(self, name: object) -> bool:
        self._load()
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        self._load()
        return len(self._items)
