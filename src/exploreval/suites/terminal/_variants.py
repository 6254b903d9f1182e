"""Rule-based rewrites of a gold solution script: steps with comments (level 2), wrong variants
(level 5). No LLM: the same script always gives the same text.

Steps: the script body (after the shebang and ``set -e`` header) is cut into statements; a
heredoc, a loop, an ``if`` or a ``{ ...; }`` group is one statement, as is a line continued with
``\\``, ``|`` or ``&&``. Each statement is explained by a comment made from a table of
per-program templates and its arguments (docs/terminal.md, "Solution injection").

Wrong variants: a *site* is one instruction-sized edit (a number changed, a comparison or
redirection operator swapped, a flag dropped, a file name or quoted string altered, a line
dropped, two adjacent lines swapped). Program names are never edited (``python3`` ->
``python`` would be an alias on some machines and a "command not found" on others: neither is a
semantic change). A variant applies one or two non-overlapping sites.
Candidates are drawn in a fixed pseudo-random order seeded by the task id; each candidate is
kept only if it is safe (no new absolute path, no ``..``) and, once run, makes the tests fail
(:mod:`exploreval.suites.terminal._decoys` does the running).
"""

from __future__ import annotations

import hashlib
import re
import shlex
from dataclasses import dataclass

import numpy as np

HEADER_RE = re.compile(r"^(#!.*|set -[euxo]+( pipefail)?|set -o \w+)$")
_HEREDOC_RE = re.compile(r"<<-?\s*(['\"]?)(\w+)\1")
_OPENERS = re.compile(r"(?:^|;|&&|\|\||\bthen|\bdo)\s*(for|while|until|if|case)\b")
_CLOSERS = re.compile(r"(?:^|;|&&|\|\|)\s*(done|fi|esac)\b")
_GROUP_OPEN = re.compile(r"(?:^|;|&&|\|\|)\s*\{(?=\s|$)")
_GROUP_CLOSE = re.compile(r"(?:^|;|&&|\|\||\s)\}(?=\s|$|;|\s*[<>|])")
_STRUCTURAL = re.compile(r"^\s*(do|done|then|else|fi|esac|\{|\}|;;)\s*$")


# --------------------------------------------------------------------------- steps
def split_header(script: str) -> tuple[list[str], list[str]]:
    """(header lines: shebang, set -e ...; body lines)."""
    lines = script.splitlines()
    i = 0
    header: list[str] = []
    while i < len(lines) and (HEADER_RE.match(lines[i].strip()) or not lines[i].strip()):
        if lines[i].strip():
            header.append(lines[i].strip())
        i += 1
    return header, lines[i:]


def split_steps(script: str) -> list[str]:
    """The script's top-level statements, each as its (possibly multi-line) text."""
    _, body = split_header(script)
    steps: list[str] = []
    current: list[str] = []
    depth = 0
    heredoc: str | None = None
    for line in body:
        if heredoc is not None:
            current.append(line)
            if line.strip() == heredoc:
                heredoc = None
            else:
                continue
        else:
            stripped = line.strip()
            if not current and (not stripped or stripped.startswith("#")):
                continue
            current.append(line)
            match = _HEREDOC_RE.search(line)
            if match:
                heredoc = match.group(2)
                depth += _depth_change(_strip_quoted(line[: match.start()]))
                continue
            depth += _depth_change(_strip_quoted(line))
        continuing = current[-1].rstrip().endswith(("\\", "|", "&&", "||"))
        if depth <= 0 and heredoc is None and not continuing:
            steps.append("\n".join(current))
            current = []
            depth = 0
    if current:
        steps.append("\n".join(current))
    return steps


def _strip_quoted(line: str) -> str:
    return re.sub(r"'[^']*'|\"(?:\\.|[^\"\\])*\"", "''", line)


def _depth_change(code: str) -> int:
    opens = len(_OPENERS.findall(code)) + len(_GROUP_OPEN.findall(code))
    closes = len(_CLOSERS.findall(code)) + len(_GROUP_CLOSE.findall(code))
    return opens - closes


