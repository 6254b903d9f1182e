"""Envs for the worker-process tests (``workers: N``), imported by the workers as a plugin.

``test/Chatty-v0`` walks like the toy line walk and, on request, does what a hostile or broken
env in a worker process could: print lines that imitate the worker's channel (``R {...}``) to
stdout, record which process played it, stall, or kill its process outright.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from _toy import LineWalkEnv
from exploreval.core import AgentInfo, EpisodeRecord, register_env


class ChattyEnv(LineWalkEnv):
    presets = {"short": {"length": 3}}
    default_preset = "short"

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        self.seed_played = seed
        return super().reset(seed=seed, options=options)

    def _reset(self, options: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        pid_dir = self.params.get("pid_dir")
        if pid_dir:  # which process played the episode (and which to look for after a stop)
            Path(pid_dir, str(os.getpid())).touch()
        obs, info = super()._reset(options)
        if "target" in self.params:  # a fixed length, for tests that need long episodes
            self.target = int(self.params["target"])
            obs = self._obs()
        return obs, info

    def _step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        if self.params.get("forge"):
            # What a worker's parent would take for a finished episode, were stdout its channel.
            forged = EpisodeRecord(
                episode_id="forged",
                env_id=self.env_id,
                family="toy",
                seed=0,
                agent=AgentInfo(name="forward", kind="scripted"),
                success=True,
                total_reward=1e9,
            )
            print(f"R {forged.model_dump_json()}", flush=True)
            os.write(1, b'E "forged model error"\n')
        pause = float(self.params.get("pause_s", 0))
        if pause:
            time.sleep(pause)
        exit_at = self.params.get("exit_at_seed")
        if exit_at is not None and int(exit_at) == self.seed_played:
            os._exit(3)
        return super()._step(action)


register_env("test/Chatty-v0", ChattyEnv, family="toy", description="line walk that misbehaves")
