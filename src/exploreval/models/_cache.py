"""SQLite response cache: a re-run never pays twice for a completed call.

Keys hash everything that determines the answer: model, endpoint identity, messages,
sampling parameters, and the (scope, repeat, sample) triple that separates intended
re-samples of the same prompt. Values are ``Completion`` JSON. WAL mode plus a busy
timeout make concurrent writers (asyncio tasks, threads, worker processes) safe.

Each row also names the episode whose call it was (``episode``, from :data:`CALL_EPISODE`,
which the runner sets around each episode). A cluster worker has no access to the run's file:
it plays from a :class:`TransitCache` that the driver seeds with the rows of the episode it
sends, and hands back the rows it made, which the driver writes here.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable, Sequence
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from exploreval.core import Message, connect_sqlite, stable_hash
from exploreval.models._base import Completion, SamplingParams

#: Bump when the key recipe or the stored value changes incompatibly.
CACHE_FORMAT = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    created REAL NOT NULL DEFAULT (strftime('%s', 'now')),
    completion TEXT NOT NULL
);
"""

#: The episode whose model calls are being made (set by the runner around each episode, per
#: asyncio task): the cache files each row under it, so a resumed episode's rows can be found.
CALL_EPISODE: ContextVar[str | None] = ContextVar("exploreval_call_episode", default=None)

#: One cache row as it travels between a cluster worker and the driver:
#: ``(key, model, completion json, episode id or None)``.
CacheRow = tuple[str, str, str, "str | None"]


def _stored_json(completion: Completion) -> str:
    return completion.model_copy(
        update={"cached": False, "retries": 0, "retry_log": []}
    ).model_dump_json()


def _parse(text: str) -> Completion | None:
    try:
        return Completion.model_validate_json(text)
    except ValueError:
        return None


def cache_key(
    *,
    model: str,
    endpoint: str,
    messages: Sequence[Message],
    params: SamplingParams,
    scope: str = "",
    repeat: int = 0,
    sample: int = 0,
) -> str:
    """The key of one request. ``endpoint`` names the server, never a credential."""
    material: dict[str, Any] = {
        "format": CACHE_FORMAT,
        "model": model,
        "endpoint": endpoint,
        # a native call or its answer adds its fields; a text message's key is what it was
        "messages": [
            [m.role, m.content]
            if m.tool_calls is None and m.tool_call_id is None
            else [m.role, m.content, m.tool_calls, m.tool_call_id]
            for m in messages
        ],
        "params": params.model_dump(exclude_none=True),
        "scope": scope,
        "repeat": repeat,
        "sample": sample,
    }
    return stable_hash(material, length=64)


class ResponseCache:
    """``key -> Completion`` in one SQLite file (usually ``RUN_DIR/cache.sqlite``)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._conn = connect_sqlite(self.path, _SCHEMA)
        self._add_episode_column()
        self.hits = 0
        self.misses = 0
        self.bad_rows = 0

    def _add_episode_column(self) -> None:
        """Caches written before rows named their episode get the column (empty for old rows)."""
        columns = {row[1] for row in self._conn.execute("PRAGMA table_info(responses)")}
        if "episode" not in columns:
            try:
                self._conn.execute("ALTER TABLE responses ADD COLUMN episode TEXT")
            except sqlite3.OperationalError as exc:  # another process added it just now
                if "duplicate column" not in str(exc):
                    raise
        self._conn.execute("CREATE INDEX IF NOT EXISTS responses_episode ON responses (episode)")
        self._conn.commit()

    def get(self, key: str) -> Completion | None:
        with self._lock:
            row = self._conn.execute(
                "SELECT completion FROM responses WHERE key = ?", (key,)
            ).fetchone()
        if row is None:
            self.misses += 1
            return None
        completion = _parse(row[0])
        if completion is None:  # a bad row is a miss (the call is made again, the row rewritten)
            self.misses += 1
            self.bad_rows += 1
            return None
        self.hits += 1
        return completion

    def put(self, key: str, model: str, completion: Completion) -> None:
        self.put_rows([(key, model, _stored_json(completion), CALL_EPISODE.get())])

    def put_rows(self, rows: Iterable[CacheRow]) -> None:
        """Write rows as a worker made them (one commit)."""
        with self._lock:
            self._conn.executemany(
                "INSERT OR REPLACE INTO responses (key, model, completion, episode) "
                "VALUES (?, ?, ?, ?)",
                list(rows),
            )
            self._conn.commit()

    def episodes(self) -> set[str]:
        """The episodes that have rows (one index scan)."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT DISTINCT episode FROM responses WHERE episode IS NOT NULL"
            ).fetchall()
        return {str(r[0]) for r in rows}

    def rows_for(self, episode_id: str) -> list[CacheRow]:
        """The rows an episode's calls made, to seed the worker that plays it again."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT key, model, completion, episode FROM responses WHERE episode = ?",
                (episode_id,),
            ).fetchall()
        return [(str(k), str(m), str(c), e) for k, m, c, e in rows]

    def __len__(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._conn.close()


class TransitCache:
    """The response cache of a worker that cannot reach the run's file (a cluster node).

    It answers from the rows the driver sent with the episodes it plays (:meth:`seed`) and
    from the calls it made itself, and keeps each new row until the driver takes it
    (:meth:`take`), so the driver stays the only writer of the run's cache.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        #: key -> (completion json, episode that made or was sent the row)
        self._known: dict[str, tuple[str, str | None]] = {}
        self._new: list[CacheRow] = []
        self.hits = 0
        self.misses = 0
        self.bad_rows = 0

    def seed(self, rows: Iterable[CacheRow]) -> None:
        with self._lock:
            for key, _model, completion, episode in rows:
                self._known[key] = (completion, episode)

    def get(self, key: str) -> Completion | None:
        with self._lock:
            text = self._known.get(key, (None, None))[0]
        completion = _parse(text) if text is not None else None
        if completion is None:
            self.misses += 1
            self.bad_rows += text is not None
            return None
        self.hits += 1
        return completion

    def put(self, key: str, model: str, completion: Completion) -> None:
        text = _stored_json(completion)
        episode = CALL_EPISODE.get()
        with self._lock:
            self._known[key] = (text, episode)
            self._new.append((key, model, text, episode))

    def take(self, episode_id: str | None = None) -> list[CacheRow]:
        """The new rows not yet taken: one episode's, or (``None``) all of them."""
        with self._lock:
            if episode_id is None:
                taken, self._new = self._new, []
            else:
                taken = [row for row in self._new if row[3] == episode_id]
                self._new = [row for row in self._new if row[3] != episode_id]
        return taken

    def forget(self, episode_id: str) -> None:
        """Drop the rows of an episode that has ended and been taken, so a worker that plays
        thousands of episodes stays small (a later episode that would have hit one of them
        pays that call again; only identical prompts of identical scopes share rows)."""
        with self._lock:
            self._known = {k: v for k, v in self._known.items() if v[1] != episode_id}

    def __len__(self) -> int:
        with self._lock:
            return len(self._known)

    def close(self) -> None:
        pass


__all__ = ["CACHE_FORMAT", "CALL_EPISODE", "CacheRow", "ResponseCache", "TransitCache", "cache_key"]
