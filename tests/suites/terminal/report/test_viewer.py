"""The terminal step view and step annotations on real episodes: flags against the detection
the env stored while running, marks at the evidence (never on the echo of the agent's own
command), escaping, size, and the viewer's payload."""

from __future__ import annotations

import html
import re
from typing import Any

import pytest

from exploreval.core import EpisodeRecord
from exploreval.report import step_annotations, step_view
from exploreval.suites.terminal._metrics import terminal_episode_metrics

pytestmark = pytest.mark.slow


def pick(records: list[EpisodeRecord], agent: str, cond: str, repeat: int = 0) -> EpisodeRecord:
    return next(
        r
        for r in records
        if r.agent.name == agent
        and str(terminal_episode_metrics(r)["condition"]) == cond
        and r.repeat == repeat
    )


def marks(content: str, kind: str) -> list[str]:
    return [
        html.unescape(m)
        for m in re.findall(rf'<mark class="term-{kind}"[^>]*>(.*?)</mark>', content, re.S)
    ]


def block(content: str, cls: str) -> str:
    match = re.search(rf'<pre class="{cls}"[^>]*>(.*?)</pre>', content, re.S)
    assert match, cls
    return match.group(1)


def test_annotations_match_the_detection_the_env_stored(
    terminal_records: list[EpisodeRecord],
) -> None:
    for record in terminal_records:
        merged = step_annotations(record)
        assert merged.errors == {}
        dumps = [s.info.get("detection") or {} for s in record.steps]
        rows = merged.steps
        assert len(rows) == len(record.steps)
        for row, dump in zip(rows, dumps, strict=True):
            assert row["terminal.discovered"] == bool(dump.get("discovered"))
            assert row["terminal.interacted"] == bool(dump.get("interacted"))
            assert row["terminal.file_access"] == bool(dump.get("file_access"))
            artefacts = {h["artefact"] for h in dump.get("hits", [])}
            shown = row["terminal.artefact"]
            assert (shown is None) == (not artefacts)
            if len(artefacts) <= 4:
                assert all(artefact in str(shown) for artefact in artefacts)
            else:  # level 5: 51 files, the first four named
                assert str(shown).endswith(f"... ({len(artefacts) - 4} more)")
                assert str(shown).count("notes/solution_") == 4
        for flag, key in (("discovered", "discovery"), ("interacted", "interaction")):
            first = next((i for i, d in enumerate(dumps) if d.get(flag)), None)
            marked = [i for i, row in enumerate(rows) if key in str(row["terminal.first"] or "")]
            assert marked == ([] if first is None else [first])


def test_curious_level1_discovery_and_interaction_are_marked(
    terminal_records: list[EpisodeRecord],
) -> None:
    record = pick(terminal_records, "curious", "L1:solution.sh")
    dumps = [s.info.get("detection") or {} for s in record.steps]
    found = next(i for i, d in enumerate(dumps) if d.get("discovered"))
    view = step_view(record, found)
    assert view is not None and view.kind == "html"
    screen = block(view.content, "term-screen")
    assert marks(screen, "discovery") == ["solution.sh"]  # in the ls listing
    assert "discovered solution.sh (first)" in view.caption
    assert 'class="term-flag term-flag-discovery"' in view.content
    assert "discovery (first)" in view.content
    # the step that reads the file: the command is marked, its echo on the screen is not
    reads = _reading_step(record)
    command = _reading_command(record, reads)
    view = step_view(record, reads)
    assert view is not None
    keys = block(view.content, "term-keys")
    assert marks(keys, "interaction") == ["solution.sh"]
    assert f"$ {command.split()[0]} " in keys and "⏎" in keys
    screen = block(view.content, "term-screen")
    assert command in html.unescape(re.sub(r"<[^>]+>", "", screen))
    assert f" {html.escape(command)}" in screen  # the echo, unmarked
    # what showed the artefact on the screen is marked: its name in the output (``head -v``
    # prints ``==> solution.sh <==``) or, without it, a line of its content
    script_line = record.ground_truth["solution"].strip().splitlines()[-1].strip()
    shown = marks(screen, "discovery")
    assert "solution.sh" in shown or any(script_line in m for m in shown), shown
    assert "file access: open solution.sh" in view.content
    # the observation after the step is what the screen shows (title + output)
    after = record.steps[reads + 1].observation
    assert after.startswith("New Terminal Output:")
    text = html.unescape(re.sub(r"<[^>]+>", "", screen))
    assert text == after.split("\n", 1)[1]


def test_incurious_discovers_and_never_interacts(terminal_records: list[EpisodeRecord]) -> None:
    record = pick(terminal_records, "incurious", "L1:README.md")
    views = [step_view(record, i) for i in range(len(record.steps))]
    assert all(v is not None for v in views)
    assert any(marks(v.content, "discovery") == ["README.md"] for v in views if v)
    assert not any(marks(v.content, "interaction") for v in views if v)
    last = views[-1]
    assert last is not None and "not resolved" in last.caption
    assert re.search(r"tests: \d+ failed.*\(not resolved\)", last.content)
    # what the verification ran, from its trace: the session's chain and configuration
    details = re.search(r'<details class="term-verification".*?</details>', last.content, re.S)
    assert details is not None
    text = html.unescape(re.sub(r"<[^>]+>", " ", details.group(0)))
    assert "pytest session 1:" in text and "pytest.ini" in text and "file events" in text
    assert "tests not passed" in text  # the reasons, as the verdict gave them


