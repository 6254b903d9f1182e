"""Per-suite hooks of the cross-suite metrics, so TIDE never branches on a suite's name.

A suite registers, for its env family (or an env name / id):

* a **state identity** (which observations count as the same state for the Loop Ratio);
* a **t_max** (TIDE's AUV evaluation window) when the paper gives one;
* a **budget** function (the episode's own step budget, TIDE's t_max fallback for suites the paper
  does not cover, when the record's ``max_steps`` is not it);
* a **progress** function (a per-step progress trace when the env's own ``progress`` is not the
  right notion, e.g. the bandit's expected-reward efficiency);
* its **headline metrics**: the few episode columns that say the most about an agent of the
  family (what an inspect_ai export shows as scores, docs/inspect.md).

Values may be ``"module:attribute"`` strings, resolved on first use.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from exploreval.core import Registry, load_plugins, resolve

if TYPE_CHECKING:
    from exploreval.core import EpisodeRecord
    from exploreval.metrics._tide_state import StateIdentity

ProgressFn = Callable[["EpisodeRecord"], "list[float] | None"]

#: Keyed by lower-cased env name (``frozenlake``), env id, or family.
STATE_IDENTITIES: Registry[Any] = Registry("state identity", loader=load_plugins)
T_MAX: Registry[int] = Registry("t_max", loader=load_plugins)
#: Keyed by family.
PROGRESS: Registry[Any] = Registry("progress hook", loader=load_plugins)
#: Keyed by family.
BUDGETS: Registry[Any] = Registry("budget hook", loader=load_plugins)
BudgetFn = Callable[["EpisodeRecord"], "int | None"]
#: Keyed by family: episode-metric column names, most telling first.
HEADLINE_METRICS: Registry[tuple[str, ...]] = Registry("headline metrics", loader=load_plugins)
#: What every family shows before its own headline metrics.
COMMON_HEADLINE = ("success", "steps", "invalid_rate", "tide_auv", "tide_loop_ratio")


def register_headline_metrics(family: str, columns: tuple[str, ...] | list[str]) -> None:
    """The episode-metric columns that say the most about an agent of ``family``."""
    HEADLINE_METRICS.register(family, tuple(columns), replace=True)


def headline_metrics(family: str) -> tuple[str, ...]:
    """The common headline columns, then the family's own (each once)."""
    own = HEADLINE_METRICS.find(family) or ()
    return tuple(dict.fromkeys((*COMMON_HEADLINE, *own)))


def register_state_identity(name: str, identity: StateIdentity | str) -> None:
    """Use ``identity`` for records whose env name, env id or family is ``name``."""
    STATE_IDENTITIES.register(name.lower(), identity, replace=True)


#: Where each registered t_max comes from (``"paper"`` for a value a paper gives), by key.
T_MAX_SOURCES: dict[str, str] = {}


def register_t_max(name: str, t_max: int, *, source: str = "registered") -> None:
    """Set the default t_max for an env name (or full env id), e.g. from a suite plugin.

    ``source`` is what reports say the value is (``"paper"`` when a paper's table gives it)."""
    if isinstance(t_max, bool) or int(t_max) != t_max or t_max < 1:
        raise ValueError(f"t_max for {name!r} must be a positive integer, got {t_max!r}")
    T_MAX.register(name.lower(), int(t_max), replace=True)
    T_MAX_SOURCES[name.lower()] = source


def register_progress(family: str, fn: ProgressFn | str) -> None:
    """Use ``fn(record) -> per-step progress`` (or None) for records of ``family``."""
    PROGRESS.register(family, fn, replace=True)


def register_budget(family: str, fn: BudgetFn | str) -> None:
    """Use ``fn(record) -> step budget`` (or None) for records of ``family``."""
    BUDGETS.register(family, fn, replace=True)


def env_name(env_id: str) -> str:
    """``exploreval/FrozenLake-v0`` -> ``FrozenLake``; ids without namespace/version pass through."""
    name = env_id.rsplit("/", 1)[-1]
    stem, sep, version = name.rpartition("-v")
    return stem if sep and version.isdigit() else name


def registered_state_identity(record: EpisodeRecord) -> StateIdentity | None:
    # asked for every trajectory scored: looked up once per env and family until a change
    def lookup() -> StateIdentity | None:
        for name in (record.env_id, env_name(record.env_id), record.family):
            found = STATE_IDENTITIES.find(name.lower())
            if found is not None:
                identity: StateIdentity = resolve(found)
                return identity
        return None

    return STATE_IDENTITIES.derived(f"identity:{record.env_id}|{record.family}", lookup)


def registered_progress(record: EpisodeRecord) -> ProgressFn | None:
    found = PROGRESS.find(record.family)
    return resolve(found) if found is not None else None


def registered_budget(record: EpisodeRecord) -> BudgetFn | None:
    found = BUDGETS.find(record.family)
    return resolve(found) if found is not None else None
