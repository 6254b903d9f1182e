"""Profile parts: what each suite contributes to ``exploreval profile``'s battery.

A suite plugin registers one part per paradigm: the suite entries its part of the battery plays
(a full and a ``--quick`` size), how the model under test plays them (harness, history,
sampling), the scripted reference policies that play the same episodes, and the card's metrics
with the two references that place each one on a 0-1 scale. The battery is assembled from this
registry, as the report is assembled from the report-section registry, so a third-party suite
can join the battery exactly as a built-in one does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from exploreval.core._plugins import current_plugin, load_plugins
from exploreval.core._registry import Registry


@dataclass(frozen=True)
class CardMetric:
    """One headline metric of a part's card row, and the two references that scale it.

    ``floor`` and ``ceiling`` are reference-agent labels of the same part: the placement is
    ``(model - floor) / (ceiling - floor)`` on the episodes all three played, so 0 means "as
    the floor policy does" and 1 "as the ceiling policy does", whichever way the metric points.
    """

    column: str
    label: str
    floor: str
    ceiling: str
    higher_is_better: bool = True
    #: What the metric says, in a few words (the card's tooltip and the docs).
    meaning: str = ""
    #: ``fraction``: a per-episode value in [0, 1] (a rate or a 0/1 outcome), so its 95% CI
    #: half-width is at most 0.98 / sqrt(n) whatever the model does; ``count`` otherwise.
    kind: str = "fraction"


@dataclass(frozen=True)
class ProfilePart:
    """One paradigm of the battery, as its suite defines it."""

    name: str
    paradigm: str
    #: Key of the paper's reference marks (``exploreval.profile`` keeps them as data).
    paper: str
    #: Bumped whenever anything below changes what the part measures.
    version: int
    suites: tuple[dict[str, Any], ...]
    quick_suites: tuple[dict[str, Any], ...]
    #: The model's agent fields besides ``model`` (harness, history, sampling, constrain...),
    #: for the full battery and for ``--quick``.
    model_agent: dict[str, Any]
    quick_model_agent: dict[str, Any]
    #: Scripted reference agents (``{"label": ..., "agent": ..., "options": ...}``).
    references: tuple[dict[str, Any], ...]
    metrics: tuple[CardMetric, ...]
    #: The task-success column shown beside the exploration metrics.
    success: str
    #: What each suite entry measures under, for matching a paper's marks (the keys of the
    #: marks' ``conditions``), full and quick; one dict per entry, whose ``row`` names the
    #: card row the entry's episodes fill (default: the part's name).
    conditions: tuple[dict[str, Any], ...] = ()
    quick_conditions: tuple[dict[str, Any], ...] = ()
    #: Model calls an episode makes at most, per suite entry (full, quick): its step cap plus
    #: any second phase (a quiz's questions). The plan's upper bound; None where no bound is
    #: known before the episode (a generated world's number of tasks).
    max_calls: tuple[int | None, ...] = ()
    quick_max_calls: tuple[int | None, ...] = ()
    description: str = ""
    plugin: str = ""

    def entries(self, quick: bool) -> tuple[dict[str, Any], ...]:
        return self.quick_suites if quick else self.suites

    def calls_cap(self, quick: bool) -> tuple[int | None, ...]:
        return self.quick_max_calls if quick else self.max_calls

    def agent_fields(self, quick: bool) -> dict[str, Any]:
        return dict(self.quick_model_agent if quick else self.model_agent)

    def entry_conditions(self, quick: bool) -> tuple[dict[str, Any], ...]:
        given = self.quick_conditions if quick else self.conditions
        return tuple(given) or tuple({} for _ in self.entries(quick))


PROFILE_PARTS: Registry[ProfilePart] = Registry("profile part", loader=load_plugins)


def _check_entries(name: str, label: str, entries: Sequence[dict[str, Any]]) -> None:
    if not entries:
        raise ValueError(f"profile part {name!r}: {label} needs at least one suite entry")
    for i, entry in enumerate(entries):
        if "env_id" not in entry:
            raise ValueError(f"profile part {name!r}: {label}[{i}] has no env_id")


def register_profile_part(part: ProfilePart) -> None:
    """Add (or replace) a part of the battery; its references must cover its metrics."""
    _check_entries(part.name, "suites", part.suites)
    _check_entries(part.name, "quick_suites", part.quick_suites)
    labels = [str(r.get("label") or r.get("agent")) for r in part.references]
    for metric in part.metrics:
        for role in (metric.floor, metric.ceiling):
            if role not in labels:
                raise ValueError(
                    f"profile part {part.name!r}: metric {metric.column!r} is scaled by "
                    f"reference {role!r}, which is not one of its references ({', '.join(labels)})"
                )
    for caps, entries, label in (
        (part.max_calls, part.suites, "max_calls"),
        (part.quick_max_calls, part.quick_suites, "quick_max_calls"),
        (part.conditions, part.suites, "conditions"),
        (part.quick_conditions, part.quick_suites, "quick_conditions"),
    ):
        if (caps and len(caps) != len(entries)) or (not caps and "conditions" not in label):
            raise ValueError(
                f"profile part {part.name!r}: {label} needs one item per suite entry "
                f"({len(entries)}), got {len(caps)}"
            )
    PROFILE_PARTS.register(
        part.name,
        ProfilePart(**{**part.__dict__, "plugin": part.plugin or current_plugin()}),
        replace=True,
    )


def profile_parts() -> list[ProfilePart]:
    return PROFILE_PARTS.values()