# --------------------------------------------------------------------------- comments
_TEMPLATES: dict[str, str] = {
    "cd": "change into the directory {0}",
    "mkdir": "create the directory {args}",
    "mv": "move {init} to {last}",
    "cp": "copy {init} to {last}",
    "rm": "delete {args}",
    "chmod": "set the permissions {0} on {rest}",
    "ln": "create the link {last} pointing to {0}",
    "tar": "build a tar archive from {rest}",
    "find": "search for files under {0}",
    "sort": "sort the lines",
    "uniq": "collapse repeated lines (counting them)",
    "head": "keep only the first lines",
    "tail": "keep only the last lines",
    "wc": "count lines",
    "grep": "keep the lines matching {0}",
    "awk": "process the text with the awk program {0}",
    "sed": "edit the text with the sed expression {0}",
    "tr": "translate characters ({args})",
    "cut": "cut out fields",
    "jq": "query the JSON with the filter {0}",
    "printf": "write the text {0}",
    "echo": "write the text {args}",
    "cat": "read {args}",
    "python3": "run Python",
    "python": "run Python",
    "make": "run the make target {args}",
    "ls": "list {args}",
    "xargs": "run {0} on every input line",
    "sha256sum": "compute SHA-256 checksums of {args}",
    "true": "do nothing",
}
_GIT = {
    "init": "create a new git repository",
    "add": "stage {rest} for the next commit",
    "commit": "record a commit",
    "config": "set the git option {1} to {2}",
    "checkout": "switch branches ({rest})",
    "revert": "revert the commit {rest}",
    "log": "search the git history",
    "show": "show {rest}",
}


def _words(text: str) -> list[str]:
    try:
        lexer = shlex.shlex(text, posix=True, punctuation_chars="|&;<>")
        lexer.whitespace_split = True
        return list(lexer)
    except ValueError:
        return text.split()


def _fmt(template: str, args: list[str]) -> str:
    def q(items: list[str]) -> str:
        return " ".join(items) if items else "the input"

    values = {
        "args": q(args),
        "rest": q(args[1:]) if len(args) > 1 else q(args),
        "init": q(args[:-1]),
        "last": args[-1] if args else "the input",
    }
    out = template
    for key, value in values.items():
        out = out.replace("{" + key + "}", value)
    for i in range(3):
        out = out.replace("{" + str(i) + "}", args[i] if i < len(args) else "")
    return out.strip()


def explain_simple(words: list[str]) -> str:
    """One clause for one simple command (``words`` without redirections)."""
    if not words:
        return "run an empty command"
    prog = words[0]
    args = [w for w in words[1:] if not w.startswith("-")]
    if prog.endswith("/app") or prog == "app":
        return f"call the app endpoint '{' '.join(args[:2])}'" + (
            f" with {' '.join(words[3:])}" if len(words) > 3 else ""
        )
    if prog == "git":
        sub = args[0] if args else ""
        template = _GIT.get(sub, "run git " + sub)
        return _fmt(template, args[1:] if sub in _GIT else args)
    if prog.startswith("./"):
        return f"run the script {prog}" + (f" on {' '.join(args)}" if args else "")
    if "=" in prog and not prog.startswith("="):
        return f"set the variable {prog.split('=', 1)[0]}"
    known = _TEMPLATES.get(prog)
    if known is None:
        return f"run {prog}" + (f" with {' '.join(words[1:])}" if len(words) > 1 else "")
    return _fmt(known, args)


def explain_step(step: str) -> str:
    """A one-sentence explanation of a statement, by rule."""
    first = step.splitlines()[0].strip()
    heredoc = _HEREDOC_RE.search(first)
    if heredoc:
        target = re.search(r">\s*(\S+)", first[: heredoc.start()])
        if target:
            return f"Write the file {target.group(1)} with the text between the {heredoc.group(2)} markers"
        return f"Run {first.split()[0]} on the program between the {heredoc.group(2)} markers"
    m = re.match(r"(for|while|until)\s+(.*?)(;|$)", first)
    if m:
        body = [ln.strip() for ln in step.splitlines()[1:] if not _STRUCTURAL.match(ln)]
        inner = "; ".join(explain_step(b).rstrip(".").lower() for b in body[:2] if b)
        return f"Loop ({m.group(1)} {m.group(2).strip()}): {inner}".rstrip(": ")
    if first.startswith("if "):
        return "Check a condition and act on it"
    clauses: list[str] = []
    for stage in _split_top(step.replace("\\\n", " "), ("&&", "||", ";")):
        parts = _split_top(stage, ("|",))
        texts = []
        for part in parts:
            words = _words(part)
            plain, redirect = _redirections(words)
            text = explain_simple(plain)
            if redirect:
                text += ", " + redirect
            texts.append(text)
        clauses.append(", then ".join(texts))
    sentence = "; then ".join(c for c in clauses if c)
    return sentence[:1].upper() + sentence[1:]


