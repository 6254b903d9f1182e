"""Terminal sandbox speed: start latency (with and without the cast recording and the
file-access watcher, and where the time goes), keystroke round trip, 32 concurrent sandboxes,
verification throughput under the cap. Run: python bench/bench_terminal_sandbox.py [--quick]"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

from exploreval.suites.terminal import Sandbox, SandboxConfig, set_verification_limit, verify


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


async def main() -> None:
    tmp = Path(tempfile.mkdtemp())
    tmp.chmod(0o755)
    work = tmp / "work"
    work.mkdir()
    (work / "data.txt").write_text("x\n" * 100)
    tests = tmp / "tests"
    tests.mkdir()
    (tests / "test_ok.py").write_text("def test_ok():\n    assert True\n")
    cfg = SandboxConfig(workdir_template=work, tests_dir=tests)
    warm = await Sandbox.start(cfg)
    await warm.close()

    n = 30 if "--quick" in sys.argv else 100
    for label, config in (
        ("default (cast + file watcher)", cfg),
        ("no cast", cfg.model_copy(update={"record_cast": False})),
        (
            "no cast, no file watcher",
            cfg.model_copy(update={"record_cast": False, "watch_files": False}),
        ),
    ):
        starts: list[float] = []
        phases: dict[str, list[float]] = {}
        for _ in range(n):
            t0 = time.perf_counter()
            sb = await Sandbox.start(config)
            starts.append(time.perf_counter() - t0)
            for key, value in sb.start_phases.items():
                phases.setdefault(key, []).append(value)
            await sb.close()
        where = ", ".join(f"{k} {statistics.median(v) * 1e3:.1f}" for k, v in phases.items() if v)
        print(
            f"start {label}, {n} starts: median {statistics.median(starts) * 1e3:.1f} ms, "
            f"p95 {pct(starts, 0.95) * 1e3:.1f} ms (medians in ms: {where})"
        )

    # A built image (the real Harbor hello-world task's python:3.11-slim), cached: the start of
    # its copy-on-write root (quota tmpfs + idmapped image + overlay) and sandbox.
    from exploreval.suites.terminal._image import build_image
    from exploreval.suites.terminal._image_recipe import BuildRecipe
    from exploreval.suites.terminal._tasks import load_task

    fixture = Path(__file__).parents[1] / "tests/fixtures/terminal/real/harbor/hello-world"
    task = load_task(fixture, image="build")
    assert task.image is not None
    t0 = time.perf_counter()
    image = await asyncio.to_thread(build_image, BuildRecipe(**task.image.model_dump()))
    print(f"image of {fixture.name} ready in {time.perf_counter() - t0:.1f} s "
          f"(built in {image.meta.get('seconds')} s when first made)")  # fmt: skip
    image_cfg = SandboxConfig(image=image.rootfs, workdir=task.container_workdir, env=image.env)
    for label, config in (
        ("cached image, default (cast + file watcher)", image_cfg),
        ("cached image, no cast, no file watcher",
         image_cfg.model_copy(update={"record_cast": False, "watch_files": False})),
    ):  # fmt: skip
        starts = []
        phases = {}
        for _ in range(n):
            t0 = time.perf_counter()
            sb = await Sandbox.start(config)
            starts.append(time.perf_counter() - t0)
            for key, value in sb.start_phases.items():
                phases.setdefault(key, []).append(value)
            await sb.close()
        where = ", ".join(f"{k} {statistics.median(v) * 1e3:.1f}" for k, v in phases.items() if v)
        print(
            f"start {label}, {n} starts: median {statistics.median(starts) * 1e3:.1f} ms, "
            f"p95 {pct(starts, 0.95) * 1e3:.1f} ms (medians in ms: {where})"
        )

    async with await Sandbox.start(cfg) as sb:
        trips = []
        for i in range(50):
            t0 = time.perf_counter()
            await sb.send_keys(f"echo rt{i}\n")
            while f"\nrt{i}" not in await sb.screen():
                pass
            trips.append(time.perf_counter() - t0)
        print(
            f"keystroke round trip (send + capture until echoed), 50: "
            f"median {statistics.median(trips) * 1e3:.1f} ms, p95 {pct(trips, 0.95) * 1e3:.1f} ms"
        )

    errors: list[str] = []

    async def episode(i: int) -> None:
        try:
            async with await Sandbox.start(cfg) as sb:
                for cmd in ("ls -la\n", "wc -l data.txt\n", f"echo done{i}\n"):
                    await sb.send_keys(cmd, wait=0.2)
                obs = await sb.observe()
                if f"done{i}" not in obs.text:
                    errors.append(f"episode {i}: output missing")
        except Exception as exc:  # counted, not raised: the number is the result
            errors.append(f"episode {i}: {type(exc).__name__}: {exc}")

    t0 = time.perf_counter()
    await asyncio.gather(*(episode(i) for i in range(32)))
    print(
        f"32 concurrent sandboxes x 3 commands: {time.perf_counter() - t0:.2f} s, "
        f"harness errors: {len(errors)} {errors[:3]}"
    )

    set_verification_limit(2)
    boxes = [await Sandbox.start(cfg) for _ in range(12)]
    t0 = time.perf_counter()
    results = await asyncio.gather(
        *(
            verify(sb, "python3 -m pytest -rA -p no:cacheprovider /tests", timeout=60)
            for sb in boxes
        )
    )
    took = time.perf_counter() - t0
    for sb in boxes:
        await sb.close()
    ok = sum(r.resolved for r in results)
    print(
        f"verification (pytest in the sandbox), 12 with cap 2: {took:.2f} s, "
        f"{len(results) / took:.2f}/s, resolved {ok}/12"
    )


if __name__ == "__main__":
    asyncio.run(main())
