"""The battery: ``profile-v1``, one experiment across the five paradigms.

Assembled from the profile parts the suites register (``exploreval.core.profile_parts``), never
from a list of its own, so the battery plays exactly what each suite says its paradigm needs. A
battery has a name and a version; its parts' definitions are hashed (``battery_digest``) and the
digest of every released version is pinned here, so a changed part cannot pass under an old
name: it needs a new battery version.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from exploreval.core import ProfilePart, UnknownNameError, profile_parts, stable_hash

BATTERY_NAME = "profile-v1"
#: The parts of each battery version, with the part versions it was made of, in card order.
BATTERIES: dict[str, dict[str, int]] = {
    "profile-v1": {"bandit": 1, "grid": 1, "puzzles": 1, "terminal": 1, "task2quiz": 1},
}


class BatteryError(ValueError):
    """A battery that cannot be assembled as its version says (a part missing or changed)."""


@dataclass(frozen=True)
class PartSlice:
    """Where a part's suite entries sit in the battery's experiment."""

    part: ProfilePart
    suite_indices: tuple[int, ...]


def battery_parts(battery: str = BATTERY_NAME, only: list[str] | None = None) -> list[ProfilePart]:
    """The registered parts of ``battery`` in card order, checked against its versions."""
    if battery not in BATTERIES:
        raise UnknownNameError(
            f"Unknown battery {battery!r}. Known: {', '.join(sorted(BATTERIES))}"
        )
    wanted = BATTERIES[battery]
    registered = {p.name: p for p in profile_parts()}
    if only:
        unknown = sorted(set(only) - set(wanted))
        if unknown:
            raise BatteryError(
                f"--part {', '.join(unknown)}: not a part of {battery} "
                f"(its parts: {', '.join(wanted)})"
            )
    parts = []
    for name, version in wanted.items():
        if only and name not in only:
            continue
        part = registered.get(name)
        if part is None:
            raise BatteryError(
                f"{battery} needs the {name!r} part, which no installed suite registers "
                f"(registered: {', '.join(sorted(registered)) or 'none'})"
            )
        if part.version != version:
            raise BatteryError(
                f"{battery} was made with {name} part v{version}; the installed suite registers "
                f"v{part.version}. A changed part needs a new battery version"
            )
        parts.append(part)
    return parts


def part_definition(part: ProfilePart) -> dict[str, Any]:
    """What a part measures (everything but its description and plugin), for the digest."""
    return {
        "name": part.name,
        "version": part.version,
        "suites": list(part.suites),
        "quick_suites": list(part.quick_suites),
        "model_agent": part.model_agent,
        "quick_model_agent": part.quick_model_agent,
        "references": list(part.references),
        "metrics": [m.__dict__ for m in part.metrics],
        "success": part.success,
        "conditions": list(part.conditions),
        "quick_conditions": list(part.quick_conditions),
    }


def battery_digest(parts: list[ProfilePart]) -> str:
    return stable_hash([part_definition(p) for p in parts])[:16]


def model_label(model: str) -> str:
    """The model's name in the battery's tables: the same on every part, whatever harness."""
    return model


def battery_experiment(
    parts: list[ProfilePart],
    *,
    model: str | None,
    quick: bool,
    agent_fields: dict[str, Any] | None = None,
    concurrency: int = 4,
    executor: str = "local",
    workers: int = 1,
    references: bool = True,
) -> tuple[dict[str, Any], list[PartSlice]]:
    """The battery as an experiment dict (``runner.spec_from_dict`` reads it): every part's
    entries, the model on each part with that part's harness, and the part's references on the
    same episodes. ``model=None`` plays the references alone (a card of scripted agents)."""
    suites: list[dict[str, Any]] = []
    agents: list[dict[str, Any]] = []
    slices: list[PartSlice] = []
    for part in parts:
        start = len(suites)
        suites.extend(dict(e) for e in part.entries(quick))
        indices = list(range(start, len(suites)))
        slices.append(PartSlice(part, tuple(indices)))
        if model is not None:
            agents.append(
                {
                    "kind": "llm",
                    "model": model,
                    "label": model_label(model),
                    **part.agent_fields(quick),
                    **(agent_fields or {}),
                    "suites": indices,
                }
            )
        if references:
            for ref in part.references:
                agents.append(
                    {
                        "kind": "scripted",
                        "agent": ref["agent"],
                        "label": ref.get("label") or ref["agent"],
                        "options": dict(ref.get("options") or {}),
                        "suites": indices,
                    }
                )
    experiment = {
        "name": BATTERY_NAME + ("-quick" if quick else ""),
        "suites": suites,
        "agents": agents,
        "concurrency": concurrency,
        "executor": executor,
        "workers": workers,
    }
    return experiment, slices
