"""Analysis of runs: score them from their logs, build reports, compare runs.

Sits above the suites (it uses whatever they registered, never imports them): ``score_run``
recomputes every registered metric from a run directory; ``build_report`` writes report.md and
the self-contained index.html for one or several runs; ``compare_tables`` pairs two runs'
episodes by spec and tests the differences.
"""

from exploreval.analysis._build import (
    budget_notes,
    build_report,
    group_keys,
    headline_lines,
    headline_table,
    metric_ci_table,
    run_labels,
    summary_table,
)
from exploreval.analysis._compare import (
    AgentComparison,
    Comparison,
    FlippedEpisode,
    MetricDelta,
    agent_pairs,
    compare_tables,
    comparison_frame,
    comparison_section,
    metric_definitions,
    paired_bootstrap_ci,
    permutation_p,
    sign_test_p,
)
from exploreval.analysis._html import markdown_to_html, render_html
from exploreval.analysis._judged import write_judged_tables
from exploreval.analysis._mapcache import ScoreCacheWarning, score_cache_root
from exploreval.analysis._score import (
    ScoreProgress,
    ScoreResult,
    episode_row,
    identity_row,
    results_table,
    score_records,
    score_run,
)
from exploreval.analysis._stats import bootstrap_mean_ci
from exploreval.analysis._tables import markdown_table

__all__ = [
    "comparison_frame",
    "AgentComparison",
    "agent_pairs",
    "group_keys",
    "run_labels",
    "Comparison",
    "FlippedEpisode",
    "MetricDelta",
    "ScoreCacheWarning",
    "ScoreProgress",
    "ScoreResult",
    "bootstrap_mean_ci",
    "budget_notes",
    "build_report",
    "compare_tables",
    "metric_definitions",
    "comparison_section",
    "episode_row",
    "identity_row",
    "markdown_table",
    "markdown_to_html",
    "headline_lines",
    "headline_table",
    "metric_ci_table",
    "paired_bootstrap_ci",
    "permutation_p",
    "render_html",
    "results_table",
    "score_cache_root",
    "score_records",
    "score_run",
    "write_judged_tables",
    "sign_test_p",
    "summary_table",
]
