"""Each memory system of Task2Quiz's Table 2 (issue 19) for real, from the CLI, on a real
TextWorld game: the backend's own package (mem0ai, langmem, a-mem), the real local MiniLM as its
embedder and the library's own local store; the model is a loopback OpenAI-compatible server
that answers the library's extraction prompts with facts naming the rooms the turn shows.

Checked: a fact stored while playing task 0 is recalled later (another task or the quiz) and
reaches the prompt; every memory operation is recorded on its step and counted in the usage; a
re-run of the episode replays every model call from the cache (nothing paid twice) and stores the
same entries."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from exploreval.agents import MEMORY_BACKENDS
from exploreval.core import EXTRAS

ROOM = re.compile(r"-= (.+?) =-")
FACT = re.compile(r"The agent was in the [^.]+\.")


def _facts(text: str) -> list[str]:
    return [f"The agent was in the {r}." for r in sorted(set(ROOM.findall(text)))]


def _reply(messages: list[dict[str, Any]]) -> str:
    """The loopback model. To a memory library's prompts: facts naming the rooms the turn
    shows (mem0's extraction JSON; A-MEM's note analysis, and no evolution). To the agent: a
    command, or an answer in the quiz."""
    system = str(messages[0]["content"]).lower()
    last = str(messages[-1]["content"])
    if "memory" in system and ("extract" in system or "fact" in system):  # mem0
        return json.dumps({"memory": [{"text": f} for f in _facts(last)]})
    if system.startswith("you must respond with a json object"):  # A-MEM
        if "memory evolution agent" in last:
            return json.dumps({"should_evolve": False, "actions": [], "suggested_connections": [],
                               "tags_to_update": [], "new_context_neighborhood": [],
                               "new_tags_neighborhood": []})  # fmt: skip
        facts = _facts(last.split("Content for analysis:")[-1])
        return json.dumps({"keywords": ["room"], "context": " ".join(facts) or "No room.",
                           "tags": ["rooms"]})  # fmt: skip
    if "answer the following question" in last:
        return json.dumps({"answer": "yes", "reason": "stub"})
    command = ("go east", "go west", "go north")[len(last) % 3]
    return json.dumps({"reason": "stub", "command": command})


def _tool_calls(body: dict[str, Any]) -> list[tuple[str, str]] | None:
    """LangMem's extraction (trustcall's tools): one new memory per room the turn shows."""
    names = [t["function"]["name"] for t in body.get("tools") or []]
    if "Memory" not in names:
        return None
    text = "\n".join(str(m.get("content", "")) for m in body["messages"])
    session = text.rsplit("<session_", 1)[-1]
    facts = _facts(session) or ["The agent saw no room name."]
    return [("Memory", json.dumps({"content": f})) for f in facts]


def _run(out: Path, base_url: str, history: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from exploreval.cli import main; main()", "run",
         "exploreval/Task2Quiz-v0", "--preset", "easy", "--seeds", "0", "--max-steps", "4",
         "--env-option", "max_questions=3", "--model", "stub-model", "--base-url", base_url,
         "--history", history, "--out", str(out), "-q", "--no-report"],
        capture_output=True, text=True, timeout=900,
    )  # fmt: skip


def _prompt(run: Any, step: Any) -> str:
    assert step.prompt is not None
    return "\n".join(m.content for m in run.blobs.get_prompt(step.prompt))


def _installed(backend: str) -> bool:
    return not EXTRAS[MEMORY_BACKENDS[backend][0]].missing()


@pytest.mark.slow
@pytest.mark.parametrize("backend", sorted(MEMORY_BACKENDS))
def test_a_memory_backend_stores_and_recalls_across_tasks_and_resumes_from_the_cache(
    backend: str, tmp_path: Path, tw_cache: Path
) -> None:
    if not _installed(backend):
        pytest.fail(f"the [{MEMORY_BACKENDS[backend][0]}] extra is part of the test install")
    from exploreval.models.testing import StubServer
    from exploreval.store import RunDir

    with StubServer(reply_fn=_reply, tool_calls_fn=_tool_calls) as server:
        first = _run(tmp_path / "r", server.base_url, backend)
        assert first.returncode == 0, first.stdout + first.stderr
        calls = server.request_count
        (record,) = list(RunDir(tmp_path / "r").iter_records())
        assert record.status == "ok", record.error
        memory = [s.agent_info["memory"] for s in record.steps]
        assert all(m["backend"] == backend for m in memory)
        stored = [
            (s.task, e) for s, m in zip(record.steps, memory, strict=True) for e in m["stored"]
        ]
        assert stored, "the memory stored nothing"
        # a fact stored in task 0 is recalled later, in another task or in the quiz
        first_facts = {f for t, e in stored if t == 0 for f in FACT.findall(e)}
        assert first_facts, stored[:5]
        later = [
            r
            for s, m in zip(record.steps, memory, strict=True)
            for r in m["recalled"]
            if (s.task or 0) > 0 or s.phase != "task"
        ]
        assert any(f in r for f in first_facts for r in later), (first_facts, later[:5])
        # ...and shown to the model: the recalled entries are in the step's prompt
        run = RunDir(tmp_path / "r")
        shown = [
            s for s, m in zip(record.steps, memory, strict=True)
            if m["recalled"] and m["recalled"][0] in _prompt(run, s)
        ]  # fmt: skip
        assert shown, "no recalled entry reached a prompt"
        # every memory model call is counted on its step and in the episode's usage
        agent_calls = len(record.steps)
        memory_calls = sum(m["model_calls"] for m in memory)
        assert memory_calls >= 1 and record.usage.calls == agent_calls + memory_calls
        assert calls == record.usage.calls  # every call reached the server once
        # a re-run of the same episode (as after a crash) pays for nothing: all from the cache
        log = tmp_path / "r" / "episodes.jsonl"
        log.write_text("")
        again = _run(tmp_path / "r", server.base_url, backend)
        assert again.returncode == 0, again.stdout + again.stderr
        assert server.request_count == calls, "a resumed episode called the model again"
        (replayed,) = list(RunDir(tmp_path / "r").iter_records())
        assert replayed.usage.cached_calls == replayed.usage.calls == record.usage.calls
        assert [s.agent_info["memory"]["stored"] for s in replayed.steps] == [
            m["stored"] for m in memory
        ]
