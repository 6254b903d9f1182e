"""``exploreval export``: a run in another tool's log format (inspect_ai's, docs/inspect.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

out = Console()

EXPORT_FORMATS = ("inspect",)


def register(app: typer.Typer) -> None:
    @app.command("export")
    def export_cmd(
        run_dir: Annotated[Path, typer.Argument(help="The run directory to export")],
        out_dir: Annotated[Path, typer.Option("--out", "-o", help="Directory for the logs")],
        fmt: Annotated[
            str, typer.Option("--format", help="Log format: inspect (inspect_ai's eval logs)")
        ] = "inspect",
        log_format: Annotated[
            str, typer.Option(help="inspect_ai file format: eval (zip) or json")
        ] = "eval",
    ) -> None:
        """Write a run as another tool's logs: one inspect_ai log per env and agent, one sample
        per episode, that `inspect view` opens and `exploreval import` reads back exactly."""
        from exploreval.store import RunDir, StoreError

        if fmt not in EXPORT_FORMATS:
            raise ValueError(f"--format {fmt!r}: expected one of {', '.join(EXPORT_FORMATS)}")
        if not RunDir(run_dir).exists():
            raise StoreError(f"{run_dir} is not a run directory (no manifest.json)")
        from exploreval.interop import export_inspect

        written = export_inspect(run_dir, out_dir, log_format=log_format)
        for path in written:
            out.print(f"wrote {path}", markup=False, soft_wrap=True)
        out.print(f"open them: inspect view --log-dir {out_dir}", markup=False, soft_wrap=True)
