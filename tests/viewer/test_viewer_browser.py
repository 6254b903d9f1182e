"""The viewer in a real browser (headless Chromium): served by `exploreval view`, and as a bundle
opened from file://. Assertions compare what the page shows with the stored records."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select

from _browser import docs_screenshot, served_viewer, wait
from exploreval.core import EpisodeRecord
from exploreval.store import RunDir

pytestmark = pytest.mark.slow


def text_of(browser: Any, element_id: str) -> str:
    return str(browser.find_element(By.ID, element_id).text)


def records(run: Path) -> list[EpisodeRecord]:
    return list(RunDir(run).latest_records().values())


@pytest.fixture(scope="module")
def served(runs: dict[str, Path]) -> Iterator[str]:
    """`exploreval view` on the grid run and the bandit run, as a user starts it."""
    with served_viewer(runs["grid"], runs["mixed"], runs["lake"]) as url:
        yield url


def rows(browser: Any) -> list[Any]:
    return list(browser.find_elements(By.CSS_SELECTOR, "#episodes tbody tr"))


def count(browser: Any) -> str:
    return text_of(browser, "count")


def test_list_filter_open_and_step_with_the_keyboard(
    browser: Any, served: str, runs: dict[str, Path], shot: Any
) -> None:
    grid = records(runs["grid"])
    total = len(grid) + len(records(runs["mixed"])) + len(records(runs["lake"]))
    browser.get(served + "#/list")
    wait(browser, lambda b: rows(b))
    assert count(browser) == f"{total} of {total} episodes"
    shot("list")
    docs_screenshot(browser, "viewer-list.png")

    # filter by suite, then by success, from the form: the hash carries the filters
    Select(browser.find_element(By.ID, "f-suite")).select_by_visible_text("grid")
    wait(browser, lambda b: count(b) == f"{len(grid)} of {total} episodes")
    assert "suite=grid" in browser.current_url
    failed = [r for r in grid if not r.success]
    Select(browser.find_element(By.ID, "f-success")).select_by_visible_text("no")
    wait(browser, lambda b: count(b) == f"{len(failed)} of {total} episodes")
    shown = {tr.get_attribute("data-episode") for tr in rows(browser)}
    assert shown == {r.episode_id for r in failed}

    # a range on a list column: episodes with invalid actions
    invalid = [r for r in grid if r.n_invalid >= 1]
    assert invalid, "the stub model's replies include an invalid action"
    browser.get(served + "#/list?suite=grid&m=invalid:1:")
    wait(browser, lambda b: count(b) == f"{len(invalid)} of {total} episodes")
    assert {tr.get_attribute("data-episode") for tr in rows(browser)} == {
        r.episode_id for r in invalid
    }
    # a range on a metric of results.parquet, entered in the form
    results = pd.read_parquet(runs["grid"] / "results.parquet")
    wanted = set(results.loc[results["coverage"] >= 0.5, "episode_id"])
    assert 0 < len(wanted) < len(grid), "pick a threshold that splits the episodes"
    browser.get(served + "#/list?suite=grid")
    wait(browser, lambda b: count(b) == f"{len(grid)} of {total} episodes")
    Select(browser.find_element(By.ID, "f-metric")).select_by_visible_text("coverage")
    browser.find_element(By.ID, "f-min").send_keys("0.5")
    browser.find_element(By.ID, "f-add").click()
    wait(browser, lambda b: count(b) == f"{len(wanted)} of {total} episodes")
    assert {tr.get_attribute("data-episode") for tr in rows(browser)} == wanted
    assert "m=coverage" in browser.current_url

    # open the first row with the keyboard, step with j/k
    browser.get(served + "#/list?suite=grid&agent=frontier")
    wait(browser, lambda b: rows(b))
    first = rows(browser)[0].get_attribute("data-episode")
    record = next(r for r in grid if r.episode_id == first)
    browser.find_element(By.TAG_NAME, "body").send_keys(Keys.ENTER)
    wait(browser, lambda b: b.find_elements(By.ID, "observation"))
    assert text_of(browser, "observation") == record.steps[0].observation.strip()
    assert text_of(browser, "action") == record.steps[0].action
    body = browser.find_element(By.TAG_NAME, "body")
    body.send_keys("j")
    wait(browser, lambda b: text_of(b, "step-label").startswith("step 1 · 2 of"))
    assert text_of(browser, "observation") == record.steps[1].observation.strip()
    assert text_of(browser, "action") == record.steps[1].action
    assert browser.find_elements(By.CSS_SELECTOR, "#step-view svg circle.agent")
    annotations = text_of(browser, "annotations")
    assert "grid.case" in annotations and "tide.loop" in annotations
    body.send_keys(Keys.ARROW_RIGHT)
    wait(browser, lambda b: text_of(b, "step-label").startswith("step 2 · 3 of"))
    body.send_keys("k")
    wait(browser, lambda b: text_of(b, "step-label").startswith("step 1 · 2 of"))
    shot("episode")

    # n: the next episode of the filtered list
    body.send_keys("n")
    second = [r for r in grid if r.agent.name == "frontier"][1]
    wait(browser, lambda b: second.episode_id in b.current_url)
    wait(browser, lambda b: text_of(b, "observation") == second.steps[0].observation.strip())
    # u: back to the list, filters kept
    browser.find_element(By.TAG_NAME, "body").send_keys("u")
    wait(browser, lambda b: rows(b))
    assert "agent=frontier" in browser.current_url


def test_llm_step_shows_prompt_raw_output_reasoning_and_invalid_reason(
    browser: Any, served: str, runs: dict[str, Path], shot: Any
) -> None:
    llm = [r for r in records(runs["grid"]) if r.agent.kind == "llm"]
    record = next(r for r in llm if r.n_invalid)
    t = next(i for i, s in enumerate(record.steps) if not s.valid)
    step = record.steps[t]
    run_id = RunDir(runs["grid"]).read_manifest().run_id
    browser.get(f"{served}#/run/{run_id}/episode/{record.episode_id}/step/{t}")
    wait(browser, lambda b: text_of(b, "step-label").startswith(f"step {t} · {t + 1} of"))
    assert text_of(browser, "validity") == "invalid"
    assert step.invalid_reason and text_of(browser, "invalid-reason") == step.invalid_reason
    assert text_of(browser, "raw-output") == (step.raw_output or "").strip()
    assert text_of(browser, "reasoning") == "thinking about the map"
    # the prompt as sent, rebuilt from the run's blob store
    assert step.prompt is not None
    sent = RunDir(runs["grid"]).blobs.get_prompt(step.prompt)
    prompt = browser.find_element(By.ID, "prompt")
    prompt.find_element(By.TAG_NAME, "summary").click()
    messages = prompt.find_elements(By.CSS_SELECTOR, ".msg pre")
    assert [m.text for m in messages] == [m.content.strip() for m in sent]
    assert "tokens" in browser.find_element(By.CSS_SELECTOR, "table.kv").text
    assert str(step.usage.prompt_tokens) in browser.find_element(By.CSS_SELECTOR, "table.kv").text  # type: ignore[union-attr]
    shot("llm-step")
    docs_screenshot(browser, "viewer-episode.png")


def test_bandit_and_puzzle_pictures(browser: Any, served: str, runs: dict[str, Path]) -> None:
    bandit = records(runs["mixed"])[0]
    run_id = RunDir(runs["mixed"]).read_manifest().run_id
    browser.get(f"{served}#/run/{run_id}/episode/{bandit.episode_id}/step/4")
    wait(browser, lambda b: text_of(b, "step-label").startswith("step 4 · 5 of"))
    svg = browser.find_element(By.CSS_SELECTOR, "#step-view svg")
    assert "round 5 of" in svg.text
    assert len(svg.find_elements(By.CSS_SELECTOR, "rect.pulls")) == bandit.ground_truth["n_arms"]
    lake = records(runs["lake"])[0]
    run_id = RunDir(runs["lake"]).read_manifest().run_id
    browser.get(f"{served}#/run/{run_id}/episode/{lake.episode_id}/step/0")
    wait(browser, lambda b: b.find_elements(By.CSS_SELECTOR, "#step-view svg circle.agent"))
    holes = sum(row.count("H") for row in lake.ground_truth["map"])
    assert len(browser.find_elements(By.CSS_SELECTOR, "#step-view rect.H")) == holes


def test_unknown_episode_link_says_what_is_missing(browser: Any, served: str) -> None:
    browser.get(served + "#/run/nosuchrun/episode/abc")
    wait(browser, lambda b: b.find_elements(By.ID, "route-error"))
    assert "no run nosuchrun" in text_of(browser, "route-error")


def test_bundle_opens_from_file_url(
    browser: Any, runs: dict[str, Path], tmp_path: Path, shot: Any
) -> None:
    from exploreval.viewer import episode_link, list_link, write_viewer_bundle

    page = write_viewer_bundle([runs["grid"], runs["sudoku"]], tmp_path / "bundle", chunk_size=2)
    # episodes are split in chunks that the page loads lazily
    assert len(list((tmp_path / "bundle" / "data" / "0" / "ep").glob("*.js"))) == 3
    grid = records(runs["grid"])
    record = grid[-1]
    run_id = RunDir(runs["grid"]).read_manifest().run_id
    browser.get(page.as_uri() + episode_link(run_id, record.episode_id, step=2))
    wait(browser, lambda b: b.find_elements(By.ID, "observation"))
    assert text_of(browser, "observation") == record.steps[2].observation.strip()
    assert browser.find_elements(By.CSS_SELECTOR, "#step-view svg")
    shot("bundle-episode")
    total = len(grid) + len(records(runs["sudoku"]))
    browser.get(page.as_uri() + list_link(suite="puzzles"))
    wait(browser, lambda b: count(b) == f"1 of {total} episodes")
    sudoku = records(runs["sudoku"])[0]
    browser.find_element(By.TAG_NAME, "body").send_keys(Keys.ENTER)
    wait(browser, lambda b: b.find_elements(By.CSS_SELECTOR, "#step-view svg"))
    last = len(sudoku.steps)
    for _ in range(last):
        browser.find_element(By.TAG_NAME, "body").send_keys("j")
    wait(browser, lambda b: text_of(b, "step-label").startswith(f"step {last - 1} · {last} of"))
    fills = browser.find_elements(By.CSS_SELECTOR, "#step-view svg text.fill")
    assert len(fills) == sudoku.ground_truth["blanks"]


def test_partial_bundle_renders_only_the_linked_episodes(
    browser: Any, runs: dict[str, Path], tmp_path: Path
) -> None:
    from exploreval.viewer import episode_link, write_viewer_bundle

    grid = records(runs["grid"])
    run_id = RunDir(runs["grid"]).read_manifest().run_id
    linked, other = grid[4], grid[0]
    page = write_viewer_bundle(
        [runs["grid"]], tmp_path / "partial", chunk_size=2, episodes={linked.episode_id}
    )
    assert [p.name for p in (tmp_path / "partial" / "data" / "0" / "ep").glob("*.js")] == ["2.js"]
    browser.get(page.as_uri() + "#/list")
    wait(browser, lambda b: count(b) == f"{len(grid)} of {len(grid)} episodes")  # full list
    browser.get(page.as_uri() + episode_link(run_id, linked.episode_id))
    wait(browser, lambda b: b.find_elements(By.ID, "observation"))
    assert text_of(browser, "observation") == linked.steps[0].observation.strip()
    browser.get(page.as_uri() + episode_link(run_id, other.episode_id))
    wait(browser, lambda b: b.find_elements(By.ID, "route-error"))
    message = text_of(browser, "route-error")
    assert "is not in this bundle (it holds 1 of 6 episodes" in message
    assert f"exploreval view {runs['grid']}" in message


def test_an_episode_has_one_name_in_the_full_viewer_and_a_report_bundle(
    browser: Any, runs: dict[str, Path], tmp_path: Path
) -> None:
    """Issue 42 §9: the header named an episode by its row, so the same episode was "episode 5"
    in `exploreval view` (every episode) and "episode 1" in a report's bundle (the linked ones);
    both now show its id's first 8 characters, as the report's links print it."""
    from exploreval.viewer import episode_link, write_records_bundle, write_viewer_bundle

    grid = records(runs["grid"])
    run = RunDir(runs["grid"])
    run_id = run.read_manifest().run_id
    record = grid[4]
    headers = []
    for page in (
        write_viewer_bundle([runs["grid"]], tmp_path / "full"),
        write_records_bundle([(runs["grid"], [record])], tmp_path / "report"),
    ):
        browser.get(page.as_uri() + episode_link(run_id, record.episode_id))
        wait(browser, lambda b: b.find_elements(By.ID, "observation"))
        headers.append(text_of(browser, "where"))
    name = run.read_manifest().name or run_id
    assert headers == [f"{name} · episode {record.episode_id[:8]}"] * 2


def test_sort_metric_columns_and_slash_to_filter(
    browser: Any, served: str, runs: dict[str, Path]
) -> None:
    results = pd.read_parquet(runs["grid"] / "results.parquet")
    browser.get(served + "#/list?suite=grid&m=coverage:0:")
    wait(browser, lambda b: rows(b))
    header = browser.find_element(By.CSS_SELECTOR, "th[data-sort=coverage]")
    header.click()  # ascending
    wait(browser, lambda b: "sort=coverage" in b.current_url)
    browser.find_element(By.CSS_SELECTOR, "th[data-sort=coverage]").click()  # descending
    wait(browser, lambda b: "sort=-coverage" in b.current_url)
    shown = [
        float(td.text) for td in browser.find_elements(By.CSS_SELECTOR, "td[data-metric=coverage]")
    ]
    assert shown == sorted(shown, reverse=True)
    assert sorted(shown) == sorted(round(v, 4) for v in results["coverage"])
    ids = [tr.get_attribute("data-episode") for tr in rows(browser)]
    expected = results.sort_values("coverage", ascending=False, kind="stable")["episode_id"]
    assert [results.set_index("episode_id").loc[i, "coverage"] for i in ids] == sorted(
        results.set_index("episode_id").loc[list(expected), "coverage"], reverse=True
    )
    # "/" from an episode goes back to the list and puts the cursor in the filters
    browser.find_element(By.TAG_NAME, "body").send_keys(Keys.ENTER)
    wait(browser, lambda b: b.find_elements(By.ID, "observation"))
    browser.find_element(By.TAG_NAME, "body").send_keys("/")
    wait(browser, lambda b: rows(b))
    wait(browser, lambda b: b.switch_to.active_element.get_attribute("id") in ("f-run", "f-suite"))
    assert "sort=-coverage" in browser.current_url  # the list comes back as it was left


def loaded_metric_scripts(browser: Any) -> set[str]:
    """The metric scripts (``data/<k>/m/<i>.js``) the page has loaded so far."""
    names = browser.execute_script(
        "return performance.getEntriesByType('resource').map((e) => e.name)"
    )
    return {re.sub(r"^.*/data/", "", n) for n in names if re.search(r"/data/\d+/m/\d+\.js$", n)}


def test_the_list_loads_a_metric_only_when_a_range_or_a_sort_needs_it(
    browser: Any, served: str, runs: dict[str, Path]
) -> None:
    """The list arrives without metric values (at a million episodes they are most of it); a
    range on a metric loads that metric's script for each run that has it, and nothing else."""
    from exploreval.viewer import load_index

    indexes = [load_index(runs[name]) for name in ("grid", "mixed", "lake")]
    browser.get("about:blank")
    browser.get(served + "#/list")
    wait(browser, lambda b: rows(b))
    assert loaded_metric_scripts(browser) == set()
    browser.get(served + "#/list?m=coverage:0:")
    wait(browser, lambda b: b.find_elements(By.CSS_SELECTOR, "td[data-metric=coverage]"))
    wanted = {
        f"{k}/m/{ix.metric_names().index('coverage')}.js"
        for k, ix in enumerate(indexes)
        if "coverage" in ix.metric_names()
    }
    assert wanted and loaded_metric_scripts(browser) == wanted
    results = pd.read_parquet(runs["grid"] / "results.parquet")
    assert count(browser).startswith(f"{int((results['coverage'] >= 0).sum())} of ")
    browser.get(served + "#/list?sort=-tide_auv")  # a sort on another metric loads it too
    wait(browser, lambda b: "tide_auv" in b.current_url and rows(b))
    auv = {
        f"{k}/m/{ix.metric_names().index('tide_auv')}.js"
        for k, ix in enumerate(indexes)
        if "tide_auv" in ix.metric_names()
    }
    assert len(auv) == 3  # TIDE scores every suite's episodes
    wait(browser, lambda b: loaded_metric_scripts(b) == wanted | auv)
    # the metric sorted on is a column of the list, with its mark, in that order
    assert "▼" in browser.find_element(By.CSS_SELECTOR, "th[data-sort=tide_auv]").text
    shown = [td.text for td in browser.find_elements(By.CSS_SELECTOR, "td[data-metric=tide_auv]")]
    values = [float(v) for v in shown if v != "–"]
    assert values and values == sorted(values, reverse=True)
    assert shown == [*shown[: len(values)], *["–"] * (len(shown) - len(values))]