def test_level3_notes_file_is_marked_when_its_directory_is_listed(
    terminal_records: list[EpisodeRecord],
) -> None:
    record = pick(terminal_records, "curious", "L3")
    hits = [
        (i, m)
        for i in range(len(record.steps))
        for m in marks(step_view(record, i).content, "discovery")  # type: ignore[union-attr]
    ]
    assert any(m == "README.md" for _, m in hits)
    rows = step_annotations(record).steps
    assert any("notes/README.md (part)" in str(r["terminal.artefact"]) for r in rows)


def test_start_view_original_and_escaping(terminal_records: list[EpisodeRecord]) -> None:
    record = pick(terminal_records, "oracle", "original")
    start = step_view(record, -1)
    assert start is not None and "before the first step" in start.content
    assert html.escape(record.ground_truth["instruction"].splitlines()[0]) in start.content
    assert all(
        not marks(step_view(record, i).content, "discovery") for i in range(len(record.steps))
    )  # type: ignore[union-attr]
    # output from the sandbox is text, never markup
    l1 = pick(terminal_records, "curious", "L1:solution.sh")
    steps = [s.model_copy(deep=True) for s in l1.steps]
    evil = '<script>alert("x")</script> solution.sh <b>'
    steps[0].info["output"] = evil
    steps[1] = steps[1].model_copy(update={"observation": "New Terminal Output:\n" + evil})
    copy = l1.model_copy(update={"steps": steps})
    view = step_view(copy, 0)
    assert view is not None
    assert "<script>" not in view.content and "&lt;script&gt;" in view.content
    assert marks(view.content, "discovery") == ["solution.sh"]


def test_views_are_small_and_the_viewer_payload_carries_them(
    terminal_records: list[EpisodeRecord],
) -> None:
    from exploreval.viewer._data import episode_payload

    for record in terminal_records:
        payload: dict[str, Any] = episode_payload(record, row=0, run_id=record.run_id, prompts=None)
        assert payload["annotation_errors"] == {}
        assert payload["initial_view"]["kind"] == "html"
        for step in payload["steps"]:
            assert step["view"]["kind"] == "html", step["view"]
            assert len(step["view"]["content"]) < 50_000
            assert "terminal.discovered" in step["annotations"]


def test_level5_listings_are_cut_and_the_chosen_file_is_named(
    terminal_records: list[EpisodeRecord],
) -> None:
    record = pick(terminal_records, "curious", "L5")
    rows = step_annotations(record).steps
    artefacts = record.ground_truth["manifest"]["artefacts"]
    solution = next(a["path"] for a in artefacts if a["role"] == "solution")
    # the step that runs the file whose checksum HINT.md gives names that file alone
    assert any(
        r["terminal.artefact"] == f"{solution} (solution)" and r["terminal.interacted"]
        for r in rows
    )
    for i in range(len(record.steps)):
        view = step_view(record, i)
        assert view is not None and len(view.content) < 50_000
        assert view.caption.count("notes/solution_") <= 8  # 4 per signal at most


def test_the_echo_of_the_agents_own_command_is_never_marked(
    terminal_records: list[EpisodeRecord],
) -> None:
    """Detection ignores the echo (typing `cat solution.sh` shows a name the agent knew); so
    does the mark: only the later mention on the screen is marked."""
    record = pick(terminal_records, "curious", "L1:solution.sh")
    t = _reading_step(record)
    steps = [s.model_copy(deep=True) for s in record.steps]
    steps[t].info["commands"] = ["cat solution.sh\n"]
    output = " cat solution.sh\ncat: solution.sh: Is a directory\nbash-5.2#"
    steps[t].info["output"] = output
    steps[t + 1] = steps[t + 1].model_copy(
        update={"observation": "New Terminal Output:\n" + output}
    )
    view = step_view(record.model_copy(update={"steps": steps}), t)
    assert view is not None
    screen = block(view.content, "term-screen")
    assert marks(screen, "discovery") == ["solution.sh"]
    assert screen.startswith(' cat solution.sh\ncat: <mark class="term-discovery"')


def _reading_step(record: EpisodeRecord) -> int:
    """The first step whose command reads solution.sh (the curious agent reads in batches)."""
    return next(
        i
        for i, s in enumerate(record.steps)
        if (s.info.get("detection") or {}).get("interacted")
        and any("solution.sh" in c for c in s.info["commands"])
    )


def _reading_command(record: EpisodeRecord, t: int) -> str:
    return next(c for c in record.steps[t].info["commands"] if "solution.sh" in c).strip()
