"""Trajectory pictures in the style of Appendix F: map, node states, path, error marks.

Each frame shows the true map at time t: obstacles, the start, every node coloured by its
status at t (undiscovered / discovered / achieved; Eq. 3), cells visited so far, the path
taken so far, and a mark on every cell entered by a move the explore/exploit metric flags as
an error (red = exploration error, blue = exploitation error, purple = both). A side panel
lists the step's case, the running error counts and the task DAG with node states.

Works from a task plus a position list, so it renders stored records and bare trajectories
alike. The metric is imported lazily: without ``exploreval.suites.grid.explore_exploit`` the
pictures are drawn without error marks and ``RenderResult.note`` says so.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from exploreval.core import EpisodeRecord
from exploreval.suites.grid._metrics import record_positions
from exploreval.suites.grid._task import Cell, GridTask

_COLOURS = {
    "obstacle": "#3a3a3a",
    "free": "#ffffff",
    "visited": "#dbe9f6",
    "undiscovered": "#c8c8c8",
    "discovered": "#f5a623",
    "achieved": "#3cb44b",
    "path": "#7b3fa0",
    "explore": "#d62728",
    "exploit": "#1f77b4",
    "both": "#9b30ff",
}
CASE_TEXT = {
    1: "case 1: nothing pending -> explore",
    2: "case 2: goal pending -> exploit",
    3: "case 3: map exhausted -> exploit",
    4: "case 4: explore or exploit",
}


@dataclass
class RenderResult:
    """Files written and any caveat (e.g. error marks unavailable)."""

    pngs: list[Path] = field(default_factory=list)
    gif: Path | None = None
    note: str | None = None
    errors: dict[str, int] = field(default_factory=dict)


def replay_statuses(
    task: GridTask, positions: Sequence[Cell]
) -> tuple[list[frozenset[str]], list[frozenset[str]]]:
    """Seen and achieved node sets at every t (Eq. 3-4) from the positions alone."""
    seen: set[str] = set()
    achieved: set[str] = set()
    seen_at: list[frozenset[str]] = []
    achieved_at: list[frozenset[str]] = []
    previous: Cell | None = None
    for cell in positions:
        node_id = task.node_at.get(tuple(cell))  # type: ignore[arg-type]
        if node_id is not None and cell != previous:
            seen.add(node_id)
            if node_id not in achieved and task.node_by_id[node_id].precondition_met(achieved):
                achieved.add(node_id)
        seen_at.append(frozenset(seen))
        achieved_at.append(frozenset(achieved))
        previous = cell
    return seen_at, achieved_at


def key_frames(n_moves: int) -> list[int]:
    """Appendix F's frame times: t = 0..5, every 10 up to 50, every 50 after, and the end."""
    times = {t for t in range(6)} | set(range(10, 51, 10)) | set(range(100, n_moves + 1, 50))
    times.add(n_moves)
    return sorted(t for t in times if t <= n_moves)


# -> Any: a field of a record or of its JSON dump (either shape)
def _field(item: Any, name: str, default: Any = None) -> Any:
    if isinstance(item, dict):
        return item.get(name, default)
    return getattr(item, name, default)


def score_for_pictures(
    task: GridTask, positions: Sequence[Cell]
) -> tuple[list[dict[str, Any]] | None, str | None]:
    """Per-move metric records (as dicts) from the explore/exploit metric, or (None, why)."""
    try:
        from exploreval.suites.grid.explore_exploit import score_trajectory
    except ImportError as exc:
        return None, (
            f"error marks unavailable: exploreval.suites.grid.explore_exploit is not installed ({exc})"
        )
    try:
        score = score_trajectory(task, [tuple(p) for p in positions])
    except Exception as exc:  # a metric bug must not cost the picture
        return (
            None,
            f"error marks unavailable: score_trajectory failed ({type(exc).__name__}: {exc})",
        )
    steps = []
    for item in _field(score, "steps", []) or []:
        steps.append(
            {
                name: _field(item, name)
                for name in ("t", "case", "error", "explore_error", "exploit_error", "stale")
            }
        )
    return steps, None


def _rgb(hex_colour: str) -> tuple[int, int, int]:
    return (int(hex_colour[1:3], 16), int(hex_colour[3:5], 16), int(hex_colour[5:7], 16))


