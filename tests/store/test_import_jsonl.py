"""Generic JSONL import: episode boundaries, fields, errors naming file/line/field, a scoreable run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from exploreval.analysis import score_run
from exploreval.metrics.tide import record_loops, record_recall, solved_at
from exploreval.store import LogImportError, RunDir, import_logs, read_logs

FIXTURES = Path(__file__).parent.parent / "fixtures" / "import"


def test_keyed_episodes_become_records(tmp_path: Path) -> None:
    summary = import_logs([FIXTURES / "generic.jsonl"], tmp_path / "run")
    assert (summary.format, summary.episodes, summary.steps) == ("jsonl", 3, 13)
    run = RunDir(tmp_path / "run")
    manifest = run.read_manifest()
    assert (manifest.kind, manifest.status, manifest.episodes_done) == ("import", "imported", 3)
    records = list(run.iter_records())
    first = records[0]
    assert first.family == "import:jsonl" and first.env_id == "import/FrozenLake"
    assert first.agent.name == "toy-llm/full" and first.agent.kind == "llm"
    assert first.reset_info["task_id"] == "map-0"
    assert solved_at(first) == 8 and first.success
    # P R P L ... the Right/Left lap repeats once before the agent goes Down: 2 loop steps
    stats = record_loops(first)
    assert stats is not None and stats.loop_steps == 2
    assert first.steps[-1].info["observation_after"].endswith("_ _ P")
    # cell-1 shown by observation 1 (after action 0), acted on by action 4: d = 4 + 1 - 1
    assert record_recall(first).mean == 4
    invalid = records[2]
    assert [s.valid for s in invalid.steps] == [False, False, False]
    assert invalid.steps[0].invalid_reason == "moved into the wall"
    # Up into the wall three times, the state never changing. The published scan (the default)
    # finds the one-state cycle at step 0 and its repeat at step 1, jumps, and again at 1 and 2:
    # 2 loop steps. The exhaustive reading closes a lap only on the state after it, which the
    # last step's lap lacks: 1.
    stats = record_loops(invalid)
    assert stats is not None and (stats.loop_steps, stats.cycles) == (2, 2)
    exhaustive = record_loops(invalid, definition="exhaustive")
    assert exhaustive is not None and exhaustive.loop_steps == 1


def test_done_separated_episodes_and_unknown_fields(tmp_path: Path) -> None:
    episodes, _ = read_logs("jsonl", [FIXTURES / "generic_done.jsonl"])
    assert [len(e.steps) for e in episodes] == [2, 2, 1]
    assert [e.success for e in episodes] == [True, False, False]
    assert episodes[2].steps[0].info["arm"] == 3  # unknown fields kept in info
    assert episodes[0].env_id == "import/jsonl" and episodes[0].agent == "unknown"


def test_scoring_an_import_gives_tide_columns(tmp_path: Path) -> None:
    import_logs([FIXTURES / "generic.jsonl"], tmp_path / "run")
    result = score_run(RunDir(tmp_path / "run"))
    table = result.table.set_index("seed")
    assert table.loc[0, "tide_t_max"] == 30  # FrozenLake: the paper's t_max
    assert table.loc[0, "tide_auv"] == pytest.approx((30 - 8 + 0.5) / 30)
    summary = result.tables["tide_summary"].iloc[0]
    assert summary["success_rate"] == pytest.approx(2 / 3)
    # fl-0 reports progress (.25 0 .25 0 .25 .5 .75 1): area 0.5 + 2.0 + 22 = 24.5; fl-1 reports none
    # and is solved at turn 2 (progress 0 then 1): 28.5; fl-2 is unsolved: 0. Each over t_max = 30.
    assert summary["progress_auv"] == pytest.approx((24.5 + 28.5) / 90)


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (['{"observation": "a"}'], "line 1: missing required field 'action'"),
        (['{"observation": 3, "action": "x"}'], "line 1: field 'observation' must be a string"),
        (['{"observation": "a", "action": "x"}', "{not json"], "line 2: not valid JSON"),
        (['["a", "x"]'], "line 1: expected a JSON object per line"),
        (
            [
                '{"episode": 1, "observation": "a", "action": "x"}',
                '{"observation": "b", "action": "y"}',
            ],
            "line 2: some lines have an 'episode' field",
        ),
        (
            ['{"observation": "a", "action": "x", "progress": 1.5}'],
            "line 1: field 'progress' must be in [0, 1]",
        ),
        (
            ['{"observation": "a", "action": "x", "success": "yes"}'],
            "line 1: field 'success' must be true/false",
        ),
        (
            ['{"episode": "e", "t": 1, "observation": "a", "action": "x"}'],
            "field 't' is 1 but this is step 0",
        ),
        (
            ['{"observation": "a", "action": "x", "agent_kind": "robot"}'],
            "field 'agent_kind' must be 'llm' or 'scripted'",
        ),
    ],
)
def test_bad_lines_are_named(tmp_path: Path, lines: list[str], message: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(LogImportError) as info:
        read_logs("jsonl", [path])
    assert str(path) in str(info.value) and message in str(info.value)


def test_bytes_that_are_not_utf8_name_their_line(tmp_path: Path) -> None:
    path = tmp_path / "latin1.jsonl"
    path.write_bytes(
        b'{"observation": "a", "action": "x"}\n{"observation": "caf\xe9", "action": "y"}\n'
    )
    with pytest.raises(LogImportError, match=r"latin1\.jsonl: line 2: not UTF-8 text"):
        read_logs("jsonl", [path])


def test_refuses_to_overwrite_a_run_and_empty_input(tmp_path: Path) -> None:
    import_logs([FIXTURES / "generic.jsonl"], tmp_path / "run")
    with pytest.raises(ValueError, match="already holds a run"):
        import_logs([FIXTURES / "generic.jsonl"], tmp_path / "run")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n")
    with pytest.raises(LogImportError, match="no episodes found"):
        import_logs([empty], tmp_path / "other")
    with pytest.raises(FileNotFoundError, match="does not exist"):
        import_logs([tmp_path / "missing.jsonl"], tmp_path / "third")


def test_history_labels_make_memory_index_work_on_imports(tmp_path: Path) -> None:
    path = tmp_path / "mi.jsonl"
    rows = []
    for task in range(4):
        rows.append(
            {
                "episode": f"f{task}",
                "task": task,
                "env": "WebShop",
                "agent": "m",
                "history": "full",
                "observation": "page",
                "action": "buy",
                "success": True,
                "done": True,
            }
        )
        rows.append(
            {
                "episode": f"n{task}",
                "task": task,
                "env": "WebShop",
                "agent": "m",
                "history": "none",
                "observation": "page",
                "action": "search",
                "done": True,
            }
        )
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    import_logs([path], tmp_path / "run")
    memory = score_run(RunDir(tmp_path / "run")).tables["tide_memory"].iloc[0]
    assert memory["tasks"] == 4
    assert memory["mi"] == pytest.approx((15 - 1 + 0.5) / 15)  # WebShop t_max 15
