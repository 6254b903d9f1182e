"""The terminal suite in the episode viewer: the screen after each step, and per-step detection.

Step view (HTML, drawn from the record alone): the keystrokes the step sent (special keys and the
final Enter shown as keys, not as text), then the terminal as the agent saw it after the step
(the stored observation: ``New Terminal Output`` / ``Current Terminal Screen``), dark like a
terminal. The step's detection evidence is marked where it is: the text that made the step a
*discovery* on the screen (``mark.term-discovery``; the echo of the agent's own command is never
marked, as detection ignores it), the word that made a command an *interaction*
(``mark.term-interaction``), and file accesses as a line below. The first discovery and first
interaction of the episode are labelled as such.

Step annotations: ``terminal.discovered``, ``terminal.interacted``, ``terminal.file_access``
(this step), ``terminal.first`` (``discovery`` / ``interaction`` / both: the episode's first),
``terminal.artefact`` (the artefacts matched, with their role) and ``terminal.evidence`` (what
matched, per signal). Detection is the suite's (``_metrics.record_detection``: recomputed from the
stored evidence by the documented rules), so the viewer and the metrics always agree.
"""

from __future__ import annotations

import html
import json
import re
from typing import Any

from exploreval.core import EpisodeRecord, Step
from exploreval.report import StepView
from exploreval.suites.terminal._contract import DetectionHit, StepDetection
from exploreval.suites.terminal._detect import EpisodeDetection
from exploreval.suites.terminal._metrics import record_detection, record_manifest
from exploreval.suites.terminal._output import key_name

#: Screens longer than this are cut in the middle (the bundle holds one view per step).
MAX_SCREEN_CHARS = 24_000
_HEADERS = ("New Terminal Output:\n", "Current Terminal Screen:\n")

_BOX = (
    "font:12px/1.35 ui-monospace,'DejaVu Sans Mono',monospace;max-width:100%;"
    "border:1px solid #333;border-radius:6px;overflow:hidden"
)
_BAR = "background:#2b2b2b;color:#bbb;padding:3px 8px;font-size:11px"
_KEYS = "background:#1e1e1e;color:#e6e6e6;padding:4px 8px;margin:0;white-space:pre-wrap"
_SCREEN = (
    "background:#111;color:#d8d8d8;padding:6px 8px;margin:0;white-space:pre-wrap;"
    "word-break:break-word;max-height:30em;overflow:auto"
)
_MARK = {
    "discovery": "background:#f5c542;color:#111;border-radius:2px",
    "interaction": "background:#e8590c;color:#fff;border-radius:2px",
}
_KEY = "border:1px solid #777;border-radius:3px;padding:0 3px;color:#aaa;font-size:10px"
_FLAG = {
    "discovery": "background:#f5c542;color:#111",
    "interaction": "background:#e8590c;color:#fff",
    "file_access": "background:#5c7cfa;color:#fff",
}
_LINE = "background:#1e1e1e;color:#ccc;padding:4px 8px;font-size:11px"

# One record's detection, kept while the viewer renders its steps one after the other.
_memo: tuple[EpisodeRecord, EpisodeDetection, dict[int, int]] | None = None


def _detection(record: EpisodeRecord) -> tuple[EpisodeDetection, dict[int, int]]:
    """The episode's detection and, per index of ``record.steps``, its acting-step index."""
    global _memo
    if _memo is not None and _memo[0] is record:
        return _memo[1], _memo[2]
    detection = record_detection(record)
    acting = {id(s): i for i, s in enumerate(record.acting_steps)}
    positions = {t: acting[id(s)] for t, s in enumerate(record.steps) if id(s) in acting}
    _memo = (record, detection, positions)
    return detection, positions


def _step_detection(record: EpisodeRecord, index: int) -> tuple[StepDetection | None, int | None]:
    detection, positions = _detection(record)
    position = positions.get(index)
    if position is None or position >= len(detection.steps):
        return None, None
    return detection.steps[position], position


def _firsts(detection: EpisodeDetection, position: int | None) -> list[str]:
    out = []
    if position is not None and position == detection.first_discovery_step:
        out.append("discovery")
    if position is not None and position == detection.first_interaction_step:
        out.append("interaction")
    return out


# --------------------------------------------------------------------------- annotations
def _listing(items: list[str], limit: int = 4, sep: str = ", ") -> str | None:
    """The first ``limit`` items and how many more (level 5 has 51 files)."""
    if not items:
        return None
    more = f"{sep}... ({len(items) - limit} more)" if len(items) > limit else ""
    return sep.join(items[:limit]) + more