def _split_top(text: str, seps: tuple[str, ...]) -> list[str]:
    """Split on separators outside quotes ('|' never splits '||')."""
    out: list[str] = []
    buf = ""
    quote = ""
    i = 0
    while i < len(text):
        ch = text[i]
        if quote:
            buf += ch
            if ch == quote:
                quote = ""
            i += 1
            continue
        if ch in "'\"":
            quote = ch
            buf += ch
            i += 1
            continue
        hit = next(
            (
                s
                for s in seps
                if text.startswith(s, i) and not (s == "|" and text.startswith("||", i))
            ),
            None,
        )
        if hit is not None:
            out.append(buf.strip())
            buf = ""
            i += len(hit)
            continue
        buf += ch
        i += 1
    out.append(buf.strip())
    return [p for p in out if p and p not in ("{", "}")]


def _redirections(words: list[str]) -> tuple[list[str], str]:
    plain: list[str] = []
    notes: list[str] = []
    i = 0
    while i < len(words):
        w = words[i]
        if w in (">", ">>", "<") and i + 1 < len(words):
            target = words[i + 1]
            if target.startswith("&") or target == "/dev/null":
                i += 2
                continue
            notes.append(
                {">": f"writing the result to {target}", ">>": f"appending to {target}"}.get(
                    w, f"reading from {target}"
                )
            )
            i += 2
            continue
        if w in ("{", "}", "2"):
            i += 1
            continue
        plain.append(w)
        i += 1
    return plain, " and ".join(notes)


def commented_script(script: str, *, start: int = 1, steps: list[str] | None = None) -> str:
    """The level-2 form: each statement in a function block with an explanatory comment."""
    header, _ = split_header(script)
    chosen = split_steps(script) if steps is None else steps
    out = ["#!/bin/bash", *[h for h in header if not h.startswith("#!")], ""]
    names = []
    for i, step in enumerate(chosen, start=start):
        name = f"step_{i}"
        names.append(name)
        out.append(f"# Step {i}: {explain_step(step)}.")
        out.append(f"{name}() {{")
        out.extend("  " + ln if _indentable(step, k) else ln for k, ln in _lines(step))
        out.append("}")
        out.append("")
    out.extend(names)
    return "\n".join(out) + "\n"


def _lines(step: str) -> list[tuple[int, str]]:
    return list(enumerate(step.splitlines()))


def _indentable(step: str, k: int) -> bool:
    """Heredoc bodies and their delimiter must stay byte-exact: never indent them."""
    heredoc: str | None = None
    for i, line in enumerate(step.splitlines()):
        if i == k:
            return heredoc is None
        if heredoc is not None:
            if line.strip() == heredoc:
                heredoc = None
            continue
        m = _HEREDOC_RE.search(line)
        if m:
            heredoc = m.group(2)
    return True


# --------------------------------------------------------------------------- mutations
@dataclass(frozen=True)
class Site:
    """One instruction-sized edit of the script body: replace body[start:end] by text."""

    kind: str
    start: int
    end: int
    text: str


