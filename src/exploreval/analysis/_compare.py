"""Paired comparison of two runs on the episodes they share.

Two episodes pair when they have the same spec: env id, preset, condition (the env options, see
``exploreval.metrics.condition_label``), seed and repeat (the same task, the same env randomness,
the same env behaviour). Pairs are formed per agent pair (``agent_pairs``): when each run has exactly
one agent, those two are compared whatever their names (two models, the usual case); otherwise an
agent is compared with the agent of the same name in the other run, and agents without a namesake
are named in a warning, never compared with every agent of the other run.
``--agent-a/--agent-b`` pick the pair explicitly. The HTML report calls the same function on the
runs' own agent names (before it relabels clashing names for its tables). For every metric both
runs have:

* ``delta`` = mean over pairs of (B − A);
* a 95% paired percentile-bootstrap CI of that mean (the pairs are resampled, not the runs
  separately, so the shared task difficulty cancels);
* a two-sided paired permutation test (random sign flips of the differences;
  ``p = (1 + #{|mean flipped| >= |mean observed|}) / (1 + flips)``, exact enumeration when
  there are at most ``EXACT_MAX_PAIRS`` non-zero differences), so identical runs give p = 1;
* for ``success`` additionally the exact sign test (McNemar) on the discordant pairs, and the list
  of flipped episodes (solved by one run and not the other).

Everything here is a pure function of two results tables (``results.parquet`` rows), so the CLI,
the HTML report and the tests share it. Fixed seeds make the numbers reproducible, and swapping A
and B negates every delta and CI bound and leaves every p-value unchanged.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from pydantic import BaseModel, Field

from exploreval.analysis._stats import BOOTSTRAP_RESAMPLES, CONFIDENCE
from exploreval.metrics.bootstrap import mean_ci
from exploreval.report import ReportSection, episode_link

SCHEMA_VERSION = 1
PAIR_KEYS = ["env_id", "preset", "condition", "seed", "repeat"]
#: Columns naming what an episode was played from by content (an instance file's SHA-256):
#: where both runs have one, episodes pair only when it is the same, whatever the path said.
CONTENT_KEYS = ("instance_sha256",)


def pair_keys(a: pd.DataFrame, b: pd.DataFrame) -> list[str]:
    """The spec columns two runs' episodes pair on: the spec, and content both runs name."""
    return PAIR_KEYS + [k for k in CONTENT_KEYS if k in a and k in b]


