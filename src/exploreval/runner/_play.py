"""Playing one planned episode and counting a run's totals: what the in-process runner, its
worker processes and its Ray workers share (moved down from ``._runner`` so that the three no
longer import each other, issue 45)."""

from __future__ import annotations

import asyncio
import contextlib
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from exploreval.core import VERSION as __version__
from exploreval.core import (
    AgentInfo,
    CorruptDatabaseError,
    EpisodeRecord,
    SharedResources,
    TextEnv,
    Usage,
    env_spec,
    make_env,
    utcnow,
)
from exploreval.models import CALL_EPISODE, ModelError
from exploreval.runner._build import ClientPool, build_agent
from exploreval.runner._episode import EpisodeSpec, run_episode
from exploreval.runner._spec import AgentSpec, ExperimentSpec
from exploreval.store import BlobCollector, RunDir

#: Seconds an env's close may take before the runner stops waiting (it keeps going in the
#: background; the scratch guardian still cleans up when the process ends).
ENV_CLOSE_TIMEOUT_S = 30.0


@dataclass
class Totals:
    """Running totals for budgets and progress."""

    episodes: int = 0
    errors: int = 0
    steps: int = 0
    usage: Usage = field(default_factory=Usage)
    #: Per agent (display name): [invalid actions, steps] over the stored episodes.
    actions: dict[str, list[int]] = field(default_factory=dict)
    #: Steps and tokens of the episodes still playing (live progress; budgets count only
    #: stored episodes). Moved into ``steps``/``usage`` when an episode is stored.
    live_steps: int = 0
    live_tokens: int = 0
    #: Agents with an episode finished in this invocation (the CLI's ETA waits for each).
    finished_agents: set[str] = field(default_factory=set)

    def add(self, record: EpisodeRecord) -> None:
        self.episodes += 1
        self.steps += record.n_steps
        self.usage = self.usage + record.usage
        if record.status != "ok":
            self.errors += 1
        counts = self.actions.setdefault(record.agent.name, [0, 0])
        counts[0] += sum(not step.valid for step in record.steps)
        counts[1] += len(record.steps)


@dataclass
class ScratchOutput:
    """Where an episode played away from the run directory (a cluster worker) leaves what it
    makes: its prompt texts in memory, its artifacts under ``path/artifacts/<episode>``; both
    travel to the driver with the record."""

    path: Path
    blobs: BlobCollector = field(default_factory=BlobCollector)


class RunState(Protocol):
    """What an executor (worker processes, Ray) reads and updates of the run it executes; the
    ``Runner`` is one. Declared here, below both, so the executors never import the runner."""

    spec: ExperimentSpec
    run: RunDir
    run_id: str
    plan: list[EpisodeSpec]
    pending: list[EpisodeSpec]
    totals: Totals
    placement: list[dict[str, Any]]


def budget_exhausted(spec: ExperimentSpec, totals: Totals) -> str | None:
    budget = spec.budget
    if budget.max_total_steps is not None and totals.steps >= budget.max_total_steps:
        return f"step budget {budget.max_total_steps} reached"
    if budget.max_total_tokens is not None and totals.usage.total_tokens >= budget.max_total_tokens:
        return f"token budget {budget.max_total_tokens} reached"
    cost = totals.usage.cost_usd  # None: unknown (the spec refuses a cost budget over those)
    if budget.max_cost_usd is not None and cost is not None and cost >= budget.max_cost_usd:
        return f"cost budget ${budget.max_cost_usd} reached"
    return None


def error_record(
    episode: EpisodeSpec, agent: AgentSpec, family: str, message: str, run_id: str
) -> EpisodeRecord:
    """An episode that failed: stored so the failure is visible and resume re-runs it."""
    return EpisodeRecord(
        episode_id=episode.episode_id,
        run_id=run_id,
        env_id=episode.env_id,
        family=family,
        preset=episode.preset,
        seed=episode.seed,
        repeat=episode.repeat,
        env_options=episode.env_options,
        agent=AgentInfo(name=agent.display_name, kind=agent.kind, config=agent.identity()),
        status="error",
        error=message,
        ended_at=utcnow(),
        package_version=__version__,
    )


