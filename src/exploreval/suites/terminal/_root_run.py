"""One command run as root inside a root file system being built, in bubblewrap.

The builder's only way to act on an image: writes go through the image's own sandbox, never
through a host path that a symbolic link in the image could redirect. A failure raises
:class:`ImageBuildError` naming what ran, its exit status and any host it could not reach.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
from pathlib import Path
from typing import Any

from exploreval.core import spawn_tied
from exploreval.suites.terminal._image_recipe import (
    BuildLog,
    ImageBuildError,
)
from exploreval.suites.terminal._output import bwrap_child_pid
from exploreval.suites.terminal._reachability import unreachable_host
from exploreval.suites.terminal._userns import DOCKER_CAPS


def run_in_root(
    rootfs: Path,
    argv: list[str],
    *,
    env: dict[str, str],
    cwd: str = "/",
    binds: list[tuple[Path, str]],
    network: bool,
    what: str,
    log: BuildLog | None,
    scratch: Path,
    timeout: float,
) -> str:
    """Run ``argv`` as root with Docker's default capabilities over ``rootfs`` (a build step);
    with ``network``, a user-mode stack without the host's loopback. Returns its output, or
    raises :class:`ImageBuildError` naming ``what``, the exit status and an unreachable host."""
    command = ["bwrap", "--bind", str(rootfs), "/", "--proc", "/proc", "--dev", "/dev",
               "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
               "--die-with-parent", "--hostname", "buildkitsandbox", "--cap-drop", "ALL"]  # fmt: skip
    for cap in DOCKER_CAPS:
        command += ["--cap-add", cap]
    for source, target in binds:
        command += ["--ro-bind", str(source), target]
    net: Any = None
    block_w = -1
    status_r, status_w = os.pipe()
    pass_fds: list[int] = [status_w]
    command += ["--unshare-net"]
    if network:
        r, w = os.pipe()
        os.write(w, b"nameserver 10.0.2.3\n")
        os.close(w)
        pass_fds.append(r)
        resolv = rootfs / "etc/resolv.conf"
        if resolv.is_symlink():  # (Ubuntu) a link into /run: a plain file to bind over
            resolv.unlink()
        if not resolv.exists():
            resolv.parent.mkdir(parents=True, exist_ok=True)
            resolv.touch()
        command += ["--perms", "0644", "--ro-bind-data", str(r), "/etc/resolv.conf"]
        block_r, block_w = os.pipe()
        pass_fds.append(block_r)
        command += ["--block-fd", str(block_r)]
    command += ["--json-status-fd", str(status_w), "--chdir", cwd, "--clearenv"]
    for key, value in env.items():
        command += ["--setenv", key, value]
    command += ["--", *argv]
    out_path = scratch / f"step-{os.getpid()}-{time.monotonic_ns()}.out"
    with open(out_path, "w+b") as out:
        proc = spawn_tied(command, stdin=subprocess.DEVNULL, stdout=out,
                          stderr=subprocess.STDOUT, pass_fds=tuple(pass_fds))  # fmt: skip
        for fd in pass_fds:
            os.close(fd)
        try:
            if network:
                from exploreval.suites.terminal._network import SlirpNet

                net = SlirpNet(_status_pid(status_r, proc))
                ready = os.read(net._ready_fd, 1)
                os.close(net._ready_fd)
                if ready != b"1":
                    raise ImageBuildError(f"{what}: slirp4netns did not start for the build")
                os.write(block_w, b"1")
            try:
                code = proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                raise ImageBuildError(f"{what}: the build ran out of time") from None
        finally:
            if net is not None:
                net.stop()
            for fd in (status_r, block_w):
                if fd >= 0:
                    with contextlib.suppress(OSError):
                        os.close(fd)
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        out.seek(0)
        output = out.read().decode("utf-8", errors="replace")
    out_path.unlink(missing_ok=True)
    if log is not None:
        log.write(output)
    if code != 0:
        tail = "\n".join(output.splitlines()[-20:])
        host = unreachable_host(output, argv, code)
        reach = f"; it needs {host}, which this machine cannot reach" if host else ""
        raise ImageBuildError(
            f"{what} failed (exit {code}){reach}; last output:\n{tail}", unreachable=host
        )
    return output


def _status_pid(fd: int, proc: subprocess.Popen[bytes]) -> int:
    buf = b""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        chunk = os.read(fd, 4096)
        if not chunk:
            break
        buf += chunk
        child = bwrap_child_pid(buf)
        if child is not None:
            return child
    raise ImageBuildError(f"bwrap did not start for the build (exit {proc.poll()})")
