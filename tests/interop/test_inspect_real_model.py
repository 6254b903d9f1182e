"""``inspect eval exploreval/<family>`` from the command line, as a user types it, against a
real OpenAI-compatible server (the embedded llama.cpp one) through inspect's ``openai-api``
provider: the episode runs, decoding under the harness's grammar (``-T constrain=grammar``)
gives only valid actions, and the log imports to exploreval's exact steps."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from exploreval.store import RunDir, import_logs

pytest.importorskip("inspect_ai", reason="the [inspect] extra (installed by the README)")
pytestmark = [pytest.mark.slow, pytest.mark.local_llm]


def test_inspect_cli_runs_a_bandit_on_the_embedded_model(
    local_llm_base_url: str, tmp_path: Path
) -> None:
    exe = Path(sys.executable).with_name("inspect")
    env = {**os.environ, "LLAMACPP_BASE_URL": local_llm_base_url, "LLAMACPP_API_KEY": "none"}
    done = subprocess.run(
        [str(exe), "eval", "exploreval/bandit", "-T", "seeds=0-1", "-T", "max_steps=5",
         "-T", "harness=BSSeC0", "-T", "constrain=grammar", "-T", "preset=smoke",
         "--model", "openai-api/llamacpp/smollm2", "--log-dir", str(tmp_path / "logs"),
         "--display", "plain"],
        capture_output=True, text=True, env=env, timeout=900,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    imported = import_logs([tmp_path / "logs"], tmp_path / "run")
    records = list(RunDir(imported.run_dir).latest_records().values())
    assert sorted(r.seed for r in records) == [0, 1]
    steps = [s for r in records for s in r.steps]
    assert len(steps) == 10 and all(s.valid for s in steps)  # constrained: every arm named
    assert all(s.usage is not None and s.usage.completion_tokens > 0 for s in steps)
    assert all(s.agent_info.get("constraint") for s in steps)
    assert {r.family for r in records} == {"bandit"}  # scored as a bandit, not an import