def model_error_record(
    exc: ModelError, episode: EpisodeSpec, agent: AgentSpec, run_id: str
) -> EpisodeRecord:
    """What is stored of an episode a ``ModelError`` ended: its steps so far when the error
    carries them (:func:`play` attaches them), else an error record."""
    if isinstance(exc.record, EpisodeRecord):
        return exc.record
    return error_record(episode, agent, env_spec(episode.env_id).family, str(exc), run_id)


async def play(
    episode: EpisodeSpec,
    agent_spec: AgentSpec,
    pool: ClientPool,
    *,
    max_steps: int | None,
    episode_timeout: float | None,
    run: RunDir | ScratchOutput | None,
    run_id: str,
    shared: SharedResources | None = None,
    on_step: Callable[[Usage | None], None] | None = None,
) -> EpisodeRecord:
    """Play one planned episode; every failure becomes an error record (ModelError re-raised).

    ``run`` is where prompt texts and artifacts go: the run directory, or a worker's scratch.
    The episode's model calls are filed under its id in the response cache (``CALL_EPISODE``).

    Building the env or the agent is part of the episode: a constructor that raises is a failed
    episode with its error recorded, not a crashed run. The env is closed on every ending
    (success, error, timeout, cancellation).
    """
    family = env_spec(episode.env_id).family
    env: TextEnv | None = None
    prompts = run.blobs.batch() if run is not None else None
    calls = CALL_EPISODE.set(episode.episode_id)
    try:
        env = make_env(episode.env_id, preset=episode.preset, **episode.env_options)
        if shared is not None:
            env.shared = shared
        if run is not None:
            env.artifact_dir = run.path / "artifacts" / episode.episode_id
        agent = build_agent(agent_spec, family, pool.client_for(agent_spec))
        coro = run_episode(
            env,
            agent,
            seed=episode.seed,
            repeat=episode.repeat,
            preset=episode.preset,
            env_options=episode.env_options,
            max_steps=max_steps,
            agent_label=agent_spec.display_name,
            agent_identity=episode.agent_identity,
            prompt_sink=prompts.ref if prompts is not None else None,
            run_id=run_id,
            episode_id_override=episode.episode_id,
            on_step=on_step,
        )
        record = await (asyncio.wait_for(coro, episode_timeout) if episode_timeout else coro)
        record.agent.config = {**record.agent.config, "identity": episode.agent_identity}
        if prompts is not None:  # blobs reach the disk before the line that references them
            await asyncio.to_thread(prompts.flush)
        return record
    except TimeoutError:
        return error_record(
            episode, agent_spec, family, f"timed out after {episode_timeout}s", run_id
        )
    except ModelError as exc:  # run-level: the run stops with one clear message
        if isinstance(exc.record, EpisodeRecord):  # the steps played before are stored with it
            exc.record.agent.config = {
                **exc.record.agent.config,
                "identity": episode.agent_identity,
            }
            if prompts is not None:
                await asyncio.to_thread(prompts.flush)
        raise
    except CorruptDatabaseError:
        raise
    except Exception as exc:  # an env/agent bug must not take the whole run down
        tb = traceback.format_exc(limit=5)
        return error_record(
            episode, agent_spec, family, f"{type(exc).__name__}: {exc}\n{tb}", run_id
        )
    finally:
        if env is not None:
            await _close_env(env)
        CALL_EPISODE.reset(calls)


async def _close_env(env: TextEnv) -> None:
    """Close an env whatever happened; a close that fails or hangs must not hang the run."""
    with contextlib.suppress(Exception, asyncio.CancelledError):
        await asyncio.shield(asyncio.wait_for(env.aclose(), ENV_CLOSE_TIMEOUT_S))
