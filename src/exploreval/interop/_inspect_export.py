"""exploreval runs as inspect_ai logs (``exploreval export RUN --format inspect``).

One log per (env id, agent) group, one sample per episode (``epoch`` = repeat + 1), written
through inspect_ai's own ``write_eval_log`` (its ``.eval`` format is versioned but not frozen:
it is never written by hand here). What goes where (docs/inspect.md):

* **messages**: the system prompt the model saw (from the run's blob store; none for a scripted
  agent), the first observation as a user message, then per step the assistant's output with
  the action as a tool call ``act(action=...)`` and the env's answer as that call's result (an
  invalid action's result carries a ``parsing`` error with its reason);
* **events**: per step, a model event when a model was called (its prompt, output and token
  usage) and an info event (``source="exploreval/step"``) with the step's diagnostics;
* **scores**: one ``exploreval`` score whose value holds ``success`` and the family's headline
  metrics (``exploreval.metrics.headline_metrics``), so inspect's results show their means;
  exploreval's aggregates (bootstrap CIs) are in the log's ``results.metadata``;
* **store**: ``exploreval:record``, the episode record itself (ground truth included), so that
  ``exploreval import`` rebuilds exactly the stored steps and ``exploreval score`` gives the same
  metrics as the run (``exploreval.store`` reads it back).
"""

from __future__ import annotations

import contextlib
import math
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from exploreval.core import EpisodeRecord, Message
from exploreval.store import EXPLOREVAL_STORE_KEY, RunDir

if TYPE_CHECKING:
    from inspect_ai.scorer import Score

#: The tool every exported action is a call of (its one argument is the action text).
ACT_TOOL = "act"
STEP_EVENT_SOURCE = "exploreval/step"
SCORER = "exploreval"


def _require_inspect() -> None:
    from exploreval.core import require_extra

    require_extra("inspect", "exploreval export --format inspect")


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, int | float) and math.isfinite(float(value)):
        return float(value)
    return None


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-") or "log"


def inspect_messages_for(record: EpisodeRecord, system: str | None) -> list[Any]:
    """The episode as inspect chat messages: ``system`` (when given), the first observation as
    the user's message, then per step the assistant's output calling ``act(action=...)`` and
    the env's answer as the call's result (a ``parsing`` error for an invalid action)."""
    from inspect_ai.model import (
        ChatMessageAssistant,
        ChatMessageSystem,
        ChatMessageTool,
        ChatMessageUser,
    )
    from inspect_ai.tool import ToolCall, ToolCallError

    out: list[Any] = []
    if system:
        out.append(ChatMessageSystem(content=system))
    out.append(ChatMessageUser(content=record.initial_observation or "(no observation)"))
    for index, step in enumerate(record.steps):
        call_id = f"step-{step.t}"
        out.append(
            ChatMessageAssistant(
                content=step.raw_output if step.raw_output is not None else "",
                tool_calls=[
                    ToolCall(id=call_id, function=ACT_TOOL, arguments={"action": step.action})
                ],
            )
        )
        after = (
            record.steps[index + 1].observation
            if index + 1 < len(record.steps)
            else (record.final_observation or "")
        )
        error = (
            None
            if step.valid
            else ToolCallError("parsing", step.invalid_reason or "invalid action")
        )
        out.append(
            ChatMessageTool(content=after, tool_call_id=call_id, function=ACT_TOOL, error=error)
        )
    return out


def _system_prompt(record: EpisodeRecord, run: RunDir) -> str | None:
    for step in record.steps:
        if step.prompt is None:
            continue
        try:
            messages = run.blobs.get_prompt(step.prompt)
        except (KeyError, OSError, ValueError):
            return None
        return next((m.content for m in messages if m.role == "system"), None)
    return None


def _inspect_messages(messages: Sequence[Message]) -> list[Any]:
    from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, ChatMessageUser

    kinds = {"system": ChatMessageSystem, "assistant": ChatMessageAssistant}
    return [kinds.get(m.role, ChatMessageUser)(content=m.content) for m in messages]


