"""Tables of the metrics that call a model (``score --judge-model``), kept apart from the rest.

A judge costs money and time, so its tables are written once to ``tables/judged/`` and read back by
every later ``score`` and ``report`` of the run; the plain metrics can be recomputed freely.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from exploreval.store import (
    RunDir,
)

#: Tables a model computed (``score --judge-model``), under ``tables/judged/``: kept apart from
#: the pure tables, which ``score`` rewrites; read back by every later score and report.
JUDGED_DIR = "judged"


def judged_tables_dir(run: RunDir) -> Path:
    return run.tables_dir / JUDGED_DIR


def write_judged_tables(run: RunDir, tables: dict[str, pd.DataFrame]) -> list[Path]:
    """Store judged tables (atomically, one parquet each) where later scores find them."""
    folder = judged_tables_dir(run)
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, table in tables.items():
        path = folder / f"{name}.parquet"
        write_table(table, path)
        paths.append(path)
    return paths


def read_judged(run: RunDir) -> dict[str, pd.DataFrame]:
    folder = judged_tables_dir(run)
    tables: dict[str, pd.DataFrame] = {}
    for path in sorted(folder.glob("*.parquet")) if folder.is_dir() else []:
        try:
            tables[path.stem] = pd.read_parquet(path)
        except Exception:  # a torn file: the judge can be run again (its calls are cached)
            continue
    return tables


def write_table(table: pd.DataFrame, path: Path) -> None:
    """Parquet wants one type per column: an object column of booleans (with gaps for errored
    episodes) is stored as a nullable boolean, of numbers as float, anything else as text."""
    import numbers

    frame = table.copy(deep=False)  # columns converted below are replaced, not written into
    for column in frame.columns:
        if frame[column].dtype != object:
            continue
        present = frame[column].dropna()
        if len(present) and all(isinstance(v, bool | np.bool_) for v in present):
            frame[column] = frame[column].astype("boolean")
        elif len(present) and all(
            isinstance(v, numbers.Number) and not isinstance(v, bool | np.bool_) for v in present
        ):
            frame[column] = pd.to_numeric(frame[column], errors="coerce")
        else:
            frame[column] = frame[column].map(
                lambda v: v if v is None or isinstance(v, str) else str(v)
            )
    from exploreval.store import write_atomic

    write_atomic(path, lambda tmp: frame.to_parquet(tmp, index=False))
