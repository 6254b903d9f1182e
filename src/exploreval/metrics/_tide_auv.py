"""Cumulative success curves and AUV (TIDE Eq. 1), vectorised with numpy.

Turns are counted from 1: a task "solved at turn s" was solved by its s-th action, so it counts in
P_t for every t >= s. P_0 is the share of tasks solved before acting (normally 0). AUV is the
trapezoidal area under [P_0 .. P_t_max] divided by t_max (Eq. 1). Because AUV is linear in the
per-task indicators, it equals the mean of per-task AUVs (Appendix A, Eq. 18); the bootstrap uses
that identity, so resampling tasks is a resampling of per-task scores.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np
import numpy.typing as npt

from exploreval.metrics.bootstrap import (
    LEVEL,
    RESAMPLES,
    SEED,
    BootstrapCI,
    mean_ci,
    paired_ci,
)

FloatArray = npt.NDArray[np.float64]


def _check_t_max(t_max: int) -> int:
    if isinstance(t_max, bool) or int(t_max) != t_max or int(t_max) < 1:
        raise ValueError(f"t_max must be a positive integer, got {t_max!r}")
    return int(t_max)


def _solved_turns(steps_to_success: Sequence[int | None]) -> npt.NDArray[np.int64]:
    """Turns as an int array, unsolved tasks as -1; rejects negative or non-integer turns."""
    out = np.full(len(steps_to_success), -1, dtype=np.int64)
    for index, value in enumerate(steps_to_success):
        if value is None:
            continue
        if isinstance(value, bool) or int(value) != value or value < 0:
            raise ValueError(
                f"steps_to_success[{index}] must be a non-negative integer turn or None, got {value!r}"
            )
        out[index] = int(value)
    return out


def success_curve(steps_to_success: Sequence[int | None], t_max: int) -> FloatArray:
    """``[P_0, ..., P_t_max]``: fraction of tasks solved within the first t turns.

    ``steps_to_success`` holds, per task, the turn at which it was solved, or ``None``.
    """
    t_max = _check_t_max(t_max)
    turns = _solved_turns(steps_to_success)
    if turns.size == 0:
        raise ValueError("success_curve needs at least one task")
    solved = turns[(turns >= 0) & (turns <= t_max)]
    counts = np.bincount(solved, minlength=t_max + 1)[: t_max + 1]
    return np.cumsum(counts).astype(np.float64) / turns.size


def auv_from_curve(curve: Sequence[float] | FloatArray) -> float:
    """Eq. 1 on a given curve ``[P_0 .. P_t_max]`` (success or progress)."""
    values = np.asarray(curve, dtype=np.float64)
    if values.ndim != 1 or values.size < 2:
        raise ValueError("a curve needs at least two points [P_0, P_1]")
    t_max = values.size - 1
    return float((values[:-1] + values[1:]).sum() / (2.0 * t_max))


def auv(steps_to_success: Sequence[int | None], t_max: int) -> float:
    """Area Under Variation (Eq. 1): trapezoidal area of the success curve over [0, t_max] / t_max."""
    return auv_from_curve(success_curve(steps_to_success, t_max))


def task_auv(steps_to_success: Sequence[int | None], t_max: int) -> FloatArray:
    """Per-task AUV Z^(i) (Appendix A, Eq. 18); their mean is the AUV.

    A task solved at turn s in [1, t_max] scores (t_max - s + 0.5) / t_max; at turn 0 it scores 1;
    unsolved or solved after t_max it scores 0.
    """
    t_max = _check_t_max(t_max)
    turns = _solved_turns(steps_to_success).astype(np.float64)
    scores = np.where(turns == 0, 1.0, (t_max - turns + 0.5) / t_max)
    return np.where((turns < 0) | (turns > t_max), 0.0, scores)


def one_task_auv(turn: int | None, t_max: int) -> float:
    """``task_auv([turn], t_max)[0]``, without numpy's per-call cost: a score asks once per
    episode and the run tables once per trajectory. Integer turns and windows make each step
    exact or one IEEE operation, so the value is numpy's to the bit."""
    t_max = _check_t_max(t_max)
    if turn is None:
        return 0.0
    if isinstance(turn, bool) or int(turn) != turn or turn < 0:
        raise ValueError(
            f"steps_to_success[0] must be a non-negative integer turn or None, got {turn!r}"
        )
    turn = int(turn)
    if turn > t_max:
        return 0.0
    return 1.0 if turn == 0 else (t_max - turn + 0.5) / t_max


def progress_curves(traces: Sequence[Sequence[float]], t_max: int) -> FloatArray:
    """Per-task progress curves, shape (tasks, t_max + 1).

    ``traces[i][t]`` is task i's progress after its (t+1)-th action (``info["progress"]``). Before the
    first action progress is 0; after the episode ends its last value is carried forward. Values are
    clipped to [0, 1]. No running maximum is taken: a progress score that falls (undone work) lowers
    the curve, as it should.
    """
    t_max = _check_t_max(t_max)
    out = np.zeros((len(traces), t_max + 1), dtype=np.float64)
    # one clip and one scatter for all traces: a run's reduce draws 10^5 curves at once
    pieces = [np.asarray(trace, dtype=np.float64)[:t_max] for trace in traces]
    lengths = np.fromiter((p.size for p in pieces), dtype=np.intp, count=len(pieces))
    if not lengths.any():
        return out
    values = np.clip(np.concatenate(pieces), 0.0, 1.0)
    rows = np.repeat(np.arange(len(pieces)), lengths)
    starts = np.cumsum(lengths) - lengths
    out[rows, np.arange(values.size) - starts[rows] + 1] = values
    played = lengths > 0
    last = values[(starts + lengths - 1)[played]]
    after = np.arange(t_max + 1)[None, :] > lengths[played][:, None]
    out[played] = np.where(after, last[:, None], out[played])
    return out


