"""gc_paused: the collector is off inside, restored by the outermost block only."""

from __future__ import annotations

import gc

import pytest

from exploreval.core import gc_paused


def test_paused_inside_and_restored_after_even_on_error() -> None:
    assert gc.isenabled()
    with pytest.raises(RuntimeError), gc_paused():
        assert not gc.isenabled()
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the inner block does not resume collection
        raise RuntimeError("boom")
    assert gc.isenabled()


def test_a_collector_that_was_off_stays_off() -> None:
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_what_the_block_kept_is_moved_to_the_oldest_generation() -> None:
    """Kept objects skip the young generations (no walk of them by young collections)."""
    gc.collect()
    with gc_paused():
        kept = [[i] for i in range(5_000)]
        young_inside = gc.get_count()[0]
    assert young_inside >= 5_000  # allocated while paused: all young
    assert gc.get_count()[0] < 100  # after the block: aged at once, nothing walked
    assert gc.get_freeze_count() == 0  # nothing left frozen
    assert len(kept) == 5_000


def test_objects_the_program_froze_stay_frozen() -> None:
    gc.collect()
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with gc_paused():
            _ = [[i] for i in range(100)]
        assert gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()
