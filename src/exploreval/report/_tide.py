"""TIDE figures for ``exploreval report`` (registered for every family).

* cumulative success curves P_t per environment (Figures 2 / 10)
* Loop Ratio vs per-task AUV scatter with Spearman's rho (Figure 3)
* Memory Index bars with paired-bootstrap 95% CIs (Figure 4)
* AUV against history window size (Figure 5)
* the radar of Figures 6 / 9, for environments with three or more agents: min-max scaling across
  the agents (Appendix C.6) turns two agents into "best" and "worst" whatever their distance,
  so with two the report says why there is none

Families that declare (``report.disable_tide_curves``) that TIDE curves mean nothing for them
(bandits: every episode runs to the horizon, "success" is not solving) get no curves or scatter,
and their rows are left out of the TIDE tables. A column that is the same on every row (e.g.
``recall_distance`` on the puzzles) is dropped from the table and named in a note.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from exploreval.core import EpisodeRecord
from exploreval.report._tide_frames import (
    constant_columns,
    fmt_number,
    markdown_table,
    paper_matrix,
    sr_auv_pairs,
)
from exploreval.report._tide_plots import (
    entropy_part,
    plot_lr_vs_auv,
    plot_memory_index,
    plot_success_curves,
    plot_window_curves,
    radar_part,
    recall_lag_part,
    with_condition,
)


def _own_rows(
    tables: Mapping[str, pd.DataFrame], env_ids: set[str], families: set[str]
) -> dict[str, pd.DataFrame]:
    """The stored run tables cut to the envs this section draws (a stored table covers every
    family of the run, bandits included)."""
    kept: dict[str, pd.DataFrame] = {}
    for name, table in tables.items():
        if not name.startswith("tide_") or table.empty:
            continue
        if "family" in table:
            table = table[table["family"].isin(families)]
        elif "env_id" in table:
            table = table[table["env_id"].isin(env_ids)]
        if not table.empty:
            kept[name] = table.reset_index(drop=True)
    return kept


def tide_report(
    records: Sequence[EpisodeRecord],
    rows: pd.DataFrame,
    out_dir: Path,
    tables: Mapping[str, pd.DataFrame] | None = None,
) -> list[Any]:
    """The ``"*"`` report plugin: TIDE tables and figures for any run.

    ``tables``: the run's stored TIDE tables (``tide_run_tables`` over every record, as ``score``
    wrote them); without them they are computed here from the records."""
    from exploreval.metrics.tide import (
        MEMORY_INDEX_COLUMNS,
        SUMMARY_COLUMNS,
        TrajectorySummary,
        points_table,
        tide_excluded,
        tide_tables_from_summaries,
        trajectory_summaries,
    )
    from exploreval.report import ReportSection
    from exploreval.report._registry import tide_curves_apply

    if tables is not None and "tide_summary" in tables and {"family", "env_id"} <= set(rows):
        # the stored tables, and from the rows which families and envs are drawn and which
        # episodes TIDE left out: no record is read
        drawn = rows[[tide_curves_apply(str(f)) for f in rows["family"]]]
        out_of_tide = (
            drawn["tide_excluded"].notna()
            if "tide_excluded" in drawn
            else pd.Series(False, index=drawn.index)
        )
        excluded_count = int(out_of_tide.sum())
        reasons = (
            sorted({str(v) for v in drawn.loc[out_of_tide, "tide_excluded"]})
            if excluded_count
            else []
        )
        kept_rows = drawn[~out_of_tide]
        tables = _own_rows(tables, set(kept_rows["env_id"]), set(kept_rows["family"]))
        any_kept = not kept_rows.empty
    else:
        # one pass over the records (several runs, or records in memory): each becomes its
        # trajectory summaries, which is all the tables need, and is dropped
        left_out: list[str] = []
        items: list[TrajectorySummary] = []
        for record in records:
            if not tide_curves_apply(record.family):
                continue
            why = tide_excluded(record)
            if why is not None:
                left_out += [why] if record.status == "ok" else []
                continue
            items += trajectory_summaries(record)
        excluded_count, reasons = len(left_out), sorted(set(left_out))
        tables = tide_tables_from_summaries([items]) if items else {}
        any_kept = bool(items)
    if not any_kept or "tide_summary" not in tables:
        if not excluded_count:
            return []
        return [
            ReportSection(
                title="TIDE: AUV, Loop Ratio, Memory Index",
                markdown=f"_All {excluded_count} episode(s) are left out of TIDE: no agent steps "
                "visible (an installed agent ran inside its launch command; docs/tide.md)._",
            )
        ]
    out_dir.mkdir(parents=True, exist_ok=True)
    summary = tables["tide_summary"]
    constant = constant_columns(summary, ("recall_distance", "progress_auv", "loop_ratio"))
    files: list[Path] = plot_success_curves(
        tables["tide_curves"], summary, out_dir / "tide_success_curves.png"
    )
    # stored by score; a run scored before points were stored gets them computed here
    # stored by score; tables stored before points were get them from one pass over the records
    points = (
        tables["tide_points"]
        if "tide_points" in tables
        else points_table(r for r in records if tide_curves_apply(r.family))
    )
    if "condition" in summary and set(summary["condition"]) == {"-"}:
        constant = [*constant, "condition"]  # no env options anywhere: nothing to show
    #: the columns that tell rows apart in the TIDE tables below
    keys = (
        ["env_id", "preset", "agent"]
        if "condition" in constant
        else ["env_id", "preset", "condition", "agent"]
    )
    shown = summary.copy()
    if "t_max_min" in shown:  # episodes with their own budgets: the range of their windows
        shown["t_max"] = [
            str(int(hi)) if int(lo) == int(hi) else f"{int(lo)}–{int(hi)}"
            for lo, hi in zip(shown["t_max_min"], shown["t_max"], strict=True)
        ]
    parts = [
        "Definitions and interpretation choices: docs/tide.md. AUV uses the t_max shown: the "
        "paper's window where it gives one, else each episode's own step budget (a range "
        "`a–b` when the budgets differ; the AUV is then the mean of the episodes' AUVs, the same "
        "number as the mean of `tide_auv` in the metrics table). CIs are 95% percentile "
        "bootstraps over tasks; LR is pooled (loop steps / steps) and uses the TIDE authors' "
        "published scan, the paper's Table 2 reading (the exhaustive reading is the metrics "
        "table's `tide_loop_ratio_exhaustive`).",
        "",
        markdown_table(shown, [c for c in SUMMARY_COLUMNS if c not in constant]),
    ]
    model_keys = [k for k in keys if k not in ("env_id", "preset")]
    if "condition" in model_keys and not summary.duplicated(["env_id", "preset", "agent"]).any():
        # one condition per agent in each environment (e.g. each env's own instance file): the
        # paper's layout keeps a row per model, not per environment's options
        model_keys.remove("condition")
    if summary["env_id"].nunique() > 1:  # the paper's layout: a model per row, environments across
        table1 = paper_matrix(summary, [("success_rate", "SR"), ("auv", "AUV")], model_keys)
        table2 = paper_matrix(summary, [("loop_ratio", "LR")], model_keys)
        parts += [
            "",
            "### As the paper prints them (Tables 1 and 2, percent)",
            "",
            markdown_table(table1, list(table1.columns)),
            "",
            markdown_table(table2, list(table2.columns)),
        ]
    for column in (c for c in constant if c != "condition"):
        parts += [
            "",
            f"_`{column}` is {fmt_number(summary[column].iloc[0])} on every row (omitted)._",
        ]
    if excluded_count:
        parts += [
            "",
            f"_{excluded_count} episode(s) left out of TIDE ({'; '.join(reasons)}: an installed "
            "agent ran inside its launch command, so no agent step was recorded; see "
            "docs/tide.md)._",
        ]
    if not points.empty:
        path, rhos = plot_lr_vs_auv(points, out_dir / "tide_lr_vs_auv.png")
        files.append(path)
        parts += [
            "",
            "Spearman rho(LR, per-task AUV): "
            + ", ".join(f"{k}: {fmt_number(v)}" for k, v in rhos.items()),
        ]
    split = summary[summary["tasks_with_loops"] > 0]
    if not split.empty:
        parts += [
            "",
            "### Tasks with and without loops (Table 3)",
            "",
            markdown_table(
                split,
                [
                    *keys,
                    "episodes",
                    "tasks_with_loops",
                    "auv_tasks_with_loops",
                    "auv_tasks_without_loops",
                ],
            ),
        ]
    loop_actions = tables.get("tide_loop_actions")
    if loop_actions is not None and not loop_actions.empty:
        top = with_condition(loop_actions).groupby(keys, sort=True).head(3)
        parts += [
            "",
            "Most frequent loop actions (share of loop steps):",
            "",
            markdown_table(top, [*keys, "verb", "loop_steps", "share"]),
        ]
    memory = tables.get("tide_memory")
    if memory is not None and not memory.empty:
        files.append(plot_memory_index(memory, out_dir / "tide_memory_index.png"))
        parts += [
            "",
            "### Memory Index",
            "",
            markdown_table(
                memory,
                [*keys, *MEMORY_INDEX_COLUMNS],
            ),
        ]
        if memory["env_id"].nunique() > 1:  # Table 6's layout
            table6 = paper_matrix(memory, [("mi", "MI")], model_keys)
            parts += ["", markdown_table(table6, list(table6.columns))]
    window = tables.get("tide_window")
    if window is not None and not window.empty:
        files.append(plot_window_curves(window, out_dir / "tide_window.png"))
    pairs = sr_auv_pairs(summary)
    if not pairs.empty:
        shown_keys = [k for k in keys if k != "agent" and k in pairs]
        parts += [
            "",
            "### Where success rate and AUV disagree (Table 4)",
            "",
            "Every pair of agents (A, B) of an environment with SR(A) ≥ SR(B) but "
            "AUV(A) ≤ AUV(B): the end state ranks A first, the trajectory B.",
            "",
            markdown_table(
                pairs, [*shown_keys, "agent_a", "agent_b", "sr_a", "sr_b", "auv_a", "auv_b"]
            ),  # fmt: skip
        ]
    parts += radar_part(summary, memory, out_dir, files)
    parts += recall_lag_part(tables.get("tide_recall_lags"), out_dir, files)
    parts += entropy_part(tables.get("tide_entropy"), out_dir, files)
    summary_history = tables.get("tide_summary_history")
    if summary_history is not None and not summary_history.empty:
        parts += ["", "### Memory summary (Table 5)", "",
                  "AUV with every earlier turn in the prompt (Naive) and with a summary instead "
                  "(`model-summary`: the model writes it each turn, the paper's setting; "
                  "`summary`: the harness's list of past actions), paired by task.", "",
                  markdown_table(summary_history, [*keys, "summary", "auv_naive", "auv_summary",
                                                   "difference", "tasks"])]  # fmt: skip
    return [
        ReportSection(
            title="TIDE: AUV, Loop Ratio, Memory Index", markdown="\n".join(parts), files=files
        )
    ]
