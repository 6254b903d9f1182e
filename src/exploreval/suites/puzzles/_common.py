"""What the three reasoning-bound puzzles share: the ``stop`` action, the step limit,
the per-step ``info`` keys and preset-parameter validation.

TIDE (Yan et al., Appendix C.9) gives every puzzle the same protocol: one action per
turn, ``stop`` ends the episode, invalid actions are reported and cost a turn, and the
episode also ends when the puzzle is solved or the step budget is spent. Keeping that in
one base class makes the three envs differ only in their state and rules.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from exploreval.core import INVALID_ACTION, StepInfo, TextEnv
from exploreval.suites.puzzles._errors import PuzzleParamError
from exploreval.suites.puzzles._info import PuzzleStepInfo
from exploreval.suites.puzzles._tide_files import InstanceCheck, InstanceFile, read_instance_file

#: The action that ends an episode on the agent's own decision (paper: ``<action>stop</action>``).
STOP_ACTION = "stop"

#: Step limit of every puzzle in TIDE's released run scripts (``MAX_STEPS=30`` in
#: ``scripts/{blocksworld,frozen_lake,sudoku}/run_exp.sh``); AUV's t_max (20/30/20) is a
#: separate evaluation window that never exceeds it.
PAPER_MAX_STEPS = 30


@dataclass
class Outcome:
    """What applying one (non-stop) action did."""

    valid: bool
    reason: str | None = None
    #: Entity ids the action interacted with (TIDE memory-recall diagnostics).
    acted: list[str] = field(default_factory=list)
    #: Family-specific info keys (JSON-serialisable).
    extra: dict[str, Any] = field(default_factory=dict)
    #: The episode ends for a reason other than success (e.g. falling into a hole).
    failed: bool = False


class PuzzleEnv(TextEnv):
    """Episode protocol shared by FrozenLake, BlocksWorld and Sudoku.

    Subclasses implement ``_new_instance`` (build the puzzle from ``self.np_random``),
    ``_apply`` (one non-stop action), ``_render``, ``_solved``, ``_progress``,
    ``_entities_seen`` and ``ground_truth``.
    """

    run_inline: ClassVar[bool] = True  # microsecond steps: no thread hop
    info_model: ClassVar[type[StepInfo]] = PuzzleStepInfo
    #: Option names the puzzle reads (presets and ``options``); anything else is a typo.
    _OPTIONS: ClassVar[tuple[str, ...]] = ()

    def __init__(self, preset: str | None = None, **options: Any) -> None:
        super().__init__(preset, **options)
        # at construction, so a typo is refused before a run starts (not at the first reset)
        check_known_params(self.params, self._OPTIONS, self.env_id or type(self).__name__)
        self._instances_file()  # a bad instance file is refused before a run starts

    #: The TIDE instance-file format the ``instances`` option reads (:mod:`._tide_files`), and
    #: the checks each of its instances must pass beyond its field types.
    instance_kind: ClassVar[str | None] = None
    instance_checks: ClassVar[tuple[InstanceCheck, ...]] = ()

    def _instances_file(self) -> InstanceFile | None:
        """The ``instances`` file as it is now (read by content at every call), or None."""
        path = self.params.get("instances")
        if path is None or self.instance_kind is None:
            return None
        check = self.instance_checks[0] if self.instance_checks else None
        return read_instance_file(str(path), self.instance_kind, check)

    def _file_instance(self) -> tuple[InstanceFile, int, Any] | None:
        """(file, index, item) of this episode's instance when playing a file, else None."""
        instances = self._instances_file()
        if instances is None:
            return None
        index = self._instance_index()
        item = instances.item(index)  # refuses an unseeded reset or a seed past the file
        assert index is not None
        return instances, index, item

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        # Remember whether *this* reset was seeded: Gymnasium keeps ``np_random_seed`` from
        # the last seeded reset, which would pin every later unseeded episode to the
        # difficulty of that dataset instance.
        self._reset_seed = seed
        return super().reset(seed=seed, options=options)

    def _reset(self, options: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        self._max_steps = int_param(self.params, "max_steps", PAPER_MAX_STEPS, low=1)
        self._done = False
        self._new_instance(options)
        obs = self._render()
        info: dict[str, Any] = {
            "progress": self._progress(),
            "entities_seen": self._entities_seen(),
            "max_steps": self._max_steps,
        }
        info.update(self._reset_info())
        return obs, info

    @property
    def max_steps(self) -> int | None:
        if hasattr(self, "_max_steps"):
            return self._max_steps
        return int_param(self.params, "max_steps", PAPER_MAX_STEPS, low=1)

    def _step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        done = getattr(self, "_done", None)
        if done is None or done:
            when = "before reset()" if done is None else "after the episode ended"
            raise RuntimeError(f"{self.env_id}: step() called {when}; call reset() first")
        text = action.strip()
        stopped = text.rstrip(".!").strip().lower() == STOP_ACTION
        if stopped:
            outcome = Outcome(valid=True)
        elif action == INVALID_ACTION:
            outcome = Outcome(valid=False, reason="no action could be parsed from the reply")
        elif not text:
            outcome = Outcome(valid=False, reason="empty action")
        else:
            outcome = self._apply(text)
        solved = self._solved()
        terminated = solved or stopped or outcome.failed
        truncated = not terminated and self.t >= self._max_steps
        self._done = terminated or truncated
        info: dict[str, Any] = {
            "action": text,
            "valid": outcome.valid,
            "success": solved,
            "progress": self._progress(),
            "entities_seen": self._entities_seen(),
            "entities_acted": outcome.acted if outcome.valid else [],
            "stopped": stopped,
        }
        if not outcome.valid:
            info["invalid_reason"] = outcome.reason or "invalid action"
        info.update(outcome.extra)
        return self._render(), 1.0 if solved else 0.0, terminated, truncated, info

    # -- to implement ----------------------------------------------------------------
    @abc.abstractmethod
    def _new_instance(self, options: dict[str, Any]) -> None:
        """Generate the puzzle for this episode from ``self.np_random``."""

    @abc.abstractmethod
    def _apply(self, action: str) -> Outcome:
        """Apply one action other than ``stop``; never raise on bad input."""

    @abc.abstractmethod
    def _render(self) -> str:
        """The observation text: equal states render to equal text (Loop Ratio hashes it)."""

    @abc.abstractmethod
    def _solved(self) -> bool: ...

    @abc.abstractmethod
    def _progress(self) -> float: ...

    @abc.abstractmethod
    def _entities_seen(self) -> list[str]: ...

    def _reset_info(self) -> dict[str, Any]:
        return {}

    # -- helpers -------------------------------------------------------------------
    def _instance_index(self) -> int | None:
        """The seed of the current episode's ``reset`` (= dataset instance index); None if unseeded."""
        seed = getattr(self, "_reset_seed", None)
        if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
            return None
        return int(seed)


def int_param(
    params: dict[str, Any],
    name: str,
    default: int,
    *,
    low: int | None = None,
    high: int | None = None,
) -> int:
    """Read an integer option with a message naming the field when it is wrong."""
    value = params.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise PuzzleParamError(f"option {name!r} must be an integer, got {value!r}")
    value = int(value)
    if low is not None and value < low:
        raise PuzzleParamError(f"option {name!r} must be >= {low}, got {value}")
    if high is not None and value > high:
        raise PuzzleParamError(f"option {name!r} must be <= {high}, got {value}")
    return value


def range_param(
    params: dict[str, Any], name: str, default: tuple[int, int], *, low: int, high: int
) -> tuple[int, int]:
    """Read ``name`` as an int or an inclusive ``[lo, hi]`` pair within ``[low, high]``."""
    value: Any = params.get(name, list(default))
    if isinstance(value, int | np.integer) and not isinstance(value, bool):
        lo = hi = int(value)
    elif (
        isinstance(value, Sequence)
        and not isinstance(value, str)
        and len(value) == 2
        and all(isinstance(v, int | np.integer) and not isinstance(v, bool) for v in value)
    ):
        lo, hi = int(value[0]), int(value[1])
    else:
        raise PuzzleParamError(
            f"option {name!r} must be an integer or an inclusive [low, high] pair, got {value!r}"
        )
    if lo > hi:
        raise PuzzleParamError(f"option {name!r}: range [{lo}, {hi}] is empty")
    if lo < low or hi > high:
        raise PuzzleParamError(f"option {name!r} must lie within [{low}, {high}], got [{lo}, {hi}]")
    return lo, hi


def float_param(
    params: dict[str, Any], name: str, default: float, *, low: float, high: float
) -> float:
    value = params.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int | float | np.floating | np.integer):
        raise PuzzleParamError(f"option {name!r} must be a number, got {value!r}")
    value = float(value)
    if not low <= value <= high:
        raise PuzzleParamError(f"option {name!r} must lie within [{low}, {high}], got {value}")
    return value


def choice_param(params: dict[str, Any], name: str, default: str, choices: Sequence[str]) -> str:
    value = params.get(name, default)
    if value not in choices:
        raise PuzzleParamError(f"option {name!r} must be one of {list(choices)}, got {value!r}")
    return str(value)


def check_known_params(params: dict[str, Any], known: Sequence[str], env_id: str) -> None:
    """Reject typos in presets/options instead of silently ignoring them."""
    unknown = sorted(set(params) - set(known))
    if unknown:
        raise PuzzleParamError(
            f"{env_id}: unknown option(s) {unknown}; known options: {sorted(known)}"
        )
