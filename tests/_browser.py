"""Shared headless-Chromium fixture for the report and viewer browser tests.

The browser is Debian's ``chromium`` driven through ``chromium-driver`` by Selenium (no browser
download; ``scripts/install.sh`` installs both). This is the only browser fixture: the report tests
import it, ``tests/viewer/conftest.py`` re-exports it. Use it from a test module with::

    from _browser import browser, artifacts_dir, screenshot, docs_screenshot  # noqa: F401

(``tests/`` is on ``sys.path`` through ``conftest.py``). The flags are the ones this machine's
notes found necessary for headless Chromium in a container; every session gets a fresh profile
directory so no state leaks between runs. Screenshots go to ``tests/artifacts/`` (git-ignored;
CI does not upload them, they are for looking at after a local run). The screenshots in
``docs/img/`` are refreshed only when asked, with ``EXPLOREVAL_DOCS_SCREENSHOTS=1``, never as a
side effect of a test run.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = os.environ.get("EXPLOREVAL_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("EXPLOREVAL_CHROMEDRIVER", "/usr/bin/chromedriver")
ARTIFACTS = Path(__file__).parent / "artifacts"
DOCS_IMG = Path(__file__).resolve().parents[1] / "docs" / "img"
#: Window size of every browser test (the report's summary must fit 1400 px without scrolling).
WINDOW = (1400, 1000)
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    f"--window-size={WINDOW[0]},{WINDOW[1]}",
)


def make_driver(profile_dir: Path) -> Any:
    """A headless Chromium WebDriver with a fresh profile in ``profile_dir``."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    for path, package in ((CHROMIUM, "chromium"), (CHROMEDRIVER, "chromium-driver")):
        if not Path(path).exists():
            raise RuntimeError(
                f"{path} is missing: install the Debian package {package!r} "
                "(scripts/install.sh does it)"
            )
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={profile_dir}")
    driver = webdriver.Chrome(options=options, service=Service(executable_path=CHROMEDRIVER))
    driver.set_page_load_timeout(60)
    return driver


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """One headless Chromium for the test session (fresh profile, removed afterwards)."""
    profile = Path(tempfile.mkdtemp(prefix="exploreval-chromium-"))
    driver = make_driver(profile)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture(scope="session")
def artifacts_dir() -> Path:
    """Where browser tests write screenshots (``tests/artifacts``, git-ignored)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS


def screenshot(driver: Any, name: str, directory: Path | None = None) -> Path:
    """Save a PNG of the current page (full page height) and return its path."""
    target = (directory or ARTIFACTS) / f"{name}.png"
    target.parent.mkdir(parents=True, exist_ok=True)
    height = driver.execute_script("return document.documentElement.scrollHeight")
    width = driver.execute_script("return document.documentElement.scrollWidth")
    driver.set_window_size(max(WINDOW[0], int(width)), min(max(800, int(height)), 6000))
    driver.save_screenshot(str(target))
    driver.set_window_size(*WINDOW)
    return target


def docs_screenshots_wanted() -> bool:
    """Refresh ``docs/img/`` only when asked (``EXPLOREVAL_DOCS_SCREENSHOTS=1``)."""
    return os.environ.get("EXPLOREVAL_DOCS_SCREENSHOTS") == "1"


def docs_screenshot(driver: Any, name: str, source: Path | None = None) -> Path | None:
    """Write ``docs/img/<name>`` (a copy of ``source``, else a screenshot of the window) when
    ``EXPLOREVAL_DOCS_SCREENSHOTS=1``; otherwise do nothing and return None."""
    if not docs_screenshots_wanted():
        return None
    DOCS_IMG.mkdir(exist_ok=True)
    target = DOCS_IMG / name
    if source is not None:
        shutil.copy(source, target)
    else:
        driver.save_screenshot(str(target))
    return target


def wait(browser: Any, condition: Any, timeout: float = 30) -> Any:
    """``WebDriverWait(...).until(condition)``, retrying while the page re-renders: an element
    found a moment ago and replaced before ``.text`` is read raises
    StaleElementReferenceException, which is not a failure of the page."""
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(
        browser, timeout, ignored_exceptions=(StaleElementReferenceException,)
    ).until(condition)


#: Runs in the page: every text that is cut or drawn over other text, one line each.
#: - SVG: a <text> whose box leaves its <svg>'s viewBox (clipped), or overlaps another <text>
#:   of the same picture by more than 2 px each way;
#: - HTML: an element holding text whose content is wider than its box while its overflow is
#:   hidden (cut), and an <img> shown at less than ``min_scale`` of its natural width (its
#:   legends and ticks shrink with it).
_LAYOUT_JS = r"""
const minScale = arguments[0];
const out = [];
const name = (e) => (e.id ? "#" + e.id : e.tagName.toLowerCase() + (e.className && e.className.baseVal !== undefined ? "" : (e.className ? "." + String(e.className).split(" ")[0] : "")));
for (const svg of document.querySelectorAll("svg")) {
  if (!svg.getBoundingClientRect().width) continue;
  const vb = svg.viewBox && svg.viewBox.baseVal && svg.viewBox.baseVal.width ? svg.viewBox.baseVal
    : { x: 0, y: 0, width: svg.width.baseVal.value, height: svg.height.baseVal.value };
  const boxes = [];
  for (const t of svg.querySelectorAll("text")) {
    if (!t.textContent.trim()) continue;
    const b = t.getBBox();
    if (b.x < vb.x - 1 || b.y < vb.y - 1 || b.x + b.width > vb.x + vb.width + 1 || b.y + b.height > vb.y + vb.height + 1)
      out.push(`svg text cut at the picture's edge: "${t.textContent.trim()}"`);
    boxes.push([t, b]);
  }
  for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
    const [ta, a] = boxes[i], [tb, b] = boxes[j];
    const w = Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x);
    const h = Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y);
    if (w > 2 && h > 2) out.push(`svg texts overlap: "${ta.textContent.trim()}" / "${tb.textContent.trim()}"`);
  }
}
for (const e of document.querySelectorAll("body *")) {
  if (e.closest("svg") || !e.textContent.trim() || e.children.length) continue;
  const s = getComputedStyle(e);
  const hides = ["hidden", "clip"];
  if ((hides.includes(s.overflowX) || hides.includes(s.overflow)) && e.scrollWidth > e.clientWidth + 1)
    out.push(`text cut in ${name(e)}: "${e.textContent.trim().slice(0, 60)}"`);
}
for (const img of document.querySelectorAll("img")) {
  if (!img.naturalWidth || !img.getBoundingClientRect().width) continue;
  const scale = img.getBoundingClientRect().width / img.naturalWidth;
  if (scale < minScale) out.push(`image ${img.getAttribute("src")} shown at ${Math.round(scale * 100)}% of its width`);
}
return out;
"""


def layout_problems(driver: Any, *, min_image_scale: float = 0.0) -> list[str]:
    """Text the current page cuts or draws over other text (see ``_LAYOUT_JS``)."""
    return list(driver.execute_script(_LAYOUT_JS, min_image_scale))


@contextlib.contextmanager
def served_viewer(*run_dirs: Path) -> Iterator[str]:
    """``exploreval view RUN_DIR...`` on a free port for the block; yields its base URL."""
    proc = subprocess.Popen(
        [sys.executable, "-c", "from exploreval.cli import main; main()", "view",
         *map(str, run_dirs), "--port", "0"],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert proc.stdout is not None
    line = proc.stdout.readline()
    match = re.search(r"(http://127\.0\.0\.1:\d+/)", line)
    assert match, f"exploreval view printed no URL: {line!r}"
    try:
        yield match.group(1)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
