"""Suite record metrics: episode flags and the per-condition @k tables from stored records."""

from __future__ import annotations

import numpy as np

from exploreval.core import EpisodeRecord
from exploreval.core._records import AgentInfo, Step
from exploreval.suites.terminal._agents import CuriousAgent, IncuriousAgent
from exploreval.suites.terminal._builtin import builtin_task
from exploreval.suites.terminal._contract import StepDetection
from exploreval.suites.terminal._inject import render
from exploreval.suites.terminal._metrics import (
    record_detection,
    terminal_episode_metrics,
    terminal_run_metrics,
)
from exploreval.suites.terminal._oneshot import simulate


def _record(task_id, manifest, resolved, steps_info, i=0):
    return EpisodeRecord(
        episode_id=f"{task_id}-{i}",
        env_id="terminal/Terminal-v0",
        family="terminal",
        seed=i,
        agent=AgentInfo(name="x", kind="scripted"),
        ground_truth={
            "manifest": manifest.model_dump(mode="json"),
            "resolved": resolved,
            "task_id": task_id,
        },
        steps=[
            Step(t=t, observation="", action="{}", info=info) for t, info in enumerate(steps_info)
        ],
    )


def test_episode_metrics_from_evidence():
    manifest = render(builtin_task("csv-region-totals"), 1).manifest
    rec = _record(
        "csv-region-totals",
        manifest,
        True,
        [
            {"commands": ["pwd"], "output": "/app\n"},
            {"commands": ["ls"], "output": "sales.csv solution.sh\n"},
            {
                "commands": ["bash solution.sh"],
                "output": "",
                "file_events": [["solution.sh", "open"]],
            },
        ],
    )
    row = terminal_episode_metrics(rec)
    assert row["condition"] == "L1:solution.sh"
    assert (row["discovered"], row["interacted"], row["file_access"]) == (True, True, True)
    assert (row["first_discovery_step"], row["first_interaction_step"], row["n_steps"]) == (1, 2, 3)
    assert row["interacted_solution"] and not row["interacted_decoy"]


def test_detection_dumps_are_used_without_evidence():
    manifest = render(builtin_task("csv-region-totals"), 1).manifest
    dump = StepDetection(discovered=True).model_dump(mode="json")
    rec = _record("t", manifest, False, [{"detection": {}}, {"detection": dump}])
    det = record_detection(rec)
    assert det.first_discovery_step == 1 and det.first_interaction_step is None


def test_run_tables_from_simulated_episodes():
    """Two tasks x two agents at level 1, n = 2 attempts each, through the real pipeline."""
    records = []
    for task_id in ("csv-region-totals", "file-list-large"):
        task = builtin_task(task_id)
        for make in (CuriousAgent, IncuriousAgent):
            for i in range(2):
                sim = simulate(make(), task, 1)
                manifest = render(task, 1).manifest
                infos = [e.model_dump(mode="json") for e in sim.evidence]
                rec = _record(task_id, manifest, sim.resolved, infos, i)
                rec.agent = AgentInfo(name=make.name, kind="scripted")
                records.append(rec)
    curious = terminal_run_metrics([r for r in records if r.agent.name == "curious"], n_boot=200)
    at_k = curious["at_k"].set_index(["metric", "k"])
    assert at_k.loc[("pass", 1), "estimate"] == 1.0
    assert at_k.loc[("interaction", 2), "estimate"] == 1.0
    assert set(at_k.index.get_level_values("k")) == {1, 2}  # k <= n only
    cur = curious["curiosity"].iloc[0]
    assert cur["interaction_given_discovery"] == 1.0
    assert 0 < cur["median_first_interaction_position"] <= 1
    incurious = terminal_run_metrics(
        [r for r in records if r.agent.name == "incurious"], n_boot=200
    )
    inc = incurious["at_k"].set_index(["metric", "k"])
    assert inc.loc[("interaction", 1), "estimate"] == 0.0
    assert inc.loc[("pass", 2), "estimate"] == 0.0
    inc_cur = incurious["curiosity"].iloc[0]
    assert inc_cur["interaction_given_discovery"] == 0.0  # discovered, never interacted
    assert inc_cur["median_first_interaction_step"] is None


def test_original_condition_label():
    from exploreval.suites.terminal._contract import InjectionManifest

    rec = _record("t", InjectionManifest(), True, [{"commands": ["ls"], "output": "a\n"}])
    metrics = terminal_episode_metrics(rec)
    assert metrics["condition"] == "original" and metrics["injected"] is False
    # nothing was injected, so nothing could be discovered: undefined (Table 10's "-"), not 0
    assert metrics["discovered"] is None and metrics["interacted"] is None
    assert metrics["file_access"] is None and metrics["interacted_decoy"] is None


def test_uninjected_conditions_have_undefined_rates_and_stay_out_of_averages():
    """A run mixing the original tasks with level 1: the original's discovery and interaction
    rows are NaN (present, never 0.0); the level's rates are computed from its own episodes."""
    from exploreval.suites.terminal._contract import InjectionManifest

    task = builtin_task("csv-region-totals")
    records = []
    for i in range(2):
        original = _record(
            "csv-region-totals", InjectionManifest(), True, [{"commands": ["ls"]}], i
        )
        sim = simulate(CuriousAgent(), task, 1)
        infos = [e.model_dump(mode="json") for e in sim.evidence]
        injected = _record(
            "csv-region-totals", render(task, 1).manifest, sim.resolved, infos, 10 + i
        )
        records += [original, injected]
    at_k = terminal_run_metrics(records, n_boot=50)["at_k"]
    original_rows = at_k[at_k["condition"] == "original"].set_index(["metric", "k"])
    assert original_rows.loc[("pass", 1), "estimate"] == 1.0
    for metric in ("discovery", "interaction", "file_access"):
        assert np.isnan(original_rows.loc[(metric, 1), "estimate"])
    level = at_k[at_k["condition"] != "original"].set_index(["metric", "k"])
    assert level.loc[("discovery", 1), "estimate"] == 1.0
    assert level.loc[("interaction", 2), "estimate"] == 1.0


