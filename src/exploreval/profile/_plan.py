"""The plan: what a battery (or any run) will cost before its first model call.

Per part and suite entry: the model's episodes, the model calls they make, the prompt and
completion tokens, the dollars (from the price table) and the wall time at the chosen
concurrency. Calls, prompt and reply sizes come from ``calibration.json``: measured per family,
harness and history on this machine (``bench/calibrate_profile.py`` writes it), in characters,
so one measurement serves every tokenizer; characters per token are measured per tokenizer
(the embedded model's, the stub's word count, and 4.0 for the BPE vocabularies of the API
models, whose tokenizers cannot be run offline). Where no calibration exists for an entry, the
plan uses its step cap and says so.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from exploreval.core import ProfilePart

CALIBRATION = Path(__file__).parent / "calibration.json"
#: The 95% CI half-width of a mean of n values in [0, 1] is at most 1.96 * 0.5 / sqrt(n)
#: (the variance of such a value is at most 1/4), whatever the model does.
Z95 = 1.96


class PlanLine(BaseModel):
    """One suite entry of the plan (the model's episodes only; references are free)."""

    model_config = ConfigDict(extra="forbid")

    part: str
    row: str
    env_id: str
    episodes: int
    reference_episodes: int
    calls: float = Field(description="expected model calls (calibrated)")
    calls_max: int | None = Field(description="model calls at most (the step caps)")
    prompt_tokens: float
    completion_tokens: float
    cost_usd: float | None
    ci_half_width: float = Field(description="worst-case 95% CI half-width of a [0,1] metric")
    calibrated: str = Field(
        description="whose measurement priced it: the behaviour's own, 'stub' (prompt sizes "
        "and calls to the cap from the stub's run of the entry), or 'none' (the cap)"
    )
    calls_known: bool = True
    calibration_key: str


class Plan(BaseModel):
    model_config = ConfigDict(extra="forbid")

    schema_version: int = 1
    battery: str | None
    quick: bool
    model: str | None
    behaviour: str = Field(description="whose calibration priced it")
    concurrency: int
    seconds_per_call: float
    chars_per_token: float
    lines: list[PlanLine]
    notes: list[str] = Field(default_factory=list)

    @property
    def episodes(self) -> int:
        return sum(line.episodes for line in self.lines)

    @property
    def calls(self) -> float:
        return sum(line.calls for line in self.lines)

    @property
    def calls_max(self) -> int | None:
        caps = [line.calls_max for line in self.lines]
        return None if any(c is None for c in caps) else sum(c or 0 for c in caps)

    @property
    def prompt_tokens(self) -> float:
        return sum(line.prompt_tokens for line in self.lines)

    @property
    def completion_tokens(self) -> float:
        return sum(line.completion_tokens for line in self.lines)

    @property
    def cost_usd(self) -> float | None:
        costs = [line.cost_usd for line in self.lines]
        return None if any(c is None for c in costs) else float(sum(c or 0.0 for c in costs))

    @property
    def wall_s(self) -> float:
        """Calls spread over the calls in flight, each ``seconds_per_call`` long (the embedded
        llama.cpp server answers one call at a time, whatever the concurrency)."""
        return self.calls * self.seconds_per_call / max(1, self.in_flight)

    @property
    def in_flight(self) -> int:
        return 1 if (self.model or "").startswith("local:") else self.concurrency


@cache
def calibration() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(CALIBRATION.read_text())
    return data


@dataclass(frozen=True)
class PlanItem:
    """One suite entry a model plays: what the plan prices."""

    part: str
    row: str
    env_id: str
    family: str
    episodes: int
    agent: dict[str, Any]
    #: model calls an episode makes at most (its step cap plus a quiz), None when unknown
    cap: int | None
    quick: bool = False
    reference_episodes: int = 0
    #: the presets it plays: an exact calibration (env id and preset) is preferred to the
    #: family's average
    presets: tuple[str, ...] = ()


def behaviour_for(model: str | None, calibrated_as: str | None = None) -> str:
    """Whose measured behaviour (calls per episode, prompt and reply sizes) prices ``model``:
    its own when it was calibrated, else ``calibrated_as``, else the default (the embedded
    model's: an API model that finishes sooner costs less than planned, never more than the
    plan's "at most")."""
    behaviours = calibration()["behaviours"]
    if calibrated_as is not None:
        if calibrated_as not in behaviours:
            raise ValueError(
                f"--calibrated-as {calibrated_as!r}: no such calibration (known: "
                f"{', '.join(sorted(behaviours))})"
            )
        return calibrated_as
    if model is not None and model in behaviours:
        return model
    return str(calibration()["default_behaviour"])


def calibration_key(family: str, agent: dict[str, Any], quick: bool = False) -> str:
    key = f"{family}/{agent.get('harness') or 'default'}/{agent.get('history') or 'full'}"
    return key + ("/quick" if quick else "")


def _calibrated(entries: dict[str, Any], item: PlanItem) -> tuple[str, dict[str, float] | None]:
    """The item's calibration: the mean over its presets' exact entries when every preset
    was measured, else its family's (harness, history) entry, else none."""
    suffix = calibration_key("", item.agent, item.quick).lstrip("/")
    presets = item.presets or ("default",)
    exact = [entries.get(f"{item.env_id}/{p}/{suffix}") for p in presets]
    if exact and all(e is not None for e in exact):
        found = [e for e in exact if e is not None]
        keys = ("calls_per_episode", "prompt_chars_per_call", "reply_chars_per_call")
        mean = {k: float(np.mean([e[k] for e in found])) for k in keys}
        for k in ("prompt_tokens_per_call", "completion_tokens_per_call"):
            mean[k] = float(np.mean([e[k] for e in found]))
        return f"{item.env_id}/{'+'.join(presets)}/{suffix}", mean
    key = calibration_key(item.family, item.agent, item.quick)
    return key, entries.get(key)


def entry_episodes(entry: dict[str, Any], repeats: int = 1) -> int:
    presets = entry.get("presets") or [None]
    return len(presets) * len(entry.get("seeds") or [0]) * repeats


def part_items(
    parts: list[ProfilePart], *, quick: bool, family_of: dict[str, str], repeats: int = 1
) -> list[PlanItem]:
    items = []
    for part in parts:
        agent = part.agent_fields(quick)
        for entry, cap, where in zip(
            part.entries(quick), part.calls_cap(quick), part.entry_conditions(quick), strict=True
        ):
            episodes = entry_episodes(entry, repeats)
            items.append(
                PlanItem(
                    part=part.name,
                    row=str(where.get("row", part.name)),
                    env_id=entry["env_id"],
                    family=family_of[entry["env_id"]],
                    episodes=episodes,
                    agent=agent,
                    cap=cap,
                    quick=quick,
                    reference_episodes=episodes * len(part.references),
                    presets=tuple(str(p) for p in entry.get("presets") or [] if p is not None),
                )
            )
    return items


def make_plan(
    items: list[PlanItem],
    *,
    battery: str | None,
    model: str | None,
    concurrency: int,
    price: tuple[float, float] | None,
    quick: bool = False,
    calibrated_as: str | None = None,
    seconds_per_call_s: float | None = None,
    chars_per_token_value: float | None = None,
) -> Plan:
    """``price``: USD per 1M (prompt, completion) tokens, or None when the model has no known
    price (the plan's cost is then unknown, never $0). Tokens are the calibrated model's own
    counts when ``model`` is the calibrated one, else its characters over ``chars_per_token``."""
    behaviour = behaviour_for(model, calibrated_as)
    measured: dict[str, Any] = calibration()["behaviours"][behaviour]
    own_tokens = model == behaviour or calibrated_as is not None
    ratio = chars_per_token_value or float(calibration()["chars_per_token"])
    lines: list[PlanLine] = []
    notes: list[str] = []
    stub: dict[str, Any] = calibration()["behaviours"].get("stub", {"entries": {}})
    for item in items:
        key, cal = _calibrated(measured["entries"], item)
        source = behaviour
        if cal is None and behaviour != "stub":
            # the stub's own run of the same entry: its prompts are the env's observations at
            # every step to the cap, so its calls are an upper bound and its prompt sizes the
            # entry's; its replies ("ok") say nothing of a model's, so those stay uncalibrated
            key, cal = _calibrated(stub["entries"], item)
            source = "stub" if cal is not None else "none"
            if cal is not None:
                cal = {
                    **cal,
                    "reply_chars_per_call": float(calibration()["uncalibrated_reply_chars"]),
                }
        if cal is None:
            source = "none"
            if item.cap is None:
                notes.append(f"{key}: not calibrated and no step cap known: calls unknown")
            else:
                notes.append(f"{key}: not calibrated; every episode assumed to use its cap")
            calls_each = float(item.cap or 0)
            prompt_chars = float(calibration()["uncalibrated_prompt_chars"])
            reply_chars = float(calibration()["uncalibrated_reply_chars"])
            prompt_per_call = prompt_chars / ratio
            reply_per_call = reply_chars / ratio
        else:
            calls_each = float(cal["calls_per_episode"])
            if item.cap is not None:
                calls_each = min(float(item.cap), calls_each)
            if own_tokens and source == behaviour and chars_per_token_value is None:
                prompt_per_call = float(cal["prompt_tokens_per_call"])
                reply_per_call = float(cal["completion_tokens_per_call"])
            else:
                prompt_per_call = float(cal["prompt_chars_per_call"]) / ratio
                reply_per_call = float(cal["reply_chars_per_call"]) / ratio
        calls = calls_each * item.episodes
        prompt_tokens = calls * prompt_per_call
        completion_tokens = calls * reply_per_call
        cost = None
        if price is not None:
            cost = (prompt_tokens * price[0] + completion_tokens * price[1]) / 1_000_000
        lines.append(
            PlanLine(
                part=item.part,
                row=item.row,
                env_id=item.env_id,
                episodes=item.episodes,
                reference_episodes=item.reference_episodes,
                calls=calls,
                calls_max=(item.cap * item.episodes) if item.cap is not None else None,
                prompt_tokens=prompt_tokens,
                completion_tokens=completion_tokens,
                cost_usd=cost,
                ci_half_width=Z95 * 0.5 / math.sqrt(max(1, item.episodes)),
                calibrated=source,
                calls_known=source != "none" or item.cap is not None,
                calibration_key=key,
            )
        )
    return Plan(
        battery=battery,
        quick=quick,
        model=model,
        behaviour=behaviour,
        concurrency=concurrency,
        seconds_per_call=seconds_per_call_s
        or float(
            measured["seconds_per_call"]
            if own_tokens
            else calibration()["seconds_per_call_unmeasured"]
        ),
        chars_per_token=ratio,
        lines=lines,
        notes=notes,
    )


def format_duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def plan_lines(plan: Plan) -> list[str]:
    """The plan as an 80-column table, then its totals."""
    head = (
        f"{'part':<10} {'row':<12} {'episodes':>8} {'calls':>8} {'tokens in':>9} {'out':>7}"
        f" {'cost':>9} {'±CI':>5}"
    )
    lines = [head, "-" * len(head)]
    for line in plan.lines:
        cost = "?" if line.cost_usd is None else f"${line.cost_usd:,.2f}"
        mark = {plan.behaviour: "", "stub": "+"}.get(line.calibrated, "*")
        if not line.calls_known:
            lines.append(f"{line.part[:10]:<10} {line.row[:12]:<12} {line.episodes:>8} {'?':>8}")
            continue
        lines.append(
            f"{line.part[:10]:<10} {line.row[:12]:<12} {line.episodes:>8} {line.calls:>7.0f}{mark:1}"
            f" {_short(line.prompt_tokens):>9} {_short(line.completion_tokens):>7} {cost:>9}"
            f" {line.ci_half_width:>5.2f}"
        )
    lines.append("-" * len(head))
    if plan.cost_usd is None:
        cost = f"unknown (no price for {plan.model}; --prices FILE)"
    else:
        cost = f"${plan.cost_usd:,.2f}"
    at_most = "" if plan.calls_max is None else f" (at most {plan.calls_max:,})"
    references = sum(x.reference_episodes for x in plan.lines)
    lines.append(
        f"model: {plan.episodes:,} episodes, {plan.calls:,.0f} calls{at_most}, "
        f"{_short(plan.prompt_tokens)} prompt + {_short(plan.completion_tokens)} completion tokens"
    )
    lines.append(f"cost: {cost}")
    if references:
        lines.append(f"references: {references:,} scripted episodes, no model calls")
    lines.append(
        f"wall time: about {format_duration(plan.wall_s)} at {plan.in_flight} in flight, "
        f"{plan.seconds_per_call:.2f} s a call (--seconds-per-call)"
    )
    lines.append(
        f"calls and sizes: measured for {plan.behaviour} where unmarked (calibration.json)"
    )
    lines.append("±CI: the widest 95% CI half-width a [0,1] metric of the row can have")
    if any(x.calibrated == "stub" for x in plan.lines):
        lines.append(
            f"+ not measured for {plan.behaviour}: the stub's prompts, every episode to its cap"
        )
    if any(x.calibrated == "none" for x in plan.lines):
        lines.append("* not calibrated for this harness and history: every episode at its cap")
    unknown = [x.row for x in plan.lines if not x.calls_known]
    if unknown:
        lines.append(f"? no calibration and no step cap: {', '.join(unknown)} not counted")
    return lines


def _short(tokens: float) -> str:
    if tokens >= 1e6:
        return f"{tokens / 1e6:.1f}M"
    if tokens >= 1e4:
        return f"{tokens / 1e3:.0f}k"
    return f"{tokens:.0f}"
