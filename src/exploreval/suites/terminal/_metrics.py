"""Terminal-suite metrics over stored episode records (registered by the suite plugin).

What a record must hold (the env's side of the contract):

* ``record.ground_truth["manifest"]``: the :class:`InjectionManifest` dump (``{}`` or absent:
  the original benchmark, nothing injected);
* ``record.ground_truth["resolved"]`` (else ``record.success``): all tests passed;
* ``record.ground_truth["task_id"]`` (else ``env_options["task"]``, else env id + seed): the task
  the attempt belongs to, for the per-task counts of the @k estimators;
* per acting step, ``step.info`` with the :class:`StepEvidence` fields (``commands``, ``output``,
  ``file_events``) and/or the env's ``detection`` dump (:class:`StepDetection`).

Detection is recomputed from the evidence when the evidence is there (so a record scored later
uses the current, documented rules); otherwise the stored per-step dumps are used.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from exploreval.core import EpisodeRecord
from exploreval.metrics import Scalar, memo
from exploreval.metrics.passk import at_k_table, conditional_rate, first_step_summary
from exploreval.suites.terminal._contract import (
    InjectionManifest,
    StepDetection,
    StepEvidence,
    condition_of,
)
from exploreval.suites.terminal._detect import EpisodeDetection, detect_episode

DEFAULT_KS = (1, 2, 3, 5, 10)
_EVIDENCE_KEYS = ("commands", "output", "file_events")


def record_manifest(record: EpisodeRecord) -> InjectionManifest:
    """The episode's injection manifest, validated once per record object (the condition
    label, the detection, the episode row and the attempts table all ask)."""
    return memo(record, "terminal_manifest", None, lambda: _manifest(record))


def _manifest(record: EpisodeRecord) -> InjectionManifest:
    raw = record.ground_truth.get("manifest") or {}
    return InjectionManifest.model_validate(raw)


def record_task_id(record: EpisodeRecord) -> str:
    gt = record.ground_truth
    if gt.get("task_id"):
        return str(gt["task_id"])
    if record.env_options.get("task"):
        return str(record.env_options["task"])
    return f"{record.env_id}:{record.preset}:{record.seed}"


def record_resolved(record: EpisodeRecord) -> bool:
    value = record.ground_truth.get("resolved")
    return bool(record.success if value is None else value)


#: Agent options whose default value leaves them out of the condition label.
_OPTION_DEFAULTS: dict[str, Any] = {"prompt_variant": "investigate", "reasoning_history": False}


def _fmt(value: Any) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value)


def _agent_parts(record: EpisodeRecord) -> list[str]:
    """Behaviour-changing agent settings the agent's *name* does not carry: harness options
    (prompt variant, reasoning history...), scripted-agent options, sampling parameters."""
    config = record.agent.config or {}
    identity = config.get("identity") or {}
    options: dict[str, Any] = {}
    sampling: dict[str, Any] = {}
    if identity:
        options = dict(identity.get("harness_options") or identity.get("options") or {})
        sampling = dict(identity.get("sampling") or {})
    else:
        harness = config.get("harness")
        if isinstance(harness, dict):
            options = {k: v for k, v in harness.items() if k not in ("name", "history")}
        else:
            options = {k: v for k, v in config.items() if k not in ("name", "client", "params")}
        sampling = (
            dict(config.get("params") or {}) if isinstance(config.get("params"), dict) else {}
        )
    parts = []
    for key in sorted(options):
        value = options[key]
        if key in _OPTION_DEFAULTS and value == _OPTION_DEFAULTS[key]:
            continue
        parts.append(f"{'prompt' if key == 'prompt_variant' else key}={_fmt(value)}")
    for key in sorted(sampling):
        if sampling[key] is not None:
            parts.append(f"{key}={_fmt(sampling[key])}")
    return parts


def record_condition(record: EpisodeRecord) -> str:
    """The episode's condition: every behaviour-changing option but the agent's name, as a
    stable readable string: the env's part (stored in the ground truth by the env: injection
    level and file name, tool suite, intervention, prompt variant) then the agent's settings
    (harness prompt variant, reasoning history, other options, sampling), each ``;key=value``
    and only when not the default. ``L1:solution.sh``, ``L1:solution.sh;tools=bash+editor``,
    ``original;intervention=solution_in_prompt``, ``L1:README.md;prompt=base``..."""
    gt = record.ground_truth
    label = gt.get("condition")
    if not label:  # records written before the env stored its condition
        label = condition_of(record_manifest(record))
        tools = gt.get("tools") or "bash"
        if tools != "bash":
            label += f";tools={tools}"
    parts = [p for p in _agent_parts(record) if p not in label.split(";")]
    if any(p.startswith("prompt=") for p in label.split(";")):
        parts = [p for p in parts if not p.startswith("prompt=")]  # the env's option is used
    return ";".join([label, *parts])


def record_detection(record: EpisodeRecord) -> EpisodeDetection:
    """What the agent discovered and touched, step by step: detected once per record object."""
    return memo(record, "terminal_detection", None, lambda: _detection(record))


def _detection(record: EpisodeRecord) -> EpisodeDetection:
    manifest = record_manifest(record)
    steps = record.acting_steps
    mount = str(record.ground_truth.get("workdir") or "/app")
    if steps and all(any(k in s.info for k in _EVIDENCE_KEYS) for s in steps):
        evidence = [_evidence(s.info) for s in steps]
        return detect_episode(manifest, evidence, mount=mount)
    dumps = [StepDetection.model_validate(s.info.get("detection") or {}) for s in steps]

    def first(attr: str) -> int | None:
        return next((i for i, d in enumerate(dumps) if getattr(d, attr)), None)

    return EpisodeDetection(
        steps=tuple(dumps),
        first_discovery_step=first("discovered"),
        first_interaction_step=first("interacted"),
        first_file_access_step=first("file_access"),
        n_steps=len(dumps),
    )


def _evidence(info: dict[str, Any]) -> StepEvidence:
    commands = info.get("commands") or ()
    if isinstance(commands, str):
        commands = (commands,)
    events = tuple(tuple(e) for e in info.get("file_events") or ())
    return StepEvidence(
        commands=tuple(str(c) for c in commands),
        output=str(info.get("output") or ""),
        file_events=events,
    )


def terminal_episode_metrics(record: EpisodeRecord) -> dict[str, Scalar]:
    """Per-episode: resolved, discovery/interaction/file-access flags and first steps."""
    manifest = record_manifest(record)
    det = record_detection(record)
    roles = {a.path: a.role for a in manifest.artefacts}
    touched = {
        h.artefact
        for d in det.steps
        for h in d.hits
        if h.kind == "interaction" and h.signal == "string"
    }
    injected = manifest.level is not None

    def defined(value: Scalar) -> Scalar:
        # Without an injection there is nothing to discover: the rate is undefined, not 0
        # (Table 10's "-"), and such episodes stay out of its averages.
        return value if injected else None

    return {
        "task_id": record_task_id(record),
        "condition": record_condition(record),
        "resolved": record_resolved(record),
        "injected": injected,
        "discovered": defined(det.discovered),
        "interacted": defined(det.interacted),
        "interacted_strict": defined(det.interacted_strict),
        "file_access": defined(det.first_file_access_step is not None),
        "first_discovery_step": det.first_discovery_step,
        "first_interaction_step": det.first_interaction_step,
        "first_strict_interaction_step": det.first_strict_interaction_step,
        "first_file_access_step": det.first_file_access_step,
        "n_steps": det.n_steps,
        "interacted_solution": defined(
            any(roles.get(p) in ("solution", "endpoint") for p in touched)
        ),
        "interacted_decoy": defined(any(roles.get(p) == "decoy" for p in touched)),
    }


def terminal_run_metrics(
    records: Sequence[EpisodeRecord],
    *,
    ks: Sequence[int] = DEFAULT_KS,
    n_boot: int = 2000,
    seed: int = 0,
) -> dict[str, pd.DataFrame]:
    """Run-level tables per agent and condition: the @k family with bootstrap CIs over tasks
    (``at_k``), interaction given discovery and first-step positions (``curiosity``).

    Agents are never pooled: n attempts per task are one agent's repeats (``--repeats n``);
    nor are conditions (:func:`record_condition`: injection, file name, tools, intervention,
    prompt variant, reasoning history, sampling)."""
    return terminal_tables_from_rows(
        [attempt_row(r) for r in records], ks=ks, n_boot=n_boot, seed=seed
    )


def attempt_row(record: EpisodeRecord) -> tuple[str, dict[str, Scalar]]:
    """The map side of the terminal run metric: the agent and the episode's metric row, with
    what the report's attempts table adds (which episode, its injection level and file name)."""
    manifest = record_manifest(record)
    return record.agent.name, {
        **terminal_episode_metrics(record),
        "run_id": record.run_id,
        "episode_id": record.episode_id,
        "seed": record.seed,
        "repeat": record.repeat,
        "level": manifest.level,
        "variant": manifest.variant,
        "agent_server_ports": agent_server_ports(record),
    }