_OPERATOR_SWAPS = (
    (r"(?<=\s)>>(?=\s)", ">"),
    (r"(?<=\s)>(?=\s)", ">>"),
    (r"==", "!="),
    (r"!=", "=="),
    (r"<=", "<"),
    (r">=", ">"),
    (r"(?<=\s)\+(?=\s)", "-"),
    (r"(?<=\s)-(?=\s)", "+"),
    (r"\bhead\b", "tail"),
    (r"\btail\b", "head"),
    (r"\bTrue\b", "False"),
    (r"\btrue\b", "false"),
    (r"\bsort -V\b", "sort"),
)
_NUMBER = re.compile(r"(?<![\w.\-$])\d+(?![\w>])")
_FLAG = re.compile(r"(?<=\s)--?[A-Za-z][\w-]*(?=\s|$)")
_FILENAME = re.compile(
    r"(?<![\w/.-])([\w-]+)\.(txt|csv|json|log|md|sh|py|tar|gz|jpg|ini|bin|dat|key|conf)\b"
)
_DQUOTED = re.compile(r"\"([^\"\n$\\]{2,})\"")
_QUOTED = re.compile(r"'([^'\n]{2,})'|\"([^\"\n]{2,})\"")
_WORD_ARG = re.compile(r"(?<=[ \t])[A-Za-z0-9_./*+@-][^\s'\"|;&<>()`$]*(?=[ \t;]|$)", re.M)
#: At most this many character deletions per quoted string (evenly spread).
_CHARS_PER_STRING = 8
_ABS_PATH = re.compile(r"(?<![\w.$}-])/[A-Za-z_][\w./-]*")


def body_of(script: str) -> tuple[str, str]:
    """(header text incl. trailing newline, body text) of a script."""
    lines = script.splitlines(keepends=True)
    i = 0
    while i < len(lines) and (HEADER_RE.match(lines[i].strip()) or not lines[i].strip()):
        i += 1
    return "".join(lines[:i]), "".join(lines[i:])


