"""Task images without Docker: a root file system built from a task's Dockerfile, cached.

``build_image(recipe)`` returns a :class:`BuiltImage` whose ``rootfs`` every episode of the task
mounts read-only as the lower layer of its own copy-on-write root (:mod:`._rootfs`). This module
drives the build and its cache entry; each step has its own module:

1. **Base** (:mod:`._base_system`): ``FROM`` maps to a Debian or Ubuntu release, built once.
2. **Instructions** (:mod:`._image_builder`), in order, in the image being built, each run in the
   image's own sandbox (:mod:`._root_run`) with the host's settings (:mod:`._host_settings`).
3. **Test tools** (:mod:`._test_tools`, Terminal-Bench tasks): uv and pytest, offline.

Images are cached by a content hash of everything that defines them (:mod:`._image_recipe`)
under ``EXPLOREVAL_IMAGE_CACHE`` (default: ``~/.cache/exploreval/images``, :mod:`._image_cache`);
a build holds a lock, so concurrent runs build once. A failing step raises
:class:`ImageBuildError` with the Dockerfile line, the step's last output and, when it is a
network failure, the host it could not reach (:mod:`._reachability`).
"""

from __future__ import annotations

import contextlib
import shutil
from pathlib import Path
from typing import IO, Any

from exploreval.suites.terminal._cache_entry import held_image, make_entry
from exploreval.suites.terminal._image_builder import ImageBuilder
from exploreval.suites.terminal._image_cache import images_root
from exploreval.suites.terminal._image_recipe import (
    BuildLog,
    BuildRecipe,
    BuiltImage,
    image_key,
)
from exploreval.suites.terminal._recipe_check import check_recipe


def cached_image(recipe: BuildRecipe) -> BuiltImage | None:
    """The cached image of ``recipe``, or None (never builds)."""
    _, bases, _ = check_recipe(recipe)
    return held_image(images_root() / image_key(recipe, bases))


def build_image(recipe: BuildRecipe, *, echo: IO[str] | None = None) -> BuiltImage:
    """The image of ``recipe`` (built now unless cached); blocking. A new image shares its
    base's untouched files, and the cache is then held to its cap (``_image_cache``)."""
    df, bases, notes = check_recipe(recipe)
    key = image_key(recipe, bases)
    logs: list[BuildLog] = []

    def build(work: Path, started: float) -> dict[str, Any]:
        log = BuildLog(work / "build.log", echo)
        logs.append(log)
        meta = ImageBuilder(recipe, df, bases, work, log, started).build()
        meta["notes"] = notes + meta.get("notes", [])
        log.close()
        return meta

    def keep_log(work: Path) -> None:
        for log in logs:
            log.close()
        failed = images_root() / "failed"
        failed.mkdir(exist_ok=True)
        with contextlib.suppress(OSError):
            shutil.copy2(work / "build.log", failed / f"{key}.log")

    return make_entry(images_root() / key, build, on_failure=keep_log)
