"""The AUV evaluation window t_max per environment (TIDE Appendix C.4) and how to override it.

Resolution order for a group of records of one environment:

1. an explicit ``t_max`` argument (API) or ``--t-max NAME=N`` (CLI);
2. the ``EXPLOREVAL_TIDE_T_MAX="FrozenLake=40,GridDAG=90"`` environment variable (read at
   scoring time, so ``exploreval score`` honours it);
3. ``register_t_max(name, n)``: suites register their own (the puzzle suite registers the
   paper's BlocksWorld 20, FrozenLake 30, Sudoku 20, labelled ``paper``);
4. for envs no suite here provides, imported from other tools' logs, the paper's table:
   AlfWorld 60, WebShop 15, GUI suites (OSWorld, AndroidWorld, WindowsAgentArena) 50;
5. suites without a t_max: the episode's own step budget (the suite's registered budget hook,
   e.g. GridDAG: B = 3 x traversable cells from the stored task, Bandit: the horizon T; else the
   step cap the runner stored in the record), else the longest episode of the group.

Names match the env id's name without namespace and version (``exploreval/FrozenLake-v0`` ->
``FrozenLake``), case-insensitively; a full env id also works as a key.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence

from exploreval.core import EpisodeRecord
from exploreval.metrics._hooks import (
    T_MAX,
    T_MAX_SOURCES,
    env_name,
    register_t_max,
    registered_budget,
)

__all__ = [
    "ENV_VAR",
    "PAPER_T_MAX",
    "env_name",
    "parse_t_max_overrides",
    "record_budget",
    "register_t_max",
    "resolve_t_max",
]

#: TIDE Appendix C.4 (and the GUI value stated there) for envs that are not suites here: their
#: episodes come from imported logs. The puzzle suite registers its own three values.
PAPER_T_MAX: dict[str, int] = {
    "AlfWorld": 60,
    "WebShop": 15,
    "OSWorld": 50,
    "AndroidWorld": 50,
    "WindowsAgentArena": 50,
}

ENV_VAR = "EXPLOREVAL_TIDE_T_MAX"


def parse_t_max_overrides(text: str | Sequence[str], source: str = ENV_VAR) -> dict[str, int]:
    """``"FrozenLake=40,GridDAG=90"`` (or a list of ``NAME=N``) -> ``{"frozenlake": 40, ...}``."""
    items = text.split(",") if isinstance(text, str) else list(text)
    out: dict[str, int] = {}
    for item in items:
        item = item.strip()
        if not item:
            continue
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise ValueError(f"{source}: {item!r} is not NAME=N (e.g. FrozenLake=40)")
        try:
            number = int(value)
        except ValueError:
            raise ValueError(f"{source}: t_max in {item!r} is not an integer") from None
        if number < 1:
            raise ValueError(f"{source}: t_max in {item!r} must be >= 1")
        out[name.strip().lower()] = number
    return out


def _lookup(table: Mapping[str, int], env_id: str) -> int | None:
    for key in (env_id.lower(), env_name(env_id).lower()):
        if key in table:
            return table[key]
    return None


def record_budget(record: EpisodeRecord) -> int | None:
    """The episode's own step budget: the suite's budget hook, else the stored step cap."""
    hook = registered_budget(record)
    if hook is not None:
        budget = hook(record)
        if budget is not None:
            return budget
    return record.max_steps


def resolve_t_max(
    env_id: str,
    records: Sequence[EpisodeRecord] = (),
    override: int | Mapping[str, int] | None = None,
) -> tuple[int, str]:
    """t_max for the records of one environment, and where it came from (for the report)."""
    return resolve_t_max_from(
        env_id,
        (record_budget(r) for r in records),
        (len(r.steps) for r in records),
        override,
    )


def _fixed_t_max(env_id: str, env_text: str) -> tuple[int, str] | None:
    """The window every episode of ``env_id`` shares, if one is set: ``EXPLOREVAL_TIDE_T_MAX``
    (its text ``env_text``), a registration, the paper's table; None otherwise."""
    if env_text:
        found = _lookup(parse_t_max_overrides(env_text), env_id)
        if found is not None:
            return found, ENV_VAR
    registered = {n: T_MAX.get(n) for n in T_MAX.names()}
    for key in (env_id.lower(), env_name(env_id).lower()):
        if key in registered:
            return registered[key], T_MAX_SOURCES.get(key, "registered")
    found = _lookup({k.lower(): v for k, v in PAPER_T_MAX.items()}, env_id)
    if found is not None:
        return found, "paper"
    return None


def resolve_t_max_from(
    env_id: str,
    budgets: Iterable[int | None],
    lengths: Iterable[int],
    override: int | Mapping[str, int] | None = None,
) -> tuple[int, str]:
    """``resolve_t_max`` from the episodes' own budgets and lengths (what a run metric keeps of
    each record, so the windows are resolved without holding the records)."""
    if isinstance(override, int) and not isinstance(override, bool):
        if override < 1:
            raise ValueError(f"t_max must be >= 1, got {override}")
        return override, "override"
    if isinstance(override, Mapping):
        found = _lookup({k.lower(): v for k, v in override.items()}, env_id)
        if found is not None:
            return found, "override"
    env_text = os.environ.get(ENV_VAR, "")
    # asked once per episode scored: an env's fixed window is kept until the registry changes
    fixed = T_MAX.derived(f"fixed\0{env_id}\0{env_text}", lambda: _fixed_t_max(env_id, env_text))
    if fixed is not None:
        return fixed
    known = [b for b in budgets if b is not None]
    if known:
        return max(known), "episode budget"
    longest = max(lengths, default=0)
    return max(longest, 1), "longest episode"
