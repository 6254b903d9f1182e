"""The seeded world generator: rooms, doors, containers, supporters, keys, objects, food.

Pure Python and numpy (no TextWorld): the world is a plain structure that ``_compile`` turns into
TextWorld GameMaker calls. Entity ids are the ids TextWorld assigns (``r_0``, ``d_0``, ``c_0``,
``s_0``, ``o_0``, ``k_0``, ``f_0``: per type, in creation order); ``_compile`` checks they agree.
Every random choice comes from one ``np.random.Generator`` made from the seed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from exploreval.suites.task2quiz._layout import OPPOSITE

State = Literal["open", "closed", "locked"]
ItemKind = Literal["o", "k", "f"]


@dataclass
class Door:
    id: str
    name: str
    rooms: tuple[str, str]  # (src, dst) of the exit it sits on
    state: State = "closed"


@dataclass
class Container:
    id: str
    name: str
    room: str
    state: State = "closed"


@dataclass
class Supporter:
    id: str
    name: str
    room: str


@dataclass
class Item:
    """A portable thing: object (o), key (k) or food (f)."""

    id: str
    name: str
    kind: ItemKind
    #: ("room", r_id) on the floor, ("on", s_id) or ("in", c_id)
    location: tuple[str, str]
    distractor: bool = False


@dataclass
class Connection:
    src: str
    direction: str  # dst lies `direction` of src
    dst: str
    door: str | None = None


@dataclass
class World:
    difficulty: str
    seed: int
    rooms: dict[str, str] = field(default_factory=dict)  # id -> name
    positions: dict[str, tuple[int, int]] = field(default_factory=dict)
    connections: list[Connection] = field(default_factory=list)
    doors: dict[str, Door] = field(default_factory=dict)
    containers: dict[str, Container] = field(default_factory=dict)
    supporters: dict[str, Supporter] = field(default_factory=dict)
    items: dict[str, Item] = field(default_factory=dict)
    #: key id -> the door or container it opens (useless keys are absent)
    matches: dict[str, str] = field(default_factory=dict)
    start: str = "r_0"

    # -- lookups --------------------------------------------------------------------
    def name(self, entity: str) -> str:
        for table in (self.doors, self.containers, self.supporters, self.items):
            if entity in table:
                return str(table[entity].name)
        return self.rooms[entity]

    def key_of(self, lockable: str) -> str | None:
        return next((k for k, v in self.matches.items() if v == lockable), None)

    def room_of(self, entity: str) -> str:
        """Room where an item, container or supporter is (following on/in)."""
        if entity in self.containers:
            return self.containers[entity].room
        if entity in self.supporters:
            return self.supporters[entity].room
        kind, where = self.items[entity].location
        return where if kind == "room" else self.room_of(where)

    def lockables(self) -> list[str]:
        return sorted(self.doors, key=_id_order) + sorted(self.containers, key=_id_order)

    def state_of(self, lockable: str) -> State:
        table: Any = self.doors if lockable in self.doors else self.containers
        state: State = table[lockable].state
        return state

    def set_state(self, lockable: str, state: State) -> None:
        table: Any = self.doors if lockable in self.doors else self.containers
        table[lockable].state = state

    def neighbours(self, room: str) -> list[tuple[str, str, str | None]]:
        """(direction, other room, door) for every exit of ``room``, in a fixed order."""
        out = []
        for c in self.connections:
            if c.src == room:
                out.append((c.direction, c.dst, c.door))
            elif c.dst == room:
                out.append((OPPOSITE[c.direction], c.src, c.door))
        return sorted(out)

    def summary(self) -> dict[str, Any]:
        """Structured ground truth beside TextWorld's facts (ids; names in ``names``)."""
        return {
            "start_room": self.start,
            "rooms": sorted(self.rooms, key=_id_order),
            "names": {e: self.name(e) for e in self._all_ids()},
            "positions": {r: list(p) for r, p in sorted(self.positions.items())},
            "connections": [
                {"src": c.src, "direction": c.direction, "dst": c.dst, "door": c.door}
                for c in self.connections
            ],
            "doors": {
                d.id: {"rooms": list(d.rooms), "state": d.state, "key": self.key_of(d.id)}
                for d in self.doors.values()
            },
            "containers": {
                c.id: {"room": c.room, "state": c.state, "key": self.key_of(c.id)}
                for c in self.containers.values()
            },
            "supporters": {s.id: {"room": s.room} for s in self.supporters.values()},
            "items": {
                i.id: {
                    "kind": i.kind,
                    "location": list(i.location),
                    "room": self.room_of(i.id),
                    "distractor": i.distractor,
                    "opens": self.matches.get(i.id),
                }
                for i in self.items.values()
            },
        }

    def _all_ids(self) -> list[str]:
        ids = [*self.rooms, *self.doors, *self.containers, *self.supporters, *self.items]
        return sorted(ids, key=_id_order)


def _id_order(entity: str) -> tuple[str, int]:
    kind, _, number = entity.partition("_")
    return kind, int(number) if number.isdigit() else -1
