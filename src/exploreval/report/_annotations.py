"""Per-step annotations for the episode viewer: metric values attached to each step.

A suite (or a cross-suite metric, with family ``"*"``) registers ``fn(record) -> list[dict]``:
one dict per step of ``record.steps`` (same order, same length), each mapping a short name to a
scalar (``str``, ``int``, ``float``, ``bool`` or ``None``). The viewer shows them in the step's
metric panel; the grid registers its explore/exploit case and error flags, TIDE its loop
membership. Names should be prefixed by the suite or metric (``grid.case``, ``tide.loop``) so two
registrations never overwrite each other's values.

Errors in one annotation function are reported (by name) next to the step, never raised: one
broken plugin must not stop the viewer from showing an episode.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from exploreval.core import Registry, current_plugin, load_plugins, resolve

if TYPE_CHECKING:
    from exploreval.core import EpisodeRecord

AnnotationValue = str | int | float | bool | None
#: fn(record) -> one dict of scalars per step of ``record.steps``
StepAnnotationsFn = Callable[["EpisodeRecord"], list[dict[str, AnnotationValue]]]


@dataclass(frozen=True)
class StepAnnotationsEntry:
    name: str
    family: str
    fn: Any
    suite: str = ""

    def compute(self, record: EpisodeRecord) -> list[dict[str, AnnotationValue]]:
        values = resolve(self.fn)(record)
        return validate_annotations(values, len(record.steps), self.label)

    @property
    def label(self) -> str:
        return f"step annotations {self.family}:{self.name}"


#: Keyed ``family:name``.
STEP_ANNOTATIONS: Registry[StepAnnotationsEntry] = Registry("step annotations", loader=load_plugins)


def register_step_annotations(
    family: str, fn: StepAnnotationsFn | str, name: str | None = None
) -> None:
    """Register per-step values for records of ``family`` (``"*"`` = every family).

    ``name`` defaults to the function's name (the part after ``:`` of a ``"module:fn"`` string).
    """
    if name is None:
        name = fn.rpartition(":")[2] if isinstance(fn, str) else getattr(fn, "__name__", "")
    if not name:
        raise ValueError("register_step_annotations: give a name for this function")
    STEP_ANNOTATIONS.register(
        f"{family}:{name}",
        StepAnnotationsEntry(name, family, fn, current_plugin()),
        replace=True,
    )


def annotation_plugins(family: str) -> list[StepAnnotationsEntry]:
    """The entries that apply to ``family``: its own first, then the ``"*"`` ones."""
    entries = [e for e in STEP_ANNOTATIONS.values() if e.family in (family, "*")]
    return sorted(entries, key=lambda e: (e.family == "*", e.name))


def validate_annotations(
    values: Any, n_steps: int, source: str
) -> list[dict[str, AnnotationValue]]:
    """Check the shape ``fn`` returned; the error names the function, the step and the key."""
    if not isinstance(values, list):
        raise TypeError(f"{source} returned {type(values).__name__}, expected a list of dicts")
    if len(values) != n_steps:
        raise ValueError(f"{source} returned {len(values)} dicts for {n_steps} steps")
    out: list[dict[str, AnnotationValue]] = []
    for index, item in enumerate(values):
        if not isinstance(item, dict):
            raise TypeError(f"{source}: step {index} is {type(item).__name__}, expected a dict")
        row: dict[str, AnnotationValue] = {}
        for key, value in item.items():
            if not isinstance(key, str):
                raise TypeError(f"{source}: step {index} has a non-text key {key!r}")
            if hasattr(value, "item") and not isinstance(value, str | bytes):
                value = value.item()  # numpy scalars
            if value is not None and not isinstance(value, str | int | float | bool):
                raise TypeError(
                    f"{source}: step {index} key {key!r} is {type(value).__name__}, "
                    "expected str, int, float, bool or None"
                )
            if isinstance(value, float) and not math.isfinite(value):
                value = None  # JSON has no NaN; the viewer shows it as empty
            row[key] = value
        out.append(row)
    return out


@dataclass
class StepAnnotations:
    """Merged annotations of one record: ``steps[i]`` for step i, plus per-function errors."""

    steps: list[dict[str, AnnotationValue]]
    errors: dict[str, str] = field(default_factory=dict)


def step_annotations(record: EpisodeRecord) -> StepAnnotations:
    """Every registered annotation of ``record`` merged per step (failures go to ``errors``)."""
    merged: list[dict[str, AnnotationValue]] = [{} for _ in record.steps]
    errors: dict[str, str] = {}
    for entry in annotation_plugins(record.family):
        try:
            values = entry.compute(record)
        except Exception as exc:  # one broken plugin must not hide the episode
            errors[f"{entry.family}:{entry.name}"] = f"{type(exc).__name__}: {exc}"
            continue
        for row, extra in zip(merged, values, strict=True):
            row.update(extra)
    return StepAnnotations(merged, errors)
