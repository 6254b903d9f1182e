"""Building the index rows: from the run's columns (DuckDB over Parquet) when the log is large, or
by scanning ``episodes.jsonl`` line by line when it is small, with the same values either way.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

from exploreval.store import EPISODES, StoreError
from exploreval.viewer._episode_index import (
    NUMBER_COLUMNS,
    TEXT_COLUMNS,
    EpisodeIndex,
    round_value,
)


def empty_columns() -> dict[str, list[Any]]:
    return {name: [] for name in ("id", *TEXT_COLUMNS, *NUMBER_COLUMNS)}


def _condition(family: str, options: Any) -> str:
    """The episode's condition as the report's tables label it (empty: no env options)."""
    from exploreval.metrics import NO_CONDITION, condition_label_for

    if not isinstance(options, dict) or not options:
        return ""
    try:
        label = condition_label_for(family, options)
    except Exception:  # a suite's formatter failing on odd options: the list still opens
        return ""
    return "" if label == NO_CONDITION else label


def row_values(data: dict[str, Any], suites: dict[str, str]) -> dict[str, Any]:
    steps = data.get("steps") or []
    acting = [s for s in steps if isinstance(s, dict) and s.get("phase", "task") == "task"]
    invalid = sum(1 for s in acting if s.get("valid", True) is False)
    retries = sum(int(s.get("retries") or 0) for s in steps if isinstance(s, dict))
    usage = data.get("usage") or {}
    status = str(data.get("status", "ok"))
    family = str(data.get("family", ""))
    agent = data.get("agent") or {}
    return {
        "env": str(data.get("env_id", "")),
        "family": family,
        "suite": suites.get(family, family),
        "preset": str(data.get("preset") or ""),
        "condition": _condition(family, data.get("env_options")),
        "agent": str(agent.get("name", "")) if isinstance(agent, dict) else "",
        "status": status,
        "seed": data.get("seed"),
        "repeat": data.get("repeat", 0),
        "success": 1 if data.get("success") else 0,
        "steps": len(acting),
        "invalid": invalid,
        "reward": round_value(data.get("total_reward", 0.0)),
        "tokens": int(usage.get("prompt_tokens", 0)) + int(usage.get("completion_tokens", 0)),
        "cost": round_value(usage.get("cost_usd", 0.0)),
        "retries": retries,
        "has_errors": 1 if (status != "ok" or invalid > 0) else 0,
    }


def scan_records(index: EpisodeIndex, start: int, suites: dict[str, str]) -> None:
    """Index the complete lines of the log from byte ``start`` on."""
    path = index.run_dir / EPISODES
    cols = index.columns
    status_col = cols["status"]
    with open(path, "rb") as fh:
        fh.seek(start)
        offset = start
        for raw in fh:
            if not raw.endswith(b"\n"):
                break  # a torn or still-being-written last line: next time
            length = len(raw)
            here, offset = offset, offset + length
            if not raw.strip():
                continue
            try:
                try:
                    data = orjson.loads(raw)
                except orjson.JSONDecodeError:  # lone surrogates: the standard library reads them
                    data = json.loads(raw)
                eid = data["episode_id"]
                if not isinstance(eid, str):
                    raise TypeError("episode_id is not text")
            except (ValueError, KeyError, TypeError, RecursionError) as exc:
                index.issues.append(f"{path} at byte {here}: unreadable line ({exc})")
                continue
            row = index.row_of(eid)
            values = row_values(data, suites)
            if row is None:
                row = len(index.offsets)
                index._row_of[eid] = row
                cols["id"].append(eid)
                index.offsets.append(here)
                index.lengths.append(length)
                for name, value in values.items():
                    cols[name].append(value)
            elif values["status"] == "ok" or status_col[row] != "ok":
                index.offsets[row], index.lengths[row] = here, length
                for name, value in values.items():
                    cols[name][row] = value
    index.scanned_bytes = offset


#: The row of each episode id first seen from byte ``start`` on: its latest ``ok`` line, else its
#: latest line (the store's rule), in the order the ids first appear; with its step counts.
_COLUMN_ROWS = """
    with chosen as (
        select episode_id, min(line) as first_line,
            coalesce(max(line) filter (where coalesce(status, 'ok') = 'ok'), max(line)) as line
        from all_episodes
        where log_offset >= {start}
        group by episode_id
    )
    select e.episode_id, e.log_offset, e.log_length, e.env_id, e.family, e.preset, e.agent,
        e.status, e.seed, e.repeat, e.success, e.total_reward, e.prompt_tokens,
        e.completion_tokens, e.cost_usd, coalesce(s.acting, 0) as acting,
        coalesce(s.invalid, 0) as invalid, coalesce(s.retries, 0) as retries
    from chosen c join all_episodes e on e.line = c.line left join (
        select line, count(*) filter (where phase = 'task') as acting,
            count(*) filter (where phase = 'task' and valid = false) as invalid,
            cast(sum(coalesce(retries, 0)) as bigint) as retries
        from all_steps
        where line in (select line from chosen)
        group by line
    ) s on s.line = c.line
    order by c.first_line
