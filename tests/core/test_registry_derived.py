"""``Registry.derived``: what a hot path derives from a registry is computed once, and again
after every change of the entries (never stale)."""

from __future__ import annotations

from exploreval.core._registry import Registry


def test_derived_values_are_kept_until_the_entries_change() -> None:
    loads: list[int] = []
    registry: Registry[int] = Registry("thing", loader=lambda: loads.append(1))
    registry.register("a", 1)
    calls: list[int] = []

    def total() -> int:
        calls.append(1)
        return sum(registry.get(name) for name in registry.names())

    assert registry.derived("total", total) == 1
    assert registry.derived("total", total) == 1 and len(calls) == 1  # kept
    assert loads  # the loader ran before anything was derived
    registry.register("b", 2)
    assert registry.derived("total", total) == 3 and len(calls) == 2  # a register: again
    registry.register("b", 5, replace=True)
    assert registry.derived("total", total) == 6
    registry.unregister("a")
    assert registry.derived("total", total) == 5
    registry.unregister("missing")  # no change: still kept
    assert registry.derived("total", total) == 5 and len(calls) == 4
    assert registry.derived("other", lambda: "x") == "x"  # keys are apart
