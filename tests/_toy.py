"""A tiny registered env + agents used to test the spine independently of the suites."""

from __future__ import annotations

import os
import time
from typing import Any

from exploreval.agents import Harness, ParsedAction, ScriptedAgent, register_agent, register_harness
from exploreval.core import TextEnv, register_env


class LineWalkEnv(TextEnv):
    """Walk from 0 to a seeded target on a line with '+'/'-' actions."""

    presets = {"short": {"length": 3}, "long": {"length": 8}}
    default_preset = "short"

    def _reset(self, options: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        self.pos = 0
        self.target = int(self.np_random.integers(1, self.params.get("length", 3) + 1))
        return self._obs(), {"position": self.pos}

    def _obs(self) -> str:
        return f"You are at {self.pos}. Target is {self.target}."

    @property
    def max_steps(self) -> int | None:
        return 20

    def _step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        pause = float(self.params.get("step_sleep_s", 0))  # long episodes for lifetime tests
        if pause:
            time.sleep(pause)
        action = action.strip()
        if action not in ("+", "-"):
            info = {
                "valid": False,
                "invalid_reason": f"unknown action {action!r}",
                "position": self.pos,
            }
        else:
            self.pos += 1 if action == "+" else -1
            info = {"position": self.pos}
        done = self.pos == self.target
        info["success"] = done
        return self._obs(), float(done), done, False, info

    def ground_truth(self) -> dict[str, Any]:
        return {"target": self.target}


class Forward(ScriptedAgent):
    name = "forward"

    def choose(self, observation: str, info: dict[str, Any]) -> str:
        delay = float(os.environ.get("TOY_SLEEP", "0"))  # slows crash tests, not part of the id
        if delay:
            time.sleep(delay)
        return "+"


class Wander(ScriptedAgent):
    name = "random"

    def choose(self, observation: str, info: dict[str, Any]) -> str:
        return str(self.rng.choice(["+", "-"]))


class PlusHarness(Harness):
    name = "default"

    def system_prompt(self) -> str:
        return "Reply with + or - inside <a></a>. " + "Long rules. " * 200

    def parse(self, text: str) -> ParsedAction:
        import re

        match = re.search(r"<a>\s*([+-])\s*</a>", text)
        if not match:
            return ParsedAction(None, "no <a>+</a> or <a>-</a> tag found")
        return ParsedAction(match.group(1))


def embedded_line_walk(seeds: str, **extra: Any) -> dict[str, Any]:
    """An experiment of short line walks played by the embedded model (``local:smollm2``),
    two requests in flight at most: what the executors' embedded-model tests run."""
    return {
        "suites": [{"env_id": "test/LineWalk-v0", "presets": ["short"], "seeds": seeds}],
        "agents": [
            {
                "kind": "llm",
                "model": "local:smollm2",
                "history": "window:1",
                "sampling": {"temperature": 0.0, "max_tokens": 12},
                "max_concurrency": 2,
            }
        ],
        "plugins": ["_toy"],
        "max_steps": 3,
        "concurrency": 2,
        **extra,
    }


def register_toy() -> None:
    register_env("test/LineWalk-v0", LineWalkEnv, family="toy", description="toy line walk")
    register_agent("forward", Forward, families=("toy",))
    register_agent("random", Wander, families=("toy",))
    register_harness("default", PlusHarness, families=("toy",))


register_toy()


class NeedsToolEnv(LineWalkEnv):
    """A line walk that needs a system tool: a node started with ``TOY_LACKS_TOOL`` lacks it
    (how a cluster test gives one node a missing requirement)."""

    @classmethod
    def preflight(cls, options: dict[str, Any]) -> list[str]:
        if os.environ.get("TOY_LACKS_TOOL"):
            return ["the toytool program is not installed: apt-get install toytool"]
        return []


register_env("test/NeedsTool-v0", NeedsToolEnv, family="toy", description="needs a tool")
