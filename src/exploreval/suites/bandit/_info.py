"""The bandit env's step info, typed (the runner validates every step against it)."""

from __future__ import annotations

from pydantic import ConfigDict, Field

from exploreval.core import StepInfo


class BanditStepInfo(StepInfo):
    """What ``BanditEnv.step`` reports about one round."""

    model_config = ConfigDict(extra="forbid")

    round: int = Field(ge=1, description="1-based round number")
    arm: int | None = Field(default=None, description="Arm index pulled (None: no pull)")
    label: str | None = Field(default=None, description="Label of the pulled arm")
    reward: float = Field(default=0.0, description="Reward of the round (0/1)")
    fallback: str | None = Field(
        default=None, description="'random' when an invalid answer was replaced by a random arm"
    )
