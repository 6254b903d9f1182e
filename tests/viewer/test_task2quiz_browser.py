"""Task2Quiz in the viewer, in a real browser (headless Chromium): a Stage-1 step's map marks
the room the step info says the player is in, and stepping with the keyboard from the last task
step into the quiz shows the question, the agent's answer and the reference the env scored."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from selenium.webdriver.common.by import By

from _browser import served_viewer, wait
from exploreval.core import EpisodeRecord
from exploreval.store import RunDir

pytestmark = pytest.mark.slow

CLI = [sys.executable, "-c", "from exploreval.cli import main; main()"]


@pytest.fixture(scope="module")
def t2q_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One easy world, played by the task-only agent and the quiz oracle (compiled games in a
    cache of this module's own)."""
    root = tmp_path_factory.mktemp("t2q-browser")
    env = {**os.environ, "EXPLOREVAL_TEXTWORLD_CACHE": str(root / "tw-cache")}
    result = subprocess.run(
        [*CLI, "run", "exploreval/Task2Quiz-v0", "--preset", "easy", "--seeds", "0",
         "--agent", "task-only", "--agent", "quiz-oracle", "--out", str(root / "run"), "-q"],
        capture_output=True, text=True, timeout=900, env=env,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    return root / "run"


@pytest.fixture(scope="module")
def served(t2q_run: Path) -> Iterator[str]:
    with served_viewer(t2q_run) as url:
        yield url


def text_of(browser: Any, selector: str) -> str:
    return str(browser.find_element(By.CSS_SELECTOR, selector).text)


def test_map_marks_the_room_and_the_quiz_shows_question_answer_reference(
    browser: Any, served: str, t2q_run: Path, shot: Any
) -> None:
    run = RunDir(t2q_run)
    run_id = run.read_manifest().run_id
    record: EpisodeRecord = next(
        r for r in run.latest_records().values() if r.agent.name == "quiz-oracle"
    )
    names = record.ground_truth["quiz_world"]["summary"]["names"]
    base = f"{served}#/run/{run_id}/episode/{record.episode_id}/step"

    # a Stage-1 step after a move: the highlighted room is the step info's room
    start = record.reset_info["room"]
    t = next(i for i, s in enumerate(record.steps) if s.info.get("room") not in (None, start))
    browser.get(f"{base}/{t}")
    wait(browser, lambda b: text_of(b, "#step-label").startswith(f"step {t} · {t + 1} of"))
    current = browser.find_elements(By.CSS_SELECTOR, "#step-view svg rect.room.current")
    assert [c.get_attribute("data-room") for c in current] == [names[record.steps[t].info["room"]]]
    visited = browser.find_elements(By.CSS_SELECTOR, "#step-view svg rect.room.visited")
    assert {v.get_attribute("data-room") for v in visited} >= {
        names[start],
        current[0].get_attribute("data-room"),
    }
    assert (
        text_of(browser, "#step-view .t2q-feedback td") == record.steps[t].info["feedback"].strip()
    )
    assert "task2quiz.room" in text_of(browser, "#annotations")
    shot("task2quiz-stage1")

    # from the last task step, "j" steps into the quiz
    first_quiz = next(i for i, s in enumerate(record.steps) if s.phase == "quiz")
    browser.get(f"{base}/{first_quiz - 1}")
    wait(
        browser,
        lambda b: text_of(b, "#step-label").startswith(f"step {first_quiz - 1} · {first_quiz} of"),
    )
    browser.find_element(By.TAG_NAME, "body").send_keys("j")
    wait(
        browser,
        lambda b: text_of(b, "#step-label").startswith(f"step {first_quiz} · {first_quiz + 1} of"),
    )
    wait(browser, lambda b: b.find_elements(By.CSS_SELECTOR, "#step-view .t2q-question"))
    step = record.steps[first_quiz]
    quiz = step.info["quiz"]
    question = record.ground_truth["questions"][step.info["question_index"]]
    assert text_of(browser, "#step-view .t2q-question td") == question["text"]
    assert text_of(browser, "#step-view .t2q-answer td") == quiz["answer"]
    assert text_of(browser, "#step-view .t2q-reference td") == quiz["reference"]
    assert text_of(browser, "#step-view .t2q-correct td") == (
        "correct" if quiz["correct"] else "wrong"
    )
    assert quiz["correct"]  # the oracle answers from its own evidence
    # the quiz map shows Stage 1's end: no current room, every visited room marked
    assert not browser.find_elements(By.CSS_SELECTOR, "#step-view svg rect.room.current")
    assert browser.find_elements(By.CSS_SELECTOR, "#step-view .t2q-atom.t2q-met")
    assert text_of(browser, "#view-caption").startswith("question 1/")
    annotations = text_of(browser, "#annotations")
    assert "task2quiz.correct" in annotations and "task2quiz.qtype" in annotations
    shot("task2quiz-quiz")
