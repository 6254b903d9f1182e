"""``exploreval/Task2Quiz-v0``: one episode = one world; stage 1 plays each coverage task as its
own compiled TextWorld game (memory carries across: one episode), then a quiz phase.

Stage 1 stores per step the :class:`Stage1StepFacts` fields (facts added/removed are computed
from TextWorld's ``EnvInfos.facts``, the full true state, mapped from names to entity ids), so the
quiz side recomputes evidence from the record alone. Reward: 1 for each task won, 0 in the quiz.
"""

from __future__ import annotations

import json
import re
import threading
import warnings
from pathlib import Path
from typing import Any

from exploreval.core import INVALID_ACTION, TextEnv
from exploreval.suites.task2quiz._contract import QuizWorld, Stage1StepFacts
from exploreval.suites.task2quiz._stepinfo import Task2QuizStepInfo

#: TextWorld's grammar parser (tatsu) is not thread-safe: concurrent episodes on worker threads
#: corrupt its state ("pop from empty list"). Every TextWorld call of this env holds this lock;
#: engine steps take milliseconds, so episodes interleave at step granularity.
TEXTWORLD_LOCK = threading.RLock()

QUIZ_PHASE = "quiz"
TASK_PHASE = "task"
#: Env options (besides the preset's ``difficulty``).
OPTIONS = frozenset({"difficulty", "cache_dir", "max_questions", "task_universe", "quiz_rule"})
#: Default per-task step cap when the runner gives none.
DEFAULT_TASK_STEP_CAP = 50

_BANNER_LINE = re.compile(r"^[\s_|\\/$<>()]*$")
_PROMPT_LINE = re.compile(r"^>.*$", re.MULTILINE)


def clean_feedback(text: str) -> str:
    """Drop TextWorld's ASCII banner, the '>' prompt and its status line; squeeze blank lines."""
    lines = text.split("\n")
    # the banner: leading lines made only of drawing characters
    while lines and _BANNER_LINE.match(lines[0]):
        lines.pop(0)
    body = "\n".join(lines)
    end = body.find("*** The End ***")
    if end >= 0:  # the game's end screen (score, RESTART/UNDO menu) is not part of the world
        body = body[:end]
    body = _PROMPT_LINE.sub("", body)
    return re.sub(r"\n{3,}", "\n\n", body).strip()


#: Inform 7's replies when it could not act on a command at all (unknown verb or noun, nothing
#: of that name in view, incomplete command, no exit that way). A command the game understood
#: but refused for a reason of the world ("You have to unlock the safe with the enamel key
#: first.") is a valid probe, even though TextWorld's admissible list leaves it out.
_REFUSALS = (
    (re.compile(r"That's not a verb I recogni[sz]e"), "unknown verb"),
    (re.compile(r"You can't see any such thing"), "nothing of that name in view"),
    (re.compile(r"I didn't understand that (sentence|number)"), "not understood"),
    (re.compile(r"I only understood you as far as"), "not understood"),
    (re.compile(r"^What do you want to "), "incomplete command"),
    (re.compile(r"^(Who|What) do you want"), "incomplete command"),
    (re.compile(r"You can't go that way"), "no exit that way"),
    (re.compile(r"(isn't|is not|That's not) something you can"), "not possible with that"),
    (re.compile(r"You seem to have said too little"), "incomplete command"),
    (re.compile(r"There are none at all available"), "nothing of that name in view"),
    (re.compile(r"That noun did not make sense"), "not understood"),
    (re.compile(r"You can only do that to something animate"), "not possible with that"),
)


#: Longest command sent to the game (Inform's input buffer is small; no game command is long).
MAX_COMMAND_CHARS = 120
_SAFE_COMMAND = re.compile(r"[\x20-\x5b\x5d-\x7e]*")  # printable ASCII, no backslash


def command_problem(command: str) -> str | None:
    """Why a command is not sent to the game at all, or None. The Z-machine interpreter takes
    printable ASCII only, and reads a backslash as an interpreter escape (``\\x``...): random
    text with one once crashed the engine, so such commands are invalid actions."""
    if len(command) > MAX_COMMAND_CHARS:
        return f"command longer than {MAX_COMMAND_CHARS} characters"
    if not _SAFE_COMMAND.fullmatch(command):
        bad = sorted({c for c in command if not _SAFE_COMMAND.fullmatch(c)})
        return f"characters the game cannot take: {''.join(bad)!r}"
    return None