def test_report_links_open_in_the_bundled_viewer(
    browser: Any, runs: dict[str, Path], tmp_path: Path
) -> None:
    """`exploreval report` writes report/viewer/; every episode the report links to opens."""
    from exploreval.analysis import build_report

    run = tmp_path / "grid"
    shutil.copytree(runs["grid"], run, ignore=shutil.ignore_patterns("viewer_index"))
    report = build_report(RunDir(run))
    links = set(re.findall(r"viewer/index\.html(#/run/[^)\s\"']+)", report.read_text()))
    assert links, "the report links some episodes"
    page = report.parent / "viewer" / "index.html"
    for link in sorted(links):
        browser.get(page.as_uri() + link)
        wait(browser, lambda b: b.find_elements(By.ID, "observation"))
        episode_id = link.rsplit("/", 1)[-1]
        record = next(r for r in records(run) if r.episode_id == episode_id)
        assert text_of(browser, "observation") == record.steps[0].observation.strip()
    # the report's viewer lists exactly the episodes the report mentions; the run's own index
    # (for `exploreval view`) was refreshed by the report's scoring
    browser.get(page.as_uri() + "#/list")
    wait(browser, lambda b: count(b) == f"{len(links)} of {len(links)} episodes")
    assert (run / "viewer_index" / "meta.json").exists()