class _Canvas:
    """Draws frames of one trajectory fast.

    matplotlib renders the static picture once (map, grid, ticks, title, node names, the
    start); every frame is then composed with Pillow on a copy of that bitmap: visited-cell
    shading (translucent, so grid and names stay readable), node discs coloured by state, the
    path, error marks, the agent and the side panel. Text rasterisation dominated a pure
    matplotlib redraw; this keeps a frame at a few milliseconds.
    """

    WIDTH_IN, HEIGHT_IN, DPI = 8.6, 4.6, 90

    def __init__(
        self,
        task: GridTask,
        positions: Sequence[Cell],
        labels: dict[str, str],
        title: str,
        steps: list[dict[str, Any]] | None,
    ) -> None:
        from matplotlib import font_manager
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.colors import to_rgba
        from matplotlib.figure import Figure
        from PIL import Image, ImageFont

        self.task, self.positions, self.labels, self.steps = task, positions, labels, steps
        self.seen_at, self.achieved_at = replay_statuses(task, positions)
        w, h = task.width, task.height
        fig = Figure(figsize=(self.WIDTH_IN, self.HEIGHT_IN), dpi=self.DPI)
        canvas = FigureCanvasAgg(fig)  # no pyplot: no global state, no GUI backend
        ax = fig.add_axes((0.04, 0.06, 0.5, 0.84))
        fig.suptitle(title, fontsize=9.5, x=0.29, y=0.975)
        base = np.zeros((h, w, 4))
        traversable = task.traversable.T  # [y, x]
        base[traversable] = to_rgba(_COLOURS["free"])
        base[~traversable] = to_rgba(_COLOURS["obstacle"])
        ax.imshow(
            base, origin="lower", extent=(-0.5, w - 0.5, -0.5, h - 0.5), interpolation="nearest"
        )
        ax.set_xticks(range(w))
        ax.set_yticks(range(h))
        ax.set_xticks(np.arange(-0.5, w, 1), minor=True)
        ax.set_yticks(np.arange(-0.5, h, 1), minor=True)
        ax.grid(which="minor", color="#9a9a9a", linewidth=0.5)
        ax.tick_params(which="both", labelsize=7, length=0)
        ax.set_xlim(-0.5, w - 0.5)
        ax.set_ylim(-0.5, h - 0.5)
        sx, sy = task.start
        ax.text(sx, sy, "S", ha="center", va="center", fontsize=11, weight="bold")
        canvas.draw()  # type: ignore[no-untyped-call]  # (untyped in matplotlib's own stubs)
        rgba = canvas.buffer_rgba()  # type: ignore[no-untyped-call]
        self.background = Image.fromarray(np.asarray(rgba).copy()).convert("RGBA")
        height_px = self.background.height
        # Data -> pixel is affine per axis; resolve it once (matplotlib transforms are slow).
        (ox, oy), (ux, uy) = ax.transData.transform([(0.0, 0.0), (1.0, 1.0)])
        ox, oy, sx_px, sy_px = float(ox), float(height_px - oy), float(ux - ox), float(uy - oy)

        def to_px(x: float, y: float) -> tuple[float, float]:
            return ox + x * sx_px, oy - y * sy_px

        self.to_px = to_px
        self.cell_px = (abs(sx_px), abs(sy_px))
        self.panel_xy = (self.background.width * 0.56, self.background.height * 0.06)
        mono = font_manager.findfont("DejaVu Sans Mono")
        self.panel_font = ImageFont.truetype(mono, 10)
        label_size = int(max(8, min(12, min(self.cell_px) * 0.2)))
        self.label_font = ImageFont.truetype(font_manager.findfont("DejaVu Sans"), label_size)
        self.label_text = {
            n.id: (labels[n.id] if len(labels[n.id]) <= 10 else labels[n.id][:9] + "…")
            for n in task.nodes
        }
        self.node_ids = [n.id for n in task.nodes]
        fig.clear()

    def _disc(
        self, draw: Any, cell: Cell, radius: float, fill: Any, outline: Any, width: int
    ) -> None:
        cx, cy = self.to_px(*cell)
        draw.ellipse(
            (cx - radius, cy - radius, cx + radius, cy + radius),
            fill=fill,
            outline=outline,
            width=width,
        )

    # -> Any: a PIL image (Pillow's stubs are optional)
    def frame(self, t: int) -> Any:
        from PIL import Image, ImageDraw

        task, positions = self.task, self.positions
        cw, ch = self.cell_px
        shade = Image.new("RGBA", self.background.size, (0, 0, 0, 0))
        shade_draw = ImageDraw.Draw(shade)
        visited_rgba = (*_rgb(_COLOURS["visited"]), 150)
        for x, y in {tuple(p) for p in positions[: t + 1]}:
            cx, cy = self.to_px(x, y)
            shade_draw.rectangle(
                (cx - cw / 2 + 1, cy - ch / 2 + 1, cx + cw / 2 - 1, cy + ch / 2 - 1),
                fill=visited_rgba,
            )
        image = Image.alpha_composite(self.background, shade)
        draw = ImageDraw.Draw(image)
        seen, achieved = self.seen_at[t], self.achieved_at[t]
        radius = max(4.0, min(cw, ch) * 0.2)
        for node in task.nodes:
            state = (
                "achieved"
                if node.id in achieved
                else "discovered"
                if node.id in seen
                else "undiscovered"
            )
            goal = node.id == task.goal
            self._disc(
                draw,
                node.cell,
                radius * (1.25 if goal else 1.0),
                _rgb(_COLOURS[state]),
                (184, 134, 11) if goal else (51, 51, 51),
                3 if goal else 1,
            )
        for node in task.nodes:  # names below the discs, above the shading
            cx, cy = self.to_px(node.cell[0], node.cell[1] - 0.36)
            box = draw.textbbox(
                (cx, cy), self.label_text[node.id], font=self.label_font, anchor="mm"
            )
            draw.rectangle((box[0] - 1, box[1] - 1, box[2] + 1, box[3] + 1), fill=(255, 255, 255))
            draw.text(
                (cx, cy),
                self.label_text[node.id],
                fill=(17, 17, 17),
                font=self.label_font,
                anchor="mm",
            )
        path = [self.to_px(*p) for p in positions[: t + 1]]
        if len(path) > 1:
            draw.line(path, fill=(*_rgb(_COLOURS["path"]), 255), width=2, joint="curve")
        counts = {"explore": 0, "exploit": 0}
        case_now = stale_now = None
        if self.steps is not None:
            arm = max(3.0, min(cw, ch) * 0.12)
            for record in self.steps[:t]:
                explore = bool(record.get("explore_error"))
                exploit = bool(record.get("exploit_error"))
                counts["explore"] += explore
                counts["exploit"] += exploit
                if explore or exploit:
                    kind = "both" if explore and exploit else "explore" if explore else "exploit"
                    cell = positions[int(record.get("t", 0)) + 1]
                    mx, my = self.to_px(cell[0] + 0.28, cell[1] + 0.28)
                    colour = _rgb(_COLOURS[kind])
                    draw.line((mx - arm, my - arm, mx + arm, my + arm), fill=colour, width=3)
                    draw.line((mx - arm, my + arm, mx + arm, my - arm), fill=colour, width=3)
            if t < len(self.steps):
                case_now = self.steps[t].get("case")
                stale_now = self.steps[t].get("stale")
        here = positions[t]
        self._disc(draw, here, radius * 0.75, _rgb(_COLOURS["path"]), (255, 255, 255), 2)
        draw.multiline_text(
            self.panel_xy,
            self._panel_text(t, seen, achieved, counts, case_now, stale_now),
            fill=(20, 20, 20),
            font=self.panel_font,
            spacing=3,
        )
        return image.convert("RGB")

    def _panel_text(
        self,
        t: int,
        seen: frozenset[str],
        achieved: frozenset[str],
        counts: dict[str, int],
        case_now: Any,
        stale_now: Any,
    ) -> str:
        task = self.task
        n_moves = len(self.positions) - 1
        pending = [
            self.labels[n]
            for n in self.node_ids
            if n in seen and n not in achieved and task.node_by_id[n].precondition_met(achieved)
        ]
        lines = [
            f"t = {t} / {n_moves}   position {list(self.positions[t])}",
            f"budget {task.step_budget}   goal {self.labels[task.goal]}"
            + ("  ACHIEVED" if task.goal in achieved else ""),
        ]
        if self.steps is not None:
            if case_now is not None:
                lines.append(f"next move: {CASE_TEXT.get(int(case_now), f'case {case_now}')}")
            if stale_now is not None:
                lines.append(f"stale score S_t = {stale_now}")
            lines.append(f"errors so far: explore {counts['explore']}, exploit {counts['exploit']}")
        lines.append(f"pending: {', '.join(pending) or '-'}")
        lines.append("")
        lines.append("task DAG (. undiscovered, ? discovered, + achieved)")
        for node in task.nodes:
            mark = "+" if node.id in achieved else "?" if node.id in seen else "."
            if not node.requires:
                needs = "-"
            elif len(node.requires) == 1:
                needs = " AND ".join(self.labels[p] for p in node.requires[0])
            else:
                needs = " OR ".join(
                    "(" + " AND ".join(self.labels[p] for p in opt) + ")" for opt in node.requires
                )
            goal = " [goal]" if node.id == task.goal else ""
            lines.append(f" {mark} {self.labels[node.id]}{goal} <- {needs}")
        wrapped: list[str] = []
        for line in lines:
            wrapped.extend(textwrap.wrap(line, 58, subsequent_indent="      ") or [""])
        return "\n".join(wrapped)


