"""The card: one model's exploration profile, computed from a battery run's results.

A row per paradigm (puzzles: per puzzle), each with its headline exploration metrics and task
success, every value a mean over the model's episodes with a 95% CI (the shared bootstrap of
``exploreval.metrics.bootstrap``). Each metric is also placed on a 0-1 scale between the part's
two reference policies, measured on the same episodes in the same run: ``(model - floor) /
(ceiling - floor)``, so 0 reads "as the floor policy" and 1 "as the ceiling policy", whichever
way the metric points. The placement's interval is the model's interval mapped through the
references' means (the scripted references' own sampling error is left out: they are the ruler,
not the thing measured). Where the references tie, no placement is given, and the card says so.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field

from exploreval.core import ProfilePart
from exploreval.profile._references import condition_mismatch, paper_references

CARD_SCHEMA_VERSION = 1
#: References closer than this leave the placement undefined (a 0-width ruler).
TIE = 1e-9


class Estimate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    n: int
    mean: float | None
    low: float | None
    high: float | None


class ReferenceValue(BaseModel):
    model_config = ConfigDict(extra="forbid")

    label: str
    mean: float | None
    n: int


class Mark(BaseModel):
    """A paper's published value beside the row (``drawn``), or why it is not."""

    model_config = ConfigDict(extra="forbid")

    paper: str
    source: str
    model: str
    configuration: str | None
    printed: str
    value: float
    drawn: bool
    reason: str = ""


class MetricCell(BaseModel):
    model_config = ConfigDict(extra="forbid")

    column: str
    label: str
    meaning: str
    higher_is_better: bool
    model: Estimate
    floor: ReferenceValue
    ceiling: ReferenceValue
    placement: float | None = Field(description="0 = floor policy, 1 = ceiling policy")
    placement_low: float | None
    placement_high: float | None
    scale: str = Field(description="what 0 and 1 mean")
    note: str = ""
    marks: list[Mark] = Field(default_factory=list)


class CardRow(BaseModel):
    model_config = ConfigDict(extra="forbid")

    part: str
    row: str
    paradigm: str
    description: str
    conditions: dict[str, Any]
    success_column: str
    success: Estimate
    references_success: list[ReferenceValue]
    metrics: list[MetricCell]
    #: what the row shows at a glance: "explores and succeeds", "succeeds without exploring"...
    reading: str


class Usage(BaseModel):
    model_config = ConfigDict(extra="forbid")

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None


