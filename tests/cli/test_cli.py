"""The command line end to end (in-process typer runner + the installed entry point)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from exploreval.cli import app
from exploreval.store import RunDir

runner = CliRunner()


def run_cli(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.output


def test_entry_point_help_lists_every_command_once() -> None:
    import re

    import typer.main

    import exploreval

    proc = subprocess.run(
        ["exploreval", "--help"],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "COLUMNS": "200"},
    )
    lines = proc.stdout.splitlines()
    assert any(line.strip().startswith("Usage: exploreval [OPTIONS] COMMAND") for line in lines)
    # piped, the help is plain text (no box drawing to copy): "  name   description"
    assert "│" not in proc.stdout
    panel = proc.stdout.split("Commands:")[1]
    listed = re.findall(r"^ {2}([a-z][a-z0-9-]*) {2,}\S", panel, flags=re.MULTILINE)
    expected = set(typer.main.get_command(app).commands)  # type: ignore[attr-defined]
    assert {"run", "score", "report", "runs", "envs", "demo", "schema", "grid-render"} <= expected
    assert sorted(listed) == sorted(expected)  # every command, each once, nothing else
    version = subprocess.run(
        ["exploreval", "--version"], capture_output=True, text=True, check=True
    )
    assert version.stdout.strip() == exploreval.__version__


def test_run_score_report_runs(tmp_path: Path) -> None:
    out = tmp_path / "r"
    code, text = run_cli(
        "run",
        "test/LineWalk-v0",
        "--preset",
        "short",
        "--preset",
        "long",
        "--seeds",
        "0-3",
        "--agent",
        "forward",
        "--agent",
        "random",
        "--out",
        str(out),
        "--plugin",
        "_toy",
        "-q",
    )
    assert code == 0, text
    report_line = next(line for line in text.splitlines() if line.startswith("report: "))
    assert Path(report_line.removeprefix("report: ")) == out / "report" / "report.md"
    records = list(RunDir(out).iter_records())
    assert len(records) == 16 and {r.status for r in records} == {"ok"}
    assert sorted({(r.preset, r.agent.name) for r in records}) == [
        ("long", "forward"), ("long", "random"), ("short", "forward"), ("short", "random"),
    ]  # fmt: skip
    assert sorted({r.seed for r in records}) == [0, 1, 2, 3]
    manifest = RunDir(out).read_manifest()
    assert (manifest.status, manifest.episodes_planned, manifest.episodes_done) == (
        "finished",
        16,
        16,
    )
    assert manifest.total_steps == sum(r.n_steps for r in records)
    code, text = run_cli("score", str(out), "--json")
    assert code == 0, text
    payload = json.loads(text)
    rows = payload["episodes"]
    assert len(rows) == 16
    assert all(r["success"] for r in rows if r["agent"] == "forward")
    assert (out / "results.parquet").exists()
    import pandas as pd

    table = pd.read_parquet(out / "results.parquet")
    assert set(table["agent"]) == {"forward", "random"}
    assert table["success"].sum() == sum(r.success for r in records)
    code, text = run_cli("report", str(out))
    assert code == 0, text
    assert text.splitlines()[:2] == [
        f"report: {out / 'report' / 'report.md'}",
        f"html:   {out / 'report' / 'index.html'}",
    ]
    report = (out / "report" / "report.md").read_text()
    assert "| test/LineWalk-v0 | long | forward | 4 | 1.000 [1.00, 1.00] |" in report
    assert (out / "report" / "index.html").stat().st_size > 0
    result = runner.invoke(app, ["runs", str(tmp_path)], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    (row,) = [line for line in result.output.splitlines() if str(out) in line]
    cells = row.split("\t")  # piped: tab-separated, nothing cut
    assert cells[:4] == [str(out), manifest.name, "finished", "16/16"]
    assert cells[5] == manifest.config_hash


def test_schema_is_the_episode_record_json_schema() -> None:
    from exploreval.core import SCHEMA_VERSION, EpisodeRecord

    code, text = run_cli("schema")
    assert code == 0
    schema = json.loads(text)
    assert schema == EpisodeRecord.model_json_schema()
    assert schema["properties"]["schema_version"]["default"] == SCHEMA_VERSION
    assert set(schema["properties"]) == set(EpisodeRecord.model_fields)


def test_user_error_text_with_brackets_is_printed_verbatim(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "suites:\n  - env_id: test/LineWalk-v0\n    seeds: '[3, x]'\nagents: [{agent: forward}]\n"
    )
    proc = subprocess.run(
        ["exploreval", "run", "--config", str(bad)], capture_output=True, text=True
    )
    assert proc.returncode == 2
    assert "'[3, x]'" in proc.stderr  # rich markup must not eat "[...]"
    assert "seed '[3' is not an integer" in proc.stderr


def test_user_errors_exit_2_with_one_line(tmp_path: Path) -> None:
    proc = subprocess.run(
        [
            "exploreval",
            "run",
            "exploreval/GridDAG-v9",
            "--agent",
            "random",
            "--out",
            str(tmp_path / "x"),
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2
    # one line of error (a refusal worded by exploreval: no --debug hint), nothing written
    (first,) = proc.stderr.strip().splitlines()
    assert first.startswith("error: Unknown environment id 'exploreval/GridDAG-v9'")
    assert "exploreval/GridDAG-v0" in first  # the close match is offered
    assert not (tmp_path / "x").exists()
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "suites:\n  - env_id: test/LineWalk-v0\nagents:\n  - agent: forward\nrepeats: lots\n"
    )
    proc = subprocess.run(
        ["exploreval", "run", "--config", str(bad)], capture_output=True, text=True
    )
    assert proc.returncode == 2
    assert "field repeats" in proc.stderr and str(bad) in proc.stderr
    assert "(got 'lots')" in proc.stderr


@pytest.mark.parametrize("history", ["window:x", "sometimes"])
def test_bad_history_policy_is_named(tmp_path: Path, history: str) -> None:
    result = runner.invoke(
        app,
        [
            "run",
            "test/LineWalk-v0",
            "--model",
            "m",
            "--history",
            history,
            "--plugin",
            "_toy",
            "--out",
            str(tmp_path / "x"),
        ],
    )
    assert result.exit_code != 0
    message = str(result.exception)
    assert "history policy" in message and "window:K" in message and repr(history) in message
    assert not (tmp_path / "x").exists()  # rejected before anything was written


def test_env_options_from_the_command_line(tmp_path: Path) -> None:
    out = tmp_path / "r"
    code, text = run_cli(
        "run",
        "test/LineWalk-v0",
        "--env-option",
        "length=1",
        "--seeds",
        "0-2",
        "--agent",
        "forward",
        "--out",
        str(out),
        "--plugin",
        "_toy",
        "-q",
        "--no-report",
    )
    assert code == 0, text
    records = list(RunDir(out).iter_records())
    assert [r.env_options for r in records] == [{"length": 1}] * 3
    assert all(r.ground_truth["target"] == 1 and r.n_steps == 1 for r in records)
    result = runner.invoke(
        app, ["run", "test/LineWalk-v0", "--agent", "forward", "--env-option", "length"]
    )
    assert result.exit_code != 0
    assert str(result.exception) == "--env-option 'length': expected KEY=VALUE"
