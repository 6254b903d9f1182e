"""TSR, EUS and exploration diagnostics, recomputed from stored records alone.

The quiz is re-derived from the record: the world (ground truth), the Stage-1 step facts (step
infos of the ``task`` phase) and the answers (the quiz steps' actions) give the questions, the
trajectory-conditioned references and the scores, so a change of the answerability rules re-scores
old runs without re-running agents. The answers scored while the episode ran are kept in the step
infos (``quiz``) for the viewer.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from exploreval.core import EpisodeRecord
from exploreval.suites.task2quiz._contract import NON_ANSWERABLE, QuizWorld, Stage1StepFacts

if TYPE_CHECKING:  # pandas only where the run tables are built: the viewer imports this
    import pandas as pd

QTYPES = ("location", "connectivity", "direction", "match", "property")


#: The counts TSR and EUS are pooled from, per group of episodes (pandas named aggregation).
POOLED_COUNTS: dict[str, tuple[str, str]] = {
    "episodes": ("episode_id", "size"),
    "tasks": ("tasks", "sum"),
    "tasks_won": ("tasks_won", "sum"),
    "questions": ("questions", "sum"),
    "correct": ("correct", "sum"),
}


def quiz_world(record: EpisodeRecord) -> QuizWorld | None:
    truth = record.ground_truth or {}
    data = truth.get("quiz_world")
    return QuizWorld.model_validate(data) if data else None


def stage1_from_record(record: EpisodeRecord) -> list[Stage1StepFacts]:
    """The Stage-1 step facts the env stored (one per acting step)."""
    return [facts for facts in stage1_by_step(record) if facts is not None]


def stage1_by_step(record: EpisodeRecord) -> list[Stage1StepFacts | None]:
    """Per entry of ``record.steps``: its Stage-1 facts, or None (quiz steps, steps without
    stored facts)."""
    out: list[Stage1StepFacts | None] = []
    for step in record.steps:
        info = step.info
        if step.phase != "task" or info.get("facts_added") is None:
            out.append(None)
            continue
        out.append(
            Stage1StepFacts(
                task_index=int(info.get("task_index", step.task or 0)),
                command=str(info.get("command") or step.action),
                feedback=str(info.get("feedback") or ""),
                room=info.get("room"),
                facts_added=tuple(info.get("facts_added") or ()),
                facts_removed=tuple(info.get("facts_removed") or ()),
            )
        )
    return out


def rescored_answers(record: EpisodeRecord) -> list[dict[str, Any]]:
    """Every question of the episode with its reference recomputed from the record and the
    agent's answer (``None`` when the episode ended before it was asked)."""
    from exploreval.suites.task2quiz._quiz_api import (
        check_max_questions,
        normalise,
        parse_answer,
        start_quiz,
    )

    world = quiz_world(record)
    if world is None:
        return []
    limit = check_max_questions(record.env_options.get("max_questions"))
    # the rule the episode was asked by; records from before the rule was named used per-element
    rule = str((record.ground_truth or {}).get("quiz_rule", "per-element"))
    session = start_quiz(world, stage1_from_record(record), world.seed, limit, rule)
    answers: dict[int, str] = {}
    for step in record.steps:
        if step.phase == "quiz":
            answers[int(step.info.get("question_index", step.task or 0))] = step.action
    rows = []
    for i, (question, reference) in enumerate(
        zip(session.questions, session.references, strict=True)
    ):
        raw = answers.get(i)
        answer, error = parse_answer(raw) if raw is not None else (None, "not asked")
        rows.append(
            {
                "question_id": question.id,
                "qtype": question.qtype,
                "format": question.format,
                "reference": reference,
                "answerable": reference != NON_ANSWERABLE,
                "asked": raw is not None,
                "answer": answer,
                "parse_error": error,
                "correct": answer is not None and normalise(answer) == normalise(reference),
            }
        )
    return rows


def _mean(values: Sequence[bool]) -> float:
    return float(np.mean(values)) if len(values) else float("nan")


def memory_label(record: EpisodeRecord) -> str:
    """The agent's memory (an LLM harness's history policy; ``-`` for scripted agents)."""
    harness = record.agent.config.get("harness") if record.agent.kind == "llm" else None
    if isinstance(harness, dict):
        return str(harness.get("history", "full"))
    return "-"