class Card(BaseModel):
    """The card's JSON record (``card.json``); ``exploreval profile --schema`` prints its
    schema."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = CARD_SCHEMA_VERSION
    battery: str
    battery_digest: str
    quick: bool
    model: str
    run_dir: str
    package_version: str
    made_at: str
    rows: list[CardRow]
    usage: Usage = Field(default_factory=Usage)
    plan: dict[str, Any] | None = None


def _estimate(values: np.ndarray) -> Estimate:
    from exploreval.metrics.bootstrap import mean_ci

    finite = values[np.isfinite(values)]
    if not finite.size:
        return Estimate(n=0, mean=None, low=None, high=None)
    ci = mean_ci(finite)
    return Estimate(
        n=int(finite.size),
        mean=float(ci.estimate),
        low=None if math.isnan(ci.low) else float(ci.low),
        high=None if math.isnan(ci.high) else float(ci.high),
    )


def _column(frame: pd.DataFrame, column: str) -> np.ndarray:
    if column not in frame or frame.empty:
        return np.array([], dtype=float)
    return np.asarray(pd.to_numeric(frame[column], errors="coerce"), dtype=float)


def _reference(frame: pd.DataFrame, label: str, column: str) -> ReferenceValue:
    values = _column(frame[frame["agent"] == label], column)
    finite = values[np.isfinite(values)]
    return ReferenceValue(
        label=label, mean=float(finite.mean()) if finite.size else None, n=int(finite.size)
    )


def entry_rows(frame: pd.DataFrame, entry: dict[str, Any]) -> pd.DataFrame:
    """The results rows of one suite entry: its env id, presets and seeds."""
    if frame.empty:
        return frame
    mask = frame["env_id"] == entry["env_id"]
    presets = entry.get("presets")
    if presets and presets != [None]:
        mask &= frame["preset"].isin(presets)
    mask &= frame["seed"].isin(list(entry.get("seeds") or [0]))
    rows: pd.DataFrame = frame[mask]
    return rows


def _placement(
    model: Estimate, floor: ReferenceValue, ceiling: ReferenceValue
) -> tuple[float | None, float | None, float | None, str]:
    if model.mean is None:
        return None, None, None, "the metric is undefined on every one of its episodes"
    if floor.mean is None or ceiling.mean is None:
        missing = floor if floor.mean is None else ceiling
        return None, None, None, f"{missing.label} has no value on these episodes"
    base, span = floor.mean, ceiling.mean - floor.mean
    if abs(span) < TIE:
        return None, None, None, f"{floor.label} and {ceiling.label} tie on these episodes"
    place = (model.mean - base) / span
    if model.low is None or model.high is None:
        return place, None, None, ""
    ends = sorted(((model.low - base) / span, (model.high - base) / span))
    return place, ends[0], ends[1], ""


def _reading(success: Estimate, cells: list[MetricCell]) -> str:
    """The row in words, from success and the mean placement of its exploration metrics."""
    placed = [c.placement for c in cells if c.placement is not None and c.column != "resolved"]
    if success.mean is None or not placed:
        return "not enough episodes to say"
    explores = float(np.mean(placed)) >= 0.5
    succeeds = success.mean >= 0.5
    return {
        (True, True): "explores and succeeds",
        (True, False): "explores without succeeding",
        (False, True): "succeeds without exploring",
        (False, False): "neither explores nor succeeds",
    }[(explores, succeeds)]


def card_rows(
    frame: pd.DataFrame, parts: Sequence[ProfilePart], *, model: str, quick: bool
) -> list[CardRow]:
    rows: list[CardRow] = []
    for part in parts:
        groups: dict[str, list[tuple[dict[str, Any], dict[str, Any]]]] = {}
        for entry, where in zip(part.entries(quick), part.entry_conditions(quick), strict=True):
            groups.setdefault(str(where.get("row", part.name)), []).append((entry, where))
        refs = paper_references(part.paper)
        for row_name, members in groups.items():
            part_frame = (
                pd.concat([entry_rows(frame, e) for e, _ in members]) if len(frame) else frame
            )
            conditions = {k: v for k, v in members[0][1].items() if k != "row"}
            mine = part_frame[part_frame["agent"] == model] if len(part_frame) else part_frame
            cells = []
            for metric in part.metrics:
                estimate = _estimate(_column(mine, metric.column))
                floor = _reference(part_frame, metric.floor, metric.column)
                ceiling = _reference(part_frame, metric.ceiling, metric.column)
                place, low, high, note = _placement(estimate, floor, ceiling)
                marks = []
                for mark in refs.marks if refs else []:
                    if mark.metric != metric.column:
                        continue
                    differ = condition_mismatch(mark, conditions)
                    marks.append(
                        Mark(
                            paper=part.paper,
                            source=mark.source,
                            model=mark.model,
                            configuration=mark.configuration,
                            printed=mark.printed,
                            value=mark.value,
                            drawn=not differ,
                            reason="; ".join(differ),
                        )
                    )
                cells.append(
                    MetricCell(
                        column=metric.column,
                        label=metric.label,
                        meaning=metric.meaning,
                        higher_is_better=metric.higher_is_better,
                        model=estimate,
                        floor=floor,
                        ceiling=ceiling,
                        placement=place,
                        placement_low=low,
                        placement_high=high,
                        scale=f"0 = as {metric.floor}, 1 = as {metric.ceiling}",
                        note=note,
                        marks=marks,
                    )
                )
            success = _estimate(_column(mine, part.success))
            labels = dict.fromkeys(str(r.get("label") or r["agent"]) for r in part.references)
            rows.append(
                CardRow(
                    part=part.name,
                    row=row_name,
                    paradigm=part.paradigm,
                    description=(
                        f"--quick, a small version of: {part.description}"
                        if quick
                        else part.description
                    ),
                    conditions=conditions,
                    success_column=part.success,
                    success=success,
                    references_success=[
                        _reference(part_frame, label, part.success) for label in labels
                    ],
                    metrics=cells,
                    reading=_reading(success, cells),
                )
            )
    return rows
