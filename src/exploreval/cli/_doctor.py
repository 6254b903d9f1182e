"""``exploreval doctor``: what is installed, and does the embedded model really answer."""

from __future__ import annotations

from typing import Annotated

import typer


def register(app: typer.Typer) -> None:
    @app.command("doctor")
    def doctor_cmd(
        smoke: Annotated[
            bool,
            typer.Option(
                help="Run one real completion on the embedded model (when [local] is installed)."
            ),
        ] = True,
        model: Annotated[
            str, typer.Option(help="The embedded model the completion runs on.")
        ] = "local:smollm2",
    ) -> None:
        """What is installed and what each part needs; one real completion on the embedded model.

        Exits 1 when the embedded model is installed but cannot answer (the install's check)."""
        from rich.console import Console

        out = Console()  # its own, as every command module has (no circle through _app)
        from exploreval.cli._doctor_checks import local_installed, print_report

        failed = print_report(out)
        if smoke and local_installed():
            from exploreval.models import smoke_local_model

            result = smoke_local_model(model)
            mark = "ok" if result.ok else "FAILED"
            out.print(f"{mark:7} {model}: {result.detail}", markup=False, soft_wrap=True)
            if not result.ok:
                from exploreval.models import REBUILD

                out.print(f"        fix: {REBUILD}", markup=False, soft_wrap=True)
                failed = True
        if failed:
            raise typer.Exit(1)
