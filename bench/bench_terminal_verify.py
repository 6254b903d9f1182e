"""What a sealed, traced verification costs, on real task images (issue 40).

Run: python bench/bench_terminal_verify.py [--runs N] [--quick]

For each fixture task of tests/fixtures/terminal/seal (a Terminal-Bench task run by uv, a Harbor
task run by pip with its CTRF plugin, a Harbor task that runs the agent's program), with its
image built and cached first: N times, a sandbox from the image, the gold solution, then the
verification. Prints per task the median and max seconds of the verification (the test command,
its trace and the audit), the trace's events and processes, and the resolved count. The audit
alone is timed too (``audit.duration_s``). Works on code before the trace
(no ``audit``: those columns read n/a), for a before/after comparison.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from pathlib import Path

FIXTURES = Path(__file__).parents[1] / "tests" / "fixtures" / "terminal" / "seal"


async def run_task(task_dir: Path, runs: int) -> None:
    from exploreval.suites.terminal._image import build_image
    from exploreval.suites.terminal._image_recipe import BuildRecipe
    from exploreval.suites.terminal._sandbox import Sandbox
    from exploreval.suites.terminal._sandbox_config import SandboxConfig
    from exploreval.suites.terminal._tasks import load_task
    from exploreval.suites.terminal._verify import verify

    try:
        from exploreval.suites.terminal._sealed import verification_tools_env
    except ImportError:  # the code before issue 40
        from exploreval.suites.terminal._verify import verification_tools_env  # type: ignore

    task = load_task(task_dir, image="build")
    assert task.image is not None and task.solution
    image = await asyncio.to_thread(build_image, BuildRecipe(**task.image.model_dump()))
    config = SandboxConfig(image=image.rootfs, workdir=task.container_workdir,
                           tests_dir=task.tests_dir, env=image.env, network=True,
                           logs_dir=task.parser == "reward_file", record_cast=False,
                           watch_files=False)  # fmt: skip
    env = verification_tools_env({**image.env, **task.env},
                                 tools=bool(task.image.terminal_bench_tools), network=True)  # fmt: skip
    seconds: list[float] = []
    events: list[int] = []
    processes: list[int] = []
    audits: list[float] = []
    resolved = 0
    for _ in range(runs):
        async with await Sandbox.start(config) as sb:
            await sb.run_blocking(f"bash <<'GOLD_END'\n{task.solution}\nGOLD_END\n", timeout=300)
            t0 = time.perf_counter()
            result = await verify(sb, task.test_command, parser=task.parser, env=env,
                                  network=True, timeout=300)  # fmt: skip
            seconds.append(time.perf_counter() - t0)
        resolved += bool(result.resolved)
        audit = getattr(result, "audit", None)
        if audit is not None:
            events.append(audit.events)
            processes.append(audit.processes)
            audits.append(audit.duration_s)
    trace_note = (
        f"trace {statistics.median(events):.0f} events, {statistics.median(processes):.0f} "
        f"processes, audit median {statistics.median(audits) * 1e3:.0f} ms"
        if events
        else "trace n/a"
    )
    print(f"{task_dir.name:16s} verification median {statistics.median(seconds):.2f} s, "
          f"max {max(seconds):.2f} s; {trace_note}; resolved {resolved}/{runs}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="2 runs per task")
    args = parser.parse_args()
    if args.quick:
        args.runs = 2
    for task_dir in sorted(p for p in FIXTURES.iterdir() if p.is_dir()):
        asyncio.run(run_task(task_dir, args.runs))


if __name__ == "__main__":
    main()
