"""The verification attacks itself: plants at every place its own chain looked (issue 55).

The attack surface is read from a gold verification's own trace (:mod:`._self_attack`), not
written down here; the same gold is played again with a harmless file of the agent's in each of
those directories, and every plant the chain read as code or configuration must be named. A
sample in CI (a Terminal-Bench uv task, a Harbor task whose test script begins with apt); every
task of a set in ``bench/bench_self_attack.py``.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from exploreval.suites.terminal._reads import DATA, PYTHON_STARTUP, SHELL_READ
from exploreval.suites.terminal._self_attack import (
    PLANTS,
    judge_plants,
    plant_script,
    surface_dirs,
)

from .test_verification_seal import FIXTURES, TB1, _gold, _play


def test_the_plant_script_fills_every_directory_and_nothing_else(tmp_path: Path) -> None:
    site, not_a_dir = tmp_path / "site", tmp_path / "file"
    site.mkdir()
    not_a_dir.write_text("kept\n")
    dirs = [str(site), str(not_a_dir), str(tmp_path / "absent"), str(tmp_path / "it's here")]
    (tmp_path / "it's here").mkdir()
    subprocess.run(["bash", "-c", plant_script(dirs)], check=True, cwd=tmp_path)
    names = sorted(name for name, _ in PLANTS)
    assert sorted(p.name for p in site.iterdir()) == names
    assert sorted(p.name for p in (tmp_path / "it's here").iterdir()) == names
    assert (site / "zz_exploreval_plant.pth").read_text() == "import os\n"
    assert not_a_dir.read_text() == "kept\n" and not (tmp_path / "absent").exists()
    assert not list(Path("/tmp").glob("plant-zz*"))


def test_the_surface_leaves_out_what_no_agent_could_plant_in() -> None:
    surface = ["/usr/lib/python3.11", "relative", "/tmp/.tmpAbC", "/.tmpx", "/app (deleted)"]
    surface += ["/tmp/exploreval-verify", "/etc/apt/apt.conf.d"]
    assert surface_dirs(surface) == ["/usr/lib/python3.11", "/etc/apt/apt.conf.d"]


def test_a_plant_read_as_configuration_that_the_audit_did_not_name_is_a_hole() -> None:
    dirs = ["/usr/local/lib/python3.11/site-packages", "/etc/apt/apt.conf.d"]
    pth = "/usr/local/lib/python3.11/site-packages/zz_exploreval_plant.pth"
    conf = "/etc/apt/apt.conf.d/zz-exploreval-plant"
    reads = [
        f"{pth}: {PYTHON_STARTUP} (python3.11)",
        f"{conf}: {SHELL_READ} (bash)",
        f"/app/data.txt: {SHELL_READ} (bash)",  # not a plant
        f"/etc/apt/apt.conf.d/zz-exploreval-plant.list: {DATA} (cp)",  # read as data
    ]
    named = {"resolved": False, "audit": {"agent_reads": reads, "files": [pth, conf]}}
    outcome = judge_plants(named, dirs)
    assert outcome.planted == 2 * len(PLANTS)
    assert outcome.read_as_code == {pth: {PYTHON_STARTUP}, conf: {SHELL_READ}}
    assert outcome.configuration_read and outcome.unnamed == [] and outcome.holds
    missed = {"resolved": True, "audit": {"agent_reads": reads, "files": [pth]}}
    outcome = judge_plants(missed, dirs)
    assert outcome.unnamed == [conf] and not outcome.holds
    resolved = {"resolved": True, "audit": {"agent_reads": reads, "files": [pth, conf]}}
    assert not judge_plants(resolved, dirs).holds  # named, yet the task resolved


@pytest.mark.slow
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
    dirs = surface_dirs(control["audit"]["surface"])
    assert len(dirs) >= 10, control["audit"]["surface"]

    attacked = await _play(task, gold + plant_script(dirs))
    outcome = judge_plants(attacked, dirs)
    # the surface holds a place the chain reads code from (Python's site directories: every
    # .pth is start-up configuration), so the plants are found: this is an attack, not a no-op
    assert any(p.endswith(".pth") for p in outcome.read_as_code), attacked["audit"]
    assert outcome.configuration_read, outcome.read_as_code
    assert outcome.unnamed == [], attacked["audit"]["violations"]
    assert attacked["resolved"] is False
    assert outcome.holds
