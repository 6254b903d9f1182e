"""Where the Ray executor puts its workers, and what each holds (a pure function: no cluster)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from exploreval.runner import SpecError
from exploreval.runner._ray import plan_workers, split_evenly

nodes = st.dictionaries(
    st.text("abcdef0123456789", min_size=4, max_size=8),
    st.sampled_from([0.0, 0.5, 1.0, 2.0, 4.0, 16.0, 64.0]),
    min_size=1,
    max_size=12,
).filter(lambda n: any(c >= 1 for c in n.values()))


@given(nodes, st.integers(1, 5000), st.lists(st.none() | st.integers(1, 300), max_size=3))
def test_workers_follow_cpus_and_shares_sum_to_the_limits(
    cpus: dict[str, float], concurrency: int, limits: list[int | None]
) -> None:
    slots = plan_workers(cpus, concurrency, limits)
    bounds = [concurrency, int(sum(int(c) for c in cpus.values()))]
    bounds += [limit for limit in limits if limit is not None]
    assert len(slots) == min(bounds)
    # the cluster as a whole keeps exactly the episodes in flight and each connection limit
    assert sum(s.share for s in slots) == concurrency
    for index, limit in enumerate(limits):
        held = [s.connections[index] for s in slots]
        if limit is None:
            assert held == [None] * len(slots)
        else:
            counts = [c for c in held if c is not None]
            assert len(counts) == len(slots) and sum(counts) == limit and min(counts) >= 1
    # no node holds more workers than it has whole CPUs, and a node's count follows its CPUs:
    # within one of its proportional quota
    total = sum(int(c) for c in cpus.values())
    for node, count in cpus.items():
        placed = sum(s.node_id == node for s in slots)
        assert placed <= int(count)
        assert abs(placed - len(slots) * int(count) / total) < 1


@given(st.integers(0, 10**6), st.integers(1, 1000))
def test_split_evenly(total: int, parts: int) -> None:
    shares = split_evenly(total, parts)
    assert len(shares) == parts and sum(shares) == total and max(shares) - min(shares) <= 1


def test_the_issue_case_and_a_cluster_without_cpus() -> None:
    # 32 in flight, 32 connections, two one-CPU nodes: one worker each, 16 and 16
    slots = plan_workers({"head": 1.0, "node": 1.0}, 32, [32])
    assert [(s.node_id, s.share, s.connections) for s in slots] == [
        ("head", 16, (16,)),
        ("node", 16, (16,)),
    ]
    # a node of 4 CPUs beside one of 1: four workers there, one here
    slots = plan_workers({"big": 4.0, "small": 1.0}, 256, [None])
    assert [s.node_id for s in slots].count("big") == 4 and len(slots) == 5
    with pytest.raises(SpecError, match="no node with a whole CPU"):
        plan_workers({"head": 0.0}, 8, [])
