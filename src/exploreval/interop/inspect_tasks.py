"""exploreval's environments as inspect_ai tasks: ``inspect eval exploreval/<family>``.

inspect_ai loads this module through the ``inspect_ai`` entry point named ``exploreval``; it
registers one ``@task`` per env family (``grid``, ``bandit``, ``frozenlake``, ``blocksworld``,
``sudoku``, ``task2quiz``, ``terminal``, and any plugin's). Usage::

    inspect eval exploreval/grid -T preset=explore-low/dag-small -T seeds=0-4 \\
        -T harness=react --model openai/gpt-4.1-mini

* **Task parameters** (``-T``): ``preset``, ``seeds`` (``0-4`` or ``0,3,7``), ``env`` (an env
  id of the family, default its first), ``harness``, ``history`` (as in ``exploreval run``),
  ``max_steps``, ``constrain``, ``temperature``, ``max_tokens``; every other ``-T key=value`` is
  an env option (``-T budget=15``). One sample per (preset, seed); inspect's ``--epochs`` are
  exploreval's repeats (epoch = repeat + 1).
* **Solver**: exploreval's own episode loop (``exploreval.runner.run_episode``) with the
  family's harness (its prompts and its parser: an output that does not parse is an invalid
  action with its reason, as in a native run), answering through inspect's model
  (:class:`InspectModelClient`): inspect records every call, applies its limits and retries.
  After each step an info event (``source="exploreval/step"``) carries the step's diagnostics;
  the episode record goes to the sample's ``store()`` under ``exploreval:record``, so that
  ``exploreval import`` of the log rebuilds exactly the steps and ``exploreval score`` the same
  metrics as a native run; the messages become the sample's transcript (the export's shape).
* **Scorer**: ``exploreval``: ``success`` and the family's headline metrics as the score's
  value (inspect shows their means), every numeric episode metric in its metadata.

The terminal family runs in exploreval's own sandbox (started by the env inside the solver),
not in an inspect ``SandboxEnvironment``: docs/inspect.md says why.
"""

from __future__ import annotations

import contextlib
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.log import transcript
from inspect_ai.model import ModelOutput, get_model
from inspect_ai.scorer import Score, Target, mean, scorer, stderr
from inspect_ai.solver import Generate, TaskState, solver
from inspect_ai.util import store

from exploreval.core import EpisodeRecord, env_spec, list_envs, load_plugins, make_env
from exploreval.interop._inspect_export import STEP_EVENT_SOURCE, inspect_messages_for
from exploreval.interop._inspect_model import InspectModelClient
from exploreval.store import EXPLOREVAL_STORE_KEY

#: Task parameters that are not env options.
TASK_PARAMETERS = frozenset(
    {"preset", "seeds", "env", "harness", "history", "max_steps", "constrain", "temperature",
     "max_tokens"}
)  # fmt: skip


def parse_seeds(text: str | int) -> list[int]:
    """``0-4`` -> [0..4]; ``0,3,7`` -> [0, 3, 7]; ``5`` -> [5]."""
    if isinstance(text, int):
        return [text]
    seeds: list[int] = []
    for part in str(text).split(","):
        part = part.strip()
        if not part:
            continue
        if "-" in part:
            low, high = (int(x) for x in part.split("-", 1))
            if high < low:
                raise ValueError(f"seeds {text!r}: {part} runs backwards")
            seeds += range(low, high + 1)
        else:
            seeds.append(int(part))
    if not seeds:
        raise ValueError(f"seeds {text!r}: expected e.g. 0-4 or 0,3,7")
    return list(dict.fromkeys(seeds))


class _TranscribedEnv:
    """The env, with an info event in inspect's transcript after each step (interleaved with
    the model events the calls produce). Everything else is the env's own."""

    def __init__(self, env: Any) -> None:
        object.__setattr__(self, "_env", env)

    # -> Any: delegates to the wrapped env (any attribute)
    def __getattr__(self, name: str) -> Any:
        return getattr(self._env, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._env, name, value)

    # -> Any: the wrapped env's 5-tuple, passed through
    async def astep(self, action: str) -> Any:
        result = await self._env.astep(action)
        _obs, reward, terminated, truncated, info = result
        transcript().info(
            {
                "action": action,
                "reward": reward,
                "terminated": terminated,
                "truncated": truncated,
                "info": info,
            },  # fmt: skip
            source=STEP_EVENT_SOURCE,
        )
        return result


