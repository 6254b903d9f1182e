"""Env checker: the contract every registered env must meet (run over all of them in tests).

Gymnasium's own ``check_env`` runs first (spaces, reset/step signatures and return types, seeded
reset determinism, step determinism unless the spec says ``nondeterministic``). Then ours:

* a trajectory of the family's ``random`` agent replays bit-identically for the same seed
  (skipped for ``nondeterministic`` envs, whose replays may differ in timing-dependent text);
* every info is JSON-serialisable and matches the env's declared ``info_model``;
* ``INVALID_ACTION`` is an invalid step with a reason, and still costs a step;
* the async API the runner uses (``areset``/``astep``/``aclose``) plays the same episode as the
  sync API, and closing twice is allowed.
"""

from __future__ import annotations

import asyncio
import json
import warnings
from typing import Any

from exploreval.agents import EpisodeContext, make_agent
from exploreval.core import INVALID_ACTION, TextEnv, env_spec, make_env, validate_info


class EnvCheckError(AssertionError):
    """An env broke the contract; the message says which rule."""


def _context(env_id: str, preset: str | None, seed: int, info: dict[str, Any]) -> EpisodeContext:
    import numpy as np

    return EpisodeContext(
        env_id=env_id,
        family=env_spec(env_id).family,
        preset=preset,
        seed=seed,
        repeat=0,
        rng=np.random.default_rng(1234),
        reset_info=info,
    )


async def _trajectory(env_id: str, preset: str | None, seed: int, n_steps: int) -> list[Any]:
    """Reset with ``seed`` and play the family's ``random`` agent (fixed agent seed), async API."""
    spec = env_spec(env_id)
    env = make_env(env_id, preset=preset)
    agent = make_agent(spec.family, "random")
    try:
        obs, info = await env.areset(seed=seed)
        await agent.reset(_context(env_id, preset, seed, info), obs)
        out: list[Any] = [
            obs,
            json.dumps(info, sort_keys=True),
            json.dumps(env.ground_truth(), sort_keys=True),
        ]
        for t in range(n_steps):
            decision = await agent.act(obs, {**info, "last_reward": 0.0})
            result = await env.astep(decision.action)
            if not (isinstance(result, tuple) and len(result) == 5):
                raise EnvCheckError(
                    f"{env_id}: step must return a 5-tuple, got {type(result).__name__}"
                )
            obs, reward, terminated, truncated, info = result
            _check_step_types(env_id, obs, reward, terminated, truncated)
            try:
                info_text = json.dumps(info, sort_keys=True)
            except TypeError as exc:
                raise EnvCheckError(f"{env_id}: info is not JSON-serialisable: {exc}") from exc
            try:
                validate_info(env.info_model, info, f"{env_id} step {t}")
            except ValueError as exc:
                raise EnvCheckError(str(exc)) from None
            out.append((decision.action, obs, reward, terminated, truncated, info_text))
            if terminated or truncated:
                break
        return out
    finally:
        await env.aclose()
        await env.aclose()  # closing twice must be allowed


def _check_step_types(env_id: str, obs: Any, reward: Any, terminated: Any, truncated: Any) -> None:
    if not isinstance(obs, str):
        raise EnvCheckError(f"{env_id}: observations must be str, got {type(obs).__name__}")
    if (
        not isinstance(reward, float)
        or not isinstance(terminated, bool)
        or not isinstance(truncated, bool)
    ):
        raise EnvCheckError(f"{env_id}: reward must be float and terminated/truncated bool")


def _gymnasium_check(env: TextEnv) -> None:
    from gymnasium.utils.env_checker import check_env as gym_check_env

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # text spaces draw gymnasium's generic warnings
        try:
            gym_check_env(env, skip_render_check=True)
        except AssertionError as exc:
            raise EnvCheckError(f"{env.env_id}: gymnasium's env checker: {exc}") from exc


def _sync_trajectory(env_id: str, preset: str | None, seed: int, n_steps: int) -> list[Any]:
    """The same trajectory through the sync Gymnasium API (must equal the async one)."""
    spec = env_spec(env_id)
    env = make_env(env_id, preset=preset)
    agent = make_agent(spec.family, "random")
    try:
        obs, info = env.reset(seed=seed)
        asyncio.run(agent.reset(_context(env_id, preset, seed, info), obs))
        out: list[Any] = [
            obs,
            json.dumps(info, sort_keys=True),
            json.dumps(env.ground_truth(), sort_keys=True),
        ]
        for _ in range(n_steps):
            decision = asyncio.run(agent.act(obs, {**info, "last_reward": 0.0}))
            obs, reward, terminated, truncated, info = env.step(decision.action)
            out.append(
                (
                    decision.action,
                    obs,
                    reward,
                    terminated,
                    truncated,
                    json.dumps(info, sort_keys=True),
                )
            )
            if terminated or truncated:
                break
        return out
    finally:
        env.close()


def check_env(
    env_id: str,
    preset: str | None = None,
    seeds: tuple[int, ...] = (0, 1),
    n_steps: int = 40,
    *,
    gymnasium_api: bool = True,
) -> None:
    """Raise ``EnvCheckError`` unless the env meets Gymnasium's API and exploreval's contract.

    ``gymnasium_api=False`` leaves out Gymnasium's own checker (spaces, seeding semantics,
    return types), which resets with seeds of its own: an env whose every new seed is costly
    (a Task2Quiz world is 7 s) may run it on one preset, since a preset changes options, not
    the API; the trajectory replay and the invalid-action check still run on this preset."""
    spec = env_spec(env_id)
    if gymnasium_api:
        env = make_env(env_id, preset=preset)
        try:
            _gymnasium_check(env)
        finally:
            env.close()
    for seed in seeds:
        first = asyncio.run(_trajectory(env_id, preset, seed, n_steps))
        if spec.nondeterministic:
            continue
        second = asyncio.run(_trajectory(env_id, preset, seed, n_steps))
        if first != second:
            index = next(i for i, (a, b) in enumerate(zip(first, second, strict=False)) if a != b)
            raise EnvCheckError(
                f"{env_id} preset={preset} seed={seed}: not deterministic "
                f"(first difference at item {index})"
            )
        if _sync_trajectory(env_id, preset, seed, n_steps) != first:
            raise EnvCheckError(
                f"{env_id} preset={preset} seed={seed}: the sync API (reset/step) plays a different "
                "episode than the async API (areset/astep) the runner uses"
            )
    env = make_env(env_id, preset=preset)
    try:
        env.reset(seed=seeds[0])
        _, _, _, _, info = env.step(INVALID_ACTION)
        if info.get("valid", True) is not False or not info.get("invalid_reason"):
            raise EnvCheckError(
                f"{env_id}: INVALID_ACTION must be an invalid step with an invalid_reason"
            )
        if env.t != 1:
            raise EnvCheckError(f"{env_id}: an invalid action must still cost a step")
    finally:
        env.close()
