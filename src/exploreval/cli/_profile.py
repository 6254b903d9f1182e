"""``exploreval profile``: one battery across the five paradigms, planned before it runs, with a
card at the end (``card.json``, ``card.md``, ``card.png``, ``card.html`` in the run directory).

Re-running the same command resumes: the battery is an ordinary run (``episodes.jsonl``, the
response cache), so finished episodes are kept and no model call is paid twice."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape

if TYPE_CHECKING:
    from exploreval.models import PriceTable

console = Console(stderr=True)
out = Console()


def default_out(model: str | None, quick: bool) -> Path:
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", model or "references").strip("-")
    return Path("runs") / f"profile-{name}{'-quick' if quick else ''}"


def _prices(path: Path | None) -> PriceTable:
    from exploreval.models import default_price_table, load_prices

    return default_price_table(load_prices(path) if path is not None else None)


def profile_cmd(
    model: Annotated[
        str | None,
        typer.Option(
            "--model",
            "-m",
            help="The model to profile: an OpenAI-compatible model name, or local:smollm2 "
            "(embedded, no key). Without it only the reference policies play.",
        ),
    ] = None,
    quick: Annotated[
        bool,
        typer.Option(
            "--quick", help="A small battery, a demonstration in minutes, not a measurement"
        ),
    ] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the plan only")] = False,
    max_cost_usd: Annotated[
        float | None,
        typer.Option("--max-cost-usd", help="Refuse a plan that costs more, and stop there"),
    ] = None,
    base_url: Annotated[
        str | None, typer.Option("--base-url", help="The endpoint (default: OpenAI's)")
    ] = None,
    api_key_env: Annotated[
        str, typer.Option("--api-key-env", help="The variable that holds the key")
    ] = "OPENAI_API_KEY",
    out_dir: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="Run directory (default runs/profile-MODEL[-quick])"),
    ] = None,
    concurrency: Annotated[int, typer.Option("--concurrency", "-c", min=1)] = 4,
    executor: Annotated[str, typer.Option("--executor", help="local or ray")] = "local",
    workers: Annotated[int, typer.Option("--workers", min=1)] = 1,
    part: Annotated[
        list[str] | None,
        typer.Option("--part", help="Only this part (repeatable): bandit, grid, puzzles, ..."),
    ] = None,
    prices: Annotated[
        Path | None, typer.Option("--prices", help="Price table (YAML/JSON, USD per 1M tokens)")
    ] = None,
    seconds_per_call: Annotated[
        float | None,
        typer.Option("--seconds-per-call", help="The plan's latency per call (default: measured)"),
    ] = None,
    chars_per_token: Annotated[
        float | None,
        typer.Option("--chars-per-token", help="The plan's tokenizer ratio (default 4.0)"),
    ] = None,
    calibrated_as: Annotated[
        str | None,
        typer.Option(
            "--calibrated-as",
            help="Price with this calibration's behaviour (local:smollm2, stub)",
        ),
    ] = None,
    compare: Annotated[
        list[Path] | None,
        typer.Option("--compare", help="Profile runs to set side by side (a leaderboard)"),
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Start over in a used directory")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No live progress")] = False,
    schema: Annotated[bool, typer.Option("--schema", help="Print card.json's JSON schema")] = False,
) -> None:
    """How does this model explore? One battery (profile-v1) across the five paradigms, a plan
    of its cost before it runs, and a card placing the model between reference policies and
    beside the papers' own models."""
    import json

    from exploreval.profile import BATTERY_NAME, Card, battery_parts, battery_plan, plan_lines

    if schema:
        out.print_json(json.dumps(Card.model_json_schema()))
        return
    if compare:
        leaderboard(compare, out_dir)
        return
    parts = battery_parts(BATTERY_NAME, only=part or None)
    table = _prices(prices)
    plan = battery_plan(
        parts,
        battery=BATTERY_NAME,
        model=model,
        quick=quick,
        concurrency=concurrency,
        prices=table,
        calibrated_as=calibrated_as,
        seconds_per_call=seconds_per_call,
        chars_per_token=chars_per_token,
    )
    title = f"plan: {BATTERY_NAME}{' --quick' if quick else ''} for {model or 'references only'}"
    console.print(f"[bold]{escape(title)}[/]", highlight=False)
    for line in plan_lines(plan):
        console.print(escape(line), highlight=False, soft_wrap=True)
    refuse_over_budget(plan.cost_usd, max_cost_usd, model)
    if dry_run:
        return
    run_profile(
        parts,
        plan,
        model=model,
        quick=quick,
        out_dir=out_dir or default_out(model, quick),
        agent_fields={"base_url": base_url, "api_key_env": api_key_env},
        concurrency=concurrency,
        executor=executor,
        workers=workers,
        max_cost_usd=max_cost_usd,
        prices=prices,
        force=force,
        quiet=quiet,
    )


