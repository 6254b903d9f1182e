"""An episode's file systems: a size-capped disk, and (for built images) a copy-on-write root.

Every sandbox writes only to its *disk*, mounted by the host for the episode, whose size is the
episode's aggregate quota (``disk_mb``): a ``dd`` of the whole quota fails with "No space left on
device" inside the sandbox. The disk is a tmpfs (memory, taken only as it fills) up to a quarter
of this machine's memory, and above that an ext4 file system in a sparse file beside the episode
(loop-mounted), so that a task installing many GB (CUDA wheels) fits without holding them in RAM
(``disk_backing``: ``auto``, ``memory``, ``file``). Either way it is the episode's alone and is
deleted with it.

For a task built into an image (:mod:`._image`), the sandbox's root is an overlay::

    lower = the cached image rootfs, through an *idmapped* mount (on-disk uid 0 -> the episode's
            leased uid, so "root" inside owns the image's files, as in a container)
    upper = disk/upper (the episode's changes), work = disk/work

mounted by the host with *relative* option strings from the episode's directory, so the sandbox's
``/proc/self/mountinfo`` shows ``lowerdir=lower,upperdir=disk/upper`` and tmpfs roots such as
``/ctl``, never a host scratch path. Every mount lives under the scratch root: the scratch
guardian lazily unmounts whatever is mounted there when the run's process ends, however it ends
(:func:`exploreval.core.unmount_under`).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

from exploreval.core import pid_alive, unmount_under
from exploreval.suites.terminal._limits import SUBID_COUNT

_LIBC = ctypes.CDLL(None, use_errno=True)
_MS_NOSUID, _MS_NODEV = 0x2, 0x4
_CLONE_NEWUSER = 0x10000000
# new mount API (x86-64 and aarch64 share these numbers)
_SYS_OPEN_TREE, _SYS_MOVE_MOUNT, _SYS_MOUNT_SETATTR = 428, 429, 442
_OPEN_TREE_CLONE, _OPEN_TREE_CLOEXEC = 1, os.O_CLOEXEC
_AT_FDCWD, _AT_EMPTY_PATH, _AT_RECURSIVE = -100, 0x1000, 0x8000
_MOVE_MOUNT_F_EMPTY_PATH = 0x4
_MOUNT_ATTR_RDONLY, _MOUNT_ATTR_IDMAP = 0x1, 0x00100000


class MountError(OSError):
    """A mount the sandbox needs could not be made (the message says which and why)."""


class _MountAttr(ctypes.Structure):
    _fields_ = [
        ("attr_set", ctypes.c_uint64),
        ("attr_clr", ctypes.c_uint64),
        ("propagation", ctypes.c_uint64),
        ("userns_fd", ctypes.c_uint64),
    ]


def _fail(what: str) -> MountError:
    err = ctypes.get_errno()
    return MountError(err, f"{what}: {os.strerror(err)}")


#: One inode per this many bytes of an episode's file system (ext4's default ``inode_ratio``):
#: a tmpfs inode and its dentry are about 2 KB of unswappable kernel memory that no size limit
#: counts (1.5 million empty files took 2.9 GB of slab under a 1 MB quota), so the inode count
#: follows the size: at most 1/8 of ``disk_mb`` more in slab. A 2 GB disk holds 131,072 files;
#: an image's overlay upper layer holds only what the episode changed or added.
BYTES_PER_INODE = 16384
#: The fewest inodes any episode file system gets (a 16 MB disk still holds 4,096 files).
MIN_INODES = 4096


def inode_count(size_mb: int) -> int:
    """The inode limit of a file system of ``size_mb`` (:data:`BYTES_PER_INODE`)."""
    return max(MIN_INODES, int(size_mb) * 2**20 // BYTES_PER_INODE)


def mount_tmpfs(target: Path, size_mb: int, *, mode: int = 0o755) -> None:
    """A tmpfs of ``size_mb`` and :func:`inode_count` inodes at ``target`` (nosuid, nodev)."""
    target.mkdir(parents=True, exist_ok=True)
    options = f"size={int(size_mb)}m,nr_inodes={inode_count(size_mb)},mode={mode:o}".encode()
    if _LIBC.mount(b"tmpfs", bytes(target), b"tmpfs", _MS_NOSUID | _MS_NODEV, options) != 0:
        raise _fail(f"mount tmpfs ({size_mb} MB) at {target}")


#: Where an episode's disk lives: ``auto`` picks memory up to :func:`memory_disk_limit_mb`.
DISK_BACKINGS = ("auto", "memory", "file")


def memory_disk_limit_mb() -> int:
    """The largest ``auto`` disk kept in memory: a quarter of this machine's RAM (a tmpfs takes
    memory as it fills, and a full one cannot be swapped out here)."""
    return int(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") / 4 / 2**20)


def mount_file_disk(target: Path, image: Path, size_mb: int, *, mode: int = 0o755) -> None:
    """An ext4 file system of ``size_mb`` in the sparse file ``image``, loop-mounted at
    ``target`` (nosuid, nodev). The host's free space must hold the whole size: a sparse file
    that outgrew its host file system would turn the sandbox's writes into I/O errors."""
    target.mkdir(parents=True, exist_ok=True)
    stat = os.statvfs(image.parent)
    free_mb = stat.f_bavail * stat.f_frsize / 2**20
    if free_mb < size_mb:
        raise MountError(
            0,
            f"a {size_mb} MB episode disk does not fit the {free_mb:.0f} MB free on "
            f"{image.parent}: lower disk_mb, or point EXPLOREVAL_SCRATCH at a larger disk",
        )
    with open(image, "wb") as fh:
        fh.truncate(size_mb * 2**20)
    # no journal (the disk dies with the episode), no reserved blocks (the quota is the
    # sandbox's), inode tables left unwritten (a sparse file reads as zeros already), as many
    # inodes as a tmpfs of that size gets (mkfs rounds up to fill its inode tables)
    for argv in (
        ["mkfs.ext4", "-q", "-F", "-m", "0", "-O", "^has_journal", "-N", str(inode_count(size_mb)),
         "-E", "lazy_itable_init=1,nodiscard,root_owner=0:0", str(image)],
        ["mount", "-o", "loop,nosuid,nodev,noinit_itable", str(image), str(target)],
    ):  # fmt: skip
        done = subprocess.run(argv, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise MountError(0, f"{' '.join(argv[:1])} for the episode disk {image}: "
                                f"{done.stderr.strip() or done.stdout.strip()}")  # fmt: skip
    shutil.rmtree(target / "lost+found", ignore_errors=True)
    os.chmod(target, mode)


def unmount(target: Path) -> None:
    """Lazily unmount ``target`` (``MNT_DETACH``); a path that is not mounted is left alone."""
    _LIBC.umount2(bytes(target), 2)


def _unshare_user() -> None:  # pragma: no cover - runs in the helper child before exec
    if _LIBC.unshare(_CLONE_NEWUSER) != 0:
        os._exit(111)


def id_map(uid: int, sub_base: int | None) -> str:
    """A user namespace's uid/gid map: 0 is ``uid``; with ``sub_base``, k in 1..65535 is
    ``sub_base + k`` (written in one write, as the kernel requires)."""
    mapping = f"0 {uid} 1\n"
    if sub_base is not None:
        mapping += f"1 {sub_base + 1} {SUBID_COUNT - 1}\n"
    return mapping


def idmapped_clone(
    source: Path, target: Path, uid: int, *, read_only: bool = True, sub_base: int | None = None
) -> None:
    """Mount ``source`` again at ``target`` with on-disk uid/gid 0 shown as ``uid``.

    The mapping comes from a throwaway user namespace (``0 uid 1``) whose file descriptor is
    handed to ``mount_setattr(MOUNT_ATTR_IDMAP)``; files owned by other on-disk ids appear
    unowned (nobody), unless ``sub_base``: then on-disk id k > 0 is shown as ``sub_base + k``
    (the many-user root's own users). Needs Linux 5.12+ and a file system that supports idmapped mounts (ext4,
    xfs, btrfs, tmpfs 6.3+)."""
    target.mkdir(parents=True, exist_ok=True)
    helper = subprocess.Popen(
        ["sleep", "30"],
        preexec_fn=_unshare_user,  # noqa: PLW1509 - only unshares a user namespace
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    ns_fd = tree_fd = -1
    try:
        mapping = id_map(uid, sub_base)
        for name, text in (("uid_map", mapping), ("setgroups", "deny"), ("gid_map", mapping)):
            with open(f"/proc/{helper.pid}/{name}", "w") as fh:
                fh.write(text)
        ns_fd = os.open(f"/proc/{helper.pid}/ns/user", os.O_RDONLY | os.O_CLOEXEC)
        tree_fd = _LIBC.syscall(
            _SYS_OPEN_TREE,
            _AT_FDCWD,
            bytes(source),
            _OPEN_TREE_CLONE | _OPEN_TREE_CLOEXEC | _AT_RECURSIVE,
        )
        if tree_fd < 0:
            raise _fail(f"open_tree {source}")
        attr = _MountAttr(_MOUNT_ATTR_IDMAP | (_MOUNT_ATTR_RDONLY if read_only else 0), 0, 0, ns_fd)
        if (
            _LIBC.syscall(
                _SYS_MOUNT_SETATTR,
                tree_fd,
                b"",
                _AT_EMPTY_PATH | _AT_RECURSIVE,
                ctypes.byref(attr),
                ctypes.sizeof(attr),
            )
            != 0
        ):
            raise _fail(f"idmapped mount of {source} (uid 0 -> {uid})")
        if (
            _LIBC.syscall(
                _SYS_MOVE_MOUNT, tree_fd, b"", _AT_FDCWD, bytes(target), _MOVE_MOUNT_F_EMPTY_PATH
            )
            != 0
        ):
            raise _fail(f"move_mount to {target}")
    finally:
        for fd in (ns_fd, tree_fd):
            if fd >= 0:
                os.close(fd)
        helper.kill()
        helper.wait()


def mount_overlay(episode_dir: Path, *, lower: str, upper: str, work: str, target: str) -> None:
    """Overlay at ``episode_dir/target``; the layer paths are given relative to ``episode_dir``
    (the mount runs there), so the options the sandbox can read name no host path."""
    (episode_dir / target).mkdir(parents=True, exist_ok=True)
    options = f"lowerdir={lower},upperdir={upper},workdir={work}"
    done = subprocess.run(
        ["mount", "-t", "overlay", "overlay", "-o", options, target],
        cwd=episode_dir,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise MountError(0, f"mount overlay ({options}) at {episode_dir / target}: {done.stderr}")


class EpisodeDisk:
    """The episode's quota tmpfs and, for an image, its overlay root. ``close()`` unmounts all.

    Layout under ``episode_dir`` (a host directory, mode 0711)::

        disk/            tmpfs, size = quota: everything the sandbox can write
          ctl/           the harness's control files (prompt marker, pane recording)
          shm/           the sandbox's /dev/shm
          upper/ work/   the overlay's layers (image), or
          app/ tmp/ root/  the writable directories of a host-system sandbox
        lower/           idmapped mount of the image rootfs (image only)
        root/            the overlay: the sandbox's / (image only)
        vdisk/           tmpfs of the verification run (tests, logs, home), mounted on demand
    """

    def __init__(
        self, episode_dir: Path, *, uid: int, quota_mb: int, backing: str = "auto"
    ) -> None:
        self.dir = episode_dir
        self.uid = uid
        self.quota_mb = quota_mb
        #: The most the disk held when sampled (:meth:`sample_peak`).
        self.peak_mb = 0.0
        self.disk = episode_dir / "disk"
        self.root: Path | None = None
        self.vdisk: Path | None = None
        if backing not in DISK_BACKINGS:
            raise ValueError(f"disk_backing={backing!r}: expected one of {DISK_BACKINGS}")
        if backing == "auto":
            backing = "memory" if quota_mb <= memory_disk_limit_mb() else "file"
        #: ``memory`` (a tmpfs) or ``file`` (ext4 in a sparse file beside the episode).
        self.backing = backing
        if backing == "memory":
            mount_tmpfs(self.disk, quota_mb, mode=0o711)
        else:
            mount_file_disk(self.disk, episode_dir / "disk.ext4", quota_mb, mode=0o711)
        #: What the sandbox can write, MB: the quota, less a file system's own metadata.
        self.capacity_mb = self._total_mb()
        self.ctl = self.owned_dir(self.disk / "ctl", 0o700)
        #: The sandbox's ``/dev/shm``: on this disk, so POSIX shared memory is in the quota.
        self.shm = self.owned_dir(self.disk / "shm", 0o1777)

    def _total_mb(self) -> float:
        stat = os.statvfs(self.disk)
        return stat.f_blocks * stat.f_frsize / 2**20

    def owned_dir(self, path: Path, mode: int = 0o755) -> Path:
        """A directory owned by the sandbox's uid (root inside)."""
        path.mkdir(mode=mode, parents=True, exist_ok=True)
        os.chown(path, self.uid, self.uid)
        os.chmod(path, mode)
        return path

    def mount_image(self, image_rootfs: Path, *, sub_base: int | None = None) -> Path:
        """Overlay root over ``image_rootfs``; returns its host path (``episode_dir/root``).
        ``sub_base``: the image's files of other owners keep them (a many-user root)."""
        # The overlay's own root directory takes the upper directory's owner and mode: the
        # image's "/" (root-owned, 0755) as the sandbox's uid sees it through the idmap.
        upper = self.owned_dir(self.disk / "upper", 0o755)
        upper_mode = os.stat(image_rootfs).st_mode & 0o7777
        os.chmod(upper, upper_mode)
        (self.disk / "work").mkdir(mode=0o700)
        idmapped_clone(image_rootfs, self.dir / "lower", self.uid, sub_base=sub_base)
        mount_overlay(self.dir, lower="lower", upper="disk/upper", work="disk/work", target="root")
        self.root = self.dir / "root"
        return self.root

    def claim_upper(self) -> None:
        """Hand what the host wrote into the overlay (injected files) to the sandbox's uid: the
        upper layer holds only copy-ups (already the uid's) and the host's new files."""
        upper = self.disk / "upper"
        for dirpath, dirnames, filenames in os.walk(upper):
            for name in dirnames + filenames:
                with contextlib.suppress(FileNotFoundError):
                    os.lchown(os.path.join(dirpath, name), self.uid, self.uid)

    def mount_verification(self, size_mb: int = 512) -> Path:
        """A fresh tmpfs for the verification run (tests, logs, home); never seen by the agent."""
        self.vdisk = self.dir / "vdisk"
        unmount_under(self.vdisk)  # an earlier verification's (each run starts fresh)
        mount_tmpfs(self.vdisk, size_mb, mode=0o711)
        return self.vdisk

    def used_mb(self) -> float:
        stat = os.statvfs(self.disk)
        return (stat.f_blocks - stat.f_bfree) * stat.f_frsize / 2**20

    def sample_peak(self) -> None:
        """Note the disk's use in :attr:`peak_mb` (the watchdog's samples: a full disk is named)."""
        with contextlib.suppress(OSError):
            self.peak_mb = max(self.peak_mb, self.used_mb())

    def close(self) -> None:
        unmount_under(self.dir)
        shutil.rmtree(self.dir, ignore_errors=True)


def wait_gone(pid: int, timeout_s: float = 5.0) -> bool:
    """True once ``pid`` no longer exists (reaped or never ours)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not pid_alive(pid):
            return True
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)
        time.sleep(0.002)
    return False


def kill_uid(uid: int, sub_base: int | None = None) -> int:
    """SIGKILL every process running as host ``uid`` (or in its subordinate range from
    ``sub_base``); returns how many were found."""
    found = 0
    low, high = (sub_base, sub_base + SUBID_COUNT) if sub_base is not None else (uid, uid + 1)
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            owner = os.stat(entry.path).st_uid
            if owner == uid or low <= owner < high:
                os.kill(int(entry.name), signal.SIGKILL)
                found += 1
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            continue
    return found
