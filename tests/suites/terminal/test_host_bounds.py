"""Host bounds: an agent inside a sandbox cannot harm the host (docs/terminal.md, "Limits").

Each attack here once worked: ``/dev/shm`` (a tmpfs of half the host's RAM) and an unmapped
memfd took 4 GB under ``memory_mb=1024``; 1.5 million empty files took 2.9 GB of kernel slab
under a 1 MB quota; a sparse file printed to the pane became a 366 MB cast; a service the host
bound to 0.0.0.0 answered the sandbox at the host's own address. And a program the harness runs
in an image (``setpriv``, ``timeout``) could be replaced to run with every capability of the
sandbox's user namespace, which would undo the rest. Real sandboxes; sizes kept small.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import threading
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest

from exploreval.suites.terminal._cast import CastRecorder, marker
from exploreval.suites.terminal._host_bounds import host_networks, ipc_limits
from exploreval.suites.terminal._limits import Limits
from exploreval.suites.terminal._rootfs import inode_count
from exploreval.suites.terminal._sandbox import Sandbox
from exploreval.suites.terminal._sandbox_config import SandboxConfig

from .conftest import sandbox_processes

HARBOR_HELLO = (
    Path(__file__).parents[2] / "fixtures" / "terminal" / "real" / "harbor" / "hello-world"
)


def _shmem_mb() -> float:
    with open("/proc/meminfo") as fh:
        for line in fh:
            if line.startswith("Shmem:"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no Shmem in /proc/meminfo")


async def _image_config(**extra: object) -> SandboxConfig:
    from exploreval.suites.terminal._image import build_image
    from exploreval.suites.terminal._image_recipe import BuildRecipe
    from exploreval.suites.terminal._tasks import load_task

    task = load_task(HARBOR_HELLO, image="build")
    assert task.image is not None
    image = await asyncio.to_thread(build_image, BuildRecipe(**task.image.model_dump()))
    rootfs, workdir = image.rootfs, task.container_workdir
    return SandboxConfig(image=rootfs, workdir=workdir, env=image.env, **extra)  # type: ignore[arg-type]


async def _config(kind: str, **extra: object) -> SandboxConfig:
    """``host``: the host system's sandbox; ``one`` / ``many``: an image's, with that root."""
    if kind == "host":
        return SandboxConfig(**extra)  # type: ignore[arg-type]
    return await _image_config(users=kind, **extra)


KINDS = pytest.mark.parametrize("kind", ["host", "one", "many"])


# -- 6. memory outside every cap ----------------------------------------------------------------
@pytest.mark.slow
@KINDS
async def test_dev_shm_is_on_the_episode_disk_and_dev_is_read_only(kind: str) -> None:
    config = await _config(kind, disk_mb=32, limits=Limits(memory_mb=128))
    async with await Sandbox.start(config) as sb:
        before = _shmem_mb()
        hog = "head -c 100000000 /dev/zero > /dev/shm/big; echo rc=$?"
        fill = await sb.exec(["sh", "-c", hog], timeout=30)
        during = _shmem_mb()
        dev = await sb.exec(["sh", "-c", "echo x > /dev/hog"])
        assert "No space left on device" in fill.stderr, fill.stdout + fill.stderr
        assert "rc=1" in fill.stdout
        assert during - before < 40  # the disk's 32 MB, not the 100 MB asked for
        assert "Read-only file system" in dev.stderr
        assert sb.disk is not None and sb.disk.used_mb() > 30  # it is the disk's quota
    assert sandbox_processes() == []


_MEMFD = (
    "import mmap, os, sys, time\n"
    "fd = os.memfd_create('hog')\n"
    "chunk = 16 * 2**20\n"
    "for i in range(int(sys.argv[1]) // 16):\n"
    "    if sys.argv[2] == 'write':\n"
    "        os.write(fd, b'x' * chunk)\n"
    "    else:  # grown through a mapping that is dropped again: only the descriptor holds it\n"
    "        os.ftruncate(fd, (i + 1) * chunk)\n"
    "        m = mmap.mmap(fd, chunk, offset=i * chunk)\n"
    "        m.write(b'x' * chunk)\n"
    "        m.close()\n"
    "    time.sleep(0.01)\n"
    "if sys.argv[2] == 'mapped':  # the descriptor closed, one mapping of the whole kept\n"
    "    keep = mmap.mmap(fd, int(sys.argv[1]) * 2**20)\n"
    "    os.close(fd)\n"
    "print('grown', flush=True)\n"
    "time.sleep(60)\n"
)


@pytest.mark.slow
@pytest.mark.parametrize("how", ["write", "unmapped", "mapped"])
async def test_a_memfd_beyond_memory_mb_ends_the_episode(how: str) -> None:
    """An unmapped memfd is in no process's resident set: the watchdog adds every shared memory
    object a process of the sandbox holds open or maps, once each."""
    limits = Limits(memory_mb=128, address_space_mb=1024, wall_s=60)
    async with await Sandbox.start(SandboxConfig(limits=limits)) as sb:
        before = peak = _shmem_mb()
        await sb.send_keys(f"python3 -c \"$(cat <<'EOF'\n{_MEMFD}EOF\n)\" 400 {how}\n")
        t0 = time.monotonic()
        while sb.alive and time.monotonic() - t0 < 20:
            peak = max(peak, _shmem_mb())
            await asyncio.sleep(0.02)
        assert not sb.alive and sb.end_reason == "memory", await sb.history()
        assert sb.peak_rss_mb > 128
    assert peak - before < 400  # killed before the 400 MB asked for were held
    await asyncio.sleep(0.2)
    assert _shmem_mb() - before < 40  # and given back
    assert sandbox_processes() == []


_SYSV = (
    "import ctypes, os\n"
    "libc = ctypes.CDLL(None, use_errno=True)\n"
    "def get(mb):\n"
    "    r = libc.shmget(0, ctypes.c_size_t(mb * 2**20), 0o1600)\n"
    "    return r if r >= 0 else os.strerror(ctypes.get_errno())\n"
    "print('one', get(200))\n"  # more than memory_mb in one segment
    "print('a', get(100))\n"
    "print('b', get(100))\n"  # in all: past memory_mb
    "for name in ('shmall', 'shmmax'):\n"
    "    try:\n"
    "        open(f'/proc/sys/kernel/{name}', 'w').write('18446744073692774399')\n"
    "        print(name, 'raised')\n"
    "    except OSError as e:\n"
    "        print(name, e.strerror)\n"
    "print('userns', libc.unshare(0x10000000 | 0x08000000), os.strerror(ctypes.get_errno()))\n"
)


@pytest.mark.slow
@KINDS
async def test_system_v_shared_memory_stays_within_memory_mb(kind: str) -> None:
    """Segments live in the sandbox's IPC namespace, whose limits the host set from memory_mb
    before the sandbox ran: the sandbox cannot raise them (``/proc/sys`` is read-only) nor make
    an IPC namespace of its own (no user namespace can be made inside)."""
    config = await _config(kind, limits=Limits(memory_mb=128))
    async with await Sandbox.start(config) as sb:
        done = await sb.exec(["python3", "-c", _SYSV], timeout=30)
        shown = (await sb.exec(["cat", "/proc/sys/kernel/shmall"])).stdout.strip()
    lines = dict(line.split(" ", 1) for line in done.stdout.splitlines())
    assert lines["one"] == "Invalid argument", done.stdout + done.stderr  # > shmmax
    assert lines["a"].isdigit() and lines["b"] == "No space left on device"  # > shmall
    assert lines["shmall"] == lines["shmmax"] == "Read-only file system"
    assert lines["userns"].startswith("-1 ")
    assert int(shown) == ipc_limits(128)["shmall"]


# -- 7. inodes -----------------------------------------------------------------------------------
_FILES = (
    "import os, sys\n"
    "n = 0\n"
    "try:\n"
    "    for n in range(int(sys.argv[2])):\n"
    "        open(os.path.join(sys.argv[1], f'f{n}'), 'w').close()\n"
    "except OSError as e:\n"
    "    print('stopped', n, e.strerror)\n"
    "else:\n"
    "    print('made', n + 1)\n"
)


@pytest.mark.slow
@pytest.mark.parametrize("backing", ["memory", "file"])
async def test_files_past_the_inode_limit_fail_inside(backing: str) -> None:
    """Empty files cost the host an inode each (about 2 KB of slab on a tmpfs) and nothing of
    the size quota: the disk's inode count follows its size (one per 16 KiB, at least 4,096)."""
    config = SandboxConfig(disk_mb=64, disk_backing=backing)  # type: ignore[arg-type]
    limit = inode_count(64)
    assert limit == 4096
    async with await Sandbox.start(config) as sb:
        made = await sb.exec(["python3", "-c", _FILES, "/tmp", "6000"], timeout=60)
        shm = await sb.exec(["python3", "-c", _FILES, "/dev/shm", "100"], timeout=60)
        assert sb.disk is not None
        stat = os.statvfs(sb.disk.disk)
    assert "stopped" in made.stdout and "No space left on device" in made.stdout, made.stdout
    created = int(made.stdout.split()[1])
    assert limit - 64 < created < limit + 256  # mkfs rounds up to whole inode tables
    assert stat.f_files < limit + 256
    assert "No space left on device" in shm.stdout  # /dev/shm shares them


