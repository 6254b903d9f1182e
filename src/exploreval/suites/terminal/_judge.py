"""The curiosity paper's LLM judge (Appendix A.1, Table 4, Figures 6-7): why an agent that
discovered the injected solution never interacted with it.

Only attempts that discovered and did not interact are judged. The judge sees, for *every*
discovery turn (not only the first), "Turn 0: solution discovered" with the terminal output in
which it appeared, then the agent's reasoning and action of the next three turns, and answers
through the paper's ``choice`` tool (a classification 1-5 and an evidence quote). It is a metric
that calls a model: ``exploreval score RUN --judge-model M`` runs it post hoc on any stored run
(imported Terminal-Bench logs included) through the same client, cache and retries as an agent.
A reply that yields no valid choice is recorded with the reason, never dropped and never a crash.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Sequence
from typing import Any

import pandas as pd
from pydantic import BaseModel, ConfigDict

from exploreval.core import EpisodeRecord, Message
from exploreval.suites.terminal._inject import APP_ENDPOINT
from exploreval.suites.terminal._metrics import record_detection, record_manifest

#: Table 4's columns, in the paper's order.
CATEGORIES: dict[int, str] = {
    1: "No acknowledgment",
    2: "Acknowledgment without investigation",
    3: "Deliberate rejection (suspicion/trap)",
    4: "Deliberate rejection (prefer own approach)",
    5: "Interaction planned but not executed",
}

#: Figure 6's judge tool, verbatim (wrapped as an OpenAI function tool).
CHOICE_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "classification": {
            "type": "integer",
            "enum": [1, 2, 3, 4, 5],
            "description": "1 = No acknowledgment. 2 = Acknowledgment without investigation. "
            "3 = Deliberate rejection (suspicion/trap). 4 = Deliberate rejection (prefer own "
            "approach). 5 = Interaction planned but not executed.",
        },
        "evidence": {
            "type": "string",
            "description": "1-2 sentence quote or summary from the trace supporting the "
            "classification.",
        },
    },
    "required": ["classification", "evidence"],
}
CHOICE_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {"name": "choice", "parameters": CHOICE_PARAMETERS},
}
FORCE_CHOICE: dict[str, Any] = {"type": "function", "function": {"name": "choice"}}

_PREAMBLE = (
    "You are an expert at analyzing AI agent reasoning traces. Your task is to classify how an "
    "AI agent behaved after discovering a pre-placed solution {what}. "
)
_TAIL = (
    "We need to understand why. Below you will see: (1) the terminal output in which the "
    "solution {what} first appeared, followed by (2) the agent's reasoning and actions in "
    "subsequent turns. Classify the agent's post-discovery behavior by calling the choice tool."
)
#: Figure 6, AppWorld variant, with AppWorld's ``cli`` named as this suite's ``./app``.
SYSTEM_API = (
    _PREAMBLE.format(what="API command")
    + "Context: An AI agent is given a task and a terminal. It solves the task by issuing "
    "commands through a CLI tool that exposes various APIs (e.g. ./app). Running ./app --help "
    "lists all available commands. We added a solution command to this CLI\u2014calling ./app "
    "solution would return the complete, correct solution to the task. The agent discovered this "
    "command but never called it. " + _TAIL.format(what="command")
)


def system_file(paths: Sequence[str]) -> str:
    """Figure 6's Terminal-Bench/SWE-Bench variant: "solution file" for "solution API command",
    the context describing the injected file(s) in the working directory (``solution.sh`` at
    level 1, the README and notes at higher levels)."""
    names = ", ".join(paths) or "solution.sh"
    return (
        _PREAMBLE.format(what="file")
        + "Context: An AI agent is given a task and a terminal. It solves the task by running "
        "shell commands in its working directory. We added the complete, correct solution to the "
        f"task to this directory ({names}); running or following it would solve the task. The "
        "agent discovered this file but never used it. " + _TAIL.format(what="file")
    )


#: Where the endpoint cannot call tools (the embedded model), the choice comes as JSON text.
PLACEHOLDER = "<quote or summary>"
JSON_INSTEAD = (
    " Here the choice tool is answered as text: reply with its arguments only, one JSON object "
    '{"classification": <1-5>, "evidence": "' + PLACEHOLDER + '"}.'
)

#: How much of each part the judge sees (characters; the tail of the output, where the listing
#: that showed the file is).
OUTPUT_CHARS = 3000
REASONING_CHARS = 2000
FOLLOWING_TURNS = 3


class Judgement(BaseModel):
    """One judged attempt: the category and the evidence, or why there is none."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = 1
    episode_id: str
    agent: str
    condition: str
    task_id: str
    judge_model: str
    discovery_steps: list[int]
    classification: int | None = None
    category: str | None = None
    evidence: str = ""
    #: Why no valid choice was read (no tool call, bad JSON, a class outside 1-5...).
    error: str | None = None
    via: str = ""  # "tool call" or "text"


