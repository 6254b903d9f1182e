"""The checks behind ``exploreval doctor``: the optional extras, then what each registered env
needs (its extras and its own preflight: system tools), one line each with the install command.

The extras table is ``exploreval.core.EXTRAS`` (the one a run checks before it starts), so what
doctor says and what a run refuses can never disagree.
"""

from __future__ import annotations

import sys

from rich.console import Console


def local_installed() -> bool:
    from exploreval.core import EXTRAS

    return not EXTRAS["local"].missing()


def _line(out: Console, mark: str, text: str) -> None:
    out.print(f"{mark:7} {text}", markup=False, highlight=False, soft_wrap=True)


def env_needs(env_id: str) -> list[tuple[str, list[str]]]:
    """(what, problems) for an env: its default use, then each of its ``doctor_variants``."""
    from exploreval.core import env_spec, extra_problem

    spec = env_spec(env_id)
    missing = [p for p in (extra_problem(x, env_id) for x in spec.extras) if p]
    if missing:
        return [("", missing)]  # importing it would only say the same
    try:
        cls = spec.load()
    except ImportError as exc:
        return [("", [f"cannot be imported ({exc}); reinstall exploreval or its plugin"])]
    rows = [("", cls.preflight({}))]
    for label, options in cls.doctor_variants.items():
        rows.append((label, cls.preflight(dict(options))))
    return rows


def print_report(out: Console) -> bool:
    """Print the extras and each env's needs; True when something was found missing (doctor
    still exits 0 for that: a missing optional part is a choice, not a failure)."""
    from exploreval import __version__
    from exploreval.core import EXTRAS, list_envs

    out.print(
        f"exploreval {__version__} on Python {sys.version.split()[0]}",
        markup=False,
        soft_wrap=True,
    )
    out.print("optional extras:", markup=False)
    for extra in EXTRAS.values():
        missing = extra.missing()
        if missing:
            _line(out, "missing", f"[{extra.name}] {extra.purpose}: {', '.join(missing)} not "
                  f"importable; install: {extra.install}")  # fmt: skip
        else:
            _line(out, "ok", f"[{extra.name}] {extra.purpose}")
    out.print("environments (what each needs on this machine):", markup=False)
    for spec in sorted(list_envs(), key=lambda s: s.env_id):
        for label, problems in env_needs(spec.env_id):
            what = spec.env_id + (f", {label}" if label else "")
            if not problems:
                needs = f" (needs [{', '.join(spec.extras)}])" if spec.extras and not label else ""
                _line(out, "ok", f"{what}{needs}")
            for problem in problems:
                _line(out, "missing", f"{what}: {problem}")
    return False
