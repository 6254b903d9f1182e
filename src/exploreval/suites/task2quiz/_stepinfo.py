"""Typed step info of ``exploreval/Task2Quiz-v0``: stage-1 step facts, then one quiz answer."""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, Field

from exploreval.core import StepInfo


class Task2QuizStepInfo(StepInfo):
    """Stage 1 steps carry the :class:`Stage1StepFacts` fields; quiz steps carry ``quiz``."""

    model_config = ConfigDict(extra="forbid")

    # -- stage 1 (phase "task") ------------------------------------------------------
    task_index: int | None = Field(default=None, description="Task this step belongs to")
    command: str | None = Field(default=None, description="The command sent to TextWorld")
    feedback: str | None = Field(default=None, description="TextWorld's cleaned feedback")
    intro: str | None = Field(
        default=None, description="the task's opening text, on its first step (evidence too)"
    )
    room: str | None = Field(default=None, description="Player's room id after the step")
    facts_added: list[str] | None = Field(
        default=None, description='True-state propositions made true, "name(id,id)"'
    )
    facts_removed: list[str] | None = Field(
        default=None, description="True-state propositions made false by the step"
    )
    won: bool | None = Field(default=None, description="TextWorld says the task's game is won")
    admissible: bool | None = Field(
        default=None,
        description="The command was in TextWorld's admissible list (a refused but understood "
        "command, e.g. opening a locked door, is valid yet not admissible)",
    )
    admissible_commands: list[str] | None = Field(
        default=None, description="TextWorld's admissible commands after the step (privileged)"
    )
    inventory: list[str] | None = Field(
        default=None, description="Names of what the player carries after the step"
    )
    score: int | None = Field(default=None, description="Tasks won so far in this episode")
    goal: str | None = Field(default=None, description="The goal of the task now being played")
    # -- quiz (phase "quiz") -----------------------------------------------------------
    question_index: int | None = Field(default=None, description="Question answered")
    quiz: dict[str, Any] | None = Field(
        default=None, description="QuizSession.record_answer(...) for this answer"
    )
    question: dict[str, Any] | None = Field(
        default=None,
        description="The question asked next (id, index, total, qtype, format, text, choices, "
        "guideline; never the answer)",
    )
