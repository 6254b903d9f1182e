"""Scripted Task2Quiz agents: how they play Stage 1, and (through ``_agents_quiz``) the quiz.

* ``walkthrough`` (privileged): plays each task's planned walkthrough. TSR 1.0, the least
  exposure of the world.
* ``explorer`` (privileged planner): before each task's goal, tours what it has not seen yet
  (every room, every closed door and container opened, keys fetched to unlock), as far as the
  task's step cap allows with the goal's walkthrough still fitting; then the goal.
* ``task-only``: no map, no ground truth in play. It searches for each task's goal with what the
  game shows (the room it is in, TextWorld's admissible commands, the feedback), remembers the
  map across tasks, and stops when the task is won.
* ``quiz-oracle``: the walkthrough player answering ``honest`` (EUS 1.0 by construction).
* ``random-explorer`` (alias ``random``): a uniformly random admissible command; abstains.

Every agent takes the option ``quiz`` (``recall`` / ``honest`` / ``guess`` / ``abstain``, see
``_agents_quiz``); defaults: walkthrough ``guess`` (no world model), explorer and task-only
``recall``, quiz-oracle ``honest``, random-explorer ``abstain``.
"""

from __future__ import annotations

import re
from collections import deque
from typing import Any

from exploreval.agents import EpisodeContext, ScriptedAgent
from exploreval.suites.task2quiz._agents_quiz import QuizAnswerer, check_quiz_policy
from exploreval.suites.task2quiz._contract import QuizWorld


class _Task2QuizAgent(ScriptedAgent):
    """Dispatches between Stage-1 play (``play``) and the quiz (``QuizAnswerer``)."""

    default_quiz = "recall"

    def __init__(self, **options: Any) -> None:
        options.setdefault("quiz", self.default_quiz)
        check_quiz_policy(str(options["quiz"]))
        super().__init__(**options)
        self.quiz_policy = str(options["quiz"])

    def start(self, ctx: EpisodeContext, observation: str) -> None:
        truth = ctx.ground_truth
        if self.privileged and (not truth or "quiz_world" not in truth):
            raise ValueError(f"the {self.name} agent needs the Task2Quiz ground truth (privileged)")
        self.world = QuizWorld.model_validate(truth["quiz_world"]) if truth else None
        self.answerer = QuizAnswerer(self.quiz_policy, self.world, ctx.rng)
        from exploreval.suites.task2quiz._quiz_api import check_max_questions

        self.answerer.max_questions = check_max_questions(ctx.env_options.get("max_questions"))
        self.start_play(ctx, observation)

    def start_play(self, ctx: EpisodeContext, observation: str) -> None:  # noqa: B027
        """Per-episode initialisation of the Stage-1 player."""

    def choose(self, observation: str, info: dict[str, Any]) -> str:
        self.answerer.observe(info)
        if info.get("phase", "task") != "task":
            return self.answerer.answer(info)
        return self.play(observation, info)

    def play(self, observation: str, info: dict[str, Any]) -> str:
        raise NotImplementedError


class WalkthroughAgent(_Task2QuizAgent):
    """Plays each task's planned walkthrough (read from the ground truth)."""

    name = "walkthrough"
    privileged = True
    default_quiz = "guess"  # follows instructions, builds no world model

    def start_play(self, ctx: EpisodeContext, observation: str) -> None:
        assert self.world is not None
        self.walkthroughs = [list(t.walkthrough) for t in self.world.tasks]
        self.position: dict[int, int] = {}

    def play(self, observation: str, info: dict[str, Any]) -> str:
        task = int(info.get("task", 0))
        step = self.position.get(task, 0)
        self.position[task] = step + 1
        commands = self.walkthroughs[task]
        return commands[step] if step < len(commands) else "look"


class QuizOracleAgent(WalkthroughAgent):
    """Walkthroughs, then the true answers filtered by its own answerability (EUS 1.0)."""

    name = "quiz-oracle"
    default_quiz = "honest"


