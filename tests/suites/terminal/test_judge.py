"""The curiosity paper's LLM judge (Appendix A.1): who is judged, what the judge reads, how its
choice is read, through a real OpenAI-compatible endpoint answering with tool calls."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pandas as pd
import pytest

from exploreval.core import AgentInfo, EpisodeRecord
from exploreval.models import open_model_client
from exploreval.models.testing import StubServer
from exploreval.suites.terminal._agents import CuriousAgent, IncuriousAgent
from exploreval.suites.terminal._builtin import builtin_task
from exploreval.suites.terminal._contract import InjectionManifest
from exploreval.suites.terminal._inject import render
from exploreval.suites.terminal._judge import (
    CATEGORIES,
    CHOICE_PARAMETERS,
    eligible,
    judge_messages,
    judge_tables,
    read_choice,
    table4,
)
from exploreval.suites.terminal._oneshot import simulate

from .test_metrics import _record


def _attempt(agent: Any, task_id: str = "csv-region-totals", i: int = 0) -> EpisodeRecord:
    task = builtin_task(task_id)
    sim = simulate(agent, task, 1)
    infos = [e.model_dump(mode="json") for e in sim.evidence]
    record = _record(task_id, render(task, 1).manifest, sim.resolved, infos, i)
    record.agent = AgentInfo(name=agent.name, kind="scripted")
    for k, step in enumerate(record.steps):
        step.reasoning = f"thinking at turn {k}"
    return record


def test_only_discovered_and_ignored_attempts_are_judged() -> None:
    ignored, used = _attempt(IncuriousAgent()), _attempt(CuriousAgent())
    original = _record("csv-region-totals", InjectionManifest(), True, [{"commands": ["ls"]}])
    assert eligible(ignored) and not eligible(used) and not eligible(original)


def test_the_judge_reads_every_discovery_turn_and_the_three_after_it() -> None:
    record = _attempt(IncuriousAgent())
    messages, found = judge_messages(record)
    assert found and messages[0].role == "system" and messages[1].role == "user"
    assert "solution.sh" in messages[0].content and "choice tool" in messages[0].content
    prompt = messages[1].content
    assert prompt.count("Turn 0: solution discovered") == len(found)
    first = found[0]
    following = min(3, len(record.acting_steps) - first - 1)
    for k in range(1, following + 1):
        assert f"Reasoning of Turn {k}: thinking at turn {first + k}" in prompt
        assert f"Action of Turn {k}:" in prompt
    assert "Reasoning of Turn 4" not in prompt


@pytest.mark.parametrize(
    ("arguments", "value", "error"),
    [
        ('{"classification": 2, "evidence": "mentions it, moves on"}', 2, None),
        ('{"classification": "1", "evidence": "never mentions it"}', 1, None),
        ('{"classification": 7, "evidence": "x"}', None, "not one of 1-5"),
        ('{"classification": true, "evidence": "x"}', None, "not one of 1-5"),
        ('{"classification": 3}', 3, "no evidence"),
        ('{"classification": 1, "evidence": "<quote or summary>"}', 1, "placeholder"),
        ("I think category 2", None, "no JSON object"),
        ('{"classification": 2, "evidence": ', None, "no JSON object"),
        ("[1, 2]", None, "no JSON object"),
    ],
)
def test_a_choice_is_read_or_the_reason_is_recorded(
    arguments: str, value: int | None, error: str | None
) -> None:
    got, _evidence, problem = read_choice(arguments)
    assert got == value
    assert (problem is None) if error is None else (problem is not None and error in problem)


def _judge_with(server: StubServer, records: list[EpisodeRecord]) -> Any:
    client = open_model_client("judge-m", base_url=server.base_url, max_retries=0)

    async def go() -> Any:
        try:
            return await judge_tables(records, client)
        finally:
            await client.aclose()

    return asyncio.run(go())["terminal_judge"]


def test_a_loopback_endpoint_answering_with_the_choice_tool() -> None:
    """The paper's tool is offered and forced; the call's arguments become the judgement."""
    records = [_attempt(IncuriousAgent(), i=i) for i in range(3)] + [_attempt(CuriousAgent())]

    def calls(body: dict[str, Any]) -> list[tuple[str, str]]:
        assert body["tools"][0]["function"]["parameters"] == CHOICE_PARAMETERS
        assert body["tool_choice"] == {"type": "function", "function": {"name": "choice"}}
        seen = "solution.sh" in body["messages"][0]["content"]
        return [("choice", json.dumps({"classification": 2 if seen else 5, "evidence": "q"}))]

    with StubServer(tool_calls_fn=calls) as server:
        judged = _judge_with(server, records)
    assert len(judged) == 3  # the curious attempt interacted: not judged
    assert set(judged["classification"]) == {2} and set(judged["via"]) == {"tool call"}
    assert set(judged["category"]) == {CATEGORIES[2]} and judged["error"].isna().all()
    shares = table4(judged)
    assert shares.loc[0, CATEGORIES[2]] == 1.0 and shares.loc[0, "n 2"] == 3


def test_a_reply_without_a_valid_choice_is_recorded_not_dropped() -> None:
    records = [_attempt(IncuriousAgent())]
    with StubServer(tool_calls_fn=lambda body: [("other", "{}")], reply="") as server:
        judged = _judge_with(server, records)
    assert len(judged) == 1 and judged.loc[0, "classification"] is None
    assert "not the choice tool" in judged.loc[0, "error"]
    with StubServer(reply='{"classification": 9, "evidence": "?"}') as server:
        judged = _judge_with(server, records)
    assert "not one of 1-5" in judged.loc[0, "error"] and judged.loc[0, "via"] == "text"


def test_hostile_evidence_stays_text_in_the_report() -> None:
    """The judge quotes agent-controlled text: in Table 4's detail rows it is a table cell's
    text, never markup, a link or a broken row."""
    from exploreval.analysis import markdown_to_html
    from exploreval.suites.terminal._judge import judge_sections

    record = _attempt(IncuriousAgent())
    hostile = "<img src=x onerror=alert(1)> | [x](javascript:alert(1))\n| forged | row |"
    judged = pd.DataFrame([{
        "episode_id": record.episode_id, "agent": "incurious", "condition": "injection_level=1",
        "task_id": "t", "judge_model": "m", "discovery_steps": "2", "classification": 1,
        "category": CATEGORIES[1], "evidence": hostile, "error": None, "via": "tool call",
    }])  # fmt: skip
    (section,) = judge_sections([record], pd.DataFrame(), None, tables={"terminal_judge": judged})
    html = markdown_to_html(section.markdown)
    assert "<img" not in html and "onerror=alert" not in html.replace(
        "&lt;img src=x onerror=alert", ""
    )
    assert 'href="javascript' not in html and "forged" in html
    detail = [line for line in section.markdown.splitlines() if "alert" in line]
    assert len(detail) == 1  # the quote's newline and pipes did not make a second row