def task2quiz_episode_metrics(record: EpisodeRecord) -> dict[str, Any]:
    """TSR (share of the world's tasks won) and EUS (quiz accuracy against the trajectory-
    conditioned references), overall, on answerable and non-answerable questions, per type;
    plus the room-graph exploration diagnostics."""
    answers = [a for a in rescored_answers(record) if a["asked"]]
    tasks = record.tasks
    row: dict[str, Any] = {
        "tsr": _mean([t.success for t in tasks]),
        "tasks": len(tasks),
        "tasks_won": sum(1 for t in tasks if t.success),
        "quiz_questions": len(answers),
        "answerable_share": _mean([a["answerable"] for a in answers]),
        "eus": _mean([a["correct"] for a in answers]),
        "eus_answerable": _mean([a["correct"] for a in answers if a["answerable"]]),
        "eus_non_answerable": _mean([a["correct"] for a in answers if not a["answerable"]]),
        "quiz_parse_errors": sum(1 for a in answers if a["parse_error"]),
        "memory": memory_label(record),
    }
    for qtype in QTYPES:
        row[f"eus_{qtype}"] = _mean([a["correct"] for a in answers if a["qtype"] == qtype])
    row.update(exploration_diagnostics(record))
    return row


def task2quiz_run_metrics(records: Sequence[EpisodeRecord]) -> dict[str, pd.DataFrame]:
    """Table 2's cut (EUS per agent, memory, difficulty and question type, answerable and
    non-answerable apart) and TSR/EUS per agent, memory and difficulty (Figures 4 and 5)."""
    return task2quiz_tables_from_rows([quiz_rows(r) for r in records])


#: One episode as the Task2Quiz run tables keep it: its answers' rows and its own row.
QuizRows = tuple[list[dict[str, Any]], dict[str, Any]] | None


def quiz_rows(record: EpisodeRecord) -> QuizRows:
    """The map side of the Task2Quiz run metric (None for an errored episode)."""
    if record.status != "ok":
        return None
    answers = [a for a in rescored_answers(record) if a["asked"]]
    memory = memory_label(record)
    rows = [
        {
            "agent": record.agent.name,
            "memory": memory,
            "difficulty": record.preset,
            "qtype": a["qtype"],
            "answerable": a["answerable"],
            "correct": a["correct"],
        }
        for a in answers
    ]
    episode = {
        "agent": record.agent.name,
        "memory": memory,
        "difficulty": record.preset,
        "episode_id": record.episode_id,
        "tasks": len(record.tasks),
        "tasks_won": sum(1 for t in record.tasks if t.success),
        "questions": len(answers),
        "correct": sum(1 for a in answers if a["correct"]),
    }
    return rows, episode


def task2quiz_tables_from_rows(items: Sequence[QuizRows]) -> dict[str, pd.DataFrame]:
    """The reduce side of ``task2quiz_run_metrics``, from the episodes' ``quiz_rows``."""
    import pandas as pd

    rows = [row for item in items if item is not None for row in item[0]]
    episodes = [item[1] for item in items if item is not None]
    if not rows:
        return {}
    frame = pd.DataFrame(rows)
    keys = ["agent", "memory", "difficulty", "qtype"]
    by_type = (
        frame.groupby(keys)
        .agg(n=("correct", "size"), eus=("correct", "mean"), answerable=("answerable", "mean"))
        .reset_index()
    )
    split = (
        frame.groupby([*keys, "answerable"])["correct"].agg(["size", "mean"]).unstack("answerable")
    )
    for flag, label in ((True, "answerable"), (False, "non_answerable")):
        by_type[f"eus_{label}"] = [
            split.get(("mean", flag), pd.Series(dtype=float)).get(tuple(k), np.nan)
            for k in by_type[keys].itertuples(index=False)
        ]
        by_type[f"n_{label}"] = [
            int(np.nan_to_num(split.get(("size", flag), pd.Series(dtype=float)).get(tuple(k), 0)))
            for k in by_type[keys].itertuples(index=False)
        ]
    ep = pd.DataFrame(episodes)
    summary = ep.groupby(["agent", "memory", "difficulty"]).agg(**POOLED_COUNTS).reset_index()
    summary["tsr"] = summary["tasks_won"] / summary["tasks"].where(summary["tasks"] > 0)
    summary["eus"] = summary["correct"] / summary["questions"].where(summary["questions"] > 0)
    return {"task2quiz_eus": by_type, "task2quiz_tsr_eus": summary}


