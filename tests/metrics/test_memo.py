"""The per-record memo shared by the grid score and TIDE's loop detection."""

from __future__ import annotations

import gc

from exploreval.core import AgentInfo, EpisodeRecord, Step
from exploreval.metrics import _memo
from exploreval.metrics._memo import memo
from exploreval.metrics.tide import ExactText, record_loop_mask, record_loops, strip_patterns


def record(n: int) -> EpisodeRecord:
    return EpisodeRecord(
        episode_id="e",
        env_id="test/LineWalk-v0",
        family="toy",
        seed=0,
        agent=AgentInfo(name="a", kind="scripted"),
        steps=[Step(t=t, observation=f"s{t % 2} #{t}", action="x") for t in range(n)],
    )


def test_values_are_computed_once_per_record_name_and_key() -> None:
    calls: list[str] = []
    rec = record(4)

    def compute(tag: str) -> str:
        calls.append(tag)
        return tag

    assert memo(rec, "a", 1, lambda: compute("a1")) == "a1"
    assert memo(rec, "a", 1, lambda: compute("again")) == "a1"
    assert memo(rec, "a", 2, lambda: compute("a2")) == "a2"  # another key recomputes
    assert memo(rec, "b", 1, lambda: compute("b1")) == "b1"  # names do not collide
    rec.steps.pop()
    assert memo(rec, "b", 1, lambda: compute("b1'")) == "b1'"  # changed steps recompute
    assert calls == ["a1", "a2", "b1", "b1'"]
    slot = id(rec)
    del rec
    gc.collect()
    assert slot not in _memo._MEMO


def test_tide_loop_pass_is_shared_and_follows_the_identity() -> None:
    rec = record(6)
    exact = ExactText()
    assert record_loops(rec, exact) is record_loops(rec, exact)
    assert record_loops(rec, exact).loop_steps == 0  # the "#t" suffix makes every state new
    stripped = strip_patterns(r" #\d+")
    # s0 s1 s0 s1 s0 s1 with no final state. The authors' scan (the default): lap (s0 s1)
    # repeats at 2-3, and from 2 again at 4-5 -> steps {2, 3, 4, 5}. Exhaustive: the lap at 2-3
    # and the rotated lap (s1 s0) at 3-4; step 5 cannot close a lap -> steps {2, 3, 4}
    assert record_loops(rec, stripped).loop_steps == 4
    assert record_loop_mask(rec, stripped) == [False, False, True, True, True, True]
    exhaustive = record_loops(rec, stripped, definition="exhaustive")
    assert exhaustive is not None and exhaustive.loop_steps == 3
    assert record_loop_mask(rec, stripped, definition="exhaustive") == [False, False] + [
        True
    ] * 3 + [False]
    assert record_loops(rec, stripped) is record_loops(rec, stripped)  # each definition memoised
