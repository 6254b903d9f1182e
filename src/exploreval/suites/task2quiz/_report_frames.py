"""Task2Quiz's report frames: per-episode and per-question tables, and the rates and intervals
every section of the report (:mod:`._report`) is built from.

TSR and EUS by difficulty and overall, EUS by question type, and the pooled bootstrap over worlds
(Table 2's intervals) live here once, so a figure and its table cannot compute them differently.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from exploreval.core import EpisodeRecord
from exploreval.report import (
    wilson_interval,
)
from exploreval.suites.task2quiz._quiz_metrics import (
    POOLED_COUNTS,
    QTYPES,
    exploration_diagnostics,
    memory_label,
    quiz_world,
    rescored_answers,
)

DIFFICULTIES = ("easy", "medium", "hard")


SHORT = {
    "location": "Loc.",
    "connectivity": "Conn.",
    "direction": "Dir.",
    "match": "Match.",
    "property": "Prop.",
}


MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "h", "<", ">")


CI_NOTE = (
    "95% Wilson intervals: TSR pooled over tasks (tasks won / tasks), EUS pooled over questions "
    "(correct / questions). Tasks and questions of one world are correlated, so with few worlds "
    "the intervals understate the spread between worlds."
)


@dataclass
class ReportEpisode:
    record: EpisodeRecord
    agent: str  # display label: name, plus [memory] when there is one
    name: str  # the model (LLM agents) or the scripted agent's name: Figure 5's colour
    memory: str
    difficulty: str
    answers: list[dict[str, Any]]


def agent_label(name: str, memory: str) -> str:
    """The agent's name, plus ``[memory]`` unless the name already says it (an LLM agent's
    runner name is ``model/harness/history``)."""
    if memory == "-" or name.endswith(f"/{memory}") or f"/{memory}/" in name:
        return name
    return f"{name} [{memory}]"


def model_label(record: EpisodeRecord) -> str:
    """What Figure 5 colours by: an LLM agent's model, else the scripted agent's name."""
    if record.agent.kind == "llm":
        identity = record.agent.config.get("identity") or {}
        client = record.agent.config.get("client") or {}
        model = identity.get("model") or client.get("model")
        if model:
            return str(model)
    return record.agent.name


def report_episodes(records: Sequence[EpisodeRecord]) -> list[ReportEpisode]:
    out = []
    for record in records:
        if record.status != "ok" or quiz_world(record) is None:
            continue
        memory = memory_label(record)
        out.append(
            ReportEpisode(
                record=record,
                agent=agent_label(record.agent.name, memory),
                name=model_label(record),
                memory=memory,
                difficulty=record.preset or "default",
                answers=[a for a in rescored_answers(record) if a["asked"]],
            )
        )
    return out


def difficulty_order(values: Sequence[str]) -> list[str]:
    present = set(values)
    return [d for d in DIFFICULTIES if d in present] + sorted(present - set(DIFFICULTIES))


def ratio(k: float, n: float) -> float:
    return k / n if n else float("nan")


def _ci(k: float, n: float) -> tuple[float, float]:
    return wilson_interval(k, int(n))


def fmt_rate(value: float, digits: int = 3) -> str:
    return (
        "-"
        if value is None or (isinstance(value, float) and math.isnan(value))
        else f"{value:.{digits}f}"
    )


def ci_text(k: float, n: float) -> str:
    if not n:
        return "-"
    low, high = _ci(k, n)
    return f"{fmt_rate(k / n)} [{fmt_rate(low)}, {fmt_rate(high)}]"


def md_table(frame: pd.DataFrame) -> str:
    if frame.empty:
        return "_(no rows)_"
    cols = [str(c) for c in frame.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for row in frame.itertuples(index=False):
        cells = []
        for v in row:
            if isinstance(v, float | np.floating):
                cells.append(fmt_rate(float(v)))
            else:
                cells.append(str(v).replace("|", "\\|").replace("\n", " "))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def question_frame(episodes: Sequence[ReportEpisode]) -> pd.DataFrame:
    """One row per asked question: agent, memory, difficulty, qtype, answerable, correct."""
    rows = [
        {
            "agent": e.agent,
            "name": e.name,
            "memory": e.memory,
            "difficulty": e.difficulty,
            "episode_id": e.record.episode_id,
            "qtype": a["qtype"],
            "answerable": bool(a["answerable"]),
            "correct": bool(a["correct"]),
        }
        for e in episodes
        for a in e.answers
    ]
    columns = ["agent", "name", "memory", "difficulty", "episode_id", "qtype", "answerable"]
    return pd.DataFrame(rows, columns=[*columns, "correct"])


def episode_frame(episodes: Sequence[ReportEpisode]) -> pd.DataFrame:
    """One row per episode: tasks, tasks won, questions, correct answers and diagnostics."""
    rows = []
    for e in episodes:
        rows.append(
            {
                "agent": e.agent,
                "name": e.name,
                "memory": e.memory,
                "difficulty": e.difficulty,
                "seed": e.record.seed,
                "run_id": e.record.run_id,
                "episode_id": e.record.episode_id,
                "tasks": len(e.record.tasks),
                "tasks_won": sum(1 for t in e.record.tasks if t.success),
                "questions": len(e.answers),
                "correct": sum(1 for a in e.answers if a["correct"]),
                **exploration_diagnostics(e.record),
            }
        )
    return pd.DataFrame(rows)


def tsr_eus_by_difficulty(episodes: pd.DataFrame) -> pd.DataFrame:
    """Figure 4's points: per agent and difficulty, pooled TSR and EUS with Wilson bounds."""
    grouped = (
        episodes.groupby(["agent", "difficulty"], sort=False).agg(**POOLED_COUNTS).reset_index()
    )
    return _with_rates(grouped)