class RandomExplorerAgent(_Task2QuizAgent):
    """Uniformly random admissible command (TextWorld's ``admissible_commands``)."""

    name = "random-explorer"
    default_quiz = "abstain"

    def play(self, observation: str, info: dict[str, Any]) -> str:
        commands = info.get("admissible_commands") or ["look"]
        return str(commands[int(self.rng.integers(len(commands)))])


class ExplorerAgent(_Task2QuizAgent):
    """Tours the unexplored world before each goal (planned on the true world, see module doc)."""

    name = "explorer"
    privileged = True

    def start_play(self, ctx: EpisodeContext, observation: str) -> None:
        from exploreval.suites.task2quiz._generate import generate_world

        assert self.world is not None
        self.map = generate_world(self.world.difficulty, self.world.seed)
        if self.map.summary() != self.world.summary:
            raise ValueError("explorer: the regenerated world differs from the episode's world")
        from exploreval.suites.task2quiz._env import DEFAULT_TASK_STEP_CAP

        self.cap = ctx.max_steps if ctx.max_steps is not None else DEFAULT_TASK_STEP_CAP
        self.rooms: set[str] = {self.map.start}
        self.things: set[str] = set()
        self.queue: list[str] = []
        self.task = -1

    def play(self, observation: str, info: dict[str, Any]) -> str:
        from exploreval.suites.task2quiz._planner import Goal, exploration_tour

        assert self.world is not None
        if info.get("room"):
            self.rooms.add(str(info["room"]))
        for fact in info.get("facts_added") or ():
            if fact.startswith("open("):
                self.things.add(fact[5:-1])
        task = int(info.get("task", 0))
        if task != self.task:
            self.task = task
            spec = self.world.tasks[task]
            goal = Goal(spec.goal_kind, spec.target)  # type: ignore[arg-type]
            tour, finish = exploration_tour(self.map, goal, self.rooms, self.things, self.cap)
            self.queue = tour + finish
        return self.queue.pop(0) if self.queue else "look"


_GOAL_PATTERNS = (
    (re.compile(r"^Go to the (?P<x>.+)\.$"), "go"),
    (re.compile(r"^Find the (?P<x>.+) and pick it up\.$"), "take"),
    (re.compile(r"^Find the (?P<x>.+) and eat it\.$"), "eat"),
    (re.compile(r"^Open the (?P<x>.+)\.$"), "open"),
    (re.compile(r"^Unlock the (?P<x>.+)\.$"), "unlock"),
)
_ROOM_HEADER = re.compile(r"^-= (?P<name>.+) =-$", re.MULTILINE)
_KEY_NAMED = re.compile(r"You have to unlock the (?P<thing>.+?) with the (?P<key>.+?) first")
_GO = re.compile(r"^go (north|south|east|west)$")
_OPENED = re.compile(r"^You open (?:the )?(?P<thing>.+?)\.", re.MULTILINE)


def parse_goal(goal: str) -> tuple[str, str] | None:
    """(kind, target name) of one of this suite's goal texts, or None."""
    for pattern, kind in _GOAL_PATTERNS:
        found = pattern.match(goal.strip())
        if found:
            return kind, found["x"]
    return None


