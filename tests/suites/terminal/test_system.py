"""The system check names exactly what to install, and a missing tool stops a run at its start
with one message (not one error record per episode)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from exploreval.suites.terminal import _system
from exploreval.suites.terminal._system import (
    BUILD_TOOLS,
    NETWORK_TOOLS,
    SERVICE_TOOLS,
    SYSTEM_PATH,
    TOOLS,
    check_system,
)


def _path_without(tmp_path: Path, *missing: str) -> str:
    """A PATH holding every tool the check looks for except ``missing`` (symlinks)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in TOOLS:
        if tool in missing:
            continue
        found = shutil.which(tool, path=SYSTEM_PATH)
        assert found, f"{tool} should be installed on this machine"
        (bin_dir / tool).symlink_to(found)
    return str(bin_dir)


def test_this_machine_passes() -> None:
    report = check_system()
    assert report.ok, report.problems
    assert report.missing == []


@pytest.mark.parametrize(
    ("missing", "package"),
    [("tmux", "tmux"), ("jq", "jq"), ("openssl", "openssl"), ("prlimit", "util-linux"),
     ("nsenter", "util-linux"), ("git", "git"), ("make", "make"), ("bwrap", "bubblewrap")],
)  # fmt: skip
def test_a_missing_tool_names_its_package(tmp_path: Path, missing: str, package: str) -> None:
    report = check_system(_path_without(tmp_path, missing))
    assert report.missing == [missing]
    (problem,) = [p for p in report.problems if p.startswith(missing)]
    assert f"`sudo apt-get install -y {package}`" in problem
    assert "scripts/install.sh" in problem


def test_several_missing_tools_get_one_install_line(tmp_path: Path) -> None:
    report = check_system(_path_without(tmp_path, "jq", "git", "tmux"))
    assert report.missing == ["tmux", "jq", "git"]
    assert "all at once: `sudo apt-get install -y tmux jq git`" in report.problems


def test_a_missing_tmux_stops_the_run_at_its_start(tmp_path: Path, monkeypatch) -> None:
    from exploreval.runner import SpecError, run_experiment, spec_from_dict

    monkeypatch.setattr(_system, "SYSTEM_PATH", _path_without(tmp_path, "tmux"))
    spec = spec_from_dict(
        {
            "suites": [{"env_id": "exploreval/Terminal-v0", "seeds": "0-2"}],
            "agents": [{"agent": "oracle"}, {"agent": "curious"}],
        }
    )
    out = tmp_path / "run"
    with pytest.raises(SpecError) as failure:
        run_experiment(spec, str(out))
    message = str(failure.value)
    assert message.count("tmux is not installed") == 1, message
    assert "`sudo apt-get install -y tmux`" in message
    assert not out.exists()  # checked before the run directory is made: nothing to clean up


def test_install_script_installs_every_package_the_check_names() -> None:
    script = (Path(__file__).parents[3] / "scripts" / "install.sh").read_text()
    line = next(ln for ln in script.splitlines() if ln.startswith("packages=("))
    packages = set(line[len("packages=(") : -1].split())
    assert {pkg for pkg, _ in TOOLS.values()} - {"coreutils"} <= packages
    optional = {**BUILD_TOOLS, **NETWORK_TOOLS, **SERVICE_TOOLS}
    assert {pkg for pkg, _ in optional.values()} - {"mount"} <= packages
    assert "python3-pytest" in packages
    assert os.access(Path(__file__).parents[3] / "scripts" / "install.sh", os.R_OK)


def test_doctor_names_each_missing_tool_with_its_install_command(
    tmp_path: Path, monkeypatch
) -> None:
    """Without tmux (and the image builder's and the network's tools), `exploreval doctor` says
    which use of the terminal env needs what, and how to install it; doctor itself exits 0."""
    from typer.testing import CliRunner

    from exploreval.cli import app

    monkeypatch.setattr(_system, "SYSTEM_PATH", _path_without(tmp_path, "tmux"))
    result = CliRunner().invoke(app, ["doctor", "--no-smoke"])
    assert result.exit_code == 0, result.output
    lines = [x for x in result.stdout.splitlines() if "Terminal-v0" in x]
    assert lines and all(x.startswith("missing") for x in lines)
    assert any("tmux is not installed" in x and "apt-get install -y tmux" in x for x in lines)
    images = [x for x in lines if "task images" in x]
    assert any("mmdebstrap" in x for x in images) and any("slirp4netns" in x for x in images)
    assert not any("mmdebstrap" in x for x in lines if "task images" not in x)
    assert any(x.startswith("ok") and "GridDAG-v0" in x for x in result.stdout.splitlines())
