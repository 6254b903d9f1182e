"""Episode records read from the log only when used, one at a time (``score``'s records).

A million-episode run never holds a million records: :class:`LazyRecords` keeps the byte spans
of its records in ``episodes.jsonl`` (16 bytes an episode) and parses one when it is iterated or
indexed; its Arrow tables come from the run's columns (:mod:`._columns`).
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from exploreval.core import (
    EpisodeRecord,
)
from exploreval.store._columns import RunColumns, parse_line
from exploreval.store._errors import (
    StoreError,
)

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    import pyarrow as pa


class ChainedRecords(Sequence[EpisodeRecord]):
    """Several runs' records as one sequence (each part a list or ``LazyRecords``)."""

    def __init__(self, parts: Sequence[Sequence[EpisodeRecord]]) -> None:
        self.parts = [p for p in parts if len(p)]

    def __len__(self) -> int:
        return sum(len(p) for p in self.parts)

    def __iter__(self) -> Iterator[EpisodeRecord]:
        for part in self.parts:
            yield from part

    # -> Any: an index gives one record, a slice a list of them (as a Sequence does)
    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return list(self)[index]
        if index < 0:
            index += len(self)
        for part in self.parts:
            if index < len(part):
                return part[index]
            index -= len(part)
        raise IndexError(index)

    def where(self, family: str) -> ChainedRecords:
        """The records of one family; lazy parts are filtered without reading."""
        return ChainedRecords(
            [
                p.where(family)
                if isinstance(p, LazyRecords)
                else [r for r in p if family == "*" or r.family == family]
                for p in self.parts
            ]
        )

    def clear(self) -> None:
        for part in self.parts:
            if hasattr(part, "clear"):
                part.clear()
        self.parts = []


class LazyRecords(Sequence[EpisodeRecord]):
    """Episode records that stay in the log until used: a ``Sequence`` of the records at some
    byte spans of ``episodes.jsonl``, each parsed and validated when iterated or indexed and
    dropped after. What ``score`` hands report sections and run metrics that want records, so
    that a million-episode run never has a million records in memory at once (the spans are
    two int64 arrays: 16 bytes an episode).

    ``families`` (one per span) lets ``where`` keep a family without reading; ``rename`` maps
    agent names as the records are made (a report of several runs relabels clashing agents)."""

    def __init__(
        self,
        log: Path,
        spans: Sequence[tuple[int, int]] | Any,
        families: Sequence[str] | Any | None = None,
        rename: dict[str, str] | None = None,
    ) -> None:
        import numpy as np

        self.log = Path(log)
        pairs = np.asarray(spans, dtype=np.int64).reshape(-1, 2)
        self._offsets = np.ascontiguousarray(pairs[:, 0])
        self._lengths = np.ascontiguousarray(pairs[:, 1])
        self._families = None if families is None else np.asarray(families, dtype=object)
        self._rename = dict(rename or {})

    def __len__(self) -> int:
        return int(self._offsets.size)

    def __bool__(self) -> bool:
        return bool(self._offsets.size)

    def _make(self, raw: bytes, offset: int) -> EpisodeRecord:
        data = parse_line(raw, 0, None)
        if data is None:
            raise StoreError(f"{self.log}: no episode record at byte {offset}")
        record = EpisodeRecord.model_validate(data)
        if record.agent.name in self._rename:
            agent = record.agent.model_copy(update={"name": self._rename[record.agent.name]})
            record = record.model_copy(update={"agent": agent})
        return record

    def __iter__(self) -> Iterator[EpisodeRecord]:
        if not self._offsets.size:
            return
        # lists taken now: a clear() while iterating does not change what this pass reads
        offsets, lengths = self._offsets.tolist(), self._lengths.tolist()
        with open(self.log, "rb") as fh:
            for offset, length in zip(offsets, lengths, strict=True):
                fh.seek(offset)
                yield self._make(fh.read(length), offset)

    def _subset(self, keep: Any) -> LazyRecords:
        import numpy as np

        pairs = np.stack([self._offsets[keep], self._lengths[keep]], axis=1)
        families = self._families[keep] if self._families is not None else None
        return LazyRecords(self.log, pairs, families, self._rename)

    # -> Any: an index gives one record (read now), a slice a LazyRecords of the spans
    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return self._subset(index)
        offset = int(self._offsets[index])
        with open(self.log, "rb") as fh:
            fh.seek(offset)
            return self._make(fh.read(int(self._lengths[index])), offset)

    @property
    def spans(self) -> list[tuple[int, int]]:
        return list(zip(self._offsets.tolist(), self._lengths.tolist(), strict=True))

    @property
    def offsets(self) -> npt.NDArray[np.int64]:
        """The records' byte offsets in the log."""
        return self._offsets

    @property
    def rename(self) -> dict[str, str]:
        """Agent names changed as records are made (``renamed``)."""
        return dict(self._rename)

    def without(self, offsets: Collection[int]) -> LazyRecords:
        """These records but those at ``offsets`` (lines that failed validation, say)."""
        import numpy as np

        if not offsets:
            return self
        return self._subset(~np.isin(self._offsets, np.fromiter(offsets, np.int64)))

    def step_table(self, step_columns: Sequence[str]) -> pa.Table | None:
        """One row per step of these records, in the records' order then step order: ``order``
        (the record's index here) and the ``step_columns``. One DuckDB query over the run's
        Parquet tables, no record parsed: what a report section reads instead of the records.
        None when the tables lack a column asked for (an older run: read the records)."""
        return self._query(
            [f's."{c}"' for c in step_columns],
            "join all_steps s on s.episode_id = e.episode_id and s.line = e.line",
            "order by w.order, s.t",
        )

    def episode_table(self, episode_columns: Sequence[str]) -> pa.Table | None:
        """One row per record, in order: ``order`` and the ``episode_columns`` of its row of the
        episode table (what ``step_table``'s steps belong to, without repeating it per step)."""
        return self._query([f'e."{c}"' for c in episode_columns], "", "order by w.order")

    def _query(self, picked: list[str], join: str, order: str) -> pa.Table | None:
        import duckdb
        import pyarrow as pa

        if not len(self):
            return None
        con = RunColumns(self.log.parent).connect()
        try:
            wanted = pa.table(
                {"log_offset": pa.array(self._offsets), "order": pa.array(range(len(self)))}
            )
            con.register("wanted", wanted)
            return con.sql(
                f"select {', '.join(['w.order', *picked])} from wanted w "
                f"join all_episodes e using (log_offset) {join} {order}"
            ).to_arrow_table()
        except duckdb.BinderException:
            return None
        finally:
            con.close()

    def families(self) -> set[str]:
        if self._families is not None:
            return {str(f) for f in set(self._families.tolist())}
        return {r.family for r in self}

    def where(self, family: str) -> LazyRecords:
        """The records of one family (``"*"``: all), without reading any."""
        if family == "*":
            return self
        if self._families is None:
            raise ValueError("these records were made without their families")
        return self._subset(self._families == family)

    def renamed(self, rename: dict[str, str]) -> LazyRecords:
        copy = self._subset(slice(None))
        copy._rename = {**self._rename, **rename}
        return copy

    def clear(self) -> None:
        """Forget the spans (what ``list.clear`` does for a list of records)."""
        self._offsets = self._offsets[:0]
        self._lengths = self._lengths[:0]
        if self._families is not None:
            self._families = self._families[:0]
