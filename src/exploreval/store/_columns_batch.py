"""Records to Arrow rows: one batch of episode rows and step rows, written as one part.

Each key of a step's ``info`` becomes an ``info_<key>`` column of the Arrow type its values share
in the part (scalars, lists, objects as structs); a key whose values do not share one is stored as
JSON text, so no value is lost to a type Arrow could not infer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import orjson

from exploreval.core import (
    EpisodeRecord,
)
from exploreval.store._run import LogIssue, validation_issue

if TYPE_CHECKING:
    import pyarrow as pa


#: What Arrow raises when a value does not fit its column's type.
CONVERSION_ERRORS: tuple[type[BaseException], ...] = (TypeError, ValueError, OverflowError)


def _json_text(value: Any) -> str:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()


class ColumnBatch:
    """The parsed records of one part; turned into Arrow columns at once (``tables``), mostly by
    Arrow's own conversion of the parsed dicts, not a Python loop per step and column."""

    def __init__(self, start: int) -> None:
        self.start = start
        self.records: list[dict[str, Any]] = []
        self.where: list[tuple[int, int, int]] = []  # (line, offset, length)
        self.n_episodes = 0
        self.n_steps = 0

    def add(self, data: dict[str, Any], line: int, offset: int, length: int, run_id: str) -> None:
        if not data.get("run_id"):
            data["run_id"] = run_id
        self.records.append(data)
        self.where.append((line, offset, length))
        self.n_episodes += 1
        self.n_steps += len(data.get("steps") or ())

    def drop_unfit(self, issues: list[LogIssue]) -> None:
        """Leave out the records that are not valid episode records (each reported by line,
        as a read of the log reports it) and store the others as validated, so a value the
        record model coerces fits its column."""
        from pydantic import ValidationError

        keep: list[int] = []
        for index, (data, (line, _, _)) in enumerate(zip(self.records, self.where, strict=True)):
            try:
                # what a read of the log would make of it: coerced values ("3" for a step's t)
                # are stored as the record has them
                fitted = EpisodeRecord.model_validate(data).model_dump(mode="json")
                fitted["run_id"] = data.get("run_id") or fitted.get("run_id")
                ColumnBatch._alone(fitted).tables()
                self.records[index] = fitted
            except ValidationError as exc:
                issues.append(validation_issue(line, exc))
                continue
            except CONVERSION_ERRORS as exc:
                issues.append(LogIssue(line, f"does not fit the column types: {exc}"))
                continue
            keep.append(index)
        self.records = [self.records[i] for i in keep]
        self.where = [self.where[i] for i in keep]
        self.n_episodes = len(self.records)
        self.n_steps = sum(len(r.get("steps") or ()) for r in self.records)

    @staticmethod
    def _alone(data: dict[str, Any]) -> ColumnBatch:
        batch = ColumnBatch(0)
        batch.records, batch.where = [data], [(0, 0, 0)]
        batch.n_episodes, batch.n_steps = 1, len(data.get("steps") or ())
        return batch

    def tables(self) -> tuple[pa.Table, pa.Table]:
        import numpy as np
        import pyarrow as pa

        records = self.records
        lines = np.fromiter((w[0] for w in self.where), np.int64, len(self.where))
        episodes = _struct_table(records, "episode")
        tasks = [r.get("tasks") or [] for r in records]
        episodes = episodes.append_column("line", pa.array(lines))
        for name, values in (
            ("log_offset", [w[1] for w in self.where]),
            ("log_length", [w[2] for w in self.where]),
            ("n_steps", [len(r.get("steps") or ()) for r in records]),
            ("n_tasks", [len(t) for t in tasks]),
            (
                "tasks_won",
                [sum(1 for x in t if isinstance(x, dict) and x.get("success")) for t in tasks],
            ),  # fmt: skip
        ):
            episodes = episodes.append_column(name, pa.array(values, pa.int64()))
        texts: list[tuple[str, list[Any]]] = [
            ("env_options", [r.get("env_options") or {} for r in records]),
            ("agent_config", [(r.get("agent") or {}).get("config") or {} for r in records]),
            ("reset_info", [r.get("reset_info") or {} for r in records]),
            ("ground_truth", [r.get("ground_truth") or {} for r in records]),
            ("tasks", tasks),
        ]
        for name, objects in texts:
            episodes = episodes.append_column(name, pa.array([_json_text(v) for v in objects]))
        steps_flat = [step for r in records for step in (r.get("steps") or ())]
        counts = np.fromiter((len(r.get("steps") or ()) for r in records), np.int64, len(records))
        steps = _struct_table(steps_flat, "step")
        steps = steps.add_column(0, "episode_id", pa.array(
            np.repeat(np.array([r["episode_id"] for r in records], dtype=object), counts),
            pa.string()))  # fmt: skip
        steps = steps.add_column(1, "line", pa.array(np.repeat(lines, counts)))
        for name, column in _info_columns([s.get("info") or {} for s in steps_flat]):
            steps = steps.append_column(name, column)
        steps = steps.append_column("agent_info", pa.array(
            [_json_text(s["agent_info"]) if s.get("agent_info") else None for s in steps_flat],
            pa.string()))  # fmt: skip
        return episodes, steps


