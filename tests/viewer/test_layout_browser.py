"""What a person sees (issue 21): on every suite, the viewer's step pages and list and the HTML
report, opened in a real browser, cut no text and draw no text over other text, and show no
figure shrunk so far that its legend is unreadable. A screenshot of each page goes to
``tests/artifacts/layout-*.png`` for looking at.

The check (``_browser.layout_problems``) runs in the page: every SVG text inside its picture and
clear of the others, no HTML text cut by a hidden overflow, every image at >= 75% of its width.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from _browser import layout_problems, screenshot, served_viewer, wait
from exploreval.store import RunDir

pytestmark = pytest.mark.slow

CLI = [sys.executable, "-c", "from exploreval.cli import main; main()"]
MIN_IMAGE_SCALE = 0.75


def _cli(*args: str, env: dict[str, str] | None = None) -> None:
    done = subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=900, env=env)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.fixture(scope="module")
def suite_runs(runs: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One small run per suite: the shared grid, bandit, FrozenLake and Sudoku runs, plus
    BlocksWorld, the terminal (built-in tasks) and Task2Quiz made here."""
    root = tmp_path_factory.mktemp("layout-runs")
    _cli("run", "exploreval/BlocksWorld-v0", "--preset", "easy", "--seeds", "0",
         "--agent", "optimal", "--agent", "random", "--out", str(root / "blocks"), "-q")  # fmt: skip
    _cli("run", "exploreval/Terminal-v0", "--seeds", "0-1", "--agent", "curious",
         "--agent", "gold", "--out", str(root / "terminal"), "-q")  # fmt: skip
    env = {**os.environ, "EXPLOREVAL_TEXTWORLD_CACHE": str(root / "tw-cache")}
    _cli("run", "exploreval/Task2Quiz-v0", "--preset", "easy", "--seeds", "0", "--max-steps",
         "15", "--agent", "quiz-oracle", "--agent", "random-explorer",
         "--out", str(root / "task2quiz"), "-q", env=env)  # fmt: skip
    return {
        "grid": runs["grid"], "bandit": runs["mixed"], "frozenlake": runs["lake"],
        "sudoku": runs["sudoku"], "blocksworld": root / "blocks",
        "terminal": root / "terminal", "task2quiz": root / "task2quiz",
    }  # fmt: skip


@pytest.fixture(scope="module")
def viewer(suite_runs: dict[str, Path]) -> Iterator[str]:
    with served_viewer(*suite_runs.values()) as url:
        yield url


def _pages(run: Path) -> list[tuple[str, int]]:
    """(episode id, step index): the first, middle and last step of one episode per agent."""
    pages = []
    seen: set[str] = set()
    for record in RunDir(run).latest_records().values():
        if record.agent.name in seen or not record.steps:
            continue
        seen.add(record.agent.name)
        n = len(record.steps)
        pages += [(record.episode_id, i) for i in sorted({0, n // 2, n - 1})]
    return pages


@pytest.mark.parametrize(
    "suite", ["grid", "bandit", "frozenlake", "sudoku", "blocksworld", "terminal", "task2quiz"]
)
def test_viewer_pages_cut_no_text_and_overlap_none(
    suite: str, suite_runs: dict[str, Path], viewer: str, browser: Any
) -> None:
    from selenium.webdriver.common.by import By

    run = suite_runs[suite]
    run_id = RunDir(run).read_manifest().run_id
    problems: dict[str, list[str]] = {}
    pages = _pages(run)
    assert pages
    for index, (episode, step) in enumerate(pages):
        browser.get(f"{viewer}#/run/{run_id}/episode/{episode}/step/{step}")
        wait(browser, lambda b: b.find_elements(By.ID, "step-label"))
        wait(browser, lambda b: b.find_elements(By.CSS_SELECTOR, "#step-view, .error, .muted"))
        found = layout_problems(browser)
        if found:
            problems[f"{episode} step {step}"] = found
        if index == len(pages) // 2:
            screenshot(browser, f"layout-viewer-{suite}")
    assert problems == {}


def test_the_list_cuts_no_text(viewer: str, browser: Any) -> None:
    from selenium.webdriver.common.by import By

    browser.get(viewer + "#/list")
    wait(browser, lambda b: b.find_elements(By.CSS_SELECTOR, "#episodes tbody tr"))
    screenshot(browser, "layout-viewer-list")
    assert layout_problems(browser) == []


def test_the_list_is_in_plan_order_whatever_order_episodes_finished_in(
    runs: dict[str, Path], tmp_path: Path, browser: Any
) -> None:
    """Episodes logged out of order (as concurrent workers finish them) are listed by env,
    preset, seed and repeat."""
    import shutil

    from selenium.webdriver.common.by import By

    run = tmp_path / "shuffled"
    shutil.copytree(runs["grid"], run)
    log = run / "episodes.jsonl"
    lines = log.read_text().splitlines(keepends=True)
    log.write_text("".join(reversed(lines)))
    for cache in run.glob(".viewer*"):
        shutil.rmtree(cache) if cache.is_dir() else cache.unlink()
    proc = subprocess.Popen([*CLI, "view", str(run), "--port", "0"], stdout=subprocess.PIPE,
                            text=True)  # fmt: skip
    assert proc.stdout is not None
    match = re.search(r"(http://127\.0\.0\.1:\d+/)", proc.stdout.readline())
    assert match
    try:
        browser.get(match.group(1) + "#/list")
        wait(browser, lambda b: b.find_elements(By.CSS_SELECTOR, "#episodes tbody tr"))
        shown = [
            (
                tr.find_elements(By.TAG_NAME, "td")[2].text,
                int(tr.find_elements(By.TAG_NAME, "td")[3].text),
            )
            for tr in browser.find_elements(By.CSS_SELECTOR, "#episodes tbody tr")
        ]
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert len(shown) == len(lines)
    assert shown == sorted(shown)  # preset, then seed


@pytest.mark.parametrize(
    "suite", ["grid", "bandit", "frozenlake", "sudoku", "blocksworld", "terminal", "task2quiz"]
)
def test_reports_cut_no_text_and_shrink_no_figure(
    suite: str, suite_runs: dict[str, Path], browser: Any
) -> None:
    from exploreval.analysis import build_report

    run = suite_runs[suite]
    report = build_report(RunDir(run))
    browser.get((report.parent / "index.html").as_uri())
    wait(browser, lambda b: b.execute_script("return document.readyState") == "complete")
    screenshot(browser, f"layout-report-{suite}")
    assert layout_problems(browser, min_image_scale=MIN_IMAGE_SCALE) == []
