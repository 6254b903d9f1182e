"""The grid suite in the episode viewer: an SVG map per step and per-step metric annotations.

The picture of step ``i`` is the map *after* that step's move (``i = -1``: the start), in the
colours of the Appendix F frames (``_render``): obstacles, visited cells, the path so far, every
node coloured by its status at that time, and a mark on each cell entered by a move that the
explore/exploit metric flags (red exploration error, blue exploitation error, purple both).
Columns and rows carry their x and y (the observation's ``You are at [x, y]``, y growing up),
node labels are drawn over the path, and a key below the map names every colour.
"""

from __future__ import annotations

from typing import Any

from exploreval.core import EpisodeRecord
from exploreval.report import StepView, Svg
from exploreval.suites.grid._metrics import record_positions
from exploreval.suites.grid._render import _COLOURS, CASE_TEXT, _labels, replay_statuses
from exploreval.suites.grid.explore_exploit import CASE_NAMES, TrajectoryScore, score_record

_CELL = 26
_PAD = 18
#: What the key under the map names, in its order: (colour key, shape, words).
_KEY = (
    ("undiscovered", "square", "node not yet seen"),
    ("discovered", "square", "node seen"),
    ("achieved", "square", "node achieved"),
    ("visited", "square", "cell visited"),
    ("obstacle", "square", "obstacle"),
    ("path", "ring", "agent and its path"),
    ("explore", "dot", "exploration error"),
    ("exploit", "dot", "exploitation error"),
    ("both", "dot", "both errors"),
)


def _score(record: EpisodeRecord) -> tuple[TrajectoryScore | None, str | None]:
    try:
        return score_record(record), None
    except Exception as exc:  # a broken record still gets its map, without marks
        return None, f"error marks unavailable: {type(exc).__name__}: {exc}"


def step_annotations(record: EpisodeRecord) -> list[dict[str, Any]]:
    """Per move: Table 1 case, err(t), and whether it is an exploration / exploitation error."""
    score = score_record(record)
    case = score.column("case")
    error = score.column("error")
    explore = score.column("explore_error")
    exploit = score.column("exploit_error")
    stale = score.column("stale")
    return [
        {
            "grid.case": f"{case[t]} {CASE_NAMES.get(case[t], 'after goal')}",
            "grid.error": error[t],
            "grid.explore_error": explore[t],
            "grid.exploit_error": exploit[t],
            "grid.stale": stale[t],
        }
        for t in range(len(score))
    ]


