"""The report API suites write into: report sections, per-step views and per-step annotations
for the viewer.

Building a report from a run (scoring, markdown, HTML) is ``exploreval.analysis``; this package is
what sits below the suites, so a suite can register its tables and figures without importing the
code that builds reports.

Names load on first use (``exploreval.core._lazy``): suite plugins import this package to register
their sections, and ``exploreval --help`` must not pay for numpy (the plot helpers) to do so.
"""

from typing import TYPE_CHECKING

from exploreval.core import lazy_exports

if TYPE_CHECKING:
    from exploreval.report._annotations import (
        STEP_ANNOTATIONS,
        AnnotationValue,
        StepAnnotations,
        StepAnnotationsEntry,
        StepAnnotationsFn,
        register_step_annotations,
        step_annotations,
    )
    from exploreval.report._links import episode_link, episode_url
    from exploreval.report._passk import own_pass_at_k, reports_own_pass_at_k
    from exploreval.report._plotting import (
        figure_legend_below,
        legend_outside,
        merge_identical_series,
        overlap_styles,
        save_figure,
        text_collisions,
        wilson_interval,
    )
    from exploreval.report._registry import (
        REPORT_REGISTRY,
        STEP_VIEWS,
        ReportEntry,
        ReportFn,
        ReportSection,
        StepView,
        StepViewEntry,
        StepViewFn,
        disable_tide_curves,
        register_report,
        register_step_view,
        report_plugins,
        step_view,
        tide_curves_apply,
    )
    from exploreval.report._svg import Svg

_EXPORTS: dict[str, str] = {
    "AnnotationValue": "._annotations",
    "REPORT_REGISTRY": "._registry",
    "ReportEntry": "._registry",
    "ReportFn": "._registry",
    "ReportSection": "._registry",
    "STEP_ANNOTATIONS": "._annotations",
    "STEP_VIEWS": "._registry",
    "StepAnnotations": "._annotations",
    "StepAnnotationsEntry": "._annotations",
    "StepAnnotationsFn": "._annotations",
    "StepView": "._registry",
    "StepViewEntry": "._registry",
    "StepViewFn": "._registry",
    "Svg": "._svg",
    "disable_tide_curves": "._registry",
    "episode_link": "._links",
    "episode_url": "._links",
    "figure_legend_below": "._plotting",
    "text_collisions": "._plotting",
    "legend_outside": "._plotting",
    "merge_identical_series": "._plotting",
    "overlap_styles": "._plotting",
    "own_pass_at_k": "._passk",
    "register_report": "._registry",
    "register_step_annotations": "._annotations",
    "register_step_view": "._registry",
    "report_plugins": "._registry",
    "reports_own_pass_at_k": "._passk",
    "save_figure": "._plotting",
    "step_annotations": "._annotations",
    "step_view": "._registry",
    "tide_curves_apply": "._registry",
    "wilson_interval": "._plotting",
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
__all__ = [
    "AnnotationValue",
    "REPORT_REGISTRY",
    "ReportEntry",
    "ReportFn",
    "ReportSection",
    "STEP_ANNOTATIONS",
    "STEP_VIEWS",
    "StepAnnotations",
    "StepAnnotationsEntry",
    "StepAnnotationsFn",
    "StepView",
    "StepViewEntry",
    "StepViewFn",
    "Svg",
    "disable_tide_curves",
    "episode_link",
    "episode_url",
    "figure_legend_below",
    "text_collisions",
    "legend_outside",
    "merge_identical_series",
    "overlap_styles",
    "own_pass_at_k",
    "register_report",
    "register_step_annotations",
    "register_step_view",
    "report_plugins",
    "reports_own_pass_at_k",
    "save_figure",
    "step_annotations",
    "step_view",
    "tide_curves_apply",
    "wilson_interval",
]