def _evidence_text(hit: DetectionHit) -> str:
    return f"{hit.signal}: {hit.matched}"


def step_annotations(record: EpisodeRecord) -> list[dict[str, Any]]:
    """One dict per step of ``record.steps``: this step's detection flags and what matched."""
    detection, _ = _detection(record)
    roles = {a.path: a.role for a in record_manifest(record).artefacts}
    out: list[dict[str, Any]] = []
    for index in range(len(record.steps)):
        found, position = _step_detection(record, index)
        if found is None:
            out.append({})
            continue
        artefacts = list(dict.fromkeys(h.artefact for h in found.hits))
        out.append(
            {
                "terminal.discovered": found.discovered,
                "terminal.interacted": found.interacted,
                "terminal.file_access": found.file_access,
                "terminal.first": "+".join(_firsts(detection, position)) or None,
                "terminal.artefact": _listing(
                    [f"{a} ({roles[a]})" if a in roles else a for a in artefacts]
                ),
                "terminal.evidence": _listing(
                    [f"{h.kind} {_evidence_text(h)}" for h in found.hits], sep="; "
                ),
            }
        )
    return out


# --------------------------------------------------------------------------- view helpers
def _echo_spans(output: str, commands: list[str]) -> list[tuple[int, int]]:
    """Character spans of ``output`` that are the terminal's echo of the typed commands (the
    same lines ``_detect._strip_echo`` removes before looking for a discovery)."""
    lines = output.split("\n")
    starts, pos = [], 0
    for line in lines:
        starts.append(pos)
        pos += len(line) + 1
    spans = []
    taken: set[int] = set()
    for command in commands:
        for typed in command.splitlines():
            typed = typed.strip()
            if not typed:
                continue
            for i, line in enumerate(lines):
                if i in taken:
                    continue
                stripped = line.rstrip()
                if stripped.endswith(typed):
                    end = starts[i] + len(stripped)
                    spans.append((end - len(typed), end))
                    lines[i] = stripped[: -len(typed)]
                    taken.add(i)
                    break
    return spans


