"""The grid part of ``exploreval profile``: the main experiment's nine map kinds.

The full battery plays the paper's 3x3 design (exploration level x DAG size) on seeds 0-7
(72 maps; the paper's own main suite is seeds 0-2) with the react harness and the full
history, as the paper's Table 2 does. The references: uniform random moves (0) and the
privileged oracle walk (1) for the two error rates, and the frontier explorer (1) for coverage,
since the oracle walks only where the DAG needs it.
"""

from __future__ import annotations

from exploreval.core import CardMetric, ProfilePart
from exploreval.suites.grid._catalog import main_preset_names

ENV_ID = "exploreval/GridDAG-v0"
FULL_SEEDS = list(range(8))
QUICK_PRESET = "explore-low/dag-small"
QUICK_SEEDS = [0, 1, 2, 3]
#: The quick maps' step cap (as the demo's): a 135M model takes ~0.3 s a step on 2 cores.
QUICK_BUDGET = 15
#: Mean step budget (3 x the oracle's steps) over the full battery's 72 maps, measured.
FULL_MEAN_BUDGET = 71


def profile_part() -> ProfilePart:
    return ProfilePart(
        name="grid",
        paradigm="grid maps with task DAGs",
        paper="grid",
        version=1,
        suites=({"env_id": ENV_ID, "presets": main_preset_names(), "seeds": FULL_SEEDS},),
        quick_suites=(
            {
                "env_id": ENV_ID,
                "presets": [QUICK_PRESET],
                "seeds": QUICK_SEEDS,
                "env_options": {"budget": QUICK_BUDGET},
            },
        ),
        model_agent={"harness": "react", "history": "full"},
        quick_model_agent={
            "harness": "react",
            "history": "none",
            "sampling": {"temperature": 0.0, "max_tokens": 24},
        },
        references=(
            {"label": "random", "agent": "random"},
            {"label": "frontier", "agent": "frontier"},
            {"label": "oracle", "agent": "oracle"},
        ),
        metrics=(
            CardMetric(
                "explore_error",
                "exploration errors",
                floor="random",
                ceiling="oracle",
                higher_is_better=False,
                meaning="share of exploring steps that no rational explorer would take",
            ),
            CardMetric(
                "exploit_error",
                "exploitation errors",
                floor="random",
                ceiling="oracle",
                higher_is_better=False,
                meaning="share of steps that ignored a reachable, achievable state",
            ),
            CardMetric(
                "coverage",
                "coverage",
                floor="random",
                ceiling="frontier",
                meaning="share of the map's cells observed",
            ),
        ),
        success="success",
        conditions=({"suite": "main", "harness": "react", "history": "full", "row": "grid"},),
        quick_conditions=(
            {
                "suite": "quick",
                "harness": "react",
                "history": "none",
                "budget": QUICK_BUDGET,
                "row": "grid",
            },
        ),
        max_calls=(FULL_MEAN_BUDGET,),
        quick_max_calls=(QUICK_BUDGET,),
        description="GridDAG main design (3 exploration levels x 3 DAG sizes), seeds 0-7, react",
    )
