"""TIDE: trajectory diagnostics of test-time improvement for any exploreval run or imported log.

Yan et al., "TIDE: Trajectory-based Diagnostic Evaluation of Test-Time Improvement in LLM Agents".

* ``success_curve`` / ``auv`` (Eq. 1) with per-environment ``t_max`` (Appendix C.4), on binary
  success or a progress score, with bootstrap CIs over tasks;
* ``loop_steps`` / ``loop_ratio`` (Eq. 2-4): cycles over hashed states, loops = a cycle repeated
  immediately with the same states and actions, by the authors' published scan unless
  ``definition="exhaustive"``; their one-step loop check (``one_step_loop_mask``) and the
  Figure 3/5 AUV (``windowed_auv``); pluggable state identity (exact, normaliser, embedding
  similarity);
* Memory Index (Eq. 5) within a run (agents that differ only in history) or across two runs, and
  AUV against the history window (Figure 5);
* memory recall distance (Appendix C.5) over the ``entities_seen`` / ``entities_acted`` step infos.

The TIDE episode metrics and run tables are registered for every family (``"*"``) by
``exploreval.metrics`` (its report figures by ``exploreval.report``), so ``exploreval score`` /
``report`` show them for every suite and every import. See docs/tide.md for every definition and
interpretation choice.
"""

from __future__ import annotations

from exploreval.metrics._hooks import (
    register_budget,
    register_progress,
    register_state_identity,
    register_t_max,
)
from exploreval.metrics._tide_auv import (
    BootstrapCI,
    auv,
    auv_ci,
    auv_from_curve,
    bootstrap_mean_ci,
    paired_difference_ci,
    progress_auv,
    progress_curve,
    success_curve,
    task_auv,
    task_progress_auv,
)
from exploreval.metrics._tide_loops import (
    DEFAULT_LOOP_DEFINITION,
    LOOP_DEFINITIONS,
    LoopDefinition,
    LoopStats,
    Trajectory,
    algorithm1_as_printed,
    loop_mask_from_ids,
    loop_ratio,
    loop_stats,
    loop_steps,
)
from exploreval.metrics._tide_memory import RecallEvent, RecallResult, recall_distances
from exploreval.metrics._tide_published import (
    one_step_loop_mask,
    published_loop_mask,
    windowed_auv,
)
from exploreval.metrics._tide_records import (
    TrajectorySummary,
    action_verb,
    history_of,
    progress_trace,
    record_loop_mask,
    record_loops,
    record_one_step_loops,
    record_recall,
    record_trajectory,
    solved_at,
    state_identity_for,
    tide_episode_metrics,
    tide_excluded,
    trajectory_summaries,
)
from exploreval.metrics._tide_state import (
    EmbeddingSimilarity,
    EmbeddingUnavailableError,
    ExactText,
    Normalised,
    StateIdentity,
    load_minilm,
    parse_identity,
    strip_patterns,
)
from exploreval.metrics._tide_tables import (
    MEMORY_INDEX_COLUMNS,
    SUMMARY_COLUMNS,
    curves_table,
    loop_actions_table,
    memory_index_between,
    memory_index_row,
    memory_table,
    points_table,
    summary_table,
    tide_run_tables,
    tide_tables_from_summaries,
    window_table,
)
from exploreval.metrics._tide_tmax import ENV_VAR as T_MAX_ENV_VAR
from exploreval.metrics._tide_tmax import (
    PAPER_T_MAX,
    env_name,
    parse_t_max_overrides,
    resolve_t_max,
)

__all__ = [
    "MEMORY_INDEX_COLUMNS",
    "SUMMARY_COLUMNS",
    "T_MAX_ENV_VAR",
    "TrajectorySummary",
    "points_table",
    "tide_tables_from_summaries",
    "trajectory_summaries",
    "PAPER_T_MAX",
    "DEFAULT_LOOP_DEFINITION",
    "LOOP_DEFINITIONS",
    "LoopDefinition",
    "BootstrapCI",
    "EmbeddingSimilarity",
    "EmbeddingUnavailableError",
    "ExactText",
    "LoopStats",
    "Normalised",
    "RecallEvent",
    "RecallResult",
    "StateIdentity",
    "Trajectory",
    "action_verb",
    "algorithm1_as_printed",
    "auv",
    "auv_ci",
    "auv_from_curve",
    "bootstrap_mean_ci",
    "curves_table",
    "env_name",
    "history_of",
    "load_minilm",
    "loop_actions_table",
    "loop_mask_from_ids",
    "loop_ratio",
    "loop_stats",
    "loop_steps",
    "one_step_loop_mask",
    "published_loop_mask",
    "windowed_auv",
    "record_one_step_loops",
    "memory_index_between",
    "memory_index_row",
    "memory_table",
    "paired_difference_ci",
    "parse_identity",
    "parse_t_max_overrides",
    "progress_auv",
    "progress_curve",
    "progress_trace",
    "recall_distances",
    "record_loop_mask",
    "record_loops",
    "record_recall",
    "record_trajectory",
    "register_budget",
    "register_progress",
    "register_state_identity",
    "register_t_max",
    "resolve_t_max",
    "solved_at",
    "tide_excluded",
    "state_identity_for",
    "strip_patterns",
    "success_curve",
    "summary_table",
    "task_auv",
    "task_progress_auv",
    "tide_episode_metrics",
    "tide_run_tables",
    "window_table",
]
