"""TIDE's tables before they are drawn: the radar's normalised frame, SR vs AUV pairs with their
Spearman correlation, recall lags by outcome, and the plain-text table the terminal prints.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

#: Appendix C.6: bars start at a visible baseline and stop short of the outer ring.
RADAR_BASELINE = 0.08


RADAR_CEILING = 0.92


def normalise_for_radar(values: Sequence[float | None]) -> list[float | None]:
    """Min-max scale across models to [0, 1], then map to [baseline, ceiling] (Appendix C.6).

    Missing values stay None. When every model has the same value there is no spread to show: all
    get the midpoint, so equal bars read as "no difference", never as "best" or "worst".
    """
    present = [v for v in values if v is not None and math.isfinite(v)]
    if not present:
        return [None for _ in values]
    low, high = min(present), max(present)
    out: list[float | None] = []
    for value in values:
        if value is None or not math.isfinite(value):
            out.append(None)
            continue
        scaled = 0.5 if high == low else (value - low) / (high - low)
        out.append(RADAR_BASELINE + (RADAR_CEILING - RADAR_BASELINE) * scaled)
    return out


def spearman(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Spearman's rank correlation (average ranks for ties); None when undefined."""
    if len(x) < 3:
        return None
    rx = pd.Series(list(x)).rank().to_numpy()
    ry = pd.Series(list(y)).rank().to_numpy()
    if rx.std() == 0 or ry.std() == 0:
        return None
    return float(np.corrcoef(rx, ry)[0, 1])


def radar_frame(summary: pd.DataFrame, memory: pd.DataFrame | None) -> pd.DataFrame:
    """Raw and normalised AUV, 1 - LR and MI per env x agent (MI attached to the 'with' agent)."""
    frame = summary[["env_id", "preset", "agent", "auv", "loop_ratio"]].copy()
    frame["one_minus_lr"] = [
        None if v is None or pd.isna(v) else 1.0 - v for v in frame["loop_ratio"]
    ]
    frame["mi"] = None
    if memory is not None and not memory.empty:
        for _, row in memory.iterrows():
            hit = (
                (frame["env_id"] == row["env_id"])
                & (frame["preset"] == row["preset"])
                & (frame["agent"] == row["with"])
            )
            frame.loc[hit, "mi"] = row["mi"]
    for column in ("auv", "one_minus_lr", "mi"):
        normalised: list[float | None] = [None] * len(frame)
        frame = frame.reset_index(drop=True)
        for _, index in frame.groupby(["env_id", "preset"]).groups.items():
            positions = [int(i) for i in index]
            values = [frame[column].iloc[p] for p in positions]
            clean = [None if v is None or pd.isna(v) else float(v) for v in values]
            for p, v in zip(positions, normalise_for_radar(clean), strict=True):
                normalised[p] = v
        frame[f"{column}_norm"] = normalised
    return frame


def sr_auv_pairs(summary: pd.DataFrame) -> pd.DataFrame:
    """Table 4: per environment (and condition), every ordered pair of agents (A, B) with
    SR(A) >= SR(B) and AUV(A) <= AUV(B), where the two metrics do not agree on an order; a pair
    equal on both is left out (nothing to tell apart). Sorted by env, then A's SR."""
    keys = [k for k in ("env_id", "preset", "condition") if k in summary]
    rows: list[dict[str, Any]] = []
    for key, part in summary.groupby(keys, sort=True):
        values = [(str(r["agent"]), float(r["success_rate"]), float(r["auv"]))
                  for _, r in part.iterrows()
                  if pd.notna(r["success_rate"]) and pd.notna(r["auv"])]  # fmt: skip
        for a, sr_a, auv_a in values:
            for b, sr_b, auv_b in values:
                if a == b or sr_a < sr_b or auv_a > auv_b or (sr_a == sr_b and auv_a == auv_b):
                    continue
                row = dict(zip(keys, key if isinstance(key, tuple) else (key,), strict=True))
                row.update(agent_a=a, agent_b=b, sr_a=sr_a, sr_b=sr_b, auv_a=auv_a, auv_b=auv_b)
                rows.append(row)
    columns = [*keys, "agent_a", "agent_b", "sr_a", "sr_b", "auv_a", "auv_b"]
    frame = pd.DataFrame(rows, columns=columns)
    return frame.sort_values([*keys, "sr_a", "agent_a", "agent_b"], ascending=[*[True] * len(keys), False, True, True],
                             kind="stable").reset_index(drop=True)  # fmt: skip


