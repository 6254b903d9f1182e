"""``exploreval export`` from the command line: what it writes and what it refuses, one line
each (not a run directory, an unknown format, the [inspect] extra missing)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from exploreval.cli import app
from exploreval.core import _extras
from exploreval.runner import run_experiment, spec_from_dict

pytest.importorskip("inspect_ai", reason="the [inspect] extra (installed by the README)")


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("export") / "run"
    spec = {"suites": [{"env_id": "exploreval/Bandit-v0", "presets": ["smoke"], "seeds": "0-1"}],
            "agents": [{"kind": "scripted", "agent": "ucb"}], "repeats": 2}  # fmt: skip
    run_experiment(spec_from_dict(spec, "test"), str(out))
    return out


def test_export_writes_inspect_logs_and_says_how_to_open_them(run: Path, tmp_path: Path) -> None:
    from inspect_ai.log import read_eval_log

    result = CliRunner().invoke(app, ["export", str(run), "--out", str(tmp_path / "logs")])
    assert result.exit_code == 0, result.output
    (path,) = sorted((tmp_path / "logs").glob("*.eval"))
    assert f"wrote {path}" in result.stdout
    assert f"inspect view --log-dir {tmp_path / 'logs'}" in result.stdout
    log = read_eval_log(str(path))
    assert sorted((s.id, s.epoch) for s in log.samples) == [
        ("smoke:seed0", 1), ("smoke:seed0", 2), ("smoke:seed1", 1), ("smoke:seed1", 2),
    ]  # fmt: skip
    json_out = CliRunner().invoke(
        app, ["export", str(run), "--out", str(tmp_path / "json"), "--log-format", "json"]
    )
    assert json_out.exit_code == 0 and list((tmp_path / "json").glob("*.json"))


def test_export_refuses_with_one_line(run: Path, tmp_path: Path, monkeypatch) -> None:
    from exploreval.cli import main

    def exit_and_output(args: list[str]) -> tuple[int, str]:
        import contextlib
        import io
        import sys

        err = io.StringIO()
        monkeypatch.setattr(sys, "argv", ["exploreval", *args])
        code = 0
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            try:
                main()
            except SystemExit as exc:
                code = int(exc.code or 0)
        return code, err.getvalue()

    code, text = exit_and_output(["export", str(tmp_path), "--out", str(tmp_path / "o")])
    assert code == 2 and "is not a run directory" in text and "Traceback" not in text
    code, text = exit_and_output(["export", str(run), "--out", str(tmp_path / "o"),
                                  "--format", "wandb"])  # fmt: skip
    assert code == 2 and "expected one of inspect" in text
    missing = _extras.Extra("inspect", ("no_such_module_xyz",), "inspect_ai both ways")
    monkeypatch.setitem(_extras.EXTRAS, "inspect", missing)
    code, text = exit_and_output(["export", str(run), "--out", str(tmp_path / "o")])
    assert code == 2 and "pip install 'exploreval[inspect]'" in text
    assert "Traceback" not in text and not (tmp_path / "o").exists()
