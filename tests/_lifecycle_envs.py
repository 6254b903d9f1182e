"""Toy envs that exercise the env contract: blocking steps, async steps, held resources, shared
setup, nondeterminism, and multi-task episodes with a quiz phase.

Registered by ``register_lifecycle_envs()`` (family ``life``); the tests import this module.
Resources an env holds (a scratch directory and a child process in its own process group) are
recorded in ``HELD`` so tests can check they are gone after every kind of ending.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any, ClassVar

from exploreval.agents import (
    Harness,
    ParsedAction,
    ScriptedAgent,
    register_agent,
    register_harness,
)
from exploreval.core import (
    AsyncTextEnv,
    TextEnv,
    register_env,
    register_process_group,
    scratch_dir,
)

#: Live resources by env instance id: (scratch dir, child pid).
HELD: dict[int, tuple[Path, int]] = {}
#: Step concurrency observed across BlockingEnv instances.
CONCURRENCY = {"now": 0, "max": 0}
#: The thread each BlockingEnv step ran on (a step on the event loop's thread would hold it).
STEP_THREADS: list[int] = []
_LOCK = threading.Lock()


def _hold(env: TextEnv) -> None:
    """Take a scratch dir and a child process, as a sandboxed env would."""
    path = scratch_dir("life")
    (path / "marker").write_text("held")
    child = subprocess.Popen(["sleep", "1000"], start_new_session=True)
    register_process_group(child.pid)
    HELD[id(env)] = (path, child.pid)


def _release(env: TextEnv) -> None:
    held = HELD.pop(id(env), None)
    if held is None:
        return
    path, pid = held
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)
    for item in path.glob("*"):
        item.unlink()
    path.rmdir()


class _Walk:
    """Shared walk logic: reach a seeded target with '+'."""

    def _start(self, env: TextEnv) -> str:
        env.pos = 0  # type: ignore[attr-defined]
        env.target = int(env.np_random.integers(2, 4))  # type: ignore[attr-defined]
        return f"at 0, target {env.target}"  # type: ignore[attr-defined]

    def _move(self, env: TextEnv, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        if action.strip() != "+":
            return "stay", 0.0, False, False, {"valid": False, "invalid_reason": "only '+'"}
        env.pos += 1  # type: ignore[attr-defined]
        done = env.pos >= env.target  # type: ignore[attr-defined]
        return f"at {env.pos}", float(done), done, False, {"success": done}  # type: ignore[attr-defined]


class BlockingEnv(_Walk, TextEnv):
    """A sync env whose steps block (sleep) like a shell command or a game engine."""

    def _reset(self, options: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        _hold(self)
        return self._start(self), {}

    def _step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        with _LOCK:
            CONCURRENCY["now"] += 1
            CONCURRENCY["max"] = max(CONCURRENCY["max"], CONCURRENCY["now"])
            STEP_THREADS.append(threading.get_ident())
        try:
            time.sleep(float(self.params.get("delay", 0.2)))
        finally:
            with _LOCK:
                CONCURRENCY["now"] -= 1
        if self.params.get("fail_at") == self.t:
            raise RuntimeError("env broke mid-episode")
        return self._move(self, action)

    def on_episode_end(self) -> None:
        _release(self)

    def ground_truth(self) -> dict[str, Any]:
        return {"target": getattr(self, "target", None)}


class StuckSyncEnv(BlockingEnv):
    """A sync step that waits until ``close`` releases it (e.g. a process the env must kill)."""

    released: ClassVar[list[bool]] = []

    def _reset(self, options: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        self._gate = threading.Event()
        return super()._reset(options)

    def _step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        self._gate.wait(timeout=120)
        StuckSyncEnv.released.append(True)
        return "released", 0.0, False, True, {}

    def on_episode_end(self) -> None:
        self._gate.set()
        super().on_episode_end()


class AsyncWalkEnv(_Walk, AsyncTextEnv):
    """A natively async env; option ``hang`` makes its step wait forever (cancellable)."""

    closed: ClassVar[int] = 0

    async def _areset(self, options: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        _hold(self)
        await asyncio.sleep(0)
        return self._start(self), {}

    async def _astep(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        if self.params.get("hang"):
            await asyncio.sleep(3600)
        await asyncio.sleep(0.01)
        return self._move(self, action)

    async def _aclose(self) -> None:
        AsyncWalkEnv.closed += 1
        _release(self)

    def ground_truth(self) -> dict[str, Any]:
        return {"target": getattr(self, "target", None)}


class SharedSetupEnv(BlockingEnv):
    """Builds an expensive per-preset template once per run through ``self.shared``."""

    presets: ClassVar[dict[str, dict[str, Any]]] = {"a": {"delay": 0.01}, "b": {"delay": 0.01}}
    default_preset: ClassVar[str | None] = "a"
    builds: ClassVar[list[str]] = []
    disposed: ClassVar[list[str]] = []

    def _reset(self, options: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        def build() -> str:
            SharedSetupEnv.builds.append(str(self.preset))
            time.sleep(0.05)
            return f"template-{self.preset}"

        template = self.shared.get(("template", self.preset), build, SharedSetupEnv.disposed.append)
        obs, info = super()._reset(options)
        return f"{obs} ({template})", info


class ClockEnv(_Walk, TextEnv):
    """Observations carry the wall clock: replays cannot be identical."""

    run_inline = True
    nondeterministic = True

    def _reset(self, options: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        return self._start(self) + f" @ {time.perf_counter_ns()}", {}

    def _step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        obs, reward, done, trunc, info = self._move(self, action)
        return obs + f" @ {time.perf_counter_ns()}", reward, done, trunc, info

    def ground_truth(self) -> dict[str, Any]:
        return {}


class ClockEnvClaimingDeterminism(ClockEnv):
    nondeterministic = False


class QuizWalkEnv(TextEnv):
    """Two walk tasks in one world, then a quiz about the targets (the Task2Quiz shape).

    Each task: reach its target with '+' ('-' is allowed and wastes a step); the runner hands its
    step cap down (``step_cap_scope = "task"``) and a capped task moves on to the next one. Then
    one question per task: "What was the target of task i?"; the answer is a number.
    """

    run_inline = True
    step_cap_scope = "task"

    def _reset(self, options: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        self.targets = [int(self.np_random.integers(2, 5)) for _ in range(2)]
        self._task = 0
        self._phase = "task"
        self.pos = 0
        self.used = [0, 0]
        self.solved = [False, False]
        self.capped = [False, False]
        self.answers: list[str] = []
        return self._task_intro(), {}

    def _task_intro(self) -> str:
        return f"Task {self._task}: walk to {self.targets[self._task]} (you are at 0)."

    @property
    def phase(self) -> str:
        return self._phase

    @property
    def task_index(self) -> int:
        return self._task if self._phase == "task" else len(self.answers)

    def _step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        if self._phase == "quiz":
            return self._answer(action)
        info: dict[str, Any] = {}
        text = action.strip()
        if text not in ("+", "-"):
            info.update(valid=False, invalid_reason="only '+' or '-'")
        else:
            self.pos += 1 if text == "+" else -1
        self.used[self._task] += 1
        done = self.pos == self.targets[self._task]
        cap = self.task_step_cap
        capped = not done and cap is not None and self.used[self._task] >= cap
        if done or capped:
            self.solved[self._task] = done
            self.capped[self._task] = capped
            info.update(task_done=True, success=done)
            self._task += 1
            self.pos = 0
            if self._task == len(self.targets):
                self._phase = "quiz"
                return self._question(), float(done), False, False, info
            return self._task_intro(), float(done), False, False, info
        return f"at {self.pos}", 0.0, False, False, info

    def _question(self) -> str:
        return f"Quiz: what was the target of task {len(self.answers)}?"

    def _answer(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        index = len(self.answers)
        self.answers.append(action.strip())
        correct = action.strip() == str(self.targets[index])
        info: dict[str, Any] = {"correct": correct}
        if not re.fullmatch(r"-?\d+", action.strip()):
            info.update(valid=False, invalid_reason="answer is not a number")
        done = len(self.answers) == len(self.targets)
        return ("quiz over" if done else self._question()), float(correct), done, False, info

    def task_outcomes(self) -> list[dict[str, Any]]:
        return [
            {"name": f"walk to {t}", "success": s, "truncated": c, "steps": u, "reward": float(s)}
            for t, s, c, u in zip(self.targets, self.solved, self.capped, self.used, strict=True)
        ]

    def ground_truth(self) -> dict[str, Any]:
        return {"targets": self.targets}


class Plus(ScriptedAgent):
    """'+' while walking; in the quiz, the target it read in the task intro."""

    name = "plus"

    def start(self, ctx: Any, observation: str) -> None:
        self.seen: list[str] = []  # choose() sees the first observation too

    def choose(self, observation: str, info: dict[str, Any]) -> str:
        self.seen += re.findall(r"walk to (\d+)", observation)
        if info.get("phase") == "quiz":
            index = int(re.findall(r"task (\d+)", observation)[0])
            return self.seen[index] if index < len(self.seen) else "?"
        return "+"


class Dither(ScriptedAgent):
    """Alternates '-' and '+': never reaches a target (exercises the per-task cap)."""

    name = "dither"

    def choose(self, observation: str, info: dict[str, Any]) -> str:
        if info.get("phase") == "quiz":
            return "no idea"
        return "-" if self.rng.random() < 0.5 else "+"


class EchoHarness(Harness):
    """The model's text is the action; in the quiz the whole reply is the answer."""

    name = "default"

    def system_prompt(self) -> str:
        return "Walk with + and answer quizzes with a number."

    def parse(self, text: str) -> ParsedAction:
        return ParsedAction(text.strip() or None, None if text.strip() else "empty reply")


def register_lifecycle_envs() -> None:
    for env_id, cls in (
        ("life/Blocking-v0", BlockingEnv),
        ("life/StuckSync-v0", StuckSyncEnv),
        ("life/AsyncWalk-v0", AsyncWalkEnv),
        ("life/SharedSetup-v0", SharedSetupEnv),
        ("life/Clock-v0", ClockEnv),
        ("life/ClockClaimingDeterminism-v0", ClockEnvClaimingDeterminism),
        ("life/QuizWalk-v0", QuizWalkEnv),
    ):
        register_env(env_id, cls, family="life")
    register_agent("plus", Plus, families=("life",))
    register_agent("random", Plus, families=("life",))
    register_agent("dither", Dither, families=("life",))
    register_harness("default", EchoHarness, families=("life",))