def _labels(task: GridTask, naming: str) -> dict[str, str]:
    return {n.id: (n.label if naming == "semantic" else n.id) for n in task.nodes}


def render_trajectory(
    task: GridTask,
    positions: Sequence[Cell],
    out_dir: str | Path,
    *,
    stem: str = "trajectory",
    frames: str | Sequence[int] = "key",
    gif: bool = True,
    max_gif_frames: int = 120,
    frame_ms: int = 250,
    title: str = "",
    naming: str = "semantic",
) -> RenderResult:
    """Write PNG frames (``frames``: "key", "last", "all", "none" or a list of t) and a GIF."""
    if not positions:
        raise ValueError("a trajectory needs at least the start position")
    for i, cell in enumerate(positions):
        if not task.is_traversable((int(cell[0]), int(cell[1]))):
            raise ValueError(f"positions[{i}] {list(cell)} is not a traversable cell of the map")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    positions = [(int(p[0]), int(p[1])) for p in positions]
    n_moves = len(positions) - 1
    if isinstance(frames, str):
        chosen = {
            "key": key_frames(n_moves),
            "last": [n_moves],
            "all": list(range(n_moves + 1)),
            "none": [],
        }.get(frames)
        if chosen is None:
            raise ValueError(f"frames must be key, last, all, none or a list of t, got {frames!r}")
    else:
        chosen = sorted({int(t) for t in frames})
        bad = [t for t in chosen if not 0 <= t <= n_moves]
        if bad:
            raise ValueError(f"frame times {bad} are outside 0..{n_moves}")
    steps, note = score_for_pictures(task, positions)
    result = RenderResult(note=note)
    if steps is not None:
        result.errors = {
            "explore": sum(bool(s.get("explore_error")) for s in steps),
            "exploit": sum(bool(s.get("exploit_error")) for s in steps),
        }
    canvas = _Canvas(task, positions, _labels(task, naming), title, steps)
    from PIL import Image

    for t in chosen:
        path = out / f"{stem}_t{t:04d}.png"
        canvas.frame(t).save(path)
        result.pngs.append(path)
    if gif:
        times = list(range(n_moves + 1))
        if len(times) > max_gif_frames:
            picks = np.linspace(0, n_moves, max_gif_frames).round().astype(int)
            times = sorted({int(t) for t in picks})
        # One shared palette (last frame + every legend colour) keeps colours stable across
        # frames and makes per-frame quantisation a cheap lookup.
        swatches = canvas.frame(n_moves)
        for i, colour in enumerate(_COLOURS.values()):
            swatches.paste(_rgb(colour), (i * 4, 0, i * 4 + 4, 4))
        palette = swatches.quantize(colors=128, method=Image.Quantize.FASTOCTREE)
        images = [
            canvas.frame(t).quantize(palette=palette, dither=Image.Dither.NONE) for t in times
        ]
        durations = [frame_ms] * (len(images) - 1) + [max(frame_ms, 2000)]
        gif_path = out / f"{stem}.gif"
        images[0].save(
            gif_path, save_all=True, append_images=images[1:], duration=durations, loop=0
        )
        result.gif = gif_path
    return result