def _llm_record(task_id, manifest, resolved, i, *, gt_extra=None, harness_options=None,
                sampling=None, name="m/terminus-2/full"):  # fmt: skip
    rec = _record(task_id, manifest, resolved, [{"commands": ["ls"], "output": "x\n"}], i)
    rec.ground_truth.update(gt_extra or {})
    identity = {
        "kind": "llm",
        "model": "m",
        "harness": "terminus-2",
        "harness_options": harness_options or {},
        "history": "full",
        "sampling": sampling or {},
    }
    rec.agent = AgentInfo(name=name, kind="llm", config={"identity": identity})
    return rec


def test_condition_keeps_every_behaviour_changing_option_apart():
    """Tool suite, intervention, prompt variant (env or harness), reasoning history and
    sampling each make their own condition; defaults leave the label as before."""
    manifest = render(builtin_task("csv-region-totals"), 1).manifest
    variants = {
        "L1:solution.sh": ({}, {}, {}),
        "L1:solution.sh;tools=bash+editor": (
            {"condition": "L1:solution.sh;tools=bash+editor"}, {}, {},
        ),
        "L1:solution.sh;intervention=reflect_at_discovery": (
            {"condition": "L1:solution.sh;intervention=reflect_at_discovery"}, {}, {},
        ),
        "L1:solution.sh;prompt=base": ({"condition": "L1:solution.sh;prompt=base"}, {}, {}),
        "L1:solution.sh;prompt=curiosity": ({}, {"prompt_variant": "curiosity"}, {}),
        "L1:solution.sh;reasoning_history=on": ({}, {"reasoning_history": True}, {}),
        "L1:solution.sh;temperature=0.5": ({}, {}, {"temperature": 0.5}),
    }  # fmt: skip
    records = []
    for label, (gt, options, sampling) in variants.items():
        for i in range(2):
            resolved = label.endswith("curiosity")  # only one condition passes
            rec = _llm_record("csv-region-totals", manifest, resolved, i, gt_extra=gt,
                              harness_options=options, sampling=sampling)  # fmt: skip
            assert terminal_episode_metrics(rec)["condition"] == label
            records.append(rec)
    # defaults are not spelled out: an explicit default is the default condition
    same = _llm_record("csv-region-totals", manifest, False, 9,
                       harness_options={"prompt_variant": "investigate",
                                        "reasoning_history": False})  # fmt: skip
    assert terminal_episode_metrics(same)["condition"] == "L1:solution.sh"
    at_k = terminal_run_metrics(records, n_boot=50)["at_k"]
    passes = at_k[(at_k.metric == "pass") & (at_k.k == 1)].set_index("condition")["estimate"]
    assert set(passes.index) == set(variants)  # nothing pooled
    assert passes["L1:solution.sh;prompt=curiosity"] == 1.0
    assert (passes.drop("L1:solution.sh;prompt=curiosity") == 0.0).all()


def test_detection_from_records_uses_the_stored_workdir():
    manifest = render(builtin_task("csv-region-totals"), 1).manifest
    steps = [{"commands": ["cat /workspace/solution.sh"], "output": ""}]
    row = terminal_episode_metrics(_record("t", manifest, False, steps))
    assert not row["interacted_strict"]  # /app: another file
    assert row["interacted"]  # the paper's rule reads only the name
    rec = _record("t", manifest, False, steps)  # a record is scored as stored (metrics memo it)
    rec.ground_truth["workdir"] = "/workspace"
    assert terminal_episode_metrics(rec)["interacted_strict"]


def test_a_scored_episode_validates_its_manifest_and_detects_once(monkeypatch):
    """The episode row and the attempts table's summary both read the manifest and the
    detection: each is computed once per record object, and the second read gives the same."""
    import exploreval.suites.terminal._metrics as metrics
    from exploreval.metrics import RunPartials, episode_metrics

    manifest = render(builtin_task("csv-region-totals"), 1).manifest
    steps = [{"commands": ["ls"], "output": "sales.csv solution.sh\n"}, {"commands": ["pwd"]}]
    calls = {"manifest": 0, "detection": 0}
    validate, detect = metrics.InjectionManifest.model_validate, metrics.detect_episode

    def counted_validate(raw):
        calls["manifest"] += 1
        return validate(raw)

    def counted_detect(*args, **kwargs):
        calls["detection"] += 1
        return detect(*args, **kwargs)

    monkeypatch.setattr(metrics.InjectionManifest, "model_validate", counted_validate)
    monkeypatch.setattr(metrics, "detect_episode", counted_detect)
    rec = _record("csv-region-totals", manifest, True, steps)
    row = episode_metrics(rec)
    partials = RunPartials()
    partials.add(rec)
    assert calls == {"manifest": 1, "detection": 1}
    fresh = _record("csv-region-totals", manifest, True, steps)  # another object: computed again
    assert terminal_episode_metrics(fresh) == {k: row[k] for k in terminal_episode_metrics(fresh)}
    assert calls == {"manifest": 2, "detection": 2}
    assert row["discovered"] is True and row["condition"] == "L1:solution.sh"
