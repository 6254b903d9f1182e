"""Several profiles side by side: a sortable page of their cards, with paired deltas.

Each run directory holds its card (``card.json``, written by ``exploreval profile``) and its
results. Two profiles are compared only on the same battery and version; a metric's delta is
paired over the episodes both models played (same env id, preset and seed: the battery's
episodes are generated from their seeds, so equal keys are equal instances), with the shared
paired bootstrap (``exploreval.metrics.bootstrap.paired_ci``).
"""

from __future__ import annotations

import html
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from exploreval.core import ProfilePart
from exploreval.profile._card import Card, entry_rows

KEYS = ["env_id", "preset", "seed"]


class LeaderboardError(ValueError):
    """Profiles that cannot be set side by side (no card, another battery)."""


@dataclass(frozen=True)
class Profile:
    card: Card
    frame: pd.DataFrame


@dataclass(frozen=True)
class Delta:
    row: str
    metric: str
    model_a: str
    model_b: str
    pairs: int
    mean: float | None
    low: float | None
    high: float | None


def load_profile(run_dir: Path) -> Profile:
    path = run_dir / "card.json"
    if not path.exists():
        raise LeaderboardError(
            f"{run_dir}: no card.json (make one with `exploreval profile --model M --out "
            f"{run_dir}`)"
        )
    try:
        card = Card.model_validate(json.loads(path.read_text()))
    except ValueError as exc:
        raise LeaderboardError(f"{path}: not a profile card: {exc}") from None
    results = run_dir / "results.parquet"
    frame = pd.read_parquet(results) if results.exists() else pd.DataFrame()
    return Profile(card, frame)


def check_comparable(profiles: list[Profile]) -> None:
    first = profiles[0].card
    for other in profiles[1:]:
        card = other.card
        if (card.battery, card.battery_digest, card.quick) != (
            first.battery,
            first.battery_digest,
            first.quick,
        ):
            raise LeaderboardError(
                f"{card.run_dir} is {card.battery} (digest {card.battery_digest}"
                f"{', quick' if card.quick else ''}) but {first.run_dir} is {first.battery} "
                f"(digest {first.battery_digest}{', quick' if first.quick else ''}): only "
                "profiles of the same battery version are comparable"
            )


def paired_deltas(profiles: list[Profile], parts: list[ProfilePart]) -> list[Delta]:
    """Every later profile against the first, per row and metric, over shared episodes."""
    from exploreval.metrics.bootstrap import paired_ci

    base = profiles[0]
    deltas = []
    for other in profiles[1:]:
        for part in parts:
            for entry, where in zip(
                part.entries(base.card.quick), part.entry_conditions(base.card.quick), strict=True
            ):
                row = str(where.get("row", part.name))
                mine = _mine(entry_rows(base.frame, entry), base.card.model)
                theirs = _mine(entry_rows(other.frame, entry), other.card.model)
                for column in [m.column for m in part.metrics] + [part.success]:
                    if column not in mine or column not in theirs:
                        continue
                    joined = theirs[[*KEYS, column]].merge(
                        mine[[*KEYS, column]], on=KEYS, suffixes=("_other", "_base")
                    )
                    x = pd.to_numeric(joined[f"{column}_other"], errors="coerce").to_numpy(float)
                    y = pd.to_numeric(joined[f"{column}_base"], errors="coerce").to_numpy(float)
                    keep = np.isfinite(x) & np.isfinite(y)
                    mean = low = high = None
                    if keep.any():
                        ci = paired_ci(x[keep], y[keep])
                        mean = float(ci.estimate)
                        low = None if np.isnan(ci.low) else float(ci.low)
                        high = None if np.isnan(ci.high) else float(ci.high)
                    deltas.append(
                        Delta(
                            row,
                            column,
                            other.card.model,
                            base.card.model,
                            int(keep.sum()),
                            mean,
                            low,
                            high,
                        )
                    )
    return deltas


def _mine(frame: pd.DataFrame, model: str) -> pd.DataFrame:
    if frame.empty or "agent" not in frame:
        return frame
    rows = frame[frame["agent"] == model]
    if "status" in rows:
        rows = rows[rows["status"] == "ok"]
    return rows


def _fmt(value: float | None) -> str:
    return "" if value is None else f"{value:.3f}"


