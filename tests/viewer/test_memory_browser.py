"""A memory system's step record in the viewer, in a real browser (headless Chromium): a grid run
whose LLM agent keeps its past in mem0 (the real package, the local MiniLM; the model is a
loopback OpenAI-compatible server), and the step page's memory panel shows what was recalled,
what was stored and what it cost, as the record holds them."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from selenium.webdriver.common.by import By

from _browser import served_viewer, wait
from exploreval.store import RunDir

pytestmark = pytest.mark.slow

CLI = [sys.executable, "-c", "from exploreval.cli import main; main()"]


def _reply(messages: list[dict[str, Any]]) -> str:
    system = str(messages[0]["content"]).lower()
    if "memory" in system and "extract" in system:  # mem0's fact extraction
        step = len(str(messages[-1]["content"]))
        return json.dumps({"memory": [{"text": f"<b>fact</b> number {step} about the map"}]})
    return "Action: north"


@pytest.fixture(scope="module")
def mem0_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from exploreval.models.testing import StubServer

    root = tmp_path_factory.mktemp("memory-browser")
    with StubServer(reply_fn=_reply) as server:
        result = subprocess.run(
            [*CLI, "run", "exploreval/GridDAG-v0", "--preset", "explore-low/dag-small",
             "--model", "stub", "--base-url", server.base_url, "--history", "mem0",
             "--max-steps", "4", "--out", str(root / "run"), "-q", "--no-report"],
            capture_output=True, text=True, timeout=900,
        )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    return root / "run"


@pytest.fixture(scope="module")
def served(mem0_run: Path) -> Iterator[str]:
    with served_viewer(mem0_run) as url:
        yield url


def test_the_step_page_shows_what_the_memory_recalled_stored_and_cost(
    browser: Any, served: str, mem0_run: Path, shot: Any
) -> None:
    run = RunDir(mem0_run)
    (record,) = run.latest_records().values()
    memory = [s.agent_info["memory"] for s in record.steps]
    t = next(i for i, m in enumerate(memory) if m["recalled"] and m["stored"])
    browser.get(f"{served}#/run/{run.read_manifest().run_id}/episode/{record.episode_id}/step/{t}")
    wait(browser, lambda b: b.find_elements(By.CSS_SELECTOR, "#memory-recalled li"))
    recalled = [e.text for e in browser.find_elements(By.CSS_SELECTOR, "#memory-recalled li")]
    stored = [e.text for e in browser.find_elements(By.CSS_SELECTOR, "#memory-stored li")]
    assert recalled == memory[t]["recalled"] and stored == memory[t]["stored"]
    assert any("<b>fact</b>" in r for r in recalled)  # model text shown as text, never markup
    assert not browser.find_elements(By.CSS_SELECTOR, "#memory b")
    panel = browser.find_element(By.CSS_SELECTOR, "#memory").text
    assert f"{memory[t]['model_calls']} ({memory[t]['cached_calls']} from the cache)" in panel
    assert f"{memory[t]['prompt_tokens']} prompt" in panel
    shot("memory-panel")