def parser_refusal(feedback: str) -> str | None:
    """Why the game could not act on the command at all, or None (see ``_REFUSALS``)."""
    lines = [ln for ln in feedback.split("\n") if not re.fullmatch(r"\(.*\)", ln.strip())]
    text = "\n".join(lines).strip()
    for pattern, reason in _REFUSALS:
        if pattern.search(text):
            return f"the game did not understand the command ({reason})"
    return None


class EntityMentions:
    """Which of a world's objects a text names (rooms and the player left out): TIDE's
    "observed" and "interacted with" for memory recall distance, read from the observation and
    the command as AlfWorld's are. A longer name wins over a name inside it ("rusty key" over
    "key")."""

    def __init__(self, names: dict[str, str]) -> None:
        self._by_name: dict[str, str] = {}
        for eid, name in names.items():
            if eid[:2] not in ("r_", "P", "I") and eid not in ("P", "I") and name.strip():
                self._by_name.setdefault(name.lower(), eid)
        alternatives = "|".join(re.escape(n) for n in sorted(self._by_name, key=len, reverse=True))
        self._pattern = (
            re.compile(rf"(?<![\w-])(?:{alternatives})(?![\w-])") if alternatives else None
        )

    def find(self, text: str) -> list[str]:
        if self._pattern is None or not text:
            return []
        found = (self._by_name[m.group(0)] for m in self._pattern.finditer(text.lower()))
        return sorted(set(found))


def fact_string(prop: Any, ids: dict[str, str]) -> str:
    """``Proposition`` -> "name(id,id)" (TextWorld's facts name entities by their names)."""
    args = ",".join(ids.get(v.name, v.name) for v in prop.arguments)
    return f"{prop.name}({args})"


