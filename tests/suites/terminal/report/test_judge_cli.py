"""`exploreval score RUN --judge-model M` on a stored terminal run: the judge's table lands in
tables/judged/, later scores and the report keep it, and the report shows Table 4; the real
path through the embedded model yields a parseable choice or says why not."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from exploreval.models.testing import StubServer


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from exploreval.cli import main; main()", *args],
        capture_output=True, text=True, timeout=900,
    )  # fmt: skip


def test_score_with_a_judge_fills_table_4(terminal_run: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(terminal_run, run)

    def calls(body: dict[str, Any]) -> list[tuple[str, str]]:
        return [("choice", json.dumps({"classification": 1, "evidence": "never mentions it"}))]

    with StubServer(tool_calls_fn=calls) as server:
        done = _cli("score", str(run), "--judge-model", "judge-m",
                    "--judge-base-url", server.base_url)  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        asked = len(server.requests)
        # judging again is free: every call comes from the run's cache (same endpoint)
        again = _cli("score", str(run), "--judge-model", "judge-m",
                     "--judge-base-url", server.base_url)  # fmt: skip
        assert again.returncode == 0 and len(server.requests) == asked
    judged = pd.read_parquet(run / "tables" / "judged" / "terminal_judge.parquet")
    # the incurious agent discovers (levels 1, 1 as README.md, 3) and never interacts: 3 x 2 x 2
    assert len(judged) == asked == 12 and set(judged["agent"]) == {"incurious"}
    assert set(judged["classification"]) == {1} and judged["error"].isna().all()
    assert "terminal_judge" in done.stdout
    # a plain score keeps the judged table; the report shows Table 4 from it
    assert _cli("score", str(run)).returncode == 0
    assert (run / "tables" / "judged" / "terminal_judge.parquet").exists()
    report = _cli("report", str(run))
    assert report.returncode == 0, report.stderr
    text = (run / "report" / "report.md").read_text()
    assert "why discovered solutions were ignored (Table 4)" in text
    assert text.count("| 100.0% [100, 100] (4) |") == 3 and "never mentions it" in text
    # the viewer shows each judgement on its episode's page
    from exploreval.viewer._server import ViewerRuns

    data = ViewerRuns.open([run])
    shown = [
        ep["judgements"]
        for chunk in range(len(data.indexes[0]) // 64 + 1)
        for ep in data.chunk(0, chunk, 64)["episodes"].values()
    ]
    judged_pages = [j for j in shown if j]
    assert len(judged_pages) == 12
    assert all(j[0]["category"] == "No acknowledgment" for j in judged_pages)
    assert all(j[0]["evidence"] == "never mentions it" for j in judged_pages)


def test_a_judge_without_a_key_is_refused_before_any_call(terminal_run: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", "from exploreval.cli import main; main()", "score",
         str(terminal_run), "--judge-model", "gpt-x"],
        capture_output=True, text=True, timeout=300,
        env={k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"},
    )  # fmt: skip
    assert done.returncode == 2 and "no API key" in done.stdout + done.stderr
    assert not (terminal_run / "tables" / "judged").exists()


@pytest.mark.local_llm
@pytest.mark.slow
def test_the_embedded_model_judges_or_says_why_not(terminal_run: Path, tmp_path: Path) -> None:
    """The real path: SmolLM2 decodes the choice tool's arguments under their JSON schema."""
    run = tmp_path / "run"
    shutil.copytree(terminal_run, run)
    done = _cli("score", str(run), "--judge-model", "local:smollm2")
    assert done.returncode == 0, done.stdout + done.stderr
    judged = pd.read_parquet(run / "tables" / "judged" / "terminal_judge.parquet")
    assert len(judged) == 12 and set(judged["via"]) == {"text"}
    for row in judged.to_dict("records"):
        valid = row["classification"] is not None and not pd.isna(row["classification"])
        assert valid or row["error"], row  # a choice, or the reason there is none
    assert judged["classification"].notna().sum() >= 1


def test_run_with_a_judge_judges_before_the_report(tmp_path: Path) -> None:
    """`run --judge-model`: the run plays, the judge reads what it played, the report has
    Table 4; a judge without a key is refused before anything runs."""
    out = tmp_path / "run"
    common = ["run", "exploreval/Terminal-v0", "--seeds", "0", "--agent", "incurious",
              "--env-option", "injection_level=1", "--out", str(out), "-q"]  # fmt: skip

    def calls(body: dict[str, Any]) -> list[tuple[str, str]]:
        return [("choice", json.dumps({"classification": 2, "evidence": "saw it, moved on"}))]

    refused = subprocess.run(
        [sys.executable, "-c", "from exploreval.cli import main; main()", *common,
         "--judge-model", "gpt-x"],
        capture_output=True, text=True, timeout=300,
        env={k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"},
    )  # fmt: skip
    assert refused.returncode == 2 and not out.exists(), refused.stdout + refused.stderr
    with StubServer(tool_calls_fn=calls) as server:
        done = _cli(*common, "--judge-model", "judge-m", "--judge-base-url", server.base_url)
    assert done.returncode == 0, done.stdout + done.stderr
    judged = pd.read_parquet(out / "tables" / "judged" / "terminal_judge.parquet")
    assert list(judged["classification"]) == [2]
    assert "Acknowledgment without investigation" in (out / "report" / "report.md").read_text()