def step_view(record: EpisodeRecord, index: int) -> StepView | None:
    """The map after step ``index`` (``-1`` = at the start)."""
    from exploreval.suites.grid.explore_exploit import load_task

    truth = record.ground_truth.get("task")
    if not isinstance(truth, dict):
        return None
    task = load_task(truth)
    positions = record_positions(record)
    upto = max(0, min(index + 1, len(positions) - 1))
    path = positions[: upto + 1]
    seen_at, achieved_at = replay_statuses(task, path)
    seen, achieved = seen_at[-1], achieved_at[-1]
    score, note = _score(record)
    marks: dict[tuple[int, int], set[str]] = {}
    case_now: int | None = None
    if score is not None:
        explore = score.column("explore_error")
        exploit = score.column("exploit_error")
        cases = score.column("case")
        for t in range(min(upto, len(score))):
            cell = positions[t + 1]
            if explore[t]:
                marks.setdefault(cell, set()).add("explore")
            if exploit[t]:
                marks.setdefault(cell, set()).add("exploit")
        if 0 <= index < len(cases):
            case_now = cases[index]
    h = task.height
    svg = Svg(task.width * _CELL + 2 * _PAD, h * _CELL + 2 * _PAD, title="grid map", scale=2)

    def centre(cell: tuple[int, int]) -> tuple[float, float]:
        return (_PAD + (cell[0] + 0.5) * _CELL, _PAD + (h - 1 - cell[1] + 0.5) * _CELL)

    traversable = task.traversable
    visited = set(path)
    for x in range(task.width):
        for y in range(h):
            fill = _COLOURS["free"]
            if not traversable[x, y]:
                fill = _COLOURS["obstacle"]
            elif (x, y) in visited:
                fill = _COLOURS["visited"]
            svg.rect(
                _PAD + x * _CELL,
                _PAD + (h - 1 - y) * _CELL,
                _CELL,
                _CELL,
                fill=fill,
                stroke="#999",
                stroke_width=0.5,
            )
    # coordinates: x under each column, y left of each row (y grows upwards, as observed)
    for x in range(task.width):
        svg.text(_PAD + (x + 0.5) * _CELL, _PAD + h * _CELL + 10, str(x), text_anchor="middle",
                 font_size=7, class_="coord")  # fmt: skip
    for y in range(h):
        svg.text(_PAD - 5, _PAD + (h - 1 - y + 0.5) * _CELL + 2.5, str(y), text_anchor="end",
                 font_size=7, class_="coord")  # fmt: skip
    labels = _labels(task, str(record.ground_truth.get("naming", "semantic")))
    for node in task.nodes:
        status = (
            "achieved"
            if node.id in achieved
            else "discovered"
            if node.id in seen
            else "undiscovered"
        )
        cx, cy = centre(node.cell)
        svg.rect(
            cx - _CELL / 2 + 3,
            cy - _CELL / 2 + 3,
            _CELL - 6,
            _CELL - 6,
            fill=_COLOURS[status],
            class_=f"node {status}",
            stroke="#000" if node.id == task.goal else "none",
            stroke_width=2 if node.id == task.goal else 0,
        )
    sx, sy = centre(task.start)
    svg.text(sx, sy + _CELL / 2 - 2, "S", text_anchor="middle", font_size=8)
    if len(path) > 1:
        svg.polyline(
            [centre(c) for c in path],
            stroke=_COLOURS["path"],
            stroke_width=2,
            stroke_opacity=0.7,
            class_="path",
        )
    # labels after the path, on a pale ground: the path runs under them, never over
    for node in task.nodes:
        cx, cy = centre(node.cell)
        svg.rect(cx - _CELL / 2 + 4, cy - 3.5, _CELL - 8, 8, fill="#ffffff", fill_opacity=0.75,
                 class_="label-ground")  # fmt: skip
        svg.text(cx, cy + 2.5, labels[node.id][:4], text_anchor="middle", font_size=6.5)
    for cell, kinds in marks.items():
        kind = "both" if len(kinds) == 2 else next(iter(kinds))
        cx, cy = centre(cell)
        svg.circle(
            cx + _CELL / 2 - 5, cy - _CELL / 2 + 5, 3.5, fill=_COLOURS[kind], class_=f"mark {kind}"
        )
    # the agent is a ring around its cell, so the node label under it stays readable
    ax, ay = centre(path[-1])
    svg.circle(ax, ay, _CELL / 2 - 1.5, fill="none", stroke=_COLOURS["path"], stroke_width=3,
               class_="agent")  # fmt: skip
    n_explore = sum(1 for k in marks.values() if "explore" in k)
    n_exploit = sum(1 for k in marks.values() if "exploit" in k)
    # the words go in the caption (HTML, which wraps), never in the picture (which clips)
    case = CASE_TEXT.get(case_now, "") if case_now is not None else "at the start"
    lines = [
        f"after {upto} moves: at {list(path[-1])}, {len(achieved)} of {len(task.nodes)} nodes "
        f"achieved",
        f"this move: {case}" if case_now is not None else case,
        f"cells entered with an error so far: exploration {n_explore}, exploitation {n_exploit}",
    ]
    if note:
        lines.append(note)
    return StepView("svg", str(svg) + _key(), caption="\n".join(lines))


def _key() -> str:
    """The colour key, a picture of its own under the map (a narrow map would clip it)."""
    rows = (len(_KEY) + 1) // 2
    key = Svg(300, rows * 14 + 4, title="colour key", scale=2)
    for i, (colour, shape, words) in enumerate(_KEY):
        x, y = 4 + (i % 2) * 150, 4 + (i // 2) * 14
        if shape == "square":
            key.rect(x, y, 10, 10, fill=_COLOURS[colour], stroke="#999", stroke_width=0.5)
        elif shape == "ring":
            key.circle(x + 5, y + 5, 4, fill="none", stroke=_COLOURS[colour], stroke_width=2)
        else:
            key.circle(x + 5, y + 5, 3.5, fill=_COLOURS[colour])
        key.text(x + 15, y + 8, words, font_size=8, class_="key")
    return str(key)
