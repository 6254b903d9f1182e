"""The bandit part of ``exploreval profile``: the paper's hard instance under BSSeC0.

BSSeC0 (buttons, suggestive framing, summarised history, chain of thought, temperature 0) is
the one configuration with which the paper's GPT-4 avoided both failures on the hard instance
(Figure 4), so it is the design that gives a model its best chance to explore. Greedy and UCB
are the paper's own two poles: Greedy is the exploitation failure, UCB the exploration that
succeeds; a model is placed between them.
"""

from __future__ import annotations

from exploreval.core import CardMetric, ProfilePart

ENV_ID = "exploreval/Bandit-v0"
#: Replicates of the full battery: a 0/1 statistic (suffix failure) gets a 95% CI half-width
#: of at most 0.98 / sqrt(40) = 0.155, twice the paper's N = 10 (GPT-4, Figure 4).
FULL_REPLICATES = 40
QUICK_REPLICATES = 4


def profile_part() -> ProfilePart:
    condition = {
        "instance": "hard",
        "K": 5,
        "gap": 0.2,
        "T": 100,
        "scenario": "buttons",
        "prompt": "BSSeC0",
    }
    return ProfilePart(
        name="bandit",
        paradigm="in-context bandits",
        paper="bandits",
        version=1,
        suites=({"env_id": ENV_ID, "presets": ["hard"], "seeds": list(range(FULL_REPLICATES))},),
        quick_suites=(
            {"env_id": ENV_ID, "presets": ["smoke"], "seeds": list(range(QUICK_REPLICATES))},
        ),
        model_agent={"harness": "BSSeC0", "history": "full"},
        quick_model_agent={
            "harness": "BSSeC0",
            "history": "full",
            "sampling": {"temperature": 0.0, "max_tokens": 24},
        },
        references=(
            {"label": "random", "agent": "random"},
            {"label": "greedy", "agent": "greedy"},
            {"label": "ucb", "agent": "ucb"},
        ),
        metrics=(
            CardMetric(
                "suffix_failure_half",
                "suffix failure (T/2)",
                floor="greedy",
                ceiling="ucb",
                higher_is_better=False,
                meaning="the best arm never pulled in the second half: an exploration failure",
            ),
            CardMetric(
                "k_min_frac",
                "K * MinFrac",
                floor="greedy",
                ceiling="ucb",
                meaning="K times the share of the least pulled arm: how evenly it explored",
            ),
            CardMetric(
                "best_arm_fraction",
                "best-arm pulls",
                floor="random",
                ceiling="ucb",
                meaning="share of pulls on a best arm: exploitation of what was learned",
            ),
        ),
        success="success",
        conditions=({**condition, "row": "bandit"},),
        quick_conditions=(
            {
                "instance": "smoke",
                "K": 3,
                "gap": 0.5,
                "T": 10,
                "scenario": "buttons",
                "prompt": "BSSeC0",
                "row": "bandit",
            },
        ),
        max_calls=(100,),
        quick_max_calls=(10,),
        description="Bernoulli bandit, hard instance (K=5, gap 0.2, T=100), prompt BSSeC0",
    )
