"""The bandit suite as a plugin: what it registers (lazily) and the CLI commands it adds."""

from __future__ import annotations

from typing import Any

from exploreval.core import SuitePlugin

_M = "exploreval.suites.bandit"
FAMILY = "bandit"
ENV_ID = "exploreval/Bandit-v0"

#: Scripted baselines: registry name -> class in ``_agents`` and its description.
_AGENTS = {
    "random": ("RandomArm", "Uniformly random arm each round."),
    "greedy": (
        "Greedy",
        "One pull per arm, then an arm with the best average reward (ties at random).",
    ),
    "egreedy": (
        "EpsilonGreedy",
        "Greedy, except that each round with probability epsilon (default 0.1) a uniformly "
        "random arm is pulled.",
    ),
    "ucb": (
        "UCB",
        "One pull per arm, then the largest mean + sqrt(c / n_a) with c = 1 (option c).",
    ),
    "ts": (
        "Thompson",
        "Thompson Sampling with independent Beta(1, 1) priors (options alpha, beta).",
    ),
    "oracle": (
        "Oracle",
        "Knows the means and always pulls a best arm: the OPT reference (privileged).",
    ),
}


class _CodeHarness:
    """Registry factory of one prompt-design code; imports the harness module when built."""

    def __init__(self, code: str) -> None:
        self.code = code

    # -> Any: the harness instance the factory builds
    def __call__(self, **options: Any) -> Any:
        from exploreval.suites.bandit._harness import harness_factory

        return harness_factory(self.code)(**options)


def register() -> None:
    from exploreval.metrics import register_headline_metrics as _headline

    _headline(
        FAMILY,
        (
            "best_arm_fraction",
            "suffix_failure_half",
            "k_min_frac",
            "greedy_frac",
            "rescaled_reward",
        ),
    )
    from exploreval.agents import register_agent, register_harness
    from exploreval.core import register_env, register_suite
    from exploreval.metrics import (
        register_budget,
        register_episode_metrics,
        register_progress,
        register_run_metrics,
    )
    from exploreval.report import (
        disable_tide_curves,
        register_report,
        register_step_annotations,
        register_step_view,
    )
    from exploreval.suites.bandit._codes import BASIC_CODE, all_codes
    from exploreval.suites.bandit._presets import INSTANCE_PRESETS

    register_env(
        ENV_ID,
        f"{_M}._env:BanditEnv",
        family=FAMILY,
        presets=list(INSTANCE_PRESETS),
        default_preset="hard",
        description="Bernoulli multi-armed bandit (Krishnamurthy et al. 2024)",
        success_means="a best arm is among the arms pulled most often over the episode "
        "(the agent identified it); reward alone is not success",
    )
    for name, (cls, description) in _AGENTS.items():
        register_agent(name, f"{_M}._agents:{cls}", families=(FAMILY,), description=description)
    for code in all_codes():
        register_harness(
            code,
            _CodeHarness(code),
            families=(FAMILY,),
            description=f"prompt configuration {code} (Appendix A)",
        )
    register_harness(
        "default",
        _CodeHarness(BASIC_CODE),
        families=(FAMILY,),
        description=f"the paper's basic configuration {BASIC_CODE}",
    )
    register_episode_metrics(FAMILY, "bandit", f"{_M}.stats:episode_bandit_metrics")
    register_run_metrics(
        FAMILY,
        "bandit",
        f"{_M}.stats:bandit_tables_from_episodes",
        partial=f"{_M}.stats:bandit_episode",
    )
    register_report(FAMILY, "bandit", f"{_M}._report:bandit_report")
    register_step_view(FAMILY, f"{_M}._viewer:step_view")
    register_step_annotations(FAMILY, f"{_M}._viewer:step_annotations", name="bandit_arms")
    # Every bandit episode runs to the horizon: TIDE's "solved within t turns" curves say nothing.
    disable_tide_curves(FAMILY)
    register_progress(FAMILY, f"{_M}.stats:reward_efficiency")
    register_budget(FAMILY, f"{_M}.stats:horizon_budget")
    register_suite(
        "bandit-hard",
        [{"env_id": ENV_ID, "presets": ["hard"], "seeds": list(range(20))}],
        "Bandit paper, main instance: K=5, gap 0.2, T=100, N=20 replicates",
    )
    register_suite(
        "bandit-easy",
        [{"env_id": ENV_ID, "presets": ["easy"], "seeds": list(range(20))}],
        "Bandit paper, easy instance: K=4, gap 0.5, T=100, N=20 replicates",
    )
    from exploreval.core import register_profile_part
    from exploreval.suites.bandit._profile import profile_part

    register_profile_part(profile_part())


PLUGIN = SuitePlugin(
    name="bandit",
    description="Bernoulli bandits: in-context exploration, 72 prompt designs (Krishnamurthy et al.)",
    register=register,
    commands=f"{_M}._cli:register",
    families=(FAMILY,),
    docs="docs/bandit.md",
)
