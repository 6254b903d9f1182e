"""Episode text is hostile (issue 21): a model's reply, an invalid action's reason, an error
message, an agent's name can all carry markup and links. The report and the viewer, opened in a
real browser, must run none of it and offer no ``javascript:`` link."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from _browser import artifacts_dir, browser, screenshot  # noqa: F401 (fixtures)
from exploreval.agents import Harness, ParsedAction, register_harness
from exploreval.analysis import build_report
from exploreval.models import ScriptedModel
from exploreval.runner import run_experiment, spec_from_dict
from exploreval.store import RunDir

pytestmark = pytest.mark.slow

#: One payload per way a page could run it: a markdown link, raw tags, an event handler, an
#: SVG, an inline-script breakout.
PAYLOADS = (
    "[click me](javascript:window.__pwned='md')",
    "[x](JaVaScRiPt:window.__pwned='case')",
    "<script>window.__pwned='script'</script>",
    "<img src=x onerror=\"window.__pwned='img'\">",
    "<svg onload=\"window.__pwned='svg'\"></svg>",
    "</script><script>window.__pwned='breakout'</script>",
    "[data](data:text/html,<script>window.__pwned='data'</script>)",
)
HOSTILE = " ".join(PAYLOADS)


class HostileHarness(Harness):
    name = "hostile"

    def system_prompt(self) -> str:
        return "reply"

    def parse(self, text: str) -> ParsedAction:
        if "+" in text:
            return ParsedAction("+")
        return ParsedAction(None, f"not an action: {HOSTILE}")


@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory: pytest.TempPathFactory) -> RunDir:
    register_harness("hostile", HostileHarness, families=("toy",))
    out = tmp_path_factory.mktemp("hostile") / "run"
    replies = [HOSTILE, "+", HOSTILE, "+", "+", "+", "+", "+"]
    spec = {
        "name": "hostile " + PAYLOADS[2],
        "suites": [{"env_id": "test/LineWalk-v0", "presets": ["long"], "seeds": "0"}],
        "agents": [{"kind": "llm", "model": "m", "base_url": "http://127.0.0.1:9/v1",
                    "label": "agent " + HOSTILE, "harness": "hostile", "history": "none"}],
        "max_steps": 8,
    }  # fmt: skip
    run_experiment(spec_from_dict(spec), str(out),
                   client_factory=lambda s: ScriptedModel(replies=replies))  # fmt: skip
    run = RunDir(out)
    records = list(run.iter_records())
    assert any(not s.valid and "javascript:" in (s.invalid_reason or "") for s in records[0].steps)
    return run


def _check_page(driver: Any) -> None:
    from selenium.webdriver.common.by import By

    assert driver.execute_script("return window.__pwned === undefined"), driver.execute_script(
        "return window.__pwned"
    )
    links = [a.get_attribute("href") or "" for a in driver.find_elements(By.TAG_NAME, "a")]
    assert not [
        h for h in links if h.lower().replace("\t", "").startswith(("javascript:", "data:"))
    ]


def test_the_report_runs_none_of_the_episode_text(
    hostile_run: RunDir,
    browser: Any,  # noqa: F811
    artifacts_dir: Path,  # noqa: F811
) -> None:
    report = build_report(hostile_run)
    html = (report.parent / "index.html").read_text()
    assert 'http-equiv="Content-Security-Policy"' in html and "script-src" not in html
    assert "<script>window" not in html  # escaped, never markup
    browser.get((report.parent / "index.html").as_uri())
    _check_page(browser)
    assert "click me" in browser.page_source  # shown as text
    screenshot(browser, "hostile_report", artifacts_dir)


def test_the_viewer_runs_none_of_the_episode_text(
    hostile_run: RunDir,
    browser: Any,  # noqa: F811
    artifacts_dir: Path,  # noqa: F811
) -> None:
    import urllib.request

    from exploreval.viewer import ViewerServer

    record = next(hostile_run.iter_records())
    server = ViewerServer([hostile_run.path], port=0)
    server.serve_in_thread()
    try:
        with urllib.request.urlopen(f"{server.url}index.html") as response:
            headers = response.headers
        assert "script-src 'self'" in headers["Content-Security-Policy"]
        assert headers["X-Content-Type-Options"] == "nosniff"
        browser.get(f"{server.url}index.html")
        _check_page(browser)
        run_id = hostile_run.read_manifest().run_id
        for step in (0, 1, 2):
            browser.get(
                f"{server.url}index.html#/run/{run_id}/episode/{record.episode_id}/step/{step}"
            )
            browser.implicitly_wait(2)
            _check_page(browser)
        screenshot(browser, "hostile_viewer", artifacts_dir)
    finally:
        server.shutdown()
