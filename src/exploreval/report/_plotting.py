"""Plot helpers shared by report sections (below the suites, so every suite may use them).

* :func:`merge_identical_series`: series with exactly the same points are drawn once with a
  joint label ("frontier = exploit_first"), so an identical curve never hides another unnoticed.
* :func:`wilson_interval`: a proportion's 95% interval that behaves at n = 1 and at 0 or 1
  (used for error bars on success rates of small groups).
* :func:`save_figure`: a figure written atomically.
* Family options (kept in ``_registry``, re-exported): which cross-suite figures make sense for a
  family (TIDE success curves mean nothing for a bandit, where every episode runs to the horizon
  and "success" is not solving).
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from exploreval.report._registry import disable_tide_curves as disable_tide_curves
from exploreval.report._registry import tide_curves_apply as tide_curves_apply


def merge_identical_series(
    series: Sequence[tuple[str, Any, Any]],
) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """Group series whose x and y are equal; one entry per group, labels joined by " = "."""
    groups: list[tuple[list[str], np.ndarray, np.ndarray]] = []
    for label, xs, ys in series:
        x = np.asarray(xs, dtype=float)
        y = np.asarray(ys, dtype=float)
        for names, gx, gy in groups:
            if (
                gx.shape == x.shape
                and np.array_equal(gx, x, equal_nan=True)
                and np.array_equal(gy, y, equal_nan=True)
            ):
                names.append(label)
                break
        else:
            groups.append(([label], x, y))
    return [(" = ".join(names), x, y) for names, x, y in groups]


def wilson_interval(successes: float, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """Wilson score interval of a proportion (NaN bounds when n = 0)."""
    if n <= 0:
        return (math.nan, math.nan)
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return (max(0.0, centre - half), min(1.0, centre + half))


# -> Any: a matplotlib Legend (matplotlib imported lazily)
def legend_outside(ax: Any, *, fontsize: float = 7, ncol: int = 1, title: str | None = None) -> Any:
    """The axes' legend to the right of its data area, never over a curve, bar or error bar.

    Figures that use it must leave room for it: ``save_figure`` crops to what is drawn
    (``bbox_inches="tight"``), and ``tight_layout``/constrained layout count legends. Returns the
    legend, or None when nothing is labelled.
    """
    handles, labels = ax.get_legend_handles_labels()
    if not handles:
        return None
    return ax.legend(
        handles,
        labels,
        loc="upper left",
        bbox_to_anchor=(1.02, 1.0),
        borderaxespad=0.0,
        fontsize=fontsize,
        ncol=ncol,
        title=title,
        title_fontsize=fontsize,
        frameon=False,
    )


# -> Any: a matplotlib Legend (matplotlib imported lazily)
def figure_legend_below(fig: Any, ax: Any, *, fontsize: float = 7, ncol: int = 4) -> Any:
    """One legend for every panel of a figure (the same series in each), below all panels.

    Use with a constrained-layout figure: ``loc="outside lower center"`` reserves its own row."""
    handles, labels = ax.get_legend_handles_labels()
    if not handles:
        return None
    return fig.legend(
        handles,
        labels,
        loc="outside lower center",
        ncol=max(1, min(ncol, len(labels))),
        fontsize=fontsize,
        frameon=False,
    )


#: Set (to anything) to make :func:`save_figure` refuse a figure whose words collide: the test
#: suite sets it, so every figure any test draws is checked (:func:`text_collisions`).
CHECK_FIGURES_ENV = "EXPLOREVAL_CHECK_FIGURES"


class FigureLayoutError(ValueError):
    """A figure draws a title, axis label or legend over another (``text_collisions``)."""


def text_collisions(fig: Any, *, slack_px: float = 1.0) -> list[str]:
    """Pairs of a figure's words drawn over each other: the figure's title, each panel's title and
    axis labels, and every legend's box. Tick labels are left out (dense axes may touch)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = fig.canvas if hasattr(fig.canvas, "get_renderer") else FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    items: list[tuple[str, Any]] = []
    if fig._suptitle is not None and fig._suptitle.get_text():
        items.append((f"figure title {fig._suptitle.get_text()!r}", fig._suptitle))
    for legend in fig.legends:
        items.append(("figure legend", legend))
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        for text in (ax.title, ax._left_title, ax._right_title, ax.xaxis.label, ax.yaxis.label):
            if text.get_text() and text.get_visible():
                items.append((repr(text.get_text()), text))
        legend = ax.get_legend()
        if legend is not None and legend.get_visible():
            items.append(("a panel's legend", legend))
    boxes = [(name, artist.get_window_extent(renderer)) for name, artist in items]
    out = []
    for i, (name_a, a) in enumerate(boxes):
        for name_b, b in boxes[i + 1 :]:
            w = min(a.x1, b.x1) - max(a.x0, b.x0)
            h = min(a.y1, b.y1) - max(a.y0, b.y0)
            if w > slack_px and h > slack_px:
                out.append(f"{name_a} overlaps {name_b}")
    return out


def save_figure(fig: Any, path: Path, dpi: int = 110, **options: Any) -> Path:
    """Save with everything drawn inside the image, legends outside the axes included (a
    constrained-layout figure already makes room for them; any other is cropped to what is drawn,
    ``bbox_inches="tight"``), written atomically (temp file, fsync, rename): a report being
    rebuilt, or a killed build, never leaves a half-written figure behind. The format is taken
    from the suffix of ``path`` (the temp name ends in ``.tmp``)."""
    from matplotlib.layout_engine import ConstrainedLayoutEngine

    from exploreval.core import write_atomic

    path = Path(path)
    if os.environ.get(CHECK_FIGURES_ENV):
        collisions = text_collisions(fig)
        if collisions:
            raise FigureLayoutError(f"{path.name}: " + "; ".join(collisions))
    fmt = options.pop("format", None) or path.suffix.lstrip(".") or "png"
    if not isinstance(fig.get_layout_engine(), ConstrainedLayoutEngine):
        options.setdefault("bbox_inches", "tight")
        options.setdefault("pad_inches", 0.08)
    write_atomic(path, lambda tmp: fig.savefig(tmp, format=fmt, dpi=dpi, **options))
    return path


def overlap_styles(n: int) -> list[dict[str, Any]]:
    """Line styles for ``n`` series that may coincide over part of their length: each later series
    is thinner and dashed differently, so one drawn over another leaves it visible around it."""
    dashes = ["-", "--", "-.", ":"]
    return [
        {
            "linewidth": max(3.2 - 0.7 * i, 1.0),
            "linestyle": dashes[i % len(dashes)],
            "markersize": max(8.0 - 1.5 * i, 3.0),
        }
        for i in range(n)
    ]
