"""Listings whose identifiers are never cut (``envs``, ``agents``, ``harnesses``, ``suites``,
``runs``): the text a user must type is printed whole.

On a terminal: a table whose *key* columns (ids, names, paths) keep their full width and never
wrap, while descriptions wrap into what is left. In a pipe (or with ``--plain``): one line per row,
tab-separated, with a header line: nothing wraps, nothing is cut, ``cut -f1`` works.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.markup import escape
from rich.table import Table


def print_listing(
    console: Console,
    title: str,
    columns: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    keys: int = 1,
    plain: bool | None = None,
) -> None:
    """``rows`` of plain text (never markup); the first ``keys`` columns are identifiers."""
    if plain if plain is not None else not console.is_terminal:
        # written past rich, which would expand the tabs into spaces
        out = console.file
        out.write("\t".join(columns) + "\n")
        for row in rows:
            out.write("\t".join(cell.replace("\t", " ") for cell in row) + "\n")
        out.flush()
        return
    table = Table(title=escape(title))
    for index, column in enumerate(columns):
        if index < keys:
            width = max([len(column), *(len(r[index]) for r in rows)])
            table.add_column(column, no_wrap=True, min_width=width)
        else:
            table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(*(escape(cell) for cell in row))
    console.print(table)
