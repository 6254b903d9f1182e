"""The agent and harness registries (light: importing them loads no model code).

Suites register scripted agents and harnesses per env family, usually as ``"module:Class"``
strings so that registering costs nothing until an agent is built.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from exploreval.core import Registry, current_plugin, load_plugins, resolve, unknown_name_error

if TYPE_CHECKING:
    from exploreval.agents._base import Agent
    from exploreval.agents._harness import Harness


@dataclass(frozen=True)
class AgentEntry:
    """A registered scripted agent: which env families it plays and how to build it.

    ``factory`` is a callable or a ``"module:attribute"`` string imported on first use.
    """

    name: str
    factory: Callable[..., Agent] | str
    families: tuple[str, ...]
    description: str = ""
    suite: str = ""

    def build(self, **options: Any) -> Agent:
        agent: Agent = resolve(self.factory)(**options)
        return agent


#: Scripted agents by name, e.g. ``frontier`` (grid) or ``ucb`` (bandit).
#: Names are unique per family; the registry key is ``family:name``.
AGENT_REGISTRY: Registry[AgentEntry] = Registry("agent", loader=load_plugins)


def register_agent(
    name: str,
    factory: Callable[..., Agent] | str,
    *,
    families: tuple[str, ...],
    description: str = "",
) -> None:
    entry = AgentEntry(
        name=name,
        factory=factory,
        families=families,
        description=description,
        suite=current_plugin(),
    )
    for family in families:
        AGENT_REGISTRY.register(f"{family}:{name}", entry, replace=True)


def agent_names(family: str) -> list[str]:
    """Scripted agents registered for ``family``."""
    prefix = f"{family}:"
    return [key[len(prefix) :] for key in AGENT_REGISTRY.names() if key.startswith(prefix)]


def check_agent(family: str, name: str) -> AgentEntry:
    """The entry of scripted agent ``name`` for ``family``; the error lists that family's agents."""
    entry = AGENT_REGISTRY.find(f"{family}:{name}")
    if entry is None:
        raise unknown_name_error(
            "agent", name, agent_names(family), context=f"env family {family!r}"
        )
    return entry


def make_agent(family: str, name: str, **options: Any) -> Agent:
    """Build a scripted agent for an env family (``random`` exists for every family)."""
    return check_agent(family, name).build(**options)


@dataclass(frozen=True)
class HarnessEntry:
    """A registered harness; ``factory`` may be a ``"module:attribute"`` string."""

    name: str
    factory: Callable[..., Harness] | str
    families: tuple[str, ...]
    description: str = ""
    suite: str = ""

    def build(self, **options: Any) -> Harness:
        harness: Harness = resolve(self.factory)(**options)
        return harness


HARNESS_REGISTRY: Registry[HarnessEntry] = Registry("harness", loader=load_plugins)


def register_harness(
    name: str,
    factory: Callable[..., Harness] | str,
    *,
    families: tuple[str, ...],
    description: str = "",
) -> None:
    entry = HarnessEntry(
        name=name,
        factory=factory,
        families=families,
        description=description,
        suite=current_plugin(),
    )
    for family in families:
        HARNESS_REGISTRY.register(f"{family}:{name}", entry, replace=True)


def harness_names(family: str) -> list[str]:
    """Harnesses registered for ``family``."""
    prefix = f"{family}:"
    return [key[len(prefix) :] for key in HARNESS_REGISTRY.names() if key.startswith(prefix)]


def check_harness(family: str, name: str) -> HarnessEntry:
    """The entry of harness ``name`` for ``family``; the error lists that family's harnesses."""
    entry = HARNESS_REGISTRY.find(f"{family}:{name}")
    if entry is None:
        raise unknown_name_error(
            "harness", name, harness_names(family), context=f"env family {family!r}"
        )
    return entry


def make_harness(family: str, name: str, **options: Any) -> Harness:
    return check_harness(family, name).build(**options)