# -- 8. output amplification ----------------------------------------------------------------------
def test_the_cast_recorder_drops_nuls_caps_reads_and_charges_what_json_costs(
    tmp_path: Path,
) -> None:
    raw = tmp_path / "pane.raw"
    raw.write_bytes(b"hello\0\0\0 world\r\n")
    rec = CastRecorder(max_bytes=20_000)
    rec.tick(tmp_path, "pane.raw", 0.5)
    assert json.loads(rec.lines[0])[2] == "hello world\r\n" and rec.nuls == 3
    # a run of control bytes costs 6 bytes each in JSON: charged as such, cut at the budget
    with raw.open("ab") as fh:
        fh.write(b"\x01" * 50_000 + b"tail")
    rec.tick(tmp_path, "pane.raw", 1.0)
    assert rec.full and rec.size <= 20_000 and rec.skipped > 40_000
    with raw.open("ab") as fh:
        fh.write(b"z" * 3_000_000)
    rec.tick(tmp_path, "pane.raw", 2.0)  # never read: only counted
    doc = rec.document({"version": 2, "width": 80, "height": 24}, 3.0)
    assert len(doc.encode()) < 20_000 + 500
    last = json.loads(doc.splitlines()[-1])
    assert last[2] == marker(rec.skipped) and rec.offset == raw.stat().st_size
    # within the budget, a burst longer than one read is skipped past and marked in place
    raw.write_bytes(b"")
    burst = CastRecorder(max_bytes=4_000_000)
    raw.write_bytes(b"a" * 2_500_000)
    burst.tick(tmp_path, "pane.raw", 1.0)
    assert burst.skipped == 1_500_000 and not burst.full
    assert json.loads(burst.lines[-1])[2] == marker(1_500_000)


