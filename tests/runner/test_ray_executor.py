"""The Ray executor runs the same plan and stores the same episodes as the local one."""

from __future__ import annotations

from pathlib import Path

import pytest

ray = pytest.importorskip("ray", reason="the [ray] extra is part of the README install")

from exploreval.runner import run_experiment, spec_from_dict  # noqa: E402
from exploreval.store import RunDir  # noqa: E402

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def ray_cluster():  # type: ignore[no-untyped-def]
    import sys

    tests_dir = str(Path(__file__).parents[1])
    # Workers must import the toy env module used by these tests.
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        runtime_env={"env_vars": {"PYTHONPATH": tests_dir + ":" + ":".join(sys.path)}},
    )
    yield
    ray.shutdown()


def test_ray_matches_local_and_resumes(tmp_path: Path, ray_cluster: None) -> None:
    data = {
        "suites": [{"env_id": "test/LineWalk-v0", "presets": ["short", "long"], "seeds": "0-5"}],
        "agents": [{"agent": "forward"}, {"agent": "random"}],
        "plugins": ["_toy"],
    }
    local = run_experiment(spec_from_dict(data), str(tmp_path / "local"))
    remote = run_experiment(spec_from_dict({**data, "executor": "ray"}), str(tmp_path / "ray"))
    errors = [r.error for r in RunDir(tmp_path / "ray").iter_records() if r.status != "ok"]
    assert errors == []
    assert remote.completed == local.completed == 24
    by_id_local = RunDir(tmp_path / "local").latest_records()
    by_id_ray = RunDir(tmp_path / "ray").latest_records()
    assert by_id_local.keys() == by_id_ray.keys()
    for eid, rec in by_id_local.items():
        assert [s.action for s in rec.steps] == [s.action for s in by_id_ray[eid].steps]
    again = run_experiment(spec_from_dict({**data, "executor": "ray"}), str(tmp_path / "ray"))
    assert again.completed == 0 and again.skipped == 24


@pytest.mark.parametrize("executor", ["local", "ray"])
def test_budgets_and_model_errors_apply_the_same_way_on_both_executors(
    tmp_path: Path, ray_cluster: None, executor: str
) -> None:
    from exploreval.models.testing import StubServer
    from exploreval.runner import RunFailedError, SpecError

    data = {
        "suites": [{"env_id": "test/LineWalk-v0", "presets": ["short"], "seeds": "0-19"}],
        "agents": [{"agent": "forward"}],
        "plugins": ["_toy"],
        "executor": executor,
        "concurrency": 1,
        "budget": {"max_total_steps": 10},
    }
    summary = run_experiment(spec_from_dict(data), str(tmp_path / "budget"))
    assert summary.stopped_by_budget and summary.status == "interrupted"
    records = list(RunDir(tmp_path / "budget").iter_records())
    steps = sum(len(r.steps) for r in records)
    # the budget is checked before each new episode: the last one may cross it, no more
    per_episode = len(records[0].steps)
    assert 10 <= steps < 10 + per_episode and len(records) < 20

    # A model that fails mid-run fails the run the same way on both executors.
    with StubServer() as server:
        server.fail_next(503, times=50)
        url = server.base_url
        failing = {
            **data,
            "budget": {},
            "agents": [
                {"kind": "llm", "model": "m", "base_url": server.base_url, "max_retries": 0}
            ],
        }
        with pytest.raises(RunFailedError, match="HTTP 503"):
            run_experiment(spec_from_dict(failing), str(tmp_path / "failing"))
    manifest = RunDir(tmp_path / "failing").read_manifest()
    assert manifest.status == "failed" and "HTTP 503" in (manifest.error or "")

    # Nothing listening at all is refused before the run directory exists, on both.
    with pytest.raises(SpecError, match="nothing answers"):
        run_experiment(
            spec_from_dict(
                {
                    **failing,
                    "agents": [{"kind": "llm", "model": "m", "base_url": url, "max_retries": 0}],
                }
            ),
            str(tmp_path / "dead"),
        )
    assert not (tmp_path / "dead").exists()
