"""Bandit commands: ``bandit-baselines`` (batch-simulated baselines) and ``bandit-decisions``
(the per-round decision experiment of Section 3.4)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from exploreval.core import CommandHost

out = Console()
err = Console(stderr=True)

_STAT_ROWS = (
    ("median_reward", "MedianReward"),
    ("suff_fail_freq_half", "SuffFailFreq(T/2)"),
    ("k_min_frac", "K*MinFrac"),
    ("greedy_frac", "GreedyFrac"),
    ("least_frac", "LeastFrac"),
    ("mean_reward", "mean reward"),
    ("pseudo_regret", "pseudo-regret"),
)


# -> Any: typer command helper returning parsed CLI values
def _instance(
    instance: str, arms: int | None, gap: float | None, horizon: int | None, means: str | None
) -> Any:
    """A named instance, with any of K, Δ, T or explicit means overriding it."""
    from exploreval.suites.bandit import BanditInstance, instance_from_preset

    if means is not None:
        try:
            values = tuple(float(x) for x in means.split(",") if x.strip())
        except ValueError:
            raise ValueError(f"--means {means!r}: expected numbers like 0.6,0.4,0.4") from None
        base = instance_from_preset(instance)
        return BanditInstance(values, horizon if horizon is not None else base.horizon)
    return instance_from_preset(instance, n_arms=arms, gap=gap, horizon=horizon)


def _policy_key(policy: Any) -> str:
    if policy.name == "egreedy":
        return f"egreedy@{policy.params.get('epsilon', 0.1):g}"
    return str(policy.name)


def baselines_cmd(
    instance: Annotated[
        str, typer.Option(help="Named instance: hard, easy, hard-200, hard-500, smoke")
    ] = "hard",
    arms: Annotated[
        int | None, typer.Option(help="Number of arms K (overrides the instance)")
    ] = None,
    gap: Annotated[float | None, typer.Option(help="Gap Δ between best and other arms")] = None,
    horizon: Annotated[int | None, typer.Option(help="Rounds T")] = None,
    means: Annotated[
        str | None, typer.Option(help="Explicit arm means, e.g. 0.7,0.5,0.5 (overrides K and Δ)")
    ] = None,
    replicates: Annotated[int, typer.Option(help="Replicates per baseline")] = 1000,
    seed: Annotated[int, typer.Option(help="Seed of the simulation")] = 0,
    baseline: Annotated[
        list[str],
        typer.Option(help="ts | ucb | greedy | random (repeatable; default ts, ucb, greedy)"),
    ] = [],  # noqa: B006
    epsilon: Annotated[
        list[float], typer.Option(help="Add ε-Greedy with this ε (repeatable)")
    ] = [],  # noqa: B006
    sweep: Annotated[bool, typer.Option(help="Also trace the ε-Greedy curve of Figure 3")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output")] = False,
) -> None:
    """Simulate the baselines (vectorised) and print the paper's summary statistics."""
    from exploreval.suites.bandit import Policy, baseline_table, epsilon_curve

    if replicates < 1:
        raise ValueError(f"--replicates must be >= 1, got {replicates}")
    inst = _instance(instance, arms, gap, horizon, means)
    policies = [Policy(name) for name in (baseline or ["ts", "ucb", "greedy"])]
    policies += [Policy("egreedy", {"epsilon": float(e)}) for e in epsilon]
    start = time.perf_counter()
    table = baseline_table(inst, replicates, seed, policies)
    curve = epsilon_curve(inst, replicates, seed) if sweep else []
    elapsed = time.perf_counter() - start
    keyed = {_policy_key(p): {k: round(v, 6) for k, v in table[p.label].items()} for p in policies}
    if as_json:
        payload: dict[str, Any] = {
            "instance": inst.as_dict() | {"label": inst.label},
            "replicates": replicates,
            "seed": seed,
            "baselines": keyed,
            "seconds": round(elapsed, 4),
        }
        if sweep:
            payload["epsilon_sweep"] = [{k: round(v, 6) for k, v in row.items()} for row in curve]
        out.print_json(json.dumps(payload))
        return
    view = Table(title=f"{inst.label}: {replicates} replicates per baseline (seed {seed})")
    view.add_column("statistic")
    for key in keyed:
        view.add_column(key, justify="right")
    for stat, label in _STAT_ROWS:
        view.add_row(label, *[f"{keyed[k][stat]:.2f}" for k in keyed])
    out.print(view)
    if sweep:
        curve_view = Table(title="ε-Greedy trade-off (Figure 3)")
        for column in ("ε", "SuffFailFreq(T/2)", "K*MinFrac(T)"):
            curve_view.add_column(column, justify="right")
        for row in curve:
            curve_view.add_row(
                f"{row['epsilon']:g}",
                f"{row['suff_fail_freq_half']:.3f}",
                f"{row['k_min_frac']:.3f}",
            )
        out.print(curve_view)
    err.print(f"simulated in {elapsed:.3f}s")