@pytest.mark.slow
async def test_a_sparse_file_and_control_bytes_printed_to_the_pane_stay_within_the_cast_cap(
    tmp_path: Path,
) -> None:
    cap = 200_000
    config = SandboxConfig(max_cast_bytes=cap, disk_mb=256)
    async with await Sandbox.start(config) as sb:
        sparse = "truncate -s 16M /tmp/sparse && cat /tmp/sparse"
        command = f"{sparse} && head -c 2000000 /dev/zero | tr '\\0' '\\1'; echo; echo done"
        assert await sb.run_blocking(command + "\n", timeout=60)
        await asyncio.sleep(0.5)
        tracemalloc.start()
        try:
            sb.flush_cast()
            cast = sb.cast(title="amplify")
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert len(cast.encode()) < cap + 1000
    lines = cast.strip("\n").split("\n")
    header = json.loads(lines[0])
    assert header["version"] == 2 and header["title"] == "amplify"
    events = [json.loads(line) for line in lines[1:]]
    assert all(isinstance(e[0], float) and e[1] == "o" and isinstance(e[2], str) for e in events)
    assert "\0" not in "".join(e[2] for e in events)
    assert "bytes of output not recorded]" in events[-1][2]
    assert sb.cast_recorder.nuls >= 2**24 or sb.cast_recorder.skipped > 2**24
    assert peak < 40 * 2**20, peak  # one bounded read at a time, never the whole recording


