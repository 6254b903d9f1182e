"""The papers' own models as reference marks: published values kept as data.

Each paper's file under ``references/`` lists the model results it prints as text (a table or a
sentence), with the table or figure number, the value as printed, the value in exploreval's
unit, and the conditions it was measured under. A card draws a mark beside a row only when the
row measures the same metric under the same conditions (every condition the mark names, except
its sample size, equal to the row's); otherwise the mark is listed as left out, with the
conditions that differ. ``tests/profile/test_references.py`` checks every value against the
paper's printed rows.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

REFERENCES = Path(__file__).parent / "references"
#: Condition keys that say how many episodes a number was averaged over, not what was measured:
#: a mark from 10 replicates and a row from 40 measure the same quantity.
SAMPLE_SIZE_KEYS = frozenset(
    {"replicates", "maps", "n", "episodes", "seeds", "instances_n", "runs"}
)


class ReferenceMark(BaseModel):
    model_config = ConfigDict(extra="allow")

    source: str = Field(description="table or figure as printed")
    model: str
    configuration: str | None = None
    metric: str = Field(description="the exploreval column it is comparable with")
    printed: str = Field(description="the value exactly as printed")
    value: float = Field(description="in exploreval's unit")
    conditions: dict[str, Any] = Field(default_factory=dict)
    excerpt: str = Field(description="fixture file holding the printed row")


class PaperReferences(BaseModel):
    model_config = ConfigDict(extra="forbid")

    paper: str
    citation: str
    marks: list[ReferenceMark]


@cache
def paper_references(paper: str) -> PaperReferences | None:
    path = REFERENCES / f"{paper}.json"
    if not path.exists():
        return None
    try:
        return PaperReferences.model_validate(json.loads(path.read_text()))
    except (ValueError, TypeError) as exc:
        raise ValueError(f"{path}: not a reference file: {exc}") from exc


def all_references() -> dict[str, PaperReferences]:
    papers = sorted(p.stem for p in REFERENCES.glob("*.json"))
    return {p: refs for p in papers if (refs := paper_references(p)) is not None}


def condition_mismatch(mark: ReferenceMark, row_conditions: dict[str, Any]) -> list[str]:
    """The conditions that keep ``mark`` off a row: each ``key: paper vs battery``."""
    differ = []
    for key, value in mark.conditions.items():
        if key in SAMPLE_SIZE_KEYS:
            continue
        ours = row_conditions.get(key)
        if _norm(ours) != _norm(value):
            differ.append(f"{key}: {value} in the paper, {'unset' if ours is None else ours} here")
    return differ


# -> Any: a condition's value as JSON holds it (a string, a number, a list...)
def _norm(value: Any) -> Any:
    if isinstance(value, str):
        return value.strip().lower()
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value
