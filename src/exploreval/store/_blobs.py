"""Content-addressed storage for prompt text, so repeated prompts are stored once.

A step's prompt is referenced by hash as soon as it is sent (``PromptBatch.ref``, no
I/O); the texts of a whole episode are written in one transaction when it finishes
(``PromptBatch.flush``), before the episode's line is appended. So a stored episode never
points at a missing blob, and a run pays one commit per episode instead of one per step.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path

from exploreval.core import Message, PromptRef, connect_sqlite


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class BlobStore:
    """``sha256 -> text`` in SQLite (WAL), safe for several writers (threads or processes)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        # FULL: a blob must be on disk before the episode line that references it.
        self._conn = connect_sqlite(
            self.path,
            "CREATE TABLE IF NOT EXISTS blobs (sha256 TEXT PRIMARY KEY, text TEXT NOT NULL);",
            synchronous="FULL",
        )
        self._hash_of: dict[str, str] = {}  # text -> sha256 of texts already stored

    def digest(self, text: str) -> tuple[str, bool]:
        """The hash of ``text`` and whether the store already holds it (no I/O)."""
        known = self._hash_of.get(text)
        return (known, True) if known is not None else (content_hash(text), False)

    def put_many(self, texts: Iterable[str]) -> list[str]:
        hashes: list[str] = []
        new: dict[str, str] = {}
        for text in texts:
            digest, stored = self.digest(text)
            if not stored:
                new[digest] = text
            hashes.append(digest)
        self._write(new)
        return hashes

    def _write(self, new: dict[str, str]) -> None:
        if not new:
            return
        with self._lock:
            self._conn.executemany("INSERT OR IGNORE INTO blobs VALUES (?, ?)", new.items())
            self._conn.commit()
        for digest, text in new.items():
            self._hash_of[text] = digest

    def put_prompt(self, messages: Sequence[Message]) -> PromptRef:
        """Store a conversation now; returns one reference for the whole message list."""
        batch = self.batch()
        ref = batch.ref(messages)
        batch.flush()
        return ref

    def batch(self) -> PromptBatch:
        return PromptBatch(self)

    def get(self, sha256: str) -> str:
        with self._lock:
            row = self._conn.execute(
                "SELECT text FROM blobs WHERE sha256 = ?", (sha256,)
            ).fetchone()
        if row is None:
            raise KeyError(f"blob {sha256} not found in {self.path}")
        return str(row[0])

    def get_prompt(self, ref: PromptRef) -> list[Message]:
        """The messages a step sent, rebuilt from the store."""
        listing = json.loads(self.get(ref.sha256))
        return [Message(role=role, content=self.get(h)) for role, h in listing]

    def close(self) -> None:
        with self._lock:
            self._conn.close()


class BlobCollector:
    """Where an episode's prompt texts go on a worker that cannot reach the run's blob store
    (a cluster node): every text the episode references is kept, none is assumed stored, and
    they travel to the driver with the episode's record (the driver's ``put_many`` dedups)."""

    def __init__(self) -> None:
        self.texts: dict[str, str] = {}

    def digest(self, text: str) -> tuple[str, bool]:
        return content_hash(text), False

    def _write(self, new: dict[str, str]) -> None:
        self.texts.update(new)

    def batch(self) -> PromptBatch:
        return PromptBatch(self)


class PromptBatch:
    """Prompt references for one episode; texts are written by ``flush`` in one commit."""

    def __init__(self, store: BlobStore | BlobCollector) -> None:
        self.store = store
        self.pending: dict[str, str] = {}

    def _hash(self, text: str) -> str:
        digest, stored = self.store.digest(text)
        if not stored:
            self.pending[digest] = text
        return digest

    def ref(self, messages: Sequence[Message]) -> PromptRef:
        listing = json.dumps([[m.role, self._hash(m.content)] for m in messages])
        return PromptRef(sha256=self._hash(listing), n_messages=len(messages))

    def flush(self) -> None:
        pending, self.pending = self.pending, {}
        self.store._write(pending)
