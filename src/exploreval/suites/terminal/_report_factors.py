"""Terminal report: the curiosity paper's test-time factors, from the report's groups.

* **Figure 3 and §3.2** (scaffold × tools): per model and scaffold (the agent's harness), pass@1
  with the solution (the original benchmark's faint beside it) and interaction given discovery
  with bash only and with bash + ``str_replace_editor`` (env option ``tools``); the table gives
  §3.2's relative change of interaction given discovery, (editor − bash) / bash, and each
  setting's median first interaction step.
* **Figure 4** (reasoning budget): per model, pass@1, discovery@1 and interaction@1 at each
  ``reasoning_effort`` the run used (the condition's ``reasoning_effort=`` part), in the API's
  order.
* **Table 6's seed averages**: agents whose names differ only by a seed marker (``... (seed
  1)``, ``...-seed2``, ``.../seed3/...``) are seeds of one model; ``seed_averages`` gives the
  mean of their estimates, the paper's "(avg.)" rows.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from exploreval.metrics.passk import conditional_rate, first_step_summary
from exploreval.report import ReportSection
from exploreval.suites.terminal._groups import Group

TOOL_ORDER = ("bash", "bash+editor")
EFFORT_ORDER = ("none", "minimal", "low", "medium", "high", "xhigh", "max")
_SEED = re.compile(r"^(?P<base>.*?)[\s_-]*\(?seed[\s_-]*(?P<seed>\d+)\)?(?P<rest>(?:/.*)?)$", re.I)


def _parts(condition: str) -> list[str]:
    return condition.split(";")


def tools_of(condition: str) -> str:
    return next((p.split("=", 1)[1] for p in _parts(condition) if p.startswith("tools=")), "bash")


def effort_of(condition: str) -> str | None:
    return next((p.split("=", 1)[1] for p in _parts(condition)
                 if p.startswith("reasoning_effort=")), None)  # fmt: skip


def _without(condition: str, prefix: str) -> str:
    return ";".join(p for p in _parts(condition) if not p.startswith(prefix))


def model_and_scaffold(agent: str) -> tuple[str, str]:
    """``model/harness/history`` -> (model, harness); a scripted agent is its own model."""
    parts = agent.split("/")
    return (parts[0], parts[1]) if len(parts) >= 2 else (agent, "-")


def _rate(group: Group, metric: str) -> float:
    return float((group.counts[metric] / group.n).mean()) if group.n.size else float("nan")


def _igd(group: Group) -> tuple[float, Any]:
    a = group.attempts
    given = conditional_rate(a["discovered"].to_numpy(bool), a["interacted"].to_numpy(bool),
                             groups=list(a["task_id"]), n_boot=500, seed=0)  # fmt: skip
    first = first_step_summary(list(a["first_interaction_step"]), [int(n) for n in a["n_steps"]])
    return (float("nan") if given is None else given.estimate), first["median_step"]


def original_of(condition: str) -> str:
    """The no-injection condition an injected one is compared with: the same options, the
    injection part (first segment) replaced by ``original``."""
    rest = condition.split(";", 1)[1] if ";" in condition else ""
    return "original" + (f";{rest}" if rest else "")


def _original(groups: Sequence[Group], group: Group) -> Group | None:
    target = original_of(group.condition)
    return next((g for g in groups if g.agent == group.agent and g.condition == target), None)


def tools_frame(groups: Sequence[Group]) -> pd.DataFrame:
    """Figure 3's points: per model, scaffold, injected condition (tools left out) and tools."""
    rows = []
    for g in groups:
        if not g.injected:
            continue
        model, scaffold = model_and_scaffold(g.agent)
        base = _original(groups, g)
        igd, median_step = _igd(g)
        rows.append({"model": model, "scaffold": scaffold, "agent": g.agent,
                     "condition": _without(g.condition, "tools="), "tools": tools_of(g.condition),
                     "tasks": len(g.tasks), "pass": _rate(g, "pass"),
                     "pass_original": _rate(base, "pass") if base is not None else float("nan"),
                     "discovery": _rate(g, "discovery"), "igd": igd,
                     "median_interaction_step": median_step})  # fmt: skip
    frame = pd.DataFrame(rows)
    if frame.empty:
        return frame
    keys = ["model", "scaffold", "condition"]
    both = frame.groupby(keys)["tools"].transform("nunique") > 1
    return frame[both].reset_index(drop=True)


def relative_change_rows(frame: pd.DataFrame) -> list[list[Any]]:
    """§3.2: interaction given discovery with and without the editor, and its relative change."""
    rows = []
    for (model, scaffold, condition), part in frame.groupby(["model", "scaffold", "condition"]):
        by = part.set_index("tools")
        if not {"bash", "bash+editor"} <= set(by.index):
            continue
        igd = by["igd"].astype(float)
        bash, editor = float(igd["bash"]), float(igd["bash+editor"])
        change = (editor - bash) / bash if bash > 0 and np.isfinite(editor) else float("nan")
        rows.append([model, scaffold, f"`{condition}`", _pct(by.loc["bash", "pass"]),
                     _pct(by.loc["bash+editor", "pass"]), _num(bash), _num(editor),
                     "-" if not np.isfinite(change) else f"{100 * change:+.1f}%",
                     by.loc["bash", "median_interaction_step"] or "-",
                     by.loc["bash+editor", "median_interaction_step"] or "-"])  # fmt: skip
    return rows


