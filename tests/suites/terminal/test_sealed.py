"""The verifier's environment (``_sealed``, ``_index``, ``_seccomp``): what the test tools read,
and what the tests themselves see.

Unit checks of the pins, then one real verification whose hidden tests inspect the environment
they run in: the pins are gone for them (the task's values are back), the results channel is not
theirs, nothing can trace pytest, /proc is read-only.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from exploreval.suites.terminal._index import PACKAGING_TOOLS, IndexCheck, requested_tools
from exploreval.suites.terminal._sandbox import Sandbox
from exploreval.suites.terminal._sandbox_config import SandboxConfig
from exploreval.suites.terminal._sealed import (
    EMPTY_CONFIG,
    UV_PROJECT_DIR,
    harness_files,
    image_pytest_plugins,
    image_python_sites,
    sealed_env,
    shipped_pytest_config,
    verification_env,
)
from exploreval.suites.terminal._seccomp import filter_program
from exploreval.suites.terminal._verify import disk_filled, verify


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ({}, EMPTY_CONFIG),
        ({"pyproject.toml": "[project]\nname = 'x'\n"}, EMPTY_CONFIG),
        (
            {"pyproject.toml": "[tool.pytest.ini_options]\naddopts = '-q'\n"},
            "/tests/pyproject.toml",
        ),
        ({"setup.cfg": "[metadata]\nname = x\n", "tox.ini": "[pytest]\n"}, "/tests/tox.ini"),
        ({"setup.cfg": "[tool:pytest]\n", "pytest.ini": ""}, "/tests/pytest.ini"),
        ({"pytest.toml": "[pytest]\n"}, "/tests/pytest.toml"),
    ],
)
def test_pytest_is_pinned_to_the_configuration_shipped_beside_the_tests(
    tmp_path: Path, files: dict[str, str], expected: str
) -> None:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    assert shipped_pytest_config(tmp_path) == expected


def test_a_link_beside_the_tests_is_not_their_configuration(tmp_path: Path) -> None:
    (tmp_path / "elsewhere.ini").write_text("[pytest]\n")
    (tmp_path / "pytest.ini").symlink_to(tmp_path / "elsewhere.ini")
    assert shipped_pytest_config(tmp_path) == EMPTY_CONFIG


def test_the_pins_and_what_the_tests_get_back() -> None:
    task = {"PYTHONPATH": "/app/lib", "PYTEST_ADDOPTS": "-x",
            "UV_PROJECT_ENVIRONMENT": "/opt/exploreval-venv/.venv"}  # fmt: skip
    env = sealed_env(verification_env(task, host_system=False), host_system=False,
                     config_file="/tests/pytest.ini", uv_project=True,
                     pip_env={"PIP_INDEX_URL": "https://mirror.example/simple"})  # fmt: skip
    assert env["PYTEST_ADDOPTS"].startswith("-p exploreval_results -rA --rootdir=/tests "
                                            "--confcutdir=/tests -c /tests/pytest.ini")  # fmt: skip
    assert env["PYTEST_ADDOPTS"].endswith(" -x")  # the task's own options still apply
    assert env["PYTHONPATH"] == "/opt/exploreval/verify:/app/lib"  # the verifier's start-up first
    assert env["PYTHONSAFEPATH"] == "1" and env["PYTHONPYCACHEPREFIX"] == "/opt/exploreval-pycache"
    assert env["UV_PROJECT"] == UV_PROJECT_DIR and env["UV_NO_CONFIG"] == "1"
    assert env["PIP_CONFIG_FILE"] == "/dev/null" and env["PIP_INDEX_URL"].startswith("https://")
    restore = json.loads(env["EXPLOREVAL_RESTORE"])
    assert restore["PYTHONPATH"] == "/app/lib" and restore["PYTEST_ADDOPTS"] == "-x"
    assert restore["PYTHONSAFEPATH"] is None and restore["UV_PROJECT"] is None
    assert restore["UV_PROJECT_ENVIRONMENT"] is None and restore["PIP_INDEX_URL"] is None
    # the test tools start in a fresh home; the tests read the agent's (~/.jupyter...)
    assert env["HOME"] == "/opt/exploreval-home" and restore["HOME"] == "/root"
    own_home = sealed_env(verification_env({"HOME": "/home/app"}, host_system=False),
                          host_system=False, config_file=EMPTY_CONFIG, uv_project=False,
                          pip_env={})  # fmt: skip
    assert json.loads(own_home["EXPLOREVAL_RESTORE"])["HOME"] == "/home/app"
    host = sealed_env(verification_env({}, host_system=True), host_system=True,
                      config_file=EMPTY_CONFIG, uv_project=False, pip_env={})  # fmt: skip
    assert host["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] == "1" and "UV_PROJECT" not in host
    assert "PYTHONPYCACHEPREFIX" not in host  # the agent cannot write this machine's byte code
    assert "EXPLOREVAL_TOOL_DISTS" not in host  # no plugin of this machine's loads
    # an image: autoloading off, the test tools' plugins named (pytest's always)
    assert env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] == "1" and env["EXPLOREVAL_TOOL_DISTS"] == "pytest"
    assert restore["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] is None
    tools = sealed_env(verification_env({}, host_system=False), host_system=False,
                       config_file=EMPTY_CONFIG, uv_project=True, pip_env={},
                       tool_dists={"pytest-json-ctrf", "requests"})  # fmt: skip
    assert tools["EXPLOREVAL_TOOL_DISTS"] == "pytest,pytest-json-ctrf,requests"


def test_the_tools_a_test_script_installs(tmp_path: Path) -> None:
    (tmp_path / "test.sh").write_text(
        "#!/bin/bash\n# pip install not-this\nuvx \\\n  -p 3.13 \\\n  -w pytest==8.4.1 \\\n"
        "  -w pytest-json-ctrf==0.3.5 \\\n  pytest --ctrf /logs/verifier/ctrf.json /tests/t.py\n"
        "if true; then pip install scipy; fi\npython3 -m pip install -q 'Attrs>=22' -r req.txt\n"
        "uv add numpy pandas>=2\necho install nothing\n"
    )
    assert requested_tools(tmp_path) == {"pytest", "pytest-json-ctrf", "scipy", "attrs",
                                         "numpy", "pandas"}  # fmt: skip


def test_the_seccomp_program_is_whole_instructions_ending_in_a_return() -> None:
    for machine in ("x86_64", "aarch64"):
        program = filter_program(machine)
        assert program is not None and len(program) % 8 == 0
        assert program[-8:-6] == b"\x06\x00"  # BPF_RET | BPF_K
    assert filter_program("riscv64") is None


HIDDEN = """\
import ctypes, os, subprocess, sys


