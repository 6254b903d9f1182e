"""The card as Markdown, a PNG of small multiples, and one self-contained HTML page."""

from __future__ import annotations

import base64
import html
from pathlib import Path

import pandas as pd

from exploreval.profile._card import Card, CardRow, Estimate, Mark, MetricCell


def _num(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def estimate_text(estimate: Estimate) -> str:
    """``0.42 [0.30, 0.55] n=40``: the mean, its 95% CI, its episodes."""
    if estimate.mean is None:
        return "- (no episodes)"
    ci = ""
    if estimate.low is not None and estimate.high is not None:
        ci = f" [{estimate.low:.2f}, {estimate.high:.2f}]"
    return f"{estimate.mean:.2f}{ci} n={estimate.n}"


def placement_text(cell: MetricCell) -> str:
    if cell.placement is None:
        return f"- ({cell.note})" if cell.note else "-"
    ci = ""
    if cell.placement_low is not None and cell.placement_high is not None:
        ci = f" [{cell.placement_low:.2f}, {cell.placement_high:.2f}]"
    return f"{cell.placement:.2f}{ci}"


def mark_placement(cell: MetricCell, mark: Mark) -> float | None:
    """A paper's value on the row's 0-1 scale (the same references' means)."""
    if cell.floor.mean is None or cell.ceiling.mean is None:
        return None
    span = cell.ceiling.mean - cell.floor.mean
    if abs(span) < 1e-9:
        return None
    return (mark.value - cell.floor.mean) / span


def _left_out(cell: MetricCell) -> dict[str, int]:
    """The marks left off a metric, counted by the conditions that differ (their names; each
    mark's full reason, with both values, is in ``card.json``)."""
    reasons: dict[str, int] = {}
    for mark in cell.marks:
        if not mark.drawn:
            keys = ", ".join(part.split(":", 1)[0] for part in mark.reason.split("; "))
            reason = f"the paper's {keys} differ from the row's"
            reasons[reason] = reasons.get(reason, 0) + 1
    return reasons


def card_markdown(card: Card) -> str:
    from exploreval.analysis import markdown_table

    quick = " (--quick: a demonstration, not a measurement)" if card.quick else ""
    lines = [
        f"# Exploration profile: {card.model}",
        "",
        f"Battery **{card.battery}**{quick}, digest `{card.battery_digest}`, exploreval "
        f"{card.package_version}, made {card.made_at} from `{card.run_dir}`.",
        "",
        "Each value is the model's mean over its episodes with a 95% bootstrap CI. *Placed* "
        "puts it between the row's two reference policies, played by exploreval on the same "
        "episodes: 0 = as the first, 1 = as the second, whichever way the metric points.",
        "",
    ]
    table = []
    for row in card.rows:
        table.append(
            {
                "paradigm": f"{row.paradigm}: {row.row}" if row.row != row.part else row.paradigm,
                "success": estimate_text(row.success),
                "reading": row.reading,
            }
        )
    lines += [markdown_table(pd.DataFrame(table)), ""]
    for row in card.rows:
        lines += _row_markdown(row)
    usage = card.usage
    cost = "unknown" if usage.cost_usd is None else f"${usage.cost_usd:,.4f}"
    lines += [
        "## Usage",
        "",
        f"{usage.calls:,} model calls, {usage.prompt_tokens:,} prompt and "
        f"{usage.completion_tokens:,} completion tokens, cost {cost}.",
        "",
    ]
    return "\n".join(lines)


def _row_markdown(row: CardRow) -> list[str]:
    from exploreval.analysis import markdown_table

    title = f"{row.paradigm}: {row.row}" if row.row != row.part else row.paradigm
    refs = ", ".join(f"{r.label} {_num(r.mean)}" for r in row.references_success)
    conditions = ", ".join(f"{k}={v}" for k, v in row.conditions.items())
    lines = [
        f"## {title}",
        "",
        f"{row.description}. Conditions: {conditions or 'none stated'}.",
        "",
        f"Task success ({row.success_column}): {estimate_text(row.success)}; references: "
        f"{refs}. Reading: **{row.reading}**.",
        "",
    ]
    table = []
    for cell in row.metrics:
        table.append(
            {
                "metric": cell.label,
                "model": estimate_text(cell.model),
                cell_scale_header(): f"{_num(cell.floor.mean)} / {_num(cell.ceiling.mean)}",
                "placed": placement_text(cell),
                "scale": cell.scale,
                "papers": _marks_text(cell),
            }
        )
    lines += [markdown_table(pd.DataFrame(table)), ""]
    for cell in row.metrics:
        for reason, count in _left_out(cell).items():
            lines.append(f"- {cell.label}: {count} published value(s) left out ({reason})")
    if any(_left_out(c) for c in row.metrics):
        lines.append("")
    return lines


def cell_scale_header() -> str:
    return "0 / 1 (references)"


def _marks_text(cell: MetricCell) -> str:
    drawn = [m for m in cell.marks if m.drawn]
    if not drawn:
        return "-"
    shown = [
        f"{m.model}{'/' + m.configuration if m.configuration else ''} {m.printed} ({m.source})"
        for m in drawn[:4]
    ]
    more = f" +{len(drawn) - 4} more" if len(drawn) > 4 else ""
    return "; ".join(shown) + more


#: The figure's and the page's scale: a little beyond the two references on either side.
SCALE = (-0.25, 1.25)


def _clip(value: float) -> float:
    return min(max(value, SCALE[0]), SCALE[1])


def card_figure(card: Card, path: Path) -> Path:
    """Small multiples: a panel per card row, a line per metric on the 0-1 scale (the model's
    CI as a bar, its mean as a dot, the papers' drawn values as diamonds), success beside."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = card.rows
    cols = min(3, max(1, len(rows)))
    nrows = (len(rows) + cols - 1) // cols
    fig, axes = plt.subplots(
        nrows, cols, figsize=(4.2 * cols, 2.4 * nrows), squeeze=False, constrained_layout=True
    )
    for index, row in enumerate(rows):
        ax = axes[index // cols][index % cols]
        labels = [c.label for c in row.metrics] + [f"success ({row.success_column})"]
        for y, cell in enumerate(row.metrics):
            if cell.placement is not None:
                low = cell.placement_low if cell.placement_low is not None else cell.placement
                high = cell.placement_high if cell.placement_high is not None else cell.placement
                ax.plot([_clip(low), _clip(high)], [y, y], color="tab:blue", lw=4, alpha=0.45)
                shown = _clip(cell.placement)
                ax.plot(
                    [shown],
                    [y],
                    "o" if shown == cell.placement else ">" if shown > 0 else "<",
                    color="tab:blue",
                )
                if shown != cell.placement:  # off the scale: drawn at its edge, value written
                    ax.text(shown, y - 0.3, f"{cell.placement:.1f}", fontsize=6, ha="center")
            else:
                ax.text(0.5, y, "no placement", ha="center", va="center", fontsize=6, color="grey")
            for mark in (m for m in cell.marks if m.drawn):
                placed = mark_placement(cell, mark)
                if placed is not None:
                    ax.plot([_clip(placed)], [y], "D", color="tab:orange", ms=4, alpha=0.7)
        y = len(row.metrics)
        if row.success.mean is not None:
            low = row.success.low if row.success.low is not None else row.success.mean
            high = row.success.high if row.success.high is not None else row.success.mean
            ax.plot([low, high], [y, y], color="tab:green", lw=4, alpha=0.45)
            ax.plot([row.success.mean], [y], "o", color="tab:green")
        ax.axvline(0, color="grey", lw=0.8, ls="--")
        ax.axvline(1, color="grey", lw=0.8, ls="--")
        ax.set_yticks(range(len(labels)), labels, fontsize=7)
        ax.set_ylim(len(labels) - 0.5, -0.9)  # top to bottom, room under the title
        ax.set_xlim(SCALE[0] - 0.05, SCALE[1] + 0.05)
        ax.set_title(f"{row.paradigm}: {row.row}", fontsize=8)
        ax.set_xlabel("0 = floor reference, 1 = ceiling (success: raw rate)", fontsize=6)
        ax.tick_params(axis="x", labelsize=6)
    for index in range(len(rows), nrows * cols):
        axes[index // cols][index % cols].axis("off")
    fig.suptitle(f"{card.model}: {card.battery}{' (quick)' if card.quick else ''}", fontsize=9)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110, format="png")
    plt.close(fig)
    return path


_CSS = """
body{font-family:system-ui,sans-serif;max-width:1100px;margin:1.5em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:.6em 0 1.2em;font-size:.9em}
td,th{border:1px solid #ccc;padding:.25em .5em;text-align:left;vertical-align:top}
th{background:#f3f3f3}.bar{position:relative;width:160px;height:12px;background:#f4f4f4}
.ci{position:absolute;top:3px;height:6px;background:#7aa7d6}.dot{position:absolute;top:1px;
width:10px;height:10px;margin-left:-5px;border-radius:5px;background:#1f5fa8}
.edge{position:absolute;top:0;height:12px;border-left:1px dashed #888}
.mark{position:absolute;top:1px;width:8px;height:8px;margin-left:-4px;background:#e07b00;
transform:rotate(45deg)}.note{color:#666;font-size:.85em}img{max-width:100%}
"""


def _pos(value: float) -> float:
    """A 0-1 placement as a percentage of the bar, which spans -0.25 .. 1.25."""
    return max(0.0, min(100.0, (value + 0.25) / 1.5 * 100))


def _bar(cell: MetricCell) -> str:
    if cell.placement is None:
        return f'<span class="note">{html.escape(cell.note or "no placement")}</span>'
    parts = [f'<div class="edge" style="left:{_pos(0):.1f}%"></div>']
    parts.append(f'<div class="edge" style="left:{_pos(1):.1f}%"></div>')
    if cell.placement_low is not None and cell.placement_high is not None:
        left, right = _pos(cell.placement_low), _pos(cell.placement_high)
        parts.append(f'<div class="ci" style="left:{left:.1f}%;width:{right - left:.1f}%"></div>')
    for mark in (m for m in cell.marks if m.drawn):
        placed = mark_placement(cell, mark)
        if placed is not None:
            title = html.escape(f"{mark.model} {mark.configuration or ''} {mark.printed}")
            parts.append(
                f'<div class="mark" title="{title}" style="left:{_pos(placed):.1f}%"></div>'
            )
    parts.append(f'<div class="dot" style="left:{_pos(cell.placement):.1f}%"></div>')
    return f'<div class="bar">{"".join(parts)}</div>'


def card_html(card: Card, png: Path | None = None) -> str:
    """One page, nothing fetched: the figure inlined as a data URI."""
    e = html.escape
    body = [f"<h1>Exploration profile: {e(card.model)}</h1>"]
    quick = " (--quick: a demonstration, not a measurement)" if card.quick else ""
    body.append(
        f"<p>Battery <b>{e(card.battery)}</b>{e(quick)}, digest <code>{e(card.battery_digest)}"
        f"</code>, exploreval {e(card.package_version)}, made {e(card.made_at)}.</p>"
    )
    body.append(
        "<p class='note'>Values: the model's mean with a 95% bootstrap CI. The bar places it "
        "between the row's two reference policies (dashed lines: 0 and 1), played on the same "
        "episodes; diamonds are the papers' published values where the conditions match.</p>"
    )
    if png is not None and png.exists():
        data = base64.b64encode(png.read_bytes()).decode()
        body.append(f'<img alt="profile at a glance" src="data:image/png;base64,{data}">')
    for row in card.rows:
        title = f"{row.paradigm}: {row.row}" if row.row != row.part else row.paradigm
        refs = ", ".join(f"{r.label} {_num(r.mean)}" for r in row.references_success)
        conditions = ", ".join(f"{k}={v}" for k, v in row.conditions.items())
        body.append(
            f"<h2>{e(title)}</h2><p>{e(row.description)}.<br><span class='note'>Conditions "
            f"of this run: {e(conditions or 'none stated')}</span></p>"
        )
        body.append(
            f"<p>Task success ({e(row.success_column)}): <b>{e(estimate_text(row.success))}</b>;"
            f" references: {e(refs)}. Reading: <b>{e(row.reading)}</b>.</p>"
        )
        cells = [
            "<tr><th>metric</th><th>model</th><th>placed</th><th></th><th>0 and 1</th>"
            "<th>papers</th></tr>"
        ]
        for cell in row.metrics:
            cells.append(
                f"<tr><td title='{e(cell.meaning)}'>{e(cell.label)}</td>"
                f"<td>{e(estimate_text(cell.model))}</td><td>{e(placement_text(cell))}</td>"
                f"<td>{_bar(cell)}</td><td>{e(cell.scale)} ({_num(cell.floor.mean)} and "
                f"{_num(cell.ceiling.mean)})</td><td>{e(_marks_text(cell))}</td></tr>"
            )
        body.append("<table>" + "".join(cells) + "</table>")
        left = [
            f"<li>{e(cell.label)}: {count} published value(s) left out ({e(reason)})</li>"
            for cell in row.metrics
            for reason, count in _left_out(cell).items()
        ]
        if left:
            body.append(
                "<details class='note'><summary>published values not drawn, and why</summary>"
                "<ul>" + "".join(left) + "</ul></details>"
            )
    usage = card.usage
    cost = "unknown" if usage.cost_usd is None else f"${usage.cost_usd:,.4f}"
    body.append(
        f"<h2>Usage</h2><p>{usage.calls:,} model calls, {usage.prompt_tokens:,} prompt and "
        f"{usage.completion_tokens:,} completion tokens, cost {e(cost)}.</p>"
    )
    return (
        "<!doctype html><html><head><meta charset='utf-8'>"
        f"<title>{e(card.model)}: {e(card.battery)}</title><style>{_CSS}</style></head>"
        f"<body>{''.join(body)}</body></html>"
    )


def write_card(card: Card, out_dir: Path) -> dict[str, Path]:
    """``card.json``, ``card.md``, ``card.png`` and ``card.html`` in ``out_dir``."""
    from exploreval.core import write_atomic

    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {
        "json": out_dir / "card.json",
        "md": out_dir / "card.md",
        "png": out_dir / "card.png",
        "html": out_dir / "card.html",
    }

    def text(name: str, body: str) -> None:
        write_atomic(paths[name], lambda tmp: tmp.write_text(body, encoding="utf-8"))

    text("json", card.model_dump_json(indent=2))
    text("md", card_markdown(card))
    write_atomic(paths["png"], lambda tmp: card_figure(card, tmp))
    text("html", card_html(card, paths["png"]))
    return paths
