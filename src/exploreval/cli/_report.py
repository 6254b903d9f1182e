"""Report commands: ``report`` (one or several runs -> report.md + index.html) and ``compare``.

Registered by ``cli._app`` with one call (``register(app)``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

out = Console()
console = Console(stderr=True)

#: Columns that tell rows apart: never dropped, and the only ones that wrap (never cut with "…").
KEY_COLUMNS = ("env_id", "preset", "condition", "agent", "metric")
#: Shorter headers, so a numeric column is as wide as its numbers.
HEADERS = {
    "success_rate": "success",
    "success_ci_low": "ci_lo",
    "success_ci_high": "ci_hi",
    "mean_steps": "steps",
    "invalid_rate": "invalid",
    "prompt_tokens": "prompt_tok",
    "completion_tokens": "compl_tok",
    "cost_usd": "cost_usd",
    "p_permutation": "p_perm",
}
#: Which columns stay when a table does not fit the terminal (first = kept longest); columns not
#: listed go first. ``--wide`` shows every column.
PRIORITY = (
    "env_id",
    "preset",
    "condition",
    "agent",
    "metric",
    "n",
    "success_rate",
    "delta",
    "ci_low",
    "ci_high",
    "p_permutation",
    "success_ci_low",
    "success_ci_high",
    "mean_steps",
    "tokens",
    "errored",
    "budget",
    "cost_usd",
    "invalid_rate",
    "mean_a",
    "mean_b",
    "example",
    "completion_tokens",
    "prompt_tokens",
)
#: Narrowest a wrapping key column gets (it folds onto more lines below that).
KEY_MIN_WIDTH = 10


def short_env(env_id: str) -> str:
    """``exploreval/GridDAG-v0`` -> ``GridDAG-v0`` (the namespace is the same on every row)."""
    return env_id.removeprefix("exploreval/")


def _number(value: Any, column: str) -> str:
    """One number as one unbreakable token: 3 decimals, whole counts whole, big counts in k/M."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return "-" if value is None else str(value)
    if isinstance(value, float) and value != value:  # NaN
        return "-"
    if isinstance(value, int) or (value.is_integer() and abs(value) >= 1000):
        number = int(value)
        if abs(number) >= 10_000_000:
            return f"{number / 1e6:.1f}M"
        if abs(number) >= 100_000:
            return f"{number / 1e3:.0f}k"
        return str(number)
    return f"{value:.3g}" if abs(value) >= 1000 else f"{value:.3f}"


def _cells(frame: Any) -> dict[str, list[str]]:
    cells: dict[str, list[str]] = {}
    for column in frame.columns:
        name = str(column)
        values = frame[column].tolist()
        if name == "env_id":
            cells[name] = [escape(short_env(str(v))) for v in values]
        elif name in KEY_COLUMNS:
            cells[name] = ["-" if v is None else escape(str(v)) for v in values]
        else:
            cells[name] = [_number(v, name) for v in values]
    return cells


def _widths(cells: dict[str, list[str]], key_width: int | None = None) -> dict[str, int]:
    """What each column needs: numbers their longest value (they never wrap); key columns their
    longest value capped at ``key_width`` (default ``KEY_MIN_WIDTH``; they wrap below it)."""
    out = {}
    cap = KEY_MIN_WIDTH if key_width is None else key_width
    for name, values in cells.items():
        header = HEADERS.get(name, name)
        longest = max([len(v) for v in values], default=0)
        if name in KEY_COLUMNS:
            out[name] = min(max(longest, len(header)), max(cap, len(header)))
        else:
            out[name] = max(longest, len(header))
    return out


#: Numeric columns kept before key columns are narrowed (what a row is about).
CORE = ("n", "success_rate", "delta", "ci_low", "ci_high", "p_permutation", "mean_steps")
#: Widest a key column gets while low-priority columns are still being left out for it.
KEY_COMFORT_WIDTH = 26


def _total(widths: dict[str, int], names: list[str]) -> int:
    # a rich table with the default box: 3 characters per column (padding, rule) plus one
    return sum(widths[n] for n in names) + 3 * len(names) + 1


