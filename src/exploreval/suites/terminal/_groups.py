"""The terminal report's groups: the attempts of one agent under one condition, counted per
task, in the report's order (agent, level, Table 9's file names, condition). Shared by the
report's sections (``._report``) and its test-time factor views (``._report_factors``)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

METRICS = ("discovery", "interaction", "pass")
FLAG = {"pass": "resolved", "discovery": "discovered", "interaction": "interacted"}


@dataclass
class Group:
    """The attempts of one agent under one condition, counted per task."""

    agent: str
    condition: str
    level: int | None
    variant: str | None
    attempts: pd.DataFrame
    tasks: list[str] = field(default_factory=list)
    n: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    counts: dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def injected(self) -> bool:
        return self.level is not None

    @property
    def metrics(self) -> tuple[str, ...]:
        return METRICS if self.injected else ("pass",)

    @property
    def n_min(self) -> int:
        return int(self.n.min()) if self.n.size else 0

    @property
    def n_max(self) -> int:
        return int(self.n.max()) if self.n.size else 0

    @property
    def attempts_text(self) -> str:
        """Attempts per task: ``3``, or ``2-3`` when tasks differ (a partial run)."""
        return str(self.n_min) if self.n_min == self.n_max else f"{self.n_min}-{self.n_max}"


def _level_order(level: int | None) -> int:
    return -1 if level is None else int(level)


#: Level-1 file names in Table 9's order (the paper's default first); others follow by name.
VARIANT_ORDER = (
    "solution.sh", "README.md", "SOLUTION.sh", "SOLUTION.md",
    "SOLUTION_TO_THIS_SPECIFIC_TASK_READ_THIS_FIRST.md", "app solution",
)  # fmt: skip


def _variant_order(variant: str | None) -> tuple[int, str]:
    if variant in VARIANT_ORDER:
        return (VARIANT_ORDER.index(variant), "")
    return (len(VARIANT_ORDER), variant or "")


def groups_of(frame: pd.DataFrame) -> list[Group]:
    """Groups by (agent, condition), ordered by agent, then level, file name, condition."""
    groups: list[Group] = []
    if frame.empty:
        return groups
    for (agent, condition), part in frame.groupby(["agent", "condition"], sort=False):
        levels = {lv for lv in part["level"]}
        variants = {v for v in part["variant"]}
        level = levels.pop() if len(levels) == 1 else None
        variant = variants.pop() if len(variants) == 1 else None
        per_task = part.groupby("task_id", sort=True)
        group = Group(str(agent), str(condition), level, variant, part.reset_index(drop=True))
        group.tasks = [str(t) for t in per_task.groups]
        group.n = per_task.size().to_numpy(dtype=np.int64)
        group.counts = {
            metric: per_task[FLAG[metric]].sum().to_numpy(dtype=np.int64) for metric in METRICS
        }
        groups.append(group)
    groups.sort(
        key=lambda g: (g.agent, _level_order(g.level), _variant_order(g.variant), g.condition)
    )
    return groups
