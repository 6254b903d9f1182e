"""The puzzle envs' step info, typed (the runner validates every step against it)."""

from __future__ import annotations

from pydantic import ConfigDict, Field

from exploreval.core import StepInfo


class PuzzleStepInfo(StepInfo):
    """Fields every puzzle reports."""

    model_config = ConfigDict(extra="forbid")

    action: str | None = Field(default=None, description="The action text as received")
    stopped: bool = Field(default=False, description="The agent sent the stop action")


class FrozenLakeStepInfo(PuzzleStepInfo):
    move: str | None = Field(default=None, description="Canonical move name")
    position: tuple[int, int] | None = Field(default=None, description="Player cell after")
    moved: bool | None = Field(default=None, description="False when the move was blocked")
    hole_attempt: bool | None = Field(default=None, description="The move led into a hole")


class BlocksWorldStepInfo(PuzzleStepInfo):
    operator: str | None = Field(default=None, description="Operator of the action")


class SudokuStepInfo(PuzzleStepInfo):
    cell: tuple[int, int] | None = Field(default=None, description="(row, column) filled")
    value: int | None = Field(default=None, description="Value written")
    correct: bool | None = Field(default=None, description="Matches the unique solution")
    solvable: bool | None = Field(default=None, description="No wrong fill so far")
