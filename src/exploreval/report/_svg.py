"""A tiny SVG writer for step views: suites draw server-side, the viewer shows the markup as is.

Only what step views need (rectangles, lines, polylines, circles, text); every attribute and text
is escaped, so labels from a map file or a model cannot inject markup into the viewer.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape


def _attrs(values: dict[str, object]) -> str:
    parts = []
    for key, value in values.items():
        if value is None:
            continue
        if isinstance(value, float):
            value = f"{value:.2f}".rstrip("0").rstrip(".")
        parts.append(f'{key.rstrip("_").replace("_", "-")}="{escape(str(value), quote=True)}"')
    return " ".join(parts)


class Svg:
    """Collects elements; ``str(svg)`` is the document (``viewBox`` sized to ``width x height``)."""

    def __init__(self, width: float, height: float, *, title: str = "", scale: float = 1.0) -> None:
        self.width = width
        self.height = height
        self.title = title
        #: Shown at ``scale`` x its coordinates (a page may still shrink it to fit).
        self.scale = scale
        self.items: list[str] = []

    def rect(self, x: float, y: float, w: float, h: float, **style: object) -> None:
        self.items.append(f"<rect {_attrs({'x': x, 'y': y, 'width': w, 'height': h, **style})}/>")

    def line(self, x1: float, y1: float, x2: float, y2: float, **style: object) -> None:
        self.items.append(f"<line {_attrs({'x1': x1, 'y1': y1, 'x2': x2, 'y2': y2, **style})}/>")

    def circle(self, cx: float, cy: float, r: float, **style: object) -> None:
        self.items.append(f"<circle {_attrs({'cx': cx, 'cy': cy, 'r': r, **style})}/>")

    def polyline(self, points: Sequence[tuple[float, float]], **style: object) -> None:
        coords = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
        self.items.append(f"<polyline {_attrs({'points': coords, 'fill': 'none', **style})}/>")

    def text(self, x: float, y: float, content: object, **style: object) -> None:
        self.items.append(
            f"<text {_attrs({'x': x, 'y': y, **style})}>{escape(str(content))}</text>"
        )

    def __str__(self) -> str:
        title = f"<title>{escape(self.title)}</title>" if self.title else ""
        return (
            f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {self.width:g} {self.height:g}" '
            f'width="{self.width * self.scale:g}" height="{self.height * self.scale:g}" '
            f'font-family="sans-serif" '
            f'font-size="11">{title}{"".join(self.items)}</svg>'
        )