def render_record(record: EpisodeRecord, out_dir: str | Path, **options: Any) -> RenderResult:
    """Render a stored grid episode (needs ``ground_truth["task"]`` and step positions)."""
    truth = record.ground_truth or {}
    if "task" not in truth:
        raise ValueError(f"episode {record.episode_id} has no grid ground truth (not a grid run?)")
    task = GridTask.from_dict(truth["task"], source=f"episode {record.episode_id}")
    positions = record_positions(record)
    title = options.pop("title", None) or (
        f"{record.agent.name} | {record.preset or task.name or 'custom map'} | seed {record.seed}"
        f" | {'success' if record.success else 'failed'} in {record.n_steps} steps"
    )
    options.setdefault("stem", f"grid_{record.episode_id[:12]}")
    return render_trajectory(
        task,
        positions,
        out_dir,
        title=title,
        naming=str(truth.get("naming", "semantic")),
        **options,
    )


def ascii_map(task: GridTask, naming: str = "semantic", agent: Cell | None = None) -> str:
    """A text drawing of the true map (y up): ``#`` obstacle, ``.`` free, ``S`` start,
    ``G`` goal, ``a``, ``b``, ... other nodes (legend below), ``@`` the agent if given."""
    symbols: dict[Cell, str] = {}
    legend: list[str] = []
    letters = iter("abcdefghijklmnopqrstuvwxyz")
    labels = _labels(task, naming)
    for node in task.nodes:
        symbol = "G" if node.id == task.goal else next(letters, "*")
        symbols[node.cell] = symbol
        legend.append(f"  {symbol} = {labels[node.id]}")
    rows = []
    for y in range(task.height - 1, -1, -1):
        row = []
        for x in range(task.width):
            cell = (x, y)
            if cell == agent:
                row.append("@")
            elif cell == task.start:
                row.append("S")
            elif cell in symbols:
                row.append(symbols[cell])
            else:
                row.append("." if task.traversable[x, y] else "#")
        rows.append(f"{y:>3} " + " ".join(row))
    rows.append("    " + " ".join(str(x % 10) for x in range(task.width)))
    return "\n".join(rows + legend)