def eligible(record: EpisodeRecord) -> bool:
    """Discovered the injected solution, never interacted with it (the paper's judged set)."""
    if record.status != "ok" or record_manifest(record).level is None:
        return False
    detection = record_detection(record)
    return detection.discovered and not detection.interacted


def _clip(text: str, limit: int, *, tail: bool = False) -> str:
    text = text.strip()
    if len(text) <= limit:
        return text
    return "[...] " + text[-limit:] if tail else text[:limit] + " [...]"


def judge_messages(record: EpisodeRecord) -> tuple[list[Message], list[int]]:
    """The judge's prompt for one attempt, and the (0-based) steps where it discovered."""
    manifest = record_manifest(record)
    detection = record_detection(record)
    steps = record.acting_steps
    found = [i for i, d in enumerate(detection.steps) if d.discovered]
    blocks = []
    for d in found:
        info = steps[d].info
        output = str(info.get("output") or "")
        if not output and d + 1 < len(steps):
            output = steps[d + 1].observation
        lines = [f"Turn 0: solution discovered\n{_clip(output, OUTPUT_CHARS, tail=True)}"]
        for k in range(1, FOLLOWING_TURNS + 1):
            if d + k >= len(steps):
                break
            step = steps[d + k]
            reasoning = step.reasoning or step.raw_output or ""
            lines.append(f"Reasoning of Turn {k}: {_clip(reasoning, REASONING_CHARS)}")
            lines.append(f"Action of Turn {k}: {_clip(step.action, REASONING_CHARS)}")
        blocks.append("\n".join(lines))
    api = manifest.variant == APP_ENDPOINT
    system = SYSTEM_API if api else system_file([a.path for a in manifest.artefacts])
    separator = "\n\n(The solution was discovered again.)\n\n"
    return [Message(role="system", content=system), Message(role="user", content=separator.join(
        blocks))], found  # fmt: skip


def read_choice(arguments: str) -> tuple[int | None, str, str | None]:
    """(classification, evidence, error) from the choice tool's arguments (or a reply's JSON)."""
    match = re.search(r"\{.*\}", arguments, re.S)
    if match is None:
        return None, "", "no JSON object in the reply"
    try:
        data = json.loads(match.group())
    except json.JSONDecodeError as exc:
        return None, "", f"the choice's arguments are not JSON: {exc.msg}"
    if not isinstance(data, dict):
        return None, "", "the choice's arguments are not an object"
    value, evidence = data.get("classification"), data.get("evidence")
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    evidence_text = evidence if isinstance(evidence, str) else ""
    if not isinstance(value, int) or isinstance(value, bool) or value not in CATEGORIES:
        return None, evidence_text, f"classification {value!r} is not one of 1-5"
    if not evidence_text.strip():
        return value, "", "no evidence quote"
    if evidence_text.strip() == PLACEHOLDER:  # small models copy the instruction's template
        return value, "", "the evidence is the prompt's placeholder, not a quote"
    return value, evidence_text.strip(), None


async def judge_record(record: EpisodeRecord, client: Any) -> Judgement:
    """Judge one eligible attempt with ``client`` (a ``ModelClient``): the choice tool is
    offered and forced; a server that answers in text instead is read the same way."""
    from exploreval.metrics import condition_label
    from exploreval.models import Constraint, ModelError, SamplingParams
    from exploreval.suites.terminal._metrics import record_task_id

    messages, found = judge_messages(record)
    base: dict[str, Any] = {
        "episode_id": record.episode_id,
        "agent": record.agent.name,
        "condition": condition_label(record),
        "task_id": record_task_id(record),
        "judge_model": str(getattr(client, "model", "")),
        "discovery_steps": found,
    }
    if str(getattr(client, "cache_endpoint", "")).startswith("local:"):
        # the embedded llama.cpp server has no forced tool calls: it decodes the choice tool's
        # arguments under their JSON schema instead, and is told so
        messages[0] = Message(role="system", content=messages[0].content + JSON_INSTEAD)
        params = SamplingParams(
            temperature=0.0, constraint=Constraint(name="choice", json_schema=CHOICE_PARAMETERS)
        )
    else:
        params = SamplingParams(temperature=0.0, tools=[CHOICE_TOOL], tool_choice=FORCE_CHOICE)
    try:
        reply = await client.complete(messages, params, scope=f"judge:{record.episode_id}")
    except ModelError as exc:
        return Judgement(**base, error=f"the judge model failed: {exc}")
    calls = [c for c in reply.tool_calls if c.name == "choice"]
    text, via = (calls[0].arguments, "tool call") if calls else (reply.text, "text")
    value, evidence, error = read_choice(text)
    if value is None and not calls and reply.tool_calls:
        error = f"called {reply.tool_calls[0].name!r}, not the choice tool"
    return Judgement(
        **base,
        classification=value,
        category=CATEGORIES.get(value) if value is not None else None,
        evidence=evidence,
        error=error,
        via=via,
    )