def tsr_eus_overall(episodes: pd.DataFrame) -> pd.DataFrame:
    """Figure 5's points: per agent, pooled over every difficulty it played."""
    grouped = (
        episodes.groupby("agent", sort=True)
        .agg(
            name=("name", "first"),
            memory=("memory", "first"),
            difficulties=("difficulty", lambda s: "+".join(difficulty_order(list(s)))),
            **POOLED_COUNTS,
        )
        .reset_index()
    )
    return _with_rates(grouped)


def _with_rates(frame: pd.DataFrame) -> pd.DataFrame:
    frame = frame.copy()
    for rate, k, n in (("tsr", "tasks_won", "tasks"), ("eus", "correct", "questions")):
        frame[rate] = [ratio(a, b) for a, b in zip(frame[k], frame[n], strict=True)]
        bounds = [_ci(a, b) for a, b in zip(frame[k], frame[n], strict=True)]
        frame[f"{rate}_low"] = [b[0] for b in bounds]
        frame[f"{rate}_high"] = [b[1] for b in bounds]
    return frame


def eus_by_type(questions: pd.DataFrame, answerable: bool | None = None) -> pd.DataFrame:
    """Per agent and question type (pooled over difficulties): n, correct, EUS, Wilson bounds,
    answerable share; ``answerable`` restricts to (non-)answerable questions."""
    part = questions if answerable is None else questions[questions["answerable"] == answerable]
    rows = []
    for agent in sorted(questions["agent"].unique()):
        mine = part[part["agent"] == agent]
        everything = questions[questions["agent"] == agent]
        for qtype in QTYPES:
            sel = mine[mine["qtype"] == qtype]
            n, k = len(sel), int(sel["correct"].sum())
            low, high = _ci(k, n)
            asked = everything[everything["qtype"] == qtype]
            rows.append(
                {
                    "agent": agent,
                    "qtype": qtype,
                    "n": n,
                    "correct": k,
                    "eus": ratio(k, n),
                    "low": low,
                    "high": high,
                    "answerable_n": int(asked["answerable"].sum()),
                    "asked_n": len(asked),
                }
            )
    return pd.DataFrame(rows)


def _cell(k: int, n: int) -> str:
    return f"{100 * k / n:.1f} ({n})" if n else "- (0)"


#: Resamples of the worlds (episodes) behind Table 2's intervals; seeded, so a report is stable.
BOOTSTRAP_REPS = 2000


def pooled_bootstrap(
    k: Sequence[int], n: Sequence[int], reps: int = BOOTSTRAP_REPS, seed: int = 0
) -> tuple[float, float] | None:
    """95% percentile interval (in percent) of the pooled rate sum(k)/sum(n) when the episodes
    (worlds) are resampled with replacement: the between-world variance the pooled Wilson
    interval leaves out. None with fewer than two episodes that have any item."""
    counts = np.asarray(k, dtype=float)
    sizes = np.asarray(n, dtype=float)
    keep = sizes > 0
    counts, sizes = counts[keep], sizes[keep]
    if len(sizes) < 2:
        return None
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(sizes), size=(reps, len(sizes)))
    rates = 100 * counts[picks].sum(axis=1) / sizes[picks].sum(axis=1)
    low, high = np.percentile(rates, [2.5, 97.5])
    return float(low), float(high)


def boot_cell(k: Sequence[int], n: Sequence[int]) -> str:
    """``rate [low, high] (n)``: the pooled rate, its bootstrap-over-worlds interval, the count."""
    total = int(sum(n))
    if not total:
        return "- (0)"
    bounds = pooled_bootstrap(k, n)
    interval = f" [{bounds[0]:.1f}, {bounds[1]:.1f}]" if bounds is not None else ""
    return f"{100 * sum(k) / total:.1f}{interval} ({total})"