# -- exploration diagnostics on the room graph ------------------------------------------------


@dataclass
class _Graph:
    neighbours: dict[str, dict[str, str | None]]  # room -> other room -> door (or None)

    def path_length(self, start: str, goals: set[str], known: set[frozenset[str]]) -> int | None:
        """Moves from ``start`` to the nearest of ``goals`` over the known edges only."""
        if start in goals:
            return 0
        queue, dist = deque([start]), {start: 0}
        while queue:
            here = queue.popleft()
            for other in self.neighbours.get(here, {}):
                if other not in dist and frozenset((here, other)) in known:
                    dist[other] = dist[here] + 1
                    if other in goals:
                        return dist[other]
                    queue.append(other)
        return None


def _target_rooms(summary: dict[str, Any], kind: str | None, target: str | None) -> set[str]:
    if not kind or not target:
        return set()
    if kind == "go":
        return {target}
    if target in summary.get("items", {}):
        return {summary["items"][target]["room"]}
    if target in summary.get("containers", {}):
        return {summary["containers"][target]["room"]}
    if target in summary.get("doors", {}):
        return set(summary["doors"][target]["rooms"])
    return set()


@dataclass(frozen=True)
class MoveLabel:
    """One Stage-1 step as the exploration diagnostics see it (the viewer's annotations)."""

    room: str | None  # the player's room after the step
    moved: bool  # the step changed room
    new_room: bool  # a room the episode had not been in before
    revisit: bool  # a move into a room already visited in the same task
    #: "explore" / "exploit" (classified moves), "fetch" (target known but a key stands in the
    #: way: not classified), None (no move)
    kind: str | None
    error: bool | None  # explore/exploit error (None unless kind is explore or exploit)


_EMPTY_DIAGNOSTICS: dict[str, Any] = {
    "rooms_visited_share": float("nan"),
    "opened_share": float("nan"),
    "revisit_share": float("nan"),
    "explore_steps": 0,
    "explore_errors": 0,
    "exploit_steps": 0,
    "exploit_errors": 0,
    "explore_error_rate": float("nan"),
    "exploit_error_rate": float("nan"),
}


def _stage1_indexed(record: EpisodeRecord) -> list[tuple[int, Stage1StepFacts]]:
    """(index in ``record.steps``, facts) of every Stage-1 step the env stored facts for."""
    return [(i, facts) for i, facts in enumerate(stage1_by_step(record)) if facts is not None]


def exploration_diagnostics(record: EpisodeRecord) -> dict[str, Any]:
    """The grid suite's explore/exploit error idea on the room graph (docs/task2quiz.md).

    Per Stage-1 move (a step that changed room), with the agent's knowledge before it (rooms it
    stood in, passages it crossed, over all tasks so far): when the task's target room is known
    and a known route to it crosses no door that is still locked in this task, the move is an
    *exploit* step, an error unless it shortens the known route; otherwise it is an *explore*
    step, an error unless it crosses a passage never crossed before or shortens the known route
    to the nearest room with such a passage. Moves while the target is known but a key stands in
    the way (the target or the route is still locked) are key-fetching detours and are not
    classified. Also coverage: share of rooms visited and of
    closed doors/containers opened, and the share of moves into a room already visited in the
    same task (every task restarts in the start room, so earlier tasks do not count).
    Per step: :func:`exploration_steps`."""
    return _exploration(record)[1]


def exploration_steps(record: EpisodeRecord) -> list[MoveLabel | None]:
    """One :class:`MoveLabel` per entry of ``record.steps`` (None for steps that are not
    Stage-1 steps with stored facts, e.g. quiz steps); the episode totals of
    :func:`exploration_diagnostics` are sums over these labels."""
    return _exploration(record)[0]


