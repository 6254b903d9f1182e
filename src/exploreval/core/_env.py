"""The environment contract shared by every suite.

Environments are Gymnasium environments whose observations and actions are text. They own their
randomness (``self.np_random``, seeded by ``reset(seed=...)``) and expose the episode's hidden
ground truth as a JSON-serialisable dict so metrics can be recomputed later from the stored record.

What the runner relies on, beyond Gymnasium's API:

* **Off the event loop.** The runner calls ``areset`` / ``astep`` / ``aclose``. For a plain
  ``TextEnv`` they run the sync methods on a worker thread, so a shell command or a game engine
  never stalls other episodes; envs whose steps take microseconds set ``run_inline = True``.
  :class:`AsyncTextEnv` is for envs that are naturally async (subprocesses, sockets): they
  implement ``_areset`` / ``_astep`` / ``_aclose`` and get the sync API for free.
* **Lifecycle.** One env instance plays one episode in the runner, and ``aclose`` is awaited on
  every ending (success, error, timeout, cancellation). ``on_episode_end`` is the per-episode
  cleanup hook (also called by a second ``reset``); ``self.shared`` (a
  :class:`~exploreval.core.SharedResources`) builds what several episodes share once per run
  (a task template, a compiled game). Scratch directories come from
  :func:`~exploreval.core.scratch_dir`, which a guardian deletes even after ``kill -9``.
* **Timeouts.** An episode timeout cancels the episode's coroutine: async envs are interrupted at
  their next await; a sync step stuck on a thread is abandoned and the env's ``close`` must make
  it return (kill the subprocess it waits on).
* **Phases and tasks.** ``phase`` and ``task_index`` say what the next action belongs to: a
  multi-task env plays several tasks in one world (the agent keeps its memory) and may end with an
  evaluation phase (a quiz). Only steps of the ``"task"`` phase are acting steps: step caps, loop
  and invalid-action rates and TIDE curves count those. With ``step_cap_scope = "task"`` the
  runner hands its step cap to the env (``task_step_cap``), which applies it to every task.
* **Typed info.** ``info_model`` is the pydantic model of the env's step info; the runner
  validates each step against it.
* **Artifacts.** ``artifact_dir`` is a per-episode directory inside the run directory
  (``RUN_DIR/artifacts/<episode_id>/``), set by the runner before ``reset``, for files an env
  keeps with the run (terminal transcripts...); ``None`` outside a run. Create it on first write.
* **Preflight.** ``preflight(options)`` (a classmethod) returns problems that make every episode
  of the env fail (a missing system tool); the runner calls it once per env before the first
  episode and stops the run with one message listing them.
"""

from __future__ import annotations

import abc
import asyncio
import functools
from pathlib import Path
from typing import Any, ClassVar, Literal

import gymnasium as gym
from gymnasium import spaces

from exploreval.core._info import StepInfo
from exploreval.core._lifecycle import DEFAULT_SHARED, SharedResources, run_off_loop
from exploreval.core._records import TASK_PHASE

#: Action string the runner sends when the harness could not parse the model output.
#: Every env must treat it (like any unrecognised action) as an invalid step that
#: costs one step and leaves the state unchanged.
INVALID_ACTION = "<invalid>"

_TEXT_CHARSET = "".join(chr(c) for c in range(32, 127)) + "\n\t"

StepResult = tuple[str, float, bool, bool, dict[str, Any]]


