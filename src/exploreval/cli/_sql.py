"""``exploreval sql``: query runs' columnar tables with DuckDB (docs/records.md, "Columns")."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

out = Console()

FORMATS = ("table", "csv", "json", "parquet")


def register(app: typer.Typer) -> None:
    @app.command("sql")
    def sql_cmd(
        args: Annotated[
            list[str],
            typer.Argument(
                help="One or more run directories, then the query", metavar="RUN_DIR... QUERY"
            ),
        ],
        fmt: Annotated[
            str, typer.Option("--format", help="table (on screen), csv, json or parquet")
        ] = "table",
        out_file: Annotated[
            Path | None, typer.Option("--out", "-o", help="Write the result here")
        ] = None,
    ) -> None:
        """Query runs with SQL (DuckDB). Views: episodes, steps (each episode's latest record),
        all_episodes, all_steps (every log line), results (after score); a run_dir column tells
        runs apart. Example: exploreval sql runs/a runs/b "select run_dir, agent, avg(success::int)
        from episodes group by all"."""
        from exploreval.store import open_columns

        if len(args) < 2:
            raise ValueError("give one or more run directories, then the query")
        if fmt not in FORMATS:
            raise ValueError(f"--format {fmt!r}: expected one of {', '.join(FORMATS)}")
        *runs, query = args
        con = open_columns([Path(r) for r in runs])
        try:
            relation = con.sql(query)
        except Exception as exc:  # duckdb's parser and binder errors name the problem
            raise ValueError(f"the query failed: {exc}") from None
        if relation is None:
            return
        # the query runs here (DuckDB is lazy): a cast or a division that fails is the query's
        # failure too, said the same way as a parse error
        try:
            if fmt == "parquet":
                if out_file is None:
                    raise ValueError("--format parquet needs --out FILE")
                relation.write_parquet(str(out_file))
                out.print(f"wrote {out_file}", markup=False)
                return
            frame = relation.df()
        except ValueError:
            raise
        except Exception as exc:  # duckdb.Error and its kin (ConversionException...)
            raise ValueError(f"the query failed: {exc}") from None
        if fmt == "csv":
            text = frame.to_csv(index=False)
        elif fmt == "json":
            text = frame.to_json(orient="records", lines=True, date_format="iso")
        else:
            text = frame.to_string(index=False, max_rows=200)
        if out_file is not None:
            out_file.write_text(text, encoding="utf-8")
            out.print(f"wrote {out_file}", markup=False)
        else:
            out.file.write(text if text.endswith("\n") else text + "\n")
