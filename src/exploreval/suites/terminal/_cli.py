"""Terminal-suite commands: ``exploreval images`` lists the task-image cache and prunes it."""

from __future__ import annotations

import re
import time
from typing import Annotated

import typer
from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from exploreval.core import CommandHost

_out = Console()
_UNITS = {"": 1, "b": 1, "k": 1e3, "kb": 1e3, "m": 1e6, "mb": 1e6, "g": 1e9, "gb": 1e9,
          "t": 1e12, "tb": 1e12}  # fmt: skip
_AGES = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_size(text: str) -> int:
    """``10G``, ``500MB``, ``1.5T``, ``0`` -> bytes (decimal units, as ``df -H``)."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*", text)
    if not match or match.group(2).lower() not in _UNITS:
        raise ValueError(f"--max-size {text!r}: expected a size such as 10G, 500M or 2T")
    return int(float(match.group(1)) * _UNITS[match.group(2).lower()])


def parse_age(text: str) -> float:
    """``7d``, ``12h``, ``2w``, ``30m`` -> seconds."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*", text)
    if not match:
        raise ValueError(f"--unused-for {text!r}: expected an age such as 7d, 12h, 2w or 30m")
    return float(match.group(1)) * _AGES[match.group(2)]


def _gb(n: int, *, short: bool = False) -> str:
    return f"{n / 1e9:.2f}G" if short else f"{n / 1e9:.2f} GB"


def _ago(when: float) -> str:
    seconds = max(0.0, time.time() - when)
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds / size:.0f}{unit} ago"
    return "now"


def images_cmd(
    ctx: typer.Context,
) -> None:
    """The task-image cache: each image and base system with its size on disk, what it shares,
    its last use and whether a run uses it now. `exploreval images prune` frees space."""
    if ctx.invoked_subcommand is not None:
        return
    from exploreval.suites.terminal._image_cache import cap_bytes, images_root, list_cache

    entries, total = list_cache()
    table = Table(
        title=f"image cache {images_root()}",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
    )
    # numbers never squeezed to nothing on an 80-column terminal: names and origins give way
    table.add_column("image or base", no_wrap=True, overflow="ellipsis", max_width=30)
    for name, width in (("own", 6), ("shared", 6), ("last use", 8)):
        table.add_column(name, justify="right", no_wrap=True, min_width=width)
    table.add_column("from", overflow="ellipsis", no_wrap=True, max_width=22)
    for e in sorted(entries, key=lambda e: (e.kind, -e.last_use)):
        origin = re.split(r" -> | = ", e.note, maxsplit=1)[0]  # the FROM it stands for
        name = e.name if e.kind == "image" else f"base {e.name}"
        table.add_row(name, _gb(e.own_bytes, short=True), _gb(e.shared_bytes, short=True),
                      "in use" if e.in_use else _ago(e.last_use), escape(origin))  # fmt: skip
    _out.print(table)
    cap = cap_bytes()
    images = sum(e.kind == "image" for e in entries)
    _out.print(
        f"{images} images, {len(entries) - images} base systems: {_gb(total)} on disk "
        f"(shared files counted once); cap {_gb(cap) if cap else 'none'} "
        "(EXPLOREVAL_IMAGE_CACHE_MAX_GB)",
        markup=False,
        highlight=False,
    )


def prune_cmd(
    everything: Annotated[
        bool, typer.Option("--all", help="Remove every image and base not in use")
    ] = False,
    unused_for: Annotated[
        str | None, typer.Option(help="Remove those unused for this long (7d, 12h, 2w)")
    ] = None,
    max_size: Annotated[
        str | None,
        typer.Option(help="Then remove the least recently used until the cache fits (10G)"),
    ] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Say what would go")] = False,
) -> None:
    """Remove cached images and base systems (never one a run is using); they are rebuilt
    when a task needs them again."""
    from exploreval.suites.terminal._image_cache import prune

    if not (everything or unused_for or max_size):
        raise ValueError(
            "images prune: say what to remove: --all, --unused-for AGE or --max-size SIZE"
        )
    removed, freed = prune(
        everything=everything,
        unused_for_s=parse_age(unused_for) if unused_for else None,
        max_bytes=parse_size(max_size) if max_size is not None else None,
        dry_run=dry_run,
    )
    verb = "would remove" if dry_run else "removed"
    for entry in removed:
        _out.print(f"{verb} {entry.kind} {entry.name} ({_gb(entry.own_bytes)}, last used "
                   f"{_ago(entry.last_use)})", markup=False, highlight=False)  # fmt: skip
    _out.print(f"{verb} {len(removed)}: {_gb(freed)} freed", markup=False, highlight=False)


def register(app: typer.Typer, host: CommandHost) -> None:
    images = typer.Typer(help="List and prune the terminal suite's task-image cache.")
    images.callback(invoke_without_command=True)(images_cmd)
    images.command("prune")(prune_cmd)
    app.add_typer(images, name="images")
