"""The cross-suite pass@k section: curves of the unbiased estimator over the repeats of each task.

The numbers are the run table ``pass_at_k`` of ``exploreval.metrics`` (a task is env id + preset
+ seed + condition, one row per agent, env, preset and condition, k = 1 .. 10 then about 1.5x
apart up to the fewest attempts per task, 95% bootstrap CI over tasks); see ``metrics/_passk_runs.py``. ``report`` and ``metrics`` are
independent layers, so the metric is reached by its ``"module:function"`` name, resolved on use.

A family that draws its own pass@k figures (the terminal suite, with discovery@k and
interaction@k beside it) says so with :func:`own_pass_at_k`; its records are left out here.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from exploreval.core import load_plugins, resolve

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

    from exploreval.core import EpisodeRecord
    from exploreval.report._registry import ReportSection

TABLES = "exploreval.metrics._passk_runs:pass_at_k_tables"
#: Kept in sync with ``exploreval.metrics._passk_runs.EXAMPLE_COLUMNS`` (report does not import
#: metrics internals at import time).
EXAMPLE_COLUMNS = ("example_run_id", "example_episode_id", "example_solved")
ROW_KEY = "exploreval.metrics._passk_runs:row_key"
#: Panels drawn at most (one per env id x preset); the table lists every row.
MAX_PANELS = 12

_OWN: set[str] = set()


def own_pass_at_k(family: str) -> None:
    """Declare that ``family`` reports pass@k itself: the cross-suite section skips it."""
    _OWN.add(family)


def reports_own_pass_at_k(family: str) -> bool:
    """Whether ``family`` declared its own pass@k report (suite plugins are loaded first)."""
    load_plugins()
    return family in _OWN


def _ci(estimate: float, low: float, high: float, n_tasks: int) -> str:
    if n_tasks < 2:
        return f"{estimate:.3f}"
    return f"{estimate:.3f} [{low:.3f}, {high:.3f}]"


def _cell(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value).replace("|", "\\|").replace("\n", " ")


def _md_table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def _panel(env_id: str, preset: str) -> str:
    return env_id if preset == "-" else f"{env_id} [{preset}]"


def figure_pass_at_k(table: pd.DataFrame) -> Figure:
    """pass@k against k, one panel per env id x preset (at most ``MAX_PANELS``), one line per
    agent (and condition, when a panel has several) with its CI band; identical curves (bands
    included) share one line and a joint label; a single k is a point, never a line. Each
    line's ``gid`` is ``panel|label``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    from exploreval.report._plotting import merge_identical_series

    panels = list(dict.fromkeys(zip(table["env_id"], table["preset"], strict=True)))[:MAX_PANELS]
    k_max = int(table["k"].max())
    cycle = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    colour: dict[str, str] = {}  # the same agent (and condition) in the same colour on every panel
    fig, axes = plt.subplots(
        len(panels), 1, figsize=(7.5, 2.7 * len(panels)), squeeze=False, sharex=True
    )
    for ax, (env_id, preset) in zip(axes[:, 0], panels, strict=True):
        part = table[(table["env_id"] == env_id) & (table["preset"] == preset)]
        several = part["condition"].nunique() > 1
        series = []
        for (agent, condition), rows in part.groupby(["agent", "condition"], sort=True):
            rows = rows.sort_values("k")
            ks = rows["k"].to_numpy(dtype=float)
            label = f"{agent} ({condition})" if several else str(agent)
            ys = np.concatenate(
                [rows["estimate"].to_numpy(), rows["ci_low"].to_numpy(), rows["ci_high"].to_numpy()]
            )
            series.append((label, np.concatenate([ks, ks, ks]), ys))
            colour.setdefault(label, cycle[len(colour) % len(cycle)])
        for label, xs3, ys3 in merge_identical_series(series):
            n = len(xs3) // 3
            ks, est, low, high = xs3[:n], ys3[:n], ys3[n : 2 * n], ys3[2 * n :]
            c = colour[label.split(" = ")[0]]
            if n >= 2:
                (line,) = ax.plot(ks, est, marker="o", markersize=3, color=c, label=label)
                ax.fill_between(ks, low, high, color=c, alpha=0.15, linewidth=0)
            else:
                line = ax.errorbar(
                    ks, est, yerr=[est - low, high - est], fmt="o", color=c, capsize=3, label=label
                )[0]
            line.set_gid(f"{_panel(env_id, preset)}|{label}")
        ax.set_ylim(-0.03, 1.05)
        if k_max > 12:  # many repeats: k on a log axis, ticks at the computed k only
            ax.set_xscale("log")
            ax.set_xlim(0.8, k_max * 1.25)
            ticks = sorted({int(k) for k in table["k"]})
            shown = [k for k in ticks if k <= 10 and k in (1, 2, 5, 10)] + [
                k for k in ticks if k > 10
            ][:: max(1, len([k for k in ticks if k > 10]) // 6)]
            # k_max always labelled; no other label crowds it (log axis: a ratio apart)
            labelled = sorted({k for k in shown if k_max / k >= 1.4} | {k_max})
            ax.set_xticks(labelled)
            ax.set_xticklabels([str(k) for k in labelled])
            ax.minorticks_off()
        else:
            ax.set_xlim(0.7, k_max + 0.3)
            ax.set_xticks(range(1, k_max + 1))
        ax.set_ylabel("pass@k")
        ax.set_title(_panel(env_id, preset), fontsize=9, loc="left")
        ax.grid(alpha=0.3)
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7, title="agent",
                  title_fontsize=7)  # fmt: skip
    axes[-1, 0].set_xlabel("k (attempts drawn per task)")
    fig.suptitle("pass@k over repeats (unbiased estimator), band: 95% bootstrap CI over tasks",
                 fontsize=9)  # fmt: skip
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.32 / fig.get_figheight()))  # below the suptitle
    return fig


