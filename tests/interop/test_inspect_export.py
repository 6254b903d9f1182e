"""exploreval runs as inspect_ai logs, and exploreval's environments under ``inspect eval``
(issue 20), on every suite, against the inspect_ai installed here (CI: the current one).

* export: inspect_ai's ``read_eval_log`` reads what ``exploreval export`` wrote (one log per env
  and agent, one sample per episode, epoch = repeat + 1, messages and events per step); importing
  it back gives the same steps and the same ``score`` output as the run;
* tasks: ``inspect eval exploreval/<family>`` (inspect's own eval loop and mock model, answering
  from the prompt so the order samples run in does not matter) plays the family's env; its log
  imports to exactly the steps inspect ran, and scores like a native run given the same replies.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from exploreval.analysis import score_run
from exploreval.models import ScriptedModel
from exploreval.runner import run_experiment, spec_from_dict
from exploreval.store import RunDir, import_logs

pytest.importorskip("inspect_ai", reason="the [inspect] extra (installed by the README)")
pytestmark = pytest.mark.slow

#: Replies of the LLM agents: chosen from the last prompt message, so inspect's mock model and
#: exploreval's scripted client answer the same prompt the same way whatever the order.
REPLIES = (
    '{"action": "up"}', '{"action": "right"}', "<Answer>blue</Answer>",
    "<analysis>go on</analysis>\n<action>Right</action>", '{"command": "look"}',
    '{"analysis": "a", "plan": "p", "commands": [{"keystrokes": "ls\\n", "duration": 0.2}], '
    '"task_complete": false}',
    "not an action at all",
)  # fmt: skip
#: Columns that name the run or time it, not what happened.
RUN_COLUMNS = {"run_id", "latency_s", "cost_usd", "unpriced_calls"}


def reply_for(text: str) -> str:
    return REPLIES[int(hashlib.sha256(text.encode()).hexdigest(), 16) % len(REPLIES)]


SUITES: dict[str, dict[str, Any]] = {
    "grid": {"env_id": "exploreval/GridDAG-v0", "presets": ["explore-low/dag-small"],
             "seeds": "0-1", "agents": [{"kind": "scripted", "agent": "frontier"}],
             "llm": {"harness": "react", "history": "window:2"}, "max_steps": 8},
    "bandit": {"env_id": "exploreval/Bandit-v0", "presets": ["smoke"], "seeds": "0",
               "agents": [{"kind": "scripted", "agent": "ucb"}], "repeats": 2,
               "llm": {"harness": "BSSeC0", "history": "none"}, "max_steps": 10},
    "frozenlake": {"env_id": "exploreval/FrozenLake-v0", "presets": ["4x4"], "seeds": "0",
                   "agents": [{"kind": "scripted", "agent": "optimal"}],
                   "llm": {"harness": "default", "history": "none"}, "max_steps": 6},
    "sudoku": {"env_id": "exploreval/Sudoku-v0", "presets": ["4x4-easy"], "seeds": "0",
               "agents": [{"kind": "scripted", "agent": "optimal"}],
               "llm": {"harness": "default", "history": "none"}, "max_steps": 6},
    "blocksworld": {"env_id": "exploreval/BlocksWorld-v0", "presets": ["easy"], "seeds": "0",
                    "agents": [{"kind": "scripted", "agent": "optimal"}],
                    "llm": {"harness": "default", "history": "none"}, "max_steps": 6},
    "task2quiz": {"env_id": "exploreval/Task2Quiz-v0", "presets": ["easy"], "seeds": "0",
                  "agents": [{"kind": "scripted", "agent": "quiz-oracle"}],
                  "llm": {"harness": "default", "history": "none"}, "max_steps": 4},
    "terminal": {"env_id": "exploreval/Terminal-v0", "presets": [None], "seeds": "0",
                 "agents": [{"kind": "scripted", "agent": "curious"}],
                 "llm": {"harness": "default", "history": "none"}, "max_steps": 3},
}  # fmt: skip


@pytest.fixture(scope="module", autouse=True)
def _textworld_cache(tmp_path_factory: pytest.TempPathFactory) -> None:
    os.environ.setdefault("EXPLOREVAL_TEXTWORLD_CACHE", str(tmp_path_factory.mktemp("tw-cache")))


def _scripted_client(spec: Any) -> ScriptedModel:
    return ScriptedModel(reply_fn=lambda messages, _i: reply_for(messages[-1].content),
                         model=spec.model)  # fmt: skip


def _native_run(family: str, out: Path) -> RunDir:
    suite = SUITES[family]
    llm = {"kind": "llm", "model": "mockllm/model", **suite["llm"]}
    spec = {
        "suites": [
            {"env_id": suite["env_id"], "presets": suite["presets"], "seeds": suite["seeds"]}
        ],
        "agents": [*suite["agents"], llm],
        "max_steps": suite["max_steps"],
        "repeats": suite.get("repeats", 1),
        "concurrency": 1,
    }
    summary = run_experiment(
        spec_from_dict(spec, "test"), str(out), client_factory=_scripted_client
    )
    assert summary.errored == 0
    return RunDir(out)


def _results(run: RunDir) -> pd.DataFrame:
    table = score_run(run).table
    keep = [c for c in table.columns if c not in RUN_COLUMNS]
    table = table[keep].sort_values("episode_id").reset_index(drop=True)
    # missing is missing (None in one table, NaN in another where other rows were numbers)
    return table.astype(object).where(table.notna(), None)


@pytest.mark.parametrize("family", list(SUITES))
def test_export_is_read_by_inspect_and_imports_back_exactly(family: str, tmp_path: Path) -> None:
    from inspect_ai.log import read_eval_log

    from exploreval.interop import export_inspect

    run = _native_run(family, tmp_path / "run")
    records = list(run.latest_records().values())
    written = export_inspect(run.path, tmp_path / "logs")
    assert len(written) == len({(r.env_id, r.agent.name) for r in records})
    samples = []
    for path in written:
        log = read_eval_log(str(path), resolve_attachments=True)
        assert log.status == "success" and log.samples
        samples += log.samples
        assert {s.name for s in log.results.scores} == {"exploreval"}
        assert "success" in log.results.scores[0].metrics
    assert len(samples) == len(records)
    by_episode = {s.metadata["episode_id"]: s for s in samples}
    for record in records:
        sample = by_episode[record.episode_id]
        assert sample.epoch == record.repeat + 1
        calls = [m for m in sample.messages if m.role == "assistant"]
        assert [c.tool_calls[0].arguments["action"] for c in calls] == [
            s.action for s in record.steps
        ]
        info = [e for e in sample.events if e.event == "info"]
        assert [e.data["action"] for e in info] == [s.action for s in record.steps]
        models = [e for e in sample.events if e.event == "model"]
        if record.agent.kind == "llm":
            assert len(models) == len(record.steps)
            assert sum(e.output.usage.input_tokens for e in models) == record.usage.prompt_tokens
        else:
            assert models == []
        assert sample.scores["exploreval"].value["success"] == float(record.success)
    imported = import_logs([tmp_path / "logs"], tmp_path / "imported")
    assert imported.episodes == len(records)
    back = {r.episode_id: r for r in RunDir(imported.run_dir).latest_records().values()}
    assert {k: [s.model_dump() for s in r.steps] for k, r in back.items()} == {
        r.episode_id: [s.model_dump() for s in r.steps] for r in records
    }
    pd.testing.assert_frame_equal(_results(RunDir(imported.run_dir)), _results(run))


@pytest.mark.parametrize("family", list(SUITES))
def test_inspect_eval_plays_the_family_and_scores_like_a_native_run(
    family: str, tmp_path: Path
) -> None:
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    suite = SUITES[family]

    def answer(messages: Any, tools: Any, tool_choice: Any, config: Any) -> Any:
        output = ModelOutput.from_content("mockllm/model", reply_for(str(messages[-1].text)))
        output.usage = ModelUsage(input_tokens=50, output_tokens=7, total_tokens=57)
        return output

    task_args: dict[str, Any] = {
        "seeds": suite["seeds"], "max_steps": suite["max_steps"], **suite["llm"],
    }  # fmt: skip
    if suite["presets"][0]:
        task_args["preset"] = suite["presets"][0]
    (log,) = inspect_eval(
        f"exploreval/{family}", task_args=task_args, epochs=suite.get("repeats", 1),
        model=get_model("mockllm/model", custom_outputs=answer),
        log_dir=str(tmp_path / "logs"), display="none",
    )  # fmt: skip
    assert log.status == "success", log.error
    assert log.samples and all(s.scores for s in log.samples)
    info = [e for s in log.samples for e in s.events if e.event == "info"]
    assert info and all(e.source == "exploreval/step" for e in info)
    imported = import_logs([tmp_path / "logs"], tmp_path / "imported")
    from_inspect = list(RunDir(imported.run_dir).latest_records().values())
    assert len(from_inspect) == len(log.samples)
    for record in from_inspect:  # exactly the steps inspect ran: one model event each
        sample = next(s for s in log.samples if s.metadata["seed"] == record.seed
                      and s.epoch == record.repeat + 1)  # fmt: skip
        models = [e for e in sample.events if e.event == "model"]
        assert [e.output.completion for e in models] == [s.raw_output for s in record.steps]
    native = _native_run(family, tmp_path / "native")
    ours = _results(RunDir(imported.run_dir))
    theirs = _results(native)
    theirs = theirs[theirs["agent_kind"] == "llm"].reset_index(drop=True)
    columns = [c for c in ours.columns if c in theirs.columns and c not in
               {"episode_id", "agent", "model", "prompt_tokens", "completion_tokens",
                "total_tokens", "model_calls"}]  # fmt: skip
    key = ["seed", "repeat"]
    pd.testing.assert_frame_equal(
        ours.sort_values(key)[columns].reset_index(drop=True),
        theirs.sort_values(key)[columns].reset_index(drop=True),
        check_dtype=False,  # the native table also held scripted rows (NaN makes ints float)
    )
