"""Loop Ratio (TIDE Sec. 3.2, Eq. 2-4): cycles over hashed states, loops = a cycle immediately
repeated with the same states and the same actions.

Two readings of "a cycle immediately repeated", each by name (``LOOP_DEFINITIONS``):

* ``"published"`` (the default): the authors' own scan, which made the paper's Table 2 (see
  ``_tide_published``): left to right, one lap compared after each cycle, then a jump to the
  cycle's end; the final state plays no part.
* ``"exhaustive"``: the definition checked at every cycle end, described below, which also
  counts rotated and partial laps, and needs the repeated lap to close on its first state
  (which a known final state can do for the last lap); the published scan does not.

States s_0 .. s_T (s_t is the observation before action a_t; s_T, the state after the last action,
only when known) and actions a_0 .. a_{T-1}.

* A *cycle* l_ij has s_i = s_j, i < j, and no state repeated inside s_i .. s_{j-1} (the
  non-recursive condition). Hence i is the most recent earlier visit of s_j, and the cycle ending at
  j exists iff no repeat pair (p, q) with p >= i, q < j exists, i.e. iff
  max_{q < j} prev(q) < prev(j). One action that leaves the state unchanged is a cycle (j = i + 1).
* A *loop* l_jk is a cycle that repeats the cycle l_ij just before it: same length, same states,
  same actions. Under the cycle conditions the states match iff prev(q) = q - L for every q in
  [j, k) (L = k - j), so a loop is checked in O(1) from a precomputed run length of positions whose
  distance to their previous visit is L and whose action repeats the action taken there.
* Loop steps are the actions a_j .. a_{k-1} of every loop, counted once even where loops overlap
  (rotated views of the same repeated lap overlap). r identical consecutive laps of a k-step cycle
  that end back on the lap's first state therefore give (r - 1) * k loop steps.

Everything is vectorised with numpy: one stable radix argsort for previous visits, cumulative maxima for
the non-recursive condition, and a difference array for the union of loop intervals.

The algorithm printed as Algorithm 1 in the paper moves ``t_end`` on at every revisit, so its
condition ``i == t_end`` can only hold for one-step cycles; ``algorithm1_as_printed`` reproduces it
for comparison (tests show where it differs from the definition).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, get_args

import numpy as np
import numpy.typing as npt

from exploreval.metrics._tide_published import published_loop_mask
from exploreval.metrics._tide_state import StateIdentity

#: Which reading of Eq. 2-4 a loop number uses (see the module docstring).
LoopDefinition = Literal["published", "exhaustive"]

#: Each definition and what it is, for reports and stored runs.
LOOP_DEFINITIONS: dict[str, str] = {
    "published": "TIDE authors' scan (their analysis code; the paper's Table 2)",
    "exhaustive": "every cycle end checked: rotated and partial laps count too",
}

#: The definition used where none is named: the one the paper's numbers came from.
DEFAULT_LOOP_DEFINITION: LoopDefinition = "published"


def check_loop_definition(definition: str) -> LoopDefinition:
    """The definition, or a ValueError naming the ones there are."""
    if definition not in get_args(LoopDefinition):
        raise ValueError(
            f"unknown loop definition {definition!r}: expected one of {', '.join(LOOP_DEFINITIONS)}"
        )
    return definition  # type: ignore[return-value]


IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


_NO_ACTION = object()


@dataclass(frozen=True)
class Trajectory:
    """(state, action) pairs plus, when known, the state reached by the last action."""

    steps: Sequence[tuple[Any, Any]]
    final_state: Any = None


@dataclass(frozen=True, slots=True)
class LoopStats:
    """Loop diagnostics of one trajectory."""

    steps: int
    loop_steps: int
    cycles: int
    loops: int

    @property
    def ratio(self) -> float:
        return self.loop_steps / self.steps if self.steps else 0.0

    def __reduce__(self) -> tuple[type[LoopStats], tuple[int, int, int, int]]:
        # one per trajectory summary: rebuilt from its values (see TrajectorySummary)
        return LoopStats, (self.steps, self.loop_steps, self.cycles, self.loops)


#: Below this many items a dict beats pandas' hashing (whose fixed cost is ~0.1 ms a call), which
#: matters when a run of thousands of short episodes is scored one episode at a time.
_SMALL = 512


def _dense_ids(items: Sequence[Hashable]) -> IntArray:
    """Equal items -> equal small ints, hashed in C by pandas (tuples stay single items)."""
    if not items:
        return np.zeros(0, dtype=np.int64)
    if len(items) < _SMALL:
        seen: dict[Hashable, int] = {}
        return np.fromiter(
            (seen.setdefault(item, len(seen)) for item in items), dtype=np.int64, count=len(items)
        )
    import pandas as pd  # here, not at the top: the viewer imports this module

    array = np.fromiter(items, dtype=object, count=len(items))
    codes, _ = pd.factorize(array, use_na_sentinel=False)
    return np.asarray(codes, dtype=np.int64)


def _stable_order(ids: IntArray) -> IntArray:
    """Stable argsort of non-negative ids in linear time: LSD radix on 16-bit digits (numpy uses a
    radix sort for 16-bit keys), falling back to a comparison sort for negative or huge ids."""
    if ids.size == 0 or ids.min() < 0 or ids.max() >= 1 << 32:
        return np.argsort(ids, kind="stable")
    low = (ids & 0xFFFF).astype(np.uint16)
    order = np.argsort(low, kind="stable")
    if ids.max() >= 1 << 16:
        high = (ids >> 16).astype(np.uint16)
        order = order[np.argsort(high[order], kind="stable")]
    return order


def _previous_visit(ids: IntArray) -> IntArray:
    """prev[q] = largest p < q with ids[p] == ids[q], else -1 (one stable radix sort: linear)."""
    n = ids.size
    prev = np.full(n, -1, dtype=np.int64)
    if n < 2:
        return prev
    order = _stable_order(ids)
    sorted_ids = ids[order]
    same = sorted_ids[1:] == sorted_ids[:-1]
    prev[order[1:][same]] = order[:-1][same]
    return prev


#: Below this many states the detector runs as plain Python: numpy's ~30 calls cost ~60 us
#: whatever the length, a Python pass ~0.5 us a state (a score runs it on every episode).
_SHORT = 128


def loop_mask_from_ids(state_ids: IntArray, action_ids: IntArray) -> tuple[BoolArray, int, int]:
    """Core detector on integer ids. ``len(state_ids)`` is T or T + 1 (final state known).

    Returns (loop step mask over the T actions, number of cycles, number of loops).
    """
    _check_lengths(state_ids.size, action_ids.size)
    if state_ids.size < _SHORT:
        mask, cycles, loops = _loop_mask_short(state_ids.tolist(), action_ids.tolist())
        return np.array(mask, dtype=np.bool_), cycles, loops
    return _loop_mask_vectorised(state_ids, action_ids)


def _check_lengths(n_states: int, n_actions: int) -> None:
    if n_states not in (n_actions, n_actions + 1):
        raise ValueError(
            f"need one state per action (+ optionally the final state): {n_states} states, {n_actions} actions"
        )


def _loop_mask_short(
    states: Sequence[Hashable], actions: Sequence[Hashable]
) -> tuple[list[bool], int, int]:
    """``_loop_mask_vectorised``, step by step (the same quantities, in the same order): states
    and actions compare by equality, so any hashable ids do."""
    n_actions = len(actions)
    if n_actions == 0 or len(states) < 2:
        return [False] * n_actions, 0, 0
    last: dict[Hashable, int] = {}
    prev = [-1] * len(states)
    for q, state in enumerate(states):
        p = last.get(state)
        if p is not None:
            prev[q] = p
        last[state] = q
    ends: list[int] = []
    max_before = -1  # max prev[q] over q < k: the non-recursive condition
    for k, p in enumerate(prev):
        if p >= 0 and max_before < p:
            ends.append(k)
        if p > max_before:
            max_before = p
    if not ends:
        return [False] * n_actions, 0, 0
    dist = [0] * n_actions
    run = [0] * n_actions
    ok_before = False
    for q in range(n_actions):
        p = prev[q]
        ok = p >= 0 and actions[q] == actions[p]
        if p >= 0:
            dist[q] = q - p
        if ok:
            run[q] = run[q - 1] + 1 if ok_before and dist[q] == dist[q - 1] else 1
        ok_before = ok
    change = [0] * (n_actions + 1)
    loops = 0
    for k in ends:
        j = prev[k]
        if dist[k - 1] == k - j and run[k - 1] >= k - j:
            change[j] += 1
            change[k] -= 1
            loops += 1
    mask: list[bool] = []
    open_loops = 0
    for q in range(n_actions):
        open_loops += change[q]
        mask.append(open_loops > 0)
    return mask, len(ends), loops


def _loop_mask_vectorised(state_ids: IntArray, action_ids: IntArray) -> tuple[BoolArray, int, int]:
    n_actions = action_ids.size
    n_states = state_ids.size
    mask = np.zeros(n_actions, dtype=np.bool_)
    if n_actions == 0 or n_states < 2:
        return mask, 0, 0
    prev = _previous_visit(state_ids)
    # Non-recursive condition: the cycle ending at k exists iff max_{q<k} prev[q] < prev[k].
    running_max = np.maximum.accumulate(prev)
    max_before = np.empty(n_states, dtype=np.int64)
    max_before[0] = -1
    max_before[1:] = running_max[:-1]
    is_cycle = (prev >= 0) & (max_before < prev)
    ends = np.flatnonzero(is_cycle)
    if ends.size == 0:
        return mask, 0, 0
    # Per action position q: distance to the previous visit of its state, and whether the action
    # taken there is repeated now.
    q_prev = prev[:n_actions]
    dist = np.where(q_prev >= 0, np.arange(n_actions) - q_prev, 0)
    act_ok = (q_prev >= 0) & (action_ids == action_ids[np.maximum(q_prev, 0)])
    # run[q]: length of the chain of consecutive act_ok positions with equal distance ending at q.
    links = np.zeros(n_actions, dtype=np.bool_)
    links[1:] = act_ok[1:] & act_ok[:-1] & (dist[1:] == dist[:-1])
    positions = np.arange(n_actions)
    chain_start = np.maximum.accumulate(np.where(links, 0, positions))
    run = np.where(act_ok, positions - chain_start + 1, 0)
    # A cycle (j, k) is a loop iff the L = k - j positions before k all repeat at distance L.
    starts = prev[ends]
    lengths = ends - starts
    last = ends - 1
    is_loop = (dist[last] == lengths) & (run[last] >= lengths)
    loop_starts, loop_ends = starts[is_loop], ends[is_loop]
    if loop_starts.size:
        diff = np.bincount(loop_starts, minlength=n_actions + 1) - np.bincount(
            loop_ends, minlength=n_actions + 1
        )
        mask = np.cumsum(diff[:-1]) > 0
    return mask, int(ends.size), int(loop_starts.size)


def _split(
    steps: Sequence[tuple[Any, Any]] | Trajectory, final_state: Any
) -> tuple[list[Any], list[Any], Any]:
    if isinstance(steps, Trajectory):
        final_state = steps.final_state if final_state is None else final_state
        steps = steps.steps
    if not steps:
        return [], [], final_state
    try:  # fast path: a well-formed list of pairs
        return [s for s, _ in steps], [a for _, a in steps], final_state
    except (TypeError, ValueError):
        pass
    for index, pair in enumerate(steps):  # find and name the malformed step
        try:
            _state, _action = pair
        except (TypeError, ValueError):
            raise ValueError(
                f"step {index}: expected a (state, action) pair, got {type(pair).__name__}"
            ) from None
    raise ValueError("steps must be (state, action) pairs")


def _state_ids(states: list[Any], identity: StateIdentity | None) -> IntArray:
    if identity is None:
        return _dense_ids(states)
    for index, state in enumerate(states):
        if not isinstance(state, str):
            raise ValueError(
                f"state {index} is {type(state).__name__}; identity {identity.name!r} needs text states"
            )
    return np.asarray(identity.ids(states), dtype=np.int64)


def loop_stats(
    steps: Sequence[tuple[Any, Any]] | Trajectory,
    *,
    final_state: Any = None,
    identity: StateIdentity | None = None,
    definition: LoopDefinition = DEFAULT_LOOP_DEFINITION,
) -> tuple[BoolArray, LoopStats]:
    """Loop step mask and counts for one trajectory, by the named definition."""
    check_loop_definition(definition)
    states, actions, final = _split(steps, final_state)
    if definition == "published":
        _check_lengths(len(states), len(actions))
        ids = _state_ids(states, identity).tolist() if identity is not None else states
        published, cycles, loops = published_loop_mask(ids, actions)
        mask = np.array(published, dtype=np.bool_)
        return mask, LoopStats(len(actions), int(mask.sum()), cycles, loops)
    if final is not None:
        states = [*states, final]
    if len(states) < _SHORT:  # ids as lists, never arrays (see _SHORT)
        _check_lengths(len(states), len(actions))
        ids = _state_ids(states, identity).tolist() if identity is not None else states
        seen: dict[Hashable, int] = {}  # actions compare as _dense_ids compares them
        short, cycles, loops = _loop_mask_short(
            ids, [seen.setdefault(action, len(seen)) for action in actions]
        )
        mask = np.array(short, dtype=np.bool_)
        return mask, LoopStats(len(actions), sum(short), cycles, loops)
    mask, cycles, loops = loop_mask_from_ids(_state_ids(states, identity), _dense_ids(actions))
    return mask, LoopStats(len(actions), int(mask.sum()), cycles, loops)


def loop_steps(
    steps: Sequence[tuple[Any, Any]] | Trajectory,
    *,
    final_state: Any = None,
    identity: StateIdentity | None = None,
    definition: LoopDefinition = DEFAULT_LOOP_DEFINITION,
) -> list[bool]:
    """One bool per step: is this action part of a loop (a cycle repeating the previous cycle)?

    ``steps`` are (state, action) pairs, the state being the observation before the action;
    ``final_state`` is the state after the last action if known (it lets the last lap close).
    States compare by exact equality unless a ``StateIdentity`` is given; actions always compare
    exactly (as in TIDE). ``definition`` names the reading (see ``LOOP_DEFINITIONS``).
    """
    mask, _ = loop_stats(steps, final_state=final_state, identity=identity, definition=definition)
    return [bool(v) for v in mask]


def loop_ratio(
    trajectories: Sequence[Sequence[tuple[Any, Any]] | Trajectory],
    *,
    identity: StateIdentity | None = None,
    definition: LoopDefinition = DEFAULT_LOOP_DEFINITION,
) -> float:
    """Eq. 4 pooled over trajectories: sum of loop steps / sum of steps (0.0 when there are no steps).

    Pooled as Eq. 4 is written (the authors' code prints this and also the mean of per-trajectory
    ratios). For ``"exhaustive"`` all trajectories go through the detector in one vectorised
    pass: state ids are made distinct per trajectory, and a known final state gets a unique dummy
    action so nothing crosses a boundary.
    """
    if check_loop_definition(definition) == "published":
        loop_total = step_total = 0
        for trajectory in trajectories:
            _, stats = loop_stats(trajectory, identity=identity, definition="published")
            loop_total += stats.loop_steps
            step_total += stats.steps
        return loop_total / step_total if step_total else 0.0
    all_states: list[Any] = []
    all_actions: list[Any] = []
    owner: list[IntArray] = []
    custom: list[IntArray] = []
    real: list[BoolArray] = []
    for index, trajectory in enumerate(trajectories):
        states, actions, final = _split(trajectory, None)
        if final is not None:
            states = [*states, final]
            actions = [*actions, _NO_ACTION]
        if identity is not None:
            custom.append(_state_ids(states, identity))
        all_states.extend(states)
        all_actions.extend(actions)
        owner.append(np.full(len(states), index, dtype=np.int64))
        flags = np.ones(len(states), dtype=np.bool_)
        if final is not None:
            flags[-1] = False
        real.append(flags)
    if not all_states:
        return 0.0
    n_trajectories = max(len(trajectories), 1)
    local = np.concatenate(custom) if identity is not None else _dense_ids(all_states)
    state_ids = local * n_trajectories + np.concatenate(owner)  # never equal across trajectories
    action_ids = _dense_ids(all_actions)
    is_real = np.concatenate(real)
    dummies = np.flatnonzero(~is_real)
    action_ids[dummies] = -1 - np.arange(dummies.size)  # a final state's "action" repeats nothing
    mask, _, _ = loop_mask_from_ids(state_ids, action_ids)
    total = int(is_real.sum())
    return int(mask[is_real].sum()) / total if total else 0.0


def algorithm1_as_printed(states: Sequence[Hashable], actions: Sequence[Hashable]) -> int:
    """Loop steps of one trajectory by Algorithm 1 exactly as printed in the paper (for comparison).

    ``states`` has one entry per action plus optionally the final state. Quadratic; not for use.
    """
    table: dict[Hashable, int] = {}
    previous: list[tuple[Hashable, Hashable | None]] | None = None
    t_end = -1
    total = 0
    pairs = [(s, actions[t] if t < len(actions) else None) for t, s in enumerate(states)]
    for t, state in enumerate(states):
        if state in table:
            i = table[state]
            current = pairs[i:t]
            visited = [s for s, _ in current]
            if len(set(visited)) == len(visited):  # not HasNested
                if i == t_end and current == previous:
                    total += t - i
                previous = current
                t_end = t
        table[state] = t
    return total
