"""Build the report of one or several runs: report.md (for diffs) and a self-contained index.html.

Several runs go into one report (several agents or models, as the papers' figures compare):
each is scored from its own log, their rows are concatenated (``run_id`` tells them apart) and
every report section sees the records of all of them. An agent name that occurs in more than one
run is labelled ``name@run`` so that series never merge silently.
"""

from __future__ import annotations

import math
import re
import traceback
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from exploreval.analysis._errors_section import errors_section, invalid_action_rows
from exploreval.analysis._score import ScoreProgress, ScoreResult, score_run
from exploreval.analysis._stats import bootstrap_mean_ci
from exploreval.analysis._tables import IDENTITY_COLUMNS, markdown_table
from exploreval.core import EpisodeRecord, gc_paused
from exploreval.report import ReportSection, episode_link, report_plugins
from exploreval.store import (
    ChainedRecords,
    LazyRecords,
    RunDir,
    RunManifest,
    describe_os_error,
    write_atomic,
)


def _ci_text(mean: float, low: float, high: float) -> str:
    if math.isnan(mean):
        return "-"
    if math.isnan(low):
        return f"{mean:.3f}"
    return f"{mean:.3f} [{low:.3f}, {high:.3f}]"


def _budget_text(values: pd.Series) -> str:
    finite = sorted({int(v) for v in pd.to_numeric(values, errors="coerce").dropna()})
    if not finite:
        return "none"
    return str(finite[0]) if len(finite) == 1 else f"{finite[0]}–{finite[-1]}"


def success_definitions(table: pd.DataFrame) -> list[str]:
    """One line per env of the table saying what its ``success`` is (``register_env``'s
    ``success_means``); an env this install does not know keeps its source's meaning."""
    from exploreval.core import ENV_REGISTRY

    if table.empty or "env_id" not in table:
        return []
    lines = []
    for env_id in sorted({str(e) for e in table["env_id"].dropna()}):
        spec = ENV_REGISTRY.find(env_id)
        meaning = spec.success_means if spec is not None and spec.success_means else ""
        name = env_id.removeprefix("exploreval/")
        lines.append(
            f"`success` for {name}: {meaning}."
            if meaning
            else f"`success` for {name}: as the episode's source recorded it."
        )
    return lines


def episode_budget(table: pd.DataFrame) -> pd.Series:
    """The step budget an episode had: the env's own budget if it reports one, else the step cap."""
    budget = pd.Series(np.nan, index=table.index, dtype=float)
    if "max_steps" in table:
        budget = pd.to_numeric(table["max_steps"], errors="coerce")
    if "budget" in table:
        own = pd.to_numeric(table["budget"], errors="coerce")
        budget = own.where(own.notna(), budget)
    return budget


def _with_keys(table: pd.DataFrame) -> pd.DataFrame:
    """``preset`` and ``condition`` filled (``-``) so they group and compare as text."""
    frame = table.assign(preset=table["preset"].fillna("-"))
    if "condition" not in frame:
        frame["condition"] = "-"
    frame["condition"] = frame["condition"].fillna("-").astype(str).replace("", "-")
    return frame


def group_keys(table: pd.DataFrame) -> list[str]:
    """The columns a report table groups by: env × preset × agent, and × condition (the env
    options, ``exploreval.metrics.condition_label``) when more than one condition is present."""
    keys = ["env_id", "preset", "agent"]
    if "condition" in table and _with_keys(table)["condition"].nunique() > 1:
        keys.insert(2, "condition")
    return keys


def condition_note(table: pd.DataFrame) -> str:
    """One line naming the single condition of a table whose episodes all share env options."""
    if table.empty or "condition" not in table:
        return ""
    values = _with_keys(table)["condition"].unique()
    if len(values) == 1 and values[0] != "-":
        return f"Every episode ran with the env options `{values[0]}` (condition)."
    return ""


