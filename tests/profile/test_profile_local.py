"""The plan against the embedded model's real counts (llama.cpp, no server to start)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _cli import cli


@pytest.mark.slow
def test_plan_is_within_25_percent_of_the_embedded_models_real_counts(tmp_path: Path) -> None:
    out = tmp_path / "prof"
    done = cli(
        "profile",
        "--model",
        "local:smollm2",
        "--quick",
        "--part",
        "bandit",
        "--out",
        str(out),
        "-q",
        cwd=tmp_path,
        columns=80,
    )
    assert done.returncode == 0, done.stderr
    card = json.loads((out / "card.json").read_text())
    plan, used = card["plan"], card["usage"]
    planned = {
        "calls": sum(line["calls"] for line in plan["lines"]),
        "prompt_tokens": sum(line["prompt_tokens"] for line in plan["lines"]),
        "completion_tokens": sum(line["completion_tokens"] for line in plan["lines"]),
    }
    for key, value in planned.items():
        assert 0.75 * value <= used[key] <= 1.25 * value, (key, value, used[key])
    assert card["rows"][0]["row"] == "bandit" and card["rows"][0]["success"]["n"] == 4
