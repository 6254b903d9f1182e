"""Ray executor benchmark: episodes in flight on a real local cluster (a head and one node).

1. Throughput against a 1 s OpenAI-compatible stub (its own process) at 64, 256 and 1024
   episodes in flight, each slot playing three 10-step episodes, as ``bench_runner.py`` does
   for the local executor: requests/s against the bound (in flight / delay), the steady rate
   after the first request, and the CPU per request on the driver and on the rest of the
   machine (workers, raylets, GCS; the stub's own CPU is left out).
2. The issue's case: grid, 64 episodes, ``--concurrency 32 --max-connections 32``, 100 ms stub,
   with the most requests the stub saw at once.
3. The driver's ceiling: results landed (prompt texts, cache rows, record line with fsync)
   per second, on this machine's disk, with no cluster in the way: what bounds a sweep of any
   size, since the driver is the one writer.

Run: python bench/bench_ray.py [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_runner import served, stub_process

from exploreval.runner import run_experiment, spec_from_dict
from exploreval.runner.testing import local_cluster
from exploreval.store import RunDir

BENCH_DIR = str(Path(__file__).parent)


def _machine_cpu_s() -> float:
    """CPU seconds the whole machine has spent (user + system, every core)."""
    fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    user, nice, system = (int(v) for v in fields[:3])
    return (user + nice + system) / os.sysconf("SC_CLK_TCK")


def _process_cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def throughput(concurrency: int, delay_s: float, episodes: int, steps: int = 10) -> dict[str, Any]:
    with stub_process(delay_s, "<a>next</a>") as base_url, tempfile.TemporaryDirectory() as tmp:
        stub_pid = int(served(base_url).get("pid", 0))
        spec = spec_from_dict(
            {
                "suites": [
                    {
                        "env_id": "bench/Counter-v0",
                        "seeds": f"0-{episodes - 1}",
                        "options": {"length": steps},
                    }  # fmt: skip
                ],
                "agents": [
                    {"kind": "llm", "model": "stub", "base_url": base_url, "history": "window:2"}
                ],
                "concurrency": concurrency,
                "executor": "ray",
                "plugins": ["_bench_envs"],
            }
        )
        started_at = time.time()
        start = time.perf_counter()
        machine, driver = _machine_cpu_s(), time.process_time()
        stub = _process_cpu_s(stub_pid) if stub_pid else 0.0
        summary = run_experiment(spec, tmp)
        elapsed = time.perf_counter() - start
        driver = time.process_time() - driver
        stub = (_process_cpu_s(stub_pid) if stub_pid else 0.0) - stub
        rest = _machine_cpu_s() - machine - driver - stub
        stats = served(base_url)
        assert summary.completed == episodes, summary
        stored = len(RunDir(tmp).completed_ids())
    count = int(stats["requests"])
    ideal = concurrency / delay_s
    span = float(stats["last_request_at"]) - float(stats["first_request_at"])
    steady = (count - concurrency) / span if span > 0 and count > concurrency else count / elapsed
    return {
        "requests": count,
        "stored": stored,
        "seconds": elapsed,
        "rps": count / elapsed,
        "ideal": ideal,
        "efficiency": count / elapsed / ideal,
        "steady": steady / ideal,
        "first_request_s": float(stats["first_request_at"]) - started_at,
        "driver_ms": 1000 * driver / count,
        "rest_ms": 1000 * rest / count,
        "peak": int(stats.get("max_in_flight", 0)),
    }


def grid_case(executor: str) -> dict[str, Any]:
    """The issue's measurement: grid, 64 episodes, 32 in flight and 32 connections, 100 ms."""
    with stub_process(0.1, "<a>north</a>") as base_url, tempfile.TemporaryDirectory() as tmp:
        spec = spec_from_dict(
            {
                "suites": [
                    {
                        "env_id": "exploreval/GridDAG-v0",
                        "presets": ["explore-low/dag-small"],
                        "seeds": "0-63",
                    }  # fmt: skip
                ],
                "agents": [
                    {"kind": "llm", "model": "stub", "base_url": base_url, "max_concurrency": 32}
                ],
                "concurrency": 32,
                "max_steps": 20,
                "executor": executor,
            }
        )
        start = time.perf_counter()
        run_experiment(spec, tmp)
        elapsed = time.perf_counter() - start
        stats = served(base_url)
    count = int(stats["requests"])
    return {
        "requests": count,
        "seconds": elapsed,
        "rps": count / elapsed,
        "share": count / elapsed / (32 / 0.1),
        "peak": int(stats.get("max_in_flight", 0)),
    }


