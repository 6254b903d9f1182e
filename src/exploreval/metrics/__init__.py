"""Metrics: pure functions over stored episode records and their ground truth.

This package holds what crosses suites (basic counts, TIDE, the pass@k family of estimators,
bootstrap helpers) and the registries suites register their own metrics and hooks into. The rule
for where a metric goes is in ``_registry``'s docstring and docs/architecture.md.

Names load on first use (``exploreval.core._lazy``), so importing the package is cheap."""

from typing import TYPE_CHECKING

from exploreval.core import lazy_exports

if TYPE_CHECKING:
    from exploreval.metrics._condition import (
        CONDITION_LABELS,
        NO_CONDITION,
        condition_label,
        condition_label_for,
        default_condition_label,
        register_condition_label,
    )
    from exploreval.metrics._hooks import (
        BUDGETS,
        COMMON_HEADLINE,
        HEADLINE_METRICS,
        PROGRESS,
        STATE_IDENTITIES,
        T_MAX,
        headline_metrics,
        register_budget,
        register_headline_metrics,
        register_progress,
        register_state_identity,
        register_t_max,
    )
    from exploreval.metrics._memo import (
        memo,
    )
    from exploreval.metrics._registry import (
        METRIC_REGISTRY,
        EpisodeMetricFn,
        JudgedMetricFn,
        MetricEntry,
        PartialFn,
        RunMetricFn,
        RunPartials,
        Scalar,
        episode_metrics,
        judged_metrics,
        reduce_run_tables,
        register_episode_metrics,
        register_judged_metrics,
        register_run_metrics,
        run_entries,
        run_key,
        run_metrics,
    )
    from exploreval.metrics._tide_state import (
        ExactText,
        Normalised,
        StateIdentity,
        strip_patterns,
    )
    from exploreval.metrics._typed import (
        step_infos,
    )
    from exploreval.metrics.bootstrap import (
        BootstrapCI,
        mean_ci,
        paired_ci,
    )

_EXPORTS: dict[str, str] = {
    "BootstrapCI": ".bootstrap",
    "mean_ci": ".bootstrap",
    "paired_ci": ".bootstrap",
    "BUDGETS": "._hooks",
    "COMMON_HEADLINE": "._hooks",
    "HEADLINE_METRICS": "._hooks",
    "headline_metrics": "._hooks",
    "register_headline_metrics": "._hooks",
    "CONDITION_LABELS": "._condition",
    "NO_CONDITION": "._condition",
    "condition_label": "._condition",
    "condition_label_for": "._condition",
    "default_condition_label": "._condition",
    "register_condition_label": "._condition",
    "EpisodeMetricFn": "._registry",
    "JudgedMetricFn": "._registry",
    "judged_metrics": "._registry",
    "register_judged_metrics": "._registry",
    "ExactText": "._tide_state",
    "METRIC_REGISTRY": "._registry",
    "MetricEntry": "._registry",
    "Normalised": "._tide_state",
    "PROGRESS": "._hooks",
    "RunMetricFn": "._registry",
    "RunPartials": "._registry",
    "run_entries": "._registry",
    "run_key": "._registry",
    "reduce_run_tables": "._registry",
    "PartialFn": "._registry",
    "STATE_IDENTITIES": "._hooks",
    "Scalar": "._registry",
    "StateIdentity": "._tide_state",
    "T_MAX": "._hooks",
    "episode_metrics": "._registry",
    "register_budget": "._hooks",
    "register_episode_metrics": "._registry",
    "register_progress": "._hooks",
    "register_run_metrics": "._registry",
    "register_state_identity": "._hooks",
    "register_t_max": "._hooks",
    "run_metrics": "._registry",
    "step_infos": "._typed",
    "strip_patterns": "._tide_state",
    "memo": "._memo",
}


def _register_cross_suite_metrics() -> None:
    """Basic counts, TIDE and pass@k over repeats apply to every family; registered lazily
    (imported when scored)."""
    from exploreval.metrics._registry import register_episode_metrics, register_run_metrics

    register_episode_metrics("*", "basic", "exploreval.metrics._builtin:basic_metrics")
    register_episode_metrics("*", "tide", "exploreval.metrics._tide_records:tide_episode_metrics")
    tide, passk = "exploreval.metrics._tide_tables", "exploreval.metrics._passk_runs"
    register_run_metrics(
        "*", "tide", f"{tide}:tide_tables_from_summaries",
        partial="exploreval.metrics._tide_records:trajectory_summaries",
    )  # fmt: skip
    register_run_metrics(
        "*", "pass_at_k", f"{passk}:pass_at_k_from_outcomes", partial=f"{passk}:outcome"
    )


_register_cross_suite_metrics()

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
__all__ = [
    "BootstrapCI",
    "mean_ci",
    "paired_ci",
    "BUDGETS",
    "COMMON_HEADLINE",
    "HEADLINE_METRICS",
    "headline_metrics",
    "register_headline_metrics",
    "CONDITION_LABELS",
    "NO_CONDITION",
    "condition_label",
    "condition_label_for",
    "default_condition_label",
    "register_condition_label",
    "EpisodeMetricFn",
    "ExactText",
    "JudgedMetricFn",
    "judged_metrics",
    "register_judged_metrics",
    "METRIC_REGISTRY",
    "MetricEntry",
    "Normalised",
    "PROGRESS",
    "RunMetricFn",
    "RunPartials",
    "run_entries",
    "run_key",
    "reduce_run_tables",
    "PartialFn",
    "STATE_IDENTITIES",
    "Scalar",
    "StateIdentity",
    "T_MAX",
    "episode_metrics",
    "register_budget",
    "register_episode_metrics",
    "register_progress",
    "register_run_metrics",
    "register_state_identity",
    "register_t_max",
    "run_metrics",
    "step_infos",
    "strip_patterns",
    "memo",
]