def _examples(records: Iterable[EpisodeRecord]) -> dict[tuple[str, ...], str]:
    """A viewer link per row key to the row's first unsolved episode (else its first), by seed
    and repeat (one pass over the records: a large run has thousands of rows)."""
    from exploreval.report._links import episode_link

    row_key = resolve(ROW_KEY)
    picked: dict[tuple[str, ...], tuple[tuple[bool, int, int], EpisodeRecord]] = {}
    for record in records:
        key = tuple(row_key(record))
        rank = (bool(record.success), record.seed, record.repeat)
        if key not in picked or rank < picked[key][0]:
            picked[key] = (rank, record)
    return {
        key: episode_link(record.run_id, record.episode_id)
        + (" (solved)" if record.success else " (unsolved)")
        for key, (_, record) in picked.items()
    }


def _examples_from(table: pd.DataFrame) -> dict[tuple[str, ...], str]:
    """The rows' example links, as ``pass_at_k_tables`` chose them."""
    from exploreval.report._links import episode_link

    out: dict[tuple[str, ...], str] = {}
    keys = ["agent", "family", "env_id", "preset", "condition"]
    for row in table.drop_duplicates(keys).itertuples(index=False):
        key = tuple(str(getattr(row, k)) for k in keys)
        out[key] = episode_link(str(row.example_run_id), str(row.example_episode_id)) + (
            " (solved)" if bool(row.example_solved) else " (unsolved)"
        )
    return out