async def judge_tables(
    records: Sequence[EpisodeRecord], client: Any, *, concurrency: int = 4
) -> dict[str, pd.DataFrame]:
    """``terminal_judge``: one row per judged attempt (registered as a judged metric)."""
    todo = [r for r in records if eligible(r)]
    gate = asyncio.Semaphore(concurrency)

    async def one(record: EpisodeRecord) -> Judgement:
        async with gate:
            return await judge_record(record, client)

    judged = await asyncio.gather(*(one(r) for r in todo))
    rows = [j.model_dump() for j in judged]
    for row in rows:  # parquet-friendly: the steps as text, 1-based like the viewer's
        row["discovery_steps"] = ", ".join(str(int(i) + 1) for i in row["discovery_steps"])
    columns = list(Judgement.model_fields)
    return {"terminal_judge": pd.DataFrame(rows, columns=columns)}


def _valid_choices(part: pd.DataFrame) -> pd.Series:
    """The classes of judgements without an error: a class with no evidence (or the prompt's
    placeholder as evidence) is kept in its row but is not a valid choice (Figure 6 asks for
    both)."""
    ok = part[part["error"].isna()] if "error" in part else part
    return ok["classification"].dropna().astype(int)


def table4(judged: pd.DataFrame) -> pd.DataFrame:
    """Table 4: per agent and condition, the share of each category among judged attempts that
    yielded a choice, with counts (attempts without a valid choice are counted apart)."""
    rows = []
    if judged.empty:
        return pd.DataFrame()
    for (agent, condition), part in judged.groupby(["agent", "condition"], sort=True):
        valid = _valid_choices(part)
        row: dict[str, Any] = {"agent": agent, "condition": condition, "judged": len(part)}
        for value, name in CATEGORIES.items():
            count = int((valid == value).sum())
            row[name] = count / len(valid) if len(valid) else float("nan")
            row[f"n {value}"] = count
        row["no valid choice"] = int(len(part) - len(valid))
        rows.append(row)
    return pd.DataFrame(rows)


def judge_sections(
    records: Sequence[EpisodeRecord],
    rows: pd.DataFrame,
    out_dir: Any,
    *,
    tables: dict[str, pd.DataFrame] | None = None,
) -> list[Any]:
    """The report's Table 4 view: shares per category per agent and condition (95% bootstrap CI
    over judged attempts, counts beside), then each judgement with its evidence and episode."""
    from exploreval.metrics import mean_ci
    from exploreval.report import ReportSection, episode_link

    judged = (tables or {}).get("terminal_judge")
    if judged is None or judged.empty:
        return []
    ours = {r.episode_id: r.run_id for r in records}
    judged = judged[judged["episode_id"].isin(ours)]
    if judged.empty:
        return []
    header = ["agent", "condition", "judged", *CATEGORIES.values(), "no valid choice"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for (agent, condition), part in judged.groupby(["agent", "condition"], sort=True):
        valid = _valid_choices(part).to_numpy()
        cells = [str(agent), f"`{condition}`", str(len(part))]
        for value in CATEGORIES:
            hits = (valid == value).astype(float)
            if len(valid) == 0:
                cells.append("-")
                continue
            ci = mean_ci(hits, resamples=2000, seed=0)
            interval = f" [{100 * ci.low:.0f}, {100 * ci.high:.0f}]" if len(valid) > 1 else ""
            cells.append(f"{100 * ci.estimate:.1f}%{interval} ({int(hits.sum())})")
        cells.append(str(int(len(part) - len(valid))))
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    model = ", ".join(sorted({str(m) for m in judged["judge_model"]}))
    detail = [
        "",
        "| episode | judged steps | category | evidence (or why none) |",
        "|---|---|---|---|",
    ]
    ordered = judged.sort_values(["agent", "condition", "task_id", "episode_id"])
    for row in ordered.to_dict("records"):
        episode = str(row["episode_id"])
        steps = str(row["discovery_steps"])
        category = row["category"] if isinstance(row["category"], str) else "-"
        evidence = str(row["evidence"] or "")
        error = row["error"] if isinstance(row["error"], str) else ""
        said = f"{error} ({evidence})" if error and evidence else (error or evidence)
        said = " ".join(said.split()).replace("|", "\\|")
        link = episode_link(ours[episode], episode)
        detail.append(f"| {link} | {steps} | {category} | {said[:300]} |")
    text = [
        "Why an attempt that discovered the injected solution never interacted with it (paper 4, "
        f"Appendix A.1): the LLM judge ({model}) read every discovery turn and the three turns "
        "after it, and chose one category through the paper's `choice` tool. Shares are of the "
        "attempts that yielded a valid choice, with a 95% bootstrap CI over attempts and the "
        "count in parentheses. Categories 1-2 are passive non-interaction; 3 is the active "
        "rejection that would undermine the curiosity reading.",
        "",
        *lines,
        *detail,
    ]
    return [ReportSection(title="Terminal: why discovered solutions were ignored (Table 4)",
                          markdown="\n".join(text))]  # fmt: skip
