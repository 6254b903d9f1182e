"""What suites register into the report: sections (tables, figures) and per-step views.

* A **report section** function gets the records of its family (or every record for ``"*"``), their
  rows of the results table and the output directory, and returns :class:`ReportSection` objects
  (markdown plus the files it wrote).
* A **step view** function draws one step of one episode for the episode viewer (a grid map with
  the path, a bandit's arm history, a puzzle board, a terminal screen, a TextWorld map) as SVG,
  HTML or preformatted text.

Both registries accept ``"module:function"`` strings, imported on first use.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from exploreval.core import Registry, current_plugin, load_plugins, resolve

if TYPE_CHECKING:
    import pandas as pd

    from exploreval.core import EpisodeRecord


@dataclass
class ReportSection:
    """What a report plugin produced: a title, markdown text, and files it wrote."""

    title: str
    markdown: str = ""
    files: list[Path] = field(default_factory=list)


#: fn(records of the family, their rows of the results table, output dir) -> sections; with
#: ``uses_tables=True`` also ``tables=`` (see ``register_report``).
ReportFn = Callable[..., list[ReportSection]]


@dataclass(frozen=True)
class ReportEntry:
    name: str
    family: str
    fn: Any
    suite: str = ""
    uses_tables: bool = False

    def run(
        self,
        records: Sequence[EpisodeRecord],
        rows: pd.DataFrame,
        out_dir: Path,
        tables: Mapping[str, pd.DataFrame] | None = None,
    ) -> list[ReportSection]:
        fn = resolve(self.fn)
        sections: list[ReportSection] = (
            fn(records, rows, out_dir, tables=tables)
            if self.uses_tables
            else fn(records, rows, out_dir)
        )
        return sections


#: Keyed ``family:name`` (``family`` = an env family or ``"*"``).
REPORT_REGISTRY: Registry[ReportEntry] = Registry("report section", loader=load_plugins)


def register_report(
    family: str, name: str, fn: ReportFn | str, *, uses_tables: bool = False
) -> None:
    """Register a report plugin for ``family`` (``"*"`` = every run).

    ``fn(records, rows, out_dir)`` gets the records of its family (every record for ``"*"``),
    their rows of the results table and the report directory. With ``uses_tables=True`` it is
    also given ``tables=``: the run-level metric tables (``exploreval.metrics.run_metrics``) of
    every record of the run, by name, as ``score`` stored them in ``tables/``, so that a section
    draws from them instead of recomputing them (on a 100,000-episode run that is most of a
    report's time); ``None`` when the report cannot give them (several runs in one report), and
    the section then computes what it needs from the records. A stored table covers every family
    of the run: a section keeps the rows of its own families."""
    REPORT_REGISTRY.register(
        f"{family}:{name}",
        ReportEntry(name, family, fn, current_plugin(), uses_tables),
        replace=True,
    )


def report_plugins() -> list[ReportEntry]:
    """Every report section, ``"*"`` ones last (a suite's own sections come first)."""
    entries = REPORT_REGISTRY.values()
    return sorted(entries, key=lambda e: (e.family == "*", e.family, e.name))


@dataclass
class StepView:
    """One step drawn for the viewer: ``svg`` / ``html`` markup or preformatted ``text``."""

    kind: Literal["svg", "html", "text"]
    content: str
    caption: str = ""


#: fn(record, step index (-1 = before the first step)) -> StepView or None
StepViewFn = Callable[["EpisodeRecord", int], "StepView | None"]


@dataclass(frozen=True)
class StepViewEntry:
    family: str
    fn: Any
    suite: str = ""

    def render(self, record: EpisodeRecord, index: int) -> StepView | None:
        view: StepView | None = resolve(self.fn)(record, index)
        return view


STEP_VIEWS: Registry[StepViewEntry] = Registry("step view", loader=load_plugins)


def register_step_view(family: str, fn: StepViewFn | str) -> None:
    """Register the viewer's picture of a step for records of ``family``."""
    STEP_VIEWS.register(family, StepViewEntry(family, fn, current_plugin()), replace=True)


def step_view(record: EpisodeRecord, index: int) -> StepView | None:
    """The registered picture of step ``index`` of ``record`` (None when its suite has none)."""
    entry = STEP_VIEWS.find(record.family)
    return entry.render(record, index) if entry is not None else None


# TIDE's figures apply to every family; so does pass@k over repeats (metrics' "pass_at_k" table).
register_report("*", "tide", "exploreval.report._tide:tide_report", uses_tables=True)
register_report("*", "pass_at_k", "exploreval.report._passk:pass_at_k_report", uses_tables=True)


def _register_cross_suite_annotations() -> None:
    # By reference: ``report`` and ``metrics`` are independent layers, the string is resolved on use.
    from exploreval.report._annotations import register_step_annotations

    register_step_annotations(
        "*", "exploreval.metrics._tide_steps:loop_step_annotations", name="tide_loops"
    )


_register_cross_suite_annotations()


#: Families for which TIDE's success curves and LR-vs-AUV scatter mean nothing (bandits: every
#: episode runs to the horizon, and "success" is not solving). Here, not in ``_plotting``, so a
#: plugin declares it without importing numpy.
_NO_TIDE_CURVES: set[str] = set()


def disable_tide_curves(family: str) -> None:
    """Declare that TIDE's success curves and LR-vs-AUV scatter mean nothing for ``family``."""
    _NO_TIDE_CURVES.add(family)


def tide_curves_apply(family: str) -> bool:
    return family not in _NO_TIDE_CURVES