def refuse_over_budget(cost: float | None, max_cost_usd: float | None, model: str | None) -> None:
    """Before any call: a plan dearer than the budget, or of unknown cost under a budget."""
    if max_cost_usd is None:
        return
    if cost is None:
        console.print(
            f"[red]refused[/]: --max-cost-usd {max_cost_usd:g} is set but {escape(str(model))} "
            "has no price, so the plan's cost is unknown; give one with --prices FILE",
            soft_wrap=True,
        )
        raise typer.Exit(2)
    if cost > max_cost_usd:
        console.print(
            f"[red]refused[/]: the plan costs about ${cost:,.2f}, above --max-cost-usd "
            f"{max_cost_usd:g}; raise it, or run fewer parts (--part) or --quick",
            soft_wrap=True,
        )
        raise typer.Exit(2)


def run_profile(
    parts: list[Any],
    plan: Any,
    *,
    model: str | None,
    quick: bool,
    out_dir: Path,
    agent_fields: dict[str, Any],
    concurrency: int,
    executor: str,
    workers: int,
    max_cost_usd: float | None,
    prices: Path | None,
    force: bool,
    quiet: bool,
) -> None:
    from exploreval.analysis import score_run
    from exploreval.cli._progress import score_progress
    from exploreval.cli._run_output import progress_runner
    from exploreval.models import load_prices
    from exploreval.profile import (
        BATTERY_NAME,
        battery_experiment,
        estimate_lines,
        make_card,
        write_card,
    )
    from exploreval.runner import spec_from_dict
    from exploreval.store import RunDir

    fields = {k: v for k, v in agent_fields.items() if v is not None}
    experiment, _slices = battery_experiment(
        parts,
        model=model,
        quick=quick,
        agent_fields=fields,
        concurrency=concurrency,
        executor=executor,
        workers=workers,
    )
    if max_cost_usd is not None:
        experiment["budget"] = {"max_cost_usd": max_cost_usd}
    if prices is not None:
        experiment["prices"] = {
            name: price.model_dump() for name, price in load_prices(prices).items()
        }
    spec = spec_from_dict(experiment, source=f"the {BATTERY_NAME} battery")
    summary = progress_runner(spec, out_dir, force, quiet)
    console.print(
        f"{summary.status}: {summary.completed} episodes run, {summary.skipped} resumed from the "
        f"log, {summary.errored} errored",
        highlight=False,
    )
    with score_progress(console) as progress:
        result = score_run(RunDir(out_dir), progress=progress)
    label = model or "references"
    card = make_card(
        out_dir,
        parts,
        battery=BATTERY_NAME,
        model=label,
        quick=quick,
        frame=result.table,
        plan=plan,
    )
    paths = write_card(card, out_dir)
    if model is not None:
        console.print("[bold]planned and used[/]", highlight=False)
        for line in estimate_lines(plan, card.usage):
            console.print(escape(line), highlight=False)
    for line in card_summary_lines(card):
        out.print(escape(line), highlight=False, soft_wrap=True)
    console.print(
        f"card: {escape(str(paths['html']))} (also card.md, card.png, card.json)", highlight=False
    )
    if summary.status in ("partial", "failed"):
        raise typer.Exit(1)


def card_summary_lines(card: Any) -> list[str]:
    """The card in 80 columns: a line per row, then success and each metric with its CI and
    where it sits between the row's references ("at 0.42": 0 = floor, 1 = ceiling)."""
    from exploreval.profile import estimate_text, placement_text

    lines = []
    for row in card.rows:
        title = f"{row.paradigm}: {row.row}" if row.row != row.part else row.paradigm
        lines.append(f"{title}: {row.reading}")
        success = f"success ({row.success_column})"
        lines.append(f"  {success[:22]:<22} {estimate_text(row.success)}")
        for cell in row.metrics:
            at = "-" if cell.placement is None else placement_text(cell)
            lines.append(f"  {cell.label[:22]:<22} {estimate_text(cell.model):<24} at {at}")
            if cell.placement is None and cell.note:
                lines.append(f"    ({cell.note})")
    return lines


def leaderboard(run_dirs: list[Path], out_dir: Path | None) -> None:
    """``--compare RUN...``: the cards side by side (``leaderboard.html``) and paired deltas."""
    from exploreval.core import write_atomic
    from exploreval.profile import (
        battery_parts,
        check_comparable,
        leaderboard_html,
        load_profile,
        paired_deltas,
    )

    if len(run_dirs) < 2:
        raise typer.BadParameter("give at least two profile runs", param_hint="--compare")
    profiles = [load_profile(path) for path in run_dirs]
    check_comparable(profiles)
    parts = battery_parts(profiles[0].card.battery)
    deltas = paired_deltas(profiles, parts)
    target = (out_dir or Path("runs")) / "leaderboard.html"
    target.parent.mkdir(parents=True, exist_ok=True)
    page = leaderboard_html(profiles, deltas)
    write_atomic(target, lambda tmp: tmp.write_text(page, encoding="utf-8"))
    for delta in deltas:
        if delta.mean is None:
            continue
        ci = "" if delta.low is None else f" [{delta.low:+.3f}, {delta.high:+.3f}]"
        out.print(
            escape(
                f"{delta.row:<12} {delta.metric:<20} {delta.model_a} - {delta.model_b}: "
                f"{delta.mean:+.3f}{ci} over {delta.pairs} episodes"
            ),
            highlight=False,
            soft_wrap=True,
        )
    console.print(f"leaderboard: {escape(str(target))}", highlight=False)


def register(app: typer.Typer) -> None:
    app.command("profile")(profile_cmd)
