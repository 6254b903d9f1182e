"""Releases whose tools predate what the sandbox asks of them (issue 43): Ubuntu focal
(``ubuntu:20.04``, ``python:3.8``) has tmux 3.0a and Debian bullseye tmux 3.1c, neither with
``tmux -D``; focal's ``setpriv`` was built before the kernel's newest capabilities and refuses
"all". Such an image runs: its pane is the harness's tmux beside the image (the image's own is
never used), its commands with their capabilities dropped by the host's perl before any
program of the image runs (so its setpriv's age does not matter). Real images, built here."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from exploreval.suites.terminal._harness_tree import HARNESS_ROOT, HARNESS_TMUX
from exploreval.suites.terminal._image import build_image
from exploreval.suites.terminal._image_recipe import BuildRecipe
from exploreval.suites.terminal._sandbox import Sandbox
from exploreval.suites.terminal._sandbox_argv import enter_argv, tmux_server_argv
from exploreval.suites.terminal._sandbox_config import SandboxConfig
from exploreval.suites.terminal._userns import DOCKER_CAPS


def test_the_pane_server_is_the_harness_tmux_whatever_the_image_has() -> None:
    """focal's tmux 3.0a and bullseye's 3.1c have no ``-D``: the server is never the image's."""
    argv = tmux_server_argv("/c", "/s")
    assert argv == [HARNESS_TMUX, "-D", "-f", "/c", "-S", "/s"]
    assert HARNESS_TMUX.startswith(HARNESS_ROOT + "/")


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
    ("base", "release"), [("ubuntu:20.04", "ubuntu focal"), ("debian:11", "debian bullseye")]
)
async def test_an_old_release_runs_with_the_harness_tmux_beside_it(
    tmp_path: Path, base: str, release: str
) -> None:
    """The image has no tmux (its official image has none, and the harness adds nothing to it):
    the pane is the harness's tmux 3.3a beside the image, with the image's own bash (focal's
    glibc is 2.31, the harness's the host's); the harness's commands hold what they hold on any
    image (no capability with one user, Docker's with many, focal's old setpriv
    notwithstanding); and when the agent ends the server the sandbox ends, as under ``tmux -D``."""
    (tmp_path / "Dockerfile").write_text(f"FROM {base}\nWORKDIR /app\n")
    image = await asyncio.to_thread(
        build_image, BuildRecipe(dockerfile=tmp_path / "Dockerfile", context=tmp_path)
    )
    assert release in image.meta["base"]
    status_file = (image.rootfs / "var/lib/dpkg/status").read_text()
    assert "\nPackage: tmux\n" not in status_file and "\nPackage: bash\n" in status_file
    docker = sum(1 << _DOCKER_NUMBERS[c] for c in DOCKER_CAPS)
    for users, expected in (("one", 0), ("many", docker)):
        config = SandboxConfig(image=image.rootfs, workdir="/app", env=image.env, users=users)
        async with await Sandbox.start(config) as sb:
            command = ("(command -v tmux || echo none; echo $TMUX | cut -d, -f1; "
                       "echo $BASH_VERSION; echo $((6*7))) > /app/v\n")  # fmt: skip
            assert await sb.run_blocking(command, timeout=20)
            lines = (await sb.exec(["cat", "/app/v"])).stdout.split()
            assert lines[0] == "none" and lines[1] == "/tmp/.exploreval/tmux.sock"
            assert lines[2][0] in "45" and lines[3] == "42"
            status = (await sb.exec(["grep", "^Cap", "/proc/self/status"])).stdout
            caps = {k.strip(): int(v, 16) for k, v in (ln.split(":") for ln in status.splitlines())}
            assert caps["CapEff"] == expected and caps["CapBnd"] == expected, (users, status)
            assert caps["CapAmb"] == expected  # kept across exec, as docker exec keeps them
            assert await sb.check_alive()
            await sb.send_keys(f"{HARNESS_TMUX} -S $(echo $TMUX | cut -d, -f1) kill-server\n")
            t0 = time.monotonic()
            while sb.alive and time.monotonic() - t0 < 10:
                await asyncio.sleep(0.05)
            assert not sb.alive  # the sandbox followed its server out
