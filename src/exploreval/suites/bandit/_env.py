"""``exploreval/Bandit-v0``: a stochastic Bernoulli multi-armed bandit with text actions."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from exploreval.core import StepInfo, TextEnv, option_bool
from exploreval.suites.bandit._info import BanditStepInfo
from exploreval.suites.bandit._instance import (
    INSTANCE_PRESETS,
    BanditInstance,
    resolve_labels,
)

#: What an unparsable or unknown action does: lose the round, or pull a random arm.
INVALID_FALLBACKS = ("forfeit", "random")


class BanditEnv(TextEnv):
    """Stochastic Bernoulli bandit (Krishnamurthy et al. 2024, Section 2).

    Each round the agent names one arm by its label and receives a 0/1 reward drawn from
    that arm's Bernoulli mean with the env's own seeded generator. The canonical means are
    shuffled over the display positions per seed, so the best arm is at a random position
    with a random label. The text observation stays short; what metrics need (position of
    the arm pulled, reward) is in ``info``, and the means live in ``ground_truth()``.

    Params: ``n_arms``, ``gap``, ``horizon`` or explicit ``means``; ``labels``
    (``"colors"``, ``"letters"`` or a list); ``shuffle`` (default true);
    ``invalid_fallback``: ``"forfeit"`` (an invalid round pulls nothing, reward 0) or
    ``"random"`` (it pulls a uniformly random arm; the step is still marked invalid).
    """

    run_inline: ClassVar[bool] = True  # microsecond steps: no thread hop
    info_model: ClassVar[type[StepInfo]] = BanditStepInfo

    presets: ClassVar[dict[str, dict[str, Any]]] = INSTANCE_PRESETS
    default_preset: ClassVar[str | None] = "hard"

    def __init__(self, preset: str | None = None, **options: Any) -> None:
        super().__init__(preset, **options)
        unknown = set(options) - {
            "n_arms",
            "gap",
            "horizon",
            "means",
            "labels",
            "shuffle",
            "invalid_fallback",
        }
        if unknown:
            raise ValueError(
                f"{self.env_id or 'Bandit'}: unknown option(s) {sorted(unknown)}; expected "
                "n_arms, gap, horizon, means, labels, shuffle, invalid_fallback"
            )
        if options.get("means") is not None:
            # explicit means replace the preset's two-level instance (its K and gap)
            for key in ("n_arms", "gap"):
                if key not in options:
                    self.params.pop(key, None)
        self.instance = BanditInstance.from_params(self.params)
        self.labels = resolve_labels(self.params.get("labels", "colors"), self.instance.n_arms)
        self.shuffle = option_bool(self.params.get("shuffle", True), "shuffle")
        fallback = str(self.params.get("invalid_fallback", "forfeit"))
        if fallback not in INVALID_FALLBACKS:
            raise ValueError(
                f"invalid_fallback={fallback!r}: expected one of {', '.join(INVALID_FALLBACKS)}"
            )
        self.invalid_fallback = fallback
        self._lookup = {label.lower(): i for i, label in enumerate(self.labels)}
        self.means = np.asarray(self.instance.means, dtype=float)
        self.permutation = np.arange(self.instance.n_arms)
        self.counts = np.zeros(self.instance.n_arms, dtype=np.int64)
        self._started = False

    # -- episode -------------------------------------------------------------------------
    @property
    def max_steps(self) -> int | None:
        return self.instance.horizon

    def _reset(self, options: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        k = self.instance.n_arms
        canonical = np.asarray(self.instance.means, dtype=float)
        # permutation[p] = canonical index shown at display position p
        self.permutation = self.np_random.permutation(k) if self.shuffle else np.arange(k)
        self.means = canonical[self.permutation]
        self.counts = np.zeros(k, dtype=np.int64)
        self._started = True
        info = {
            "round": 0,
            "n_arms": k,
            "horizon": self.instance.horizon,
            "arm_labels": list(self.labels),
            "entities_seen": list(self.labels),
            "progress": 0.0,
        }
        return self._intro(), info

    def _intro(self) -> str:
        return (
            f"Bernoulli bandit with {self.instance.n_arms} arms ({', '.join(self.labels)}) "
            f"and {self.instance.horizon} rounds. Each round, name one arm."
        )

    def _step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        horizon = self.instance.horizon
        if not self._started or self.t > horizon:
            # the base class has already counted this step; undo it so the error is clean
            self.t -= 1
            when = "before reset()" if not self._started else f"after the last round ({horizon})"
            raise RuntimeError(f"{self.env_id or 'Bandit'}: step() called {when}; call reset()")
        text = action.strip()
        arm = self._lookup.get(text.lower())
        info: dict[str, Any] = {"round": self.t}
        if arm is None:
            info["valid"] = False
            info["invalid_reason"] = (
                f"unknown arm {text[:80]!r}; expected one of {', '.join(self.labels)}"
            )
            if self.invalid_fallback == "random":
                arm = int(self.np_random.integers(self.instance.n_arms))
                info["fallback"] = "random"
        if arm is None:
            reward = 0.0
            info.update(arm=None, label=None, reward=0.0, entities_seen=[], entities_acted=[])
            obs = f"Round {self.t}/{horizon}: invalid action, no arm pulled, reward 0."
        else:
            reward = float(self.np_random.random() < self.means[arm])
            self.counts[arm] += 1
            label = self.labels[arm]
            info.update(
                arm=arm,
                label=label,
                reward=reward,
                entities_seen=[label],
                entities_acted=[label],
            )
            note = " (random fallback for an invalid action)" if "fallback" in info else ""
            obs = f"Round {self.t}/{horizon}: {label} gave reward {int(reward)}{note}."
        info["progress"] = self.t / horizon
        done = self.t >= horizon
        if done:
            info["success"] = self._identified_best_arm()
        return obs, reward, done, False, info

    def _identified_best_arm(self) -> bool:
        """Success: a best arm is among the most-pulled arms of the episode."""
        if not self.counts.any():
            return False
        top = self.counts == self.counts.max()
        best = self.means == self.means.max()
        return bool((top & best).any())

    def ground_truth(self) -> dict[str, Any]:
        best = np.flatnonzero(self.means == self.means.max())
        return {
            "means": [float(m) for m in self.means],
            "best_arms": [int(i) for i in best],
            "labels": list(self.labels),
            "permutation": [int(i) for i in self.permutation],
            "canonical_means": list(self.instance.means),
            "gap": self.instance.gap,
            "n_arms": self.instance.n_arms,
            "horizon": self.instance.horizon,
            "instance": self.instance.label,
        }

    def task_description(self) -> str:
        return (
            f"There are {self.instance.n_arms} arms named {', '.join(self.labels)}. Each has a "
            "fixed but unknown probability of giving reward 1 (otherwise 0). You have "
            f"{self.instance.horizon} rounds; maximise the total reward. Answer with one arm name."
        )