# -> Any: an inspect_ai Solver (the @solver decorator types it)
@solver
def exploreval_episode(
    family: str,
    env_id: str,
    agent: dict[str, Any],
    env_options: dict[str, Any],
    max_steps: int | None = None,
) -> Any:
    """Play the sample's episode with exploreval's agent for ``family`` on inspect's model."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        from exploreval.runner import AgentSpec, build_agent, run_episode

        model = get_model()
        client = InspectModelClient(model, constrain_wire=str(agent.get("constrain", "off")))
        spec = AgentSpec.model_validate({**agent, "kind": "llm", "model": client.model})
        preset = state.metadata.get("preset")
        seed = int(state.metadata["seed"])
        env = make_env(env_id, preset=preset, **env_options)
        try:
            record = await run_episode(
                _TranscribedEnv(env),  # type: ignore[arg-type]
                build_agent(spec, family, client),
                seed=seed,
                repeat=max(state.epoch - 1, 0),
                preset=preset,
                env_options=env_options,
                max_steps=max_steps,
                agent_label=spec.display_name,
                agent_identity=spec.identity(),
                run_id="inspect",
            )
        finally:
            with contextlib.suppress(Exception):
                await env.aclose()
        store().set(EXPLOREVAL_STORE_KEY, record.model_dump(mode="json"))
        state.messages = inspect_messages_for(record, system=None)
        last = record.steps[-1].raw_output if record.steps else ""
        state.output = ModelOutput.from_content(client.model, last or "")
        state.completed = True
        return state

    return solve


# -> Any: an inspect_ai Scorer (optional extra, imported lazily)
@scorer(metrics={"*": [mean(), stderr()]})
def exploreval_score() -> Any:
    """``success`` and the family's headline metrics from the stored episode record."""

    async def score(state: TaskState, target: Target) -> Score:
        from exploreval.interop._inspect_export import episode_score

        data = store().get(EXPLOREVAL_STORE_KEY)
        if data is None:
            return Score(value={"success": 0.0}, explanation="the episode did not run")
        return episode_score(EpisodeRecord.model_validate(data))

    return score


# -> Any: an inspect_ai task function (optional extra, imported lazily)
def _make_task(family: str, default_env: str) -> Any:
    def exploreval_task(
        preset: str | None = None,
        seeds: str = "0-4",
        env: str = default_env,
        harness: str = "default",
        history: str = "none",
        max_steps: int | None = None,
        constrain: str = "off",
        temperature: float | None = None,
        max_tokens: int | None = None,
        **env_options: Any,
    ) -> Task:
        spec = env_spec(env)
        if spec.family != family:
            raise ValueError(f"env {env} is of family {spec.family!r}, not {family!r}")
        presets = [preset] if preset else [spec.default_preset]
        samples = [
            Sample(
                id=f"{p or 'default'}:seed{seed}",
                input=f"{env} preset {p or 'default'} seed {seed}",
                target="",
                metadata={"env_id": env, "preset": p, "seed": seed, "family": family},
            )
            for p in presets
            for seed in parse_seeds(seeds)
        ]
        sampling = {k: v for k, v in {"temperature": temperature,
                                      "max_tokens": max_tokens}.items() if v is not None}  # fmt: skip
        agent = {"harness": harness, "history": history, "constrain": constrain,
                 "sampling": sampling, "label": None}  # fmt: skip
        return Task(
            dataset=MemoryDataset(samples, name=env),
            solver=exploreval_episode(family, env, agent, dict(env_options), max_steps),
            scorer=exploreval_score(),
            metadata={"exploreval_family": family, "env_id": env},
        )

    exploreval_task.__name__ = family
    exploreval_task.__qualname__ = family
    exploreval_task.__doc__ = f"exploreval's {family} environments ({default_env} by default)."
    return task(name=family)(exploreval_task)


def _register() -> dict[str, Any]:
    load_plugins()
    first: dict[str, str] = {}
    for spec in sorted(list_envs(), key=lambda s: s.env_id):
        first.setdefault(spec.family, spec.env_id)
    return {family: _make_task(family, env_id) for family, env_id in first.items()}


#: The registered tasks by family (inspect finds them in its registry).
TASKS = _register()
globals().update(TASKS)
