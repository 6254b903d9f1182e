"""The real model path through TIDE: SmolLM2-135M over HTTP plays FrozenLake with and without
memory; the TIDE tables (AUV with the paper's t_max, Loop Ratio, Memory Index) come from the log."""

from __future__ import annotations

from pathlib import Path

import pytest

from exploreval.analysis import build_report, score_run
from exploreval.runner import run_experiment, spec_from_dict
from exploreval.store import RunDir


@pytest.mark.slow
@pytest.mark.local_llm
def test_smollm2_memory_index_and_loops(local_llm_base_url: str, tmp_path: Path) -> None:
    spec = spec_from_dict(
        {
            "name": "tide-local-llm",
            "suites": [{"env_id": "exploreval/FrozenLake-v0", "presets": ["4x4"], "seeds": "0-1"}],
            "agents": [
                {
                    "kind": "llm",
                    "model": "local",
                    "base_url": local_llm_base_url,
                    "history": history,
                    "sampling": {"temperature": 0.0, "max_tokens": 40},
                }
                for history in ("full", "none")
            ],
            "max_steps": 3,
            "concurrency": 1,
        }
    )
    summary = run_experiment(spec, str(tmp_path / "run"))
    assert summary.status == "finished" and summary.completed == 4
    records = list(RunDir(tmp_path / "run").iter_records())
    for record in records:
        assert record.agent.kind == "llm" and 1 <= len(record.steps) <= 3
        for step in record.steps:
            assert step.raw_output is not None  # the model's verbatim text
            assert step.valid or step.invalid_reason  # invalid output kept with its reason
    result = score_run(RunDir(tmp_path / "run"))
    table = result.table
    assert (table["tide_t_max"] == 30).all()  # FrozenLake: TIDE Appendix C.4
    assert table["tide_loop_ratio"].between(0, 1).all()
    assert set(table["history"]) == {"full", "none"}
    memory = result.tables["tide_memory"].iloc[0]
    assert memory["tasks"] == 2 and memory["paired"]
    assert memory["mi"] == pytest.approx(memory["auv_with"] - memory["auv_without"])
    report = build_report(RunDir(tmp_path / "run"))
    assert (report.parent / "tide_memory_index.png").exists()


@pytest.mark.slow
@pytest.mark.local_llm
def test_smollm2_token_entropy_splits_loop_and_other_steps(
    local_llm_base_url: str, tmp_path: Path
) -> None:
    """Figure 8 on the real path (issue 44): llama.cpp's server returns the top-K logprobs the
    client asks for, each step records its reply's mean token entropy, and the TIDE table
    splits it by loop and other steps, weighted by the steps it counts."""
    import math

    spec = spec_from_dict({
        "suites": [{"env_id": "exploreval/FrozenLake-v0", "presets": ["small"], "seeds": "0"}],
        "agents": [{"kind": "llm", "model": "local", "base_url": local_llm_base_url,
                    "sampling": {"temperature": 0.0, "max_tokens": 40, "top_logprobs": 5}}],
        "max_steps": 8, "concurrency": 1,
    })  # fmt: skip
    run_experiment(spec, str(tmp_path / "run"))
    (record,) = RunDir(tmp_path / "run").iter_records()
    values = [s.agent_info["token_entropy"] for s in record.steps]
    assert all(0 <= v <= math.log(5) for v in values)
    assert all(s.agent_info["tokens_scored"] >= 1 for s in record.steps)
    from exploreval.metrics._tide_records import record_loop_mask

    mask = record_loop_mask(record)
    table = score_run(RunDir(tmp_path / "run")).tables["tide_entropy"].iloc[0]
    assert table["loop_steps"] == sum(mask) and table["other_steps"] == len(mask) - sum(mask)
    others = [v for v, looped in zip(values, mask, strict=True) if not looped]
    assert table["entropy_other"] == pytest.approx(sum(others) / len(others))
    report = build_report(RunDir(tmp_path / "run")).read_text()
    assert "Action entropy on loop and non-loop steps (Figure 8)" in report
