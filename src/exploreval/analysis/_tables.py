"""Names the report builder and the paired comparison share (moved down a level so that the
two modules no longer import each other, issue 45): a row's identity columns and the markdown
table writer."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

IDENTITY_COLUMNS = frozenset(
    {
        "run_id",
        "episode_id",
        "env_id",
        "family",
        "preset",
        "condition",
        "seed",
        "repeat",
        "agent",
        "agent_kind",
        "model",
        "harness",
        "history",
        "status",
        "error",
    }
)


def _cell(value: Any, floatfmt: str) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if isinstance(value, float | np.floating):
        return format(float(value), floatfmt)
    return str(value).replace("|", "\\|").replace("\n", " ")


def markdown_table(frame: pd.DataFrame, floatfmt: str = ".3f") -> str:
    """A GitHub markdown table (``|`` in cells escaped, NaN as ``-``)."""
    if frame.empty:
        return "_(no rows)_"
    cols = [str(c) for c in frame.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for row in frame.itertuples(index=False):
        lines.append("| " + " | ".join(_cell(v, floatfmt) for v in row) + " |")
    return "\n".join(lines)
