"""Where the Gymnasium bridge (``_gym``) hooks into the modules below it, so they never import it.

- **Registrations.** The env registry (``_envs``) tells the listeners of each new env
  (:func:`notify_env_registered`); the bridge listens (:func:`on_env_registered`) when imported.
- **Deferred work.** When ``_env`` imports Gymnasium (``TextEnv`` is a ``gymnasium.Env``), the
  bridge's import hook fires while ``_env`` is still half-initialised: registering envs then would
  let a plugin meet a module without ``TextEnv``. The hook defers that work here, and ``_env`` runs
  it as its last statement (:func:`env_module_loaded`).

A leaf module that imports nothing heavy: ``import exploreval`` loads it, not the registry.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

#: Listeners take the registry's ``EnvSpec``; typed ``Any`` so that this leaf imports nothing of
#: the registry, not even for types (that would close a circle through ``_env``).
EnvListener = Callable[[Any], None]

_ON_REGISTER: list[EnvListener] = []
_DEFERRED: list[Callable[[], None]] = []


def on_env_registered(listener: EnvListener) -> None:
    """Tell ``listener`` of every env registered from now on."""
    _ON_REGISTER.append(listener)


def notify_env_registered(spec: Any) -> None:
    for listener in _ON_REGISTER:
        listener(spec)


def defer_until_env_module_loaded(work: Callable[[], None]) -> None:
    _DEFERRED.append(work)


def env_module_loaded() -> None:
    """Called at the end of ``exploreval.core._env``: run what was deferred, once each."""
    while _DEFERRED:
        _DEFERRED.pop(0)()