class TextEnv(gym.Env[str, str], abc.ABC):
    """Base class: a Gymnasium env with text observations and text actions.

    Subclasses implement ``_reset`` / ``_step`` / ``ground_truth``. The base class handles seeding
    (``self.np_random`` is reseeded on ``reset(seed=...)``) and the bookkeeping every suite needs.
    Conventions for ``info`` are the fields of :class:`~exploreval.core.StepInfo`.
    """

    metadata: dict[str, Any] = {"render_modes": ["ansi"]}  # noqa: RUF012 - gymnasium convention
    #: Set by the registry: the versioned id this class was registered under.
    env_id: ClassVar[str] = ""
    #: Named parameter bundles accepted by ``__init__(preset=...)``.
    presets: ClassVar[dict[str, dict[str, Any]]] = {}
    #: Preset used when none is given.
    default_preset: ClassVar[str | None] = None
    #: Steps cost microseconds of pure Python: the runner may call them on the event loop.
    run_inline: ClassVar[bool] = False
    #: The pydantic model of this env's step info.
    info_model: ClassVar[type[StepInfo]] = StepInfo
    #: Who applies the runner's step cap: the runner to the whole episode, or the env per task.
    step_cap_scope: ClassVar[Literal["episode", "task"]] = "episode"
    #: Replays cannot be bit-identical (timing, processes): the checker skips replay checks.
    nondeterministic: ClassVar[bool] = False

    observation_space: spaces.Text
    action_space: spaces.Text

    def __init__(self, preset: str | None = None, **options: Any) -> None:
        super().__init__()
        self.preset = preset if preset is not None else self.default_preset
        if self.preset is not None and self.presets and self.preset not in self.presets:
            from exploreval.core._registry import unknown_name_error

            raise unknown_name_error("preset", self.preset, list(self.presets), context=self.env_id)
        params: dict[str, Any] = dict(self.presets.get(self.preset, {})) if self.preset else {}
        params.update(options)
        self.params = params
        self.observation_space = spaces.Text(max_length=100_000, charset=_TEXT_CHARSET)
        self.action_space = spaces.Text(max_length=10_000, charset=_TEXT_CHARSET)
        self.t = 0
        self.render_mode = "ansi"
        self._last_obs = ""
        #: Built-once resources of the run (the runner replaces the process default).
        self.shared: SharedResources = DEFAULT_SHARED
        #: Per-task step cap handed down by the runner when ``step_cap_scope == "task"``.
        self.task_step_cap: int | None = None
        #: Per-episode directory in the run directory for kept files (set by the runner).
        self.artifact_dir: Path | None = None
        self._episode_active = False

    # -- Gymnasium API -------------------------------------------------------------
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        if self._episode_active:
            self.on_episode_end()
        super().reset(seed=seed)
        self.t = 0
        self._episode_active = True
        obs, info = self._reset(dict(options or {}))
        self._last_obs = obs
        return obs, info

    def step(self, action: str) -> StepResult:
        self.t += 1
        obs, reward, terminated, truncated, info = self._step(str(action))
        info.setdefault("valid", True)
        self._last_obs = obs
        return obs, float(reward), bool(terminated), bool(truncated), info

    def render(self) -> str:
        return self._last_obs

    def close(self) -> None:
        if self._episode_active:
            self._episode_active = False
            self.on_episode_end()
        super().close()

    # -- the runner's API: never blocks the event loop ------------------------------
    async def areset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        if self.run_inline:
            return self.reset(seed=seed, options=options)
        return await run_off_loop(functools.partial(self.reset, seed=seed, options=options))

    async def astep(self, action: str) -> StepResult:
        if self.run_inline:
            return self.step(action)
        return await run_off_loop(self.step, action)

    async def aclose(self) -> None:
        if self.run_inline:
            self.close()
        else:
            await run_off_loop(self.close)

    # -- to implement ----------------------------------------------------------------
    @abc.abstractmethod
    def _reset(self, options: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """Build the episode from ``self.np_random`` and ``self.params``."""

    @abc.abstractmethod
    def _step(self, action: str) -> StepResult:
        """Apply one text action."""

    @abc.abstractmethod
    def ground_truth(self) -> dict[str, Any]:
        """The episode's hidden truth (map, DAG, arm means...), JSON-serialisable."""

    # -- optional hooks ----------------------------------------------------------------
    #: Env options ``exploreval doctor`` checks :meth:`preflight` with besides the defaults, one
    #: line each (``{"Terminal-Bench task images": {"image": "build", "network": True}}``).
    doctor_variants: ClassVar[dict[str, dict[str, Any]]] = {}

    @classmethod
    def preflight(cls, options: dict[str, Any]) -> list[str]:
        """Problems that would fail every episode (e.g. a missing system tool), each with what
        to do about it; checked once per run before any episode. Default: none."""
        return []

    @classmethod
    def run_notes(cls, options: dict[str, Any]) -> list[str]:
        """Defaults a user should know before the episodes play (say, whether the agent has a
        network), each with how to change it; printed once when a run starts. Default: none."""
        return []

    def on_episode_end(self) -> None:  # noqa: B027 - optional hook
        """Release what one episode holds (processes, directories); called on every ending."""

    @property
    def max_steps(self) -> int | None:
        """Per-episode step cap the env enforces itself (``None`` = no cap)."""
        return None

    def task_description(self) -> str:
        """Rules of the game as a harness may show them (not hidden information)."""
        return ""

    @property
    def phase(self) -> str:
        """Phase the next action belongs to (``"task"`` = acting; e.g. ``"quiz"`` = evaluation)."""
        return TASK_PHASE

    @property
    def task_index(self) -> int:
        """Index of the task the next action belongs to (multi-task envs)."""
        return 0

    def task_outcomes(self) -> list[dict[str, Any]] | None:
        """Multi-task envs: one dict per task (``name``, ``success``, ``truncated``, ``reward``,
        ``info``); ``None`` for single-task envs (the runner derives one outcome)."""
        return None


class AsyncTextEnv(TextEnv):
    """A text env whose work is naturally async (subprocesses, sockets, engines).

    Implement ``_areset`` / ``_astep`` (and ``_aclose`` for cleanup). The sync Gymnasium API runs
    them on a private event loop, so ``gymnasium.make(...)`` users and the env checker work too;
    inside a running event loop, use the ``a*`` methods.
    """

    def __init__(self, preset: str | None = None, **options: Any) -> None:
        super().__init__(preset, **options)
        self._loop: asyncio.AbstractEventLoop | None = None

    # -> Any: whatever the coroutine returns
    def _run(self, coro: Any) -> Any:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            pass
        else:
            coro.close()
            raise RuntimeError(
                f"{type(self).__name__} is async: inside an event loop use areset/astep/aclose"
            )
        if self._loop is None or self._loop.is_closed():
            self._loop = asyncio.new_event_loop()
        return self._loop.run_until_complete(coro)

    def _reset(self, options: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        result: tuple[str, dict[str, Any]] = self._run(self._areset(options))
        return result

    def _step(self, action: str) -> StepResult:
        result: StepResult = self._run(self._astep(action))
        return result

    def on_episode_end(self) -> None:
        if self._loop is not None and not self._loop.is_closed():
            self._loop.run_until_complete(self._aclose())

    def close(self) -> None:
        super().close()
        if self._loop is not None and not self._loop.is_closed():
            self._loop.close()

    async def areset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        if self._episode_active:
            await self._aclose()
        gym.Env.reset(self, seed=seed)
        self.t = 0
        self._episode_active = True
        obs, info = await self._areset(dict(options or {}))
        self._last_obs = obs
        return obs, info

    async def astep(self, action: str) -> StepResult:
        self.t += 1
        obs, reward, terminated, truncated, info = await self._astep(str(action))
        info.setdefault("valid", True)
        self._last_obs = obs
        return obs, float(reward), bool(terminated), bool(truncated), info

    async def aclose(self) -> None:
        if self._episode_active:
            self._episode_active = False
            await self._aclose()

    @abc.abstractmethod
    async def _areset(self, options: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """Start the episode (processes, sandboxes) and return the first observation."""

    @abc.abstractmethod
    async def _astep(self, action: str) -> StepResult:
        """Apply one text action."""

    async def _aclose(self) -> None:  # noqa: B027 - optional hook
        """Release what the episode holds; must be idempotent."""


# Last statement: Gymnasium registration the import hook deferred while this module was loading.
from exploreval.core._hooks import env_module_loaded  # noqa: E402

env_module_loaded()
