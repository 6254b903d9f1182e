"""Memory recall distance (TIDE Appendix C.5, generalised) and Memory Index pairing helpers.

Recall distance uses the step-info convention shared by every suite:
``info["entities_seen"]`` = task-relevant entity ids the observation *after* the step shows, and
``info["entities_acted"]`` = entity ids the step's action interacted with (``reset_info`` may carry
``entities_seen`` for the first observation).

Observation index m: 0 is the initial observation, m = t + 1 the one produced by action t. When the
agent acts on entity e with action t, LastSeen(e) = max{m <= t : e in E(o_m)} (the latest
observation the agent had received) and the recall distance is d = t + 1 - m. Acting on something
the current observation shows gives d = 1, which is the paper's d = t - LastSeen with its
observation o_k produced by action k. Entities acted on but never seen before are not distances;
they are counted separately (``unseen``).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class RecallEvent:
    """One (step, entity) pair of the set I in Eq. 20."""

    t: int
    entity: Hashable
    distance: int


@dataclass
class RecallResult:
    events: list[RecallEvent] = field(default_factory=list)
    unseen: int = 0

    @property
    def mean(self) -> float | None:
        """D_recall (Eq. 20), or None when no task-relevant entity was acted on after being seen."""
        if not self.events:
            return None
        return sum(e.distance for e in self.events) / len(self.events)

    @property
    def maximum(self) -> int | None:
        return max((e.distance for e in self.events), default=None)


def _entity_list(value: Any, kind: str, t: int) -> list[Hashable]:
    """``value`` as entity ids; ``kind`` and ``t`` name it in an error ("observation", 3)."""
    if value is None:
        return []
    if type(value) is list and all(type(item) is str for item in value):
        return value  # what JSON gives (read only): the checks below, fast
    if isinstance(value, str | int):
        return [value]
    if isinstance(value, Iterable):
        out: list[Hashable] = []
        for item in value:
            if isinstance(item, list | dict | set):
                raise ValueError(f"{kind} {t}: entity ids must be strings or numbers, got {item!r}")
            out.append(item)
        return out
    raise ValueError(f"{kind} {t}: expected a list of entity ids, got {type(value).__name__}")


def recall_distances(
    seen: Sequence[Iterable[Hashable] | None],
    acted: Sequence[Iterable[Hashable] | None],
    relevant: Iterable[Hashable] | None = None,
) -> RecallResult:
    """Recall distances of one trajectory.

    ``seen[m]`` lists the entities observation m shows (m = 0 initial, m = t + 1 after action t;
    ``len(seen)`` is ``len(acted)`` or ``len(acted) + 1``). ``acted[t]`` lists the entities action
    t interacted with. ``relevant`` restricts to task-relevant entities (G_task); None = all.
    """
    if len(seen) not in (len(acted), len(acted) + 1):
        raise ValueError(
            f"need one 'seen' entry per observation: got {len(seen)} for {len(acted)} actions"
        )
    keep = set(relevant) if relevant is not None else None
    last_seen: dict[Hashable, int] = {}
    result = RecallResult()
    for t, acted_now in enumerate(acted):
        seen_now = seen[t]
        if not (type(seen_now) is list and not seen_now):  # most observations show none
            for entity in _entity_list(seen_now, "observation", t):
                last_seen[entity] = t
        if type(acted_now) is list and not acted_now:  # and most actions touch none
            continue
        for entity in _entity_list(acted_now, "step", t):
            if keep is not None and entity not in keep:
                continue
            m = last_seen.get(entity)
            if m is None:
                result.unseen += 1
            else:
                result.events.append(RecallEvent(t, entity, t + 1 - m))
    return result