RELATIVE_HEADER = ["model", "scaffold", "condition", "pass@1 bash", "pass@1 bash+editor",
                   "IGD bash", "IGD bash+editor", "relative change", "median interaction step "
                   "bash", "median interaction step bash+editor"]  # fmt: skip


def _pct(value: Any) -> str:
    return "-" if value is None or not np.isfinite(float(value)) else f"{100 * float(value):.1f}"


def _num(value: float) -> str:
    return "-" if not np.isfinite(value) else f"{value:.3f}"


def plot_tools(frame: pd.DataFrame, path: Path) -> Path:
    """Figure 3: pass@1 (solid; the original benchmark faint) and interaction given discovery
    against the tools, one line per model and scaffold."""
    from matplotlib.figure import Figure

    from exploreval.report import save_figure

    fig = Figure(figsize=(11, 4.2), layout="constrained")
    left, right = fig.subplots(1, 2)
    several = frame["condition"].nunique() > 1  # then each line names its condition
    for i, ((model, scaffold, condition), part) in enumerate(
        frame.groupby(["model", "scaffold", "condition"], sort=True)
    ):
        part = part.set_index("tools").reindex([t for t in TOOL_ORDER if t in set(part["tools"])])
        x = [TOOL_ORDER.index(t) for t in part.index]
        colour = f"C{i % 10}"
        label = f"{model} · {scaffold}" + (f" · {condition}" if several else "")
        left.plot(x, 100 * part["pass"], "-o", color=colour, label=label)
        left.plot(x, 100 * part["pass_original"], "--", color=colour, alpha=0.35)
        right.plot(x, 100 * part["igd"], "-o", color=colour, label=label)
    for ax, title in ((left, "pass@1 (%)  (faint: original benchmark)"),
                      (right, "interaction given discovery (%)")):  # fmt: skip
        ax.set_xticks(range(len(TOOL_ORDER)), ["bash only", "bash + str_replace_editor"])
        ax.set_xlim(-0.3, len(TOOL_ORDER) - 0.7)
        ax.set_ylim(0, 100)
        ax.set_ylabel(title)
        ax.set_xlabel("tools")
        ax.grid(alpha=0.3)
    right.legend(fontsize=8, loc="best")
    save_figure(fig, path)
    return path


def effort_frame(groups: Sequence[Group]) -> pd.DataFrame:
    """Figure 4's points: per model and condition (effort left out), each reasoning effort."""
    rows = []
    for g in groups:
        effort = effort_of(g.condition)
        if effort is None or not g.injected:
            continue
        base = _original(groups, g)
        rows.append({"agent": g.agent, "condition": _without(g.condition, "reasoning_effort="),
                     "effort": effort, "pass": _rate(g, "pass"),
                     "pass_original": _rate(base, "pass") if base is not None else float("nan"),
                     "discovery": _rate(g, "discovery"), "interaction": _rate(g, "interaction"),
                     "tasks": len(g.tasks)})  # fmt: skip
    frame = pd.DataFrame(rows)
    if frame.empty:
        return frame
    frame = frame[frame.groupby(["agent", "condition"])["effort"].transform("nunique") > 1]
    order = {e: i for i, e in enumerate(EFFORT_ORDER)}
    frame = frame.assign(_o=[order.get(e, len(order)) for e in frame["effort"]])
    return frame.sort_values(["agent", "condition", "_o"]).drop(columns="_o").reset_index(drop=True)


def plot_effort(frame: pd.DataFrame, path: Path) -> Path:
    """Figure 4: pass@1, discovery@1 and interaction@1 against the reasoning budget."""
    from matplotlib.figure import Figure

    from exploreval.report import save_figure

    panels = list(dict.fromkeys(zip(frame["agent"], frame["condition"], strict=True)))
    fig = Figure(figsize=(5.5 * len(panels), 4.0), layout="constrained")
    axes = fig.subplots(1, len(panels), squeeze=False)[0]
    for ax, (agent, condition) in zip(axes, panels, strict=True):
        part = frame[(frame["agent"] == agent) & (frame["condition"] == condition)]
        x = np.arange(len(part))
        for column, label, style in (("pass", "pass@1", "-o"), ("discovery", "discovery@1", "-s"),
                                     ("interaction", "interaction@1", "-^")):  # fmt: skip
            ax.plot(x, 100 * part[column], style, label=label)
        ax.plot(x, 100 * part["pass_original"], "--", color="0.6", label="pass@1 original")
        ax.set_xticks(x, list(part["effort"]))
        ax.set_xlabel("reasoning effort")
        ax.set_ylabel("%")
        ax.set_ylim(0, 100)
        ax.set_title(f"{agent} · {condition}", fontsize=9)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    save_figure(fig, path)
    return path