#: Agents an environment needs before its radar is drawn: min-max scaling makes any two agents
#: "best" and "worst" whatever their distance; from three on, the middle ones carry information.
RADAR_MIN_AGENTS = 3


def recall_lag_summary(lags: pd.DataFrame) -> pd.DataFrame:
    """Per env, preset and outcome (agents pooled, as the paper pools trajectories): recall
    events, mean and median lag, and the share of lags above 5 steps (the long tail)."""
    rows = []
    for (env_id, preset, outcome), part in lags.groupby(["env_id", "preset", "outcome"]):
        values = np.repeat(part["lag"].to_numpy(int), part["events"].to_numpy(int))
        rows.append({"env_id": env_id, "preset": preset, "outcome": outcome,
                     "events": int(values.size), "mean_lag": float(values.mean()),
                     "median_lag": float(np.median(values)),
                     "share_above_5": float((values > 5).mean())})  # fmt: skip
    frame = pd.DataFrame(rows)
    frame["_order"] = (frame["outcome"] == "fail").astype(int)  # success first, as Figure 7
    return (
        frame.sort_values(["env_id", "preset", "_order"])
        .drop(columns="_order")
        .reset_index(drop=True)
    )


def fmt_number(value: Any) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "-"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def markdown_table(frame: pd.DataFrame, columns: Sequence[str]) -> str:
    if frame.empty:
        return "_(no rows)_"
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for _, row in frame.iterrows():
        lines.append(
            "| "
            + " | ".join(fmt_number(None if pd.isna(row[c]) else row[c]) for c in columns)
            + " |"
        )
    return "\n".join(lines)


def constant_columns(frame: pd.DataFrame, candidates: Sequence[str]) -> list[str]:
    """Candidate columns holding one value on every row of a table of at least two rows."""
    if len(frame) < 2:
        return []
    out = []
    for column in candidates:
        if column in frame and frame[column].nunique(dropna=False) == 1:
            out.append(column)
    return out


#: The paper's environment order in Tables 1, 2 and 6 (others follow, alphabetically).
PAPER_ENV_ORDER = ("BlocksWorld", "FrozenLake", "Sudoku", "AlfWorld", "WebShop")


def _env_label(env_id: str) -> str:
    """``exploreval/FrozenLake-v0`` -> ``FrozenLake`` (the paper's column heads)."""
    name = env_id.rsplit("/", 1)[-1]
    return name.rsplit("-v", 1)[0] if "-v" in name else name


def paper_matrix(
    frame: pd.DataFrame, values: Sequence[tuple[str, str]], row_keys: Sequence[str]
) -> pd.DataFrame:
    """A long TIDE table as the paper prints it: one row per model (``row_keys``), and per
    environment one column per value (``values``: column, heading), in percent with one decimal
    as printed (text cells).

    Environments go in the paper's order; a model missing from an environment gets no value.
    Environments with several presets keep one column group per preset."""
    if frame.empty:
        return pd.DataFrame()
    labels = [
        _env_label(str(e)) + ("" if frame["preset"].nunique() <= 1 else f" ({p})")
        for e, p in zip(frame["env_id"], frame.get("preset", ["-"] * len(frame)), strict=True)
    ]
    part = frame.assign(_env=labels)

    def order(label: str) -> tuple[int, str]:
        base = label.split(" (")[0]
        return (
            PAPER_ENV_ORDER.index(base) if base in PAPER_ENV_ORDER else len(PAPER_ENV_ORDER),
            label,
        )

    envs = sorted(set(labels), key=order)
    models = list(dict.fromkeys(tuple(row) for row in part[list(row_keys)].itertuples(index=False)))
    rows = []
    for model in models:
        mine = part
        for key, value in zip(row_keys, model, strict=True):
            mine = mine[mine[key] == value]
        row: dict[str, Any] = dict(zip(row_keys, model, strict=True))
        for env in envs:
            hit = mine[mine["_env"] == env]
            for column, heading in values:
                value = hit[column].iloc[0] if not hit.empty and column in hit else None
                shown = None if value is None or pd.isna(value) else f"{100 * float(value):.1f}"
                row[f"{env} {heading}"] = shown
        rows.append(row)
    return pd.DataFrame(rows)