def fit_columns(
    frame: Any, width: int, wide: bool = False
) -> tuple[list[str], list[str], dict[str, int]]:
    """(columns shown, columns left out, their widths) so the table fits ``width`` columns.

    First key columns get up to ``KEY_COMFORT_WIDTH`` and low-priority columns (``PRIORITY``,
    unlisted ones first) are left out for them, never the ``CORE`` ones; if that is not enough,
    key columns narrow to ``KEY_MIN_WIDTH`` (they wrap) and further columns are left out. Key
    columns are never left out. ``wide`` keeps everything at full width."""
    columns = [str(c) for c in frame.columns]
    cells = _cells(frame)
    if wide:
        return columns, [], _widths(cells, key_width=10_000)
    rank = {name: i for i, name in enumerate(PRIORITY)}
    droppable = sorted(
        (c for c in columns if c not in KEY_COLUMNS),
        key=lambda c: -rank.get(c, len(PRIORITY) + 1),
    )
    comfortable = _widths(cells, key_width=KEY_COMFORT_WIDTH)
    shown = list(columns)
    dropped: list[str] = []
    for column in droppable:
        if _total(comfortable, shown) <= width or column in CORE:
            break
        shown.remove(column)
        dropped.append(column)
    if _total(comfortable, shown) <= width:
        widths = comfortable
    else:
        widths = _widths(cells)
        for column in droppable:
            if _total(widths, shown) <= width:
                break
            if column in shown:
                shown.remove(column)
                dropped.append(column)
    # spare room goes back to the key columns, up to their longest value
    spare = width - _total(widths, shown)
    for name in (n for n in shown if n in KEY_COLUMNS):
        longest = max([len(v) for v in cells[name]], default=0)
        grow = max(0, min(spare, longest - widths[name]))
        widths[name] += grow
        spare -= grow
    return shown, dropped, widths


def rich_table(
    frame: Any, title: str = "", *, width: int | None = None, wide: bool = False
) -> Table:
    """A rich table that fits ``width`` (default: the terminal's): numbers are never split or cut
    (their columns are as wide as their longest value), low-priority columns are left out when
    needed (named in the caption; ``wide=True`` shows all), and only key columns (env, preset,
    condition, agent, metric) wrap."""
    if width is None:
        width = Console().width
    shown, dropped, widths = fit_columns(frame, width, wide)
    cells = _cells(frame)
    caption = (
        f"left out at {width} columns: {', '.join(dropped)} (--wide: all)" if dropped else None
    )
    table = Table(title=escape(title), caption=caption, caption_justify="left")
    for name in shown:
        header = escape(HEADERS.get(name, name))
        if name in KEY_COLUMNS:
            table.add_column(
                header, overflow="fold", no_wrap=False, min_width=min(widths[name], KEY_MIN_WIDTH)
            )
        else:
            table.add_column(header, justify="right", no_wrap=True, min_width=widths[name])
    for index in range(len(frame)):
        table.add_row(*(cells[name][index] for name in shown))
    return table


def print_table(console: Console, frame: Any, title: str = "", *, wide: bool = False) -> None:
    """Print ``frame`` fitted to the console's width, or with every column (``wide``), then as
    wide as it needs to be even if the terminal is narrower."""
    table = rich_table(frame, title, width=console.width, wide=wide)
    if wide:
        _, _, widths = fit_columns(frame, console.width, wide=True)
        needed = _total(widths, list(widths))
        narrow = console.width
        console.width = max(narrow, needed)  # wider than the terminal: it may wrap the lines
        try:
            console.print(table)
        finally:
            console.width = narrow
    else:
        console.print(table)


