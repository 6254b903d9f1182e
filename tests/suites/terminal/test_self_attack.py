"""The verification attacks itself: plants at every place its own chain looked (issue 55).

What a design forgets, a list of attacks forgets too. So the attack surface is not written down
here: it is read from the trace of a gold verification (``audit.surface``: every directory the
verification's processes listed, searched or opened a file in before the tests began). The same
gold is then played again with a file of the agent's planted in each of those directories,
under the names loaders look for (``*.pth``, ``*.py``, ``*.conf``, ``*.list``, ``*.sh``, a bare
name: a ``conf.d`` directory reads every file). Each plant is harmless in what it does (a
comment, ``import os``): what is checked is what the verification made of it. A plant the chain
read as code or configuration is named, and the task is not resolved; a plant never read, or
read as data by the tests' subject, changes nothing.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from exploreval.suites.terminal._reads import CONFIGURATION, COUNTED

from .test_verification_seal import FIXTURES, TB1, _gold, _play

pytestmark = pytest.mark.slow

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
#: remove (uv's temporary directories), and names as a process saw them after a removal.
_TRANSIENT = ("/.tmp", "/tmp/.tmp", "/tmp/exploreval-")


def _surface_dirs(surface: list[str]) -> list[str]:
    return [
        d
        for d in surface
        if d.startswith("/") and "(deleted)" not in d and not d.startswith(_TRANSIENT)
    ]


def _plant_script(dirs: list[str]) -> str:
    """Shell lines planting every :data:`PLANTS` file in each directory that exists and can be
    written in the agent's phase (the rest cannot be planted by an agent either)."""
    lines = []
    for name, text in PLANTS:
        lines.append(f"printf %s {shlex.quote(text)} > /tmp/plant-{name}")
    quoted = " ".join(shlex.quote(d) for d in dirs)
    lines.append(f"for d in {quoted}; do")
    lines.append('  [ -d "$d" ] && [ -w "$d" ] || continue')
    for name, _ in PLANTS:
        lines.append(f'  cp /tmp/plant-{name} "$d/{name}" 2>/dev/null || true')
    lines.append("done")
    lines.append("rm -f /tmp/plant-*")
    return "\n".join(lines) + "\n"


def _reads(agent_reads: list[str]) -> dict[str, set[str]]:
    """path -> the roles it was read in (``audit.agent_reads``: "path: role (program)")."""
    found: dict[str, set[str]] = {}
    for line in agent_reads:
        path, _, rest = line.partition(": ")
        found.setdefault(path, set()).add(rest.rpartition(" (")[0])
    return found


@pytest.mark.parametrize(
    "task",
    [TB1, FIXTURES / "harbor-apt"],
    ids=["tb1-uv", "harbor-apt"],
)
async def test_every_plant_where_the_verification_looked_is_never_read_or_named(
    task: Path,
) -> None:
    gold = _gold(task)
    control = await _play(task, gold)
    assert control["resolved"] is True, control.get("reasons")
    dirs = _surface_dirs(control["audit"]["surface"])
    assert len(dirs) >= 10, control["audit"]["surface"]

    attacked = await _play(task, gold + _plant_script(dirs))
    audit = attacked["audit"]
    reads = _reads(audit["agent_reads"])
    planted = {f"{d.rstrip('/')}/{name}" for d in dirs for name, _ in PLANTS}
    read_as_code = {p: roles & COUNTED for p, roles in reads.items() if p in planted}
    read_as_code = {p: roles for p, roles in read_as_code.items() if roles}
    # the surface holds a place the chain reads code from (Python's site directories: every
    # .pth is start-up configuration), so the plants are found: this is an attack, not a no-op
    assert any(p.endswith(".pth") for p in read_as_code), reads
    for path, roles in sorted(read_as_code.items()):
        assert path in audit["files"], (path, roles, audit["violations"])
    assert any(roles & CONFIGURATION for roles in read_as_code.values()), read_as_code
    assert attacked["resolved"] is False