def seed_base(agent: str) -> str | None:
    """The model an agent is a seed of (``T-Bench SFT (seed 2)`` -> ``T-Bench SFT``), or None."""
    match = _SEED.match(agent)
    return None if match is None else (match.group("base") + match.group("rest")).strip()


def seed_averages(rows: pd.DataFrame, value_columns: Sequence[str]) -> pd.DataFrame:
    """Table 6's "(avg.)" rows: for agents that are seeds of one model (two or more), under the
    same condition, the mean of each column over the seeds."""
    if rows.empty:
        return rows
    bases = rows["agent"].map(seed_base)
    kept = rows[bases.notna()].assign(base=bases[bases.notna()])
    out = []
    for (base, condition), part in kept.groupby(["base", "condition"], sort=True):
        if part["agent"].nunique() < 2:
            continue
        row = {"agent": f"{base} (avg. of {part['agent'].nunique()} seeds)", "condition": condition}
        for column in value_columns:
            row[column] = float(pd.to_numeric(part[column], errors="coerce").mean())
        out.append(row)
    return pd.DataFrame(out)


def factor_sections(
    groups: Sequence[Group],
    curves: pd.DataFrame,
    out_dir: Path,
    k: int,
    *,
    at: Callable[[pd.DataFrame, str, str, str, int], pd.Series | None],
    table: Callable[[Sequence[str], Sequence[Sequence[Any]]], str],
) -> list[ReportSection]:
    """The sections this run's conditions allow (none when it varied no factor). ``at`` and
    ``table`` are the report's lookup of an @k estimate and its markdown table."""
    _at, _md_table = at, table
    sections: list[ReportSection] = []
    tools = tools_frame(groups)
    if not tools.empty:
        path = plot_tools(tools, out_dir / "terminal_fig3_tools.png")
        sections.append(ReportSection(
            title="Terminal: scaffold and tools (Figure 3, §3.2)",
            markdown="Per model and scaffold (the agent's harness), with bash only and with bash "
            "+ `str_replace_editor` (env option `tools`): pass@1 with the solution (the original "
            "benchmark's as a faint line) and interaction given discovery (IGD), with §3.2's "
            "relative change of IGD, (editor − bash) / bash, and each setting's median first "
            "interaction step (1-based).\n\n" + _md_table(RELATIVE_HEADER, relative_change_rows(tools)),
            files=[path],
        ))  # fmt: skip
    effort = effort_frame(groups)
    if not effort.empty:
        path = plot_effort(effort, out_dir / "terminal_fig4_reasoning.png")
        rows = [[r.agent, f"`{r.condition}`", r.effort, r.tasks, _pct(r.pass_original),
                 _pct(r.pass_), _pct(r.discovery), _pct(r.interaction)]
                for r in effort.rename(columns={"pass": "pass_"}).itertuples()]  # fmt: skip
        sections.append(ReportSection(
            title="Terminal: reasoning budget (Figure 4)",
            markdown="pass@1, discovery@1 and interaction@1 (%) of each agent at every "
            "`reasoning_effort` it ran with (`--reasoning-effort`), the original benchmark's "
            "pass@1 beside them.\n\n" + _md_table(["agent", "condition", "reasoning effort",
                "tasks", "pass@1 original", "pass@1", "discovery@1", "interaction@1"], rows),
            files=[path],
        ))  # fmt: skip
    points = []
    for g in groups:
        row: dict[str, Any] = {"agent": g.agent, "condition": g.condition}
        for metric in g.metrics:
            for kk in sorted({1, k}):
                hit = _at(curves, g.agent, g.condition, metric, kk)
                row[f"{metric}@{kk}"] = float(hit["estimate"]) if hit is not None else np.nan
        points.append(row)
    columns = [f"{m}@{kk}" for m in ("pass", "discovery", "interaction") for kk in sorted({1, k})]
    frame = pd.DataFrame(points)
    for column in columns:
        if column not in frame:
            frame[column] = np.nan
    averages = seed_averages(frame, columns)
    if not averages.empty:
        rows = [[r["agent"], f"`{r['condition']}`", *[_pct(r[c]) for c in columns]]
                for r in averages.to_dict("records")]  # fmt: skip
        sections.append(ReportSection(
            title="Terminal: averages over seeds (Table 6)",
            markdown="Agents whose names differ only by a seed marker (`(seed 1)`, `-seed2`...) "
            "are seeds of one model: the mean of their estimates (%), the paper's \"(avg.)\" "
            "rows; each seed's own row is in Table 10.\n\n"
            + _md_table(["agent", "condition", *columns], rows),
        ))  # fmt: skip
    return sections