def test_the_tests_get_the_task_environment_back():
    assert "EXPLOREVAL_RESTORE" not in os.environ and "EXPLOREVAL_RESULTS_FD" not in os.environ
    assert "PYTHONSAFEPATH" not in os.environ
    assert "PYTEST_DISABLE_PLUGIN_AUTOLOAD" not in os.environ  # held until pytest read it
    assert os.environ["PYTHONPATH"] == "/app/lib"
    assert os.environ["PYTEST_ADDOPTS"] == "-q"
    assert os.environ["HOME"] == "/root" and os.path.expanduser("~") == "/root"


def test_nothing_can_reach_into_pytest():
    assert ctypes.CDLL(None).prctl(3, 0, 0, 0, 0) == 0  # PR_GET_DUMPABLE: not dumpable
    probe = (
        "import ctypes, os, sys\\n"
        "libc = ctypes.CDLL(None, use_errno=True)\\n"
        "print('ptrace', libc.ptrace(16, int(sys.argv[1]), 0, 0), ctypes.get_errno())\\n"
        "try:\\n    open(f'/proc/{sys.argv[1]}/mem', 'r+b')\\n    print('mem writable')\\n"
        "except OSError as e:\\n    print('mem', e.errno)\\n"
    )
    out = subprocess.run([sys.executable, "-c", probe, str(os.getpid())],
                         capture_output=True, text=True).stdout
    assert out.splitlines() == ["ptrace -1 1", "mem 30"]  # EPERM, EROFS
