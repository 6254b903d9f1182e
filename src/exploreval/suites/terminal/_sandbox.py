"""The terminal sandbox: bubblewrap + a tmux server inside it, driven from inside its namespaces.

Layout of one sandbox::

    python (the run)                                   host side
      ├─ prlimit ─exec→ bwrap (as a leased uid; forked by the process-lifetime spawner thread,
      │    │             --die-with-parent; its process group registered with the guardian)
      │    └─ bwrap, pid 1 of a new PID namespace  (``child_pid``; killing it ends everything)
      │         └─ tmux -D server (socket /tmp/.exploreval/tmux.sock; before tmux 3.2 a wrapper
      │              that starts it and ends with it: _sandbox_argv.tmux_server_argv)
      │              └─ bash in the work dir (the agent's pane)
      └─ nsenter ─→ setpriv ─→ tmux client / exec()   entered into *all* the sandbox's namespaces
                                                      as its uid, without capabilities

Every tmux client runs inside the sandbox: a hook the agent sets on its own server
(``set-hook ... save-buffer /etc/x``, ``load-buffer``, ``run-shell``) acts in the sandbox, never
on the host. Nothing of the host is reachable: all namespaces unshared, no capabilities, no
network (unless ``network``: then a user-mode stack, slirp4netns, without the host's loopback).

**Files.** Everything the sandbox can write lives on the episode's disk, a tmpfs whose size is
the episode's quota (:mod:`._rootfs`). A host-system sandbox (built-in tasks) sees this machine's
``/usr`` and ``/etc`` read-only with the work dir, ``/tmp`` and ``/root`` from the disk; an image
sandbox (:mod:`._image`) gets the task's built image as a copy-on-write root. Files the host reads
from the control dir are opened without following links.

**Verification** (:meth:`Sandbox.terminate`, then :func:`._verifier.run_verifier`): the agent's PID
namespace is killed first (every process it started is gone), then the tests run in a *fresh*
sandbox over the same files: new namespaces, tests and harness files on a verification-only
tmpfs, results through a pipe only the test process holds.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import stat
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from exploreval.core import scratch_dir, scratch_root, spawn_tied
from exploreval.suites.terminal._cast import CastRecorder
from exploreval.suites.terminal._errors import SandboxError
from exploreval.suites.terminal._fileevents import FileWatcher
from exploreval.suites.terminal._host_bounds import apply_ipc_limits
from exploreval.suites.terminal._limits import UidLease, sample_tree
from exploreval.suites.terminal._network import EpisodeNetwork, SlirpNet, data_fd
from exploreval.suites.terminal._output import bwrap_child_pid, communicate_capped
from exploreval.suites.terminal._pane import PaneMixin
from exploreval.suites.terminal._rootfs import (
    EpisodeDisk,
    MountError,
    kill_uid,
    wait_gone,
)
from exploreval.suites.terminal._sandbox_argv import (
    bare_root,
    bwrap_root_args,
    enter_argv,
    tmux_server_argv,
)
from exploreval.suites.terminal._sandbox_config import (
    AGENT_HOME,
    BASHRC,
    BASHRC_PATH,
    CTL_DIR,
    PANE_RAW,
    SANDBOX_PATH,
    SANDBOX_SHELL,
    SERVICE_WRAPPER,
    TMUX_CONF,
    TMUX_SOCK,
    EndReason,
    ExecResult,
    SandboxConfig,
    check_traversable,
    chown_tree,
    read_plain_file,
    tmux_conf,
)
from exploreval.suites.terminal._system import require_system
from exploreval.suites.terminal._userns import ManyUsers


class Sandbox(PaneMixin):
    """One live sandbox. Create with ``await Sandbox.start(config)``; always ``await close()``."""

    def __init__(self, config: SandboxConfig) -> None:
        self.config = config
        self.limits = config.limits
        self.end_reason: EndReason = ""
        self.started_at = time.monotonic()
        self.started_wall = time.time()
        self.start_seconds = 0.0
        #: Seconds spent in each phase of the start (benchmarks).
        self.start_phases: dict[str, float] = {}
        self.scratch: Path | None = None
        self.disk: EpisodeDisk | None = None
        self.image_root: Path | None = None
        self.host_workdir: Path | None = None
        self.host_logs: Path | None = None
        self.host_ctl: Path | None = None
        self._lease: UidLease | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._net: SlirpNet | None = None
        self._bare = False  # an image that may lack `timeout` (_sandbox_argv.bare_root)
        self.child_pid = 0
        self._uid = 0
        self._pane = ""
        self._watchdog: asyncio.Task[None] | None = None
        self._watcher: FileWatcher | None = None
        self._closed = False
        #: The agent's processes are gone (terminate()): the files stay for verification.
        self.terminated = False
        self._last_history: str | None = None
        self.cast_recorder = CastRecorder(config.max_cast_bytes)
        self.peak_rss_mb = 0.0
        self.cpu_used_s = 0.0
        self.peak_processes = 0
        #: The agent's shell (its pane) is gone; the sandbox may still be alive.
        self.shell_exited = False
        #: The tmux server no longer answers (the agent removed its socket...).
        self.terminal_unreachable = False
        self.env: dict[str, str] = {}
        #: The user namespace of a many-user root (``users="many"``), shared with verification.
        self.many_users: ManyUsers | None = None
        #: The episode's shared network (compose services), joined instead of a new one.
        self.network_of: EpisodeNetwork | None = None
        #: Ports that listen on a shared network without being the agent's (its services').
        self.foreign_ports: frozenset[int] = frozenset()

    def base_env(self) -> dict[str, str]:
        """The environment of everything in the sandbox (the pane, exec), task variables last."""
        return {
            "PATH": SANDBOX_PATH,
            "HOME": AGENT_HOME,
            "LANG": "C.UTF-8",
            "TERM": "tmux-256color",
            "PIP_RETRIES": "0" if not self.config.network else "2",
            "PIP_NO_INPUT": "1",
            "PYTHONDONTWRITEBYTECODE": "1",
            **self.config.env,
        }

    @property
    def workdir(self) -> str:
        """The work dir inside the sandbox (the task's WORKDIR)."""
        return self.config.workdir

    @property
    def uid(self) -> int:
        """The host uid the sandbox runs as (root inside)."""
        return self._uid

    # -- lifecycle ---------------------------------------------------------------------
    @classmethod
    async def start(
        cls,
        config: SandboxConfig,
        *,
        prepare: Callable[[Path], None] | None = None,
        network_of: EpisodeNetwork | None = None,
    ) -> Sandbox:
        """Make the episode's disk and root, start bwrap + tmux, wait for the first prompt.

        ``prepare(host_workdir)`` runs on the fresh work dir before the sandbox starts
        (solution injection writes there); what it writes becomes the agent's. ``network_of``:
        join the episode's shared network (its services') instead of making a new one.
        """
        require_system(image=config.image is not None, network=config.network)
        sb = cls(config)
        sb.network_of = network_of
        try:
            await sb._start(prepare)
        except BaseException:
            sb.end_reason = sb.end_reason or "start_failed"
            await sb.close()
            raise
        return sb

    def _make_files(self, prepare: Callable[[Path], None] | None) -> None:
        """The episode's disk, root and work dir (blocking: runs off the event loop)."""
        self._lease = UidLease()
        uid = self._uid = self._lease.uid
        root = scratch_root()
        os.chmod(root, 0o711)  # the sandbox uid traverses (never lists) the path to its files
        self.scratch = scratch_dir("terminal")
        os.chmod(self.scratch, 0o711)
        check_traversable(self.scratch)
        try:
            disk = self.disk = EpisodeDisk(self.scratch, uid=uid, quota_mb=self.config.disk_mb,
                                           backing=self.config.disk_backing)  # fmt: skip
        except MountError as exc:
            raise SandboxError(f"the episode's disk could not be mounted: {exc}") from exc
        self.host_ctl = disk.ctl
        workdir = self.config.workdir
        if self.config.image is not None:
            many = self.config.users == "many"
            if many:
                self.many_users = ManyUsers(uid, self._lease.sub_base, self.limits.nproc)
            try:
                self.image_root = disk.mount_image(
                    self.config.image, sub_base=self._lease.sub_base if many else None
                )
            except MountError as exc:
                raise SandboxError(f"the task image could not be mounted: {exc}") from exc
            # read from the image as built: what the agent deletes later changes nothing
            self._bare = bare_root(self.config.image)
            self.host_workdir = self.image_root / workdir.lstrip("/")
            if not self.host_workdir.is_dir():
                self.host_workdir.mkdir(parents=True)
            if prepare is not None:
                prepare(self.host_workdir)
            disk.claim_upper()
        else:
            app = disk.owned_dir(disk.disk / "app")
            template = self.config.workdir_template
            if template is not None:
                if not template.is_dir():
                    raise SandboxError(f"work-dir template {template} is not a directory")
                shutil.copytree(template, app, symlinks=True, dirs_exist_ok=True)
            if prepare is not None:
                prepare(app)
            chown_tree(app, uid)
            disk.owned_dir(disk.disk / "tmp", 0o1777)
            disk.owned_dir(disk.disk / "root", 0o700)
            self.host_workdir = app
        if self.config.logs_dir:
            self.host_logs = disk.owned_dir(disk.disk / "logs")
            disk.owned_dir(self.host_logs / "verifier")
            disk.owned_dir(self.host_logs / "agent")
        for text, target in (
            (tmux_conf(self.config), TMUX_CONF),
            (BASHRC.encode(), BASHRC_PATH),
        ):
            path = self._host(target)
            path.write_bytes(text)
            os.chown(path, uid, uid)
        if self.config.watch_files:
            self._watcher = FileWatcher(self.host_workdir)

    async def _start(self, prepare: Callable[[Path], None] | None) -> None:
        t0 = time.perf_counter()
        await asyncio.to_thread(self._make_files, prepare)
        self.start_phases["files"] = time.perf_counter() - t0
        t1 = time.perf_counter()
        assert self.disk is not None
        fds: list[int] = []
        workdir = self.config.workdir
        self.env = self.base_env()
        try:
            status_r, status_w = os.pipe()
            fds += [status_r, status_w]
            shared = self.network_of
            argv = [
                *(shared.enter_argv(self._uid) if shared is not None else []),
                *self.limits.prlimit_argv(),
                *bwrap_root_args(
                    image_root=self.image_root,
                    disk=self.disk,
                    workdir=workdir,
                    env=self.env,
                    hostname=self.config.hostname,
                    share_net=shared is not None,
                    many_users=self.many_users,
                ),
                "--bind", str(self.host_ctl), CTL_DIR,
            ]  # fmt: skip
            if self.host_logs is not None:
                argv += ["--bind", str(self.host_logs), "/logs"]
            own_net = self.config.network and shared is None
            if own_net or (shared is not None and shared.internet):
                # writable (a copy), as a container's is: a task may ask the agent to fix it
                resolv = str(data_fd(SlirpNet.RESOLV, fds))
                argv += ["--perms", "0644", "--bind-data", resolv, "/etc/resolv.conf"]
            if shared is not None:
                hosts = str(data_fd(shared.hosts_file(), fds))
                argv += ["--perms", "0644", "--bind-data", hosts, "/etc/hosts"]
            # the sandbox waits until the host has set its bounds (and its network is up)
            block_r, block_w = os.pipe()
            fds += [block_r, block_w]
            argv += ["--block-fd", str(block_r)]
            argv += ["--chdir", workdir, "--json-status-fd", str(status_w)]
            if self.image_root is None:
                argv += ["--remount-ro", "/"]
            if self.config.command:
                # a service: its process, its output and its exit status in the control dir
                argv += ["--", "/bin/sh", "-c", SERVICE_WRAPPER, "service", *self.config.command]
            else:
                argv += ["--", *tmux_server_argv(TMUX_CONF, TMUX_SOCK)]
            # joining a shared network needs the host's root for nsenter, then the sandbox's uid
            identity: dict[str, Any] = (
                {} if shared is not None
                else {"user": self._uid, "group": self._uid, "extra_groups": []}
            )  # fmt: skip
            assert self.scratch is not None
            with open(self.scratch / "bwrap.log", "wb") as log:
                self._proc = spawn_tied(
                    argv,
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=log,
                    pass_fds=tuple(fd for fd in fds if fd not in (status_r, block_w))
                    + ((self.many_users.fd,) if self.many_users is not None else ()),
                    env={"PATH": SANDBOX_PATH},
                    **identity,
                )
            os.close(status_w)
            fds.remove(status_w)
            self.child_pid = await self._read_child_pid(status_r)
            lim = self.limits
            await asyncio.to_thread(apply_ipc_limits, self.child_pid, self._uid, lim.memory_mb)
            if own_net:
                self._net = SlirpNet(self.child_pid)
                await self._net.ready()  # the host's addresses blocked there (_host_bounds)
            os.write(block_w, b"1")  # release the sandbox
            self.start_phases["bwrap"] = time.perf_counter() - t1
        finally:
            for fd in fds:
                with contextlib.suppress(OSError):
                    os.close(fd)
        if self.config.command:
            self._watchdog = asyncio.create_task(self._watch_limits())
            self.start_seconds = time.perf_counter() - t0
            return
        t1 = time.perf_counter()
        await self._wait_for_socket()
        self.start_phases["tmux server"] = time.perf_counter() - t1
        t1 = time.perf_counter()
        # One client (inside the sandbox) creates the agent's session and starts the pane
        # recording. The session's environment comes from the client's: the sandbox's own.
        session = [
            "new-session", "-d", "-s", "main", "-x", str(self.config.width),
            "-y", str(self.config.height), "-c", workdir, "-P", "-F", "#{pane_id}", SANDBOX_SHELL,
        ]  # fmt: skip
        if self.config.record_cast:
            session += [";", "pipe-pane", "-t", "main", "-o", f"cat >> {PANE_RAW}"]
        out = await self._tmux(*session)
        self._pane = out.strip().splitlines()[0]
        self.start_phases["session"] = time.perf_counter() - t1
        t1 = time.perf_counter()
        await self._wait_for_prompt()
        self.start_phases["first prompt"] = time.perf_counter() - t1
        self._watchdog = asyncio.create_task(self._watch_limits())
        self.start_seconds = time.perf_counter() - t0
        self.started_at = time.monotonic()
        self.started_wall = time.time()
        if self._watcher is not None:
            self._watcher.drain()

    async def _read_child_pid(self, fd: int) -> int:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 10
        buf = b""
        os.set_blocking(fd, False)
        while True:
            try:
                chunk = os.read(fd, 4096)
            except BlockingIOError:
                chunk = None
            if chunk == b"":
                break
            if chunk:
                buf += chunk
                child = bwrap_child_pid(buf)
                if child is not None:
                    return child
            if loop.time() > deadline:
                break
            await asyncio.sleep(0.001)
        raise SandboxError(f"bwrap did not start: {self._bwrap_log()}")

    def _bwrap_log(self) -> str:
        if self.scratch is None:
            return ""
        with contextlib.suppress(OSError):
            return (self.scratch / "bwrap.log").read_text(errors="replace").strip()[-2000:]
        return ""

    def _host(self, path: str) -> Path:
        """The host path of a file in the control dir (``/tmp/.exploreval`` inside)."""
        assert self.host_ctl is not None and path.startswith(CTL_DIR)
        return self.host_ctl / path[len(CTL_DIR) :].lstrip("/")

    def _bwrap_running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    async def _wait_for_socket(self) -> None:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            assert self.host_ctl is not None
            with contextlib.suppress(OSError):
                if stat.S_ISSOCK(os.lstat(self._host(TMUX_SOCK)).st_mode):
                    return
            if not self._bwrap_running():
                break
            await asyncio.sleep(0.001)
        raise SandboxError(f"tmux did not start in the sandbox: {self._bwrap_log()}")

    async def _wait_for_prompt(self) -> None:
        """Wait until the pane's shell has printed its first prompt: its ``PROMPT_COMMAND``
        writes the prompt marker (a host-side file read; no tmux client per poll)."""
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self._prompt_mark().endswith(b"\n"):
                return
            if not self._bwrap_running():
                break
            await asyncio.sleep(0.001)
        raise SandboxError(
            f"the shell in the sandbox printed no prompt within 10 s: {self._bwrap_log()}"
        )

    @property
    def alive(self) -> bool:
        """False once the agent's sandbox ended (a limit, the agent exited, terminate(), close())."""
        if self._closed or self.end_reason or self.terminated:
            return False
        if not self._bwrap_running():
            self.end_reason = "exited"
            return False
        return True

    async def check_alive(self) -> bool:
        """``alive``, and the agent's pane still exists.

        The agent may end its shell (``exit``, ``C-d``): the tmux server (``exit-empty off``) and
        every file stay, so the sandbox can still be verified, but there is no terminal left to
        act in; ``shell_exited`` is then True.
        """
        if not self.alive:
            return False
        panes = None
        for attempt in range(3):  # a failing client may be transient (a fork bomb's EAGAIN)
            try:
                panes = await self._tmux("list-panes", "-a", "-F", "#{pane_id} #{pane_dead}")
                break
            except SandboxError:
                if not self.alive:
                    return False
                try:  # the server answers but has no pane left: the shell ended
                    await self._tmux("show-options", "-g", "-v", "exit-empty")
                except SandboxError:
                    await asyncio.sleep(0.2 * (attempt + 1))
                    continue
                self.shell_exited = True
                return False
        if panes is None:  # the server lives but answers no client (its socket was removed...)
            self.terminal_unreachable = True
            return False
        for line in panes.splitlines():
            pane, _, dead = line.partition(" ")
            if pane == self._pane:
                if dead.strip() == "1":
                    self.shell_exited = True
                    return False
                return True
        self.shell_exited = True
        return False

    def _kill(self) -> None:
        """Kill every process of the agent's sandbox now (no await: safe in every path)."""
        if self.child_pid:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(self.child_pid, signal.SIGKILL)
        if self._proc is not None and self._proc.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self._proc.pid, signal.SIGKILL)
        if self._net is not None:
            self._net.stop()  # kept: its DNS log (what the agent's phase could not resolve)

    def listening_ports(self) -> list[int]:
        """TCP ports something in the sandbox listens on (its own network namespace's
        ``/proc/net/tcp``/``tcp6``, state LISTEN), read from the host; empty once it ended."""
        if not self.child_pid or self.terminated:
            return []
        ports: set[int] = set()
        for name in ("tcp", "tcp6"):
            try:
                lines = Path(f"/proc/{self.child_pid}/net/{name}").read_text().splitlines()[1:]
            except OSError:
                continue
            for line in lines:
                fields = line.split()
                if len(fields) > 3 and fields[3] == "0A":  # TCP_LISTEN
                    ports.add(int(fields[1].rsplit(":", 1)[1], 16))
        return sorted(ports - self.foreign_ports)

    def service_log(self, limit: int = 1_000_000) -> bytes:
        """A service sandbox's output so far (its last ``limit`` bytes)."""
        if self.host_ctl is None:
            return b""
        with contextlib.suppress(OSError):
            size = os.stat(self.host_ctl / "service.log", follow_symlinks=False).st_size
            return read_plain_file(self.host_ctl, "service.log", limit, max(0, size - limit))
        return b""

    def service_exit(self) -> int | None:
        """A service's exit status once its command ended (None: still running, or unknown)."""
        if self.host_ctl is None:
            return None
        text = read_plain_file(self.host_ctl, "service.exit", 32).strip()
        return int(text) if text.isdigit() else None

    async def terminate(self) -> None:
        """End the agent's sandbox for good, keeping its files: its whole PID namespace is
        killed and reaped, and no process of its uid is left anywhere (checked), so nothing
        the agent started can watch, race or signal the verification that follows."""
        if self.terminated:
            return
        if self._watchdog is not None:
            self._watchdog.cancel()
        if self.config.record_cast and self.child_pid and not self._closed:
            self._cast_tick()
        self._kill()
        if self._proc is not None:
            await asyncio.to_thread(self._reap_bwrap)
        if self._uid:
            # Nothing can have left the PID namespace; check anyway (a second kill is cheap).
            sub_base = self.many_users.sub_base if self.many_users is not None else None
            await asyncio.to_thread(kill_uid, self._uid, sub_base)
        self.terminated = True

    def _reap_bwrap(self) -> None:
        assert self._proc is not None
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait(timeout=10)
        if self.child_pid:
            wait_gone(self.child_pid, 5.0)

    async def close(self) -> None:
        """Kill the sandbox, unmount and remove its files; idempotent, safe on every ending."""
        if self._closed:
            return
        self.end_reason = self.end_reason or "closed"
        try:
            await self.terminate()
        finally:
            self._closed = True
            await asyncio.to_thread(self._cleanup_files)

    def _cleanup_files(self) -> None:
        self._kill()
        if self._watcher is not None:
            self._watcher.close()
            self._watcher = None
        if self.disk is not None:
            self.disk.close()
            self.disk = None
        elif self.scratch is not None:
            shutil.rmtree(self.scratch, ignore_errors=True)
        if self.many_users is not None:
            self.many_users.close()
            self.many_users = None
        if self._lease is not None:
            self._lease.release()
            self._lease = None

    async def __aenter__(self) -> Sandbox:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- limits ----------------------------------------------------------------------
    async def _watch_limits(self) -> None:
        lim = self.limits
        at_cap_since: float | None = None
        while True:
            await asyncio.sleep(lim.sample_interval_s)
            if not self._bwrap_running():
                self.end_reason = self.end_reason or "exited"
                return
            now = time.monotonic()
            reason: EndReason = ""
            if now - self.started_at > lim.wall_s:
                reason = "wall"
            sample = await asyncio.to_thread(sample_tree, self.child_pid)
            if sample is None:
                self.end_reason = self.end_reason or "exited"
                return
            self.cpu_used_s = sample.cpu_s
            self.peak_rss_mb = max(self.peak_rss_mb, sample.memory_mb)
            self.peak_processes = max(self.peak_processes, sample.threads)
            if self.disk is not None:
                self.disk.sample_peak()
            if sample.cpu_s > lim.cpu_s:
                reason = reason or "cpu"
            if sample.memory_mb > lim.memory_mb:  # resident + shared memory objects
                reason = reason or "memory"
            if sample.threads >= lim.nproc - 2:
                at_cap_since = at_cap_since if at_cap_since is not None else now
                if now - at_cap_since >= lim.nproc_grace_s:
                    reason = reason or "nproc"
            else:
                at_cap_since = None
            if reason:
                self.end_reason = reason
                if self.config.record_cast:
                    self._cast_tick()
                self._kill()
                return

    # -- entering the sandbox --------------------------------------------------------------
    def _enter_argv(
        self, argv: list[str], *, cwd: str, timeout: float | None, env: dict[str, str]
    ) -> list[str]:
        return enter_argv(argv, pid=self.child_pid, prlimit=self.limits.prlimit_argv(), cwd=cwd,
                          timeout=timeout, many_users=self.many_users is not None,
                          bare=self._bare, env=env)  # fmt: skip

    async def _run_inside(
        self,
        argv: list[str],
        *,
        env: dict[str, str],
        cwd: str,
        timeout: float,
        input: bytes | None,
        max_output_bytes: int,
    ) -> tuple[int | None, str, str, float]:
        proc = await asyncio.create_subprocess_exec(
            *self._enter_argv(argv, cwd=cwd, timeout=timeout, env=env),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env={"PATH": SANDBOX_PATH},  # the host's tools; the command's own is env
            start_new_session=True,
        )
        t0 = time.perf_counter()
        bare = self._bare  # no timeout inside: the host's is the only one
        try:
            out, err = await asyncio.wait_for(communicate_capped(
                proc, input or b"", max_output_bytes), timeout=timeout + (0 if bare else 10))  # fmt: skip
        except BaseException as exc:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)  # nsenter and what it forked
            await proc.wait()
            if bare and isinstance(exc, TimeoutError):
                return 137, "", "", time.perf_counter() - t0  # as `timeout -s KILL` reports it
            raise
        returncode = proc.returncode
        if returncode is not None and returncode < 0:
            returncode = 128 - returncode
        return returncode, out, err, time.perf_counter() - t0

    # -- file evidence -------------------------------------------------------------------
    def file_events(self) -> list[tuple[str, str]]:
        """Accesses under the work dir since the last call: (relative path, event)."""
        return self._watcher.drain() if self._watcher is not None else []

    # -- exec ---------------------------------------------------------------------------
    async def exec(
        self,
        argv: list[str],
        *,
        timeout: float = 30.0,
        input: bytes | None = None,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        clean_env: bool = False,
        max_output_bytes: int = 1_000_000,
    ) -> ExecResult:
        """Run ``argv`` inside the agent's sandbox (same namespaces, files and uid), off the pane.

        The command enters the sandbox's namespaces with ``nsenter`` as its root user without
        any capability (``setpriv``), with the sandbox's rlimits; stdin, stdout and stderr are
        pipes to this process. The environment is the sandbox's plus ``env``, or exactly ``env``
        with ``clean_env``. On timeout the command is killed (SIGKILL) and ``timed_out`` is set.
        ``cwd`` defaults to the work dir. Used by the file editor; never by verification.
        """
        if not self.alive:
            raise SandboxError(f"sandbox ended ({self.end_reason or 'terminated'})")
        run_env = dict(env or {}) if clean_env else {**self.env, **(env or {})}
        limit = max(timeout, 0.01)
        returncode, out, err, took = await self._run_inside(
            argv,
            env=run_env,
            cwd=cwd or self.config.workdir,
            timeout=limit,
            input=input,
            max_output_bytes=max_output_bytes,
        )
        return ExecResult(
            argv=list(argv),
            returncode=returncode,
            stdout=out,
            stderr=err,
            timed_out=returncode in (None, 137) and took >= limit,
            duration_s=took,
        )