class Task2QuizEnv(TextEnv):
    """Multi-task TextWorld episode with a trailing quiz (see the module docstring)."""

    presets = {  # noqa: RUF012 - TextEnv convention
        "easy": {"difficulty": "easy"},
        "medium": {"difficulty": "medium"},
        "hard": {"difficulty": "hard"},
    }
    default_preset = "easy"
    step_cap_scope = "task"
    info_model = Task2QuizStepInfo

    def __init__(self, preset: str | None = None, **options: Any) -> None:
        super().__init__(preset, **options)
        unknown = set(self.params) - OPTIONS
        if unknown:
            raise ValueError(
                f"task2quiz env: unknown option(s) {', '.join(sorted(unknown))}; "
                f"known: {', '.join(sorted(OPTIONS))}"
            )
        self.difficulty = str(self.params.get("difficulty", "easy"))
        if self.difficulty not in self.presets:
            raise ValueError(
                f"task2quiz env: difficulty={self.difficulty!r}: expected one of "
                f"{', '.join(self.presets)}"
            )
        cache = self.params.get("cache_dir")
        self.cache_dir: str | None = None if cache is None else str(Path(cache))
        from exploreval.suites.task2quiz._quiz_api import check_max_questions, check_quiz_rule

        self.max_questions = check_max_questions(self.params.get("max_questions"))
        self.quiz_rule = check_quiz_rule(self.params.get("quiz_rule"))
        from exploreval.suites.task2quiz._coverage import DEFAULT_TASK_UNIVERSE, check_universe

        self.task_universe = check_universe(
            str(self.params.get("task_universe", DEFAULT_TASK_UNIVERSE))
        )
        self._game: Any = None
        self.quiz_world: QuizWorld | None = None
        self.session: Any = None
        self._phase = TASK_PHASE
        self._task = 0
        self._question = 0
        self.outcomes: list[dict[str, Any]] = []
        self.stage1: list[Stage1StepFacts] = []
        self._seed: int | None = None
        self._admissible: list[str] | None = None
        self._facts: set[str] = set()
        self._intro = ""
        self._ids: dict[str, str] = {}
        self._names: dict[str, str] = {}
        self._mentions = EntityMentions({})
        self._used = 0
        self._score = 0
        self.world_seed = 0

    # -- episode ------------------------------------------------------------------------
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        self._seed = seed
        return super().reset(seed=seed, options=options)

    def _reset(self, options: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        with TEXTWORLD_LOCK:
            return self._reset_locked(options)

    def _reset_locked(self, options: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        from exploreval.suites.task2quiz._benchmark import build_world

        self._close_game()
        seed = self._seed if self._seed is not None else int(self.np_random.integers(2**31))
        self.world_seed = int(seed)
        key = ("task2quiz-world", self.difficulty, self.world_seed, self.cache_dir,
               self.task_universe)  # fmt: skip
        self.quiz_world = self.shared.get(
            key,
            lambda: build_world(
                self.difficulty,  # type: ignore[arg-type]
                self.world_seed,
                self.cache_dir,
                universe=self.task_universe,
            ),
        )
        names = self.quiz_world.summary["names"] if self.quiz_world.summary else {}
        self._ids = {name: eid for eid, name in names.items()}
        self._names = dict(names)
        self._mentions = EntityMentions(self._names)
        self._score = 0
        self._phase = TASK_PHASE
        self._task = 0
        self._question = 0
        self.outcomes = []
        self.stage1 = []
        self.session = None
        obs, admissible = self._start_task()
        return obs, {
            "entities_seen": self._mentions.find(obs),
            "admissible_commands": admissible,
            "inventory": [],
            "score": 0,
            "goal": self.tasks[0].goal,
            "room": self._room(),
        }

    @property
    def tasks(self) -> tuple[Any, ...]:
        assert self.quiz_world is not None, "reset() first"
        return self.quiz_world.tasks

    @property
    def phase(self) -> str:
        return self._phase

    @property
    def task_index(self) -> int:
        return self._task if self._phase == TASK_PHASE else self._question

    def task_description(self) -> str:
        return (
            "Text adventure in one world: several tasks in a row (each starts from the world's "
            "initial state), then questions about the world's initial state."
        )

    # -- stage 1 --------------------------------------------------------------------------
    def _start_task(self) -> tuple[str, list[str]]:
        import textworld

        task = self.tasks[self._task]
        infos = textworld.EnvInfos(facts=True, admissible_commands=True, won=True, lost=True)
        with warnings.catch_warnings():
            # jericho does not know TextWorld's generated games; its score detection is unused
            warnings.filterwarnings("ignore", message=".*is not fully supported.*")
            self._game = textworld.start(task.game_file, request_infos=infos)
            state = self._game.reset()
        self._facts = {fact_string(p, self._ids) for p in state["facts"]}
        self._used = 0
        self._admissible = list(state["admissible_commands"])
        header = f"Task {self._task + 1} of {len(self.tasks)}."  # the intro states the goal
        self._intro = f"{header}\n\n{clean_feedback(state.feedback)}"
        return self._intro, list(state["admissible_commands"])

    def _close_game(self) -> None:
        if self._game is not None:
            self._game.close()
            self._game = None

    def _step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        with TEXTWORLD_LOCK:
            return self._step_locked(action)

    def _step_locked(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        if self._phase == QUIZ_PHASE:
            return self._answer(action)
        if self._phase != TASK_PHASE:
            raise RuntimeError("the episode is over: reset() first")
        return self._act(action)

    def _act(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        command = " ".join(action.split())
        self._used += 1
        info: dict[str, Any] = {"task_index": self._task, "command": command}
        unsafe = command_problem(command)
        if command in ("", INVALID_ACTION) or unsafe is not None:
            feedback, won, lost, admissible = "Invalid action.", False, False, None
            info.update(valid=False, invalid_reason=unsafe or "no command", admissible=False)
            added: set[str] = set()
            removed: set[str] = set()
        else:
            before_admissible = self._admissible
            state, _, _ = self._game.step(command)
            feedback = clean_feedback(state.feedback)
            won, lost = bool(state["won"]), bool(state["lost"])
            admissible = list(state["admissible_commands"])
            facts = {fact_string(p, self._ids) for p in state["facts"]}
            added, removed = facts - self._facts, self._facts - facts
            self._facts = facts
            was_admissible = before_admissible is None or command in before_admissible
            info["admissible"] = was_admissible
            refusal = None if was_admissible or added or removed else parser_refusal(feedback)
            if refusal is not None:
                info.update(valid=False, invalid_reason=refusal)
        self._admissible = admissible if admissible is not None else self._admissible
        room = self._room()
        step_facts = Stage1StepFacts(
            task_index=self._task,
            command=command,
            feedback=feedback,
            room=room,
            facts_added=tuple(sorted(added)),
            facts_removed=tuple(sorted(removed)),
            intro=self._intro,
        )
        if self._intro:
            info["intro"] = self._intro
        self._intro = ""  # read once: on the task's first step
        self.stage1.append(step_facts)
        if won:
            self._score += 1
        info.update(
            feedback=feedback,
            room=room,
            facts_added=list(step_facts.facts_added),
            facts_removed=list(step_facts.facts_removed),
            won=won,
            admissible_commands=self._admissible,
            inventory=self._inventory(),
            score=self._score,
            goal=self.tasks[self._task].goal,
        )
        # what memory recall distance needs (TIDE C.5): the objects this observation names and
        # the objects the command names (an invalid command touches nothing)
        info["entities_acted"] = [] if info.get("valid") is False else self._mentions.find(command)
        info["entities_seen"] = self._mentions.find(feedback)
        cap = self.task_step_cap if self.task_step_cap is not None else DEFAULT_TASK_STEP_CAP
        capped = not won and self._used >= cap
        if not (won or lost or capped):
            return feedback, 0.0, False, False, info
        task = self.tasks[self._task]
        self.outcomes.append(
            {
                "name": task.goal,
                "success": won,
                "truncated": capped and not lost,
                "steps": self._used,
                "reward": float(won),
                "info": {"task_id": task.task_id, "walkthrough_steps": len(task.walkthrough)},
            }
        )
        info.update(task_done=True, success=won)
        self._close_game()
        self._task += 1
        if self._task < len(self.tasks):
            obs, admissible = self._start_task()
            info.update(
                admissible_commands=admissible,
                inventory=self._inventory(),
                goal=self.tasks[self._task].goal,
                entities_seen=self._mentions.find(f"{feedback}\n\n{obs}"),
            )
            return f"{feedback}\n\n{obs}", float(won), False, False, info
        return self._start_quiz(feedback, float(won), info)

    def _room(self) -> str | None:
        """The player's room id (TextWorld's ``location`` info is None: read ``at(P, r)``)."""
        return next((f[3:-1].split(",")[1] for f in self._facts if f.startswith("at(P,")), None)

    def _inventory(self) -> list[str]:
        """Names of what the player carries (from the true state: no hidden game step)."""
        held = sorted(f[3:-1].split(",")[0] for f in self._facts if f.endswith(",I)"))
        return [self._names.get(h, h) for h in held]

    # -- stage 2 --------------------------------------------------------------------------
    def _start_quiz(
        self, feedback: str, reward: float, info: dict[str, Any]
    ) -> tuple[str, float, bool, bool, dict[str, Any]]:
        from exploreval.suites.task2quiz import _quiz_api

        assert self.quiz_world is not None
        self.session = _quiz_api.start_quiz(
            self.quiz_world, self.stage1, self.world_seed, self.max_questions, self.quiz_rule
        )
        self._phase = QUIZ_PHASE
        self._question = 0
        info["admissible_commands"] = None
        if not self.session.questions:
            self._phase = "done"
            return f"{feedback}\n\nAll tasks are over.", reward, True, False, info
        info["question"] = self.session.public(0)
        return f"{feedback}\n\n{self.session.prompt(0)}", reward, False, False, info

    def _answer(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        index = self._question
        record = self.session.record_answer(index, action)
        info: dict[str, Any] = {"question_index": index, "quiz": json.loads(json.dumps(record))}
        if record.get("parse_error"):
            info.update(valid=False, invalid_reason=str(record["parse_error"]))
        self._question += 1
        if self._question >= len(self.session.questions):
            self._phase = "done"
            return "The quiz is over.", 0.0, True, False, info
        info["question"] = self.session.public(self._question)
        return self.session.prompt(self._question), 0.0, False, False, info

    # -- records --------------------------------------------------------------------------
    def task_outcomes(self) -> list[dict[str, Any]] | None:
        return list(self.outcomes)

    def ground_truth(self) -> dict[str, Any]:
        assert self.quiz_world is not None, "reset() first"
        session = self.session
        return {
            "schema_version": 1,
            "quiz_world": self.quiz_world.model_dump(mode="json"),
            "questions": [q.model_dump(mode="json") for q in session.questions]
            if session is not None
            else [],
            "references": list(session.references) if session is not None else [],
            "quiz_rule": self.quiz_rule,
            # G_task of memory recall distance: the objects the tasks' walkthroughs act on
            "task_entities": sorted({
                e for task in self.tasks for command in task.walkthrough
                for e in self._mentions.find(command)
            }),
        }  # fmt: skip

    def on_episode_end(self) -> None:
        with TEXTWORLD_LOCK:
            self._end_locked()

    def _end_locked(self) -> None:
        self._close_game()