def pass_at_k_report(
    records: Sequence[EpisodeRecord],
    rows: pd.DataFrame,
    out_dir: Path,
    tables: Mapping[str, pd.DataFrame] | None = None,
) -> list[ReportSection]:
    """The ``"*"`` report plugin: pass@k curves and table for runs with repeated tasks.

    ``tables``: the run's stored run tables; its ``pass_at_k`` (rows are per agent, env, preset
    and condition, so keeping the families drawn here gives exactly what the records give) is
    used instead of computing it again."""
    from exploreval.report._registry import ReportSection

    # which families are here: from the rows (one per ok record, in the records' order), so a
    # report of stored tables reads no record
    families = set(rows["family"]) if "family" in rows else {r.family for r in records}
    skipped = sorted(f for f in families if reports_own_pass_at_k(f))
    kept_families = {f for f in families if not reports_own_pass_at_k(f)}
    if not kept_families:
        return []
    if tables is not None:
        table = tables.get("pass_at_k")
        if table is not None:
            table = table[table["family"].isin(kept_families)]
    else:
        # a generator: records are read one at a time and only their outcomes kept
        kept = (r for r in records if r.status == "ok" and r.family in kept_families)
        table = resolve(TABLES)(kept).get("pass_at_k")
    if table is None or table.empty:
        return []
    if set(EXAMPLE_COLUMNS) <= set(table):
        examples = _examples_from(table)
    else:  # tables stored before they named their examples
        examples = _examples(r for r in records if r.status == "ok" and r.family in kept_families)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "pass_at_k.png"
    fig = figure_pass_at_k(table)
    import matplotlib.pyplot as plt

    from exploreval.report._plotting import save_figure

    save_figure(fig, path, dpi=110)
    plt.close(fig)
    k_columns = sorted({int(k) for k in table["k"]})
    summary, curve_rows = [], []
    keys = ["agent", "family", "env_id", "preset", "condition"]
    for key, part in table.groupby(keys, sort=True):
        part = part.sort_values("k")
        first, last = part.iloc[0], part.iloc[-1]
        n_tasks = int(first["n_tasks"])
        per_task = (
            str(first["attempts_min"])
            if first["attempts_min"] == first["attempts_max"]
            else f"{first['attempts_min']}-{first['attempts_max']}"
        )
        agent, family, env_id, preset, condition = (str(v) for v in key)
        summary.append(
            [
                agent,
                env_id,
                preset,
                f"`{condition}`",
                n_tasks,
                int(first["n_attempts"]),
                per_task,
                _ci(first["estimate"], first["ci_low"], first["ci_high"], n_tasks),
                f"@{int(last['k'])}: "
                + _ci(last["estimate"], last["ci_low"], last["ci_high"], n_tasks),
                examples.get((agent, family, env_id, preset, condition), "-"),
            ]  # fmt: skip
        )
        values = dict(zip(part["k"], part["estimate"], strict=True))
        curve_rows.append(
            [agent, env_id, preset, f"`{condition}`"] + [values.get(k) for k in k_columns]
        )
    text = [
        "Runs with repeated tasks (`--repeats n`): pass@k, the probability that at least one of "
        "k attempts solves the task, by the unbiased estimator 1 - C(n-c, k) / C(n, k) per task "
        "(n attempts, c solved; Chen et al. 2021), mean over tasks with a 95% percentile "
        "bootstrap CI over tasks. A task is env id + preset + seed + condition (the env "
        "options); agents and conditions are never pooled; k runs to the fewest attempts of any "
        "task of the row. `example` opens the row's first unsolved episode in the viewer.",
    ]
    if skipped:
        text.append(
            f"\n_Not repeated here: {', '.join(skipped)} (reported in the suite's own section)._"
        )
    if table.groupby(["env_id", "preset"]).ngroups > MAX_PANELS:
        text.append(f"\n_The figure shows the first {MAX_PANELS} env × preset panels._")
    text += [
        "",
        _md_table(
            [
                "agent",
                "env",
                "preset",
                "condition",
                "tasks",
                "attempts",
                "per task",
                "pass@1",
                "pass@k",
                "example",
            ],
            summary,
        ),  # fmt: skip
        "",
        _md_table(
            ["agent", "env", "preset", "condition"] + [f"k={k}" for k in k_columns],
            curve_rows,
        ),
    ]
    return [ReportSection(title="pass@k over repeats", markdown="\n".join(text), files=[path])]