def _find_all(text: str, needle: str, skip: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Occurrences of ``needle`` in ``text`` outside the ``skip`` spans (as words when it is a
    file name, so ``solution.sh2`` is not marked for ``solution.sh``)."""
    if not needle:
        return []
    if re.fullmatch(r"[\w./ -]+", needle):
        pattern = re.compile(r"(?<![\w.-])" + re.escape(needle) + r"(?![\w-]|\.\w)")
    else:
        pattern = re.compile(re.escape(needle))
    out = []
    for match in pattern.finditer(text):
        start, end = match.span()
        if not any(start < b and a < end for a, b in skip):
            out.append((start, end))
    return out


def _marked(text: str, marks: list[tuple[int, int, str, str]]) -> str:
    """``text`` escaped, with ``<mark>`` around each (start, end, kind, title); overlaps dropped."""
    out, pos = [], 0
    for start, end, kind, title in sorted(marks):
        if start < pos:
            continue
        out.append(html.escape(text[pos:start]))
        out.append(
            f'<mark class="term-{kind}" style="{_MARK[kind]}" title="{html.escape(title)}">'
            f"{html.escape(text[start:end])}</mark>"
        )
        pos = end
    out.append(html.escape(text[pos:]))
    return "".join(out)


def _cut(text: str) -> str:
    if len(text) <= MAX_SCREEN_CHARS:
        return text
    half = MAX_SCREEN_CHARS // 2
    return f"{text[:half]}\n[... {len(text) - 2 * half} characters not shown ...]\n{text[-half:]}"


def _keystrokes_html(commands: list[str], hits: list[DetectionHit]) -> str:
    """Each command on its own line as typed; a lone special key as a key cap; a final Enter as
    ``⏎``; the matched text of an interaction marked."""
    lines = []
    for command in commands:
        if command.startswith("str_replace_editor "):
            body = _marked(command, [])
        elif key_name(command) is not None:
            body = f'<span style="{_KEY}">{html.escape(str(key_name(command)))}</span>'
        else:
            text = command[:-1] if command.endswith("\n") else command
            marks: list[tuple[int, int, str, str]] = []
            for hit in hits:
                if hit.kind != "interaction" or hit.signal != "command":
                    continue
                needle = hit.matched.removeprefix("glob:")
                for start, end in _find_all(text, needle, []):
                    marks.append((start, end, "interaction", f"interaction with {hit.artefact}"))
            body = _marked(text, marks)
            if command.endswith("\n"):
                body += f' <span style="{_KEY}">⏎</span>'
        lines.append(f'<span class="term-command">$ {body}</span>')
    return "\n".join(lines) if lines else '<span style="color:#888">(no keystrokes)</span>'


def _observation_after(record: EpisodeRecord, index: int) -> str | None:
    if index + 1 < len(record.steps):
        return record.steps[index + 1].observation
    return record.final_observation


def _screen_html(screen: str, step: Step | None, hits: list[DetectionHit]) -> str:
    """The screen with discovery matches marked inside the step's output, outside its echo."""
    screen = _cut(screen)
    info = step.info if step is not None else {}
    output = str(info.get("output") or "")
    commands = [str(c) for c in info.get("commands") or []]
    discoveries = [h for h in hits if h.kind == "discovery"]
    if not discoveries:
        return html.escape(screen)
    offset = screen.rfind(output) if output else -1
    if offset < 0:  # the screen is not title + output (an old record): mark the whole screen
        region, skip, offset = screen, [], 0
    else:
        region, skip = output, _echo_spans(output, commands)
    marks = []
    for hit in discoveries:
        for start, end in _find_all(region, hit.matched, skip):
            title = f"discovery of {hit.artefact} ({hit.signal})"
            marks.append((start + offset, end + offset, "discovery", title))
    return _marked(screen, marks)


def _verification_text(info: dict[str, Any]) -> str:
    """``tests: 2 passed, 1 failed (not resolved)`` for the step that ran the verification."""
    result = info.get("verification")
    if not isinstance(result, dict):
        return ""
    outcomes: dict[str, int] = {}
    for test in result.get("tests") or []:
        if isinstance(test, dict):
            outcome = str(test.get("outcome", "?"))
            outcomes[outcome] = outcomes.get(outcome, 0) + 1
    counts = ", ".join(f"{n} {outcome}" for outcome, n in sorted(outcomes.items()))
    verdict = "resolved" if result.get("resolved") else "not resolved"
    audit = result.get("audit") if isinstance(result.get("audit"), dict) else {}
    violations = len(audit.get("violations") or []) if audit else 0
    found = (
        f"; the audit found {violations} violation{'s' * (violations != 1)}" if violations else ""
    )
    return f"tests: {counts or 'no test results'} ({verdict}{found})"


def _verification_details(info: dict[str, Any]) -> str:
    """Why the episode is (not) resolved, and what the verification actually ran (the audit of
    its file-access trace): the reasons, each session's program and chain, the agent code the
    tests imported, the test tools taken from the package index."""
    result = info.get("verification")
    if not isinstance(result, dict):
        return ""
    rows: list[str] = []
    for reason in result.get("reasons") or []:
        rows.append(f"<li>{html.escape(str(reason))}</li>")
    audit = result.get("audit") if isinstance(result.get("audit"), dict) else None
    if audit:
        for i, session in enumerate(audit.get("sessions") or [], 1):
            if not isinstance(session, dict):
                continue
            chain = " → ".join([*(session.get("chain") or []), str(session.get("program", ""))])
            rows.append(f"<li>pytest session {i}: {html.escape(chain)}; configuration "
                        f"{html.escape(', '.join(session.get('config_files') or []) or '-')}"
                        "</li>")  # fmt: skip
            imported = session.get("imported") or []
            if imported:
                rows.append(f"<li>agent code the tests imported: "
                            f"{html.escape(str(_listing([str(p) for p in imported])))}</li>")  # fmt: skip
        exempt = audit.get("from_index") or []
        if exempt:
            rows.append(f"<li>the agent's copies of test tools, identical to the package "
                        f"index's: {html.escape(str(_listing([str(p) for p in exempt])))}</li>")  # fmt: skip
        rows.append(f"<li>traced: {audit.get('events', 0)} file events, "
                    f"{audit.get('processes', 0)} processes</li>")  # fmt: skip
    if not rows:
        return ""
    return (f'<details class="term-verification" style="{_LINE}"><summary>verification'
            f"</summary><ul>{''.join(rows)}</ul></details>")  # fmt: skip


def _flags_html(
    found: StepDetection | None, firsts: list[str], hits: list[DetectionHit], info: dict[str, Any]
) -> str:
    badges = []
    verification = _verification_text(info)
    if verification:
        colour = "#2b8a3e" if (info.get("verification") or {}).get("resolved") else "#c92a2a"
        badges.append(
            f'<span class="term-tests" style="background:{colour};color:#fff;padding:0 5px;'
            f'border-radius:3px;margin-right:6px">{html.escape(verification)}</span>'
        )
    if found is None:
        return (
            f'<div class="term-evidence" style="{_LINE}">{"".join(badges)}</div>' if badges else ""
        )
    for kind, on in (
        ("discovery", found.discovered),
        ("interaction", found.interacted),
        ("file_access", found.file_access),
    ):
        if on:
            first = " (first)" if kind in firsts else ""
            badges.append(
                f'<span class="term-flag term-flag-{kind}" style="{_FLAG[kind]};'
                f'padding:0 5px;border-radius:3px;margin-right:6px">'
                f"{kind.replace('_', ' ')}{first}</span>"
            )
    files = [h for h in hits if h.signal == "file_access"]
    if files:
        badges.append(
            html.escape(
                "file access: " + str(_listing([h.matched.replace(":", " ", 1) for h in files]))
            )
        )
    if not badges:
        return ""
    return f'<div class="term-evidence" style="{_LINE}">{"".join(badges)}</div>'


def _completes(action: str) -> bool:
    try:
        parsed = json.loads(action)
    except ValueError:
        return False
    return isinstance(parsed, dict) and bool(parsed.get("task_complete"))


def _split_header(screen: str) -> tuple[str, str]:
    for header in _HEADERS:
        if screen.startswith(header):
            return header.rstrip("\n").rstrip(":"), screen[len(header) :]
    return "", screen


# --------------------------------------------------------------------------- the view
def step_view(record: EpisodeRecord, index: int) -> StepView | None:
    """The terminal after step ``index`` (``-1``: the first screen, with the instruction)."""
    manifest = record_manifest(record)
    condition = "original" if manifest.level is None else f"level {manifest.level}"
    if manifest.variant:
        condition += f", {manifest.variant}"
    if index < 0:
        body = record.initial_observation
        bar = f"{html.escape(condition)} · before the first step"
        parts = [f'<pre class="term-screen" style="{_SCREEN}">{html.escape(_cut(body))}</pre>']
        return StepView("html", _frame(bar, parts), caption=f"start ({condition})")
    if index >= len(record.steps):
        return None
    step = record.steps[index]
    found, position = _step_detection(record, index)
    detection, _ = _detection(record)
    hits = list(found.hits) if found is not None else []
    firsts = _firsts(detection, position)
    commands = [str(c) for c in step.info.get("commands") or []]
    screen = _observation_after(record, index)
    if screen is None:
        screen = str(step.info.get("output") or "")
    header, rest = _split_header(screen)
    keys = (
        _keystrokes_html(commands, hits)
        if commands or "commands" in step.info
        else html.escape(step.action)
    )
    if not step.valid:
        keys += f'\n<span style="color:#ff8787">invalid: {html.escape(step.invalid_reason or "")}</span>'
    if _completes(step.action):
        keys += '\n<span style="color:#8ce99a">task marked complete</span>'
    offset_screen = _screen_html(rest, step, hits)
    bar = f"{html.escape(condition)} · step {index} ({index + 1} of {len(record.steps)})"
    parts = [
        f'<div style="{_BAR}">keystrokes sent</div>',
        f'<pre class="term-keys" style="{_KEYS}">{keys}</pre>',
        f'<div style="{_BAR}">{html.escape(header or "terminal after the step")}</div>',
        f'<pre class="term-screen" style="{_SCREEN}">{offset_screen}</pre>',
        _flags_html(found, firsts, hits, step.info),
        _verification_details(step.info),
    ]
    caption = []
    if found is not None and found.discovered:
        arts = _listing(list(dict.fromkeys(h.artefact for h in hits if h.kind == "discovery")))
        caption.append(f"discovered {arts}" + (" (first)" if "discovery" in firsts else ""))
    if found is not None and found.interacted:
        arts = _listing(
            list(
                dict.fromkeys(
                    h.artefact for h in hits if h.kind == "interaction" and h.signal == "command"
                )
            )
        )
        caption.append(f"interacted with {arts}" + (" (first)" if "interaction" in firsts else ""))
    if step.info.get("resolved") is not None:
        caption.append("resolved" if step.info.get("resolved") else "not resolved")
    return StepView("html", _frame(bar, parts), caption="; ".join(caption) or condition)


def _frame(bar: str, parts: list[str]) -> str:
    return (
        f'<div class="term-view" style="{_BOX}"><div style="{_BAR}">{bar}</div>'
        + "".join(parts)
        + "</div>"
    )
