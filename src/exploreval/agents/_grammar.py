"""Small builders for llama.cpp GBNF grammars and JSON schemas of replies (constrained decoding).

Harnesses describe the replies they accept; these helpers keep the grammar syntax in one place:
:func:`gbnf_literal` quotes text, :func:`gbnf_choice` is an alternation of literals,
:func:`gbnf_free_text` is bounded free text that cannot contain given characters (so reasoning
cannot run into the answer's tag), :func:`gbnf_grammar` assembles rules into a root.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any


def gbnf_literal(text: str) -> str:
    """``text`` as a GBNF string literal."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    escaped = escaped.replace("\t", "\\t").replace("\r", "\\r")
    return f'"{escaped}"'


def gbnf_choice(options: Iterable[str]) -> str:
    """One of ``options`` (literals), longest first so no option is a prefix trap."""
    unique = sorted(set(options), key=lambda s: (-len(s), s))
    if not unique:
        raise ValueError("a choice needs at least one option")
    return "(" + " | ".join(gbnf_literal(o) for o in unique) + ")"


def gbnf_free_text(max_chars: int, *, without: str = "") -> str:
    """Up to ``max_chars`` characters, none of ``without`` (newlines allowed)."""
    excluded = "".join(
        {"\\": "\\\\", "]": "\\]", "^": "\\^", "-": "\\-", "\n": "\\n"}.get(c, c) for c in without
    )
    cls = f"[^{excluded}]" if excluded else "[^\\x00]"
    return f"{cls}{{0,{int(max_chars)}}}"


def gbnf_grammar(root: str, **rules: str) -> str:
    """A GBNF grammar: ``root ::= ...`` then the named rules."""
    lines = [f"root ::= {root}"]
    lines += [f"{name} ::= {body}" for name, body in rules.items()]
    return "\n".join(lines) + "\n"


def json_enum_object(field: str, options: Sequence[str], **extra: Any) -> dict[str, Any]:
    """A JSON schema: an object whose ``field`` is one of ``options`` (plus ``extra`` string
    properties, all required)."""
    properties: dict[str, Any] = {field: {"type": "string", "enum": list(options)}}
    for name, schema in extra.items():
        properties[name] = schema
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }
