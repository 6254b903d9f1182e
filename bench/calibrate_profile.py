"""Measure what the profile battery's model episodes cost, and write it into the plan's
calibration (``src/exploreval/profile/calibration.json``).

For one behaviour (``local:smollm2``, the embedded model; or ``stub``, a loopback
OpenAI-compatible stub answering every call with ``--stub-reply``), it plays the model's part of
the battery (no references: they make no calls) and records, per suite entry's env id and preset
and per family (harness, history; ``/quick`` for the quick battery): model calls per episode,
prompt and reply characters per call (the prompt's messages read back from the run's blob
store), the model's own prompt and completion tokens per call, and seconds per call.

    python bench/calibrate_profile.py local:smollm2 --quick
    python bench/calibrate_profile.py stub --quick
    python bench/calibrate_profile.py stub --seeds 1     # the full battery, one seed per entry
    python bench/calibrate_profile.py local:smollm2 --seeds 1 --part bandit --part puzzles

Prints one line per calibration key and a summary line; ``--write`` merges them into the file.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from exploreval.core import env_spec
from exploreval.profile import BATTERY_NAME, battery_experiment, battery_parts
from exploreval.runner import run_experiment, spec_from_dict
from exploreval.store import RunDir

CALIBRATION = Path(__file__).resolve().parents[1] / "src/exploreval/profile/calibration.json"
STUB_REPLY = "ok"


def _key(family: str, agent: dict[str, Any], quick: bool) -> str:
    key = f"{family}/{agent.get('harness') or 'default'}/{agent.get('history') or 'full'}"
    return key + ("/quick" if quick else "")


def measure(run: RunDir, quick: bool) -> dict[str, Any]:
    """Per key: the means over the run's model episodes (family keys pool their presets)."""
    per_key: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    blobs = run.blobs
    for record in run.latest_records().values():
        if record.status != "ok" or record.agent.kind != "llm":
            continue
        harness = record.agent.config["harness"]
        agent = {"harness": harness["name"], "history": harness["history"]}
        family = env_spec(record.env_id).family
        suffix = _key("", agent, quick).lstrip("/")
        keys = [
            _key(family, agent, quick),
            f"{record.env_id}/{record.preset or 'default'}/{suffix}",
        ]
        calls = [s for s in record.steps if s.usage is not None and s.usage.calls]
        for key in keys:
            per_key[key]["calls_per_episode"].append(float(record.usage.calls))
        for step in calls:
            assert step.usage is not None
            prompt = blobs.get_prompt(step.prompt) if step.prompt is not None else []
            sizes = {
                "prompt_chars_per_call": float(sum(len(m.content or "") for m in prompt)),
                "reply_chars_per_call": float(
                    len(step.raw_output or "") + len(step.reasoning or "")
                ),
                "prompt_tokens_per_call": float(step.usage.prompt_tokens),
                "completion_tokens_per_call": float(step.usage.completion_tokens),
                "latency": float(step.latency_s),
            }
            for key in keys:
                for name, value in sizes.items():
                    per_key[key][name].append(value)
    out: dict[str, Any] = {}
    for key, columns in sorted(per_key.items()):
        entry = {
            name: round(statistics.fmean(values), 2)
            for name, values in columns.items()
            if values and name != "latency"
        }
        entry["episodes"] = len(columns["calls_per_episode"])
        entry["calls_measured"] = len(columns["latency"])
        entry["seconds_per_call"] = round(statistics.fmean(columns["latency"] or [0.0]), 3)
        out[key] = entry
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("behaviour", help="local:smollm2, or stub")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--seeds", type=int, default=None, help="first N seeds of each entry")
    parser.add_argument("--part", action="append", default=None)
    parser.add_argument("--stub-reply", default=STUB_REPLY)
    parser.add_argument("--out", type=Path, default=None, help="run directory (default: temp)")
    parser.add_argument("--write", action="store_true", help="merge into calibration.json")
    args = parser.parse_args()

    parts = battery_parts(BATTERY_NAME, only=args.part)
    if args.seeds is not None:
        from dataclasses import replace

        def cut(entries: tuple[dict[str, Any], ...]) -> tuple[dict[str, Any], ...]:
            return tuple({**e, "seeds": list(e.get("seeds") or [0])[: args.seeds]} for e in entries)

        parts = [replace(p, suites=cut(p.suites), quick_suites=cut(p.quick_suites)) for p in parts]
    stub = None
    model = args.behaviour
    fields: dict[str, Any] = {}
    if args.behaviour == "stub":
        from exploreval.models.testing import StubServer

        stub = StubServer(reply=args.stub_reply).start()
        model = "stub"
        fields = {"base_url": stub.base_url, "api_key_env": "EXPLOREVAL_STUB_KEY"}
        os.environ.setdefault("EXPLOREVAL_STUB_KEY", "unused")
    experiment, _ = battery_experiment(
        parts, model=model, quick=args.quick, agent_fields=fields, references=False
    )
    out = args.out or Path(tempfile.mkdtemp(prefix="exploreval-calibrate-"))
    started = time.perf_counter()
    summary = None
    try:
        summary = run_experiment(spec_from_dict(experiment, source="calibration"), out)
    finally:
        if stub is not None:
            stub.stop()
    wall = time.perf_counter() - started
    # a resumed run made no calls now: its wall time says nothing of their pace
    wall_measured = summary is not None and summary.skipped == 0
    measured = measure(RunDir(out), args.quick)
    for key, entry in measured.items():
        print(
            f"{key:<58} eps {entry['episodes']:>3} calls/ep {entry['calls_per_episode']:>7.1f} "
            f"prompt {entry['prompt_chars_per_call']:>8.0f} ch {entry['prompt_tokens_per_call']:>7.0f} "
            f"tok reply {entry['reply_chars_per_call']:>5.0f} ch {entry['seconds_per_call']:.3f} s"
        )
    calls = sum(e["calls_measured"] for k, e in measured.items() if not k.startswith("exploreval/"))
    print(
        f"calibrate_profile {args.behaviour} quick={args.quick}: {calls} calls in {wall:.0f} s "
        f"({out})"
    )
    if args.write:
        data = json.loads(CALIBRATION.read_text())
        behaviour = data["behaviours"].setdefault(args.behaviour, {"entries": {}})
        behaviour["entries"].update(measured)
        if calls and wall_measured:
            # the run's wall time over its calls: one server answers one call at a time, so
            # a call's own latency counts its wait in the queue; this is the pace a run sees
            behaviour["seconds_per_call"] = round(wall / calls, 3)
            behaviour.setdefault("runs", {})["quick" if args.quick else "full"] = {
                "date": time.strftime("%Y-%m-%d"),
                "calls": calls,
                "wall_s": round(wall, 1),
                "cores": os.cpu_count(),
            }
        CALIBRATION.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
        print(f"wrote {CALIBRATION}")


if __name__ == "__main__":
    main()
