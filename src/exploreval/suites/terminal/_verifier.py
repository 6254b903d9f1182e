"""The verification run: the hidden tests in a fresh sandbox over the episode's files, watched.

:func:`run_verifier` runs it (``verify`` calls it). What the run is made of:

* **New namespaces over the agent's final files** (the work dir, and for an image its whole
  changed root); the agent's processes are gone (or, with ``keep``, in other namespaces).
* **The verifier's own mounts**, on a verification-only tmpfs (``vdisk``) the agent never saw:
  the tests at ``/tests`` (a writable copy), ``/logs``, the harness files read-only at
  ``/opt/exploreval/verify`` (results plugin, start-up file, an empty pytest configuration, the
  collection marker), a fresh ``$HOME``, the test venv and the uv project; in an image, its
  pristine uv cache, byte code and work-dir venv under throwaway layers. Their mount points
  are made real directories first: a link the agent left there is removed, never followed.
* **A results channel the host can check**: a ``SOCK_SEQPACKET`` socket pair whose messages
  carry their sender's pid, stamped by the kernel (``SO_PASSCRED``): a session is a *process*,
  not what a message says about itself.
* **A file-access trace** of the run (:mod:`._trace`) over every file system the run can touch,
  audited after the run (:mod:`._audit`).
* **No process may reach into another**: seccomp denies ``ptrace`` and cross-process memory
  calls, ``/proc`` is read-only (:mod:`._seccomp`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import posixpath
import shutil
import signal
import socket
import stat
import struct
import subprocess
import time
from pathlib import Path, PurePosixPath
from typing import IO, TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from exploreval.core import spawn_tied
from exploreval.suites.terminal._agent_files import agent_files_in_dir, agent_files_in_upper
from exploreval.suites.terminal._audit import VerificationAudit, audit_trace
from exploreval.suites.terminal._index import DEFAULT_INDEX, IndexCheck
from exploreval.suites.terminal._output import bwrap_child_pid, capped_text, exit_code
from exploreval.suites.terminal._reward_channel import read_reward_dir
from exploreval.suites.terminal._rootfs import kill_uid, mount_overlay
from exploreval.suites.terminal._seccomp import filter_fd
from exploreval.suites.terminal._trace import FileTracer
from exploreval.suites.terminal._view import SandboxView

if TYPE_CHECKING:
    from exploreval.suites.terminal._sandbox import Sandbox

#: Where the verifier's own files are, inside the verification sandbox.
HARNESS_DIR = "/opt/exploreval/verify"
VERIFY_HOME = "/opt/exploreval-home"
VERIFY_VENV_DIR = "/opt/exploreval-venv"
VERIFY_PROJECT = "/opt/exploreval-project"
UV_CACHE_PATH = "/opt/exploreval-uv-cache"
PYCACHE_PATH = "/opt/exploreval-pycache"
#: The image's own project venv (its work dir's ``.venv``, as built), seen by the test venv's
#: interpreter after its own packages (``_sealed.SITECUSTOMIZE``).
IMAGE_VENV_PATH = "/opt/exploreval-image-venv"
#: Paths the verification mounts over: never a link or a file of the agent's.
RESERVED = ("/tests", "/logs", "/opt", "/opt/exploreval", HARNESS_DIR, VERIFY_HOME,
            VERIFY_VENV_DIR, VERIFY_PROJECT, UV_CACHE_PATH, PYCACHE_PATH,
            IMAGE_VENV_PATH)  # fmt: skip
#: Where uv would look for a project or workspace above the verifier's own project: a
#: ``pyproject.toml`` the agent left there is hidden from the verification (a link is removed).
ANCESTOR_PROJECTS = ("/pyproject.toml", "/opt/pyproject.toml")
#: The image's pristine trees the verification sees under a throwaway layer of its own (the
#: agent's changes to them are not seen): (path, vdisk name).
PRISTINE_TREES = ((UV_CACHE_PATH, "uv-cache"), (PYCACHE_PATH, "pycache"),
                  (IMAGE_VENV_PATH, "image-venv"))  # fmt: skip
#: Size of the verification-only tmpfs beyond the tests' own size (the test venv lives there).
VERIFY_DISK_MB = 4352
#: Cap on the results a verification run may send.
MAX_RESULTS_BYTES = 8_000_000
_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/opt/exploreval/bin"
_UCRED = struct.Struct("iII")


class VerifierRun(BaseModel):
    """What one verification run produced, as the host read it (never from the sandbox's files
    except the reward files Harbor tasks write, read without following links)."""

    schema_version: int = 2
    returncode: int | None
    stdout: str
    stderr: str
    #: Messages the results plugin sent (pytest sessions and test reports), each with
    #: ``hostpid``: the sender's pid as the kernel stamped it.
    events: list[dict[str, Any]] = Field(default_factory=list)
    events_error: str | None = None
    timed_out: bool = False
    duration_s: float = 0.0
    #: reward.txt / reward.json of /logs/verifier, as written during this run (Harbor).
    reward_text: str | None = None
    network: bool = False
    #: What the run actually ran, checked from outside (None: not traced).
    audit: VerificationAudit | None = None
    #: Names the run's own network failed to resolve (``._dns_log``), in order.
    unresolved_hosts: list[str] = Field(default_factory=list)


def pristine_sources(workdir: str) -> dict[str, str]:
    """Where each of :data:`PRISTINE_TREES` comes from in the image: the same path, but for
    :data:`IMAGE_VENV_PATH`, the work dir's ``.venv`` (what ``uv run`` in the work dir uses in
    Terminal-Bench: a task's image may ``uv pip install`` its tests' imports there)."""
    sources = {path: path for path, _name in PRISTINE_TREES}
    sources[IMAGE_VENV_PATH] = posixpath.join(workdir, ".venv")
    return sources


def real_dir_in(root: Path, path: str) -> Path | None:
    """``root``/``path`` if every component of ``path`` is a real directory (no link is
    followed on the host: an overlay's ``lowerdir`` resolves links on the host)."""
    host = root
    for part in PurePosixPath(path).relative_to("/").parts:
        host = host / part
        try:
            if not stat.S_ISDIR(os.lstat(host).st_mode):
                return None
        except OSError:
            return None
    return host


def prepare_disk(
    sandbox: Sandbox,
    harness: dict[str, bytes],
    project: dict[str, bytes],
) -> Path:
    """The verification-only tmpfs: tests (writable copy), logs, harness, home, venv, project."""
    assert sandbox.disk is not None
    uid = sandbox.uid
    tests = sandbox.config.tests_dir
    size = VERIFY_DISK_MB
    if tests is not None and tests.is_dir():
        size += int(sum(f.stat().st_size for f in tests.rglob("*") if f.is_file()) / 2**20) + 1
    vdisk = sandbox.disk.mount_verification(size)
    target = vdisk / "tests"
    if tests is not None and tests.is_dir():
        shutil.copytree(tests, target, symlinks=True)
    else:
        target.mkdir()
    # A writable copy owned by the sandbox's uid, as a container's /tests is: Terminal-Bench
    # tests build extensions in place. The agent never sees it; the task's files are untouched.
    for dirpath, _dirs, filenames in os.walk(target):
        os.chown(dirpath, uid, uid)
        os.chmod(dirpath, 0o755)
        for name in filenames:
            path = os.path.join(dirpath, name)
            if not os.path.islink(path):
                os.chown(path, uid, uid)
                os.chmod(path, os.stat(path).st_mode | 0o644)
    disk = sandbox.disk
    logs = disk.owned_dir(vdisk / "logs")
    disk.owned_dir(logs / "verifier")
    disk.owned_dir(logs / "agent")
    harness_dir = vdisk / "harness"
    harness_dir.mkdir(mode=0o755)
    for name, data in sorted(harness.items()):
        target = harness_dir / name
        target.write_bytes(data)
        target.chmod(0o644)
    for name in ("home", "venv"):
        disk.owned_dir(vdisk / name, 0o700)
    disk.owned_dir(vdisk / "shm", 0o1777)  # the tests' /dev/shm: on this traced disk
    project_dir = disk.owned_dir(vdisk / "project", 0o755)
    for name, data in sorted(project.items()):
        target = project_dir / name
        for parent in reversed(target.relative_to(project_dir).parents[:-1]):
            disk.owned_dir(project_dir / parent, 0o755)
        target.write_bytes(data)
        os.chown(target, uid, uid)
    if sandbox.image_root is not None:
        sources = pristine_sources(sandbox.config.workdir)
        for path, name in PRISTINE_TREES:
            source = sources[path]
            if real_dir_in(disk.dir / "lower", source) is not None:
                # The image's tree as built (uv's cache, its byte code, its project venv), with
                # a throwaway upper layer on this tmpfs for locks, downloads and new byte code.
                disk.owned_dir(vdisk / f"{name}-upper")
                (vdisk / f"{name}-work").mkdir(mode=0o700)
                mount_overlay(disk.dir, lower=f"lower{source}", upper=f"vdisk/{name}-upper",
                              work=f"vdisk/{name}-work", target=f"vdisk/{name}")  # fmt: skip
            else:  # the image has none: an empty one, never a directory the agent made there
                disk.owned_dir(vdisk / name)
    return vdisk


def hidden_projects(root: Path) -> list[str]:
    """The :data:`ANCESTOR_PROJECTS` the agent left as files under an image's ``root`` (to be
    hidden under an empty mount); a link there is removed, never followed."""
    found = []
    for path in ANCESTOR_PROJECTS:
        host = root / path.lstrip("/")
        with contextlib.suppress(OSError):
            st = os.lstat(host)
            if stat.S_ISLNK(st.st_mode):
                os.unlink(host)
            elif stat.S_ISREG(st.st_mode):
                found.append(path)
    return found


def reserve_mount_points(root: Path) -> list[str]:
    """Make the verification's mount points under an image's ``root`` real directories: a link
    or a file the agent left at one is removed (never followed). Returns what was removed."""
    removed = []
    for path in RESERVED:
        host = root / path.lstrip("/")
        try:
            st = os.lstat(host)
        except FileNotFoundError:
            continue
        except OSError:
            continue
        if stat.S_ISDIR(st.st_mode):
            continue
        with contextlib.suppress(OSError):
            os.unlink(host)
            removed.append(path)
    return removed


def sandbox_view(sandbox: Sandbox, vdisk: Path, template: Path | None) -> SandboxView:
    """Where the verification's paths are on the host, and which files are the agent's."""
    assert sandbox.disk is not None
    mounts = [
        ("/tests", vdisk / "tests"),
        ("/logs", vdisk / "logs"),
        (HARNESS_DIR, vdisk / "harness"),
        (VERIFY_HOME, vdisk / "home"),
        (VERIFY_VENV_DIR, vdisk / "venv"),
        (VERIFY_PROJECT, vdisk / "project"),
    ]
    for path, name in PRISTINE_TREES:
        if (vdisk / name).is_dir():
            mounts.append((path, vdisk / name))
    if sandbox.image_root is not None:
        agent = agent_files_in_upper(sandbox.disk.disk / "upper", sandbox.disk.dir / "lower")
        return SandboxView(root=sandbox.image_root, mounts=mounts, agent_paths=agent)
    disk = sandbox.disk.disk
    workdir = sandbox.config.workdir
    agent = agent_files_in_dir(disk / "app", workdir, template)
    agent |= agent_files_in_dir(disk / "tmp", "/tmp", None)
    agent |= agent_files_in_dir(disk / "root", "/root", None)
    mounts += [(workdir, disk / "app"), ("/tmp", disk / "tmp"), ("/root", disk / "root")]
    return SandboxView(root=Path("/"), mounts=mounts, agent_paths=agent)


async def run_verifier(
    sandbox: Sandbox,
    command: str,
    *,
    env: dict[str, str],
    timeout: float,
    harness: dict[str, bytes] | None = None,
    project: dict[str, bytes] | None = None,
    template: Path | None = None,
    network: bool = False,
    max_output_bytes: int = 200_000,
    keep_agent: bool = False,
    config_file: str = "",
    index_url: str = DEFAULT_INDEX,
    tools: set[str] | None = None,
) -> VerifierRun:
    """Run the hidden tests in a fresh sandbox over ``sandbox``'s files (module docstring).

    ``harness``: file name -> bytes, read-only at :data:`HARNESS_DIR`. ``project``: the uv
    project the test command's uv uses (:data:`VERIFY_PROJECT`), seeded from the image.
    ``template``: a host-system task's pristine work dir (the agent's files are what differ).
    ``keep_agent``: the agent's processes keep running; the verifier joins only their network
    namespace (Terminal-Bench's semantics for servers the tests talk to). ``index_url``: the
    package index (simple API) the audit checks test tools the agent installed against;
    ``tools``: the distributions the task's test scripts install (:mod:`._index`)."""
    from exploreval.suites.terminal._errors import SandboxError
    from exploreval.suites.terminal._network import SlirpNet, data_fd
    from exploreval.suites.terminal._sandbox_argv import bwrap_root_args

    if not sandbox.terminated and not keep_agent:
        raise SandboxError("terminate() the agent's sandbox before verifying it")
    if keep_agent and not sandbox.alive:
        raise SandboxError(f"the agent's sandbox ended ({sandbox.end_reason}): no server to keep")
    assert sandbox.disk is not None and sandbox.scratch is not None
    uid = sandbox.uid
    hidden: list[str] = []
    if sandbox.image_root is not None:
        await asyncio.to_thread(reserve_mount_points, sandbox.image_root)
        hidden = await asyncio.to_thread(hidden_projects, sandbox.image_root)
    vdisk = await asyncio.to_thread(prepare_disk, sandbox, harness or {}, project or {})
    view = await asyncio.to_thread(sandbox_view, sandbox, vdisk, template)
    await asyncio.to_thread(view.index_agent_files)
    tracer = FileTracer(interesting=set(view.agent_inodes))
    watched_trees = [vdisk / name for _path, name in PRISTINE_TREES]
    for watched in (sandbox.image_root or sandbox.disk.disk, vdisk, *watched_trees):
        if watched.is_dir() and os.path.ismount(watched):
            tracer.mark(watched)
    fds: list[int] = []
    ours: socket.socket | None = None
    status_r = block_w = held_ns = -1
    proc: subprocess.Popen[bytes] | None = None
    net: SlirpNet | None = None
    out_file: IO[bytes] | None = None
    err_file: IO[bytes] | None = None
    started = time.perf_counter()
    tracer.start()
    if keep_agent:
        # a kept process may hold a file open for writing, or mapped: whatever it writes there
        # from now on is not seen as a write, so such a file is the agent's from the start
        kept = await asyncio.to_thread(writable_files_of, sandbox.child_pid)
        view.agent_inodes.update(kept)
        tracer.interesting.update(kept)
    try:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        ours.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
        results_w = theirs.detach()
        fds.append(results_w)
        status_r, status_w = os.pipe()
        fds.append(status_w)
        run_env = {**env, "EXPLOREVAL_RESULTS_FD": str(results_w)}
        enter: list[str] = []
        shared = sandbox.network_of  # the episode's services: the tests reach them by name
        if shared is not None:
            enter = shared.enter_argv(uid)
        elif keep_agent:
            # as root: enter the agent's network namespace, then become the sandbox's uid
            enter = ["nsenter", f"--net=/proc/{sandbox.child_pid}/ns/net", "--",
                     "setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--"]  # fmt: skip
        join = bool(enter)
        argv = [
            *enter,
            *sandbox.limits.prlimit_argv(),
            *bwrap_root_args(
                image_root=sandbox.image_root,
                disk=sandbox.disk,
                workdir=sandbox.config.workdir,
                env=run_env,
                hostname=sandbox.config.hostname,
                share_net=join,
                many_users=sandbox.many_users,  # the tests run as root with the task's users
            ),
            "--remount-ro", "/proc",
            "--bind", str(vdisk / "tests"), "/tests",
            "--bind", str(vdisk / "logs"), "/logs",
            "--ro-bind", str(vdisk / "harness"), HARNESS_DIR,
            "--bind", str(vdisk / "home"), VERIFY_HOME,
            "--bind", str(vdisk / "venv"), VERIFY_VENV_DIR,
            "--bind", str(vdisk / "project"), VERIFY_PROJECT,
            # /dev is bwrap's fresh tmpfs, made after the trace starts: the only writable
            # place in it, /dev/shm, is the traced verification disk's, and the rest of /dev
            # is read-only (device nodes stay usable), so nothing the tests write goes unseen
            "--bind", str(vdisk / "shm"), "/dev/shm", "--remount-ro", "/dev",
        ]  # fmt: skip
        for path, name in PRISTINE_TREES:
            if (vdisk / name).is_dir():
                argv += ["--bind", str(vdisk / name), path]
        for path in hidden:
            argv += ["--ro-bind", "/dev/null", path]
        seccomp = filter_fd()
        if seccomp is not None:
            fds.append(seccomp)
            argv += ["--seccomp", str(seccomp)]
        if network and shared is not None:
            await shared.attach_internet()  # the services get it too, as Docker gives them one
        elif network and keep_agent and sandbox._net is None:
            # the shared network namespace gets the user-mode stack now (agent included)
            sandbox._net = SlirpNet(sandbox.child_pid)
            await sandbox._net.ready()
        if shared is not None:
            hosts = str(data_fd(shared.hosts_file(), fds))
            argv += ["--perms", "0644", "--bind-data", hosts, "/etc/hosts"]
        if network:
            # writable (a copy), as a container's is: a task may ask the agent to fix it
            resolv = str(data_fd(SlirpNet.RESOLV, fds))
            argv += ["--perms", "0644", "--bind-data", resolv, "/etc/resolv.conf"]
        # bwrap waits for the host before it sets up the sandbox: its namespace is held for
        # the trace, and the network comes up.
        block_r, block_w = os.pipe()
        fds.append(block_r)
        argv += ["--block-fd", str(block_r)]
        argv += ["--chdir", sandbox.config.workdir, "--json-status-fd", str(status_w)]
        if sandbox.image_root is None:
            argv += ["--remount-ro", "/"]
        argv += ["--", "bash", "-c", command]
        out_file = open(vdisk / "stdout", "w+b")  # noqa: SIM115 - closed below
        err_file = open(vdisk / "stderr", "w+b")  # noqa: SIM115 - closed below
        identity: dict[str, Any] = {} if join else {"user": uid, "group": uid, "extra_groups": []}
        proc = spawn_tied(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=out_file,
            stderr=err_file,
            pass_fds=tuple(fds)
            + ((sandbox.many_users.fd,) if sandbox.many_users is not None else ()),
            env={"PATH": _PATH},
            **identity,
        )
        for fd in fds:
            os.close(fd)
        fds.clear()
        reader = asyncio.ensure_future(asyncio.to_thread(_read_results, ours))
        child = await _read_status_pid(status_r, proc)
        if child:
            # The trace names a file by the path its event's mount has from here, and a mount of
            # a namespace that has died is named from its own root (/logs/verifier/reward.txt
            # became /verifier/reward.txt on a loaded machine, where the trace is read late:
            # the reward's writer went unjudged). The namespace is held until the trace's last
            # event is read, so every file keeps its name.
            with contextlib.suppress(OSError):  # bwrap failed: its stderr says why
                held_ns = os.open(f"/proc/{child}/ns/mnt", os.O_RDONLY | os.O_CLOEXEC)
        if network and child and not join:
            net = SlirpNet(child)
            await net.ready()
        if block_w >= 0:
            with contextlib.suppress(BrokenPipeError):  # bwrap failed: its stderr says why
                os.write(block_w, b"1")
            os.close(block_w)
            block_w = -1
        timed_out = False
        try:
            await asyncio.wait_for(asyncio.to_thread(proc.wait), timeout=timeout)
        except TimeoutError:
            timed_out = True
        # Whatever the test command left running dies with its namespace, before any read.
        if child:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(child, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        returncode = await asyncio.to_thread(proc.wait)
        if keep_agent:  # the agent's processes were kept for the tests: they end now
            await sandbox.terminate()
        else:
            await asyncio.to_thread(
                kill_uid, uid, sandbox.many_users.sub_base if sandbox.many_users else None
            )
        messages, overflow = await reader
        trace = await asyncio.to_thread(tracer.stop)
        if held_ns >= 0:
            os.close(held_ns)
            held_ns = -1
        events, events_error = _parse_events(messages, overflow)
        sessions = {int(e["hostpid"]) for e in events if e.get("e") == "start"}
        collected = _collected_elsewhere(events, sandbox.config.tests_dir)
        roots = {proc.pid} | ({child} if child else set())
        reward = read_reward_dir(vdisk / "logs" / "verifier")
        index = IndexCheck(view, pristine=sandbox.disk.dir / "lower" if sandbox.image_root
                           else None, index_url=index_url, requested=tools)  # fmt: skip
        audit = await asyncio.to_thread(
            audit_trace, trace, view, roots=roots, session_pids=sessions,
            config_file=config_file, rootdir="/tests", index=index, collected=collected,
            reward=reward.identity,
        )  # fmt: skip
        if reward.tampered:
            audit.violations.append(f"the reward channel was tampered with: {reward.tampered}")
        out_file.seek(0)
        err_file.seek(0)
        stdout = capped_text(out_file.read(max_output_bytes + 1), max_output_bytes)
        stderr = capped_text(err_file.read(max_output_bytes + 1), max_output_bytes)
        return VerifierRun(
            returncode=None if timed_out else exit_code(returncode),
            stdout=stdout,
            stderr=stderr,
            events=events,
            events_error=events_error,
            timed_out=timed_out,
            duration_s=time.perf_counter() - started,
            reward_text=reward.text,
            network=network,
            audit=audit,
            unresolved_hosts=net.unresolved() if net is not None else [],
        )
    finally:
        tracer.close()
        for fd in (*fds, status_r, block_w, held_ns):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        if ours is not None:
            ours.close()
        if proc is not None and proc.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        if net is not None:
            net.stop()
        for handle in (out_file, err_file):
            if handle is not None:
                handle.close()


def writable_files_of(root_pid: int) -> dict[tuple[int, int], str]:
    """(device, inode) of every file a process of ``root_pid``'s tree holds open for writing
    or has mapped shared and writable (``/proc/<pid>/fdinfo`` flags, ``maps``)."""
    found: dict[tuple[int, int], str] = {}
    pids: list[int] = []
    queue = [root_pid]
    while queue and len(pids) < 100_000:
        pid = queue.pop()
        pids.append(pid)
        with contextlib.suppress(OSError):
            for tid in os.listdir(f"/proc/{pid}/task"):
                with (
                    contextlib.suppress(OSError, ValueError),
                    open(f"/proc/{pid}/task/{tid}/children") as fh,
                ):
                    queue.extend(int(c) for c in fh.read().split())
    for pid in pids:
        with contextlib.suppress(OSError):
            for name in os.listdir(f"/proc/{pid}/fd"):
                with contextlib.suppress(OSError, ValueError):
                    with open(f"/proc/{pid}/fdinfo/{name}") as fh:
                        flags = next(
                            int(line.split()[1], 8) for line in fh if line.startswith("flags:")
                        )
                    if flags & (os.O_WRONLY | os.O_RDWR):
                        st = os.stat(f"/proc/{pid}/fd/{name}")
                        if stat.S_ISREG(st.st_mode):
                            path = os.readlink(f"/proc/{pid}/fd/{name}")
                            found[(st.st_dev, st.st_ino)] = path
        with contextlib.suppress(OSError):
            with open(f"/proc/{pid}/maps") as fh:
                lines = [line.split() for line in fh]
            for parts in lines:
                if len(parts) >= 6 and parts[1].startswith("rw") and parts[1][3] == "s":
                    with contextlib.suppress(OSError):
                        st = os.stat(f"/proc/{pid}/map_files/{parts[0]}")
                        found[(st.st_dev, st.st_ino)] = " ".join(parts[5:])
    return found


def _collected_elsewhere(events: list[dict[str, Any]], tests: Path | None) -> dict[str, bytes]:
    """Test files the sessions collected outside /tests that share a path suffix with a hidden
    test file: path -> that hidden file's bytes (the audit checks they are the test command's
    own copies)."""
    if tests is None or not tests.is_dir():
        return {}
    found: dict[str, bytes] = {}
    for event in events:
        if event.get("e") != "items" or not isinstance(event.get("items"), list):
            continue
        for item in event["items"]:
            path = str(item[1]) if isinstance(item, list) and len(item) == 2 else ""
            if not path.startswith("/") or path.startswith("/tests/") or path in found:
                continue
            parts = path.strip("/").split("/")
            for i in range(len(parts)):
                hidden = tests.joinpath(*parts[i:])
                if hidden.is_file() and not hidden.is_symlink():
                    found[path] = hidden.read_bytes()
                    break
    return found


async def _read_status_pid(fd: int, proc: subprocess.Popen[bytes]) -> int:
    """bwrap's child pid (its PID 1 in the new namespace, as the host sees it), or 0."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 10
    buf = b""
    os.set_blocking(fd, False)
    while loop.time() < deadline:
        try:
            chunk = os.read(fd, 4096)
        except BlockingIOError:
            chunk = None
        if chunk == b"":
            return 0
        if chunk:
            buf += chunk
            child = bwrap_child_pid(buf)
            if child is not None:
                return child
        if proc.poll() is not None and not chunk:
            return 0
        await asyncio.sleep(0.001)
    return 0


def _read_results(
    sock: socket.socket, limit: int = MAX_RESULTS_BYTES
) -> tuple[list[tuple[int, bytes]], bool]:
    """Every message on the results channel until every sender is gone: (sender's host pid,
    bytes), the pid stamped by the kernel (0 when a message carried none). Capped."""
    out: list[tuple[int, bytes]] = []
    size = 0
    overflow = False
    while True:
        try:
            data, ancillary, _flags, _addr = sock.recvmsg(1 << 20, socket.CMSG_SPACE(_UCRED.size))
        except OSError:
            break
        if not data:
            break
        pid = 0
        for level, kind, payload in ancillary:
            if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS:
                pid = _UCRED.unpack(payload[: _UCRED.size])[0]
        size += len(data)
        if size > limit:
            overflow = True
            continue
        out.append((pid, data))
    return out, overflow


def _parse_events(
    messages: list[tuple[int, bytes]], overflow: bool
) -> tuple[list[dict[str, Any]], str | None]:
    events: list[dict[str, Any]] = []
    bad = 0
    for pid, data in messages:
        for line in data.split(b"\n"):
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except ValueError:
                bad += 1
                continue
            if isinstance(value, dict):
                value["hostpid"] = pid
                events.append(value)
            else:
                bad += 1
    error = None
    if overflow:
        error = f"the results channel carried more than {MAX_RESULTS_BYTES} bytes"
    elif bad:
        error = f"{bad} message(s) on the results channel were not JSON objects"
    return events, error
