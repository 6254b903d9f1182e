"""Real task images built here from real Dockerfiles (issue 17, CI): Terminal-Bench's own task
template as its PyPI release ships it, and a public Harbor task (tests/fixtures/terminal/real).

Both build through the package registries only (Debian/Ubuntu mirrors, PyPI); images are cached
by content, so a CI run builds each once.
"""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
import urllib.request
from pathlib import Path

import pytest

from exploreval.suites.terminal._image import build_image
from exploreval.suites.terminal._image_cache import images_root
from exploreval.suites.terminal._image_recipe import BuildRecipe
from exploreval.suites.terminal._sandbox import Sandbox
from exploreval.suites.terminal._sandbox_config import SandboxConfig
from exploreval.suites.terminal._sealed import verification_tools_env
from exploreval.suites.terminal._tasks import TB1_PRIVATE, _tb1_tests
from exploreval.suites.terminal._verify import verify

pytestmark = pytest.mark.slow

#: terminal-bench 0.2.18's source distribution (its ``cli/template-task`` is the task template
#: ``tb tasks create`` copies), pinned by the hash PyPI publishes for it.
TBENCH_SDIST = "terminal_bench-0.2.18.tar.gz"
TBENCH_SHA256 = "787c494a882d441a7c25b60d848c0273269451b4babb596008adcc0d2331004b"


@pytest.fixture(scope="module")
def tbench_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    with urllib.request.urlopen("https://pypi.org/pypi/terminal-bench/json", timeout=60) as r:
        release = json.load(r)["releases"]["0.2.18"]
    url = next(f["url"] for f in release if f["filename"] == TBENCH_SDIST)
    with urllib.request.urlopen(url, timeout=120) as r:
        data = r.read()
    assert hashlib.sha256(data).hexdigest() == TBENCH_SHA256
    out = tmp_path_factory.mktemp("tbench")
    prefix = "terminal_bench-0.2.18/terminal_bench/cli/template-task/"
    with tarfile.open(fileobj=io.BytesIO(data)) as archive:
        members = [m for m in archive.getmembers() if m.name.startswith(prefix)]
        archive.extractall(out, members=members, filter="data")
    return out / prefix


def _template_recipe(template: Path) -> BuildRecipe:
    """The template task's image as Terminal-Bench builds it (its own files left out)."""
    return BuildRecipe(
        dockerfile=template / "Dockerfile",
        context=template,
        terminal_bench_tools=True,
        exclude=tuple(sorted(TB1_PRIVATE - {"Dockerfile"})),
    )


async def _verify(sb: Sandbox, tests: Path, image_env: dict[str, str]) -> object:
    env = verification_tools_env({**image_env, "TEST_DIR": "/tests"}, tools=True, network=True)
    return await verify(sb, "bash /tests/run-tests.sh", parser="pytest", env=env, network=True,
                        timeout=600)  # fmt: skip


async def test_terminal_bench_template_builds_and_its_tests_run_as_shipped(
    tbench_template: Path,
) -> None:
    """Its Dockerfile (FROM t-bench/ubuntu-24-04: Ubuntu noble + tmux + asciinema, WORKDIR /app)
    builds; its run-tests.sh (apt-get, Astral's installer, uv, pytest 8.4.1) runs unmodified in
    the verifier: an untouched work dir fails, the file its test asks for passes."""
    image = build_image(_template_recipe(tbench_template))
    assert "ubuntu noble" in image.meta["base"] and image.workdir == "/app"
    if "base_dir" in image.meta:  # built by this version (CI's cache starts empty)
        # the files the Dockerfile left alone are its base's, stored once (issue 43)
        base = images_root() / "bases" / image.meta["base_dir"] / "rootfs"
        tmux = (image.rootfs / "usr/bin/tmux").stat()
        assert tmux.st_ino == (base / "usr/bin/tmux").stat().st_ino and tmux.st_nlink >= 2
        assert image.meta["shared_bytes"] > 100e6
    assert (image.rootfs / "usr/bin/tmux").exists() and (
        image.rootfs / "usr/bin/asciinema"
    ).exists()
    tests = _tb1_tests(tbench_template)
    config = SandboxConfig(image=image.rootfs, workdir="/app", tests_dir=tests, env=image.env)
    async with await Sandbox.start(config) as sb:
        untouched = await _verify(sb, tests, image.env)
    async with await Sandbox.start(config) as sb:
        await sb.run_blocking("echo 'Hello, world!' > /app/hello-world.txt\n", timeout=10)
        solved = await _verify(sb, tests, image.env)
    assert untouched.resolved is False and untouched.sessions == 1  # type: ignore[attr-defined]
    assert solved.resolved is True, solved.reasons  # type: ignore[attr-defined]
    # a failure on an emulated base says so (a resolved one has nothing to explain)
    emulated = bool(image.meta["emulated"])  # this machine reaches no registry: emulated
    assert untouched.emulated_base is emulated and solved.emulated_base is False  # type: ignore[attr-defined]
    assert any("built on an emulated base" in r for r in untouched.reasons) is emulated  # type: ignore[attr-defined]
    assert [t.name.split("::")[-1] for t in solved.tests] == ["test_hello_file_exists_example"]  # type: ignore[attr-defined]


async def test_apt_installs_in_a_sandbox_of_a_built_image(tbench_template: Path) -> None:
    """Issue 43: a test script's (or an agent's) ``apt-get install`` in a one-uid sandbox. apt
    used to switch to its ``_apt`` user to download (``setgroups``/``seteuid 42`` refused, its
    0700 download directories unreachable); the image tells it to stay root, so a package from
    the distribution's mirror installs, as in the container."""
    image = build_image(_template_recipe(tbench_template))
    conf = image.rootfs / "etc/apt/apt.conf.d/99exploreval-one-uid"
    assert 'APT::Sandbox::User "root";' in conf.read_text()
    config = SandboxConfig(image=image.rootfs, workdir="/app", env=image.env, network=True)
    async with await Sandbox.start(config) as sb:
        done = await sb.exec(["bash", "-c", "apt-get update -qq && apt-get install -y -qq "
                              "--no-install-recommends jq >/dev/null && jq --version"],
                             timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip().startswith("jq-")
