"""Limits that hold: each hostile workload ends the sandbox cleanly and leaves nothing behind."""

import asyncio
import contextlib
import os
import time
from pathlib import Path

import pytest

from exploreval.suites.terminal._env import TerminalEnv
from exploreval.suites.terminal._errors import SandboxError
from exploreval.suites.terminal._limits import Limits
from exploreval.suites.terminal._sandbox import Sandbox
from exploreval.suites.terminal._sandbox_config import SandboxConfig
from exploreval.suites.terminal._verify import disk_filled

from .conftest import sandbox_processes

pytestmark = pytest.mark.slow


def _load() -> float:
    return os.getloadavg()[0]


async def _until_ended(sb: Sandbox, seconds: float) -> float:
    t0 = time.monotonic()
    while sb.alive and time.monotonic() - t0 < seconds:
        await asyncio.sleep(0.05)
    return time.monotonic() - t0


@pytest.mark.parametrize(
    ("workload", "limits", "reason", "deadline"),
    [
        (":(){ :|:& };:", Limits(nproc=64, cpu_s=30, wall_s=60), "nproc", 15),
        ("while :; do :; done", Limits(cpu_s=2, wall_s=60), "cpu", 10),
        ("sleep 1000", Limits(wall_s=1.5), "wall", 6),
        ("trap '' TERM; while :; do :; done", Limits(cpu_s=2, wall_s=60), "cpu", 10),
        (
            "python3 -c \"import time\na=[]\nwhile True:\n a.append(' '*10**7); time.sleep(0.01)\"",
            Limits(memory_mb=300, address_space_mb=4000, cpu_s=60, wall_s=60),
            "memory",
            15,
        ),
        (
            "for i in 1 2 3 4; do python3 -c \"import time; a=' '*150*2**20; time.sleep(100)\" & done",
            Limits(memory_mb=400, cpu_s=60, wall_s=60),
            "memory",
            15,
        ),
    ],
    ids=["fork_bomb", "infinite_loop", "wall", "ignores_sigterm", "slow_grower", "many_hogs"],
)
async def test_hostile_workload_ends_the_sandbox(
    workload: str, limits: Limits, reason: str, deadline: float
) -> None:
    sb = await Sandbox.start(SandboxConfig(limits=limits))
    scratch = sb.scratch
    try:
        await sb.send_keys(workload + "\n")
        took = await _until_ended(sb, deadline)
        assert not sb.alive, f"still alive after {took:.1f}s"
        assert sb.end_reason == reason
    finally:
        await sb.close()
    assert scratch is not None and not scratch.exists()
    time.sleep(0.2)
    assert sandbox_processes() == []


async def test_single_memory_hog_fails_fast_inside() -> None:
    async with await Sandbox.start(SandboxConfig(limits=Limits(memory_mb=512))) as sb:
        result = await sb.exec(["python3", "-c", "a = ' ' * 10**10"], timeout=20)
        assert result.returncode == 1 and "MemoryError" in result.stderr
        assert sb.alive  # the episode goes on: only the process failed


async def test_fork_bomb_cannot_exceed_the_process_cap() -> None:
    lim = Limits(nproc=48, cpu_s=60, wall_s=60, nproc_grace_s=3)
    async with await Sandbox.start(SandboxConfig(limits=lim)) as sb:
        await sb.send_keys(":(){ :|:& };:\n")
        await asyncio.sleep(1.0)
        assert sb.peak_processes <= 48
    assert sandbox_processes() == []


