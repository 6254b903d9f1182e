"""Releases whose tools predate what the sandbox asks of them (issue 43): Ubuntu focal
(``ubuntu:20.04``, ``python:3.8``) has tmux 3.0a and Debian bullseye tmux 3.1c, neither with
``tmux -D``; focal's ``setpriv`` was built before the kernel's newest capabilities and refuses
"all". Such an image runs: its tmux server through a wrapper that keeps the sandbox's life tied
to the server's, its commands with their capabilities dropped by the host's perl before any
program of the image runs (so its setpriv's age does not matter). Real images, built here."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from exploreval.suites.terminal._image import build_image
from exploreval.suites.terminal._image_recipe import BuildRecipe
from exploreval.suites.terminal._sandbox import Sandbox
from exploreval.suites.terminal._sandbox_argv import (
    enter_argv,
    image_package_version,
    tmux_server_argv,
)
from exploreval.suites.terminal._sandbox_config import SandboxConfig
from exploreval.suites.terminal._userns import DOCKER_CAPS


def _status(tmp_path: Path, text: str) -> Path:
    (tmp_path / "var/lib/dpkg").mkdir(parents=True)
    (tmp_path / "var/lib/dpkg/status").write_text(text)
    return tmp_path


@pytest.mark.parametrize(
    ("status", "tmux", "util_linux"),
    [
        ("Package: tmux\nStatus: install ok installed\nVersion: 3.0a-2ubuntu0.4\n\n"
         "Package: util-linux\nVersion: 2.34-0.1ubuntu9.6\n", (3, 0), (2, 34)),
        ("Package: tmuxinator\nVersion: 9.9\n\nPackage: tmux\nPriority: optional\n"
         "Version: 1:3.3a-3\n\nPackage: util-linux\nVersion: 2.38.1-5+deb12u3\n", (3, 3), (2, 38)),
        # a Version line of another package never answers for tmux
        ("Package: tmux\nPriority: optional\n\nPackage: curl\nVersion: 7.88\n", None, None),
        ("", None, None),
    ],
    ids=["focal", "epoch-and-neighbour", "no-version", "empty"],
)  # fmt: skip
def test_package_versions_are_read_from_the_image_as_built(
    tmp_path: Path, status: str, tmux: tuple[int, int] | None, util_linux: tuple[int, int] | None
) -> None:
    root = _status(tmp_path, status)
    assert image_package_version(root, "tmux") == tmux
    assert image_package_version(root, "util-linux") == util_linux
    old = tmux is not None and tmux < (3, 2)
    argv = tmux_server_argv(root, "/c", "/s")
    assert (argv[0] == "/bin/sh") is old and ("-D" in argv) is not old
    assert (
        image_package_version(None, "tmux") is None
        and tmux_server_argv(None, "/c", "/s")[1] == "-D"
    )


#: Docker's capabilities by number (capability.h), to read a status line's mask.
_DOCKER_NUMBERS = {"CAP_CHOWN": 0, "CAP_DAC_OVERRIDE": 1, "CAP_FOWNER": 3, "CAP_FSETID": 4,
                   "CAP_KILL": 5, "CAP_SETGID": 6, "CAP_SETUID": 7, "CAP_SETPCAP": 8,
                   "CAP_NET_BIND_SERVICE": 10, "CAP_NET_RAW": 13, "CAP_SYS_CHROOT": 18,
                   "CAP_MKNOD": 27, "CAP_AUDIT_WRITE": 29, "CAP_SETFCAP": 31}  # fmt: skip


def test_capabilities_are_dropped_by_the_hosts_perl_whatever_the_images_setpriv() -> None:
    """focal's setpriv refuses "all" on a kernel with capabilities it does not know; no program
    of the image drops them any more. The host's perl is given the mask to keep (Docker's with
    many users, none with one) and the kernel's last capability, and runs before the image."""
    last = int(Path("/proc/sys/kernel/cap_last_cap").read_text())
    docker = sum(1 << _DOCKER_NUMBERS[c] for c in DOCKER_CAPS)
    for many_users, keep in ((True, docker), (False, 0)):
        argv = enter_argv(
            ["true"],
            pid=7,
            prlimit=[],
            cwd="/app",
            timeout=None,
            many_users=many_users,
            bare=False,
            env={"A": "1"},
        )
        perl = argv.index("/usr/bin/perl")
        assert argv[:perl].count("--root=/") == 1 and "setpriv" not in argv
        root, cwd, low, high, kernel_last = argv[perl + 3 : perl + 8]
        assert (root, cwd) == ("/proc/7/root", "/app")
        assert int(low) | int(high) << 32 == keep and int(kernel_last) == last
        assert argv[perl + 10 :] == ["1", "A=1", "true"]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("base", "release", "tmux_version"),
    [("ubuntu:20.04", "ubuntu focal", "3.0a"), ("debian:11", "debian bullseye", "3.1c")],
)
async def test_an_old_release_runs_with_its_own_tmux(
    tmp_path: Path, base: str, release: str, tmux_version: str
) -> None:
    """The image's tmux predates 3.2: the pane works, the harness's commands hold what they
    hold on any image (no capability with one user, Docker's with many, focal's old setpriv
    notwithstanding), and when the agent ends its tmux server the sandbox ends, as under
    ``tmux -D``."""
    (tmp_path / "Dockerfile").write_text(f"FROM {base}\nWORKDIR /app\n")
    image = await asyncio.to_thread(
        build_image, BuildRecipe(dockerfile=tmp_path / "Dockerfile", context=tmp_path)
    )
    assert release in image.meta["base"]
    tmux = image_package_version(image.rootfs, "tmux")
    assert tmux is not None and tmux < (3, 2)
    docker = sum(1 << _DOCKER_NUMBERS[c] for c in DOCKER_CAPS)
    for users, expected in (("one", 0), ("many", docker)):
        config = SandboxConfig(image=image.rootfs, workdir="/app", env=image.env, users=users)
        async with await Sandbox.start(config) as sb:
            assert await sb.run_blocking("tmux -V > /app/v; echo $((6*7)) > /app/answer\n",
                                         timeout=20)  # fmt: skip
            assert (await sb.exec(["cat", "/app/v", "/app/answer"])).stdout.split() == [
                "tmux", tmux_version, "42"]  # fmt: skip
            status = (await sb.exec(["grep", "^Cap", "/proc/self/status"])).stdout
            caps = {k.strip(): int(v, 16) for k, v in (ln.split(":") for ln in status.splitlines())}
            assert caps["CapEff"] == expected and caps["CapBnd"] == expected, (users, status)
            assert caps["CapAmb"] == expected  # kept across exec, as docker exec keeps them
            assert await sb.check_alive()
            await sb.send_keys("tmux kill-server\n")
            t0 = time.monotonic()
            while sb.alive and time.monotonic() - t0 < 10:
                await asyncio.sleep(0.05)
            assert not sb.alive  # the wrapper followed its server out
