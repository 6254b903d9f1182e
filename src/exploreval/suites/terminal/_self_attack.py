"""The verification attacks itself: plants at every place its own chain looked (issue 55).

What a design forgets, a list of attacks forgets too. So the attack surface is not written down:
it is read from the trace of a gold verification (``audit.surface``: every directory the
verification's processes listed, searched or opened a file in before the tests began). The same
gold is then played again with a file of the agent's planted in each of those directories,
under the names loaders look for (``*.pth``, ``*.py``, ``*.conf``, ``*.list``, ``*.sh``, a bare
name: a ``conf.d`` directory reads every file). Each plant is harmless in what it does (a
comment, ``import os``): what is judged is what the verification made of it. A plant the chain
read as code or configuration must be named, and the task must not resolve; a plant never read,
or read as data, changes nothing. Used by the tests (a sample in CI) and by
``bench/bench_self_attack.py`` (every task of a set).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from typing import Any

from exploreval.suites.terminal._reads import CONFIGURATION, COUNTED

#: (file name, content) planted in every directory of the surface.
PLANTS = (
    ("zz_exploreval_plant.pth", "import os\n"),
    ("zz_exploreval_plant.py", "PLANTED = 1\n"),
    ("zz-exploreval-plant", "# exploreval plant\n"),
    ("zz-exploreval-plant.conf", "# exploreval plant\n"),
    ("zz-exploreval-plant.list", "# exploreval plant\n"),
    ("zz-exploreval-plant.sh", "# exploreval plant\n"),
)
#: Where a plant would say nothing: directories the verification's own processes create and
#: remove (uv's temporary directories, the verifier's), so no agent could plant there.
_TRANSIENT = ("/.tmp", "/tmp/.tmp", "/tmp/exploreval-")


def surface_dirs(surface: list[str]) -> list[str]:
    """The directories of ``audit.surface`` an agent could have planted in."""
    return [
        d
        for d in surface
        if d.startswith("/") and "(deleted)" not in d and not d.startswith(_TRANSIENT)
    ]


def plant_script(dirs: list[str]) -> str:
    """Shell lines planting every :data:`PLANTS` file in each directory that exists and can be
    written in the agent's phase (the rest cannot be planted by an agent either)."""
    lines = [f"printf %s {shlex.quote(text)} > /tmp/plant-{name}" for name, text in PLANTS]
    lines.append(f"for d in {' '.join(shlex.quote(d) for d in dirs)}; do")
    lines.append('  [ -d "$d" ] && [ -w "$d" ] || continue')
    lines += [f'  cp /tmp/plant-{name} "$d/{name}" 2>/dev/null || true' for name, _ in PLANTS]
    lines += ["done", "rm -f /tmp/plant-*"]
    return "\n".join(lines) + "\n"


def _reads(agent_reads: list[str]) -> dict[str, set[str]]:
    """path -> the roles it was read in (``audit.agent_reads``: "path: role (program)")."""
    found: dict[str, set[str]] = {}
    for line in agent_reads:
        path, _, rest = line.partition(": ")
        found.setdefault(path, set()).add(rest.rpartition(" (")[0])
    return found


@dataclass
class PlantOutcome:
    """What one attacked verification made of the plants."""

    planted: int
    #: plant path -> the counted roles (code, configuration) it was read in
    read_as_code: dict[str, set[str]] = field(default_factory=dict)
    #: plants read as code or configuration that the audit did not name: each is a hole
    unnamed: list[str] = field(default_factory=list)
    resolved: bool = False

    @property
    def configuration_read(self) -> bool:
        return any(roles & CONFIGURATION for roles in self.read_as_code.values())

    @property
    def holds(self) -> bool:
        """Every plant read as code was named, and a task with one did not resolve."""
        return not self.unnamed and not (self.read_as_code and self.resolved)


def judge_plants(verification: dict[str, Any], dirs: list[str]) -> PlantOutcome:
    """The attacked verification (its stored record) against the plants in ``dirs``."""
    audit = verification.get("audit") or {}
    planted = {f"{d.rstrip('/')}/{name}" for d in dirs for name, _ in PLANTS}
    outcome = PlantOutcome(planted=len(planted), resolved=verification.get("resolved") is True)
    for path, roles in sorted(_reads(audit.get("agent_reads", [])).items()):
        counted = roles & COUNTED
        if path in planted and counted:
            outcome.read_as_code[path] = counted
            if path not in audit.get("files", []):
                outcome.unnamed.append(path)
    return outcome
