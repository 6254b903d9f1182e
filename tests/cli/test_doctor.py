"""`exploreval doctor`: one line per optional part, and a real completion on the embedded model."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from exploreval.cli import app


def test_doctor_lists_every_extra_with_its_install_command() -> None:
    result = CliRunner().invoke(app, ["doctor", "--no-smoke"])
    assert result.exit_code == 0, result.output
    extras_part = result.stdout.split("environments")[0]
    lines = extras_part.splitlines()
    for extra in ("local", "ray", "embeddings", "textworld"):
        (line,) = [x for x in lines if f"[{extra}]" in x]
        assert line.startswith(("ok", "missing"))
        if line.startswith("missing"):
            assert f"pip install 'exploreval[{extra}]'" in line
    # then every registered env, one line per use, each ok or naming what is missing
    envs = result.stdout.split("environments")[1].splitlines()[1:]
    assert any("GridDAG-v0" in x for x in envs) and any("Task2Quiz-v0" in x for x in envs)
    assert all(x.startswith(("ok", "missing")) for x in envs)


@pytest.mark.slow
@pytest.mark.local_llm
def test_doctor_runs_one_real_completion_on_the_embedded_model() -> None:
    result = CliRunner().invoke(app, ["doctor"])
    assert result.exit_code == 0, result.output
    (line,) = [x for x in result.stdout.splitlines() if "local:smollm2:" in x]
    assert line.startswith("ok") and "answered" in line and "tokens/s" in line