def _events(record: EpisodeRecord, run: RunDir, model: str) -> list[Any]:
    from inspect_ai.event import InfoEvent, ModelEvent
    from inspect_ai.model import ChatMessageUser, GenerateConfig, ModelOutput, ModelUsage

    events: list[Any] = []
    for step in record.steps:
        if step.usage is not None or step.prompt is not None:
            prompt: list[Any] = [ChatMessageUser(content=step.observation)]
            if step.prompt is not None:
                with contextlib.suppress(KeyError, OSError, ValueError):
                    prompt = _inspect_messages(run.blobs.get_prompt(step.prompt))
            output = ModelOutput.from_content(model, step.raw_output or "")
            if step.usage is not None:
                output.usage = ModelUsage(
                    input_tokens=step.usage.prompt_tokens,
                    output_tokens=step.usage.completion_tokens,
                    total_tokens=step.usage.prompt_tokens + step.usage.completion_tokens,
                    reasoning_tokens=step.usage.reasoning_tokens or None,
                )
            output.time = step.latency_s or None
            events.append(
                ModelEvent(
                    model=model,
                    input=prompt,
                    tools=[],
                    tool_choice="none",
                    config=GenerateConfig(),
                    output=output,
                    retries=step.retries,
                    cache="read" if step.cached else None,
                )  # fmt: skip
            )
        events.append(
            InfoEvent(
                source=STEP_EVENT_SOURCE,
                data={
                    "t": step.t,
                    "phase": step.phase,
                    "task": step.task,
                    "action": step.action,
                    "valid": step.valid,
                    "invalid_reason": step.invalid_reason,
                    "reward": step.reward,
                    "terminated": step.terminated,
                    "truncated": step.truncated,
                    "info": step.info,
                },  # fmt: skip
            )
        )
    return events


def episode_score(record: EpisodeRecord) -> Score:
    """The inspect ``Score`` of an episode: ``success`` and the family's headline metrics as
    its value (inspect aggregates each), every numeric episode metric in its metadata."""
    from inspect_ai.scorer import Score

    from exploreval.metrics import episode_metrics, headline_metrics

    row = episode_metrics(record) if record.status == "ok" else {}
    value: dict[str, float] = {"success": 1.0 if record.success else 0.0}
    for column in headline_metrics(record.family):
        number = _number(row.get(column))
        if number is not None:
            value.setdefault(column, number)
    return Score(
        value=value,
        answer=record.steps[-1].action if record.steps else None,
        explanation="solved" if record.success else (record.error or "not solved"),
        metadata={k: _number(v) for k, v in row.items() if _number(v) is not None},
    )


def _group_key(record: EpisodeRecord) -> tuple[str, str]:
    return record.env_id, record.agent.name


def _model_of(record: EpisodeRecord) -> str:
    config = record.agent.config if isinstance(record.agent.config, dict) else {}
    identity = config.get("identity", config)
    model = identity.get("model") if isinstance(identity, dict) else None
    if record.agent.kind == "llm" and isinstance(model, str) and model:
        return model if "/" in model else f"exploreval/{model}"
    return f"exploreval/{record.agent.name}"


def _sample_id(record: EpisodeRecord) -> str:
    preset = record.preset or "default"
    return f"{preset}:seed{record.seed}"


