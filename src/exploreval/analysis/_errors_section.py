"""The report's "Errors and invalid actions" section: errored episodes by reason with an example,
and invalid actions by agent and reason, read from the runs' step columns (no record is parsed).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import pandas as pd

from exploreval.analysis._score import ScoreResult
from exploreval.analysis._tables import markdown_table
from exploreval.core import EpisodeRecord
from exploreval.report import ReportSection, episode_link
from exploreval.store import (
    LazyRecords,
    RunColumns,
    RunDir,
    RunManifest,
)

#: Columns of the results table that are identity, not metrics.
MAX_ERROR_ROWS = 50


MAX_INVALID_ROWS = 40


def errors_section(
    errors: Sequence[EpisodeRecord],
    records: Sequence[EpisodeRecord],
    *,
    invalid: tuple[Counter[tuple[str, str]], dict[tuple[str, str], tuple[str, str]]] | None = None,
) -> ReportSection:
    """Errored episodes (with their messages) and invalid actions with their reasons.

    ``invalid``: the invalid-action counts and each one's first episode (run id, episode id),
    read from the step columns (``invalid_action_rows``); counted from ``records`` when absent."""
    lines: list[str] = []
    if errors:
        by_message = Counter((r.error or "").splitlines()[0][:160] for r in errors)
        lines += [
            f"{len(errors)} episode(s) ended in an error (not scored). By message:",
            "",
            markdown_table(
                pd.DataFrame(
                    [
                        {"count": c, "error": m or "(no message)"}
                        for m, c in by_message.most_common()
                    ]
                )
            ),
            "",
            markdown_table(
                pd.DataFrame(
                    [
                        {
                            "episode": episode_link(r.run_id, r.episode_id),
                            "env_id": r.env_id,
                            "preset": r.preset or "-",
                            "agent": r.agent.name,
                            "seed": r.seed,
                            "error": (r.error or "").splitlines()[0][:120] if r.error else "",
                        }
                        for r in errors[:MAX_ERROR_ROWS]
                    ]
                )
            ),
        ]
        if len(errors) > MAX_ERROR_ROWS:
            lines.append(f"\n_(first {MAX_ERROR_ROWS} of {len(errors)} listed)_")
    else:
        lines.append("No episode ended in an error.")
    if invalid is None:
        invalid = _count_invalid(records)
    counts, example = invalid
    lines.append("")
    if counts:
        lines += [
            "Invalid actions by agent and reason (first episode with each):",
            "",
            markdown_table(
                pd.DataFrame(
                    [
                        {
                            "agent": agent,
                            "reason": reason,
                            "steps": count,
                            "example": episode_link(*example[(agent, reason)]),
                        }
                        for (agent, reason), count in counts.most_common(MAX_INVALID_ROWS)
                    ]
                )
            ),
        ]
    else:
        lines.append("No invalid actions.")
    return ReportSection(title="Errors and invalid actions", markdown="\n".join(lines))


def _count_invalid(
    records: Sequence[EpisodeRecord],
) -> tuple[Counter[tuple[str, str]], dict[tuple[str, str], tuple[str, str]]]:
    counts: Counter[tuple[str, str]] = Counter()
    example: dict[tuple[str, str], tuple[str, str]] = {}
    for record in records:
        for step in record.acting_steps:
            if not step.valid:
                key = (record.agent.name, (step.invalid_reason or "(no reason)")[:120])
                counts[key] += 1
                example.setdefault(key, (record.run_id, record.episode_id))
    return counts, example


def invalid_action_rows(
    runs: Sequence[RunDir], results: Sequence[tuple[RunManifest, ScoreResult]]
) -> tuple[Counter[tuple[str, str]], dict[tuple[str, str], tuple[str, str]]] | None:
    """Invalid actions by agent and reason, from the runs' step columns (one query per run, no
    record read); None when a result's records are not a run's (``score_records``)."""
    counts: Counter[tuple[str, str]] = Counter()
    example: dict[tuple[str, str], tuple[str, str]] = {}
    for run, (_, result) in zip(runs, results, strict=True):
        if not isinstance(result.records, LazyRecords):
            return None
        rename = result.records.rename
        con = RunColumns(run).connect()
        try:
            rows = con.sql(
                "select e.agent, left(coalesce(s.invalid_reason, '(no reason)'), 120) as reason, "
                "count(*) as n, arg_min(e.run_id, s.line) as run_id, "
                "arg_min(e.episode_id, s.line) as episode_id "
                "from steps s join episodes e using (episode_id, line) "
                "where e.status = 'ok' and not s.valid and s.phase = 'task' "
                "group by 1, 2 order by min(s.line)"
            ).fetchall()
        finally:
            con.close()
        for agent, reason, n, run_id, episode_id in rows:
            key = (rename.get(str(agent), str(agent)), str(reason))
            counts[key] += int(n)
            example.setdefault(key, (str(run_id or result.run_id), str(episode_id)))
    return counts, example