def _keyed(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Content keys as text, so that two episodes with none pair and a hash never meets NaN."""
    content = [k for k in keys if k in CONTENT_KEYS]
    return frame.assign(**{k: frame[k].astype(str) for k in content}) if content else frame


PERMUTATIONS = 10_000
EXACT_MAX_PAIRS = 12
SEED = 0
#: Not compared: identity, and per-episode bookkeeping that is not an outcome.
SKIP_METRICS = frozenset(
    {"seed", "repeat", "tide_t_max", "max_steps", "budget", "tasks", "nodes_total"}
)


class MetricDelta(BaseModel):
    metric: str
    n: int
    mean_a: float
    mean_b: float
    delta: float = Field(description="mean over pairs of (B - A)")
    ci_low: float
    ci_high: float
    p_permutation: float


class FlippedEpisode(BaseModel):
    env_id: str
    preset: str
    condition: str = "-"
    seed: int
    repeat: int
    episode_a: str
    episode_b: str
    solved_by: str = Field(description="'A' or 'B'")


class AgentComparison(BaseModel):
    agent_a: str
    agent_b: str
    pairs: int
    metrics: list[MetricDelta] = Field(default_factory=list)
    success_sign_test_p: float | None = None
    flipped: list[FlippedEpisode] = Field(default_factory=list)
    #: Episodes of one side that share a spec with another episode of the same agent (only the
    #: last one is paired; a warning names the count).
    duplicates: int = 0


class Comparison(BaseModel):
    """What ``exploreval compare --json`` prints."""

    schema_version: int = SCHEMA_VERSION
    run_a: str
    run_b: str
    name_a: str
    name_b: str
    episodes_a: int
    episodes_b: int
    comparisons: list[AgentComparison] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    #: metric -> the definition each run's numbers use (e.g. ``tide_loop_ratio``: ``published``)
    definitions: dict[str, str] = Field(default_factory=dict)


#: Metrics whose rows say which definition made them: metric -> the row column naming it.
DEFINITION_COLUMNS = {"tide_loop_ratio": "tide_loop_definition"}


def metric_definitions(table: pd.DataFrame) -> dict[str, str]:
    """Each labelled metric of a results table -> the definition(s) its rows were made by."""
    out: dict[str, str] = {}
    for metric, column in DEFINITION_COLUMNS.items():
        if metric in table and column in table:
            used = sorted({str(v) for v in table[column].dropna()})
            if used:
                out[metric] = ", ".join(used)
    return out


def _definitions(
    a: pd.DataFrame, b: pd.DataFrame, name_a: str, name_b: str
) -> tuple[dict[str, str], list[str]]:
    """Each labelled metric's definition in both runs, and a warning where they differ (a run
    scored before the column existed is named as such)."""
    labels: dict[str, str] = {}
    warnings: list[str] = []
    for metric, column in DEFINITION_COLUMNS.items():
        if metric not in a and metric not in b:
            continue
        used = [
            ", ".join(sorted({str(v) for v in f[column].dropna()})) if column in f else "unlabelled"
            for f in (a, b)
        ]
        labels[metric] = (
            used[0] if used[0] == used[1] else f"{name_a}: {used[0]}; {name_b}: {used[1]}"
        )
        if used[0] != used[1]:
            warnings.append(
                f"{metric} is by different definitions ({labels[metric]}): its delta compares "
                "two readings, not two agents; re-score both runs with the same exploreval"
            )
    return labels, warnings


def paired_bootstrap_ci(
    diffs: np.ndarray, resamples: int = BOOTSTRAP_RESAMPLES, seed: int = SEED
) -> tuple[float, float]:
    """95% percentile-bootstrap CI of the mean paired difference (NaN when under 2 pairs):
    :func:`exploreval.metrics.bootstrap.mean_ci` over the differences."""
    ci = mean_ci(np.asarray(diffs, dtype=float), resamples=resamples, level=CONFIDENCE, seed=seed)
    return (ci.low, ci.high)


def permutation_p(diffs: np.ndarray, permutations: int = PERMUTATIONS, seed: int = SEED) -> float:
    """Two-sided paired permutation (sign-flip) test of mean difference = 0."""
    d = np.asarray(diffs, dtype=float)
    d = d[d != 0]  # zero differences are unchanged by a flip
    if d.size == 0:
        return 1.0
    observed = abs(d.mean()) * d.size
    tolerance = 1e-9 * max(1.0, float(np.abs(d).sum()))
    if d.size <= EXACT_MAX_PAIRS:
        signs = np.array(list(itertools.product((1.0, -1.0), repeat=d.size)))
        totals = np.abs(signs @ d)
        return float(np.mean(totals >= observed - tolerance))
    rng = np.random.default_rng(seed)
    hits = 0
    chunk = max(1, 2_000_000 // d.size)
    for start in range(0, permutations, chunk):
        size = min(chunk, permutations - start)
        signs = rng.choice((1.0, -1.0), size=(size, d.size))
        hits += int((np.abs(signs @ d) >= observed - tolerance).sum())
    return (1 + hits) / (1 + permutations)


def sign_test_p(wins_b: int, wins_a: int) -> float:
    """Exact two-sided sign test (McNemar) on the discordant pairs; 1 when there are none."""
    n = wins_a + wins_b
    if n == 0:
        return 1.0
    k = min(wins_a, wins_b)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2**n
    return float(min(1.0, 2 * tail))


def _ok(table: pd.DataFrame) -> pd.DataFrame:
    """Scored rows only, with ``preset`` and ``condition`` filled (tables written before the
    ``condition`` column existed get ``-``)."""
    if table.empty:
        return table
    frame = table if "status" not in table else table[table["status"] == "ok"]
    frame = frame.assign(preset=frame["preset"].fillna("-"))
    if "condition" not in frame:
        frame = frame.assign(condition="-")
    return frame.assign(condition=frame["condition"].fillna("-").astype(str).replace("", "-"))


def agent_pairs(
    agents_a: Sequence[str],
    agents_b: Sequence[str],
    agent_a: str | None = None,
    agent_b: str | None = None,
) -> tuple[list[tuple[str, str]], list[str]]:
    """Which agent of A is compared with which agent of B, and the agents left without a partner.

    * ``agent_a`` and ``agent_b`` given: that pair. One of them given: it is paired with its
      namesake on the other side, else with the other side's only agent, else with each agent of
      the other side (asked for explicitly).
    * Neither: one agent on each side -> those two; one agent on one side -> it with each agent
      of the other; otherwise same name with same name.
    """
    a, b = list(dict.fromkeys(agents_a)), list(dict.fromkeys(agents_b))
    if agent_a and agent_b:
        return [(agent_a, agent_b)], []
    if agent_a or agent_b:
        chosen, others = (agent_a, b) if agent_a else (agent_b, a)
        assert chosen is not None
        partners = [chosen] if chosen in others else others
        pairs = [(chosen, o) if agent_a else (o, chosen) for o in partners]
        return pairs, []
    if len(a) == 1 and len(b) == 1:
        return [(a[0], b[0])], []
    if len(a) == 1 or len(b) == 1:  # one agent against each agent of the other run
        return ([(a[0], y) for y in b] if len(a) == 1 else [(x, b[0]) for x in a]), []
    shared = [x for x in a if x in set(b)]
    alone = [f"A:{x}" for x in a if x not in set(b)] + [f"B:{y}" for y in b if y not in set(a)]
    return [(x, x) for x in shared], alone


#: Metrics that only mean something for agents that call a model (hidden when both sides are 0).
_USAGE_METRICS = frozenset(
    {"prompt_tokens", "completion_tokens", "reasoning_tokens", "total_tokens", "calls",
     "cached_calls", "cost_usd", "unpriced_calls", "latency_s", "retries", "tokens"}
)  # fmt: skip


def _headline_first(columns: list[str], families: set[str]) -> list[str]:
    """``columns`` with success and the families' own headline metrics first (EUS,
    discovery@k, SuffFail...: what a narrow terminal must not cut), then the common headline
    ones, then the rest in their order."""
    from exploreval.metrics import COMMON_HEADLINE, headline_metrics

    own = [m for f in sorted(families) for m in headline_metrics(f) if m not in COMMON_HEADLINE]
    order = {m: i for i, m in enumerate(dict.fromkeys(["success", *own, *COMMON_HEADLINE]))}
    return sorted(columns, key=lambda c: order.get(c, len(order)))  # stable: the rest keep order


def _metric_columns(a: pd.DataFrame, b: pd.DataFrame) -> list[str]:
    from exploreval.analysis._tables import IDENTITY_COLUMNS

    out = []
    for column in a.columns:
        if column in IDENTITY_COLUMNS or column in SKIP_METRICS or column not in b.columns:
            continue
        if all(
            pd.api.types.is_numeric_dtype(f[column]) or pd.api.types.is_bool_dtype(f[column])
            for f in (a, b)
        ):
            out.append(column)
    families = {str(f) for frame in (a, b) if "family" in frame for f in frame["family"].unique()}
    return _headline_first(out, families)


def compare_agents(a: pd.DataFrame, b: pd.DataFrame, agent_a: str, agent_b: str) -> AgentComparison:
    """Paired comparison of two agents' rows (already restricted to one agent each)."""
    a, b = _ok(a), _ok(b)
    keys = pair_keys(a, b)
    a, b = _keyed(a, keys), _keyed(b, keys)
    dedup_a = a.drop_duplicates(keys, keep="last")
    dedup_b = b.drop_duplicates(keys, keep="last")
    pairs = dedup_a.merge(dedup_b, on=keys, suffixes=("_a", "_b"))
    result = AgentComparison(
        agent_a=agent_a,
        agent_b=agent_b,
        pairs=len(pairs),
        duplicates=(len(a) - len(dedup_a)) + (len(b) - len(dedup_b)),
    )
    if pairs.empty:
        return result
    pairs = pairs.sort_values(keys, kind="stable").reset_index(drop=True)
    for metric in _metric_columns(a, b):
        va = pd.to_numeric(pairs[f"{metric}_a"], errors="coerce").to_numpy(dtype=float)
        vb = pd.to_numeric(pairs[f"{metric}_b"], errors="coerce").to_numpy(dtype=float)
        keep = np.isfinite(va) & np.isfinite(vb)
        if not keep.any():
            continue
        if metric in _USAGE_METRICS and not (va[keep].any() or vb[keep].any()):
            continue  # tokens and cost of agents that call no model: does not apply
        diffs = vb[keep] - va[keep]
        low, high = paired_bootstrap_ci(diffs)
        result.metrics.append(
            MetricDelta(
                metric=metric,
                n=int(keep.sum()),
                mean_a=float(va[keep].mean()),
                mean_b=float(vb[keep].mean()),
                delta=float(diffs.mean()),
                ci_low=low,
                ci_high=high,
                p_permutation=permutation_p(diffs),
            )
        )
    if "success_a" in pairs:
        sa = pairs["success_a"].astype(bool).to_numpy()
        sb = pairs["success_b"].astype(bool).to_numpy()
        result.success_sign_test_p = sign_test_p(int((sb & ~sa).sum()), int((sa & ~sb).sum()))
        for row in pairs[sa != sb].itertuples(index=False):
            result.flipped.append(
                FlippedEpisode(
                    env_id=str(row.env_id),
                    preset=str(row.preset),
                    condition=str(row.condition),
                    seed=int(row.seed),
                    repeat=int(row.repeat),
                    episode_a=str(row.episode_id_a),
                    episode_b=str(row.episode_id_b),
                    solved_by="A" if bool(row.success_a) else "B",
                )
            )
    return result