# -- 9. the host's own addresses ------------------------------------------------------------------
class _Listener:
    """A TCP service of the host's on 0.0.0.0 (and ::), counting who connects."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("", 0), family=socket.AF_INET6, dualstack_ipv6=True)
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        self.sock.settimeout(0.2)
        self._stop = False
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.accepted += 1
            conn.close()

    def close(self) -> None:
        self._stop = True
        self._thread.join()
        self.sock.close()


@pytest.fixture
def listener() -> Iterator[_Listener]:
    served = _Listener()
    try:
        yield served
    finally:
        served.close()


_PROBE = (
    "import socket, sys, time\n"
    "port = int(sys.argv[1])\n"
    "for host in sys.argv[2:]:\n"
    "    t0 = time.monotonic()\n"
    "    try:\n"
    "        socket.create_connection((host, port), 3).close()\n"
    "        print(host, 'CONNECTED')\n"
    "    except OSError as e:\n"
    "        print(host, 'failed', type(e).__name__, round(time.monotonic() - t0, 1))\n"
    "t0 = time.monotonic()\n"
    "try:\n"
    "    socket.getaddrinfo('pypi.org', 443)\n"
    "    print('dns answered')\n"
    "except socket.gaierror as e:\n"
    "    print('dns', e.errno, round(time.monotonic() - t0, 1))\n"
    "try:\n"
    "    socket.socket(socket.AF_PACKET, socket.SOCK_RAW)\n"
    "    print('packet socket OPENED')\n"
    "except OSError as e:\n"
    "    print('packet socket', e.strerror)\n"
)


def _host_addresses() -> list[str]:
    """This machine's own addresses (not loopback, not link-local) and slirp's host alias."""
    found = []
    for net in host_networks():
        if net.endswith(("/32", "/128")) and not net.startswith(("127.", "::1", "fe80")):
            found.append(net.rsplit("/", 1)[0])
    return [*found, "127.0.0.1"]


def _routes(pid: int) -> str:
    argv = ["nsenter", f"--net=/proc/{pid}/ns/net", "--", "ip", "route", "show", "table", "main"]
    v4 = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    v6 = subprocess.run([*argv[:-4], "-6", *argv[-4:]], capture_output=True, text=True).stdout
    return v4 + v6


async def _probe(sb: Sandbox, port: int) -> dict[str, str]:
    hosts = _host_addresses()
    done = await sb.exec(["python3", "-c", _PROBE, str(port), *hosts], timeout=60)
    out = {}
    for line in done.stdout.splitlines():
        key, _, rest = line.partition(" ")
        if key == "packet":
            key, _, rest = rest.partition(" ")
            key = "packet " + key
        out[key] = rest
    assert out, done.stderr
    return out


def _assert_blocked(out: dict[str, str], routes: str) -> None:
    for host in _host_addresses():
        assert out[host].startswith("failed"), (host, out)
        assert float(out[host].rsplit(" ", 1)[1]) < 4
    assert "10.0.2.2 " in routes and "unreachable 127.0.0.0/8" in routes
    assert out["dns"] == "answered" or out["dns"].split()[0] in ("-2", "-5"), out  # it returned
    assert not out.get("packet socket", "").startswith("OPENED")


@pytest.mark.slow
@KINDS
async def test_the_hosts_own_addresses_are_unreachable_from_a_sandbox_with_a_network(
    kind: str, listener: _Listener
) -> None:
    config = await _config(kind, network=True)
    async with await Sandbox.start(config) as sb:
        out = await _probe(sb, listener.port)
        routes = _routes(sb.child_pid)
        for host in _host_addresses():
            if ":" not in host and not host.startswith("127."):
                assert f"unreachable {host} " in routes, routes
        caps = (await sb.exec(["grep", "CapEff", "/proc/self/status"])).stdout.split()[1]
        assert not int(caps, 16) & (1 << 12 | 1 << 13)  # neither CAP_NET_ADMIN nor CAP_NET_RAW
        if kind == "host":  # its system has ip(8): the sandbox's root cannot drop a route
            drop = await sb.exec(["ip", "route", "del", "unreachable", "10.0.2.2"])
            assert drop.returncode != 0 and "Operation not permitted" in drop.stderr
        assert "10.0.2.2 " in _routes(sb.child_pid)
    _assert_blocked(out, routes)
    assert listener.accepted == 0


@pytest.mark.slow
async def test_a_compose_network_with_internet_blocks_the_hosts_addresses_too(
    listener: _Listener,
) -> None:
    from exploreval.suites.terminal._network import EpisodeNetwork

    network = await EpisodeNetwork(["main"]).start(internet=True)
    try:
        async with await Sandbox.start(SandboxConfig(network=True), network_of=network) as sb:
            out = await _probe(sb, listener.port)
            routes = _routes(network.pid)
            drop = await sb.exec(["ip", "route", "del", "unreachable", "10.0.2.2"])
    finally:
        network.close()
    _assert_blocked(out, routes)
    assert drop.returncode != 0
    assert listener.accepted == 0


# -- what would undo all of the above: a program of the sandbox run with its namespace's powers ----
_TROJAN = (
    "p=/usr/bin/timeout; mv $p $p.real && "
    "printf '#!/bin/sh\\ngrep CapEff /proc/self/status >> /tmp/seen\\n"
    'ip route del unreachable 10.0.2.2 2>>/tmp/seen\\nexec /usr/bin/timeout.real "$@"\\n\' > $p'
    " && chmod +x $p"
)


@pytest.mark.slow
@pytest.mark.parametrize("users", ["one", "many"])
async def test_a_replaced_program_of_the_image_never_runs_with_more_than_the_agent_has(
    users: str,
) -> None:
    """The harness enters the sandbox's namespaces, which gives it every capability of the
    sandbox's user namespace; the image's own ``setpriv`` used to drop them, so an agent that
    replaced it (or ``env``, ``timeout``) got them all: CAP_SYS_ADMIN over its mounts and IPC,
    CAP_NET_ADMIN over its routes. The host's own program drops them before any of the image's
    runs."""
    config = await _image_config(users=users, network=True)
    async with await Sandbox.start(config) as sb:
        planted = await sb.exec(["sh", "-c", _TROJAN])
        assert planted.returncode == 0, planted.stderr
        await sb.exec(["true"])
        await sb.screen()  # a tmux client too
        seen = (await sb.exec(["cat", "/tmp/seen"])).stdout
        own = (await sb.exec(["grep", "CapEff", "/proc/self/status"])).stdout
        routes = _routes(sb.child_pid)
    masks = {int(line.split()[1], 16) for line in seen.splitlines() if line.startswith("CapEff")}
    assert len(masks) == 1 and masks == {int(own.split()[1], 16)}, seen
    assert not masks.pop() & (1 << 21 | 1 << 12)  # no CAP_SYS_ADMIN, no CAP_NET_ADMIN
    assert "10.0.2.2 " in routes


def test_the_ipc_limits_wait_for_the_namespaces_uid_map() -> None:
    """bwrap reports its child's pid before the child maps its uid (4 starts in 30 here): the
    limits written at once were refused ("cannot create /proc/sys/kernel/shmmax: Permission
    denied") and, under load, episodes failed to start. A namespace whose map comes 0.3 s
    late, as a slow child's would: the limits wait for it, then hold."""
    from exploreval.suites.terminal._host_bounds import apply_ipc_limits

    uid, memory_mb = 54_321, 64
    proc = subprocess.Popen(["unshare", "--user", "--ipc", "sleep", "30"])
    try:
        ns = f"/proc/{proc.pid}/ns/user"
        while os.readlink(ns) == os.readlink("/proc/self/ns/user"):
            time.sleep(0.001)  # unshare has not made its namespace yet
        late = threading.Timer(0.3, Path(f"/proc/{proc.pid}/uid_map").write_text, [f"0 {uid} 1"])
        late.start()
        apply_ipc_limits(proc.pid, uid, memory_mb)
        late.join()
        argv = ["nsenter", f"--ipc=/proc/{proc.pid}/ns/ipc", "cat", "/proc/sys/kernel/shmmax"]
        shmmax = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
        assert int(shmmax) == ipc_limits(memory_mb)["shmmax"]
    finally:
        proc.kill()
        proc.wait()
