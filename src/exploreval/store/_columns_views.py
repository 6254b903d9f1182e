"""The DuckDB views over one or several runs' columns: ``episodes`` and ``steps`` (each episode's
latest record), ``all_episodes`` / ``all_steps`` (every line) and ``results`` (scored metrics),
with a ``run_dir`` column when several runs are one dataset.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from exploreval.store._errors import (
    UnreadableResultsWarning,
)
from exploreval.store._run import RunDir

if TYPE_CHECKING:
    import duckdb


class ColumnsDir(Protocol):
    """What the views need of a run's columns (``RunColumns`` is one): where its parts are and
    which run they belong to. A protocol, so this module does not import the writer."""

    @property
    def dir(self) -> Path: ...

    @property
    def run(self) -> RunDir: ...


_LATEST = """
    select * from {all} qualify row_number() over (
        partition by {key}
        order by (status = 'ok') desc, line desc) = 1
"""


def register_views(
    con: Any, runs: Sequence[ColumnsDir], *, prefix: str = "", label: bool = False
) -> None:
    """Create the ``episodes`` / ``steps`` / ``all_*`` / ``results`` views over ``runs``
    (several runs: one dataset, with a ``run_dir`` column when ``label``)."""

    def source(kind: str) -> str:
        parts = []
        for run in runs:
            files = sorted((run.dir / kind).glob("part-*.parquet"))
            if not files:
                continue
            listing = ", ".join(f"'{_quote(str(f))}'" for f in files)
            tag = f", '{_quote(str(run.run.path))}' as run_dir" if label else ""
            parts.append(f"select *{tag} from read_parquet([{listing}], union_by_name=true)")
        return " union all by name ".join(parts) if parts else ""

    for kind in ("episodes", "steps"):
        body = source(kind)
        if not body:
            body = _EMPTY[kind]
        con.sql(f'create or replace view "{prefix}all_{kind}" as {body}')
    con.sql(
        f'create or replace view "{prefix}episodes" as '
        + _LATEST.format(
            all=f'"{prefix}all_episodes"', key="run_dir, episode_id" if label else "episode_id"
        )
    )
    con.sql(
        f'create or replace view "{prefix}steps" as select s.* from "{prefix}all_steps" s '
        f'semi join "{prefix}episodes" e on s.episode_id = e.episode_id and s.line = e.line'
        + (" and s.run_dir = e.run_dir" if label else "")
    )
    scored = [r for r in runs if r.run.results_path.exists() and _readable_results(r.run)]
    if scored:
        listing = ", ".join(f"'{_quote(str(r.run.results_path))}'" for r in scored)
        con.sql(
            f'create or replace view "{prefix}results" as '
            f"select * from read_parquet([{listing}], union_by_name=true)"
        )


def _readable_results(run: RunDir) -> bool:
    """Whether ``results.parquet`` reads (its footer); if not, say so: the ``results`` view
    leaves it out, rather than every query of the run failing on a file it may not use."""
    import warnings

    import pyarrow.parquet as pq

    try:
        pq.read_metadata(run.results_path)
    except Exception as exc:  # torn, or not Parquet: arrow says why
        warnings.warn(
            f"{run.results_path} is not a readable Parquet file ({exc}); the results view leaves "
            f"it out until `exploreval score {run.path}` writes it again",
            UnreadableResultsWarning,
            stacklevel=3,
        )
        return False
    return True


_EMPTY = {
    "episodes": "select null::varchar as episode_id, null::bigint as line, "
    "null::varchar as status where false",
    "steps": "select null::varchar as episode_id, null::bigint as line, null::bigint as t "
    "where false",
}


def _quote(text: str) -> str:
    return text.replace("'", "''")


def quiet_connection() -> duckdb.DuckDBPyConnection:
    """A new in-memory DuckDB connection with DuckDB's progress bar off. DuckDB draws the bar on
    stdout, where a query's results go (``exploreval sql RUN ... > out.csv``, a score's table),
    once a query passes two seconds, as queries over a million episodes do; exploreval shows
    its own progress on stderr. ``set enable_progress_bar = true`` turns it back on."""
    import duckdb

    con = duckdb.connect()
    con.execute("set enable_progress_bar = false")
    return con