"""


async def test_the_tests_run_in_the_sealed_environment(tmp_path: Path) -> None:
    app, tests = tmp_path / "app", tmp_path / "tests"
    app.mkdir()
    tests.mkdir()
    (tests / "test_outputs.py").write_text(HIDDEN)
    task_env = {"TEST_DIR": "/tests", "PYTHONPATH": "/app/lib", "PYTEST_ADDOPTS": "-q"}
    config = SandboxConfig(workdir_template=app, tests_dir=tests, env=task_env)
    async with await Sandbox.start(config) as sb:
        result = await verify(sb, "python3 -m pytest /tests", env=task_env, template=app)
    assert result.resolved is True, (result.reasons, result.output[-2000:])
    assert result.audit is not None and result.audit.config_file.endswith("/pytest.ini")
    assert [t.outcome for t in result.tests] == ["passed", "passed"]


def test_pythons_packaging_tools_count_as_tools_on_an_image_that_ships_none(tmp_path: Path) -> None:
    """terminal-bench-core's kv-store-grpc: the gold's ``pip install grpcio-tools`` brings
    setuptools to a Python 3.13 image that ships none, and its ``distutils-precedence.pth`` then
    starts in the test script's pip. The official images ship pip, setuptools and wheel (to
    3.11), so a genuine release of them is exempt like a test tool; a pytest plugin the agent
    chose is not."""
    empty_image = tmp_path / "rootfs"
    empty_image.mkdir()
    check = IndexCheck(None, pristine=empty_image, requested=set())  # type: ignore[arg-type]
    tools = check.tools(set())
    assert set(PACKAGING_TOOLS) == {"pip", "setuptools", "wheel"} <= tools
    assert "pytest" in tools and "pytest-randomly" not in tools


def _dist(site: Path, name: str, *, requires: tuple[str, ...] = (), plugin: bool = True) -> None:
    """A distribution ``name`` in ``site`` whose pytest plugin (module ``<name>_plug``) adds a
    line to the report header when it loads."""
    module = name.replace("-", "_") + "_plug"
    info = site / f"{name.replace('-', '_')}-1.0.dist-info"
    info.mkdir(parents=True)
    meta = f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n"
    meta += "".join(f"Requires-Dist: {r}\n" for r in requires)
    (info / "METADATA").write_text(meta)
    if plugin:
        (info / "entry_points.txt").write_text(f"[pytest11]\n{name} = {module}\n")
        (site / f"{module}.py").write_text(
            f"def pytest_report_header(config):\n    return 'loaded {name}'\n"
        )


def _pytest_with_harness(tmp_path: Path, tool_dists: str | None) -> str:
    """This machine's pytest started as the verifier starts it: the results plugin first,
    autoloading off, the named tools' plugins (the task's own value of the switch restored)."""
    harness = tmp_path / "harness"
    harness.mkdir()
    for name, data in harness_files().items():
        (harness / name).write_bytes(data)
    site = tmp_path / "site-packages"
    _dist(site, "tool-a", requires=("dep-b>=1", "extra-c ; extra == 'dev'"))
    _dist(site, "dep-b")
    _dist(site, "extra-c")
    _dist(site, "agent-d")
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test_env.py").write_text(
        "import os\n\ndef test_the_switch_is_the_tasks_again():\n"
        "    assert os.environ.get('PYTEST_DISABLE_PLUGIN_AUTOLOAD') is None\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "EXPLOREVAL"))}
    env.update({"PYTHONPATH": f"{harness}:{site}", "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
                "EXPLOREVAL_RESTORE": json.dumps({"PYTEST_DISABLE_PLUGIN_AUTOLOAD": None})})  # fmt: skip
    if tool_dists is not None:
        env["EXPLOREVAL_TOOL_DISTS"] = tool_dists
    argv = [sys.executable, "-m", "pytest", "-p", "exploreval_results", "-p", "no:cacheprovider",
            "--rootdir", str(tests), "-c", str(harness / "pytest.ini"), str(tests)]  # fmt: skip
    done = subprocess.run(argv, env=env, capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_only_the_test_tools_plugins_load_with_what_they_require(tmp_path: Path) -> None:
    """jupyter-notebook-server: the gold's anyio ships a pytest plugin, which autoloading would
    load before the tests (agent code: the seal refused the verdict). Autoloading is off; the
    results plugin loads the plugins of the tools the verifier named and of what they require
    (not their extras), by entry point as autoloading would."""
    out = _pytest_with_harness(tmp_path, "pytest,tool-a")
    assert "loaded tool-a" in out and "loaded dep-b" in out
    assert "loaded extra-c" not in out and "loaded agent-d" not in out


def test_this_machines_verification_loads_no_installed_plugin(tmp_path: Path) -> None:
    out = _pytest_with_harness(tmp_path, None)
    assert "loaded" not in out and "1 passed" in out


def test_pip_runs_with_its_own_code_only(tmp_path: Path) -> None:
    """pip's rich imports ``attr`` whenever attrs is installed: under the verifier, pip does not
    load installed packages other than the packaging tools (a package the agent installed never
    runs in the pip that installs the test tools); any other program still imports them."""
    harness = tmp_path / "harness"
    harness.mkdir()
    (harness / "sitecustomize.py").write_bytes(harness_files()["sitecustomize.py"])
    site = tmp_path / "lib" / "site-packages"
    (site / "pip").mkdir(parents=True)
    probe = (
        "try:\n    import attr\n    print('attr loaded')\nexcept ImportError as e:\n    print(e)\n"
    )
    (site / "pip" / "__init__.py").write_text("")
    (site / "pip" / "__main__.py").write_text(probe)
    (site / "attr").mkdir()
    (site / "attr" / "__init__.py").write_text("")
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "pip3.13").write_text(probe)
    env = {**os.environ, "PYTHONPATH": f"{harness}:{site}", "PYTHONSAFEPATH": "1"}

    def run(*argv: str) -> str:
        return subprocess.run([sys.executable, *argv], env=env, capture_output=True, text=True,
                              cwd=tmp_path, timeout=60).stdout.strip()  # fmt: skip

    assert run("-m", "pip") == "pip runs with its own code: attr is not loaded"
    assert (
        run("-X", "utf8", str(tmp_path / "bin" / "pip3.13"))
        == "pip runs with its own code: attr is not loaded"
    )
    assert run("-c", probe) == "attr loaded"


def test_the_images_own_pytest_plugins_are_found_wherever_it_keeps_them(tmp_path: Path) -> None:
    root = tmp_path / "root"
    local = root / "usr/local/lib/python3.13/site-packages"
    venv = root / "app/.venv/lib/python3.12/site-packages"
    _dist(local, "pytest-asyncio")
    _dist(local, "requests", plugin=False)
    _dist(venv, "pytest_timeout")
    # a Harbor task's own test venv: found by what the image holds, not by a list of places
    _dist(root / "opt/verifier-venv/lib/python3.12/site-packages", "pytest-json-ctrf")
    _dist(root / "usr/lib/python3/dist-packages", "pytest-xdist")
    _dist(tmp_path / "host" / "site-packages", "host-plugin")
    (root / "usr/lib").mkdir(parents=True, exist_ok=True)
    (root / "usr/lib/python3.11").symlink_to(tmp_path / "host")  # a link is not the image's
    (root / "srv").symlink_to(tmp_path / "host")
    _dist(root / "proc/1/root/site-packages", "kernel-plugin")  # never searched
    assert image_python_sites(root) == [
        "/app/.venv/lib/python3.12/site-packages",
        "/opt/verifier-venv/lib/python3.12/site-packages",
        "/usr/lib/python3/dist-packages",
        "/usr/local/lib/python3.13/site-packages",
    ]
    assert image_pytest_plugins(root) == {
        "pytest-asyncio",
        "pytest-timeout",
        "pytest-json-ctrf",
        "pytest-xdist",
    }
    assert image_pytest_plugins(None) == set()


def test_a_full_disk_is_named_within_one_percent_of_its_quota() -> None:
    assert disk_filled(2040.5, 2048) and disk_filled(2048, 2048)
    assert not disk_filled(2020, 2048)  # 28 MB free: more than 1 % (20 MB)
    assert disk_filled(500, 505) and not disk_filled(496, 505)  # at least 8 MB
    assert disk_filled(9950, 10_000) and not disk_filled(9890, 10_000)