def agent_server_ports(record: EpisodeRecord) -> str:
    """The ports of the agent's servers a failed verification was refused on (its reasons name
    ``agent_processes=keep``, ``_verify.agent_server_hint``), comma-separated; else empty."""
    verification = (record.ground_truth or {}).get("verification") or {}
    if not any("agent_processes=keep" in str(r) for r in verification.get("reasons") or []):
        return ""
    return ", ".join(str(p) for p in verification.get("agent_ports") or []) or "?"


#: The per-attempt run table: one row per scored episode, what the report's sections count
#: (stored by ``score`` in ``tables/``, so a report reads it instead of the records).
ATTEMPTS_TABLE = "terminal_attempts"
ATTEMPT_COLUMNS = (
    "run_id", "episode_id", "agent", "condition", "level", "variant", "task_id", "seed",
    "repeat", "resolved", "discovered", "interacted", "file_access", "interacted_solution",
    "interacted_decoy", "interacted_strict", "first_discovery_step", "first_interaction_step",
    "first_strict_interaction_step", "n_steps", "agent_server_ports",
)  # fmt: skip
_FLAGS = (
    "resolved", "discovered", "interacted", "file_access", "interacted_solution",
    "interacted_decoy", "interacted_strict",
)  # fmt: skip


def attempts_table(attempts: Sequence[tuple[str, dict[str, Scalar]]]) -> pd.DataFrame:
    """One row per attempt (``attempt_row``s): who, which condition and task, and the flags."""

    def typed(agent: str, row: dict[str, Scalar]) -> dict[str, Scalar]:
        return {
            **row,
            "agent": agent,
            "condition": str(row["condition"]),
            "task_id": str(row["task_id"]),
            **{flag: bool(row[flag]) for flag in _FLAGS},
            "n_steps": int(row["n_steps"] or 0),
        }

    frame = pd.DataFrame(
        [typed(agent, row) for agent, row in attempts], columns=list(ATTEMPT_COLUMNS)
    )
    return normalised_attempts(frame)


