"""Experiment-file versions: stored experiments keep loading after a field is renamed.

Spec history (readers migrate older experiments, they never reject them):

- v1 (no ``spec_version``): the fields had names of their own, apart from the options that set
  them: ``suites[*].options``, ``agents[*].max_concurrency``, ``agents[*].timeout_s`` and
  ``episode_timeout_s``.
- v2: each field shares its option's name from the flag to the code that uses it
  (``--env-option`` → ``env_options``, ``--max-connections`` → ``max_connections``,
  ``--request-timeout`` → ``request_timeout``, ``--episode-timeout`` → ``episode_timeout``).

A run's manifest stores the experiment as it was written, so resuming, scoring or showing a run
made before v2 goes through :func:`migrate_spec` too. The episode ids and the config hash do not
change: the suite's identity keeps the v1 key (``options``), see ``SuiteSpec.identity``.
"""

from __future__ import annotations

from typing import Any

from exploreval.core import migrate_versions
from exploreval.runner._errors import SpecError

#: Bump on any rename in the experiment file; add the step from the previous version below.
SPEC_VERSION = 2

_V1_SUITE = {"options": "env_options"}
_V1_AGENT = {"max_concurrency": "max_connections", "timeout_s": "request_timeout"}
_V1_TOP = {"episode_timeout_s": "episode_timeout"}


def _renamed(entry: dict[str, Any], names: dict[str, str], where: str) -> dict[str, Any]:
    out = dict(entry)
    for old, new in names.items():
        if old not in out:
            continue
        if new in out:
            raise SpecError(
                f"{where}: both '{old}' (the name before spec_version 2) and '{new}' are set; "
                f"keep '{new}'"
            )
        out[new] = out.pop(old)
    return out


# -> Any: a suite entry as written (a mapping is renamed, anything else left to validation)
def rename_suite_entry(entry: Any, where: str) -> Any:
    """A suite entry (or a named suite's registered entry) with v1 names brought to v2."""
    return _renamed(entry, _V1_SUITE, where) if isinstance(entry, dict) else entry


def _v1_to_v2(data: dict[str, Any], source: str) -> dict[str, Any]:
    out = _renamed(data, _V1_TOP, source)
    if isinstance(out.get("suites"), list):
        out["suites"] = [
            rename_suite_entry(s, f"{source}: suites.{i}") for i, s in enumerate(out["suites"])
        ]
    if isinstance(out.get("agents"), list):
        out["agents"] = [
            _renamed(a, _V1_AGENT, f"{source}: agents.{i}") if isinstance(a, dict) else a
            for i, a in enumerate(out["agents"])
        ]
    return out


def migrate_spec(data: dict[str, Any], source: str = "<dict>") -> dict[str, Any]:
    """Bring an experiment mapping up to ``SPEC_VERSION``. A file without ``spec_version`` is
    read as v1, whose renames apply only where the old name is present, so a hand-written file
    with today's names needs no version line."""
    try:
        return migrate_versions(
            data, field="spec_version", current=SPEC_VERSION,
            steps={1: lambda d: _v1_to_v2(d, source)}, source=source,
        )  # fmt: skip
    except SpecError:
        raise
    except ValueError as exc:
        raise SpecError(str(exc)) from None
