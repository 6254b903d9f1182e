"""The agent and harness registries (light: importing them loads no model code).

Suites register scripted agents and harnesses per env family, usually as ``"module:Class"``
strings so that registering costs nothing until an agent is built. Both are one kind of registry,
:class:`FamilyRegistry`: names unique per env family, the key ``family:name``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from exploreval.core import Registry, current_plugin, load_plugins, resolve, unknown_name_error

if TYPE_CHECKING:
    from exploreval.agents._base import Agent
    from exploreval.agents._harness import Harness

_T = TypeVar("_T")


@dataclass(frozen=True)
class FamilyEntry(Generic[_T]):
    """A registered agent or harness: which env families it serves and how to build it.

    ``factory`` is a callable or a ``"module:attribute"`` string imported on first use.
    """

    name: str
    factory: Callable[..., _T] | str
    families: tuple[str, ...]
    description: str = ""
    suite: str = ""

    def build(self, **options: Any) -> _T:
        built: _T = resolve(self.factory)(**options)
        return built


class FamilyRegistry(Generic[_T]):
    """Entries by ``family:name`` (one :class:`~exploreval.core.Registry`), with the lookups
    every caller needs: the names of a family, the entry (or an error listing that family's
    names), the built object."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.registry: Registry[FamilyEntry[_T]] = Registry(kind, loader=load_plugins)

    def register(
        self,
        name: str,
        factory: Callable[..., _T] | str,
        *,
        families: tuple[str, ...],
        description: str = "",
    ) -> None:
        entry = FamilyEntry(name=name, factory=factory, families=families,
                            description=description, suite=current_plugin())  # fmt: skip
        for family in families:
            self.registry.register(f"{family}:{name}", entry, replace=True)

    def names(self, family: str) -> list[str]:
        """Names registered for ``family``."""
        prefix = f"{family}:"
        return [key[len(prefix) :] for key in self.registry.names() if key.startswith(prefix)]

    def check(self, family: str, name: str) -> FamilyEntry[_T]:
        """The entry of ``name`` for ``family``; the error lists that family's names."""
        entry = self.registry.find(f"{family}:{name}")
        if entry is None:
            raise unknown_name_error(
                self.kind, name, self.names(family), context=f"env family {family!r}"
            )
        return entry

    def make(self, family: str, name: str, **options: Any) -> _T:
        return self.check(family, name).build(**options)


#: Scripted agents by name, e.g. ``frontier`` (grid) or ``ucb`` (bandit).
AGENTS: FamilyRegistry[Agent] = FamilyRegistry("agent")
#: Harnesses by name, e.g. ``react`` (grid) or ``terminal_use`` (terminal).
HARNESSES: FamilyRegistry[Harness] = FamilyRegistry("harness")
AGENT_REGISTRY = AGENTS.registry
HARNESS_REGISTRY = HARNESSES.registry
AgentEntry = FamilyEntry
HarnessEntry = FamilyEntry

register_agent = AGENTS.register
agent_names = AGENTS.names
check_agent = AGENTS.check
register_harness = HARNESSES.register
harness_names = HARNESSES.names
check_harness = HARNESSES.check


def make_agent(family: str, name: str, **options: Any) -> Agent:
    """Build a scripted agent for an env family (``random`` exists for every family)."""
    return AGENTS.make(family, name, **options)


def make_harness(family: str, name: str, **options: Any) -> Harness:
    return HARNESSES.make(family, name, **options)
