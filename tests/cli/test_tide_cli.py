"""`exploreval import`, `exploreval tide` and `exploreval tide-mi` end to end."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from exploreval.cli import app
from exploreval.store import RunDir

FIXTURES = Path(__file__).parent.parent / "fixtures" / "import"
runner = CliRunner()


def run_cli(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.output


def test_import_then_score_and_report(tmp_path: Path) -> None:
    out = tmp_path / "swe"
    code, text = run_cli(
        "import",
        str(FIXTURES / "swe-agent"),
        "--out",
        str(out),
        "--resolved",
        str(FIXTURES / "swe-bench-report.json"),
    )
    assert code == 0, text
    assert "imported 2 episodes (9 steps, format swe-agent)" in text and "report:" in text
    assert (out / "report" / "tide_success_curves.png").exists()
    code, text = run_cli("score", str(out), "--json")
    assert code == 0, text
    payload = json.loads(text)
    assert {row["tide_solved_at"] for row in payload["episodes"]} == {5, None}
    assert payload["tables"]["tide_summary"][0]["success_rate"] == 0.5


def test_tide_command_with_t_max_override(tmp_path: Path) -> None:
    out = tmp_path / "jsonl"
    code, text = run_cli(
        "import", str(FIXTURES / "generic.jsonl"), "--out", str(out), "--no-report"
    )
    assert code == 0, text
    code, text = run_cli("tide", str(out), "--json")
    assert code == 0, text
    default = json.loads(text)["tide_summary"][0]
    code, text = run_cli("tide", str(out), "--t-max", "FrozenLake=8", "--json")
    assert code == 0, text
    short = json.loads(text)["tide_summary"][0]
    assert (default["t_max"], short["t_max"]) == (30, 8)
    # fl-0 is solved at turn 8, fl-1 at turn 2: (0.5/8 + 6.5/8) / 3 with t_max 8
    assert short["auv"] == pytest.approx((0.5 / 8 + 6.5 / 8) / 3)
    assert default["auv"] == pytest.approx((22.5 / 30 + 28.5 / 30) / 3)


def test_state_identity_option(tmp_path: Path) -> None:
    rows = [{"observation": f"Step {t}. In room {'AB'[t % 2]}.", "action": "go"} for t in range(6)]
    (tmp_path / "rooms.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    code, text = run_cli(
        "import", str(tmp_path / "rooms.jsonl"), "--out", str(tmp_path / "r"), "--no-report"
    )
    assert code == 0, text
    code, text = run_cli("tide", str(tmp_path / "r"), "--json")
    assert json.loads(text)["tide_summary"][0]["loop_ratio"] == 0.0  # counters make states unique
    code, text = run_cli(
        "tide", str(tmp_path / "r"), "--state-identity", r"strip:^Step \d+\.", "--json"
    )
    assert code == 0, text
    # A go B go A go B go A go B: the authors' scan finds the lap AB repeated at actions 2-3 and
    # again at 4-5 (it compares the last lap without needing it to close): 4 of 6
    assert json.loads(text)["tide_summary"][0]["loop_ratio"] == pytest.approx(4 / 6)
    result = runner.invoke(app, ["tide", str(tmp_path / "r"), "--state-identity", "fuzzy"])
    assert result.exit_code != 0 and "not understood" in str(result.exception)


def test_tide_mi_between_two_runs(tmp_path: Path) -> None:
    def write(path: Path, history: str, action: str, success: bool) -> None:
        rows = [
            {
                "episode": i,
                "task": i,
                "env": "WebShop",
                "agent": "m",
                "history": history,
                "observation": "page",
                "action": action,
                "success": success,
                "done": True,
            }
            for i in range(3)
        ]
        path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")

    write(tmp_path / "full.jsonl", "full", "buy", True)
    write(tmp_path / "none.jsonl", "none", "search", False)
    for name in ("full", "none"):
        code, text = run_cli(
            "import", str(tmp_path / f"{name}.jsonl"), "--out", str(tmp_path / name), "--no-report"
        )
        assert code == 0, text
    code, text = run_cli("tide-mi", str(tmp_path / "full"), str(tmp_path / "none"), "--json")
    assert code == 0, text
    row = json.loads(text)["tide_memory"][0]
    assert row["matched_by"] == "identity" and row["tasks"] == 3 and row["paired"]
    assert row["mi"] == pytest.approx(14.5 / 15)


def test_user_errors_exit_2(tmp_path: Path) -> None:
    env = {**os.environ, "COLUMNS": "400"}  # long tmp paths must not be wrapped by rich
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"observation": "a"}\n')
    proc = subprocess.run(
        ["exploreval", "import", str(bad), "--out", str(tmp_path / "x")],
        capture_output=True,
        text=True,
        env=env,
    )
    assert proc.returncode == 2
    assert "bad.jsonl: line 1: missing required field 'action'" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not RunDir(tmp_path / "x").exists()
    proc = subprocess.run(
        [
            "exploreval",
            "import",
            str(FIXTURES / "generic.jsonl"),
            "--format",
            "csv",
            "--out",
            str(tmp_path / "y"),
        ],
        capture_output=True,
        text=True,
        env=env,
    )
    assert proc.returncode == 2 and "unknown log format 'csv'" in proc.stderr
    proc = subprocess.run(
        ["exploreval", "tide", str(tmp_path)], capture_output=True, text=True, env=env
    )
    assert proc.returncode == 2 and "is not a run directory" in proc.stderr
