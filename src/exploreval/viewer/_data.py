"""What the viewer shows of one episode: every step with its prompt, annotations and picture.

Built on demand from one record (the index gives its byte offset), so the server never loads a
whole run. Prompts come from the run's blob store; a prompt is a list of ``[role, message]``
pairs where ``message`` indexes ``messages`` (each distinct text once), so a full-history
episode costs its distinct messages, not steps x history. Step views and annotations are the
suites' registrations (``exploreval.report``), rendered here on the server: the static bundle
then holds plain markup and the page needs no Python.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from exploreval.core import EpisodeRecord
from exploreval.report import step_annotations, step_view
from exploreval.store import BLOBS

#: Text longer than this is cut in the payload (the page says where and how much).
MAX_TEXT = 200_000


def _cut(text: str | None) -> str | None:
    if text is None or len(text) <= MAX_TEXT:
        return text
    return text[:MAX_TEXT] + f"\n… [{len(text) - MAX_TEXT} more characters not shown]"


class PromptReader:
    """Read-only access to a run's prompt blobs (the viewer never writes to a run)."""

    def __init__(self, run_dir: Path) -> None:
        self.path = run_dir / BLOBS
        self._conn: sqlite3.Connection | None = None
        self.error: str | None = None
        if not self.path.exists():
            self.error = f"{self.path} does not exist (prompts were not stored)"

    def _get(self, sha256: str) -> str:
        if self._conn is None:
            self._conn = sqlite3.connect(
                f"file:{self.path}?mode=ro", uri=True, check_same_thread=False
            )
        row = self._conn.execute("SELECT text FROM blobs WHERE sha256 = ?", (sha256,)).fetchone()
        if row is None:
            raise KeyError(f"blob {sha256[:12]}… not found in {self.path}")
        return str(row[0])

    def prompt(self, sha256: str, messages: dict[str, int], texts: list[str]) -> list[list[Any]]:
        """``[[role, index into texts], ...]``, adding each new message text to ``texts``."""
        listing = json.loads(self._get(sha256))
        out: list[list[Any]] = []
        for role, digest in listing:
            if digest not in messages:
                messages[digest] = len(texts)
                texts.append(_cut(self._get(digest)) or "")
            out.append([role, messages[digest]])
        return out

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


def _view(record: EpisodeRecord, index: int) -> dict[str, Any] | None:
    try:
        view = step_view(record, index)
    except Exception as exc:  # a suite's drawing bug must not hide the episode
        return {"kind": "error", "content": f"{type(exc).__name__}: {exc}", "caption": ""}
    if view is None:
        return None
    return {"kind": view.kind, "content": view.content, "caption": view.caption}


def judgements_by_episode(run_dir: Path) -> dict[str, list[dict[str, Any]]]:
    """What a model judged about each episode (``tables/judged/*.parquet``, written by
    ``score --judge-model``), by episode id; a torn or foreign file is skipped. Pandas is
    imported only when there is such a file (0.35 s of an episode page's first open, else)."""
    folder = run_dir / "tables" / "judged"
    found: dict[str, list[dict[str, Any]]] = {}
    for path in sorted(folder.glob("*.parquet")) if folder.is_dir() else []:
        import pandas as pd

        try:
            table = pd.read_parquet(path)
        except Exception:
            continue
        if "episode_id" not in table:
            continue
        for row in table.to_dict("records"):
            clean = {str(k): (None if _missing(v) else v) for k, v in row.items()}
            found.setdefault(str(row["episode_id"]), []).append({"table": path.stem, **clean})
    return found


def _missing(value: Any) -> bool:
    try:
        return bool(value != value)  # NaN
    except Exception:
        return False


def episode_payload(
    record: EpisodeRecord,
    *,
    row: int,
    run_id: str,
    prompts: PromptReader | None,
    judgements: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Everything the episode page shows, as JSON-ready data."""
    annotations = step_annotations(record)
    messages: dict[str, int] = {}
    texts: list[str] = []
    steps: list[dict[str, Any]] = []
    for position, step in enumerate(record.steps):
        prompt: list[list[Any]] | None = None
        prompt_error: str | None = None
        if step.prompt is not None:
            if prompts is None or prompts.error:
                prompt_error = prompts.error if prompts is not None else "no blob store"
            else:
                try:
                    prompt = prompts.prompt(step.prompt.sha256, messages, texts)
                except (KeyError, ValueError, sqlite3.Error) as exc:
                    prompt_error = f"prompt unavailable: {exc}"
        steps.append(
            {
                "t": step.t,
                "phase": step.phase,
                "task": step.task,
                "observation": _cut(step.observation),
                "action": step.action,
                "valid": step.valid,
                "invalid_reason": step.invalid_reason,
                "raw_output": _cut(step.raw_output),
                "reasoning": _cut(step.reasoning),
                "prompt": prompt,
                "prompt_error": prompt_error,
                "reward": step.reward,
                "terminated": step.terminated,
                "truncated": step.truncated,
                "usage": step.usage.model_dump() if step.usage is not None else None,
                "latency_s": round(step.latency_s, 4),
                "retries": step.retries,
                "cached": step.cached,
                "info": step.info,
                "agent_info": step.agent_info,
                "annotations": annotations.steps[position],
                "view": _view(record, position),
            }
        )
    return {
        "row": row,
        "run_id": run_id,
        "episode_id": record.episode_id,
        "env_id": record.env_id,
        "family": record.family,
        "preset": record.preset,
        "seed": record.seed,
        "repeat": record.repeat,
        "agent": record.agent.model_dump(),
        "status": record.status,
        "error": record.error,
        "success": record.success,
        "total_reward": record.total_reward,
        "terminated": record.terminated,
        "truncated": record.truncated,
        "max_steps": record.max_steps,
        "usage": record.usage.model_dump(),
        "tasks": [t.model_dump() for t in record.tasks],
        "initial_observation": _cut(record.initial_observation),
        "final_observation": _cut(record.final_observation),
        "initial_view": _view(record, -1),
        "annotation_errors": annotations.errors,
        "messages": texts,
        "steps": steps,
        "judgements": judgements or [],
    }
