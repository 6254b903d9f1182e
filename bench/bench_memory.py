"""Memory systems (``--history mem0 | langmem | amem``): what a memory costs per agent step.

Each backend plays one GridDAG episode of N steps from the CLI, through its real package, with the
real local MiniLM. The model is a loopback OpenAI-compatible server that answers at once: mem0's
extraction and A-MEM's analysis with one fact, LangMem's with one ``Memory`` tool call. So the
numbers are the memory's own overhead, not a model's latency. For each backend it prints:

- the run's wall time and the agent's steps;
- the memory's seconds per step (median and p90, from ``agent_info.memory.seconds``; the first
  step also loads MiniLM and the library);
- model calls per step and embedder calls per step, with the embedding cache's hit rate;
- the same episode re-run from the cache: wall time and whether any model call was paid again.

Run: python bench/bench_memory.py [--quick]   (needs the [mem0], [langmem] and [amem] extras)
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

CLI = [sys.executable, "-c", "from exploreval.cli import main; main()"]


def _reply(messages: list[dict[str, Any]]) -> str:
    system = str(messages[0]["content"]).lower()
    last = str(messages[-1]["content"])
    if "memory" in system and "extract" in system:
        return json.dumps({"memory": [{"text": f"A fact of {len(last)} characters."}]})
    if system.startswith("you must respond with a json object"):
        if "memory evolution agent" in last:
            return json.dumps({"should_evolve": False, "actions": [], "suggested_connections": [],
                               "tags_to_update": [], "new_context_neighborhood": [],
                               "new_tags_neighborhood": []})  # fmt: skip
        return json.dumps({"keywords": ["map"], "context": f"A turn of {len(last)} characters.",
                           "tags": ["grid"]})  # fmt: skip
    return ("Action: up", "Action: left", "Action: down", "Action: right")[len(last) % 4]


def _tool_calls(body: dict[str, Any]) -> list[tuple[str, str]] | None:
    names = [t["function"]["name"] for t in body.get("tools") or []]
    if "Memory" not in names:
        return None
    size = sum(len(str(m.get("content", ""))) for m in body["messages"])
    return [("Memory", json.dumps({"content": f"A turn of {size} characters."}))]


def _run(out: Path, base_url: str, backend: str, steps: int) -> float:
    start = time.perf_counter()
    done = subprocess.run(
        [*CLI, "run", "exploreval/GridDAG-v0", "--preset", "explore-low/dag-small",
         "--model", "bench-model", "--base-url", base_url, "--history", backend,
         "--max-steps", str(steps), "--out", str(out), "-q", "--no-report"],
        capture_output=True, text=True,
    )  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"{backend}: the run failed:\n{done.stderr[-2000:]}")
    return time.perf_counter() - start


def _memory(out: Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    line = (out / "episodes.jsonl").read_text().splitlines()[-1]
    record = json.loads(line)
    return [s["agent_info"]["memory"] for s in record["steps"]], record["usage"]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    steps = 15 if args.quick else 40
    from exploreval.models.testing import StubServer

    print(f"one GridDAG episode of {steps} agent steps per backend; loopback model, real MiniLM")
    print(f"{'backend':8} {'wall s':>7} {'mem s/step med':>14} {'p90':>6} {'first':>6} "
          f"{'calls/step':>10} {'embeds/step':>11} {'embed hits':>10} {'rerun s':>8} "
          f"{'rerun paid':>10}")  # fmt: skip
    for backend in ("mem0", "langmem", "amem"):
        with (
            tempfile.TemporaryDirectory() as tmp,
            StubServer(reply_fn=_reply, tool_calls_fn=_tool_calls) as server,
        ):
            out = Path(tmp) / backend
            wall = _run(out, server.base_url, backend, steps)
            memory, usage = _memory(out)
            paid = server.request_count
            (out / "episodes.jsonl").write_text("")  # as after a crash: the episode runs again
            rerun = _run(out, server.base_url, backend, steps)
            _, again = _memory(out)
            seconds = [m["seconds"] for m in memory]
            later = sorted(seconds[1:]) or [0.0]
            embeds = sum(m["embed_calls"] for m in memory)
            hits = sum(m["embed_cached"] for m in memory)
            print(
                f"{backend:8} {wall:7.1f} {statistics.median(later):14.3f} "
                f"{later[int(0.9 * (len(later) - 1))]:6.3f} {seconds[0]:6.2f} "
                f"{sum(m['model_calls'] for m in memory) / len(memory):10.2f} "
                f"{embeds / len(memory):11.2f} {hits / max(embeds, 1):10.0%} {rerun:8.1f} "
                f"{server.request_count - paid:10d}"
            )
            assert again["cached_calls"] == again["calls"] == usage["calls"]


if __name__ == "__main__":
    main()
