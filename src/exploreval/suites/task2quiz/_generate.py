"""Generating a world: entity counts from the preset, layout, doors, containers, items, keys
and locks, deterministic per (difficulty, seed). The data model is ``._world``; the lock and key
search ``._locks`` (which needs the model, not the generator: the two were a circle, issue 45)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from exploreval.suites.task2quiz import _vocab
from exploreval.suites.task2quiz._layout import grid_layout
from exploreval.suites.task2quiz._locks import refine_locks
from exploreval.suites.task2quiz._presets import WorldPreset, get_preset, lock_count
from exploreval.suites.task2quiz._world import Connection, Container, Door, Item, Supporter, World


@dataclass(frozen=True)
class Composition:
    """How many of each entity type a world gets (Table 1's object count split by type)."""

    rooms: int
    objects: int
    containers: int
    supporters: int
    portable: int
    food: int
    useless_keys: int
    distractors: int  # portable objects no task needs (a subset of ``portable``)


def compose(rng: np.random.Generator, preset: WorldPreset) -> Composition:
    """Draw room/object counts in the preset's ranges and split the objects by type.

    Keys needed by locks are counted in ``objects``; they are fixed after the doors are drawn,
    so ``portable`` is what is left (at least 1).
    """
    n_rooms = int(rng.integers(preset.rooms[0], preset.rooms[1] + 1))
    n_objects = int(rng.integers(preset.objects[0], preset.objects[1] + 1))
    containers = max(1, round(0.2 * n_objects))
    supporters = max(1, round(0.15 * n_objects))
    food = max(1, round(0.1 * n_objects))
    useless = 1 if n_objects >= 10 else 0
    useless += 1 if n_objects >= 24 else 0
    return Composition(
        rooms=n_rooms,
        objects=n_objects,
        containers=containers,
        supporters=supporters,
        portable=0,  # filled by generate_world once the lock count is known
        food=food,
        useless_keys=useless,
        distractors=0,
    )


def generate_world(difficulty: str, seed: int) -> World:
    """The base world (no quest) for (difficulty, seed): deterministic across processes."""
    preset = get_preset(difficulty)
    rng = np.random.default_rng([seed, _DIFFICULTY_SALT[preset.difficulty]])
    comp = compose(rng, preset)
    world = World(difficulty=preset.difficulty, seed=seed)
    positions, exits = grid_layout(rng, comp.rooms, preset.loop_probability)
    room_names = rng.choice(len(_vocab.ROOMS), size=comp.rooms, replace=False)
    for i, (pos, name) in enumerate(zip(positions, room_names, strict=True)):
        world.rooms[f"r_{i}"] = _vocab.ROOMS[int(name)]
        world.positions[f"r_{i}"] = pos
    world.start = f"r_{int(rng.integers(comp.rooms))}"
    for e in exits:
        world.connections.append(Connection(f"r_{e.src}", e.direction, f"r_{e.dst}"))

    # Doors: each exit gets one with the preset's probability; at least one when there is an exit.
    with_door = [c for c in world.connections if rng.random() < preset.door_probability]
    if not with_door and world.connections:
        with_door = [world.connections[int(rng.integers(len(world.connections)))]]
    # Keep the object budget feasible: locks need keys, and at least one portable object stays.
    fixed = comp.containers + comp.supporters + comp.food + comp.useless_keys
    while with_door and fixed + lock_count(len(with_door) + comp.containers) + 1 > comp.objects:
        with_door.pop()
    useless = comp.useless_keys
    while fixed + lock_count(len(with_door) + comp.containers) + 1 > comp.objects and useless:
        useless -= 1
        fixed -= 1
    door_names = _pick(rng, _vocab.DOORS, len(with_door))
    for i, (conn, name) in enumerate(zip(with_door, door_names, strict=True)):
        door_id = f"d_{i}"
        conn.door = door_id
        world.doors[door_id] = Door(door_id, name, (conn.src, conn.dst))

    rooms = list(world.rooms)
    for i, name in enumerate(_pick(rng, _vocab.CONTAINERS, comp.containers)):
        world.containers[f"c_{i}"] = Container(f"c_{i}", name, rooms[int(rng.integers(len(rooms)))])
    for i, name in enumerate(_pick(rng, _vocab.SUPPORTERS, comp.supporters)):
        world.supporters[f"s_{i}"] = Supporter(f"s_{i}", name, rooms[int(rng.integers(len(rooms)))])

    n_locks = lock_count(len(world.doors) + len(world.containers))
    n_keys = n_locks + useless
    n_portable = comp.objects - (comp.containers + comp.supporters + comp.food + n_keys)
    spots = _spots(world)
    for i, name in enumerate(_pick(rng, _vocab.PORTABLE, n_portable)):
        world.items[f"o_{i}"] = Item(f"o_{i}", name, "o", spots[int(rng.integers(len(spots)))])
    n_distractors = max(1, round(0.5 * n_portable)) if n_portable > 1 else 0
    for i in rng.choice(n_portable, size=n_distractors, replace=False):
        world.items[f"o_{int(i)}"].distractor = True
    for i, name in enumerate(_pick(rng, _vocab.FOOD, comp.food)):
        world.items[f"f_{i}"] = Item(f"f_{i}", name, "f", spots[int(rng.integers(len(spots)))])
    key_names = _pick(rng, _vocab.KEYS, n_keys)
    for i, name in enumerate(key_names):
        # placeholder location: refine_locks places matching keys; useless keys stay here
        world.items[f"k_{i}"] = Item(f"k_{i}", name, "k", spots[int(rng.integers(len(spots)))])
    for i in range(n_locks, n_keys):
        world.items[f"k_{i}"].distractor = True

    # Unlocked lockables: containers mostly closed, doors closed or open.
    for c in world.containers.values():
        c.state = "closed" if rng.random() < 0.8 else "open"
    for d in world.doors.values():
        d.state = "closed" if rng.random() < 0.7 else "open"
    refine_locks(world, rng, n_locks)
    return world


_DIFFICULTY_SALT = {"easy": 1, "medium": 2, "hard": 3}


def _pick(rng: np.random.Generator, names: tuple[str, ...], n: int) -> list[str]:
    if n > len(names):
        raise ValueError(f"vocabulary too small: need {n} names, have {len(names)}")
    return [names[int(i)] for i in rng.choice(len(names), size=n, replace=False)]


def _spots(world: World) -> list[tuple[str, str]]:
    """Every place an item can be put: room floors, supporters, containers (fixed order)."""
    out: list[tuple[str, str]] = [("room", r) for r in world.rooms]
    out += [("on", s) for s in world.supporters]
    out += [("in", c) for c in world.containers]
    return out
