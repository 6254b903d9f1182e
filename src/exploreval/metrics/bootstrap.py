"""The one bootstrap of exploreval: confidence intervals of a mean, clustered and paired.

Every interval in the toolkit comes from here (report tables, TIDE's AUV and Memory Index, the
pass@k family, the grid paper's error tables, ``exploreval compare``), so a reader compares like
with like. The choices, made once:

* **Percentile bootstrap of the mean**, ``resamples`` = 2000 draws, seeded (``seed`` = 0): the
  same data always gives the same interval. For a 0/1 column it is the bootstrap of a proportion.
* **Clusters.** ``groups`` names each value's cluster (its task: several ``--repeats`` of one task
  are not independent draws). Clusters are resampled whole, and each resample's value is the mean
  over the values it holds, so the estimate stays the plain mean over values. Without ``groups``
  every value is its own cluster. ``n`` counts clusters.
* **Missing values.** Non-finite values (NaN: "does not apply to this episode") are left out, with
  their group labels. With none left, the estimate and both bounds are NaN.
* **One cluster has no interval.** The bootstrap of a single cluster is a point, which would read
  as certainty: ``low`` and ``high`` are NaN (the estimate is still given). Two or more identical
  values give a zero-width interval, as they should.
* **Large samples.** Above ``NORMAL_APPROX_CLUSTERS`` clusters the interval is the normal
  approximation ``mean ± z·se`` (the delta-method standard error of the ratio of cluster sums to
  cluster sizes, which is the plain ``s/√n`` without groups): at that size it agrees with the
  bootstrap to about the third decimal, and resampling would dominate the time of a report.
* **Resampling by counts.** When the clusters take at most n/8 distinct values (0/1 columns,
  step counts), a resample is drawn as multinomial counts of the distinct values: the same
  bootstrap distribution, drawn in a fraction of the time (``_resampled_means``).
* **Paired differences** (``paired_ci``): the interval of ``mean(a - b)`` over pairs resampled
  together (e.g. the Memory Index, or run B minus run A on shared episodes).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np
import numpy.typing as npt

FloatArray = np.ndarray

#: Bootstrap draws per interval.
RESAMPLES = 2000
#: Confidence level of every interval.
LEVEL = 0.95
#: Seed of the resampling (intervals are reproducible).
SEED = 0
#: Above this many clusters: normal approximation instead of resampling.
NORMAL_APPROX_CLUSTERS = 5000
#: Resampled indices held in memory at once (bounds memory for large samples).
_CHUNK_CELLS = 2_000_000
#: Resample by counts of distinct values when there are at most n / this many of them.
_DISTINCT_RATIO = 8


@dataclass(frozen=True)
class BootstrapCI:
    """A point estimate with its interval; ``n`` is the number of clusters (tasks) used."""

    estimate: float
    low: float
    high: float
    n: int
    level: float
    method: str = "bootstrap"

    def as_tuple(self) -> tuple[float, float, float]:
        return (self.estimate, self.low, self.high)


_NAN = float("nan")


def _resampled_means(
    sums: FloatArray, sizes: FloatArray, resamples: int, rng: np.random.Generator
) -> FloatArray:
    """Each resample's mean: ``n`` clusters drawn with replacement, sum of values over sum of sizes.

    When the clusters take few distinct (sum, size) values (a 0/1 success column, step counts),
    a resample is fully described by how many times it drew each distinct value, which is
    multinomial(n, frequencies): the same distribution as drawing indices, at a cost of
    ``resamples x distinct`` instead of ``resamples x n`` (0/1 columns of 1,250 values: 0.5 ms
    instead of 14 ms). Only the random draws differ from index resampling, not the distribution.
    """
    n = sums.size
    pairs, first, counts = np.unique(
        np.stack([sums, sizes], axis=1), axis=0, return_index=True, return_counts=True
    )
    # categories in the order the values first appear, not sorted by value: sorted, the draws
    # of ``d`` and of ``-d`` fell on different values, and a paired comparison's interval of
    # B - A was not the mirror of A - B's (found by hypothesis: [-0.458, 0] against [0, 0.5])
    order = np.argsort(first, kind="stable")
    pairs, counts = pairs[order], counts[order]
    if len(pairs) * _DISTINCT_RATIO <= n:
        drawn = rng.multinomial(n, counts / n, size=resamples).astype(np.float64)
        ratio: npt.NDArray[np.float64] = (drawn @ pairs[:, 0]) / (drawn @ pairs[:, 1])
        return ratio
    means = np.empty(resamples, dtype=np.float64)
    chunk = max(1, _CHUNK_CELLS // n)
    for start in range(0, resamples, chunk):
        stop = min(resamples, start + chunk)
        index = rng.integers(0, n, size=(stop - start, n))
        means[start:stop] = sums[index].sum(axis=1) / sizes[index].sum(axis=1)
    return means


def mean_ci(
    values: Sequence[float] | FloatArray,
    *,
    groups: Sequence[Hashable] | None = None,
    resamples: int = RESAMPLES,
    level: float = LEVEL,
    seed: int = SEED,
) -> BootstrapCI:
    """The mean of ``values`` with its interval (see the module docstring for every choice)."""
    data = np.asarray(values, dtype=np.float64)
    if data.ndim != 1:
        raise ValueError(f"bootstrap needs a 1-D sequence of values, got shape {data.shape}")
    if not 0.0 < level < 1.0:
        raise ValueError(f"confidence level must be in (0, 1), got {level}")
    if resamples < 1:
        raise ValueError(f"resamples must be >= 1, got {resamples}")
    if groups is not None and len(groups) != data.size:
        raise ValueError(f"need one group per score: {len(groups)} groups, {data.size} scores")
    finite = np.isfinite(data)
    data = data[finite]
    if data.size == 0:
        return BootstrapCI(_NAN, _NAN, _NAN, 0, level, "none")
    if groups is None:
        sums, sizes = data, np.ones_like(data)
    else:
        labels = [g for g, keep in zip(groups, finite, strict=True) if keep]
        codes = _codes(labels)
        sums = np.bincount(codes, weights=data).astype(np.float64)
        sizes = np.bincount(codes).astype(np.float64)
    lowest, highest = float(data.min()), float(data.max())
    # a float mean can land a hair outside the data (three equal values summed and divided):
    # the mean of values never does
    estimate = min(max(float(data.mean()), lowest), highest)
    n = int(sums.size)
    if n == 1:
        return BootstrapCI(estimate, _NAN, _NAN, 1, level, "none")
    alpha = (1.0 - level) / 2.0
    if n > NORMAL_APPROX_CLUSTERS:
        residuals = sums - estimate * sizes
        se = float(np.sqrt(n / (n - 1) * np.sum(residuals**2)) / sizes.sum())
        half = NormalDist().inv_cdf(1.0 - alpha) * se
        return BootstrapCI(estimate, estimate - half, estimate + half, n, level, "normal")
    rng = np.random.default_rng(seed)
    means = _resampled_means(sums, sizes, resamples, rng)
    low, high = np.quantile(means, [alpha, 1.0 - alpha])
    # floating-point sums can land a hair outside the data range; an interval of a mean cannot
    # (both ends clipped into it, so equal values give a zero-width interval at that value)
    low = min(max(float(low), lowest), highest)
    high = min(max(float(high), lowest), highest)
    return BootstrapCI(estimate, low, high, n, level)


def paired_ci(
    a: Sequence[float] | FloatArray,
    b: Sequence[float] | FloatArray,
    *,
    groups: Sequence[Hashable] | None = None,
    resamples: int = RESAMPLES,
    level: float = LEVEL,
    seed: int = SEED,
) -> BootstrapCI:
    """``mean(a - b)`` over pairs (``a[i]`` and ``b[i]`` measured on the same task), pairs
    resampled together; a pair with a non-finite side is left out."""
    left = np.asarray(a, dtype=np.float64)
    right = np.asarray(b, dtype=np.float64)
    if left.shape != right.shape:
        raise ValueError(f"paired scores need equal lengths, got {left.size} and {right.size}")
    return mean_ci(left - right, groups=groups, resamples=resamples, level=level, seed=seed)


def _codes(labels: Sequence[Hashable]) -> np.ndarray:
    index: dict[Hashable, int] = {}
    return np.fromiter(
        (index.setdefault(label, len(index)) for label in labels), dtype=np.int64, count=len(labels)
    )


__all__ = [
    "LEVEL",
    "NORMAL_APPROX_CLUSTERS",
    "RESAMPLES",
    "SEED",
    "BootstrapCI",
    "mean_ci",
    "paired_ci",
]
