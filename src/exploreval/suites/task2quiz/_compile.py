"""World -> TextWorld games: GameMaker construction, normalised JSON, content-hash compile cache.

TextWorld is imported inside functions only (an optional extra). The base world (no quest) is
the ground truth; each task is the same world plus a goal-only quest, compiled to its own
``.z8`` + ``.json`` under ``<cache>/<content hash>/``. The hash is of the normalised game JSON
(TextWorld's ``.json`` order depends on PYTHONHASHSEED and the ``.z8`` embeds the compile date).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import threading
import warnings
from pathlib import Path
from typing import Any

from exploreval.core import user_cache_dir
from exploreval.suites.task2quiz._planner import Goal
from exploreval.suites.task2quiz._world import World

#: Number of Inform7 compilations this process ran (cache hits do not count).
COMPILE_COUNT = {"n": 0}
_COUNT_LOCK = threading.Lock()
_TW_VERSION_KEY = "textworld"


def default_cache_dir() -> Path:
    """``$EXPLOREVAL_TEXTWORLD_CACHE`` or ``$XDG_CACHE_HOME/exploreval/textworld``."""
    return user_cache_dir("textworld", "EXPLOREVAL_TEXTWORLD_CACHE")


def make_game_maker(world: World) -> tuple[Any, dict[str, Any]]:
    """GameMaker holding ``world`` (no quest), and its entities by id."""
    from textworld import GameMaker, GameOptions

    options = GameOptions()
    options.kb = _knowledge_base()
    # TextWorld draws room types and descriptions from its own RNGs: seed them from the world
    salt = {"easy": 1, "medium": 2, "hard": 3}.get(world.difficulty, 0)
    options.seeds = (4 * world.seed + salt) % 2**32
    maker = GameMaker(options)
    ents: dict[str, Any] = {}
    for rid in sorted(world.rooms, key=_num):
        ents[rid] = maker.new_room(world.rooms[rid])
    for conn in world.connections:
        from exploreval.suites.task2quiz._layout import OPPOSITE

        path = maker.connect(
            getattr(ents[conn.src], conn.direction),
            getattr(ents[conn.dst], OPPOSITE[conn.direction]),
        )
        if conn.door is not None:
            door = world.doors[conn.door]
            ents[door.id] = maker.new_door(path, name=door.name)
    for table, kind in ((world.containers, "c"), (world.supporters, "s")):
        for eid in sorted(table, key=_num):
            entity = table[eid]
            ents[eid] = maker.new(type=kind, name=entity.name)
            ents[entity.room].add(ents[eid])
    for kind in ("o", "k", "f"):
        for eid in sorted((i for i in world.items if i.startswith(kind + "_")), key=_num):
            ents[eid] = maker.new(type=kind, name=world.items[eid].name)
    for item in world.items.values():
        ents[item.location[1]].add(ents[item.id])
    for x in world.lockables():
        state = world.state_of(x)
        maker.add_fact(state, ents[x])
    for key, lockable in sorted(world.matches.items()):
        maker.add_fact("match", ents[key], ents[lockable])
    maker.set_player(ents[world.start])
    for eid, entity in ents.items():
        if entity.id != eid:
            raise AssertionError(f"TextWorld id {entity.id} != generator id {eid}")
    return maker, ents


_KB: list[Any] = []


# -> Any: TextWorld's KnowledgeBase (optional extra, imported lazily)
def _knowledge_base() -> Any:
    """TextWorld's knowledge base, parsed once per process (0.5 s per GameMaker otherwise)."""
    if not _KB:
        from textworld.generator.data import KnowledgeBase

        _KB.append(KnowledgeBase.load())
    return _KB[0]


def _num(eid: str) -> int:
    return int(eid.split("_")[1])


def goal_text(world: World, goal: Goal) -> str:
    name = world.name(goal.target)
    return {
        "go": f"Go to the {name}.",
        "take": f"Find the {name} and pick it up.",
        "eat": f"Find the {name} and eat it.",
        "open": f"Open the {name}.",
        "unlock": f"Unlock the {name}.",
    }[goal.kind]


def goal_facts(maker: Any, ents: dict[str, Any], goal: Goal) -> list[Any]:
    """The win condition of a goal-only quest."""
    target = ents[goal.target]
    if goal.kind == "go":
        return [maker.new_fact("at", maker.player, target)]
    if goal.kind == "take":
        return [maker.new_fact("in", target, maker.inventory)]
    if goal.kind == "eat":
        return [maker.new_fact("eaten", target)]
    if goal.kind == "open":
        return [maker.new_fact("open", target)]
    return [maker.new_fact("closed", target)]  # unlocking leaves a locked thing closed