def compare_tables(
    table_a: pd.DataFrame,
    table_b: pd.DataFrame,
    *,
    name_a: str = "A",
    name_b: str = "B",
    agent_a: str | None = None,
    agent_b: str | None = None,
) -> Comparison:
    """Compare two results tables on their shared episode specs, per agent pair."""
    a, b = _ok(table_a), _ok(table_b)

    def run_of(frame: pd.DataFrame) -> str:
        if frame.empty or "run_id" not in frame:
            return ""
        return ",".join(sorted({str(v) for v in frame["run_id"]}))

    out = Comparison(
        run_a=run_of(a),
        run_b=run_of(b),
        name_a=name_a,
        name_b=name_b,
        episodes_a=len(a),
        episodes_b=len(b),
    )
    out.definitions, differing = _definitions(a, b, name_a, name_b)
    out.warnings += differing
    if a.empty or b.empty:
        out.warnings.append(
            f"{name_a if a.empty else name_b} has no scored episodes: nothing to compare"
        )
        return out
    agents_a = [agent_a] if agent_a else sorted(a["agent"].astype(str).unique())
    agents_b = [agent_b] if agent_b else sorted(b["agent"].astype(str).unique())
    for name, agents, frame in ((name_a, agents_a, a), (name_b, agents_b, b)):
        missing = [x for x in agents if x not in set(frame["agent"].astype(str))]
        if missing:
            raise ValueError(f"agent {missing[0]!r} is not in run {name}")
    pairs, alone = agent_pairs(agents_a, agents_b, agent_a, agent_b)
    if alone:
        out.warnings.append(
            f"{name_a} has {len(agents_a)} agents and {name_b} {len(agents_b)}; agents are paired "
            "by name, and these have no namesake in the other run (pick a pair with "
            "--agent-a/--agent-b): " + ", ".join(alone)
        )
    for x, y in pairs:
        part_a = a[a["agent"].astype(str) == x]
        part_b = b[b["agent"].astype(str) == y]
        comparison = compare_agents(part_a, part_b, x, y)
        if comparison.duplicates:
            out.warnings.append(
                f"{x} vs {y}: {comparison.duplicates} episode(s) share env, preset, condition, "
                "seed and repeat with another episode of the same agent; only the last is paired"
            )
        if comparison.pairs:
            out.comparisons.append(comparison)
    keys = pair_keys(a, b)
    specs_a = set(map(tuple, a[keys].astype(str).to_numpy().tolist()))
    specs_b = set(map(tuple, b[keys].astype(str).to_numpy().tolist()))
    shared = specs_a & specs_b
    if not shared:
        out.warnings.append(
            f"the runs share no episode spec (env, preset, condition, seed, repeat): {name_a} has "
            f"{len(specs_a)}, {name_b} has {len(specs_b)}; a paired comparison is impossible"
        )
    else:
        only_a, only_b = len(specs_a - shared), len(specs_b - shared)
        if only_a or only_b:
            out.warnings.append(
                f"partial overlap: {len(shared)} shared specs; {only_a} only in {name_a}, "
                f"{only_b} only in {name_b} (left out of the paired statistics)"
            )
    return out