def _fields() -> tuple[Any, Any]:
    import pyarrow as pa

    usage = pa.struct([("prompt_tokens", pa.int64()), ("completion_tokens", pa.int64()),
                       ("reasoning_tokens", pa.int64()), ("calls", pa.int64()),
                       ("cached_calls", pa.int64()), ("cost_usd", pa.float64()),
                       ("unpriced_calls", pa.int64())])  # fmt: skip
    agent = pa.struct([("name", pa.string()), ("kind", pa.string())])
    episode = pa.struct([
        ("run_id", pa.string()), ("episode_id", pa.string()), ("schema_version", pa.int64()),
        ("env_id", pa.string()), ("family", pa.string()), ("preset", pa.string()),
        ("seed", pa.int64()), ("repeat", pa.int64()), ("agent", agent), ("status", pa.string()),
        ("error", pa.string()), ("success", pa.bool_()), ("total_reward", pa.float64()),
        ("terminated", pa.bool_()), ("truncated", pa.bool_()), ("max_steps", pa.int64()),
        ("usage", usage), ("started_at", pa.string()), ("ended_at", pa.string()),
    ])  # fmt: skip
    step = pa.struct([
        ("t", pa.int64()), ("phase", pa.string()), ("task", pa.int64()),
        ("observation", pa.string()), ("action", pa.string()), ("valid", pa.bool_()),
        ("invalid_reason", pa.string()), ("raw_output", pa.string()),
        ("reasoning", pa.string()), ("reward", pa.float64()), ("terminated", pa.bool_()),
        ("truncated", pa.bool_()), ("usage", usage), ("latency_s", pa.float64()),
        ("retries", pa.int64()), ("cached", pa.bool_()),
    ])  # fmt: skip
    return episode, step


_STRUCTS: dict[str, Any] = {}


def _struct_table(rows: list[dict[str, Any]], kind: str) -> pa.Table:
    """``rows`` (parsed dicts) as a flat table of the struct's fields: nested ``agent`` and
    ``usage`` become ``agent``/``agent_kind`` and the usage columns (times stay ISO text, which
    DuckDB casts: ``started_at::timestamptz``)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if not _STRUCTS:
        _STRUCTS["episode"], _STRUCTS["step"] = _fields()
    struct = _STRUCTS[kind]
    array = pa.array(rows, type=struct, from_pandas=False)
    columns: dict[str, Any] = {}
    for index, member in enumerate(struct):
        child = array.field(index)
        if member.name == "agent":
            columns["agent"] = child.field(0)
            columns["agent_kind"] = child.field(1)
        elif member.name == "usage":
            for j, sub in enumerate(member.type):
                columns[sub.name] = child.field(j)
        else:
            columns[member.name] = child
    for name, default in (("status", "ok"), ("phase", "task")):
        if name in columns:
            columns[name] = pc.fill_null(columns[name], default)
    for name in ("success", "terminated", "truncated", "cached"):
        if name in columns:
            columns[name] = pc.fill_null(columns[name], False)
    if "valid" in columns:
        columns["valid"] = pc.fill_null(columns["valid"], True)
    for name in ("repeat", "task", "retries"):
        if name in columns:
            columns[name] = pc.fill_null(columns[name], 0)
    for name in ("total_reward", "reward", "latency_s"):
        if name in columns:
            columns[name] = pc.fill_null(columns[name], 0.0)
    return pa.table(columns)


def _info_columns(infos: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    """Step infos as ``info_<key>`` columns of their own Arrow types (lists and objects too:
    ``info_pos`` is ``list<int64>``), inferred by Arrow in one pass; a key whose values do not
    share one type in the part (two families' ``action``) is stored as JSON text."""
    import pyarrow as pa

    try:
        array = pa.array(infos)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, OverflowError):
        pass
    else:
        if pa.types.is_struct(array.type):
            return sorted(
                (f"info_{field.name}", array.field(i)) for i, field in enumerate(array.type)
            )
    keys: dict[str, None] = {}
    for info in infos:
        keys.update(dict.fromkeys(info))
    out: list[tuple[str, Any]] = []
    for key in keys:
        values = [info.get(key) for info in infos]
        try:
            column = pa.array(values)
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, OverflowError):
            column = pa.array([None if v is None else _json_text(v) for v in values], pa.string())
        out.append((f"info_{key}", column))
    return sorted(out)
