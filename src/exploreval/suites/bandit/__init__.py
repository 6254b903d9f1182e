"""Bandit suite: in-context exploration on Bernoulli multi-armed bandits.

Reproduces the system of Krishnamurthy et al., "Can Large Language Models Explore
In-Context?" (2024): the env ``exploreval/Bandit-v0`` (presets ``hard``, ``easy``, ...),
the 72 prompt configurations as harnesses (``BNRN0`` ... ``ASSeCD``, ``default`` = BNRN0),
baselines as scripted agents (``random``, ``greedy``, ``egreedy``, ``ucb``, ``ts``,
``oracle``) and as a vectorised batch simulation, the per-round decision experiments of
Section 3.4, and the report figures. Statistics live in ``exploreval.suites.bandit.stats``."""

from typing import TYPE_CHECKING

from exploreval.core import lazy_exports

if TYPE_CHECKING:
    from exploreval.suites.bandit._agents import (
        BASELINE_AGENTS,
        UCB,
        BanditBaseline,
        EpsilonGreedy,
        Greedy,
        Oracle,
        RandomArm,
        Thompson,
    )
    from exploreval.suites.bandit._codes import BASIC_CODE, SUCCESSFUL_CODE, all_codes
    from exploreval.suites.bandit._decisions import (
        DATA_SOURCES,
        DecisionResult,
        LLMDecider,
        PolicyDecider,
        decision_experiment,
        sample_histories,
    )
    from exploreval.suites.bandit._env import (
        INVALID_FALLBACKS,
        BanditEnv,
    )
    from exploreval.suites.bandit._harness import (
        BanditPromptHarness,
    )
    from exploreval.suites.bandit._instance import (
        COLOURS,
        INSTANCE_PRESETS,
        BanditInstance,
        instance_from_preset,
        letter_labels,
    )
    from exploreval.suites.bandit._policies import (
        POLICIES,
        Policy,
    )
    from exploreval.suites.bandit._prompts import (
        ParsedAnswer,
        PromptDesign,
        build_messages,
        distribution_format,
        parse_answer,
        system_prompt,
        user_prompt,
    )
    from exploreval.suites.bandit._report import (
        bandit_report,
    )
    from exploreval.suites.bandit._simulate import (
        EPSILON_SWEEP,
        PAPER_BASELINES,
        baseline_table,
        epsilon_curve,
        simulate,
    )

_EXPORTS: dict[str, str] = {
    "BASELINE_AGENTS": "._agents",
    "BASIC_CODE": "._codes",
    "BanditBaseline": "._agents",
    "BanditEnv": "._env",
    "BanditInstance": "._instance",
    "BanditPromptHarness": "._harness",
    "COLOURS": "._instance",
    "DATA_SOURCES": "._decisions",
    "DecisionResult": "._decisions",
    "EPSILON_SWEEP": "._simulate",
    "EpsilonGreedy": "._agents",
    "Greedy": "._agents",
    "INSTANCE_PRESETS": "._instance",
    "INVALID_FALLBACKS": "._env",
    "LLMDecider": "._decisions",
    "Oracle": "._agents",
    "PAPER_BASELINES": "._simulate",
    "POLICIES": "._policies",
    "ParsedAnswer": "._prompts",
    "Policy": "._policies",
    "PolicyDecider": "._decisions",
    "PromptDesign": "._prompts",
    "RandomArm": "._agents",
    "SUCCESSFUL_CODE": "._codes",
    "Thompson": "._agents",
    "UCB": "._agents",
    "all_codes": "._codes",
    "bandit_report": "._report",
    "baseline_table": "._simulate",
    "build_messages": "._prompts",
    "decision_experiment": "._decisions",
    "distribution_format": "._prompts",
    "epsilon_curve": "._simulate",
    "instance_from_preset": "._instance",
    "letter_labels": "._instance",
    "parse_answer": "._prompts",
    "sample_histories": "._decisions",
    "simulate": "._simulate",
    "system_prompt": "._prompts",
    "user_prompt": "._prompts",
}

FAMILY = "bandit"
ENV_ID = "exploreval/Bandit-v0"

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
__all__ = [
    "BASELINE_AGENTS",
    "BASIC_CODE",
    "BanditBaseline",
    "BanditEnv",
    "BanditInstance",
    "BanditPromptHarness",
    "COLOURS",
    "DATA_SOURCES",
    "DecisionResult",
    "ENV_ID",
    "EPSILON_SWEEP",
    "EpsilonGreedy",
    "FAMILY",
    "Greedy",
    "INSTANCE_PRESETS",
    "INVALID_FALLBACKS",
    "LLMDecider",
    "Oracle",
    "PAPER_BASELINES",
    "POLICIES",
    "ParsedAnswer",
    "Policy",
    "PolicyDecider",
    "PromptDesign",
    "RandomArm",
    "SUCCESSFUL_CODE",
    "Thompson",
    "UCB",
    "all_codes",
    "bandit_report",
    "baseline_table",
    "build_messages",
    "decision_experiment",
    "distribution_format",
    "epsilon_curve",
    "instance_from_preset",
    "letter_labels",
    "parse_answer",
    "sample_histories",
    "simulate",
    "system_prompt",
    "user_prompt",
]
