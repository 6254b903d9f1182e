"""Viewer at scale: a 100,000-episode run, from `exploreval view` start to the list ready.

    python bench/bench_viewer.py [RUN_DIR] [--quick]   (--quick: 2,000 episodes)

Without RUN_DIR a synthetic run is written to a temporary directory by bench/_synthetic_run.py
(real records cloned as further repeats; about 16 kB per episode). Prints:

* cold index build: the one scan of episodes.jsonl that writes RUN_DIR/viewer_index/ (paid once
  per run; appends are indexed incrementally);
* warm open, the goal (< 2 s): from spawning `exploreval view RUN_DIR --port 0` to the episode
  list rendered in headless Chromium (the browser is started before the clock; without
  /usr/bin/chromium the list data is fetched over HTTP instead and the number says so);
* the list's size (what the page parses before it shows page one) and the page's JS heap then;
* filter (in the page), a range on a metric (the page loads that metric's script first), and
  opening one episode (server-side render of its steps);
* a report's bundle: the whole list plus 50 linked episodes rendered (write_viewer_bundle).
"""

from __future__ import annotations

import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

CHROMIUM, CHROMEDRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--window-size=1400,1000", "--enable-precise-memory-info"]  # fmt: skip


def _driver(profile: str):  # type: ignore[no-untyped-def]
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in [*FLAGS, f"--user-data-dir={profile}"]:
        options.add_argument(flag)
    return webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)


def _count(driver) -> str | None:  # type: ignore[no-untyped-def]
    """The list's count line, read in one script (a re-render replaces the element)."""
    text = driver.execute_script(
        "const c = document.getElementById('count'); return c ? c.textContent : null"
    )
    return None if text is None else str(text)


def _start_server(run: Path) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from exploreval.cli import main; main()",
            "view",
            str(run),
            "--port",
            "0",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    match = re.search(r"http://\S+", line)
    if match is None:
        proc.kill()
        raise SystemExit(f"exploreval view printed no URL: {line!r}")
    return proc, match.group(0)


def main(argv: list[str]) -> None:
    from exploreval.viewer import load_index

    tmp: str | None = None
    quick = "--quick" in argv  # run_all.py --quick: 2,000 episodes
    argv = [a for a in argv if a != "--quick"]
    if argv:
        run = Path(argv[0])
    else:
        from _synthetic_run import write_synthetic_run

        n = 2_000 if quick else 100_000
        tmp = tempfile.mkdtemp(prefix="bench-viewer-")
        run = Path(tmp) / "run"
        start = time.perf_counter()
        write_synthetic_run(run, n)
        print(f"synthetic run: {n} episodes in {time.perf_counter() - start:.1f} s")
    try:
        size_mb = (run / "episodes.jsonl").stat().st_size / 1e6
        shutil.rmtree(run / "viewer_index", ignore_errors=True)
        start = time.perf_counter()
        index = load_index(run)
        print(
            f"cold index build: {time.perf_counter() - start:.2f} s for {len(index)} episodes "
            f"({size_mb:.0f} MB of episodes.jsonl)"
        )
        browser = CHROMIUM.exists() and CHROMEDRIVER.exists()
        driver = _driver(tempfile.mkdtemp(prefix="bench-viewer-profile-")) if browser else None
        opens: list[float] = []
        heaps: list[float] = []
        metric_ranges: list[float] = []
        try:
            for _ in range(3):
                start = time.perf_counter()
                proc, url = _start_server(run)
                try:
                    if driver is not None:
                        from selenium.webdriver.common.by import By
                        from selenium.webdriver.support.ui import WebDriverWait

                        driver.get(url + "#/list")
                        WebDriverWait(driver, 60, poll_frequency=0.02).until(
                            lambda d: d.find_elements(By.CSS_SELECTOR, "#episodes tbody tr")
                        )
                        opens.append(time.perf_counter() - start)
                        heaps.append(
                            driver.execute_script("return performance.memory.usedJSHeapSize")
                        )
                        count = _count(driver)
                        start = time.perf_counter()
                        driver.get(url + "#/list?success=0&m=tokens:1000:")
                        WebDriverWait(driver, 60, poll_frequency=0.02).until(
                            lambda d, before=count: _count(d) not in (None, before)
                        )
                        filtered = time.perf_counter() - start
                        count = _count(driver)
                        start = time.perf_counter()
                        driver.get(url + "#/list?m=tide_auv:0.5:")
                        WebDriverWait(driver, 60, poll_frequency=0.02).until(
                            lambda d, before=count: _count(d) not in (None, before)
                        )
                        metric_ranges.append(time.perf_counter() - start)
                    else:
                        for part in ("data/runs.js", "data/0/index.js"):
                            urllib.request.urlopen(url + part, timeout=60).read()
                        opens.append(time.perf_counter() - start)
                        filtered = float("nan")
                    start = time.perf_counter()
                    body = urllib.request.urlopen(url + "data/0/ep/7.js", timeout=60).read()
                    episode = time.perf_counter() - start
                finally:
                    proc.terminate()
                    proc.wait()
        finally:
            if driver is not None:
                driver.quit()
        how = "to the list rendered in Chromium" if browser else "to the list data over HTTP"
        print(
            f"warm open ({how}): median {statistics.median(opens):.2f} s "
            f"(runs: {', '.join(f'{t:.2f}' for t in opens)}); goal < 2 s"
        )
        list_mb = len(index.list_script()) / 1e6
        if heaps:
            print(
                f"list script {list_mb:.1f} MB; JS heap with the list drawn: median "
                f"{statistics.median(heaps) / 1e6:.0f} MB"
            )
        print(f"filter in the page (success=0, tokens >= 1000): {filtered * 1000:.0f} ms")
        if metric_ranges:
            print(
                "range on a metric (tide_auv >= 0.5; loads its script on first use): median "
                f"{statistics.median(metric_ranges) * 1000:.0f} ms"
            )
        print(f"open one episode (server render, first request): {episode * 1000:.0f} ms, "
              f"{len(body) / 1e3:.0f} kB")  # fmt: skip
        from exploreval.viewer import write_viewer_bundle

        index.ensure_rows()
        linked = set(index.columns["id"][:: max(1, len(index) // 50)])
        with tempfile.TemporaryDirectory(prefix="bench-viewer-bundle-") as out:
            start = time.perf_counter()
            write_viewer_bundle([run], out, episodes=linked)
            print(
                f"bundle for a report (list of {len(index)} + {len(linked)} episodes rendered): "
                f"{time.perf_counter() - start:.2f} s"
            )
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main(sys.argv[1:])