# -> Any: JSON-like data of any shape in and out
def normalise(data: Any) -> Any:
    """Order-independent form of a serialised game: fact lists sorted, sets sorted, no KB."""
    if isinstance(data, dict):
        out = {k: normalise(v) for k, v in data.items() if k != "KB"}
        if isinstance(out.get("world"), list):
            out["world"] = sorted(out["world"], key=lambda f: json.dumps(f, sort_keys=True))
        grammar = out.get("grammar")
        if isinstance(grammar, dict) and isinstance(grammar.get("names_to_exclude"), list):
            grammar["names_to_exclude"] = sorted(str(n) for n in grammar["names_to_exclude"])
        if isinstance(out.get("infos"), list):
            out["infos"] = sorted(out["infos"], key=lambda kv: str(kv[0]))
        return out
    if isinstance(data, (list, tuple)):
        return [normalise(v) for v in data]
    return data


def canonical_json(data: Any) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":"))


def content_hash(data: Any) -> str:
    import textworld

    payload = canonical_json({"game": data, _TW_VERSION_KEY: textworld.__version__})
    return hashlib.sha256(payload.encode()).hexdigest()


def base_world_json(world: World) -> dict[str, Any]:
    """TextWorld's ``game.serialize()`` of the base world (no quest), normalised."""
    maker, _ = make_game_maker(world)
    game = maker.build()
    data: dict[str, Any] = normalise(game.serialize())
    return data


def prepare_task(world: World, goal: Goal, walkthrough: list[str]) -> tuple[Any, str]:
    """The task's TextWorld game (base world + goal-only quest) and its content hash."""
    from textworld.generator.game import Event, Quest

    maker, ents = make_game_maker(world)
    text = goal_text(world, goal)
    maker.quests = [Quest(win_events=[Event(conditions=goal_facts(maker, ents, goal))], desc=text)]
    game = maker.build()
    game.metadata["walkthrough"] = list(walkthrough)
    game.metadata["uuid"] = "exploreval-task2quiz"
    return game, content_hash(normalise(game.serialize()))


def cached_game(digest: str, cache_dir: Path) -> Path | None:
    z8 = cache_dir / digest[:2] / digest / "game.z8"
    return z8 if z8.exists() and z8.with_suffix(".json").exists() else None


def compile_prepared(game: Any, digest: str, cache_dir: Path) -> str:
    """Compile a prepared game into the cache unless it is there; returns the .z8 path."""
    hit = cached_game(digest, cache_dir)
    if hit is not None:
        return str(hit)
    target = cache_dir / digest[:2] / digest
    cache_dir.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".compile-", dir=cache_dir))
    try:
        _compile_game(game, tmp / "game.z8")
        with _COUNT_LOCK:
            COMPILE_COUNT["n"] += 1
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.rename(tmp, target)  # atomic: readers see a complete directory or none
        except OSError:
            if cached_game(digest, cache_dir) is None:  # lost a race only if the winner is there
                raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return str(target / "game.z8")


def compile_task(
    world: World, goal: Goal, walkthrough: list[str], cache_dir: Path
) -> tuple[str, str]:
    """Compile (or reuse) the task's game; returns (path of the .z8, content hash)."""
    game, digest = prepare_task(world, goal, walkthrough)
    return compile_prepared(game, digest, cache_dir), digest


def _compile_game(game: Any, path: Path) -> None:
    import textworld
    from textworld.generator import compile_game

    options = textworld.GameOptions()
    options.path = str(path)
    options.force_recompile = True
    options.file_ext = ".z8"
    compile_game(game, options)


def play(game_file: str, commands: list[str]) -> tuple[bool, int]:
    """Play ``commands`` in the compiled game; (won, steps taken until the win or the end)."""
    import textworld

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*is not fully supported.*")  # jericho
        env = textworld.start(game_file, request_infos=textworld.EnvInfos(won=True))
    try:
        state = env.reset()
        for i, cmd in enumerate(commands):
            state, _, done = env.step(cmd)
            if state["won"]:
                return True, i + 1
            if done:
                return False, i + 1
        return False, len(commands)
    finally:
        env.close()
