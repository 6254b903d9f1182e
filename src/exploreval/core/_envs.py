"""The environment registry: versioned ids, lazy classes, presets, and Gymnasium registration."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from exploreval.core._hooks import notify_env_registered
from exploreval.core._plugins import current_plugin, load_plugins
from exploreval.core._registry import Registry, resolve, unknown_name_error

if TYPE_CHECKING:
    from exploreval.core._env import TextEnv
    from exploreval.core._info import StepInfo

_ENV_ID = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+-v\d+$")


@dataclass(frozen=True)
class EnvSpec:
    """What the registry knows about one versioned environment id.

    ``entry_point`` is the env class or a ``"module:Class"`` string imported on first use, so
    listing envs does not import them.
    """

    env_id: str
    entry_point: Any
    family: str
    description: str = ""
    presets: tuple[str, ...] = ()
    default_preset: str | None = None
    nondeterministic: bool = False
    suite: str = ""
    #: Optional extras the env needs (``core._extras``), checked before a run starts.
    extras: tuple[str, ...] = ()
    #: What an episode's ``success`` means for this env, in one line (the report shows it).
    success_means: str = ""

    @property
    def name(self) -> str:
        return self.env_id.split("/", 1)[1]

    @property
    def version(self) -> int:
        return int(self.env_id.rsplit("-v", 1)[1])

    def load(self) -> type[TextEnv]:
        """The env class (imported now if registered lazily)."""
        cls: type[TextEnv] = resolve(self.entry_point)
        if getattr(cls, "env_id", "") != self.env_id:
            cls.env_id = self.env_id
        declared = set(self.presets)
        actual = set(cls.presets)
        if declared != actual:
            raise RuntimeError(
                f"{self.env_id}: registered presets {sorted(declared)} differ from "
                f"{cls.__name__}.presets {sorted(actual)}"
            )
        return cls

    @property
    def info_model(self) -> type[StepInfo]:
        return self.load().info_model


ENV_REGISTRY: Registry[EnvSpec] = Registry("environment id", loader=load_plugins)


def register_env(
    env_id: str,
    entry_point: Any,
    *,
    family: str,
    description: str = "",
    presets: tuple[str, ...] | list[str] | None = None,
    default_preset: str | None = None,
    nondeterministic: bool | None = None,
    extras: tuple[str, ...] = (),
    success_means: str = "",
) -> EnvSpec:
    """Register an env class (or a ``"module:Class"`` string) under a versioned id.

    With a lazy string, pass ``presets`` (names), ``default_preset`` and ``nondeterministic`` so
    listing needs no import; ``EnvSpec.load`` checks they match the class. ``success_means``:
    one line saying what ``success`` is for this env (reports print it beside the rate).
    """
    if not _ENV_ID.match(env_id):
        raise ValueError(f"env id {env_id!r} must look like 'namespace/Name-v0'")
    from exploreval.core._extras import EXTRAS

    for extra in extras:
        if extra not in EXTRAS:
            raise ValueError(
                f"{env_id}: unknown extra {extra!r}; known: {', '.join(EXTRAS)} "
                "(an extra is an optional part of exploreval's install)"
            )
    if not isinstance(entry_point, str):
        cls = entry_point
        cls.env_id = env_id
        presets = tuple(cls.presets) if presets is None else presets
        default_preset = default_preset if default_preset is not None else cls.default_preset
        nondeterministic = cls.nondeterministic if nondeterministic is None else nondeterministic
        description = description or next(iter((cls.__doc__ or "").strip().splitlines()), "")
    spec = EnvSpec(
        env_id=env_id,
        entry_point=entry_point,
        family=family,
        description=description,
        presets=tuple(presets or ()),
        default_preset=default_preset,
        nondeterministic=bool(nondeterministic),
        suite=current_plugin(),
        extras=tuple(extras),
        success_means=success_means,
    )
    ENV_REGISTRY.register(env_id, spec, replace=True)
    notify_env_registered(spec)
    return spec


def env_spec(env_id: str) -> EnvSpec:
    return ENV_REGISTRY.get(env_id)


def list_envs() -> list[EnvSpec]:
    return ENV_REGISTRY.values()


def check_preset(spec: EnvSpec, preset: str | None) -> None:
    if preset is not None and spec.presets and preset not in spec.presets:
        raise unknown_name_error("preset", preset, spec.presets, context=spec.env_id)


def make_env(env_id: str, preset: str | None = None, **options: Any) -> TextEnv:
    """Instantiate a registered env; unknown ids and presets get close-match hints."""
    spec = env_spec(env_id)
    check_preset(spec, preset)
    env = spec.load()(preset=preset, **options)
    # the env's class is a gymnasium.Env, so Gymnasium is imported by now
    from gymnasium.envs.registration import registry

    gym_spec = registry.get(env_id)
    if gym_spec is not None:
        env.spec = gym_spec
    return env
