"""The seams between Task2Quiz's parts: worlds and tasks, stage-1 step facts, quiz questions.

Written first so the world/task/env side and the quiz/answerability/scoring side can be built in
parallel against the same shapes. Extend with new optional fields rather than changing fields;
every model here is serialised into episode records or the episode's ground truth.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Difficulty = Literal["easy", "medium", "hard"]
QuestionType = Literal["location", "connectivity", "direction", "match", "property"]
AnswerFormat = Literal["yes_no", "which", "where", "what", "description"]
NON_ANSWERABLE = "non-answerable"


class CoverageSignature(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    rooms: tuple[str, ...] = ()  # entity ids (TextWorld ids, e.g. "r_0")
    objects: tuple[str, ...] = ()
    interactions: tuple[str, ...] = ()  # e.g. "open(c_0)", "unlock(d_1,k_0)"


class CompiledTask(BaseModel):
    """One coverage task compiled as its own TextWorld game over the shared world."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    task_id: str
    goal: str  # the objective shown to the agent
    game_file: str  # path of the compiled .z8 (in the compile cache)
    walkthrough: tuple[str, ...]
    signature: CoverageSignature
    #: Optional (world side): goal type ("go", "take", "eat", "open", "unlock") and target id.
    goal_kind: str | None = None
    target: str | None = None
    #: Optional: content hash of the task game's normalised JSON (its compile-cache key).
    game_hash: str | None = None


class QuizWorld(BaseModel):
    """One generated environment: the base world (ground truth) plus its selected tasks."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: int = 1
    difficulty: Difficulty
    seed: int
    content_hash: str
    #: TextWorld's ``game.serialize()`` of the base world (no quest), normalised (sorted, no dates).
    world: dict[str, Any]
    tasks: tuple[CompiledTask, ...]
    #: Optional (world side): structured summary of the same world with entity ids (start room,
    #: connections with directions, doors/containers with state and key, item locations...).
    summary: dict[str, Any] | None = None
    #: Which targets the tasks cover (``_coverage.TASK_UNIVERSES``); records written before the
    #: option existed were built with ``broad``.
    task_universe: str = "broad"


class Stage1StepFacts(BaseModel):
    """What the env stores per stage-1 step (in the step info) so evidence is recomputable.

    The true state before the first step is ``QuizWorld.world``'s facts (each task starts from
    the initial world); later states follow by applying the deltas in order within a task.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    task_index: int
    command: str
    feedback: str
    room: str | None  # player's room id after the step
    facts_added: tuple[str, ...] = ()  # propositions as "name(arg1,arg2)" with entity ids
    facts_removed: tuple[str, ...] = ()
    #: the task's opening text (start room, goal), on each task's first step only: it shows the
    #: initial state, so what it says about lock and open state is evidence too
    intro: str = ""


class Question(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    qtype: QuestionType
    format: AnswerFormat
    text: str
    choices: tuple[str, ...] = ()
    answer: str  # the fact-derived answer about the initial state
    #: Evidence checkpoints as a small formula: {"all": [...]} / {"any": [...]} / "evidence-key".
    checkpoints: Any = Field(default=None)


# Implemented by the quiz side (module names fixed so both sides agree):
#   exploreval.suites.task2quiz._quiz_api.start_quiz(world: QuizWorld,
#       stage1: Sequence[Stage1StepFacts], seed: int) -> QuizSession
#   QuizSession.questions: list[Question]; QuizSession.references: list[str]  (answer or
#       NON_ANSWERABLE); QuizSession.prompt(i) -> str (the observation for question i);
#       QuizSession.record_answer(i, raw_action: str) -> dict (JSON-able step info: parsed answer,
#       reference, correct, answerable, qtype, format, parse error if any)
# Implemented by the world side:
#   exploreval.suites.task2quiz._benchmark.build_world(difficulty, seed, cache_dir=None) -> QuizWorld