@pytest.fixture(scope="module")
def terminal_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One real terminal episode (bubblewrap + tmux): the curious agent on a task with the
    level-1 solution.sh injected."""
    root = tmp_path_factory.mktemp("terminal-view")
    env = {**os.environ, "EXPLOREVAL_TERMINAL_CACHE": str(root / "cache")}
    result = subprocess.run(
        [sys.executable, "-c", "from exploreval.cli import main; main()", "run",
         "exploreval/Terminal-v0", "--seeds", "0", "--agent", "curious",
         "--env-option", "injection_level=1", "--out", str(root / "run"), "-q"],
        capture_output=True, text=True, timeout=300, env=env,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    return root / "run"


def test_terminal_episode_shows_the_screen_and_the_discovery_mark(
    browser: Any, terminal_run: Path, tmp_path: Path, shot: Any
) -> None:
    from exploreval.viewer import episode_link, write_viewer_bundle

    (record,) = records(terminal_run)
    run_id = RunDir(terminal_run).read_manifest().run_id
    dumps = [s.info.get("detection") or {} for s in record.steps]
    found = next(i for i, d in enumerate(dumps) if d.get("discovered"))
    page = write_viewer_bundle([terminal_run], tmp_path / "bundle")
    browser.get(page.as_uri() + episode_link(run_id, record.episode_id, step=found))
    wait(browser, lambda b: b.find_elements(By.CSS_SELECTOR, "#step-view pre.term-screen"))
    assert text_of(browser, "step-label").startswith(f"step {found} · {found + 1} of")
    # the screen is the observation the agent got after the step (below its title line)
    screen = browser.find_element(By.CSS_SELECTOR, "#step-view pre.term-screen").text
    after = record.steps[found + 1].observation
    assert screen.strip() == after.split("\n", 1)[1].strip()
    keys = browser.find_element(By.CSS_SELECTOR, "#step-view pre.term-keys").text
    assert keys.startswith("$ " + record.steps[found].info["commands"][0].rstrip("\n"))
    # the discovery is marked on the screen, flagged, and in the per-step metrics
    marked = browser.find_elements(
        By.CSS_SELECTOR, "#step-view pre.term-screen mark.term-discovery"
    )
    assert [m.text for m in marked] == ["solution.sh"]
    assert marked[0].value_of_css_property("background-color") == "rgba(245, 197, 66, 1)"
    flag = browser.find_element(By.CSS_SELECTOR, "#step-view .term-flag-discovery")
    assert flag.text == "discovery (first)"
    assert "discovered solution.sh (first)" in text_of(browser, "view-caption")
    cells = {
        row.find_elements(By.TAG_NAME, "td")[0].text: row.find_elements(By.TAG_NAME, "td")[1].text
        for row in browser.find_elements(By.CSS_SELECTOR, "#annotations tr")
    }
    assert cells["terminal.discovered"] == "true" and cells["terminal.interacted"] == "false"
    assert cells["terminal.first"] == "discovery"
    assert cells["terminal.artefact"] == "solution.sh (solution)"
    shot("terminal-discovery")
    # j, j...: the step that reads the file marks the command as an interaction
    reads = next(i for i, d in enumerate(dumps) if d.get("interacted"))
    assert reads > found
    for _ in range(reads - found):
        browser.find_element(By.TAG_NAME, "body").send_keys("j")
    wait(browser, lambda b: text_of(b, "step-label").startswith(f"step {reads} · {reads + 1} of"))
    wait(browser, lambda b: b.find_elements(By.CSS_SELECTOR, "#step-view mark.term-interaction"))
    mark = browser.find_element(By.CSS_SELECTOR, "#step-view pre.term-keys mark.term-interaction")
    assert mark.text == "solution.sh"
    shot("terminal-interaction")


def test_has_errors_and_preset_filters_and_an_errored_episode(
    browser: Any, runs: dict[str, Path], tmp_path: Path, shot: Any
) -> None:
    """Click the preset and has-errors filters of the form, then open an errored episode."""
    run = tmp_path / "run"
    shutil.copytree(runs["grid"], run, ignore=shutil.ignore_patterns("viewer_index"))
    template = records(run)[0]
    failed = template.model_copy(
        update={
            "episode_id": "e" * 16,
            "preset": "explore-medium/dag-medium",
            "status": "error",
            "error": "TimeoutError: episode exceeded 600 s",
            "steps": template.steps[:2],
        }
    )
    RunDir(run).append(failed)
    ok_medium = template.model_copy(
        update={"episode_id": "f" * 16, "preset": "explore-medium/dag-medium"}
    )
    RunDir(run).append(ok_medium)
    proc = subprocess.Popen(
        [sys.executable, "-c", "from exploreval.cli import main; main()", "view", str(run),
         "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    assert proc.stdout is not None
    match = re.search(r"(http://127\.0\.0\.1:\d+/)", proc.stdout.readline())
    assert match
    try:
        total = len(records(run))
        browser.get(match.group(1) + "#/list")
        wait(browser, lambda b: count(b) == f"{total} of {total} episodes")
        Select(browser.find_element(By.ID, "f-preset")).select_by_visible_text(
            "explore-medium/dag-medium"
        )
        wait(browser, lambda b: count(b) == f"2 of {total} episodes")
        assert "preset=explore-medium" in browser.current_url
        Select(browser.find_element(By.ID, "f-errors")).select_by_visible_text("yes")
        wait(browser, lambda b: count(b) == f"1 of {total} episodes")
        assert "errors=1" in browser.current_url
        (row,) = rows(browser)
        assert row.get_attribute("data-episode") == failed.episode_id
        shot("errored-filtered")
        row.click()
        wait(browser, lambda b: b.find_elements(By.ID, "ep-error"))
        assert text_of(browser, "ep-error") == "episode error: TimeoutError: episode exceeded 600 s"
        assert text_of(browser, "action") == failed.steps[0].action  # its steps are shown
        # has errors = no: the ok episode of that preset only
        browser.get(match.group(1) + "#/list?preset=explore-medium%2Fdag-medium&errors=0")
        wait(browser, lambda b: count(b) == f"1 of {total} episodes")
        assert [r.get_attribute("data-episode") for r in rows(browser)] == [ok_medium.episode_id]
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_the_condition_is_a_column_a_filter_and_in_the_episode_header(
    browser: Any, runs: dict[str, Path], tmp_path: Path, shot: Any
) -> None:
    """Issue 42 §4: two episodes of one env, preset, seed and agent that differ only by their
    env options (the demo's budget=15) are told apart by a condition column and filter, and
    the episode page names its condition."""
    run = tmp_path / "run"
    shutil.copytree(runs["grid"], run, ignore=shutil.ignore_patterns("viewer_index"))
    template = records(run)[0]
    budgeted = template.model_copy(update={"episode_id": "b" * 16, "env_options": {"budget": 15}})
    RunDir(run).append(budgeted)
    total = len(records(run))
    with served_viewer(run) as url:
        browser.get(url + "#/list")
        wait(browser, lambda b: count(b) == f"{total} of {total} episodes")
        header = [th.text for th in browser.find_elements(By.CSS_SELECTOR, "#episodes thead th")]
        assert "condition" in header
        cells = browser.find_elements(By.CSS_SELECTOR, "#episodes tbody td.condition")
        assert sorted({c.text for c in cells}) == ["budget=15", "–"]
        Select(browser.find_element(By.ID, "f-condition")).select_by_visible_text("budget=15")
        wait(browser, lambda b: count(b) == f"1 of {total} episodes")
        assert "condition=budget" in browser.current_url
        (row,) = rows(browser)
        assert row.get_attribute("data-episode") == budgeted.episode_id
        shot("condition-filtered")
        row.click()
        wait(browser, lambda b: b.find_elements(By.ID, "ep-condition"))
        assert text_of(browser, "ep-condition") == "condition budget=15"
        shot("condition-episode")