def driver_ceiling(records: int, batch: int) -> dict[str, float]:
    """Results landed per second by the driver alone, ``batch`` at a time (the results that
    arrive together land together): each a 10-step record, 20 prompt texts and 10 cache rows,
    appended with fsync, as from a worker."""
    import _bench_envs  # noqa: F401

    from exploreval.models import ResponseCache
    from exploreval.runner._ray import _Landing
    from exploreval.runner._runner import Runner

    with tempfile.TemporaryDirectory() as tmp:
        spec = spec_from_dict(
            {
                "suites": [
                    {"env_id": "bench/Counter-v0", "seeds": "0-0", "options": {"length": 10}}
                ],  # fmt: skip
                "agents": [{"agent": "random"}],
                "plugins": ["_bench_envs"],
            }
        )
        run_experiment(spec, tmp)
        (template,) = RunDir(tmp).iter_records()
        runner = Runner(spec, tmp, force=True)
        runner.prepare()
        landing = _Landing(runner.run, ResponseCache(runner.run.cache_path))
        completion = '{"text": "<a>next</a>", "model": "stub"}'

        def result(i: int) -> tuple[dict[str, Any], str]:
            eid = f"bench-{i}"
            return {
                "record": "",
                "texts": {f"{i}-{k}": f"prompt {i} {k} " * 40 for k in range(20)},
                "rows": [(f"{i}-{k}", "stub", completion, eid) for k in range(10)],
                "artifacts": None,
                "model_error": None,
            }, eid

        async def land_all() -> float:
            start = time.perf_counter()
            for first in range(0, records, batch):
                arrived = [result(i) for i in range(first, min(first + batch, records))]
                await asyncio.to_thread(landing.land, arrived)
                await runner._store_many(
                    [template.model_copy(update={"episode_id": eid}) for _, eid in arrived]
                )
            return time.perf_counter() - start

        elapsed = asyncio.run(land_all())
        size = len(template.model_dump_json())
        landing.cache.close()
        runner.run.close()
    return {"records_per_s": records / elapsed, "record_bytes": size}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    for batch in (1, 8, 64):
        ceiling = driver_ceiling(300 if args.quick else 3000, batch)
        print(
            f"driver ceiling   {ceiling['records_per_s']:.0f} results landed/s arriving "
            f"{batch} at a time (10-step record of {ceiling['record_bytes']} bytes, 20 prompt "
            "texts, 10 cache rows; one commit each for texts and rows, one fsync per batch)"
        )
    sys.path.insert(0, BENCH_DIR)
    # (in flight, episodes per slot): three per slot as bench_runner.py's local points; 256 also
    # with ten per slot, a longer sweep over which the workers' start-up is spread
    points = ((64, 3),) if args.quick else ((64, 3), (256, 3), (256, 10), (1024, 3))
    with local_cluster((1, 1), python_path=[BENCH_DIR]):
        throughput(8, 0.05, 8)  # warm: workers' imports, the SDK
        for executor in ("local", "ray"):
            grid = grid_case(executor)
            print(
                f"grid case        {executor:5s} 64 episodes, 32 in flight, 32 connections, "
                f"100 ms stub: {grid['rps']:.0f} req/s ({100 * grid['share']:.0f}% of the bound) "
                f"in {grid['seconds']:.1f}s, peak {grid['peak']} requests in flight"
            )
        for concurrency, per_slot in points:
            r = throughput(concurrency, 1.0, concurrency * per_slot)
            goal = ", goal >= 90%" if concurrency == 256 else ""
            print(
                f"ray throughput   in flight={concurrency} x{per_slot} episodes delay=1s, 2 nodes: "
                f"{r['rps']:.1f} req/s of ideal {r['ideal']:.0f} ({100 * r['efficiency']:.1f}%"
                f"{goal}) in {r['seconds']:.1f}s, {r['stored']} records stored; steady "
                f"{100 * r['steady']:.1f}% after the first request at "
                f"{r['first_request_s']:.2f}s; CPU per request: driver {r['driver_ms']:.2f} ms, "
                f"workers+Ray {r['rest_ms']:.2f} ms; stub peak {r['peak']} in flight"
            )


if __name__ == "__main__":
    main()
