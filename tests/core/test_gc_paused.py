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
