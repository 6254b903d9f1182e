"""An exploreval run opened in ``inspect view`` (issue 20), in a real browser: inspect_ai's own
viewer lists the exported logs, a log's samples (one per episode) and a sample's transcript
(the model calls with the prompts the model saw, the observations). Screenshots go to
``tests/artifacts/inspect-view-*.png``."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from _browser import browser, screenshot, wait  # noqa: F401 (fixture)
from exploreval.models import ScriptedModel
from exploreval.runner import run_experiment, spec_from_dict
from exploreval.store import RunDir

pytest.importorskip("inspect_ai", reason="the [inspect] extra (installed by the README)")
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> tuple[RunDir, Path]:
    from exploreval.interop import export_inspect

    root = tmp_path_factory.mktemp("inspect-view")
    spec = {
        "suites": [{"env_id": "exploreval/GridDAG-v0", "presets": ["explore-low/dag-small"],
                    "seeds": "0-2"}],
        "agents": [{"kind": "scripted", "agent": "frontier"},
                   {"kind": "llm", "model": "stub-model", "harness": "react", "history": "none",
                    "label": "stub"}],
        "max_steps": 6,
    }  # fmt: skip
    moves = ['{"action": "up"}', '{"action": "left"}', "I am lost", '{"action": "right"}']
    run_experiment(
        spec_from_dict(spec, "test"), str(root / "run"),
        client_factory=lambda s: ScriptedModel(replies=moves, model="stub-model"),
    )  # fmt: skip
    export_inspect(root / "run", root / "logs")
    return RunDir(root / "run"), root / "logs"


@pytest.fixture(scope="module")
def inspect_view(exported: tuple[RunDir, Path]) -> Iterator[str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    exe = Path(sys.executable).with_name("inspect")
    proc = subprocess.Popen(
        [str(exe), "view", "--log-dir", str(exported[1]), "--port", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        for _ in range(120):
            try:
                socket.create_connection(("127.0.0.1", port), 1).close()
                break
            except OSError:
                time.sleep(0.5)
        yield f"http://127.0.0.1:{port}/"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _text(driver: Any) -> str:
    return str(driver.execute_script("return document.body.innerText"))


def test_inspect_view_lists_the_logs_samples_and_transcript(
    exported: tuple[RunDir, Path],
    inspect_view: str,
    browser: Any,  # noqa: F811
) -> None:
    run, logs = exported
    records = list(run.latest_records().values())
    browser.get(inspect_view)
    wait(browser, lambda b: "exploreval/grid" in _text(b))
    screenshot(browser, "inspect-view-logs")
    assert "exploreval/stub-model" in _text(browser) and "exploreval/frontier" in _text(browser)

    log_name = next(p.name for p in logs.glob("*.eval") if "stub" in p.name)
    browser.get(f"{inspect_view}#/tasks/{quote(log_name)}")
    llm = sorted((r for r in records if r.agent.kind == "llm"), key=lambda r: r.seed)
    wait(browser, lambda b: f"{len(llm)} Samples" in _text(b))
    screenshot(browser, "inspect-view-samples")
    text = _text(browser)
    for record in llm:
        assert f"seed{record.seed}" in text
    assert "MEAN SUCCESS" in text.upper()

    first = llm[0]
    sample_id = quote(f"explore-low/dag-small:seed{first.seed}", safe="")
    browser.get(f"{inspect_view}#/tasks/{quote(log_name)}/samples/sample/{sample_id}/1/")
    wait(browser, lambda b: "TRANSCRIPT" in _text(b).upper() and "MODEL CALL" in _text(b).upper())
    screenshot(browser, "inspect-view-transcript")
    text = _text(browser)
    assert first.initial_observation.splitlines()[0] in text
    assert f"{len(first.steps)} turns" in text
