"""A one-shot-shell stand-in for the tmux env, for checks and benchmarks of the task side.

Each command runs in a fresh bwrap over the same work-dir copy (files persist, the shell and
/tmp do not), which is enough to drive the scripted agents end to end (inject -> act ->
detect -> verify) without tmux. Episodes of the suite proper run in the sandbox env.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from exploreval.agents import EpisodeContext, ScriptedAgent
from exploreval.suites.terminal._bwrap_check import FAST_RUNNER, _quote, _reward, run_sandboxed
from exploreval.suites.terminal._contract import StepEvidence, TerminalTask
from exploreval.suites.terminal._detect import EpisodeDetection, detect_episode
from exploreval.suites.terminal._inject import inject


@dataclass
class SimResult:
    resolved: bool
    detection: EpisodeDetection
    evidence: list[StepEvidence]


def simulate(
    agent: ScriptedAgent,
    task: TerminalTask,
    level: int | None,
    variant: str | None = None,
    max_steps: int = 25,
) -> SimResult:
    """Run ``agent`` on ``task`` with the injection (level, variant); verify with the tests."""
    with tempfile.TemporaryDirectory(prefix="exploreval-sim-") as tmp:
        work = Path(tmp) / "app"
        if task.workdir is None:
            raise ValueError(f"task {task.id} runs in a built image; simulate it through the env")
        shutil.copytree(task.workdir, work, symlinks=True)
        manifest = inject(task, level, variant, work)
        ctx = EpisodeContext(
            env_id="terminal/sim",
            family="terminal",
            preset=None,
            seed=0,
            repeat=0,
            rng=np.random.default_rng(0),
            task_description=task.instruction,
            ground_truth=task.oracle_truth() if agent.privileged else None,
        )
        agent.ctx = ctx
        agent.start(ctx, task.instruction)
        observation = task.instruction
        evidence: list[StepEvidence] = []
        for _ in range(max_steps):
            act = json.loads(agent.choose(observation, {}))
            commands = [c["keystrokes"].rstrip("\n") for c in act["commands"]]
            outputs: list[str] = []
            for cmd in commands:
                run = run_sandboxed(
                    work, cmd, mount=task.container_workdir, env=task.env, timeout_s=30
                )
                outputs.append(f"$ {cmd}\n{run.output}")
            observation = "".join(outputs)
            if commands:
                evidence.append(StepEvidence(commands=tuple(commands), output=observation))
            if act["task_complete"]:
                break
        fast = task.tests_dir is not None and (task.tests_dir / "test_outputs.py").is_file()
        command = (
            f"python3 -c {_quote(FAST_RUNNER)} /tests/test_outputs.py"
            if fast
            else task.test_command
        )
        logs = Path(tmp) / "logs"
        (logs / "verifier").mkdir(parents=True)
        test = run_sandboxed(
            work,
            command,
            mount=task.container_workdir,
            tests_dir=task.tests_dir,
            logs_dir=logs,
            env=task.env,
            timeout_s=task.test_timeout_s,
        )
        if task.parser == "reward_file" and not fast:
            resolved = _reward(logs / "verifier")
        else:
            resolved = test.returncode == 0 and not test.timed_out
        return SimResult(resolved, detect_episode(manifest, evidence), evidence)
