"""Work that must wait until ``exploreval.core._env`` has finished executing.

When ``_env`` imports Gymnasium (``TextEnv`` is a ``gymnasium.Env``), the Gymnasium bridge's
import hook fires while ``_env`` is still half-initialised: registering envs then would let a
plugin meet a module without ``TextEnv``. The hook defers that work here, and ``_env`` runs it as
its last statement. A leaf module, so neither side imports the other.
"""

from __future__ import annotations

from collections.abc import Callable

_DEFERRED: list[Callable[[], None]] = []


def defer_until_env_module_loaded(work: Callable[[], None]) -> None:
    _DEFERRED.append(work)


def env_module_loaded() -> None:
    """Called at the end of ``exploreval.core._env``: run what was deferred, once each."""
    while _DEFERRED:
        _DEFERRED.pop(0)()