# -> Any: typer command helper returning parsed CLI values
async def _run_decisions(
    inst: Any,
    baselines: list[str],
    model: str | None,
    codes: list[str],
    client_options: dict[str, Any],
    sampling: dict[str, Any],
    t: int,
    histories: int,
    sources: list[str],
    seed: int,
    cache: Path | None,
) -> Any:
    from exploreval.models import SamplingParams, model_session
    from exploreval.suites.bandit import (
        LLMDecider,
        Policy,
        PolicyDecider,
        PromptDesign,
        decision_experiment,
    )

    deciders: list[Any] = [PolicyDecider(Policy(name)) for name in baselines]
    designs = [PromptDesign.parse(code) for code in codes]
    if model is None:
        if designs:
            raise ValueError("--harness needs --model (the LLM to prompt with that design)")
        return await decision_experiment(
            deciders, inst, t=t, n=histories, sources=sources, seed=seed
        )
    params = SamplingParams(**{k: v for k, v in sampling.items() if v is not None})
    concurrency = int(client_options.get("max_connections") or 8)
    async with model_session(
        model,
        base_url=client_options.get("base_url"),
        api_key_env=client_options.get("api_key_env") or "OPENAI_API_KEY",
        cache_path=cache,
        max_connections=concurrency,
    ) as client:
        for design in designs or [PromptDesign.parse("BNRN0")]:
            deciders.append(
                LLMDecider(
                    client,
                    design,
                    params=params,
                    name=f"{model}/{design.code}",
                    concurrency=concurrency,
                )
            )
        return await decision_experiment(
            deciders, inst, t=t, n=histories, sources=sources, seed=seed
        )


def decisions_cmd(
    instance: Annotated[str, typer.Option(help="Named instance (hard, easy, ...)")] = "hard",
    arms: Annotated[int | None, typer.Option(help="Number of arms K")] = None,
    gap: Annotated[float | None, typer.Option(help="Gap Δ")] = None,
    horizon: Annotated[int | None, typer.Option(help="Horizon T stated in the prompt")] = None,
    means: Annotated[str | None, typer.Option(help="Explicit arm means")] = None,
    t: Annotated[int, typer.Option("--t", help="History length t")] = 30,
    histories: Annotated[int, typer.Option(help="Histories N per data source")] = 50,
    source: Annotated[
        list[str], typer.Option(help="unif | ucb | ts (repeatable; default all three)")
    ] = [],  # noqa: B006
    baseline: Annotated[
        list[str], typer.Option(help="Baseline agents (repeatable; default ts and ucb)")
    ] = [],  # noqa: B006
    model: Annotated[str | None, typer.Option(help="LLM model name, or local:smollm2")] = None,
    harness: Annotated[
        list[str], typer.Option(help="Configuration code(s) for the LLM, e.g. BNRN0 (repeatable)")
    ] = [],  # noqa: B006
    base_url: Annotated[str | None, typer.Option(help="OpenAI-compatible endpoint")] = None,
    api_key_env: Annotated[
        str, typer.Option(help="Env var holding the API key")
    ] = "OPENAI_API_KEY",
    max_tokens: Annotated[int | None, typer.Option()] = None,
    temperature: Annotated[
        float | None, typer.Option(help="Override the temperature the code fixes")
    ] = None,
    concurrency: Annotated[int, typer.Option(help="Model requests in flight")] = 8,
    seed: Annotated[int, typer.Option(help="Seed for histories and distribution sampling")] = 0,
    out_dir: Annotated[
        Path | None,
        typer.Option("--out", help="Write summary.json, details.parquet and a model cache here"),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output")] = False,
) -> None:
    """Per-round decisions (Section 3.4, Figure 10): GreedyFrac and LeastFrac of each agent's
    next choice on N histories of length t from each data source."""
    inst = _instance(instance, arms, gap, horizon, means)
    if t < 1 or histories < 1:
        raise ValueError("--t and --histories must be >= 1")
    cache: Path | None = None
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
        cache = out_dir / "cache.sqlite"
    import asyncio

    result = asyncio.run(
        _run_decisions(
            inst,
            baseline or ["ts", "ucb"],
            model,
            harness,
            {"base_url": base_url, "api_key_env": api_key_env, "max_connections": concurrency},
            {"max_tokens": max_tokens, "temperature": temperature},
            t,
            histories,
            source or ["unif", "ucb", "ts"],
            seed,
            cache,
        )
    )
    payload = result.to_json()
    if out_dir is not None:
        (out_dir / "summary.json").write_text(json.dumps(payload, indent=2), encoding="utf-8")
        result.details.to_parquet(out_dir / "details.parquet", index=False)
    if as_json:
        out.print_json(json.dumps(payload))
        return
    out.print(
        f"{inst.label}: N={histories} histories of length t={t} per data source\n", markup=False
    )
    out.print(result.figure10_markdown())
    if out_dir is not None:
        err.print(
            f"wrote {out_dir / 'summary.json'} and {out_dir / 'details.parquet'}", markup=False
        )


def register(app: typer.Typer, host: CommandHost) -> None:
    """Add the bandit suite's commands to the ``exploreval`` CLI."""
    app.command("bandit-baselines")(baselines_cmd)
    app.command("bandit-decisions")(decisions_cmd)
