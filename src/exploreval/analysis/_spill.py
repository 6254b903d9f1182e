"""Spilling a streamed score to disk and reducing it: what keeps ``score``'s memory flat.

Each chunk's rows, errors and metric frames go to Parquet files in a temporary directory as the
chunks finish (:class:`Spill`), and are read back one kind at a time to be concatenated or reduced
per group, so a million-episode run never holds all its per-episode frames at once.
:class:`LatestEpisodes` is what the chunks are cut from: each episode's latest record, as spans.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from exploreval.store import (
    LazyRecords,
    LogIssue,
)


@dataclass
class LatestEpisodes:
    """Each episode's latest record (the latest ``ok`` one if any), as spans of the log, in the
    order the episodes first appear (``RunDir.latest_records``' order), from the run's columns."""

    ok: LazyRecords
    errors: LazyRecords
    #: offset, length and line of every latest record, ok and errored, in that order (int64).
    offsets: Any
    lengths: Any
    lines: Any
    issues: list[LogIssue]

    def chunks(self, size: int) -> list[list[tuple[int, int, int]]]:
        """The spans as (offset, length, line) tuples, ``size`` at a time (one worker task)."""
        return [
            list(
                zip(
                    self.offsets[i : i + size].tolist(),
                    self.lengths[i : i + size].tolist(),
                    self.lines[i : i + size].tolist(),
                    strict=True,
                )
            )
            for i in range(0, len(self.offsets), size)
        ]


SPILL_ROWS, SPILL_ERRORS, SPILL_FRAME, SPILL_LIST = "rows", "errors", "frame:", "list:"


class Spill:
    """Pickled chunk results in one scratch file, by key, in the order they were put: what a
    score's map hands its reduce without holding it (at a million episodes the rows and
    summaries are gigabytes of Python objects; on disk they are a few hundred megabytes,
    read back one key at a time and deleted with the scratch directory). Picklable: a copy
    sent to another process reads the same file."""

    def __init__(self) -> None:
        from exploreval.core import scratch_dir

        # in this process's scratch root: deleted when the score ends, however it ends (a
        # score killed mid-map leaves no spill of hundreds of megabytes behind)
        self._dir: Path | None = scratch_dir("score")
        self._path = self._dir / "spill.bin"
        self._file: Any = open(self._path, "w+b")  # noqa: SIM115
        self._spans: dict[str, list[tuple[int, int]]] = {}
        self._end = 0

    def __enter__(self) -> Spill:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the file; the scratch directory goes with the copy that made it."""
        self._file.close()
        if self._dir is not None:
            import shutil

            shutil.rmtree(self._dir, ignore_errors=True)

    def __getstate__(self) -> dict[str, Any]:
        return {"path": self._path, "spans": self._spans}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._dir = None  # the scratch directory stays the sender's to delete
        self._path, self._spans = state["path"], state["spans"]
        self._file = open(self._path, "rb")  # noqa: SIM115
        self._end = 0

    def put(self, key: str, payload: bytes) -> None:
        """Keep ``payload`` (a pickle) under ``key``."""
        self._file.seek(self._end)
        self._file.write(payload)
        self._spans.setdefault(key, []).append((self._end, len(payload)))
        self._end += len(payload)

    def flush(self) -> None:
        self._file.flush()

    def copy(self) -> Spill:
        """A reader of what was put so far, for another process (or thread): its keys are its
        own to take, and what this spill takes meanwhile does not change them."""
        self._file.flush()
        copy = Spill.__new__(Spill)
        copy.__setstate__(
            {"path": self._path, "spans": {k: list(v) for k, v in self._spans.items()}}
        )
        return copy

    def summaries(self, key: str) -> tuple[list[pd.DataFrame], list[Any]]:
        """One run metric's summaries, as ``reduce_run_tables`` takes them: its row chunks,
        then its other summaries, in log order; the key is then gone."""
        frames = list(self.take(SPILL_FRAME + key))
        values = [v for chunk in self.take(SPILL_LIST + key) for v in chunk]
        return frames, values

    def release(self) -> None:
        """Close a copy another process was given (its handle is its own; the directory stays
        the sender's); the spill that made the directory is left open."""
        if self._dir is None:
            self.close()

    def size(self, key: str) -> int:
        """Bytes put under ``key`` so far."""
        return sum(length for _, length in self._spans.get(key, ()))

    def take(self, key: str) -> Iterator[Any]:
        """The objects put under ``key``, unpickled one at a time; the key is then gone."""
        import pickle

        self._file.flush()
        for offset, length in self._spans.pop(key, []):
            self._file.seek(offset)
            yield pickle.loads(self._file.read(length))


def reduce_spilled(spill: Spill, records: dict[str, LazyRecords]) -> dict[str, pd.DataFrame]:
    """Every run table, from the summaries in ``spill``, one metric's at a time."""
    from exploreval.metrics import reduce_run_tables

    try:
        return reduce_run_tables(spill.summaries, records)
    finally:
        spill.release()


def run_keys() -> list[str]:
    from exploreval.metrics import run_entries, run_key

    return [run_key(entry) for entry in run_entries()]


def reduce_groups(spill: Spill, records: dict[str, LazyRecords]) -> list[list[str]]:
    """The run metrics to reduce, in at most two groups of about equal work: each metric's
    spilled bytes (largest first, each to the lighter group). A metric that reads records
    counts as the heaviest."""
    weights = {
        key: spill.size(SPILL_FRAME + key) + spill.size(SPILL_LIST + key) for key in run_keys()
    }
    heaviest = max(weights.values(), default=0)
    weights.update({key: heaviest + 1 for key in records})
    present = sorted((key for key in weights if weights[key]), key=lambda k: -weights[k])
    groups: list[list[str]] = [[], []]
    loads = [0, 0]
    for key in present:
        lighter = loads.index(min(loads))
        groups[lighter].append(key)
        loads[lighter] += weights[key]
    return [group for group in groups if group] or [[]]


def reduce_spilled_by_metric(
    spill: Spill, records: dict[str, LazyRecords], keys: Sequence[str]
) -> dict[str, dict[str, pd.DataFrame]]:
    """``reduce_spilled`` of the metrics ``keys`` only, each metric's tables apart."""
    from exploreval.metrics import reduce_run_tables

    try:
        return {key: reduce_run_tables(spill.summaries, records, only=(key,)) for key in keys}
    finally:
        spill.release()


def valid_only(records: LazyRecords, issues: list[LogIssue], latest: LatestEpisodes) -> LazyRecords:
    """``records`` without those that failed validation while scoring (reported in issues)."""
    if not issues:
        return records

    failed = np.isin(latest.lines, np.fromiter((i.line for i in issues), np.int64))
    return records.without(set(latest.offsets[failed].tolist()))


def concat_frames(frames: list[pd.DataFrame]) -> pd.DataFrame:
    frames = [f for f in frames if not f.empty]
    if not frames:
        return pd.DataFrame()
    return pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
