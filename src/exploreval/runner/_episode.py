"""Run one episode: env.reset -> agent.act -> env.step ... -> EpisodeRecord."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from exploreval.agents import Agent, EpisodeContext
from exploreval.core import (
    INVALID_ACTION,
    TASK_PHASE,
    AgentInfo,
    EpisodeRecord,
    Message,
    PromptRef,
    Step,
    TaskOutcome,
    TextEnv,
    Usage,
    env_spec,
    episode_id,
    make_env,
    utcnow,
    validate_info,
)
from exploreval.core import VERSION as __version__
from exploreval.models import ModelError, ModelRequestError

#: Stores prompts out of line (content-addressed); default keeps none.
PromptSink = Callable[[list[Message]], PromptRef]


@dataclass(frozen=True)
class EpisodeSpec:
    """One planned episode; ``episode_id`` is stable across runs of the same spec."""

    env_id: str
    preset: str | None
    seed: int
    repeat: int
    agent_index: int
    agent_identity: dict[str, Any]
    env_options: dict[str, Any] = field(default_factory=dict)

    @property
    def episode_id(self) -> str:
        return episode_id(
            env_id=self.env_id,
            preset=self.preset,
            seed=self.seed,
            agent_config=self.agent_identity,
            repeat=self.repeat,
            env_options=self.env_options,
        )


def _jsonable(info: dict[str, Any]) -> dict[str, Any]:
    """Env infos should be JSON-ready; convert numpy scalars/arrays defensively."""
    out: dict[str, Any] = {}
    for key, value in info.items():
        if isinstance(value, np.generic):
            value = value.item()
        elif isinstance(value, np.ndarray):
            value = value.tolist()
        out[str(key)] = value
    return out


def _agent_rng(seed: int, repeat: int) -> np.random.Generator:
    # Agents get their own stream, independent of the env's, fixed by (seed, repeat).
    return np.random.default_rng([seed, repeat, 0xA6E7])


@dataclass
class _Play:
    """What changes as an episode is played (the loop's state)."""

    observation: str
    info: dict[str, Any]
    usage: Usage = field(default_factory=Usage)
    total_reward: float = 0.0
    terminated: bool = False
    truncated: bool = False
    t: int = 0
    #: Steps of the acting phase (the step cap counts these, not an evaluation phase's).
    acting: int = 0


def _step_limits(env: TextEnv, max_steps: int | None) -> tuple[bool, int | None]:
    """(per_task, limit): a multi-task env applies the cap to every task itself (and ends the
    episode); otherwise the runner stops at the smaller of ``max_steps`` and the env's own."""
    per_task = env.step_cap_scope == "task"
    if per_task:
        env.task_step_cap = max_steps
        return True, None
    limit = max_steps
    if env.max_steps is not None:
        limit = env.max_steps if limit is None else min(limit, env.max_steps)
    return False, limit


def _open_record(
    agent: Agent,
    ctx: EpisodeContext,
    *,
    eid: str,
    run_id: str,
    agent_label: str | None,
    observation: str,
    max_steps: int | None,
    started: Any,
) -> EpisodeRecord:
    """The record of an episode just reset: who plays what, from which first observation."""
    return EpisodeRecord(
        episode_id=eid,
        run_id=run_id,
        env_id=ctx.env_id,
        family=ctx.family,
        preset=ctx.preset,
        seed=ctx.seed,
        repeat=ctx.repeat,
        env_options=ctx.env_options,
        agent=AgentInfo(name=agent_label or agent.name, kind=agent.kind, config=agent.config()),
        initial_observation=observation,
        reset_info=ctx.reset_info,
        max_steps=max_steps,
        started_at=started,
        package_version=__version__,
    )


def _failed_step(t: int, phase: str, task: int, observation: str, exc: Exception) -> Step:
    """The step whose model call failed for good: invalid (the env never saw it), its reason
    the error, which names the endpoint."""
    return Step(
        t=t,
        phase=phase,
        task=task,
        observation=observation,
        action=INVALID_ACTION,
        valid=False,
        invalid_reason=f"model call failed: {exc}",
        agent_info={"model_error": type(exc).__name__},
    )


def _to_step(
    decision: Any,
    *,
    t: int,
    phase: str,
    task: int,
    observation: str,
    action: str,
    outcome: tuple[float, bool, bool],
    step_info: dict[str, Any],
    prompt_sink: PromptSink | None,
) -> Step:
    """One played step: the agent's decision and the env's answer. A step is valid when the
    agent's output parsed and the env accepted the action; the reason is whichever said no."""
    reward, terminated, truncated = outcome
    env_valid = bool(step_info.get("valid", True))
    valid = decision.valid and env_valid
    reason = decision.invalid_reason if not decision.valid else step_info.get("invalid_reason")
    return Step(
        t=t,
        phase=phase,
        task=task,
        observation=observation,
        action=action,
        valid=valid,
        invalid_reason=None if valid else str(reason or "invalid"),
        raw_output=decision.raw_output,
        reasoning=decision.reasoning,
        prompt=prompt_sink(decision.prompt) if (prompt_sink and decision.prompt) else None,
        reward=reward,
        terminated=terminated,
        truncated=truncated,
        info=step_info,
        agent_info=decision.agent_info,
        usage=decision.usage,
        latency_s=decision.latency_s,
        retries=decision.retries,
        cached=decision.cached,
    )


def _close_record(record: EpisodeRecord, env: TextEnv, play: _Play) -> None:
    """How the episode ended: totals, per-task outcomes (the env's, or one task), success, the
    ground truth every metric recomputes from."""
    last_info = record.steps[-1].info if record.steps else {}
    record.final_observation = play.observation if record.steps else None
    record.total_reward = play.total_reward
    record.terminated = play.terminated
    record.truncated = play.truncated
    record.usage = play.usage
    outcomes = env.task_outcomes()
    if outcomes is not None:
        record.tasks = [TaskOutcome(index=i, **o) for i, o in enumerate(outcomes)]
        record.success = bool(record.tasks) and all(o.success for o in record.tasks)
    else:
        record.success = bool(last_info.get("success", False))
        record.tasks = [
            TaskOutcome(
                index=0,
                success=record.success,
                steps=play.acting,
                reward=play.total_reward,
                truncated=play.truncated and not play.terminated,
            )
        ]
    record.ground_truth = env.ground_truth()
    record.ended_at = utcnow()


async def run_episode(
    env: TextEnv,
    agent: Agent,
    *,
    seed: int,
    repeat: int = 0,
    preset: str | None = None,
    env_options: dict[str, Any] | None = None,
    max_steps: int | None = None,
    agent_label: str | None = None,
    agent_identity: dict[str, Any] | None = None,
    prompt_sink: PromptSink | None = None,
    run_id: str = "",
    episode_id_override: str | None = None,
    on_step: Callable[[Usage | None], None] | None = None,
) -> EpisodeRecord:
    """Play one episode to the end and return its record. ``on_step`` hears of each step as it
    is taken (with its model usage), for live progress.

    Env calls go through the env's async API (``areset``/``astep``), so blocking envs run off the
    event loop. Agent errors (e.g. the model endpoint failing for good) propagate to the caller,
    which records the episode as errored; env errors propagate too. Invalid model output never
    raises: the harness turns it into an invalid action. The caller closes the env.
    """
    env_id = env.env_id
    family = env_spec(env_id).family if env_id else "unknown"
    identity = agent_identity if agent_identity is not None else agent.config()
    eid = episode_id_override or episode_id(env_id=env_id, preset=preset, seed=seed,
                                            agent_config=identity, repeat=repeat,
                                            env_options=env_options)  # fmt: skip
    started = utcnow()
    per_task, limit = _step_limits(env, max_steps)
    observation, reset_info = await env.areset(seed=seed)
    cap = max_steps if per_task else limit
    ctx = EpisodeContext(
        env_id=env_id, family=family, preset=preset, seed=seed, repeat=repeat,
        rng=_agent_rng(seed, repeat), task_description=env.task_description(),
        reset_info=_jsonable(reset_info),
        ground_truth=env.ground_truth() if agent.privileged else None,
        max_steps=cap, env_options=dict(env_options or {}),
        artifact_dir=str(env.artifact_dir) if env.artifact_dir is not None else None,
    )  # fmt: skip
    try:
        await agent.reset(ctx, observation)
        record = _open_record(agent, ctx, eid=eid, run_id=run_id, agent_label=agent_label,
                              observation=observation, max_steps=cap, started=started)  # fmt: skip
        play = _Play(observation=observation, info={**ctx.reset_info, "last_reward": 0.0})
        fatal: ModelError | None = None
        while not (play.terminated or play.truncated):
            phase, task = env.phase, env.task_index
            if limit is not None and play.acting >= limit and phase == TASK_PHASE:
                play.truncated = True
                break
            play.info = {**play.info, "phase": phase, "task": task}
            try:
                decision = await agent.act(play.observation, play.info)
            except (ModelRequestError, ModelError) as exc:
                record.status, record.error = "error", f"step {play.t}: {exc}"
                record.steps.append(_failed_step(play.t, phase, task, play.observation, exc))
                fatal = exc if isinstance(exc, ModelError) else None  # run-level: re-raised below
                break
            action = decision.action if decision.valid else INVALID_ACTION
            next_obs, reward, play.terminated, play.truncated, raw_info = await env.astep(action)
            step_info = validate_info(env.info_model, _jsonable(raw_info),
                                      f"{env_id} step {play.t} (episode {eid})")  # fmt: skip
            if decision.usage is not None:
                play.usage = play.usage + decision.usage
            record.steps.append(
                _to_step(
                    decision,
                    t=play.t,
                    phase=phase,
                    task=task,
                    observation=play.observation,
                    action=action,
                    outcome=(reward, play.terminated, play.truncated),
                    step_info=step_info,
                    prompt_sink=prompt_sink,
                )  # fmt: skip
            )
            if on_step is not None:
                on_step(decision.usage)
            play.total_reward += reward
            play.observation = next_obs
            play.info = {**step_info, "last_reward": reward}
            play.t += 1
            play.acting += phase == TASK_PHASE
        _close_record(record, env, play)
    finally:
        await agent.finish()  # per-episode resources (a memory's store)
    if fatal is not None:
        fatal.record = record  # the runner stores it: the steps so far are kept
        raise fatal
    return record


async def run_single(
    env_id: str,
    agent: Agent,
    *,
    seed: int = 0,
    preset: str | None = None,
    repeat: int = 0,
    max_steps: int | None = None,
    **env_options: Any,
) -> EpisodeRecord:
    """Convenience: make the env and play one episode (tests, notebooks)."""
    env = make_env(env_id, preset=preset, **env_options)
    try:
        return await run_episode(
            env,
            agent,
            seed=seed,
            repeat=repeat,
            preset=preset,
            env_options=env_options,
            max_steps=max_steps,
        )
    finally:
        await env.aclose()
