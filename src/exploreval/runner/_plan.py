"""Expand a spec into episode specs (stable ids) and subtract what the store holds."""

from __future__ import annotations

from exploreval.core import env_spec
from exploreval.runner._episode import EpisodeSpec
from exploreval.runner._errors import SpecError
from exploreval.runner._spec import ExperimentSpec


def plan_episodes(spec: ExperimentSpec) -> list[EpisodeSpec]:
    """Every episode of the experiment, in a deterministic order.

    Validates env ids, presets, agent and harness names up front, so a typo fails before the
    run directory is created and before any model call.
    """
    from exploreval.agents import check_agent, check_harness
    from exploreval.core import unknown_name_error

    plan: list[EpisodeSpec] = []
    for suite_index, suite in enumerate(spec.suites):
        registered = env_spec(suite.env_id)
        for agent in spec.agents:
            if agent.suites is not None and suite_index not in agent.suites:
                continue
            if agent.kind == "scripted" and agent.agent:
                check_agent(registered.family, agent.agent)
            elif agent.kind == "llm":
                check_harness(registered.family, agent.harness)
        for preset in suite.presets:
            if preset is not None and registered.presets and preset not in registered.presets:
                raise unknown_name_error("preset", preset, registered.presets, context=suite.env_id)
            for seed in suite.seeds:
                for agent_index, agent in enumerate(spec.agents):
                    if agent.suites is not None and suite_index not in agent.suites:
                        continue
                    for repeat in range(spec.repeats):
                        plan.append(
                            EpisodeSpec(
                                env_id=suite.env_id,
                                preset=preset,
                                seed=seed,
                                repeat=repeat,
                                agent_index=agent_index,
                                agent_identity=agent.identity(),
                                env_options=dict(suite.env_options),
                            )
                        )
    seen: dict[str, EpisodeSpec] = {}
    for episode in plan:
        if episode.episode_id in seen:
            agent = spec.agents[episode.agent_index]
            raise SpecError(
                f"the episode {episode.env_id} preset {episode.preset} seed {episode.seed} "
                f"repeat {episode.repeat} with {agent.describe()} is planned twice (two suite "
                "entries overlap, e.g. a named suite given twice): it would run once and the "
                "duplicate be silently dropped; remove the overlap"
            )
        seen[episode.episode_id] = episode
    return plan


def check_buildable(spec: ExperimentSpec) -> None:
    """Build every (env, preset, options), scripted agent and harness of ``spec`` once, so an
    unknown option name (``--env-option bogus=1``, ``--harness-option bogus=1``) or a bad value
    is refused before the run directory exists, naming the suite or agent entry.

    Envs validate their options in ``__init__`` (the env contract); nothing is reset, so no
    episode resource (sandbox, game) is created.
    """
    import contextlib

    from exploreval.agents import check_agent, check_harness
    from exploreval.core import make_env

    families: dict[int, str] = {}
    for index, suite in enumerate(spec.suites):
        families[index] = env_spec(suite.env_id).family
        for preset in suite.presets:
            try:
                env = make_env(suite.env_id, preset=preset, **suite.env_options)
            except Exception as exc:
                shown = f", options {suite.env_options}" if suite.env_options else ""
                raise SpecError(
                    f"suites.{index} ({suite.env_id}, preset {preset}{shown}): the env refuses "
                    f"to build: {type(exc).__name__}: {exc}"
                ) from exc
            with contextlib.suppress(Exception):
                env.close()
    for index, agent in enumerate(spec.agents):
        played = agent.suites if agent.suites is not None else list(families)
        for family in sorted({families[i] for i in played}):
            try:
                if agent.kind == "scripted" and agent.agent:
                    check_agent(family, agent.agent).build(**agent.options)
                elif agent.kind == "llm":
                    check_harness(family, agent.harness).build(
                        history=agent.history, **agent.harness_options
                    )
            except Exception as exc:
                what = (
                    f"agent {agent.agent} options {agent.options}"
                    if agent.kind == "scripted"
                    else f"harness {agent.harness} options {agent.harness_options}"
                )
                raise SpecError(
                    f"agents.{index} ({what}, env family {family}): refuses to build: "
                    f"{type(exc).__name__}: {exc}"
                ) from exc


def pending_episodes(plan: list[EpisodeSpec], completed: set[str]) -> list[EpisodeSpec]:
    """Resume = plan minus episodes already stored with status ok."""
    return [e for e in plan if e.episode_id not in completed]
