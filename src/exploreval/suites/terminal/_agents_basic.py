"""Two helper agents: ``random`` (harmless keystrokes, for the env checker) and ``gold``
(privileged: runs the gold solution from the pane as the task's own oracle does,
:mod:`._oracle`, then completes).

The paper's scripted baselines (oracle, curious, incurious) are in ``_agents.py``.
"""

from __future__ import annotations

import json
from typing import Any

from exploreval.agents import EpisodeContext, ScriptedAgent
from exploreval.suites.terminal._oracle import GOLD_SCRIPT, gold_keystrokes, oracle_keystrokes

__all__ = ["GOLD_SCRIPT", "GoldSolutionAgent", "RandomTerminalAgent", "gold_keystrokes"]

_RANDOM_COMMANDS = ("ls -la\n", "pwd\n", "cat *.txt\n", "echo hello\n", "ls /\n", "C-c", "Up")


class RandomTerminalAgent(ScriptedAgent):
    """Random harmless keystrokes; ends the task after a few steps."""

    name = "random"

    def choose(self, observation: str, info: dict[str, Any]) -> str:
        keys = _RANDOM_COMMANDS[int(self.rng.integers(len(_RANDOM_COMMANDS)))]
        done = bool(self.rng.random() < 0.2)
        return json.dumps(
            {"commands": [{"keystrokes": keys, "duration": 0.1}], "task_complete": done}
        )


class GoldSolutionAgent(ScriptedAgent):
    """Privileged: runs the task's gold solution in the pane, then declares the task complete."""

    name = "gold"
    privileged = True

    def start(self, ctx: EpisodeContext, observation: str) -> None:
        self.keystrokes = oracle_keystrokes(ctx.ground_truth or {})
        self.sent = False

    def choose(self, observation: str, info: dict[str, Any]) -> str:
        if self.sent or self.keystrokes is None:
            return json.dumps({"commands": [], "task_complete": True})
        self.sent = True
        return json.dumps(
            {"commands": [{"keystrokes": self.keystrokes, "duration": 1.0}], "task_complete": False}
        )
