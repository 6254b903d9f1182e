"""``exploreval view``: serve the episode viewer for run directories, or write a static bundle."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def register(app: typer.Typer) -> None:
    """Add ``view`` to the ``exploreval`` command."""

    @app.command("view")
    def view_cmd(
        run_dirs: Annotated[list[Path], typer.Argument(help="Run directories to show")],
        port: Annotated[
            int, typer.Option(help="Port on 127.0.0.1 (0 = any free port)", min=0, max=65535)
        ] = 8765,
        host: Annotated[str, typer.Option(help="Address to bind (127.0.0.1 keeps it local)")] = (
            "127.0.0.1"
        ),
        bundle: Annotated[
            Path | None,
            typer.Option(
                "--bundle", help="Write a static copy (open DIR/index.html; no server) and exit"
            ),
        ] = None,
        chunk_size: Annotated[
            int, typer.Option(help="Episodes per data file in --bundle", min=1)
        ] = 20,
        verbose: Annotated[bool, typer.Option(help="Log every request")] = False,
    ) -> None:
        """Browse episodes: list, filter, step through observation, prompt, output, action, metrics
        and the suite's picture of each step. Keys: j/k steps, n/p episodes, / filter."""
        from rich.console import Console

        from exploreval.viewer import ViewerServer, write_viewer_bundle

        out = Console()
        for run_dir in run_dirs:
            if not (run_dir / "manifest.json").exists():
                raise ValueError(f"{run_dir} is not a run directory (no manifest.json)")
        if bundle is not None:
            page = write_viewer_bundle(run_dirs, bundle, chunk_size=chunk_size)
            out.print(f"viewer bundle: {page}", markup=False, soft_wrap=True)
            return
        try:
            server = ViewerServer(run_dirs, host=host, port=port, verbose=verbose)
        except OSError as exc:
            raise ValueError(
                f"cannot listen on {host}:{port} ({exc.strerror}); try --port 0 for a free port"
            ) from exc
        total = sum(len(ix) for ix in server.runs.indexes)
        out.print(
            f"viewer: {server.url}  ({total} episode{'' if total == 1 else 's'}; Ctrl-C to stop)",
            highlight=False,
            markup=False,
            soft_wrap=True,
        )
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            server.server_close()