def summary_table(table: pd.DataFrame, errors: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per env × preset × [condition ×] agent: n, success rate with its 95% bootstrap CI, steps,
    budget, invalid-action rate, tokens (prompt, completion, total), cost, errored episodes.

    ``condition`` (the env options) is a key only when the table holds several conditions."""
    if table.empty:
        return table
    frame = _with_keys(table)
    frame["_budget"] = episode_budget(frame)
    for column in ("prompt_tokens", "completion_tokens", "cost_usd"):
        if column not in frame:
            frame[column] = 0
    if "total_tokens" not in frame:
        frame["total_tokens"] = frame["prompt_tokens"] + frame["completion_tokens"]
    keys = group_keys(frame)
    failed = Counter[tuple[str, ...]]()
    if errors is not None and not errors.empty:
        for row in _with_keys(errors)[keys].astype(str).itertuples(index=False):
            failed[tuple(row)] += 1
    rows = []
    for key, group in frame.groupby(keys, sort=True, dropna=False):
        names = tuple(str(k) for k in key)
        mean, low, high = bootstrap_mean_ci(group["success"].astype(float).to_numpy())
        rows.append(
            {
                **dict(zip(keys, names, strict=True)),
                "n": len(group),
                "success_rate": mean,
                "success_ci_low": low,
                "success_ci_high": high,
                "mean_steps": float(group["steps"].mean()),
                "budget": _budget_text(group["_budget"]),
                "invalid_rate": float(group["invalid_rate"].mean()),
                "prompt_tokens": int(group["prompt_tokens"].sum()),
                "completion_tokens": int(group["completion_tokens"].sum()),
                "tokens": int(group["total_tokens"].sum()),
                # any unpriced episode makes the group's cost unknown ("unpriced"), never $0
                "cost_usd": (
                    float(group["cost_usd"].sum())
                    if not group["cost_usd"].isna().any()
                    else "unpriced"
                ),
                "errored": failed.get(names, 0),
            }
        )
    return pd.DataFrame(rows)


def count_text(value: float) -> str:
    """12 -> ``12``, 12_345 -> ``12.3k``, 4_567_899 -> ``4.57M`` (tokens at a glance)."""
    number = float(value)
    for size, unit in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(number) >= size:
            scaled = number / size
            return f"{scaled:.3g}{unit}" if scaled < 1000 else f"{scaled:.0f}{unit}"
    return f"{number:.0f}"


def compact_summary(summary: pd.DataFrame) -> pd.DataFrame:
    """The Summary as the report shows it (fits 1400 px): the success rate and its CI in one
    cell, tokens as one column with k/M units and the prompt/completion split as a tooltip
    (``<abbr title=...>``), the namespace dropped from env ids, cost as ``$``."""
    if summary.empty:
        return summary
    keys = [k for k in ("env_id", "preset", "condition", "agent") if k in summary]
    rows = []
    for row in summary.to_dict("records"):
        out: dict[str, Any] = {k: row[k] for k in keys}
        out["env_id"] = str(row["env_id"]).removeprefix("exploreval/")
        out["n"] = row["n"]
        low, high = row["success_ci_low"], row["success_ci_high"]
        rate = f"{row['success_rate']:.3f}"
        out["success [95% CI]"] = rate if pd.isna(low) else f"{rate} [{low:.2f}, {high:.2f}]"
        out["steps"] = f"{row['mean_steps']:.1f}"
        out["budget"] = row["budget"]
        out["invalid"] = f"{row['invalid_rate']:.3f}"
        tip = (
            f"prompt {int(row['prompt_tokens']):,} + completion "
            f"{int(row['completion_tokens']):,} = {int(row['tokens']):,} tokens"
        )
        out["tokens"] = f'<abbr title="{tip}">{count_text(row["tokens"])}</abbr>'
        cost = row["cost_usd"]
        out["cost"] = (
            cost
            if isinstance(cost, str)
            else f"${cost:.2f}"
            if cost >= 0.01 or cost == 0
            else f"${cost:.4f}"
        )
        out["errored"] = row["errored"]
        if "example" in row:
            out["example"] = row["example"]
        rows.append(out)
    return pd.DataFrame(rows).rename(columns={"env_id": "env"})


def budget_notes(table: pd.DataFrame) -> list[str]:
    """One line per env × preset × condition where agents the table puts side by side played
    the same task (seed) with different step budgets (a ``max_steps`` that differs per agent).
    A budget set as an env option (the demo's LLM, capped to keep the demo short) is its own
    condition, which the table already shows as separate rows: no note for it."""
    if table.empty:
        return []
    frame = _with_keys(table)
    frame["_budget"] = episode_budget(frame)
    notes = []
    for (env_id, preset, _), group in frame.groupby(["env_id", "preset", "condition"], sort=True):
        per_seed = group.dropna(subset=["_budget"]).groupby("seed")["_budget"].nunique()
        if not (per_seed > 1).any():
            continue
        per_agent = {
            str(agent): _budget_text(part["_budget"])
            for agent, part in group.groupby("agent", sort=True)
        }
        detail = ", ".join(f"{a}: {b}" for a, b in per_agent.items())
        notes.append(
            f"**Budgets differ** on {env_id} [{preset}] for the same seeds ({detail}): success "
            "rates of these agents are not comparable one to one."
        )
    return notes


def metric_ci_table(table: pd.DataFrame) -> pd.DataFrame:
    """Every numeric metric per env × preset × [condition ×] agent: mean, 95% bootstrap CI, n
    (long format)."""
    if table.empty:
        return pd.DataFrame()
    frame = _with_keys(table)
    metrics = [
        c
        for c in frame.columns
        if c not in IDENTITY_COLUMNS
        and (pd.api.types.is_numeric_dtype(frame[c]) or pd.api.types.is_bool_dtype(frame[c]))
    ]
    rows = []
    keys = group_keys(frame)
    for key, group in frame.groupby(keys, sort=True):
        names = dict(zip(keys, (str(k) for k in key), strict=True))
        for metric in metrics:
            values = pd.to_numeric(group[metric], errors="coerce").to_numpy(dtype=float)
            n = int(np.isfinite(values).sum())
            if n == 0:
                continue
            mean, low, high = bootstrap_mean_ci(values)
            rows.append(
                {
                    **names,
                    "metric": metric,
                    "n": n,
                    "mean [95% CI]": _ci_text(mean, low, high),
                }
            )
    return pd.DataFrame(rows)


def headline_table(table: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Per env family, its headline metrics (``exploreval.metrics.headline_metrics``: success,
    then the family's own, such as EUS/TSR or discovery@k) per env × preset × [condition ×]
    agent, each as ``mean [95% CI]``: what ``score``, ``run``'s end and the report lead with,
    from the one registry suites declare them in."""
    from exploreval.metrics import COMMON_HEADLINE, headline_metrics

    if table.empty or "family" not in table:
        return {}
    out: dict[str, pd.DataFrame] = {}
    for family, part in _with_keys(table).groupby("family", sort=True):
        # success, then what the family itself declares (the point of the table), then the rest
        named = headline_metrics(str(family))
        own = [c for c in named if c not in COMMON_HEADLINE]
        ordered = ["success", *own, *(c for c in COMMON_HEADLINE if c != "success")]
        columns = [c for c in ordered if c in part.columns]
        keys = group_keys(part)
        rows = []
        for key, group in part.groupby(keys, sort=True):
            row: dict[str, Any] = dict(zip(keys, (str(k) for k in key), strict=True))
            row["n"] = len(group)
            for metric in columns:
                values = pd.to_numeric(group[metric], errors="coerce").to_numpy(dtype=float)
                if not np.isfinite(values).any():
                    continue
                row[metric] = _ci_text(*bootstrap_mean_ci(values[np.isfinite(values)]))
            rows.append(row)
        frame = pd.DataFrame(rows).rename(columns={"env_id": "env"})
        out[str(family)] = frame.dropna(axis=1, how="all")
    return out


def headline_lines(table: pd.DataFrame) -> list[str]:
    """One line per agent (and family it played): success and the family's own headline
    metrics over all its episodes, each ``mean [95% CI]`` (what ``run`` ends with)."""
    from exploreval.metrics import COMMON_HEADLINE

    if table.empty or "family" not in table:
        return []
    pooled = table.assign(env_id=table["family"], preset="-", condition="-")
    lines = []
    for family, frame in headline_table(pooled).items():
        metrics = [c for c in frame.columns if c == "success" or c not in (
            *COMMON_HEADLINE, "env", "preset", "agent", "n", "condition")]  # fmt: skip
        for _, row in frame.iterrows():
            values = "; ".join(f"{m} {row[m]}" for m in metrics if isinstance(row.get(m), str))
            lines.append(f"{row['agent']} ({family}, {count_text(row['n'])} episodes): {values}")
    return lines


def run_labels(runs: Sequence[tuple[RunManifest, Path]]) -> list[str]:
    """One distinct, readable label per run: its name (default: the env name), else, when two
    runs share it, the run directory's name, else the run id, else ``label~2``..."""
    labels = [manifest.name or path.name for manifest, path in runs]
    for fallback in ("directory", "run id"):
        counts = Counter(labels)
        labels = [
            (path.name if fallback == "directory" else manifest.run_id) or label
            if counts[label] > 1
            else label
            for label, (manifest, path) in zip(labels, runs, strict=True)
        ]
    seen: Counter[str] = Counter()
    unique = []
    for label in labels:
        seen[label] += 1
        unique.append(label if seen[label] == 1 else f"{label}~{seen[label]}")
    return unique


def _label_collisions(results: list[tuple[RunManifest, ScoreResult]], labels: list[str]) -> None:
    """Relabel agents whose name occurs in several runs as ``name@<run label>`` (records and
    rows); ``labels`` are distinct per run (``run_labels``), so two runs never merge. The names
    come from the rows, so no record is read; records are relabelled as they are made."""
    runs_of: dict[str, set[int]] = {}
    for index, (_, result) in enumerate(results):
        for frame in (result.table, result.error_table):
            if not frame.empty and "agent" in frame:
                for name in set(frame["agent"].astype(str)):
                    runs_of.setdefault(name, set()).add(index)
    clashing = {name for name, runs in runs_of.items() if len(runs) > 1}
    if not clashing:
        return
    for (_, result), tag in zip(results, labels, strict=True):
        rename = {name: f"{name}@{tag}" for name in clashing}
        result.records = _renamed(result.records, rename)
        result.errors = _renamed(result.errors, rename)
        for frame in (result.table, result.error_table):
            if not frame.empty and "agent" in frame:
                frame["agent"] = frame["agent"].replace(rename)


def _renamed(records: Sequence[EpisodeRecord], rename: dict[str, str]) -> Sequence[EpisodeRecord]:
    if isinstance(records, LazyRecords):
        return records.renamed(rename)

    def relabel(record: EpisodeRecord) -> EpisodeRecord:
        if record.agent.name not in rename:
            return record
        agent = record.agent.model_copy(update={"name": rename[record.agent.name]})
        return record.model_copy(update={"agent": agent})

    return [relabel(r) for r in records]


def _summary_with_links(summary: pd.DataFrame, table: pd.DataFrame) -> pd.DataFrame:
    """Add a link to the first failed episode of each row (what a reader opens first)."""
    if summary.empty:
        return summary
    frame = _with_keys(table)
    keys = [k for k in group_keys(frame) if k in summary]
    links = []
    for row in summary.to_dict("records"):
        mask = np.ones(len(frame), dtype=bool)
        for key in keys:
            mask &= (frame[key] == row[key]).to_numpy()
        part = frame[mask]
        failed = part[~part["success"].astype(bool)]
        pick = (failed if not failed.empty else part).sort_values(["seed", "repeat"]).iloc[0]
        links.append(
            episode_link(str(pick["run_id"]), str(pick["episode_id"]))
            + (" (unsolved)" if not failed.empty else "")
        )
    out = summary.copy()
    out["example"] = links
    return out


def _image_lines(section: ReportSection, out: Path) -> list[str]:
    lines = []
    for path in section.files:
        rel = Path(path).relative_to(out) if Path(path).is_relative_to(out) else Path(path)
        if str(rel).endswith((".png", ".gif", ".svg")):
            lines.append(f"![{rel.name}]({rel.as_posix()})")
    return lines


def render_markdown(title: str, header: list[str], sections: list[ReportSection], out: Path) -> str:
    """The markdown report. Figures get a blank line before them so no renderer reads an image
    as one more row of the table above it."""
    parts = [f"# {title}", "", *header]
    for section in sections:
        parts += ["", f"## {section.title}", "", section.markdown.rstrip()]
        images = _image_lines(section, out)
        if images:
            parts.append("")
            for image in images:
                parts += [image, ""]
    return "\n".join(parts).rstrip() + "\n"


def _run_header(
    manifest: RunManifest, run: RunDir, result: ScoreResult, label: str = ""
) -> list[str]:
    name = manifest.name or run.path.name
    shown = name if not label or label == name else f"{name}, shown as **{label}**"
    line = (
        f"- run `{manifest.run_id}` ({shown}, {run.path}): status "
        f"**{manifest.status}**, {len(result.records)} episodes ok, {len(result.errors)} errored, "
        f"{manifest.episodes_planned} planned; config hash `{manifest.config_hash}`, exploreval "
        f"{manifest.package_version}"
    )
    lines = [line]
    if result.issues:
        lines.append(
            f"  - {len(result.issues)} unreadable log lines skipped: "
            + "; ".join(str(i) for i in result.issues[:5])
        )
    return lines


def default_report_dir(runs: Sequence[RunDir]) -> Path:
    """One run: its ``report/``. Several: a folder of their own beside the first run's, named
    after all of them (a multi-run report never overwrites a run's own report)."""
    if len(runs) == 1:
        return runs[0].report_dir
    names = "+".join(re.sub(r"[^A-Za-z0-9._-]+", "_", run.path.resolve().name) for run in runs)
    return runs[0].path / f"report-{names[:120]}"


def build_report(
    runs: RunDir | Sequence[RunDir],
    out_dir: Path | None = None,
    *,
    html: bool = True,
    progress: ScoreProgress | None = None,
) -> Path:
    """Score the run(s), write report.md (+ index.html) and figures; return report.md's path.
    ``progress`` hears each run's score (``score_run``), then ``("report", None, None)``.

    Several runs share one report; by default it goes to ``report-<names>`` in the first run's
    directory (:func:`default_report_dir`), never over a run's own ``report/``.
    """
    run_list = [runs] if isinstance(runs, RunDir) else list(runs)
    if not run_list:
        raise ValueError("build_report needs at least one run directory")
    # Millions of parsed objects stay alive while the report is drawn: the collector is paused
    # (exploreval.core.gc_paused) and every list of records is emptied before it resumes, so
    # the records are freed by reference counting, not by one full collection over all of them
    # (2 s per 10,000 episodes). Emptying matters: matplotlib's parser keeps exceptions whose
    # tracebacks reach this call's frames, which would otherwise hold the records until then.
    with gc_paused():
        results = [(run.read_manifest(), score_run(run, progress=progress)) for run in run_list]
        if progress is not None:
            progress("report", None, None)
        try:
            return _build_report(run_list, results, out_dir, html)
        finally:
            for _, result in results:
                result.forget_records()


def _build_report(
    run_list: list[RunDir],
    results: list[tuple[RunManifest, ScoreResult]],
    out_dir: Path | None,
    html: bool,
) -> Path:
    from exploreval.analysis._compare import compare_tables, comparison_section
    from exploreval.analysis._html import write_html

    labels = run_labels([(m, run.path) for (m, _), run in zip(results, run_list, strict=True)])
    # the paired comparison pairs agents by their own names, as `exploreval compare` does
    # (a copy of every row, taken before relabelling: only a report of several runs pairs them)
    compare_rows = [result.all_rows().copy() for _, result in results] if len(results) > 1 else []
    if len(results) > 1:
        _label_collisions(results, labels)
    out = Path(out_dir) if out_dir else default_report_dir(run_list)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise describe_os_error("create report directory", out, exc) from exc
    records = ChainedRecords([result.records for _, result in results])
    errors = ChainedRecords([result.errors for _, result in results])
    tables = [result.table for _, result in results if not result.table.empty]
    table = pd.concat(tables, ignore_index=True) if tables else pd.DataFrame()
    error_rows = [result.error_table for _, result in results if not result.error_table.empty]
    error_table = pd.concat(error_rows, ignore_index=True) if error_rows else pd.DataFrame()
    header = []
    for (manifest, result), run, label in zip(results, run_list, labels, strict=True):
        header += _run_header(manifest, run, result, label if len(results) > 1 else "")
    if len(results) == 1:
        title = f"exploreval report: {results[0][0].name or run_list[0].path.name}"
    else:
        title = f"exploreval report: {len(results)} runs"
    summary_lines = [
        f"Per {' × '.join(group_keys(table)) if not table.empty else 'env × preset × agent'} "
        "(`condition`: the env options, when the run has several). `success [95% CI]`: success "
        "rate with its percentile-bootstrap CI over episodes; `n` = episodes scored; `steps` = "
        "mean steps (every action the agent took, all phases); `budget` = the step budget the "
        "episodes had (the env's own budget when it has one, else the step cap; `none`: no cap, "
        "the episode ends on its own); `invalid` = invalid-action rate; `tokens` = prompt + completion "
        "(k = thousand, M = million; hover for the split); `errored` = episodes that ended in an "
        "error and are not in `n`; `example` opens an episode in the viewer (the first unsolved "
        "one when there is one). Every column, unrounded: `results.parquet` and "
        "`exploreval score --wide`.",
        "",
    ]
    summary_lines += [f"- {line}" for line in success_definitions(table)]
    summary_lines += [f"- {note}" for note in budget_notes(table)]
    if condition_note(table):
        summary_lines.append(f"- {condition_note(table)}")
    if summary_lines[-1] != "":
        summary_lines.append("")
    summary = summary_table(table, error_table)
    if not summary.empty:
        summary = _summary_with_links(summary, table)
    summary_lines.append(markdown_table(compact_summary(summary)))
    sections = [ReportSection(title="Summary", markdown="\n".join(summary_lines))]
    for family, part in table.groupby("family", sort=True) if not table.empty else iter(()):
        sections.append(
            ReportSection(
                title=f"Metrics with 95% CIs: {family}",
                markdown="Every episode metric, mean over episodes with its 95% bootstrap CI "
                f"(normal approximation above 5,000 episodes), per {' × '.join(group_keys(part))}."
                "\n\n" + markdown_table(metric_ci_table(part)),
            )
        )
    sections.append(errors_section(errors, records, invalid=invalid_action_rows(run_list, results)))
    # the run tables score computed (or stored) for exactly these records; with several runs
    # their agents may be relabelled, so sections compute what they need from the records
    run_tables = results[0][1].tables if len(results) == 1 else None
    for entry in report_plugins():
        family, name = entry.family, entry.name
        if family == "*":
            chosen, rows = records, table
        else:
            chosen = records.where(family)
            rows = table[table["family"] == family] if not table.empty else table
        if not chosen:
            continue
        try:
            sections.extend(entry.run(chosen, rows, out, run_tables))
        except Exception as exc:  # one broken figure must not lose the rest of the report
            sections.append(
                ReportSection(
                    title=f"{name} (failed)",
                    markdown=f"```\n{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=3)}\n```",
                )
            )
        finally:
            if chosen is not records:
                chosen.clear()  # see build_report: frames kept by matplotlib may hold this list
    for index in range(1, len(results)):
        comparison = compare_tables(
            compare_rows[0], compare_rows[index], name_a=labels[0], name_b=labels[index]
        )
        if any(c.pairs for c in comparison.comparisons):  # unrelated runs: nothing to pair
            sections.append(comparison_section(comparison))
    report_path = out / "report.md"
    try:
        text = render_markdown(title, header, sections, out)
        write_atomic(report_path, lambda tmp: tmp.write_text(text, encoding="utf-8"))
    except OSError as exc:
        raise describe_os_error("write", report_path, exc) from exc
    if html:
        write_html(out / "index.html", title, header, sections, out)
    write_report_viewer(
        [(run, result) for run, (_, result) in zip(run_list, results, strict=True)],
        out,
        report_path,
    )
    records.clear()
    errors.clear()
    return report_path


_VIEWER_LINK = re.compile(r"viewer/index\.html#/run/[^/\s)]+/episode/([^/\s)\"'#]+)")


def write_report_viewer(
    runs: Sequence[tuple[RunDir, Sequence[EpisodeRecord]] | tuple[RunDir, ScoreResult]],
    out: Path,
    report_path: Path,
) -> Path:
    """The static episode viewer in ``out/viewer/`` with the episodes the report links to: only
    those are read (found by their rows in the results, whose order is the records' order)."""
    from urllib.parse import unquote

    from exploreval.viewer import write_records_bundle

    text = report_path.read_text(encoding="utf-8")
    linked = {unquote(m) for m in _VIEWER_LINK.findall(text)}
    return write_records_bundle(
        [(run.path, _linked_records(given, linked)) for run, given in runs],
        out / "viewer",
    )


def _linked_records(
    given: Sequence[EpisodeRecord] | ScoreResult, linked: set[str]
) -> list[EpisodeRecord]:
    if not isinstance(given, ScoreResult):
        return [r for r in given if r.episode_id in linked]
    picked: list[EpisodeRecord] = []
    for rows, records in ((given.table, given.records), (given.error_table, given.errors)):
        if rows.empty or "episode_id" not in rows:
            continue
        if len(rows) != len(records):  # not row for row: read them all (small runs only)
            picked += [r for r in records if r.episode_id in linked]
            continue
        positions = np.flatnonzero(rows["episode_id"].isin(linked).to_numpy())
        picked += [records[int(i)] for i in positions]
    return picked
