"""Old runs still load: version-1 records (written by exploreval before multi-task episodes and
typed step info) migrate on read and score exactly as they did when they were written.

The fixtures under ``tests/fixtures/runs/v1/`` are real run directories produced by the
version-1 code (commit 2df9d2d) for a grid, a bandit, a puzzle and an LLM (scripted model) run,
each with the ``results.parquet`` that code computed.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pandas as pd
import pytest

from exploreval.analysis import score_run
from exploreval.core import SCHEMA_VERSION, EpisodeRecord, load_record, migrate_record
from exploreval.metrics.tide import record_loops
from exploreval.store import RunDir

V1 = Path(__file__).parent.parent / "fixtures" / "runs" / "v1"
RUNS = sorted(p.name for p in V1.iterdir() if p.is_dir())

#: Loop columns whose default reading changed on purpose (issue 57: TIDE's Loop Ratio is now the
#: authors' published scan). A version-1 run holds the exhaustive reading, which keeps its name:
#: these are checked against it, not against the new default.
EXHAUSTIVE_IN_V1 = ("tide_loop_ratio", "tide_loop_steps", "tide_cycles")


def _exhaustive_loops(record: EpisodeRecord) -> tuple[int | None, int | None]:
    """(loop steps, cycles) of a record's task views by the exhaustive reading, as v1 scored."""
    stats = [record_loops(view, definition="exhaustive") for view in record.task_views()]
    known = [s for s in stats if s is not None]
    if not known:
        return None, None
    return sum(s.loop_steps for s in known), sum(s.cycles for s in known)


def test_fixtures_really_are_version_1() -> None:
    for name in RUNS:
        lines = (V1 / name / "episodes.jsonl").read_text().splitlines()
        versions = {json.loads(line)["schema_version"] for line in lines}
        assert versions == {1}, name
    assert SCHEMA_VERSION == 3


@pytest.mark.parametrize("name", RUNS)
def test_v1_run_scores_as_it_did(name: str, tmp_path: Path) -> None:
    run_path = tmp_path / name
    shutil.copytree(V1 / name, run_path)
    expected = pd.read_parquet(V1 / name / "results.parquet")
    result = score_run(RunDir(run_path), write=False)
    assert result.issues == []
    got = result.table
    assert len(got) == len(expected)
    common = [c for c in expected.columns if c in got.columns]
    # every version-1 column still exists (new columns may be added, none silently dropped)
    assert set(expected.columns) <= set(got.columns), set(expected.columns) - set(got.columns)
    got = got.set_index("episode_id").loc[expected["episode_id"]].reset_index()
    if set(EXHAUSTIVE_IN_V1) <= set(expected.columns):
        got["tide_loop_ratio"] = got["tide_loop_ratio_exhaustive"]
        loops = {r.episode_id: _exhaustive_loops(r) for r in RunDir(run_path).iter_records()}
        got["tide_loop_steps"] = [loops[e][0] for e in got["episode_id"]]
        got["tide_cycles"] = [loops[e][1] for e in got["episode_id"]]
    for column in common:
        for old, new in zip(expected[column], got[column], strict=True):
            if isinstance(old, float) and math.isnan(old):
                assert new is None or (isinstance(new, float) and math.isnan(new)), column
            elif isinstance(old, float):
                assert new == pytest.approx(old, rel=1e-9, abs=1e-12), column
            else:
                assert new == old, (column, old, new)


def test_migrated_record_is_one_task_in_the_task_phase() -> None:
    line = (V1 / "grid" / "episodes.jsonl").read_text().splitlines()[0]
    record = load_record(json.loads(line))
    assert record.schema_version == SCHEMA_VERSION
    assert {s.phase for s in record.steps} == {"task"} and {s.task for s in record.steps} == {0}
    outcomes = record.task_outcomes()
    assert len(outcomes) == 1 and outcomes[0].success == record.success
    assert outcomes[0].steps == record.n_steps
    assert record.task_views() == [record]


def test_newer_and_broken_versions_are_named() -> None:
    with pytest.raises(ValueError, match="newer than this exploreval"):
        migrate_record({"schema_version": SCHEMA_VERSION + 1})
    with pytest.raises(ValueError, match="positive integer"):
        migrate_record({"schema_version": "two"})


def test_a_newer_line_in_a_log_is_reported_and_skipped(tmp_path: Path) -> None:
    run_path = tmp_path / "grid"
    shutil.copytree(V1 / "grid", run_path)
    first = json.loads((run_path / "episodes.jsonl").read_text().splitlines()[0])
    first["schema_version"] = SCHEMA_VERSION + 5
    with open(run_path / "episodes.jsonl", "a", encoding="utf-8") as fh:
        fh.write(json.dumps(first) + "\n")
    issues: list = []
    records = list(RunDir(run_path).iter_records(issues))
    assert len(records) == 4
    assert len(issues) == 1 and "newer than this exploreval" in issues[0].message


def test_v2_unpriced_usage_migrates_to_an_unknown_cost() -> None:
    """Version 2 stored cost_usd 0.0 next to unpriced_calls: version 3 says null (unknown)."""
    line = json.loads((V1 / "llm" / "episodes.jsonl").read_text().splitlines()[0])
    unpriced = {"prompt_tokens": 10, "completion_tokens": 2, "calls": 1, "cost_usd": 0.0,
                "unpriced_calls": 1}  # fmt: skip
    priced = {"prompt_tokens": 10, "completion_tokens": 2, "calls": 1, "cost_usd": 0.25}
    v2 = {
        **line,
        "schema_version": 2,
        "usage": {**unpriced, "calls": 2, "cost_usd": 0.25, "prompt_tokens": 20},
        "steps": [
            {**line["steps"][0], "usage": unpriced},
            {**line["steps"][1], "usage": priced},
        ],
    }
    migrated = migrate_record(v2)
    assert migrated["schema_version"] == 3
    assert migrated["usage"]["cost_usd"] is None
    assert [s["usage"]["cost_usd"] for s in migrated["steps"][:2]] == [None, 0.25]
    record = load_record(v2)
    assert record.usage.cost_usd is None and not record.usage.cost_known
    assert record.steps[1].usage is not None and record.steps[1].usage.cost_known