async def test_the_episode_disk_is_one_quota_that_never_reaches_the_host_disk() -> None:
    """Issue 17: 2 GB written by an agent landed on the host disk. Every writable place (the
    work dir, /tmp, /root) shares the episode's quota tmpfs: writing past it fails inside, and
    the host's scratch directory does not grow."""
    from exploreval.core import scratch_root

    def host_bytes() -> int:  # files on the host's own file system (mounts not crossed)
        root = scratch_root()
        device = os.stat(root).st_dev
        total = 0
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = [
                d for d in dirnames if os.lstat(os.path.join(dirpath, d)).st_dev == device
            ]
            for name in filenames:
                with contextlib.suppress(OSError):
                    total += os.lstat(os.path.join(dirpath, name)).st_size
        return total

    async with await Sandbox.start(SandboxConfig(disk_mb=24)) as sb:
        before = host_bytes()
        result = await sb.exec(
            ["sh", "-c",
             "for d in /app /tmp /root; do head -c 10000000 /dev/zero > $d/big || echo FULL $d; done"],
            timeout=20,
        )  # fmt: skip
        assert "No space left" in result.stderr and "FULL" in result.stdout
        assert sb.disk is not None and 23 <= sb.disk.used_mb() <= 24
        # a quota tmpfs is not the host's disk: host-visible files barely changed
        assert host_bytes() - before < 1_000_000
        # the watchdog's samples keep the fullest moment after the files are gone (a full
        # disk is named in a failed verification's reasons)
        await asyncio.sleep(4 * sb.limits.sample_interval_s)
        await sb.exec(["sh", "-c", "rm -f /app/big /tmp/big /root/big"], timeout=10)
        await asyncio.sleep(4 * sb.limits.sample_interval_s)
        assert sb.disk.used_mb() < 2 and disk_filled(sb.disk.peak_mb, 24)


async def test_a_file_backed_disk_holds_its_quota_and_leaves_nothing_behind() -> None:
    """A disk larger than a quarter of memory lives in a sparse file (``disk_backing``): the
    sandbox's writes stop at the quota as on a tmpfs, the file holds what was written (not its
    size), and closing the sandbox removes the file and frees its loop device."""
    async with await Sandbox.start(SandboxConfig(disk_mb=48, disk_backing="file")) as sb:
        assert sb.disk is not None and sb.disk.backing == "file"
        image = sb.disk.dir / "disk.ext4"
        assert image.stat().st_size == 48 * 2**20 and image.stat().st_blocks * 512 < 8 * 2**20
        assert 40 <= sb.disk.capacity_mb <= 48
        result = await sb.exec(
            ["sh", "-c",
             "for d in /app /tmp /root; do head -c 20000000 /dev/zero > $d/big || echo FULL $d; done"],
            timeout=20,
        )  # fmt: skip
        assert "No space left" in result.stderr and "FULL" in result.stdout
        assert sb.disk.used_mb() >= sb.disk.capacity_mb - 1
        assert image.stat().st_blocks * 512 >= 38 * 2**20  # on the host's disk, within the quota
        await asyncio.sleep(4 * sb.limits.sample_interval_s)
        assert disk_filled(sb.disk.peak_mb, sb.disk.capacity_mb)
        assert not disk_filled(sb.disk.peak_mb, 48 + 100)  # the file system's size, not the quota's
    assert not image.exists()
    backing = [p.read_text().strip() for p in Path("/sys/block").glob("loop*/loop/backing_file")]
    assert not [b for b in backing if b.startswith(str(image))]


def test_auto_keeps_a_disk_in_memory_up_to_a_quarter_of_it(tmp_path: Path) -> None:
    from exploreval.suites.terminal._rootfs import EpisodeDisk, memory_disk_limit_mb

    limit = memory_disk_limit_mb()
    total = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") / 2**20
    assert abs(limit - total / 4) < 1
    for quota, backing in ((64, "memory"), (limit + 1, "file")):
        episode = tmp_path / str(quota)
        episode.mkdir()
        disk = EpisodeDisk(episode, uid=os.getuid(), quota_mb=quota)
        try:
            assert disk.backing == backing and disk.capacity_mb <= quota
        finally:
            disk.close()
        assert not episode.exists()


async def test_a_disk_larger_than_the_host_can_hold_is_refused_by_name() -> None:
    with pytest.raises(SandboxError, match=r"does not fit the \d+ MB free on .*: lower disk_mb"):
        await Sandbox.start(SandboxConfig(disk_mb=2**40, disk_backing="file"))
    with pytest.raises(ValueError, match="disk_backing='ram': expected auto, memory or file"):
        TerminalEnv(disk_backing="ram")
