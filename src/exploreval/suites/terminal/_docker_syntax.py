"""Dockerfile syntax, as BuildKit reads it: instructions, flags, JSON forms, heredocs, variables.

Pure parsing (no file system beyond reading the Dockerfile): :func:`parse_dockerfile_text`
returns the build stages with their instructions and line numbers; :func:`expand` substitutes
``$VAR`` / ``${VAR}`` / ``${VAR:-default}`` / ``${VAR:+alt}`` / ``${VAR-default}`` /
``${VAR+alt}`` as Docker does in ``ENV``, ``ARG``, ``WORKDIR``, ``COPY``, ``USER``... (``RUN``
leaves them to the shell). What the builder does with each instruction is in :mod:`._image`.

Supported syntax: the ``# escape=`` parser directive, comments, line continuations,
exec (JSON array) and shell forms, ``--flag=value`` options, heredocs (``<<EOF``, ``<<-EOF``,
``<<"EOF"``, several per instruction) on ``RUN``, ``COPY`` and ``ADD``, ``FROM ... AS name`` and
``ARG`` before the first ``FROM``. Errors name the file and line.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from exploreval.suites.terminal._errors import TaskFormatError

KEYWORDS = frozenset(
    {
        "FROM", "RUN", "CMD", "LABEL", "MAINTAINER", "EXPOSE", "ENV", "ADD", "COPY",
        "ENTRYPOINT", "VOLUME", "USER", "WORKDIR", "ARG", "ONBUILD", "STOPSIGNAL",
        "HEALTHCHECK", "SHELL",
    }
)  # fmt: skip
_HEREDOC = re.compile(r"<<(-?)(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\2")
_FLAG = re.compile(r"^--([a-z][a-z0-9-]*)(?:=(\S*))?$")


@dataclass(frozen=True)
class Heredoc:
    name: str
    body: str
    strip_tabs: bool
    #: ``<<"EOF"`` / ``<<'EOF'``: no variable expansion in the body.
    quoted: bool


@dataclass(frozen=True)
class Instruction:
    line: int
    keyword: str
    flags: dict[str, str]
    #: The rest of the line after the flags (continuations joined), heredoc markers included.
    args: str
    #: The exec form's array, when the arguments are one.
    json_args: list[str] | None = None
    heredocs: tuple[Heredoc, ...] = ()

    def where(self, path: Path | str) -> str:
        return f"{path}:{self.line}"


@dataclass
class Stage:
    base: str
    alias: str | None
    line: int
    platform: str | None = None
    instructions: list[Instruction] = field(default_factory=list)


@dataclass
class Dockerfile:
    path: Path
    stages: list[Stage]
    #: ``ARG`` before the first ``FROM``: name -> default (None: no default).
    global_args: dict[str, str | None]
    escape: str = "\\"

    @property
    def final(self) -> Stage:
        return self.stages[-1]


def _directives(lines: list[str]) -> tuple[str, int]:
    """The escape character and how many leading lines are parser directives."""
    escape = "\\"
    count = 0
    for raw in lines:
        match = re.match(r"^#\s*([a-zA-Z]+)\s*=\s*(\S+)\s*$", raw)
        if not match:
            break
        if match.group(1).lower() == "escape" and match.group(2) in ("\\", "`"):
            escape = match.group(2)
        count += 1
    return escape, count


def _split_flags(text: str) -> tuple[dict[str, str], str]:
    flags: dict[str, str] = {}
    rest = text.lstrip()
    while rest.startswith("--"):
        token, _, after = rest.partition(" ")
        match = _FLAG.match(token)
        if not match:
            break
        flags[match.group(1)] = match.group(2) if match.group(2) is not None else "true"
        rest = after.lstrip()
    return flags, rest


def parse_dockerfile_text(text: str, path: Path | str = "Dockerfile") -> Dockerfile:
    """Parse a Dockerfile's text (``path`` only names it in errors)."""
    path = Path(path)
    lines = text.splitlines()
    escape, skip = _directives(lines)
    stages: list[Stage] = []
    global_args: dict[str, str | None] = {}
    i = skip
    while i < len(lines):
        raw = lines[i]
        stripped = raw.strip()
        if not stripped or stripped.startswith("#"):
            i += 1
            continue
        start = i + 1
        logical = ""
        while True:
            line = lines[i].rstrip()
            if logical and line.lstrip().startswith("#"):  # comments inside a continuation
                i += 1
                if i >= len(lines):
                    break
                continue
            if line.endswith(escape) and not line.endswith(escape * 2):
                logical += line[:-1]
                i += 1
                if i >= len(lines):
                    break
                continue
            logical += line
            i += 1
            break
        keyword, _, rest = logical.strip().partition(" ")
        keyword = keyword.upper()
        if keyword not in KEYWORDS:
            raise TaskFormatError(
                f"{path}:{start}: unknown instruction {keyword!r} (expected one of "
                f"{', '.join(sorted(KEYWORDS))})"
            )
        flags, args = _split_flags(rest)
        heredocs: list[Heredoc] = []
        if keyword in ("RUN", "COPY", "ADD"):
            for match in _HEREDOC.finditer(args):
                strip_tabs, quote, name = match.group(1) == "-", match.group(2), match.group(3)
                body: list[str] = []
                while True:
                    if i >= len(lines):
                        raise TaskFormatError(
                            f"{path}:{start}: heredoc <<{name} is never closed (expected a line "
                            f"{name!r})"
                        )
                    line = lines[i]
                    i += 1
                    check = line.lstrip("\t") if strip_tabs else line
                    if check == name:
                        break
                    body.append(check if strip_tabs else line)
                heredocs.append(Heredoc(name, "".join(b + "\n" for b in body), strip_tabs,
                                        bool(quote)))  # fmt: skip
        json_args = None
        if args.startswith("[") and not heredocs:
            try:
                value = json.loads(args)
            except json.JSONDecodeError:
                value = None  # Docker falls back to the shell form
            if isinstance(value, list) and all(isinstance(v, str) for v in value):
                json_args = value
        instruction = Instruction(start, keyword, flags, args, json_args, tuple(heredocs))
        if keyword == "FROM":
            words = args.split()
            if not words:
                raise TaskFormatError(f"{path}:{start}: FROM needs an image")
            alias = None
            if len(words) >= 3 and words[1].lower() == "as":
                alias = words[2]
            elif len(words) != 1:
                raise TaskFormatError(f"{path}:{start}: FROM expects 'image [AS name]'")
            stages.append(Stage(words[0], alias, start, flags.get("platform")))
        elif keyword == "ARG" and not stages:
            name, default = _arg(args, path, start)
            global_args[name] = default
        elif not stages:
            raise TaskFormatError(f"{path}:{start}: {keyword} before the first FROM")
        else:
            stages[-1].instructions.append(instruction)
    if not stages:
        raise TaskFormatError(f"{path}: no FROM instruction")
    return Dockerfile(path, stages, global_args, escape)


