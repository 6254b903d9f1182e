"""The harness beside the image (issue 56): an image's packages are what its Dockerfile made.

The official ``debian:bookworm-slim`` has no tmux, curl, python3, procps or ca-certificates, and
a Harbor task may pin an older ``ca-certificates`` than the release's security update. Built
here from a real Dockerfile, the pin installs (it failed as a downgrade when the harness's newer
one was in the base), the image's package list is the base's plus what the ``RUN`` installed, and
the agent's pane (the harness's tmux) shows the image as built."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from exploreval.suites.terminal._harness_tree import (
    HARNESS_PYTHON,
    ensure_harness_tree,
)
from exploreval.suites.terminal._image import build_image
from exploreval.suites.terminal._image_recipe import BuildRecipe, BuiltImage
from exploreval.suites.terminal._sandbox import Sandbox
from exploreval.suites.terminal._sandbox_config import SandboxConfig

PIN = "20230311+deb12u1"
#: What exploreval's harness once put into every image.
HARNESS_PACKAGES = {"tmux", "curl", "python3", "procps", "ca-certificates"}


def _installed(rootfs: Path) -> dict[str, str]:
    """package -> version, of what dpkg has installed in the image."""
    found: dict[str, str] = {}
    for block in (rootfs / "var/lib/dpkg/status").read_text().split("\n\n"):
        fields = dict(re.findall(r"^([A-Za-z-]+): (.*)$", block, re.M))
        if "Package" in fields and fields.get("Status", "").endswith(" installed"):
            found[fields["Package"]] = fields["Version"]
    return found


def _build(tmp_path: Path, name: str, text: str) -> BuiltImage:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "Dockerfile").write_text(text)
    return build_image(BuildRecipe(dockerfile=folder / "Dockerfile", context=folder))


def test_the_tree_carries_the_hosts_programs_and_their_libraries() -> None:
    tree = ensure_harness_tree()
    for program in ("tmux", "python3"):
        assert (tree / "bin" / program).is_file()
    assert (tree / "lib" / "ld-linux-x86-64.so.2").is_file() and (tree / "lib/libc.so.6").is_file()
    assert ensure_harness_tree() == tree  # built once


@pytest.mark.slow
async def test_a_pinned_downgrade_builds_and_the_package_list_is_the_dockerfiles(
    tmp_path: Path,
) -> None:
    base = await asyncio.to_thread(_build, tmp_path, "base", "FROM debian:bookworm-slim\n")
    pinned = await asyncio.to_thread(
        _build,
        tmp_path,
        "pinned",
        "FROM debian:bookworm-slim\nRUN apt-get update -qq && apt-get install -y -qq "
        f"--no-install-recommends ca-certificates={PIN} >/dev/null\n",
    )
    before, after = _installed(base.rootfs), _installed(pinned.rootfs)
    assert not HARNESS_PACKAGES & before.keys()  # the base is the official image's minbase
    assert after["ca-certificates"] == PIN
    added = after.keys() - before.keys()
    # what the RUN installed: the pin and what it depends on, nothing of the harness
    assert "ca-certificates" in added and added <= {"ca-certificates", "openssl", "libssl3"}
    assert {p: v for p, v in after.items() if p in before} == before  # nothing else changed
    config = SandboxConfig(image=pinned.rootfs, workdir="/", env=pinned.env)
    async with await Sandbox.start(config) as sb:
        shown = await sb.exec(["dpkg-query", "-W", "-f", "${Package} ${Version}\\n"])
        assert dict(line.split(" ", 1) for line in shown.stdout.splitlines()) == after
        assert await sb.run_blocking("command -v tmux python3 curl > /tmp/found\n", timeout=20)
        assert (await sb.exec(["cat", "/tmp/found"])).stdout == ""  # the agent's PATH: the image's
        run = await sb.exec([HARNESS_PYTHON, "-c", "import pytest; print(pytest.__version__)"])
        assert run.returncode == 0 and run.stdout.strip()  # the harness's Python, beside it


def test_the_tree_carries_the_hosts_certificate_store() -> None:
    from exploreval.suites.terminal._harness_tree import HOST_CA_BUNDLE, harness_ca_bundle

    assert HOST_CA_BUNDLE.is_file()  # this machine's store, its proxy's CA among them
    copy = ensure_harness_tree() / "certs" / HOST_CA_BUNDLE.name
    assert copy.read_bytes() == HOST_CA_BUNDLE.read_bytes()
    assert harness_ca_bundle() == "/opt/exploreval/harness/certs/ca-certificates.crt"


@pytest.mark.slow
async def test_downloads_work_from_an_image_without_ca_certificates(tmp_path: Path) -> None:
    """terminal-bench-core's fix-permissions: ubuntu:24.04 ships no ca-certificates, and its
    test script's uv fetched pytest through this machine's proxy with ``SSL_CERT_FILE`` at the
    image's missing store ("invalid peer certificate"). A sandbox's tools are pointed at the
    harness's copy of the host's store, which every sandbox has."""
    from exploreval.suites.terminal._harness_tree import harness_ca_bundle
    from exploreval.suites.terminal._host_settings import trust_env
    from exploreval.suites.terminal._sealed import verification_tools_env

    image = await asyncio.to_thread(_build, tmp_path, "bare", "FROM debian:bookworm-slim\n")
    assert "ca-certificates" not in _installed(image.rootfs)
    assert not (image.rootfs / "etc/ssl/certs/ca-certificates.crt").exists()
    trusted = verification_tools_env(image.env, tools=True, network=True)
    assert trusted["SSL_CERT_FILE"] == harness_ca_bundle()
    env = {**image.env, **trust_env(harness_ca_bundle())}
    fetch = (
        "import os, ssl, urllib.request\n"
        "ctx = ssl.create_default_context(cafile=os.environ['SSL_CERT_FILE'])\n"
        "print(urllib.request.urlopen('https://pypi.org/simple/pytest/', context=ctx).status)\n"
    )
    config = SandboxConfig(image=image.rootfs, workdir="/", env=env, network=True)
    async with await Sandbox.start(config) as sb:
        run = await sb.exec([HARNESS_PYTHON, "-c", fetch], timeout=60)
        assert run.returncode == 0 and run.stdout.strip() == "200", run.stderr[-500:]
