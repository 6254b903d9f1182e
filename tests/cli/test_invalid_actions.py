"""Embedded models play by default (issue 42 §1): the harness's grammar is on for ``local:*``
models unless the user turns it off, and a run whose actions were (nearly) all invalid ends
with one line that says so and names the fix."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from exploreval.models.testing import StubServer
from exploreval.runner import experiment_from_options, spec_from_dict


def test_local_models_constrain_by_default_and_others_do_not() -> None:
    def constrain(**agent: object) -> str:
        spec = spec_from_dict(
            {"suites": [{"env_id": "exploreval/GridDAG-v0"}], "agents": [{"kind": "llm", **agent}]}
        )
        return spec.agents[0].constrain

    assert constrain(model="local:smollm2") == "auto"
    assert constrain(model="local:smollm2", constrain="off") == "off"  # the user's word stands
    assert constrain(model="gpt-4.1-mini") == "off"  # an invalid action is a diagnostic there
    # the CLI's default value of --constrain is not a choice the user made
    values = {"env": "exploreval/GridDAG-v0", "models": ["local:smollm2"], "constrain": "off"}
    assert experiment_from_options(values, {"env", "models"}).agents[0].constrain == "auto"
    chosen = experiment_from_options(values, {"env", "models", "constrain"})
    assert chosen.agents[0].constrain == "off"
    # recorded in the run's config as played, so a resume plays it the same way
    assert spec_from_dict(
        {"suites": [{"env_id": "exploreval/GridDAG-v0"}],
         "agents": [{"kind": "llm", "model": "local:smollm2"}]}
    ).model_dump(mode="json")["agents"][0]["constrain"] == "auto"  # fmt: skip


def _run(server: StubServer, out: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "exploreval", "run", "exploreval/GridDAG-v0",
         "--preset", "explore-low/dag-small", "--seeds", "0-1", "--model", "m",
         "--base-url", server.base_url, "--max-steps", "4", "--out", str(out), "--no-report"],
        capture_output=True, text=True, timeout=300, env={**os.environ, "COLUMNS": "300"},
    )  # fmt: skip


def test_a_run_of_invalid_actions_ends_with_a_line_that_says_so(tmp_path: Path) -> None:
    with StubServer(reply="I think I should explore the map carefully.") as server:
        prose = _run(server, tmp_path / "prose")
    assert prose.returncode == 0, prose.stderr
    text = " ".join(prose.stderr.split())
    assert "warning: m/default/full: 8 of 8 actions were invalid (100%)" in text
    assert "--constrain auto" in text and f"exploreval view {tmp_path / 'prose'}" in text
    with StubServer(reply='{"action": "up"}') as server:  # a move the harness parses
        fine = _run(server, tmp_path / "fine")
    from exploreval.store import RunDir

    steps = [s for r in RunDir(tmp_path / "fine").iter_records() for s in r.steps]
    # every reply parses; some moves hit walls (invalid too), but not nearly all
    assert steps and sum(s.valid for s in steps) > 0.1 * len(steps)
    assert "were invalid" not in fine.stderr
