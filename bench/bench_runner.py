"""Runner benchmarks.

1. Harness + runner overhead per step: a trivial env and an instant scripted model, through the
   full Runner (plan, harness prompt building, parsing, prompt blob store, append + fsync).
2. Throughput against a local OpenAI-compatible stub server that answers after a fixed delay:
   achieved requests/s vs the ideal concurrency / delay, through the real openai SDK client; once
   with env steps run inline (as the built-in microsecond envs declare with ``run_inline``) and
   once the default way for sync envs (each step on a worker thread, so that a blocking step
   never stalls the other episodes), which costs a thread hop per step. Then 64, 128 and 256
   episodes in flight against a 1 s stub (256 also on two worker processes, ``workers: 2``),
   each also split into its start-up (when the stub saw the first request) and the steady rate
   after it (the stub's ``/stats`` timestamps). CPU per request counts the runner's process
   and its workers, not the stub.

Run: python bench/bench_runner.py [--quick]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import resource
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from typing import Any

import _bench_envs  # noqa: F401 - registers bench/Counter-v0 and its harness and agent

from exploreval.models import ScriptedModel
from exploreval.runner import run_experiment, spec_from_dict
from exploreval.store import RunDir


def overhead(episodes: int, history: str) -> dict[str, float]:
    spec = spec_from_dict(
        {
            "suites": [{"env_id": "bench/Counter-v0", "seeds": f"0-{episodes - 1}"}],
            "agents": [{"kind": "llm", "model": "instant", "history": history}],
            "concurrency": 8,
        }
    )
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        cpu = time.process_time()
        run_experiment(spec, tmp, client_factory=lambda s: ScriptedModel(["<a>next</a>"]))
        elapsed = time.perf_counter() - start
        cpu = time.process_time() - cpu
        steps = sum(r.n_steps for r in RunDir(tmp).iter_records())
    return {
        "steps": steps,
        "seconds": elapsed,
        "ms_per_step": 1000 * elapsed / steps,
        "cpu_ms_per_step": 1000 * cpu / steps,
    }


@contextlib.contextmanager
def stub_process(delay_s: float, reply: str) -> Iterator[str]:
    """The stub server in its own process, so its threads do not share our GIL."""
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "exploreval.models.testing",
            "--delay",
            str(delay_s),
            "--reply",
            reply,
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        yield proc.stdout.readline().strip()
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def served(base_url: str) -> dict[str, Any]:
    """The stub's counts: requests, and when the first and the latest arrived."""
    with urllib.request.urlopen(f"{base_url}/stats", timeout=5) as response:
        stats: dict[str, Any] = json.load(response)
    return stats


def _cpu_s() -> float:
    """CPU seconds of this process and of its children that have ended (the run's workers;
    the stub is still running while a run is measured)."""
    mine = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return mine.ru_utime + mine.ru_stime + children.ru_utime + children.ru_stime


def throughput(
    concurrency: int,
    delay_s: float,
    requests: int,
    env_id: str = "bench/Counter-v0",
    workers: int = 1,
) -> dict[str, float]:
    steps_per_episode = 10
    episodes = max(concurrency, requests // steps_per_episode)
    with stub_process(delay_s, "<a>next</a>") as base_url, tempfile.TemporaryDirectory() as tmp:
        spec = spec_from_dict(
            {
                "suites": [
                    {
                        "env_id": env_id,
                        "seeds": f"0-{episodes - 1}",
                        "options": {"length": steps_per_episode},
                    }
                ],
                "agents": [
                    {
                        "kind": "llm",
                        "model": "stub",
                        "base_url": base_url,
                        "history": "window:2",
                    }
                ],
                "concurrency": concurrency,
                "workers": workers,
                "plugins": ["_bench_envs"],
            }
        )
        started_at = time.time()
        start = time.perf_counter()
        cpu = _cpu_s()
        run_experiment(spec, tmp)
        elapsed = time.perf_counter() - start
        cpu = _cpu_s() - cpu  # this process and its worker processes (ended by now)
        stats = served(base_url)
    count = int(stats["requests"])
    ideal = concurrency / delay_s
    achieved = count / elapsed
    # Between the first request's arrival and the last's, every episode is in flight: the
    # requests that arrived after the first wave, over that span, is the steady rate (what the
    # run's start-up, before its first request, and its end do not dilute).
    span = float(stats["last_request_at"]) - float(stats["first_request_at"])
    steady = (count - concurrency) / span if span > 0 and count > concurrency else achieved
    return {
        "requests": count,
        "seconds": elapsed,
        "achieved_rps": achieved,
        "ideal_rps": ideal,
        "efficiency": achieved / ideal,
        "steady_efficiency": steady / ideal,
        "first_request_s": float(stats["first_request_at"]) - started_at,
        "cpu_ms_per_request": 1000 * cpu / count,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    episodes = 20 if args.quick else 100
    for history in ("full", "window:4", "none"):
        r = overhead(episodes, history)
        print(
            f"runner overhead  history={history:9s} {r['steps']:6.0f} steps in {r['seconds']:.2f}s"
            f" -> {r['ms_per_step']:.3f} ms/step wall, {r['cpu_ms_per_step']:.3f} ms/step CPU"
            " (goal < 1 ms)"
        )
    requests = 640 if args.quick else 3200
    # one small run first: the SDK, httpx and the run machinery are imported on first use (a
    # one-off 0.3-0.5 s that bench_cli.py measures as start-up, not a per-request cost)
    throughput(32, 0.1, 64)
    for env_id, how in (
        ("bench/Counter-v0", "inline env steps"),
        ("bench/BlockingCounter-v0", "env steps on threads"),
    ):
        r = throughput(32, 0.1, requests, env_id)
        goal = ", goal >= 90%" if env_id == "bench/Counter-v0" else ""
        print(
            f"stub throughput  concurrency=32 delay=100ms, {how}: {r['requests']:.0f} requests in "
            f"{r['seconds']:.2f}s -> {r['achieved_rps']:.1f} req/s of ideal {r['ideal_rps']:.0f} "
            f"({100 * r['efficiency']:.1f}%{goal}); {r['cpu_ms_per_request']:.2f} ms CPU per "
            "request in the runner"
        )
    # High concurrency: throughput must not fall as episodes in flight grow (issue 18). Each slot
    # plays three 10-step episodes, as in a sweep with more episodes than slots (a run where
    # every slot plays one episode, all started together, measures mostly its start-up). At 256,
    # once on one event loop and once on two worker processes (`workers: 2`).
    points = ((64, 1), (128, 1), (256, 1), (256, 2)) if not args.quick else ((64, 1), (64, 2))
    for concurrency, workers in points:
        r = throughput(concurrency, 1.0, concurrency * 30, workers=workers)
        goal = ", goal >= 90%" if concurrency == 256 else ""
        print(
            f"stub throughput  concurrency={concurrency} workers={workers} delay=1s: "
            f"{r['achieved_rps']:.1f} req/s of ideal {r['ideal_rps']:.0f} "
            f"({100 * r['efficiency']:.1f}%{goal}) in {r['seconds']:.1f}s; "
            f"{r['cpu_ms_per_request']:.2f} ms CPU per request; first request after "
            f"{r['first_request_s']:.2f} s, then {100 * r['steady_efficiency']:.1f}% of ideal"
        )


if __name__ == "__main__":
    main()
