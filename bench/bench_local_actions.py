"""Does the embedded model play every suite as printed? ``local:smollm2`` with the defaults a
user gets (``constrain`` unset, so the harness's grammar is on for a local model), one row per
suite x harness on the suite's smallest preset: how many replies parsed to an action, how many
the env accepted, and the median seconds per step (issue 42; the table lives in docs/models.md).

Run: python bench/bench_local_actions.py [--model smollm2] [--steps 12] [--only grid,bandit]
       [--constrain off]   # the same rows without the grammar, for the before/after column

Prints one row per case and writes each run under --out (default a temporary directory), so the
numbers can be re-scored with ``exploreval score``.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

# suite label, env id, smallest preset, harnesses, extra options
CASES: list[tuple[str, str, str | None, list[str], dict[str, Any]]] = [
    ("bandit", "exploreval/Bandit-v0", "smoke", ["default", "BSSeC0", "BNRND", "ASSCD"], {}),
    ("grid", "exploreval/GridDAG-v0", "explore-low/dag-small", ["react", "memory"], {}),
    ("frozenlake", "exploreval/FrozenLake-v0", "small", ["default"], {}),
    ("blocksworld", "exploreval/BlocksWorld-v0", "easy", ["default"], {}),
    ("sudoku", "exploreval/Sudoku-v0", "4x4-easy", ["default"], {}),
    ("task2quiz", "exploreval/Task2Quiz-v0", "easy", ["default"], {}),
    ("terminal", "exploreval/Terminal-v0", None,
     ["terminal_use", "swe-agent", "terminus-1", "terminus-2"], {}),
]  # fmt: skip


def _row(out: Path) -> dict[str, float]:
    from exploreval.core import INVALID_ACTION
    from exploreval.store import RunDir

    records = [r for r in RunDir(out).iter_records() if r.status == "ok"]
    steps = [s for r in records for s in r.steps]
    # the first step of a run also pays for starting the server: leave it out of the speed
    latency = [s.latency_s for s in steps[1:] if s.latency_s and not s.cached]
    return {
        "steps": len(steps),
        "parsed": sum(s.action != INVALID_ACTION for s in steps) / len(steps) if steps else 0.0,
        "valid": sum(s.valid for s in steps) / len(steps) if steps else 0.0,
        "s_per_step": statistics.median(latency) if latency else float("nan"),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--steps", type=int, default=12, help="steps per episode (one episode)")
    parser.add_argument("--only", default="", help="comma-separated suite labels")
    parser.add_argument("--harnesses", default="", help="comma-separated harness names")
    parser.add_argument("--constrain", default=None, choices=["off", "auto", "on"])
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    from exploreval.runner import run_experiment, spec_from_dict

    root = args.out or Path(tempfile.mkdtemp(prefix="bench-local-actions-"))
    only = {s for s in args.only.split(",") if s}
    picked = {h for h in args.harnesses.split(",") if h}
    print(f"runs under {root}; model local:{args.model}, constrain={args.constrain or 'default'}")
    print(f"{'suite':12} {'preset':22} {'harness':13} {'steps':>5} {'parsed':>7} {'valid':>6} "
          f"{'s/step':>7} {'wall s':>7}")  # fmt: skip
    for suite, env_id, preset, harnesses, options in CASES:
        if only and suite not in only:
            continue
        for harness in harnesses:
            if picked and harness not in picked:
                continue
            agent: dict[str, Any] = {"kind": "llm", "model": f"local:{args.model}",
                                     "harness": harness}  # fmt: skip
            if args.constrain:
                agent["constrain"] = args.constrain
            entry: dict[str, Any] = {"env_id": env_id, "presets": [preset], "seeds": "0"}
            if options:
                entry["options"] = options
            spec = {"suites": [entry], "agents": [agent], "concurrency": 1,
                    "max_steps": args.steps}  # fmt: skip
            out = root / f"{suite}-{harness}"
            t0 = time.perf_counter()
            run_experiment(spec_from_dict(spec), str(out))
            wall = time.perf_counter() - t0
            row = _row(out)
            print(f"{suite:12} {preset or '-':22} {harness:13} {row['steps']:5.0f} "
                  f"{row['parsed']:7.0%} {row['valid']:6.0%} {row['s_per_step']:7.2f} "
                  f"{wall:7.0f}", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
