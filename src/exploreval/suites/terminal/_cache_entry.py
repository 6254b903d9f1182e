"""A cache entry of an image, built or pulled: made once under its lock, held while in use.

:mod:`._image` (built images) and :mod:`._registry` (pulled ones) both make their entries here,
so neither imports the other's machinery (the Dockerfile interpreter pulls registry images).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from exploreval.core import write_atomic
from exploreval.suites.terminal._base_system import remove_tree
from exploreval.suites.terminal._image_cache import (
    lock_exclusive,
    share_across_images,
    unlock,
)
from exploreval.suites.terminal._image_recipe import BuiltImage


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