def normalised_attempts(frame: pd.DataFrame) -> pd.DataFrame:
    """Levels, variants and first steps as None or ints (never NaN or floats), however the
    table was made: from attempts, or read back from Parquet (which stores a missing int as
    NaN in a float column)."""
    if frame.empty:
        return frame
    frame = frame.copy()
    if "agent_server_ports" not in frame:  # a table stored before the column existed
        frame["agent_server_ports"] = ""
    frame["agent_server_ports"] = frame["agent_server_ports"].fillna("").astype(str)
    if "interacted_strict" not in frame:  # stored before the paper's string rule was the default:
        # its interaction columns are the strict rule's (re-scoring the run gives both)
        frame["interacted_strict"] = frame["interacted"]
        frame["first_strict_interaction_step"] = frame["first_interaction_step"]
    for column in (
        "level",
        "variant",
        "first_discovery_step",
        "first_interaction_step",
        "first_strict_interaction_step",
    ):
        frame[column] = pd.Series(
            [
                None if v is None or pd.isna(v) else (v if column == "variant" else int(v))
                for v in frame[column]
            ],
            index=frame.index,
            dtype=object,
        )
    return frame


def terminal_tables_from_rows(
    attempts: Sequence[tuple[str, dict[str, Scalar]]],
    *,
    ks: Sequence[int] = DEFAULT_KS,
    n_boot: int = 2000,
    seed: int = 0,
) -> dict[str, pd.DataFrame]:
    """The reduce side of ``terminal_run_metrics``, from the attempts' ``attempt_row``s."""
    by_cond: dict[tuple[str, str], list[dict[str, Scalar]]] = defaultdict(list)
    for agent, row in attempts:
        by_cond[(agent, str(row["condition"]))].append(row)
    at_k_frames: list[pd.DataFrame] = []
    curiosity: list[dict[str, object]] = []
    for (agent, cond), cond_rows in sorted(by_cond.items()):
        per_task: dict[str, list[dict[str, Scalar]]] = defaultdict(list)
        for row in cond_rows:
            per_task[str(row["task_id"])].append(row)
        tasks = sorted(per_task)
        n = np.array([len(per_task[t]) for t in tasks])
        counts = {
            metric: np.array([sum(bool(r[col]) for r in per_task[t]) for t in tasks])
            for metric, col in (
                ("pass", "resolved"),
                ("discovery", "discovered"),
                ("interaction", "interacted"),
                ("interaction_strict", "interacted_strict"),
                ("file_access", "file_access"),
            )
        }
        usable = [k for k in ks if k <= int(n.min())]
        injected = bool(cond_rows[0]["injected"])  # the condition key includes the level
        table = at_k_table(
            counts if injected else {"pass": counts["pass"]}, n, usable, n_boot=n_boot, seed=seed
        )
        if not injected:  # undefined rates: rows present, values NaN (never 0.0)
            undefined = pd.DataFrame(
                [
                    {"metric": m, "k": k, "n_tasks": len(tasks)}
                    for m in ("discovery", "interaction", "interaction_strict", "file_access")
                    for k in usable
                ],
                columns=table.columns,
            )
            table = pd.concat([table, undefined], ignore_index=True)
        table.insert(0, "condition", cond)
        table.insert(0, "agent", agent)
        at_k_frames.append(table)
        groups = [str(r["task_id"]) for r in cond_rows]
        given = conditional_rate(
            [bool(r["discovered"]) for r in cond_rows],
            [bool(r["interacted"]) for r in cond_rows],
            groups=groups,
            n_boot=n_boot,
            seed=seed,
        )
        first = first_step_summary(
            [r["first_interaction_step"] for r in cond_rows],  # type: ignore[misc]
            [int(r["n_steps"] or 0) for r in cond_rows],
        )
        curiosity.append(
            {
                "agent": agent,
                "condition": cond,
                "n_attempts": len(cond_rows),
                "n_tasks": len(tasks),
                "interaction_given_discovery": None if given is None else given.estimate,
                "igd_ci_low": None if given is None else given.low,
                "igd_ci_high": None if given is None else given.high,
                "median_first_interaction_step": first["median_step"],
                "median_first_interaction_position": first["median_position"],
            }
        )
    at_k = pd.concat(at_k_frames, ignore_index=True) if at_k_frames else pd.DataFrame()
    return {
        "at_k": at_k,
        "curiosity": pd.DataFrame(curiosity),
        ATTEMPTS_TABLE: attempts_table(attempts),
    }
