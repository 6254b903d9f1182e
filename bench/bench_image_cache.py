"""How much disk the task-image cache takes with images sharing their base (issue 43).

Run: EXPLOREVAL_IMAGE_CACHE=/tmp/fresh python bench/bench_image_cache.py TASKS_DIR [--limit N]

Builds the image of every task under TASKS_DIR (Terminal-Bench or Harbor layout, as shipped) into
the cache, then prints per image its build time and what it holds alone, and for the cache: the
bytes on disk (a shared file counted once), what the same images would take as full copies (the
cache before sharing), the ratio, and how long `exploreval images` takes to list it.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("tasks", type=Path)
    parser.add_argument("--limit", type=int, default=0)
    args = parser.parse_args()
    from exploreval.suites.terminal._errors import TaskFormatError
    from exploreval.suites.terminal._image import build_image
    from exploreval.suites.terminal._image_cache import list_cache
    from exploreval.suites.terminal._image_recipe import BuildRecipe, ImageBuildError
    from exploreval.suites.terminal._tasks import is_task_dir, load_task

    folders = sorted(p for p in args.tasks.iterdir() if is_task_dir(p))
    if args.limit:
        folders = folders[: args.limit]
    seconds: list[float] = []
    print(f"{'task':40} {'build s':>8} {'shared MB':>10} result")
    for folder in folders:
        try:
            task = load_task(folder, image="build")
        except TaskFormatError as exc:
            print(f"{folder.name:40} {'-':>8} {'-':>10} refused: {str(exc)[:60]}")
            continue
        assert task.image is not None
        t0 = time.perf_counter()
        try:
            image = build_image(BuildRecipe(**task.image.model_dump()))
        except (ImageBuildError, TaskFormatError) as exc:
            print(f"{folder.name:40} {time.perf_counter() - t0:8.1f} {'-':>10} failed: "
                  f"{str(exc).splitlines()[0][:60]}")  # fmt: skip
            continue
        took = time.perf_counter() - t0
        seconds.append(took)
        shared = image.meta.get("shared_bytes", 0) / 1e6
        print(f"{folder.name:40} {took:8.1f} {shared:10.0f} ok", flush=True)
    t0 = time.perf_counter()
    entries, total = list_cache()
    listed = time.perf_counter() - t0
    images = [e for e in entries if e.kind == "image"]
    bases = [e for e in entries if e.kind == "base"]
    full_copies = sum(e.own_bytes + e.shared_bytes for e in images) + sum(
        e.own_bytes for e in bases
    )
    print(f"\n{len(images)} images over {len(bases)} bases; builds: median "
          f"{statistics.median(seconds) if seconds else float('nan'):.1f} s, max "
          f"{max(seconds, default=float('nan')):.1f} s")  # fmt: skip
    print(
        f"cache on disk: {total / 1e9:.2f} GB; as full copies it would be "
        f"{full_copies / 1e9:.2f} GB ({full_copies / max(total, 1):.1f}x)"
    )
    print(f"images' own bytes: median {statistics.median([e.own_bytes for e in images]) / 1e6 if images else 0:.0f} MB; "
          f"listing the cache took {listed:.2f} s")  # fmt: skip
    sys.stdout.flush()


if __name__ == "__main__":
    main()
