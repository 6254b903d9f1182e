"""TIDE's numbers as the authors' published analysis code computes them.

The paper's tables were made by the authors' code (``utils/analysis_files/analysis.py`` and
``utils/llm_agent/ctx_manager.py`` in their repository), not by the definitions as printed, so
these are the readings a user comparing with the paper needs. Each is written here from the
behaviour of that code, not copied from it (the repository has no licence):

* ``published_loop_mask``: the left-to-right scan behind Table 2's Loop Ratio. From position
  ``i`` it finds the first later return ``j`` to the state ``s_i``; if ``s_i .. s_{j-1}`` are all
  distinct that is a cycle (an "error atomic action"), and if the next ``j - i`` steps repeat
  its states and actions exactly, those steps are loop steps. The scan then jumps to ``j``;
  without a cycle it moves one step. It therefore sees one lap after each cycle, never a rotated
  or partial one, and the state reached by the last action plays no part (the code has one
  observation per step, the one before the action).
* ``one_step_loop_mask``: the run-time check that the authors log as ``loop``: step ``t`` repeats
  step ``t - 1``'s action from the same observation (text compared after collapsing whitespace
  and lower-casing), and the action is not ``do_nothing``.
* ``windowed_auv``: the AUV of Figures 3 and 5: the pass@1 curve over turns ``start .. end``
  (turn 1 to 20), minus its minimum, trapezoidal area divided by ``end - start``.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np

#: The action the authors' run-time check never counts as a loop (their "no-op").
NO_OP_ACTION = "do_nothing"

#: Figures 3 and 5: turns 1 to 20.
WINDOW_START = 1
WINDOW_END = 20


def published_loop_mask(
    states: Sequence[Hashable], actions: Sequence[Hashable]
) -> tuple[list[bool], int, int]:
    """Loop step mask (one per action), cycles and loops by the authors' scan.

    ``states[t]`` is the state before ``actions[t]``; a final state after the last action, when
    given (``len(states) == len(actions) + 1``), is ignored as the authors' code has none.
    """
    n_steps = len(actions)
    if len(states) not in (n_steps, n_steps + 1):
        raise ValueError(
            f"need one state per action (+ optionally the final state): {len(states)} states, {n_steps} actions"
        )
    states = states[:n_steps]
    next_visit = [n_steps] * n_steps  # next q > t with the same state, n_steps if none
    last: dict[Hashable, int] = {}
    for t in range(n_steps - 1, -1, -1):
        next_visit[t] = last.get(states[t], n_steps)
        last[states[t]] = t
    mask = [False] * n_steps
    cycles = loops = 0
    i = 0
    while i < n_steps:
        j = next_visit[i]
        # s_i .. s_{j-1} distinct: no state in between returns before j
        if j < n_steps and all(next_visit[q] >= j for q in range(i + 1, j)):
            cycles += 1
            length = j - i
            if j + length <= n_steps and all(
                states[i + d] == states[j + d] and actions[i + d] == actions[j + d]
                for d in range(length)
            ):
                loops += 1
                mask[j : j + length] = [True] * length
            i = j
        else:
            i += 1
    return mask, cycles, loops


def _normalise(value: Hashable) -> Hashable:
    """Text as the authors' check compares it; other values compare as they are."""
    return " ".join(value.split()).lower() if isinstance(value, str) else value


def one_step_loop_mask(states: Sequence[Hashable], actions: Sequence[Hashable]) -> list[bool]:
    """Per action: the same action as the step before, from the same observation (not a no-op)."""
    n_steps = len(actions)
    if len(states) not in (n_steps, n_steps + 1):
        raise ValueError(
            f"need one state per action (+ optionally the final state): {len(states)} states, {n_steps} actions"
        )
    seen_states = [_normalise(state) for state in states[:n_steps]]
    seen_actions = [_normalise(action) for action in actions]
    return [False] + [
        seen_actions[t] == seen_actions[t - 1]
        and seen_states[t] == seen_states[t - 1]
        and seen_actions[t] != NO_OP_ACTION
        for t in range(1, n_steps)
    ]


def windowed_auv(
    steps_to_success: Sequence[int | None],
    *,
    start: int = WINDOW_START,
    end: int = WINDOW_END,
) -> float:
    """Figures 3/5's AUV: pass@1 over turns ``start .. end``, minus its minimum, area / span.

    ``steps_to_success`` holds per task the turn it was solved at (1 = its first action) or None.
    """
    if isinstance(start, bool) or isinstance(end, bool) or not 0 <= start < end:
        raise ValueError(f"need 0 <= start < end, got start={start!r}, end={end!r}")
    if not steps_to_success:
        raise ValueError("windowed_auv needs at least one task")
    turns = np.array(
        [np.inf if turn is None else float(turn) for turn in steps_to_success], dtype=np.float64
    )
    if np.any(turns < 0) or np.any(np.isnan(turns)):
        raise ValueError("steps_to_success must be non-negative turns or None")
    window = np.arange(start, end + 1, dtype=np.float64)
    # P_0 is 0 in the authors' curve (it starts at turn 1), whatever was solved at turn 0
    curve = (turns[None, :] <= window[:, None]).mean(axis=1)
    if start == 0:
        curve[0] = 0.0
    curve = curve - curve.min()
    area = float(((curve[:-1] + curve[1:]) / 2.0).sum())
    return max(area, 0.0) / (end - start)