class TaskOnlyAgent(_Task2QuizAgent):
    """Searches for each goal with what the game shows; no map, no ground truth in play.

    Per step: do the goal's own command when the game offers it; unlock a thing whose key the
    game has named once that key is held; otherwise explore the nearest unknown (take keys, open
    closed things, follow unknown exits), walking the map learnt so far. Knowledge (map, where
    things are, which key opens what) carries across tasks; the world's state does not (each task
    restarts it), so doors are reopened and keys fetched again as needed.
    """

    name = "task-only"
    privileged = False  # play reads no ground truth; ``quiz=guess/honest`` make it privileged

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        if self.quiz_policy in ("recall", "honest"):
            self.privileged = True  # the quiz answerer needs the true facts (see _agents_quiz)

    def start_play(self, ctx: EpisodeContext, observation: str) -> None:
        self.edges: dict[str, dict[str, str]] = {}  # room -> direction -> room
        self.door_at: dict[tuple[str, str], str] = {}  # (room, direction) -> door name
        self.pending: dict[str, set[str]] = {}  # room -> exploring commands not yet tried
        self.tried: dict[str, set[str]] = {}  # room -> commands tried (ever)
        self.where: dict[str, str] = {}  # thing name -> room id where it was seen
        self.room_names: dict[str, str] = {}  # room name -> id
        self.key_for: dict[str, str] = {}  # thing name -> key name (the game said so)
        self.opened: set[str] = set()  # things it has opened (ever)
        self.task = -1
        self.goal: tuple[str, str] | None = None
        self.prev: tuple[str, str] | None = None  # (room, command) of the last move
        self.blocked: set[tuple[str, str]] = set()  # (room, direction) blocked in this task
        self._last_commands: set[str] = set()  # admissible commands at the previous step

    # -- perception -------------------------------------------------------------------------
    def _perceive(self, observation: str, info: dict[str, Any]) -> str | None:
        room = info.get("room")
        if room is None:
            return None
        task = int(info.get("task", 0))
        if task != self.task:  # a new task: the world is back to its initial state
            self.task, self.prev, self.blocked = task, None, set()
            self.goal = parse_goal(str(info.get("goal") or ""))
        elif self.prev is not None and _GO.match(self.prev[1]) and self.prev[0] != room:
            self.edges.setdefault(self.prev[0], {})[self.prev[1][3:]] = room
        headers = _ROOM_HEADER.findall(observation)
        if headers:
            self.room_names[headers[-1]] = room
        for found in _KEY_NAMED.finditer(observation):
            self.key_for[found["thing"]] = found["key"]
        for found in _OPENED.finditer(observation):
            self.opened.add(found["thing"])
        commands = list(info.get("admissible_commands") or [])
        tried = self.tried.setdefault(room, set())
        pending: set[str] = set()
        for command in commands:
            for prefix in ("take ", "examine "):
                if command.startswith(prefix):
                    thing = command[len(prefix) :].split(" from ")[0]
                    self.where.setdefault(thing, room)
            if (
                (_GO.match(command) and command[3:] not in self.edges.get(room, {}))
                or (command.startswith("open ") and command[5:] not in self.opened)
                or (command.startswith("take ") and " key" in command and command not in tried)
            ):
                pending.add(command)
            if command.startswith("examine "):  # closed (maybe locked) things: probe them once
                thing = command[len("examine ") :]
                probe = f"open {thing}"
                if (
                    f"closed {thing}" in observation
                    and probe not in tried
                    and thing not in self.opened
                ):
                    pending.add(probe)
        if pending or room not in self.pending or _ROOM_HEADER.search(observation):
            self.pending[room] = pending
        if self.prev is not None and self.prev[1].startswith("open ") and self.prev[0] == room:
            # a door just opened: the new exit belongs to it
            for command in commands:
                new = command not in self._last_commands
                if _GO.match(command) and (room, command[3:]) not in self.door_at and new:
                    self.door_at[(room, command[3:])] = self.prev[1][5:]
        self._last_commands = set(commands)
        return str(room)

    # -- decision -----------------------------------------------------------------------------
    def play(self, observation: str, info: dict[str, Any]) -> str:
        room = self._perceive(observation, info)
        commands = list(info.get("admissible_commands") or [])
        if room is None:
            return "look"
        command = (
            self._goal_command(room, commands)
            or self._unlock_command(room, commands)
            or self._walk_to_goal(room, commands, list(info.get("inventory") or ()))
            or self._explore(room, commands)
            or self._wander(room, commands)
        )
        self.tried.setdefault(room, set()).add(command)
        self.pending.get(room, set()).discard(command)
        self.prev = (room, command)
        return command

    def _goal_command(self, room: str, commands: list[str]) -> str | None:
        if self.goal is None:
            return None
        kind, target = self.goal
        for command in commands:
            if kind in ("take", "eat") and (
                command == f"take {target}" or command.startswith(f"take {target} from ")
            ):
                return command
            if kind == "eat" and command == f"eat {target}":
                return command
            if kind == "open" and command == f"open {target}":
                return command
        if kind in ("open", "unlock") and f"examine {target}" in commands:
            key = self.key_for.get(target)
            if key is None and f"open {target}" not in self.tried.get(room, set()):
                return f"open {target}"  # not offered: probably locked; the game names the key
            unlock = f"unlock {target} with {key}"
            if key is not None and unlock in commands:
                return unlock
        return None

    def _unlock_command(self, room: str, commands: list[str]) -> str | None:
        for command in commands:
            if command.startswith("unlock "):
                thing, _, key = command[len("unlock ") :].partition(" with ")
                if self.key_for.get(thing) == key and command not in self.tried.get(room, set()):
                    return command
        return None

    def _walk_to_goal(self, room: str, commands: list[str], held: list[str]) -> str | None:
        if self.goal is None:
            return None
        kind, target = self.goal
        destination = None
        if kind == "go":
            destination = self.room_names.get(target)
        elif kind in ("take", "eat", "open", "unlock"):
            wanted = self.key_for.get(target) if kind in ("open", "unlock") else None
            if wanted is not None and wanted not in held:
                take = next(
                    (
                        c
                        for c in commands
                        if c == f"take {wanted}" or c.startswith(f"take {wanted} from ")
                    ),
                    None,
                )
                if take is not None:
                    return take
                destination = self.where.get(wanted)
            destination = destination or self.where.get(target)
        if destination is None or destination == room:
            return None
        return self._step_towards({destination}, room, commands)

    def _explore(self, room: str, commands: list[str]) -> str | None:
        here = sorted(self.pending.get(room, set()))
        if here:
            takes = [c for c in here if c.startswith("take ")]
            opens = [c for c in here if c.startswith("open ")]
            return (takes or opens or here)[0]
        frontier = {r for r, cmds in self.pending.items() if cmds and r != room}
        if frontier:
            return self._step_towards(frontier, room, commands)
        return None

    def _wander(self, room: str, commands: list[str]) -> str:
        """Nothing known left to do: a random move, else a random command."""
        moves = [c for c in commands if _GO.match(c)] or commands or ["look"]
        return str(moves[int(self.rng.integers(len(moves)))])

    def _step_towards(self, targets: set[str], room: str, commands: list[str]) -> str | None:
        """The first command of a shortest known walk to any target room (reopening doors)."""
        back: dict[str, tuple[str, str]] = {}
        queue, seen = deque([room]), {room}
        while queue:
            here = queue.popleft()
            if here in targets:
                break
            for direction, other in sorted(self.edges.get(here, {}).items()):
                if other not in seen and (here, direction) not in self.blocked:
                    seen.add(other)
                    back[other] = (here, direction)
                    queue.append(other)
        reachable = [t for t in targets if t in seen]
        if not reachable:
            return None
        node = min(reachable, key=lambda t: (_hops(back, room, t), t))
        while back[node][0] != room:
            node = back[node][0]
        direction = back[node][1]
        if f"go {direction}" in commands:
            return f"go {direction}"
        door = self.door_at.get((room, direction))
        if door is not None and f"open {door}" in commands:
            return f"open {door}"
        key = self.key_for.get(door or "")
        if door is not None and key is not None and f"unlock {door} with {key}" in commands:
            return f"unlock {door} with {key}"
        if door is not None and f"open {door}" not in self.tried.get(room, set()):
            return f"open {door}"  # learn its key
        self.blocked.add((room, direction))
        return self._step_towards(targets, room, commands)


def _hops(back: dict[str, tuple[str, str]], start: str, node: str) -> int:
    n = 0
    while node != start:
        node = back[node][0]
        n += 1
    return n