def mutation_sites(body: str) -> list[Site]:
    """Every single-instruction edit of ``body``, in a fixed order."""
    sites: list[Site] = []
    heredoc_delims = {m.group(2) for m in _HEREDOC_RE.finditer(body)}
    for m in _NUMBER.finditer(body):
        value = int(m.group())
        sites.append(Site("number", m.start(), m.end(), str(value + 1 if value else 1)))
    for pattern, repl in _OPERATOR_SWAPS:
        for m in re.finditer(pattern, body):
            sites.append(Site("operator", m.start(), m.end(), repl))
    for m in _FLAG.finditer(body):
        sites.append(Site("flag", m.start() - 1, m.end(), ""))
    for m in _FILENAME.finditer(body):
        sites.append(Site("name", m.start(1), m.end(1), m.group(1) + "_v2"))
    for m in _DQUOTED.finditer(body):
        sites.append(Site("string", m.end(1), m.end(1), "x"))
    for m in _QUOTED.finditer(body):
        group = 1 if m.group(1) is not None else 2
        start, end = m.start(group), m.end(group)
        positions = [p for p in range(start, end) if body[p].isalnum() or body[p] in ",.:!?=<>+-*"]
        step = max(1, len(positions) // _CHARS_PER_STRING)
        for p in positions[::step][:_CHARS_PER_STRING]:
            sites.append(Site("char", p, p + 1, ""))
    for m in _WORD_ARG.finditer(body):
        line_start = body.rfind("\n", 0, m.start()) + 1
        before = body[line_start : m.start()]
        program_position = re.search(r"(\||&&|;|\$\(|\(|\bxargs(\s+-\S+)*)\s*$", before)
        if (
            before.strip()
            and not program_position
            and not _inside_quotes(before)
            and not m.group().startswith("-")
        ):
            sites.append(Site("word", m.end(), m.end(), "2"))
            alnum = [m.start() + k for k, ch in enumerate(m.group()) if ch.isalnum()]
            for p in sorted({alnum[0], alnum[len(alnum) // 2], alnum[-1]}) if alnum else []:
                sites.append(Site("char", p, p + 1, ""))
    offsets = [0]
    lines = body.splitlines(keepends=True)
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    droppable = [
        i
        for i, line in enumerate(lines)
        if line.strip()
        and not _STRUCTURAL.match(line)
        and line.strip() not in heredoc_delims
        and not _HEREDOC_RE.search(line)
    ]
    for i in droppable:
        sites.append(Site("drop-line", offsets[i], offsets[i + 1], ""))
    for i in droppable:
        if i + 1 in droppable and lines[i].strip() != lines[i + 1].strip():
            a, b = lines[i], lines[i + 1]
            if not b.endswith("\n"):
                b += "\n"
                a = a.rstrip("\n")
            sites.append(Site("swap-lines", offsets[i], offsets[i + 2], b + a))
    sites.sort(key=lambda s: (s.start, s.end, s.kind, s.text))
    return sites


def _inside_quotes(prefix: str) -> bool:
    return prefix.count("'") % 2 == 1 or prefix.count('"') % 2 == 1


def apply_sites(body: str, sites: list[Site]) -> str:
    for site in sorted(sites, key=lambda s: s.start, reverse=True):
        body = body[: site.start] + site.text + body[site.end :]
    return body


def _overlap(a: Site, b: Site) -> bool:
    return a.start < b.end and b.start < a.end or a.start == b.start


def seed_of(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")


def candidate_ids(n_sites: int, seed: int) -> list[str]:
    """All single and pair candidates, singles first, each group in a seeded shuffle."""
    rng = np.random.default_rng(seed)
    singles = [f"s{i}" for i in rng.permutation(n_sites)]
    pairs_idx = [(i, j) for i in range(n_sites) for j in range(i + 1, n_sites)]
    order = [int(k) for k in rng.permutation(len(pairs_idx))]
    pairs = [f"p{pairs_idx[k][0]}-{pairs_idx[k][1]}" for k in order]
    return singles + pairs


def heredoc_spans(body: str) -> list[tuple[int, int]]:
    """(start, end) offsets of heredoc bodies: text a script writes into a file, not shell."""
    spans: list[tuple[int, int]] = []
    lines = body.splitlines(keepends=True)
    offset, pending = 0, ""
    start = 0
    for line in lines:
        if pending:
            if line.strip() == pending:
                spans.append((start, offset))
                pending = ""
        else:
            m = _HEREDOC_RE.search(line)
            if m:
                pending, start = m.group(2), offset + len(line)
        offset += len(line)
    if pending:
        spans.append((start, offset))
    return spans


_DISPLAY = re.compile(r"^\s*(echo|printf|cat)\b")


def is_executed(body: str, site: Site, heredocs: list[tuple[int, int]] | None = None) -> bool:
    """Whether ``site`` edits an instruction that changes behaviour: never a shell comment, and
    never an ``echo``/``printf``/``cat`` that only displays (no redirection into a file). Text
    inside a heredoc is the content of a written file (a generated script's instructions, a data
    file), so it counts; so does an ``echo ... > file``, which is how such tasks write answers."""
    spans = heredoc_spans(body) if heredocs is None else heredocs
    if any(a <= site.start < b for a, b in spans):
        return True
    line_start = body.rfind("\n", 0, site.start) + 1
    line_end = body.find("\n", site.start)
    line = body[line_start : len(body) if line_end < 0 else line_end]
    # quoted text blanked, same length: a '#' or '>' inside quotes is neither comment nor redirect
    code = re.sub(
        r"'[^']*'|\"(?:\\.|[^\"\\])*\"", lambda m: "'" + "_" * (len(m.group()) - 2) + "'", line
    )
    if code.lstrip().startswith("#"):
        return False
    comment = re.search(r"(^|\s)#", code)
    if comment and site.start - line_start >= comment.end() - 1:
        return False
    return not (_DISPLAY.match(line) and ">" not in code)


def build_candidate(script: str, cid: str) -> str | None:
    """The wrong variant ``cid`` of ``script``, or None when it is overlapping, unsafe, or
    edits no executed instruction (:func:`is_executed`)."""
    header, body = body_of(script)
    sites = mutation_sites(body)
    if cid.startswith("s"):
        chosen = [sites[int(cid[1:])]]
    else:
        i, j = (int(x) for x in cid[1:].split("-"))
        if _overlap(sites[i], sites[j]):
            return None
        chosen = [sites[i], sites[j]]
    heredocs = heredoc_spans(body)
    if not all(is_executed(body, site, heredocs) for site in chosen):
        return None
    mutated = apply_sites(body, chosen)
    if mutated == body or not is_safe(body, mutated):
        return None
    return header + mutated


def is_safe(original: str, mutated: str) -> bool:
    """No new absolute path, no parent-directory escape, no bare root."""
    if ".." in mutated and ".." not in original:
        return False
    if re.search(r"(^|\s)/(\s|$|\*)", mutated):
        return False
    return set(_ABS_PATH.findall(mutated)) <= set(_ABS_PATH.findall(original))
