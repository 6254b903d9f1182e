"""Experiment-file versions (issue 45): the option renames of spec v2 keep stored experiments
loading. The v1 side is a real run directory written before the rename
(``tests/fixtures/runs/v1/grid``), not a hand-made dict."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from exploreval.runner import SpecError, spec_from_dict

V1_RUN = Path(__file__).parents[1] / "fixtures" / "runs" / "v1" / "grid"
GRID = "exploreval/GridDAG-v0"


def _v1_manifest() -> dict[str, Any]:
    return json.loads((V1_RUN / "manifest.json").read_text())


def test_a_stored_v1_experiment_loads_with_todays_names_and_the_same_hash() -> None:
    manifest = _v1_manifest()
    assert "episode_timeout_s" in manifest["config"]  # really the old names
    assert "max_concurrency" in manifest["config"]["agents"][0]
    spec = spec_from_dict(manifest["config"], "manifest.json")
    assert spec.spec_version == 2
    assert spec.agents[0].max_connections == manifest["config"]["agents"][0]["max_concurrency"]
    assert spec.agents[0].request_timeout == manifest["config"]["agents"][0]["timeout_s"]
    assert spec.suites[0].env_options == manifest["config"]["suites"][0]["options"]
    # the hash decides whether a run resumes: the rename must not change it
    assert spec.config_hash() == manifest["config_hash"]
    dumped = spec.model_dump(mode="json")
    assert "options" not in dumped["suites"][0] and "episode_timeout_s" not in dumped


def test_a_run_made_before_the_rename_resumes_without_replaying(tmp_path: Path) -> None:
    from exploreval import run

    out = tmp_path / "v1"
    shutil.copytree(V1_RUN, out)
    before = (out / "episodes.jsonl").read_text()
    summary = run(
        env=GRID, presets="explore-low/dag-small", seeds="0-1", agents=["frontier", "random"],
        name="GridDAG-v0", out=out,
    )  # fmt: skip
    assert summary.status == "finished", summary.error
    assert summary.completed == 0 and summary.skipped == 4
    assert (out / "episodes.jsonl").read_text() == before


@pytest.mark.parametrize(
    ("where", "old", "new"),
    [
        ("suites.0", "options", "env_options"),
        ("agents.0", "max_concurrency", "max_connections"),
        ("agents.0", "timeout_s", "request_timeout"),
        ("", "episode_timeout_s", "episode_timeout"),
    ],
)
def test_old_and_new_name_together_is_refused_naming_both(where: str, old: str, new: str) -> None:
    data: dict[str, Any] = {"suites": [{"env_id": GRID}], "agents": [{"kind": "llm", "model": "m"}]}
    value: Any = {} if old == "options" else 5
    target = data if not where else data[where.split(".")[0]][0]
    target[old] = value
    target[new] = value
    with pytest.raises(SpecError, match=rf"{where}.*both '{old}'.*and '{new}'"):
        spec_from_dict(data, "exp.yaml")


def test_a_newer_spec_version_is_refused_with_what_to_do() -> None:
    data = {"spec_version": 3, "suites": [{"env_id": GRID}], "agents": [{"agent": "random"}]}
    with pytest.raises(SpecError, match=r"exp.yaml: spec_version 3 is newer.*upgrade"):
        spec_from_dict(data, "exp.yaml")
    with pytest.raises(SpecError, match=r"exp.yaml: spec_version must be a positive integer"):
        spec_from_dict({**data, "spec_version": "two"}, "exp.yaml")


def test_a_named_suite_registered_with_the_old_key_still_expands() -> None:
    from exploreval.core import register_suite

    register_suite(
        "test-v1-named", [{"env_id": GRID, "seeds": [3], "options": {"budget_alpha": 3}}]
    )
    spec = spec_from_dict(
        {"suites": [{"suite": "test-v1-named", "options": {"naming": "symbolic"}}],
         "agents": [{"agent": "random"}]},
        "exp.yaml",
    )  # fmt: skip
    assert spec.suites[0].env_options == {"budget_alpha": 3, "naming": "symbolic"}
    assert spec.suites[0].seeds == [3]


@given(
    timeout=st.none() | st.floats(min_value=0.1, max_value=1e4),
    connections=st.none() | st.integers(min_value=1, max_value=64),
    options=st.dictionaries(st.sampled_from(["budget_alpha", "naming"]), st.integers(), max_size=2),
)
def test_v1_and_v2_spellings_give_one_spec(
    timeout: float | None, connections: int | None, options: dict[str, int]
) -> None:
    """Written either way, an experiment is the same experiment (equal dumps and hashes)."""
    v1 = {"episode_timeout_s": timeout, "suites": [{"env_id": GRID, "options": options}],
          "agents": [{"kind": "llm", "model": "m", "max_concurrency": connections}]}  # fmt: skip
    v2 = {"spec_version": 2, "episode_timeout": timeout,
          "suites": [{"env_id": GRID, "env_options": options}],
          "agents": [{"kind": "llm", "model": "m", "max_connections": connections}]}  # fmt: skip
    old, new = spec_from_dict(v1), spec_from_dict(v2)
    assert old.model_dump() == new.model_dump()
    assert old.config_hash() == new.config_hash()