def register(app: typer.Typer) -> None:
    @app.command("report")
    def report_cmd(
        run_dirs: Annotated[
            list[Path], typer.Argument(help="Run directories (several: one multi-run report)")
        ],
        out_dir: Annotated[
            Path | None,
            typer.Option("--out", help="Report directory (default: the first run's report/)"),
        ] = None,
    ) -> None:
        """Write report.md and a self-contained index.html for one or several runs."""
        from exploreval.analysis import build_report
        from exploreval.cli._progress import score_progress
        from exploreval.store import RunDir

        with score_progress(console) as progress:
            path = build_report([RunDir(d) for d in run_dirs], out_dir, progress=progress)
        out.print(f"report: {path}", markup=False, soft_wrap=True)
        out.print(f"html:   {path.parent / 'index.html'}", markup=False, soft_wrap=True)

    @app.command("compare")
    def compare_cmd(
        run_a: Annotated[Path, typer.Argument(help="Run directory A (the reference)")],
        run_b: Annotated[Path, typer.Argument(help="Run directory B (delta = B - A)")],
        agent_a: Annotated[str | None, typer.Option(help="Only this agent of run A")] = None,
        agent_b: Annotated[str | None, typer.Option(help="Only this agent of run B")] = None,
        as_json: Annotated[bool, typer.Option("--json", help="Print JSON")] = False,
        wide: Annotated[
            bool, typer.Option("--wide", help="Every column, even wider than the terminal")
        ] = False,
    ) -> None:
        """Paired comparison of two runs on their shared episode specs (env, preset, condition,
        seed, repeat): one agent per run are paired whatever their names, else agents with the
        same name; per-metric deltas with paired bootstrap CIs, permutation and sign tests,
        flipped episodes."""
        from exploreval.analysis import compare_tables, run_labels, score_run
        from exploreval.core import gc_paused
        from exploreval.store import RunDir

        tables = []
        manifests = []
        with gc_paused():  # each run's records freed by refcount as soon as its rows are taken
            for path in (run_a, run_b):
                run = RunDir(path)
                manifests.append((run.read_manifest(), run.path))
                tables.append(score_run(run).all_rows())
        names = run_labels(manifests)
        result = compare_tables(
            tables[0],
            tables[1],
            name_a=names[0],
            name_b=names[1],
            agent_a=agent_a,
            agent_b=agent_b,
        )
        if as_json:
            out.print_json(result.model_dump_json())
            return
        for warning in result.warnings:
            console.print(f"[yellow]warning[/]: {escape(str(warning))}")
        for metric, definition in result.definitions.items():
            out.print(f"definition of {metric}: {definition}", markup=False, soft_wrap=True)
        from exploreval.analysis import comparison_frame, headline_lines

        # each run's own summary first (every episode, paired or not), from the registry the
        # report and `score` read; the paired deltas follow, headline metrics first
        for name, table in zip(names, tables, strict=True):
            lines = headline_lines(table[table["status"] == "ok"] if "status" in table else table)
            out.print(f"{name}:", markup=False, highlight=False, soft_wrap=True)
            for line in lines:
                out.print(f"  {line}", markup=False, highlight=False, soft_wrap=True)

        for item in result.comparisons:
            frame = comparison_frame(item)
            title = f"{item.agent_a} (A) vs {item.agent_b} (B): {item.pairs} pairs; delta = B - A"
            print_table(out, frame, title, wide=wide)
            if item.success_sign_test_p is not None:
                solved_b = sum(1 for f in item.flipped if f.solved_by == "B")
                out.print(
                    f"flipped: {len(item.flipped)} ({solved_b} solved only by B, "
                    f"{len(item.flipped) - solved_b} only by A); sign test p = "
                    f"{item.success_sign_test_p:.4g}",
                    markup=False,
                    soft_wrap=True,
                )
                for flip in item.flipped[:20]:
                    out.print(
                        f"  {short_env(flip.env_id)} [{flip.preset}]"
                        + (f" [{flip.condition}]" if flip.condition != "-" else "")
                        + f" seed {flip.seed} repeat "
                        f"{flip.repeat}: solved by {flip.solved_by}  A={flip.episode_a} "
                        f"B={flip.episode_b}",
                        markup=False,
                        soft_wrap=True,
                    )
        if not result.comparisons:
            raise typer.Exit(code=1)

    del report_cmd, compare_cmd