def _exploration(record: EpisodeRecord) -> tuple[list[MoveLabel | None], dict[str, Any]]:
    labels: list[MoveLabel | None] = [None] * len(record.steps)
    world = quiz_world(record)
    if world is None or not world.summary:
        return labels, dict(_EMPTY_DIAGNOSTICS)
    summary = world.summary
    graph = _Graph({r: {} for r in summary["rooms"]})
    for c in summary["connections"]:
        graph.neighbours[c["src"]][c["dst"]] = c["door"]
        graph.neighbours[c["dst"]][c["src"]] = c["door"]
    lockables = {**summary["doors"], **summary["containers"]}
    start = summary["start_room"]
    visited: set[str] = {start}
    crossed: set[frozenset[str]] = set()
    opened: set[str] = set()
    task, room, locked = None, start, set()
    in_task: set[str] = set()
    for index, step in _stage1_indexed(record):
        if step.task_index != task:
            task, room, in_task = step.task_index, start, {start}
            locked = {x for x, v in lockables.items() if v["state"] == "locked"}
        spec = world.tasks[task] if task is not None and task < len(world.tasks) else None
        targets = _target_rooms(
            summary, spec.goal_kind if spec else None, spec.target if spec else None
        )
        new_room = step.room if step.room and step.room != room else None
        label = MoveLabel(step.room, False, False, False, None, None)
        if new_room is not None:
            revisit = new_room in in_task
            in_task.add(new_room)
            needs_key = bool(spec and spec.target in locked)
            kind, error = _classify(
                graph, room, new_room, targets & visited, needs_key, visited, crossed, locked
            )
            label = MoveLabel(new_room, True, new_room not in visited, revisit, kind, error)
            crossed.add(frozenset((room, new_room)))
            visited.add(new_room)
            room = new_room
        labels[index] = label
        for fact in step.facts_added:
            if fact.startswith("open("):
                opened.add(fact[5:-1])
        for fact in step.facts_removed:
            if fact.startswith("locked("):
                locked.discard(fact[7:-1])
    moves = [m for m in labels if m is not None and m.moved]
    counts = {
        f"{kind}_{what}": sum(
            1 for m in moves if m.kind == kind and (what == "steps" or bool(m.error))
        )
        for kind in ("explore", "exploit")
        for what in ("steps", "errors")
    }
    closed = [x for x, v in lockables.items() if v["state"] != "open"]
    out: dict[str, Any] = {
        **counts,
        "rooms_visited_share": len(visited) / len(summary["rooms"]),
        "opened_share": len(opened & set(closed)) / len(closed) if closed else float("nan"),
        "revisit_share": sum(m.revisit for m in moves) / len(moves) if moves else float("nan"),
    }
    for kind in ("explore", "exploit"):
        n = counts[f"{kind}_steps"]
        out[f"{kind}_error_rate"] = counts[f"{kind}_errors"] / n if n else float("nan")
    return labels, out


def _classify(
    graph: _Graph,
    room: str,
    new_room: str,
    known_targets: set[str],
    needs_key: bool,
    visited: set[str],
    crossed: set[frozenset[str]],
    locked: set[str],
) -> tuple[str, bool | None]:
    """(kind, error) of the move ``room`` -> ``new_room`` given the knowledge before it."""
    open_edges = {e for e in crossed if graph.neighbours[min(e)].get(max(e)) not in locked}
    before = graph.path_length(room, known_targets, open_edges) if known_targets else None
    if known_targets and (needs_key or before is None):
        return "fetch", None  # the target is known but a key stands in the way: not classified
    if before is not None:
        after = graph.path_length(
            new_room, known_targets, open_edges | {frozenset((room, new_room))}
        )
        return "exploit", after is None or after >= before
    if frozenset((room, new_room)) not in crossed:
        return "explore", False  # a passage never crossed: exploring
    frontier = {
        r for r in visited if any(frozenset((r, o)) not in crossed for o in graph.neighbours[r])
    }
    d_before = graph.path_length(room, frontier, crossed)
    d_after = graph.path_length(new_room, frontier, crossed)
    return "explore", d_before is None or d_after is None or d_after >= d_before
