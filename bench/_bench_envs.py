"""The runner benchmark's env, harness and agent, in a module of their own: with ``workers`` above
1 the episodes are played in worker processes, which import it as a plugin (``plugins:
["_bench_envs"]``); what only the benchmark's own script registers, they could not see."""

from __future__ import annotations

from typing import Any

from exploreval.agents import Harness, ParsedAction, ScriptedAgent, register_agent, register_harness
from exploreval.core import TextEnv, register_env


class CounterEnv(TextEnv):
    """Counts steps; ends after ``length`` steps. Costs nothing, so the runner is what we time."""

    presets = {"default": {"length": 50}}
    default_preset = "default"
    run_inline = True  # microsecond steps, as the built-in grid, bandit and puzzle envs declare

    def _reset(self, options: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        self.count = 0
        return "count 0", {"count": 0}

    def _step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        self.count += 1
        done = self.count >= int(self.params["length"])
        return f"count {self.count}", 0.0, done, False, {"count": self.count, "success": done}

    def ground_truth(self) -> dict[str, Any]:
        return {"length": self.params["length"]}


class CounterHarness(Harness):
    name = "default"

    def system_prompt(self) -> str:
        return "You count. Answer <a>next</a>. " + "Rules. " * 300

    def parse(self, text: str) -> ParsedAction:
        return ParsedAction("next") if "<a>next</a>" in text else ParsedAction(None, "no tag")


class Next(ScriptedAgent):
    name = "random"

    def choose(self, observation: str, info: dict[str, Any]) -> str:
        return "next"


class BlockingCounterEnv(CounterEnv):
    """The same env run the default way for sync envs: each step on a worker thread (what an env
    whose steps may block, such as the terminal's, pays)."""

    run_inline = False


register_env("bench/Counter-v0", CounterEnv, family="bench")
register_env("bench/BlockingCounter-v0", BlockingCounterEnv, family="bench")
register_harness("default", CounterHarness, families=("bench",))
register_agent("random", Next, families=("bench",))