def export_inspect(
    run_dir: str | Path, out_dir: str | Path, *, log_format: str = "eval"
) -> list[Path]:
    """Write one inspect_ai log per (env, agent) group of the run at ``run_dir`` into ``out_dir``
    (``log_format``: ``eval`` or ``json``); returns the written paths."""
    _require_inspect()
    from inspect_ai.log import (
        EvalConfig,
        EvalDataset,
        EvalLog,
        EvalMetric,
        EvalPlan,
        EvalResults,
        EvalSample,
        EvalScore,
        EvalSpec,
        EvalStats,
        write_eval_log,
    )
    from inspect_ai.model import ModelUsage

    from exploreval import __version__

    if log_format not in ("eval", "json"):
        raise ValueError(f"log format {log_format!r}: expected eval or json")
    run = RunDir(run_dir)
    manifest = run.read_manifest()
    records = [r for r in run.latest_records().values()]
    if not records:
        raise ValueError(f"{run.path}: the run has no episodes to export")
    groups: dict[tuple[str, str], list[EpisodeRecord]] = {}
    for record in records:
        groups.setdefault(_group_key(record), []).append(record)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for (env_id, agent), members in sorted(groups.items()):
        members.sort(key=lambda r: (r.preset or "", r.seed, r.repeat, r.episode_id))
        family = members[0].family
        model = _model_of(members[0])
        samples = []
        totals: dict[str, list[float]] = {}
        usage = ModelUsage()
        for record in members:
            score = episode_score(record)
            assert isinstance(score.value, dict)  # episode_score's value: metric -> number
            for name, number in score.value.items():
                totals.setdefault(name, []).append(float(number or 0.0))
            sample_usage = ModelUsage(
                input_tokens=record.usage.prompt_tokens,
                output_tokens=record.usage.completion_tokens,
                total_tokens=record.usage.prompt_tokens + record.usage.completion_tokens,
            )
            usage = usage + sample_usage
            samples.append(
                EvalSample(
                    id=_sample_id(record)
                    + (f":{record.episode_id[:8]}" if _clash(record, members) else ""),
                    epoch=record.repeat + 1,
                    input=record.initial_observation or "(no observation)",
                    target="solve the task",
                    messages=inspect_messages_for(record, _system_prompt(record, run)),
                    scores={SCORER: score},
                    metadata={
                        "env_id": record.env_id,
                        "family": record.family,
                        "preset": record.preset,
                        "seed": record.seed,
                        "repeat": record.repeat,
                        "agent": record.agent.name,
                        "episode_id": record.episode_id,
                        "run_id": record.run_id,
                        "status": record.status,
                    },  # fmt: skip
                    store={EXPLOREVAL_STORE_KEY: record.model_dump(mode="json")},
                    events=_events(record, run, model),
                    model_usage={model: sample_usage} if record.agent.kind == "llm" else {},
                    error=None,
                    total_time=_seconds(record),
                    working_time=_seconds(record),
                    started_at=record.started_at.isoformat(),
                    completed_at=record.ended_at.isoformat() if record.ended_at else None,
                )
            )
        metrics = {
            name: EvalMetric(name=f"mean {name}", value=sum(values) / len(values))
            for name, values in totals.items()
            if values
        }
        epochs = max(r.repeat for r in members) + 1
        log = EvalLog(
            version=2,
            status="success",
            eval=EvalSpec(
                created=members[0].started_at.isoformat(),
                task=f"exploreval/{family}",
                task_id=f"{manifest.run_id}-{_slug(agent)}",
                task_args={"env_id": env_id, "run_dir": str(run.path)},
                dataset=EvalDataset(name=env_id, samples=len({_sample_id(r) for r in members})),
                model=model,
                config=EvalConfig(epochs=epochs),
                metadata={
                    "exploreval_version": __version__,
                    "run_id": manifest.run_id,
                    "run_name": manifest.name,
                    "agent": agent,
                },  # fmt: skip
            ),
            plan=EvalPlan(name="exploreval"),
            results=EvalResults(
                total_samples=len(members),
                completed_samples=sum(r.status == "ok" for r in members),
                scores=[EvalScore(name=SCORER, scorer=SCORER, metrics=metrics)],
                metadata={"exploreval": _aggregates(totals)},
            ),
            stats=EvalStats(
                started_at=min(r.started_at for r in members).isoformat(),
                completed_at=max(r.ended_at or r.started_at for r in members).isoformat(),
                model_usage={model: usage} if members[0].agent.kind == "llm" else {},
            ),
            samples=samples,
        )
        name = f"{_slug(env_id.replace('/', '_'))}__{_slug(agent)}.{log_format}"
        target = out / name
        write_eval_log(log, str(target), format=log_format)  # type: ignore[arg-type]
        written.append(target)
    return written


def _seconds(record: EpisodeRecord) -> float | None:
    if record.ended_at is None:
        return None
    return round((record.ended_at - record.started_at).total_seconds(), 3)


def _clash(record: EpisodeRecord, members: Iterable[EpisodeRecord]) -> bool:
    """Two episodes of the group share preset, seed and repeat (env options differ)."""
    key = (_sample_id(record), record.repeat)
    return sum((_sample_id(r), r.repeat) == key for r in members) > 1


def _aggregates(totals: dict[str, list[float]]) -> dict[str, Any]:
    """exploreval's aggregates of each score: mean with its 95% bootstrap CI, and n."""
    from exploreval.metrics import mean_ci

    out: dict[str, Any] = {}
    for name, values in totals.items():
        ci = mean_ci(values)
        out[name] = {"n": len(values), "mean": ci.estimate, "ci_low": ci.low, "ci_high": ci.high}
    return out
