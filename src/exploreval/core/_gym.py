"""Every exploreval env is also a Gymnasium env: ``import exploreval`` then
``gymnasium.make("exploreval/GridDAG-v0")`` works.

Registration is lazy: importing Gymnasium costs numpy and ~0.1 s, which ``exploreval --help`` and
``exploreval envs`` must not pay. So ``import exploreval`` installs a post-import hook instead:

* if Gymnasium is already imported, every env is registered at once;
* otherwise the first ``import gymnasium`` (by the user, or by an env module: ``TextEnv`` is a
  ``gymnasium.Env``) finishes, then the suite plugins are loaded and every env id is put into
  Gymnasium's registry with a factory that imports the env class only when made;
* from then on, ``register_env`` registers with Gymnasium directly.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import threading
import warnings
from types import ModuleType
from typing import TYPE_CHECKING, Any

from exploreval.core._hooks import defer_until_env_module_loaded, on_env_registered

if TYPE_CHECKING:
    from collections.abc import Sequence

    from exploreval.core._envs import EnvSpec


_LOCK = threading.RLock()
#: ``ready``: Gymnasium is imported and every known env id is registered with it.
_STATE = {"ready": False, "hooked": False}


# -> Any: Gymnasium's env creator (Gymnasium imported lazily)
def _factory(env_id: str) -> Any:
    # -> Any: the Gymnasium-wrapped env
    def make(**kwargs: Any) -> Any:
        from exploreval.core._envs import env_spec

        kwargs.pop("render_mode", None)  # text envs render "ansi" only
        return env_spec(env_id).load()(**kwargs)

    make.__name__ = f"make_{env_id.replace('/', '_').replace('-', '_')}"
    return make


def _register(spec: EnvSpec) -> None:
    import gymnasium
    from gymnasium.envs.registration import registry

    registry.pop(spec.env_id, None)
    gymnasium.register(
        id=spec.env_id,
        entry_point=_factory(spec.env_id),
        nondeterministic=spec.nondeterministic,
        disable_env_checker=True,
        order_enforce=False,
    )


def register_gymnasium_env(spec: EnvSpec) -> None:
    """Put one env id into Gymnasium's registry (replacing an older registration) once Gymnasium
    is imported; before that, the import hook registers it with all the others."""
    if _STATE["ready"]:
        _register(spec)


def _register_everything() -> None:
    """Gymnasium is imported: load the plugins and register every env id (once)."""
    with _LOCK:
        if _STATE["ready"]:
            return
        _STATE["ready"] = True  # from now on register_env registers directly
        from exploreval.core._envs import ENV_REGISTRY
        from exploreval.core._plugins import load_plugins

        load_plugins()
        for spec in ENV_REGISTRY.values():
            _register(spec)


def _gymnasium_imported() -> bool:
    module = sys.modules.get("gymnasium")
    return module is not None and hasattr(module, "register")  # fully imported, not mid-import


class _HookedLoader(importlib.abc.Loader):
    """Gymnasium's own loader; when the package has finished executing, register our envs."""

    def __init__(self, loader: importlib.abc.Loader) -> None:
        self._loader = loader

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self._loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self._loader.exec_module(module)
        module.__loader__ = self._loader  # the hook has done its job: hand the real one back
        if module.__spec__ is not None:
            module.__spec__.loader = self._loader
        env_module = sys.modules.get("exploreval.core._env")
        if env_module is not None and not hasattr(env_module, "TextEnv"):
            # Gymnasium was imported by exploreval.core._env, which is still executing: a plugin
            # registering an env class would meet a half-initialised module. That module calls
            # env_module_loaded() as its last statement.
            defer_until_env_module_loaded(_register_everything)
            return
        try:
            _register_everything()
        except Exception as exc:  # never break `import gymnasium` itself
            warnings.warn(
                f"exploreval could not register its envs with Gymnasium: {exc}", stacklevel=2
            )

    # -> Any: delegates to the wrapped env (any attribute)
    def __getattr__(self, name: str) -> Any:
        return getattr(self._loader, name)


class _GymnasiumFinder(importlib.abc.MetaPathFinder):
    """Finds ``gymnasium`` with the other finders and wraps its loader (one-shot)."""

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != "gymnasium":
            return None
        _remove_finder()
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is None:
            for finder in sys.meta_path:
                find = getattr(finder, "find_spec", None)
                spec = find(fullname, path, target) if find is not None else None
                if spec is not None:
                    break
        if spec is None or spec.loader is None:
            return spec
        spec.loader = _HookedLoader(spec.loader)
        return spec


_FINDER = _GymnasiumFinder()


def _remove_finder() -> None:
    while _FINDER in sys.meta_path:
        sys.meta_path.remove(_FINDER)


def register_all_with_gymnasium() -> None:
    """Make every exploreval env available to ``gymnasium.make``: now if Gymnasium is already
    imported, else as soon as it is (called by ``import exploreval``; cheap)."""
    with _LOCK:
        if _STATE["ready"]:
            return
        if _gymnasium_imported():
            _register_everything()
            return
        if not _STATE["hooked"]:
            _STATE["hooked"] = True
            sys.meta_path.insert(0, _FINDER)


on_env_registered(register_gymnasium_env)
