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
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from exploreval.core import write_atomic
from exploreval.suites.terminal._base_system import remove_tree
from exploreval.suites.terminal._image_builder import ImageBuilder
from exploreval.suites.terminal._image_cache import (
    images_root,
    lock_exclusive,
    share_across_images,
    unlock,
)
from exploreval.suites.terminal._image_recipe import (
    BuildLog,
    BuildRecipe,
    BuiltImage,
    check_recipe,
    image_key,
)


def held_image(target: Path) -> BuiltImage | None:
    """The built image at ``target``, marked in use by this process (``_image_cache.hold``),
    or None. Checked again once held: a prune that was removing it has finished by then."""
    from exploreval.suites.terminal._image_cache import hold

    if not (target / "image.json").is_file():
        return None
    hold(target)
    try:
        meta = json.loads((target / "image.json").read_text())
    except FileNotFoundError:
        return None
    return BuiltImage(target.name, target, meta)


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


def make_entry(
    target: Path,
    make: Callable[[Path, float], dict[str, Any]],
    *,
    on_failure: Callable[[Path], None] | None = None,
) -> BuiltImage:
    """The cache entry ``target`` (an image, built or pulled): held if it is there, else made
    once under its lock by ``make(work dir, start time)``, which returns its ``image.json``; the
    work dir becomes the entry whole (a crash leaves no half entry), then is settled
    (:func:`settle_new_image`). On failure ``on_failure(work dir)`` runs before it is removed."""
    held = held_image(target)
    if held is not None:
        return held
    root = target.parent
    lock = lock_exclusive(root / "locks" / f"{target.name}.lock")
    try:
        held = held_image(target)
        if held is not None:
            return held
        work = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=root))
        os.chmod(work, 0o755)
        started = time.monotonic()
        try:
            meta = make(work, started)
            meta["seconds"] = round(time.monotonic() - started, 1)
            meta["key"] = target.name
            (work / "image.json").write_text(json.dumps(meta, indent=1, sort_keys=True))
            os.rename(work, target)
            settle_new_image(target, meta)
        except BaseException:
            if on_failure is not None:
                on_failure(work)
            remove_tree(work)
            raise
        return BuiltImage(target.name, target, json.loads((target / "image.json").read_text()))
    finally:
        unlock(lock)


def settle_new_image(target: Path, meta: dict[str, object]) -> None:
    """A new cache entry (built or pulled), at its final path: held by this process, its
    installed files shared with other cached images (at its final path, so the index names
    files that stay where they are) and the cache held to its cap."""
    from exploreval.suites.terminal._image_cache import enforce_cap, hold

    hold(target)
    across_files, across_bytes = share_across_images(target / "rootfs")
    if across_files:
        notes = meta.setdefault("notes", [])
        assert isinstance(notes, list)
        notes.append(f"{across_files} installed files ({across_bytes / 1e6:.0f} MB) shared with "
                     "other cached images")  # fmt: skip
        meta["shared_bytes"] = int(str(meta.get("shared_bytes", 0))) + across_bytes
        write_atomic(target / "image.json",
                     lambda tmp: tmp.write_text(json.dumps(meta, indent=1, sort_keys=True)))  # fmt: skip
    for gone in enforce_cap(keep=target):
        print(f"exploreval: image cache over its cap: removed {gone.kind} {gone.name} "
              f"({gone.own_bytes / 1e9:.1f} GB, least recently used)", file=sys.stderr)  # fmt: skip
