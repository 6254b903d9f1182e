"""From a battery (or any experiment) to its plan, and from a finished run to its card."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from exploreval.core import ProfilePart, env_spec
from exploreval.profile._battery import battery_digest
from exploreval.profile._card import Card, Usage, card_rows
from exploreval.profile._plan import Plan, PlanItem, make_plan, part_items

if TYPE_CHECKING:
    from exploreval.models import PriceTable
    from exploreval.runner import ExperimentSpec


def family_of(env_ids: list[str]) -> dict[str, str]:
    return {env_id: env_spec(env_id).family for env_id in env_ids}


def _price(table: PriceTable, model: str | None) -> tuple[float, float] | None:
    if model is None:
        return (0.0, 0.0)
    found = table.lookup(model)
    return None if found is None else (found.input, found.output)


def battery_plan(
    parts: list[ProfilePart],
    *,
    battery: str,
    model: str | None,
    quick: bool,
    concurrency: int,
    prices: PriceTable,
    calibrated_as: str | None = None,
    seconds_per_call: float | None = None,
    chars_per_token: float | None = None,
) -> Plan:
    env_ids = [e["env_id"] for p in parts for e in p.entries(quick)]
    items = part_items(parts, quick=quick, family_of=family_of(env_ids))
    return make_plan(
        items,
        battery=battery,
        model=model,
        quick=quick,
        concurrency=concurrency,
        price=_price(prices, model),
        calibrated_as=calibrated_as,
        seconds_per_call_s=seconds_per_call,
        chars_per_token_value=chars_per_token,
    )


def _cap(spec: ExperimentSpec, options: dict[str, Any]) -> int | None:
    for key in ("max_steps", "budget", "T", "horizon"):
        value = options.get(key)
        if isinstance(value, int) and value > 0:
            return value if spec.max_steps is None else min(value, spec.max_steps)
    return spec.max_steps


def spec_plans(spec: ExperimentSpec, prices: PriceTable) -> list[Plan]:
    """One plan per model agent of a ``run``'s experiment (scripted agents cost nothing)."""
    plans = []
    for agent in spec.agents:
        if agent.kind != "llm" or not agent.model:
            continue
        items = []
        for suite_index, suite in enumerate(spec.suites):
            if agent.suites is not None and suite_index not in agent.suites:
                continue
            items.append(
                PlanItem(
                    part=agent.display_name,
                    row=suite.env_id.split("/")[-1],
                    env_id=suite.env_id,
                    family=env_spec(suite.env_id).family,
                    episodes=len(suite.presets) * len(suite.seeds) * spec.repeats,
                    agent={"harness": agent.harness, "history": agent.history},
                    cap=_cap(spec, suite.env_options),
                    presets=tuple(str(p) for p in suite.presets if p is not None),
                )
            )
        plans.append(
            make_plan(
                items,
                battery=None,
                model=agent.model,
                concurrency=agent.max_connections or spec.concurrency,
                price=_price(prices, agent.model),
            )
        )
    return plans


def model_usage(frame: pd.DataFrame, model: str) -> Usage:
    """What the model's episodes actually used (calls served from the cache included: the
    plan estimates the work, whatever was already paid for)."""
    mine = frame[frame["agent"] == model] if len(frame) else frame

    def total(column: str) -> float:
        if column not in mine:
            return 0.0
        values = pd.to_numeric(mine[column], errors="coerce")
        return float(np.nansum(values.to_numpy(dtype=float)))

    costs = pd.to_numeric(mine["cost_usd"], errors="coerce") if "cost_usd" in mine else None
    cost = None
    if costs is not None and len(costs) and not costs.isna().any():
        cost = float(costs.sum())
    return Usage(
        calls=int(total("model_calls")),
        prompt_tokens=int(total("prompt_tokens")),
        completion_tokens=int(total("completion_tokens")),
        cost_usd=cost,
    )


def estimate_lines(plan: Plan, usage: Usage) -> list[str]:
    """The plan beside what the run used, each with the actual over the estimate."""

    def ratio(actual: float, planned: float) -> str:
        return f"{actual / planned:.2f}x" if planned else "-"

    rows = [
        ("model calls", plan.calls, float(usage.calls)),
        ("prompt tokens", plan.prompt_tokens, float(usage.prompt_tokens)),
        ("completion tokens", plan.completion_tokens, float(usage.completion_tokens)),
    ]
    lines = [f"{'':<18} {'planned':>12} {'used':>12} {'used/planned':>13}"]
    for name, planned, actual in rows:
        lines.append(f"{name:<18} {planned:>12,.0f} {actual:>12,.0f} {ratio(actual, planned):>13}")
    if plan.cost_usd is not None and usage.cost_usd is not None:
        lines.append(
            f"{'cost':<18} {'$' + format(plan.cost_usd, ',.2f'):>12} "
            f"{'$' + format(usage.cost_usd, ',.2f'):>12} {ratio(usage.cost_usd, plan.cost_usd):>13}"
        )
    return lines


def make_card(
    run_dir: Path,
    parts: list[ProfilePart],
    *,
    battery: str,
    model: str,
    quick: bool,
    frame: pd.DataFrame,
    plan: Plan | None = None,
) -> Card:
    from exploreval.core import VERSION

    return Card(
        battery=battery,
        battery_digest=battery_digest(parts),
        quick=quick,
        model=model,
        run_dir=str(run_dir),
        package_version=VERSION,
        made_at=dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        rows=card_rows(frame, parts, model=model, quick=quick),
        usage=model_usage(frame, model),
        plan=None if plan is None else plan.model_dump(mode="json"),
    )