def one_task_progress_auv(trace: Sequence[float], t_max: int) -> float:
    """``task_progress_auv([trace], t_max)[0]`` without numpy's per-call cost (~0.1 ms): a score
    asks once per episode. The curve is built as ``progress_curves`` builds it, and its trapezoid
    pairs are summed in numpy's own order (``_numpy_sum``), so the value is numpy's to the bit."""
    t_max = _check_t_max(t_max)
    curve = [0.0]
    for value in trace[:t_max]:
        value = float(value)
        curve.append(0.0 if value < 0.0 else 1.0 if value > 1.0 else value)
    curve.extend([curve[-1]] * (t_max + 1 - len(curve)))
    pairs = [curve[t] + curve[t + 1] for t in range(t_max)]
    return _numpy_sum(pairs, 0, t_max) / (2.0 * t_max)


#: numpy's pairwise summation: below 8 items a plain loop; up to 128 eight running sums
#: combined as a tree, then the remainder; above, two halves split at a multiple of 8.
_BLOCK = 128


def _numpy_sum(values: list[float], start: int, n: int) -> float:
    """The sum of ``values[start:start + n]`` in the order numpy's float64 add-reduce takes it
    (pairwise summation), so a pure-Python shortcut rounds exactly as the array code does
    (a property test holds this against numpy)."""
    if n < 8:
        total = 0.0
        for value in values[start : start + n]:
            total += value
        return total
    if n <= _BLOCK:
        r0, r1, r2, r3, r4, r5, r6, r7 = values[start : start + 8]
        end = start + n - n % 8
        for i in range(start + 8, end, 8):
            r0 += values[i]
            r1 += values[i + 1]
            r2 += values[i + 2]
            r3 += values[i + 3]
            r4 += values[i + 4]
            r5 += values[i + 5]
            r6 += values[i + 6]
            r7 += values[i + 7]
        total = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
        for value in values[end : start + n]:
            total += value
        return total
    half = n // 2
    half -= half % 8
    return _numpy_sum(values, start, half) + _numpy_sum(values, start + half, n - half)


def progress_curve(traces: Sequence[Sequence[float]], t_max: int) -> FloatArray:
    """Mean progress curve [P_0 .. P_t_max] over tasks (AUV on a progress score, Appendix B.2)."""
    if not traces:
        raise ValueError("progress_curve needs at least one task")
    mean: FloatArray = progress_curves(traces, t_max).mean(axis=0)
    return mean


def progress_auv(traces: Sequence[Sequence[float]], t_max: int) -> float:
    """AUV of the mean progress curve."""
    return auv_from_curve(progress_curve(traces, t_max))


def task_progress_auv(traces: Sequence[Sequence[float]], t_max: int) -> FloatArray:
    """Per-task AUV of each progress curve; their mean is ``progress_auv``."""
    curves = progress_curves(traces, t_max)
    auv: FloatArray = (curves[:, :-1] + curves[:, 1:]).sum(axis=1) / (2.0 * t_max)
    return auv


def bootstrap_mean_ci(
    scores: Sequence[float] | FloatArray,
    *,
    groups: Sequence[Hashable] | None = None,
    n_boot: int = RESAMPLES,
    level: float = LEVEL,
    seed: int = SEED,
) -> BootstrapCI:
    """Mean of per-episode scores with a bootstrap CI over tasks (``groups``: each score's task,
    resampled whole). The same as :func:`exploreval.metrics.bootstrap.mean_ci`, whose docstring
    states every choice (one task: no interval; NaN scores left out; normal approximation above
    5000 tasks)."""
    return mean_ci(scores, groups=groups, resamples=n_boot, level=level, seed=seed)


def auv_ci(
    steps_to_success: Sequence[int | None],
    t_max: int,
    *,
    groups: Sequence[Hashable] | None = None,
    n_boot: int = RESAMPLES,
    level: float = LEVEL,
    seed: int = SEED,
) -> BootstrapCI:
    """AUV with a percentile bootstrap CI over tasks (``groups``: the task of each episode)."""
    return bootstrap_mean_ci(
        task_auv(steps_to_success, t_max), groups=groups, n_boot=n_boot, level=level, seed=seed
    )


def paired_difference_ci(
    with_scores: Sequence[float] | FloatArray,
    without_scores: Sequence[float] | FloatArray,
    *,
    n_boot: int = RESAMPLES,
    level: float = LEVEL,
    seed: int = SEED,
) -> BootstrapCI:
    """CI of mean(with) - mean(without) over the same tasks (paired bootstrap), e.g. the Memory
    Index: :func:`exploreval.metrics.bootstrap.paired_ci`."""
    return paired_ci(with_scores, without_scores, resamples=n_boot, level=level, seed=seed)
