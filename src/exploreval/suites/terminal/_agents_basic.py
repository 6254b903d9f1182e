"""Two helper agents: ``random`` (harmless keystrokes, for the env checker) and ``gold``
(privileged: runs the gold solution from the pane as Terminal-Bench's oracle does, then
completes).

The paper's scripted baselines (oracle, curious, incurious) are in ``_agents.py``.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from exploreval.agents import EpisodeContext, ScriptedAgent

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


GOLD_MARKER = "EXPLOREVAL_GOLD_EOF"
#: Where the gold solution is written before it runs (Terminal-Bench's oracle copies it to
#: ``/oracle/solution.sh``; ``/tmp`` is writable in every kind of sandbox).
GOLD_SCRIPT = "/tmp/exploreval-gold/solution.sh"


def gold_keystrokes(solution: str) -> str:
    """Keystrokes that run ``solution`` as Terminal-Bench's oracle does: written to a file, then
    ``bash <file>`` in the pane (its standard input the terminal, as there). The file goes
    through a here-document in base64: the script's own text typed into an interactive shell is
    read by readline, where a TAB is completion (terminal-bench-core's ``write-compressor``:
    its gold's tab-indented Rust came out as ``dout.push``)."""
    data = base64.encodebytes(solution.encode()).decode()
    folder = GOLD_SCRIPT.rsplit("/", 1)[0]
    # one command line (its here-document after it): the pane's next prompt is the script's end
    return (f"mkdir -p {folder} && base64 -d > {GOLD_SCRIPT} <<'{GOLD_MARKER}' && bash "
            f"{GOLD_SCRIPT}\n{data}{GOLD_MARKER}\n")  # fmt: skip


class GoldSolutionAgent(ScriptedAgent):
    """Privileged: runs the task's gold solution in the pane, then declares the task complete."""

    name = "gold"
    privileged = True

    def start(self, ctx: EpisodeContext, observation: str) -> None:
        truth = ctx.ground_truth or {}
        self.solution: str | None = truth.get("solution")
        self.sent = False

    def choose(self, observation: str, info: dict[str, Any]) -> str:
        if self.sent or not self.solution:
            return json.dumps({"commands": [], "task_complete": True})
        self.sent = True
        keys = gold_keystrokes(self.solution)
        return json.dumps(
            {"commands": [{"keystrokes": keys, "duration": 1.0}], "task_complete": False}
        )
