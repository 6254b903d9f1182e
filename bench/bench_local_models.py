"""Which embedded model should the demo use? Each local model, with and without constrained
decoding, on the grid, bandit and puzzle suites: valid-action rate, success against the random
baseline, and seconds per step (issue 21).

Run: python bench/bench_local_models.py [--models smollm2,gemma3-270m] [--quick] [--out DIR]

Prints one table row per (suite, model, constraint) and the random baseline's row, and writes
every run under --out (default a temporary directory) so the numbers can be re-scored.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

SUITES: dict[str, dict[str, Any]] = {
    # the demo's maps: two main-suite presets, the LLM capped at 15 steps per episode
    "grid": {"env_id": "exploreval/GridDAG-v0", "presets": ["explore-low/dag-small"],
             "seeds": "0-3", "options": {"budget": 15}, "harness": "react",
             "random": "random"},
    "bandit": {"env_id": "exploreval/Bandit-v0", "presets": ["hard"], "seeds": "0-3",
               "harness": "BSSeC0", "random": "random", "max_steps": 25},
    "frozenlake": {"env_id": "exploreval/FrozenLake-v0", "presets": [None], "seeds": "0-3",
                   "harness": "default", "random": "random", "max_steps": 15},
}  # fmt: skip


def _spec(suite: dict[str, Any], agent: dict[str, Any]) -> dict[str, Any]:
    entry = {"env_id": suite["env_id"], "presets": suite["presets"], "seeds": suite["seeds"]}
    if suite.get("options"):
        entry["options"] = suite["options"]
    spec: dict[str, Any] = {"suites": [entry], "agents": [agent], "concurrency": 1}
    if suite.get("max_steps"):
        spec["max_steps"] = suite["max_steps"]
    return spec


def _row(out: Path) -> dict[str, float]:
    from exploreval.core import INVALID_ACTION
    from exploreval.store import RunDir

    records = [r for r in RunDir(out).iter_records() if r.status == "ok"]
    steps = [s for r in records for s in r.steps]
    latency = [s.latency_s for s in steps if s.latency_s and not s.cached]
    return {
        "episodes": len(records),
        "steps": len(steps),
        # parsed: the reply was a well-formed action; legal: the env also accepted it
        "parsed": sum(s.action != INVALID_ACTION for s in steps) / len(steps) if steps else 0.0,
        "valid": sum(s.valid for s in steps) / len(steps) if steps else float("nan"),
        "success": sum(bool(r.success) for r in records) / len(records) if records else 0.0,
        "reward": statistics.fmean(r.total_reward for r in records) if records else 0.0,
        "s_per_step": statistics.median(latency) if latency else float("nan"),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--models", default="smollm2,gemma3-270m")
    parser.add_argument("--suites", default=",".join(SUITES))
    parser.add_argument("--quick", action="store_true", help="one seed per suite")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    from exploreval.runner import run_experiment, spec_from_dict

    root = args.out or Path(tempfile.mkdtemp(prefix="bench-local-models-"))
    print(f"runs under {root}")
    print(f"{'suite':11} {'agent':30} {'episodes':>8} {'steps':>6} {'parsed':>7} {'legal':>6} {'success':>8} "
          f"{'reward':>7} {'s/step':>7} {'wall s':>7}")  # fmt: skip
    for suite_name in args.suites.split(","):
        suite = dict(SUITES[suite_name])
        if args.quick:
            suite["seeds"] = "0"
        agents: list[tuple[str, dict[str, Any]]] = [
            (f"random ({suite['random']})", {"kind": "scripted", "agent": suite["random"]})
        ]
        for model in args.models.split(","):
            for constrain in ("off", "auto"):
                agents.append((f"{model} constrain={constrain}", {
                    "kind": "llm", "model": f"local:{model}", "harness": suite["harness"],
                    "history": "none", "constrain": constrain,
                    "sampling": {"temperature": 0.0, "max_tokens": 200},
                }))  # fmt: skip
        for label, agent in agents:
            out = root / f"{suite_name}-{label.replace(' ', '_').replace('=', '-')}"
            t0 = time.perf_counter()
            run_experiment(spec_from_dict(_spec(suite, agent)), str(out))
            wall = time.perf_counter() - t0
            row = _row(out)
            print(f"{suite_name:11} {label:30} {row['episodes']:8.0f} {row['steps']:6.0f} "
                  f"{row['parsed']:7.1%} {row['valid']:6.1%} {row['success']:8.1%} {row['reward']:7.2f} "
                  f"{row['s_per_step']:7.2f} {wall:7.0f}", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
