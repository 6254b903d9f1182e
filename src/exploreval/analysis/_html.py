"""The self-contained HTML report: one file, inline CSS, figures embedded as data URIs.

No CDN, no JavaScript library, no markdown package: the sections' markdown uses a small subset
(headings, paragraphs, lists, GitHub tables, fenced code, ``**bold**``, ``_italic_``, ``code``,
links and images), converted here. Links into the viewer stay relative
(``viewer/index.html#/run/...``) so the report folder can be copied as a whole.
"""

from __future__ import annotations

import base64
import html
import re
from pathlib import Path

from exploreval.report import ReportSection
from exploreval.store import describe_os_error

#: Tables with more rows than this are folded (``<details>``) so the page stays scannable.
FOLD_ROWS = 40

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0;color:#1d1d1f;
background:#fafafa;line-height:1.45}
header{background:#233044;color:#fff;padding:14px 28px}
header h1{margin:0;font-size:1.4em}
nav{padding:8px 28px;background:#e9edf3;font-size:.9em}
nav a{margin-right:14px;color:#233044}
main{padding:8px 28px 40px}
section{background:#fff;border:1px solid #dde2ea;border-radius:6px;margin:18px 0;padding:6px 18px 14px}
h2{font-size:1.2em;border-bottom:1px solid #e4e7ec;padding-bottom:4px}
h3{font-size:1.05em}
.table-wrap{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;font-size:.82em;margin:8px 0}
th,td{border:1px solid #d0d5dd;padding:3px 7px;text-align:left;vertical-align:top}
th{background:#f0f3f7;position:sticky;top:0}
tr:nth-child(even) td{background:#fafbfc}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
abbr[title]{text-decoration:underline dotted;cursor:help}
figure{margin:12px 0}
figure img{max-width:100%;border:1px solid #e4e7ec}
figcaption{font-size:.8em;color:#666}
pre{background:#f4f4f4;padding:8px;overflow-x:auto;font-size:.8em}
code{background:#f1f1f1;padding:0 3px;border-radius:3px}
details summary{cursor:pointer;color:#233044;margin:6px 0}
.warning{color:#9a3412}
"""

_MIME = {".png": "image/png", ".gif": "image/gif", ".svg": "image/svg+xml"}
_NUMBER = re.compile(
    r"^(-?\$?\d[\d,]*(\.\d+)?(e-?\d+)?[kMG]?(–\d+)?( \[[\d.]+, [\d.]+\])?"
    r'|<abbr title="[^"]*">[^<]*</abbr>)$'
)


#: Link targets the report writes itself: web pages, mail, and relative paths (the viewer, figures,
#: anchors). Anything else in a link (``javascript:``, ``data:``...) came from episode text.
_SAFE_SCHEMES = ("http", "https", "mailto")
#: The report holds no script: a page built from hostile episode text can run none.
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; img-src data:; style-src 'unsafe-inline'; base-uri 'none'; "
    "form-action 'none'"
)


def safe_href(href: str) -> bool:
    """http(s), mailto, or a relative reference (no scheme, not protocol-relative). Control
    characters and whitespace that browsers strip before reading a scheme are refused too."""
    if any(ord(c) < 0x20 or c in " \\" for c in href) or href.startswith("//"):
        return False
    scheme = re.match(r"^([A-Za-z][A-Za-z0-9+.-]*):", href)
    return scheme is None or scheme.group(1).lower() in _SAFE_SCHEMES


#: Inline markdown: a backslash escape, `code`, [links](href), **bold** (which may hold code or
#: escapes), _italic_ (which may hold `code` with underscores in it), and the one inline tag.
_INLINE = re.compile(
    r"\\([\\`*_\[\]()#|<>])"
    r"|`([^`]+)`"
    r"|\[([^\]]+)\]\(([^)\s]+)\)"
    r"|\*\*((?:`[^`]*`|\\.|[^*])+)\*\*"
    r"|(?<!\w)_((?:`[^`]*`|\\.|[^_`])+)_(?!\w)"
    r'|<abbr title="([^"<>]*)">([^<>]*)</abbr>'
)


def _inline(text: str) -> str:
    """Inline markdown (code, links, bold, italic) to HTML, escaping everything else."""
    out: list[str] = []
    pos = 0
    for match in _INLINE.finditer(text):
        out.append(html.escape(text[pos : match.start()]))
        escaped, code, label, href, bold, italic, tip, abbreviated = match.groups()
        if escaped is not None:  # \* \_ \` ...: the character itself
            out.append(html.escape(escaped))
        elif tip is not None:  # the one inline HTML tag the sections use: a tooltip
            out.append(
                f'<abbr title="{html.escape(tip, quote=True)}">{html.escape(abbreviated)}</abbr>'
            )
        elif code is not None:
            out.append(f"<code>{html.escape(code)}</code>")
        elif label is not None:
            if safe_href(href):
                out.append(f'<a href="{html.escape(href, quote=True)}">{_inline(label)}</a>')
            else:  # javascript:, data:, vbscript:... from episode text: shown, never a link
                out.append(f"{_inline(label)} ({html.escape(href)})")
        elif bold is not None:
            out.append(f"<strong>{_inline(bold)}</strong>")
        else:
            out.append(f"<em>{_inline(italic)}</em>")
        pos = match.end()
    out.append(html.escape(text[pos:]))
    return "".join(out)


def _split_row(line: str) -> list[str]:
    body = line.strip()
    body = body[1:] if body.startswith("|") else body
    body = body[:-1] if body.endswith("|") and not body.endswith("\\|") else body
    cells = re.split(r"(?<!\\)\|", body)
    return [c.strip().replace("\\|", "|") for c in cells]


def _table(lines: list[str]) -> str:
    head = _split_row(lines[0])
    rows = [_split_row(line) for line in lines[2:]]
    parts = ['<div class="table-wrap"><table>', "<thead><tr>"]
    parts += [f"<th>{_inline(c)}</th>" for c in head]
    parts.append("</tr></thead><tbody>")
    for row in rows:
        cells = []
        for cell in row:
            cls = ' class="num"' if _NUMBER.match(cell) else ""
            cells.append(f"<td{cls}>{_inline(cell)}</td>")
        parts.append("<tr>" + "".join(cells) + "</tr>")
    parts.append("</tbody></table></div>")
    table = "".join(parts)
    if len(rows) > FOLD_ROWS:
        return (
            f"<details><summary>table: {len(rows)} rows (click to show)</summary>{table}</details>"
        )
    return table


def markdown_to_html(text: str) -> str:
    """Convert the markdown subset the report sections use."""
    lines = text.splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if not stripped:
            i += 1
        elif stripped.startswith("```"):
            block = []
            i += 1
            while i < len(lines) and not lines[i].strip().startswith("```"):
                block.append(lines[i])
                i += 1
            i += 1
            out.append(f"<pre>{html.escape(chr(10).join(block))}</pre>")
        elif stripped.startswith("#"):
            level = min(len(stripped) - len(stripped.lstrip("#")) + 1, 6)
            out.append(f"<h{level}>{_inline(stripped.lstrip('#').strip())}</h{level}>")
            i += 1
        elif (
            stripped.startswith("|")
            and i + 1 < len(lines)
            and lines[i + 1].strip().startswith("|-")
        ):
            block = []
            while i < len(lines) and lines[i].strip().startswith("|"):
                block.append(lines[i])
                i += 1
            out.append(_table(block))
        elif stripped.startswith(("- ", "* ")):
            items = []
            while (
                i < len(lines)
                and lines[i].strip().startswith(("- ", "* ", "  "))
                and lines[i].strip()
            ):
                item = lines[i].strip()
                items.append(_inline(item[2:] if item.startswith(("- ", "* ")) else item))
                i += 1
            out.append("<ul>" + "".join(f"<li>{x}</li>" for x in items) + "</ul>")
        else:
            block = []
            while (
                i < len(lines)
                and lines[i].strip()
                and not lines[i].strip().startswith(("|", "#", "```", "- ", "* "))
            ):
                block.append(lines[i].strip())
                i += 1
            out.append(f"<p>{_inline(' '.join(block))}</p>")
    return "\n".join(out)


def embed_image(path: Path) -> str:
    """A ``<figure>`` with the image inlined as a data URI (SVG inline as markup)."""
    suffix = path.suffix.lower()
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise describe_os_error("read figure", path, exc) from exc
    if suffix == ".svg":
        body = data.decode("utf-8")
    else:
        encoded = base64.b64encode(data).decode("ascii")
        body = (
            f'<img alt="{html.escape(path.name)}" src="data:{_MIME.get(suffix, "image/png")};'
            f'base64,{encoded}">'
        )
    return f"<figure>{body}<figcaption>{html.escape(path.name)}</figcaption></figure>"


def _anchor(title: str, index: int) -> str:
    return f"s{index}-" + re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:40]


def render_html(title: str, header: list[str], sections: list[ReportSection]) -> str:
    anchors = [_anchor(s.title, i) for i, s in enumerate(sections)]
    nav = "".join(
        f'<a href="#{a}">{html.escape(s.title)}</a>' for a, s in zip(anchors, sections, strict=True)
    )
    body = []
    for anchor, section in zip(anchors, sections, strict=True):
        figures = [
            embed_image(Path(p))
            for p in section.files
            if Path(p).suffix.lower() in _MIME and Path(p).exists()
        ]
        body.append(
            f'<section id="{anchor}"><h2>{html.escape(section.title)}</h2>'
            + markdown_to_html(section.markdown)
            + "".join(figures)
            + "</section>"
        )
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        f'<meta http-equiv="Content-Security-Policy" content="{CONTENT_SECURITY_POLICY}">'
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{html.escape(title)}</title><style>{CSS}</style></head><body>"
        f"<header><h1>{html.escape(title)}</h1></header><nav>{nav}</nav><main>"
        f'<section id="runs"><h2>Runs</h2>{markdown_to_html(chr(10).join(header))}</section>'
        + "\n".join(body)
        + "</main></body></html>\n"
    )


def write_html(
    path: Path, title: str, header: list[str], sections: list[ReportSection], out: Path
) -> Path:
    """Write ``index.html`` atomically (a reader never sees half a report)."""
    from exploreval.store import write_atomic

    text = render_html(title, header, sections)
    try:
        write_atomic(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))
    except OSError as exc:
        raise describe_os_error("write", path, exc) from exc
    return path