def comparison_frame(comparison: AgentComparison) -> pd.DataFrame:
    rows: list[dict[str, Any]] = [m.model_dump() for m in comparison.metrics]
    return pd.DataFrame(rows)


def comparison_section(comparison: Comparison) -> ReportSection:
    """The comparison as a report section (markdown with viewer links for flipped episodes)."""
    from exploreval.analysis._tables import markdown_table

    lines = [
        f"Paired comparison A = **{comparison.name_a}**, B = **{comparison.name_b}** on shared "
        "episode specs (env, preset, condition, seed, repeat). delta = mean of (B − A) over pairs with its "
        "95% paired bootstrap CI; p = two-sided paired permutation test; the success sign test "
        "is exact on the discordant pairs.",
        "",
    ]
    lines += [f"- **warning**: {w}" for w in comparison.warnings]
    for item in comparison.comparisons:
        lines += [
            "",
            f"### {item.agent_a} (A) vs {item.agent_b} (B): {item.pairs} pairs",
            "",
        ]
        if item.success_sign_test_p is not None:
            solved_b = sum(1 for f in item.flipped if f.solved_by == "B")
            lines += [
                f"Flipped episodes: {len(item.flipped)} ({solved_b} solved only by B, "
                f"{len(item.flipped) - solved_b} only by A); sign test p = "
                f"{item.success_sign_test_p:.4g}.",
                "",
            ]
        lines.append(markdown_table(comparison_frame(item), floatfmt=".4g"))
        if item.flipped:
            flips = pd.DataFrame(
                [
                    {
                        "env_id": f.env_id,
                        "preset": f.preset,
                        "condition": f.condition,
                        "seed": f.seed,
                        "repeat": f.repeat,
                        "solved by": f.solved_by,
                        "episode A": episode_link(comparison.run_a, f.episode_a),
                        "episode B": episode_link(comparison.run_b, f.episode_b),
                    }
                    for f in item.flipped[:50]
                ]
            )
            lines += ["", "Flipped episodes:", "", markdown_table(flips)]
    if not comparison.comparisons and not comparison.warnings:
        lines.append("No agent pairs share an episode spec.")
    return ReportSection(
        title=f"Paired comparison: {comparison.name_a} vs {comparison.name_b}",
        markdown="\n".join(lines),
    )
