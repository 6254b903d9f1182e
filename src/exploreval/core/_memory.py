"""Bulk work that builds millions of long-lived objects (a large run's parsed records)."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause CPython's cyclic garbage collector for the duration of the block.

    Why: parsing a log allocates millions of small objects that all stay alive, and every
    collection that reaches them walks all of them; on a 10,000-episode log that was 85% of the
    read time (8.3 s with the collector, 1.4 s without), and the share grows with the log.
    Records hold no reference cycles, so reference counting still frees everything they drop;
    cycles made inside the block are collected once the collector resumes.

    On leaving, what the block allocated and kept is moved to the oldest generation at once
    (``gc.freeze()`` then ``gc.unfreeze()``, two list splices) instead of being walked by a
    young collection, then a middle one, then a full one: three walks of every record become at
    most one. Skipped when the program froze objects itself (unfreezing would undo that).
    Nested use is safe: only the outermost block resumes collection, and only if it was
    running before."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            if gc.get_freeze_count() == 0:
                gc.freeze()
                gc.unfreeze()
            gc.enable()


#: Worker processes for analysis (a sync of the columns, a score); unset = one per core, at most 8.
WORKERS_ENV = "EXPLOREVAL_ANALYSIS_WORKERS"


def analysis_workers(work: int, parallel_from: int) -> int:
    """How many worker processes bulk analysis of ``work`` units uses: ``EXPLOREVAL_ANALYSIS_
    WORKERS`` when set (1 = this process), else one per core (at most 8) once ``work`` reaches
    ``parallel_from`` (below it, starting workers costs more than it saves), else 1."""
    import os

    text = os.environ.get(WORKERS_ENV, "").strip()
    if text:
        try:
            count = int(text)
        except ValueError:
            count = 0
        if count < 1:
            raise ValueError(f"{WORKERS_ENV}={text!r}: expected a whole number of workers >= 1")
        return count
    if work < parallel_from:
        return 1
    return max(1, min(os.cpu_count() or 1, 8))
