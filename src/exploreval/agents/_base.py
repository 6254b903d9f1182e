"""The agent contract: scripted baselines and LLM agents look the same to the runner."""

from __future__ import annotations

import abc
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from exploreval.core import Message, Usage, stable_hash


@dataclass
class EpisodeContext:
    """What an agent may know when an episode starts.

    ``ground_truth`` is filled only for agents that declare ``privileged = True``
    (oracles that give lower bounds); everyone else explores for real.
    """

    env_id: str
    family: str
    preset: str | None
    seed: int
    repeat: int
    rng: np.random.Generator
    task_description: str = ""
    reset_info: dict[str, Any] = field(default_factory=dict)
    ground_truth: dict[str, Any] | None = None
    max_steps: int | None = None
    env_options: dict[str, Any] = field(default_factory=dict)
    #: The episode's directory in the run (``RUN_DIR/artifacts/<episode_id>``), where an agent
    #: may keep files of its own (a memory system's store); None outside a run.
    artifact_dir: str | None = None

    @property
    def env_options_hash(self) -> str:
        return stable_hash(self.env_options, 12) if self.env_options else ""


@dataclass
class Decision:
    """An agent's answer for one step, plus what the runner should log about it."""

    action: str
    valid: bool = True
    invalid_reason: str | None = None
    raw_output: str | None = None
    reasoning: str | None = None
    prompt: list[Message] | None = None
    usage: Usage | None = None
    latency_s: float = 0.0
    retries: int = 0
    cached: bool = False
    agent_info: dict[str, Any] = field(default_factory=dict)


class Agent(abc.ABC):
    """Given the latest observation (and env info), return the next action.

    ``info`` is the env's info dict from the previous step (or from reset), with
    ``info["last_reward"]`` added by the runner.
    """

    name: str = "agent"
    kind: Literal["scripted", "llm"] = "scripted"
    privileged: bool = False

    def config(self) -> dict[str, Any]:
        """Everything that changes behaviour; part of the episode id. Never secrets."""
        return {"name": self.name}

    @abc.abstractmethod
    async def reset(self, ctx: EpisodeContext, observation: str) -> None:
        """Start a new episode."""

    @abc.abstractmethod
    async def act(self, observation: str, info: dict[str, Any]) -> Decision:
        """Choose the next action."""

    async def finish(self) -> None:  # noqa: B027 - optional hook
        """The episode ended, however: release what the episode held (a memory's store)."""

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """Release resources (model connections)."""


class ScriptedAgent(Agent):
    """Baseline with synchronous logic: implement ``start`` and ``choose``."""

    kind: Literal["scripted", "llm"] = "scripted"

    def __init__(self, **options: Any) -> None:
        self.options = options
        self.ctx: EpisodeContext | None = None

    def config(self) -> dict[str, Any]:
        return {"name": self.name, **self.options}

    @property
    def rng(self) -> np.random.Generator:
        assert self.ctx is not None, "reset() not called"
        return self.ctx.rng

    async def reset(self, ctx: EpisodeContext, observation: str) -> None:
        self.ctx = ctx
        self.start(ctx, observation)

    async def act(self, observation: str, info: dict[str, Any]) -> Decision:
        return Decision(action=self.choose(observation, info))

    def start(self, ctx: EpisodeContext, observation: str) -> None:  # noqa: B027 - optional hook
        """Per-episode initialisation."""

    @abc.abstractmethod
    def choose(self, observation: str, info: dict[str, Any]) -> str:
        """Return the action text."""