def parse_dockerfile_file(path: Path) -> Dockerfile:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise TaskFormatError(f"{path}: cannot be read as UTF-8 text: {exc}") from exc
    return parse_dockerfile_text(text, path)


def _arg(args: str, path: Path, line: int) -> tuple[str, str | None]:
    name, eq, default = args.strip().partition("=")
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise TaskFormatError(f"{path}:{line}: ARG expects NAME[=default], got {args!r}")
    return name, (_unquote(default) if eq else None)


def arg_of(instruction: Instruction, path: Path) -> tuple[str, str | None]:
    return _arg(instruction.args, path, instruction.line)


def _unquote(text: str) -> str:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        return text[1:-1]
    return text


_VAR = re.compile(
    r"\\\$|\$(?:\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-+])([^}]*))?\}|([A-Za-z_][A-Za-z0-9_]*))"
)


def expand(text: str, variables: dict[str, str]) -> str:
    """Docker's variable substitution (``\\$`` keeps a literal dollar)."""

    def replace(match: re.Match[str]) -> str:
        if match.group(0) == "\\$":
            return "$"
        name = match.group(1) or match.group(4)
        op, word = match.group(2), match.group(3)
        value = variables.get(name)
        if op is None:
            return value or ""
        if op == ":-":
            return value if value else expand(word, variables)
        if op == "-":
            return value if value is not None else expand(word, variables)
        if op == ":+":
            return expand(word, variables) if value else ""
        return expand(word, variables) if value is not None else ""  # "+"

    return _VAR.sub(replace, text)


def split_words(text: str) -> list[str]:
    """Whitespace-separated words with quotes removed (COPY/ADD/USER arguments)."""
    import shlex

    try:
        return shlex.split(text, posix=True)
    except ValueError:
        return text.split()


def env_pairs(
    instruction: Instruction, variables: dict[str, str], path: Path
) -> list[tuple[str, str]]:
    """``ENV a=1 b="x y"`` or the legacy ``ENV a 1 2`` (one variable, the rest its value)."""
    import shlex

    text = instruction.args.strip()
    if not text:
        raise TaskFormatError(f"{instruction.where(path)}: ENV needs NAME=value")
    first = text.split(None, 1)[0]
    if "=" not in first:
        name, _, value = text.partition(" ")
        return [(name, expand(value.strip(), variables))]
    try:
        words = shlex.split(text, posix=True)
    except ValueError as exc:
        raise TaskFormatError(f"{instruction.where(path)}: ENV does not parse: {exc}") from exc
    pairs: list[tuple[str, str]] = []
    for word in words:
        name, eq, value = word.partition("=")
        if not eq:
            raise TaskFormatError(
                f"{instruction.where(path)}: ENV expected NAME=value pairs, got {word!r}"
            )
        pairs.append((name, expand(value, {**variables, **dict(pairs)})))
    return pairs