_SORT_JS = """
document.querySelectorAll('table.sortable th').forEach((th, col) => th.addEventListener('click', () => {
  const body = th.closest('table').tBodies[0];
  const up = th.dataset.dir !== 'asc'; th.dataset.dir = up ? 'asc' : 'desc';
  const key = r => { const v = r.cells[col].dataset.v; return v === '' ? NaN : (isNaN(+v) ? v : +v); };
  [...body.rows].sort((a, b) => { const x = key(a), y = key(b);
    if (Number.isNaN(x)) return 1; if (Number.isNaN(y)) return -1;
    return (x < y ? -1 : x > y ? 1 : 0) * (up ? 1 : -1); }).forEach(r => body.appendChild(r));
}));
"""


def leaderboard_html(profiles: list[Profile], deltas: list[Delta]) -> str:
    """One page: a row per model, a column per (card row, metric) placement and success,
    sortable by clicking a header; then the paired deltas against the first model."""
    e = html.escape
    columns: list[tuple[str, str, str]] = []  # (card row, column, label)
    for row in profiles[0].card.rows:
        columns.append((row.row, "success", f"{row.row}: success"))
        for cell in row.metrics:
            columns.append((row.row, cell.column, f"{row.row}: {cell.label} (placed)"))
    head = "".join(f"<th title='click to sort'>{e(label)}</th>" for *_, label in columns)
    body = []
    for profile in profiles:
        cells = [f"<td data-v='{e(profile.card.model)}'>{e(profile.card.model)}</td>"]
        by_row = {r.row: r for r in profile.card.rows}
        for row_name, column, _ in columns:
            found = by_row.get(row_name)
            value: float | None = None
            if found is not None and column == "success":
                value = found.success.mean
            elif found is not None:
                metric = next((c for c in found.metrics if c.column == column), None)
                value = None if metric is None else metric.placement
            cells.append(f"<td data-v='{_fmt(value)}'>{_fmt(value) or '-'}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    delta_rows = [
        f"<tr><td data-v='{e(d.row)}'>{e(d.row)}</td><td data-v='{e(d.metric)}'>{e(d.metric)}</td>"
        f"<td data-v='{e(d.model_a)}'>{e(d.model_a)} - {e(d.model_b)}</td>"
        f"<td data-v='{d.pairs}'>{d.pairs}</td><td data-v='{_fmt(d.mean)}'>{_fmt(d.mean) or '-'}"
        f"</td><td data-v='{_fmt(d.low)}'>[{_fmt(d.low)}, {_fmt(d.high)}]</td></tr>"
        for d in deltas
    ]
    first = profiles[0].card
    return (
        "<!doctype html><html><head><meta charset='utf-8'><title>exploreval leaderboard</title>"
        "<style>body{font-family:system-ui,sans-serif;margin:1.5em}table{border-collapse:"
        "collapse;font-size:.85em;margin-bottom:1.5em}td,th{border:1px solid #ccc;padding:"
        ".25em .45em}th{background:#f3f3f3;cursor:pointer}</style></head><body>"
        f"<h1>Leaderboard: {e(first.battery)}{' (quick)' if first.quick else ''}</h1>"
        "<p>Success is the raw rate; every other column is the metric placed between the "
        "row's two reference policies (0 and 1, as on each card). Click a header to sort.</p>"
        f"<table class='sortable' id='board'><thead><tr><th>model</th>{head}</tr></thead>"
        f"<tbody>{''.join(body)}</tbody></table>"
        f"<h2>Paired deltas against {e(first.model)}</h2><p>Raw metric units, over the "
        "episodes both played (same env, preset and seed); 95% paired bootstrap CI.</p>"
        "<table class='sortable' id='deltas'><thead><tr><th>row</th><th>metric</th>"
        "<th>models</th><th>pairs</th><th>delta</th><th>95% CI</th></tr></thead>"
        f"<tbody>{''.join(delta_rows)}</tbody></table>"
        + "".join(
            f"<p><a href='{e(str(Path(p.card.run_dir).resolve() / 'card.html'))}'>"
            f"{e(p.card.model)}'s card</a></p>"
            for p in profiles
        )
        + f"<script>{_SORT_JS}</script></body></html>"
    )
