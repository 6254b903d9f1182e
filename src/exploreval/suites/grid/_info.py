"""The grid env's step info, typed (the runner validates every step against it)."""

from __future__ import annotations

from pydantic import ConfigDict, Field

from exploreval.core import StepInfo


class GridStepInfo(StepInfo):
    """What ``GridDAGEnv.step`` reports: where the agent is and what happened to the DAG."""

    model_config = ConfigDict(extra="forbid")

    pos: tuple[int, int] = Field(description="Cell [x, y] after the step")
    node: str | None = Field(default=None, description="Node on that cell, if any")
    moves: list[str] = Field(default_factory=list, description="Admissible moves from the cell")
    discovered: list[str] = Field(default_factory=list, description="Nodes first seen this step")
    achieved: list[str] = Field(default_factory=list, description="Nodes achieved this step")