"""


def scan_columns(index: EpisodeIndex, start: int, suites: dict[str, str]) -> bool:
    """Index the new lines from the run's columns (``exploreval.store.RunColumns``): the same
    rows as ``scan_records`` without parsing the log here. False when the columns cannot be had (a
    read-only run directory): the caller scans the log."""
    from exploreval.store import RunColumns

    columns = RunColumns(index.run_dir)
    try:
        stats = columns.sync()
        con = columns.connect()
    except (OSError, StoreError):
        return False
    try:
        before = con.sql(
            f"select coalesce(max(line), 0) from all_episodes where log_offset < {int(start)}"
        ).fetchall()[0][0]
        state = columns.state()
        path = index.run_dir / EPISODES
        # the unreadable lines past what the index had (this sync's, or an earlier one's)
        new_issues = [i for i in columns.issues() if i.line > int(before)] or stats.issues
        index.issues += [f"{path} line {i.line}: {i.message}" for i in new_issues]
        shared: dict[str, str] = {}
        batches = con.sql(_COLUMN_ROWS.format(start=int(start))).to_arrow_reader(65536)
        for batch in batches:  # a million rows never all held as Python values at once
            _index_batch(index, _batch_values(batch, suites, shared))
    finally:
        con.close()
    index.scanned_bytes = int(state.get("offset", start))
    return True


def _batch_values(
    batch: Any, suites: dict[str, str], shared: dict[str, str]
) -> dict[str, list[Any]]:
    """One batch of ``_COLUMN_ROWS`` as the index's columns (``row_values`` of each row, a column
    at a time). Text values are shared: one string object per distinct value, not per row."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    # -> Any: a pyarrow array (pyarrow ships no type information)
    def column(name: str) -> Any:
        return batch.column(batch.schema.get_field_index(name))

    def texts(array: Any, default: str = "", mapping: dict[str, str] | None = None) -> list[str]:
        array = pc.fill_null(array.cast(pa.string()), "")
        encoded = pc.dictionary_encode(array)
        values = []
        for value in encoded.dictionary.to_pylist():
            value = value or default
            if mapping is not None:
                value = mapping.get(value, value)
            values.append(shared.setdefault(value, value))
        picked: list[str] = np.array(values, dtype=object)[encoded.indices.to_numpy()].tolist()
        return picked

    def rounded(array: Any) -> list[float | int | None]:
        encoded = pc.dictionary_encode(pc.fill_null(array.cast(pa.float64()), 0.0))
        values = [round_value(value) for value in encoded.dictionary.to_pylist()]
        picked: list[float | int | None] = np.array(values, dtype=object)[
            encoded.indices.to_numpy()
        ].tolist()
        return picked

    # -> Any: a numpy int64 array, nulls as 0 (from an untyped pyarrow array)
    def integers(array: Any) -> Any:
        return pc.fill_null(array.cast(pa.int64()), 0).to_numpy()

    status = texts(column("status"), default="ok")
    invalid = integers(column("invalid"))
    not_ok = np.array([value != "ok" for value in status], dtype=bool)
    success = pc.fill_null(column("success"), False).to_numpy(zero_copy_only=False)
    tokens = integers(column("prompt_tokens")) + integers(column("completion_tokens"))
    return {
        "id": column("episode_id").to_pylist(),
        "offset": integers(column("log_offset")).tolist(),
        "length": integers(column("log_length")).tolist(),
        "env": texts(column("env_id")),
        "family": texts(column("family")),
        "suite": texts(column("family"), mapping=suites),
        "preset": texts(column("preset")),
        "agent": texts(column("agent")),
        "status": status,
        "seed": column("seed").to_pylist(),
        "repeat": integers(column("repeat")).tolist(),
        "success": success.astype(np.int64).tolist(),
        "steps": integers(column("acting")).tolist(),
        "invalid": invalid.tolist(),
        "reward": rounded(column("total_reward")),
        "tokens": tokens.tolist(),
        "cost": rounded(column("cost_usd")),
        "retries": integers(column("retries")).tolist(),
        "has_errors": (not_ok | (invalid > 0)).astype(np.int64).tolist(),
    }


def _index_batch(index: EpisodeIndex, batch: dict[str, list[Any]]) -> None:
    """Add the batch's ids new to the index (column by column), and replace the rows of ids it
    has when the batch's line wins (an ``ok`` line, or the row is not ``ok``)."""
    cols = index.columns
    names = [name for name in batch if name not in ("id", "offset", "length")]
    rows_by_id = index._rows_by_id()
    known = [rows_by_id.get(eid) for eid in batch["id"]]
    fresh = [position for position, row in enumerate(known) if row is None]
    if len(fresh) == len(known):  # the usual case (a cold build): whole columns at once
        taken = batch
    else:
        taken = {name: [values[p] for p in fresh] for name, values in batch.items()}
    first = len(index.offsets)
    rows_by_id.update((eid, first + k) for k, eid in enumerate(taken["id"]))
    cols["id"].extend(taken["id"])
    index.offsets.extend(taken["offset"])
    index.lengths.extend(taken["length"])
    for name in names:
        cols[name].extend(taken[name])
    if len(fresh) == len(known):
        return
    status_col = cols["status"]
    for position, row in enumerate(known):
        if row is None or not (batch["status"][position] == "ok" or status_col[row] != "ok"):
            continue
        index.offsets[row], index.lengths[row] = (
            batch["offset"][position],
            batch["length"][position],
        )
        for name in names:
            cols[name][row] = batch[name][position]
