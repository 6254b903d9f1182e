"""The image cache on disk: images share their base's files and each other's installed
libraries, and the cache can be listed, capped and pruned (``exploreval images``).

**Sharing.** An image starts as a copy of its base system's root (``cp -a``), and most of it is
never touched by the Dockerfile: a Python base is 400-700 MB, a task adds a few. After a build,
every file of the image that is still byte-for-byte its base's (same path, size, mode, owner,
mtime and content) becomes a hard link to the base's file (:func:`share_with_base`), so the
cache stores one copy. Large files that package managers installed (pip's site-packages, apt's
``/usr``, uv's cache: :data:`SHARED_TREES`) are also shared *between* images when their content is
the same (:func:`share_across_images`): two tasks that ``pip install pandas`` keep one pandas.
Nothing writes to a built image or a base in place: a sandbox sees an
image as the read-only lower layer of an overlay (``_rootfs``), where a write copies the file up
into the episode's own layer, so a shared inode is never changed through either name. A file is
freed when its last name goes: pruning a base leaves its images whole.

**Use and last use.** A process that takes an image or base from the cache holds a shared lock
on its ``locks/<name>.use`` file for the rest of its life (:func:`hold`), and stamps its last
use. Pruning takes that lock exclusively without waiting and skips what it cannot lock: an
image in use is never removed.

**Cap.** ``EXPLOREVAL_IMAGE_CACHE_MAX_GB`` (default 40; 0 = no cap) bounds the cache: after a
build, the least recently used images (then bases) go until the cache fits, never one in use
nor the image just built.
"""

from __future__ import annotations

import contextlib
import fcntl
import filecmp
import json
import os
import stat
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from exploreval.core import user_cache_dir

#: The cap's variable and its default, in GB (10^9 bytes); 0 = no cap.
CAP_ENV = "EXPLOREVAL_IMAGE_CACHE_MAX_GB"
DEFAULT_CAP_GB = 40.0
_LAST_USE = ".last-use"

#: Lock files this process holds open (shared) for the images and bases it uses.
_HELD: dict[str, int] = {}


def images_root() -> Path:
    """Where built images, bases and their tools are cached (``EXPLOREVAL_IMAGE_CACHE``)."""
    return user_cache_dir("images", "EXPLOREVAL_IMAGE_CACHE")


def _root() -> Path:
    return images_root()


def _use_lock_path(entry: Path) -> Path:
    root = _root()
    name = entry.name if entry.parent == root else f"bases-{entry.name}"
    return root / "locks" / f"{name}.use"


def hold(entry: Path) -> None:
    """Mark the image or base directory ``entry`` in use by this process (until it exits) and
    stamp its last use."""
    lock = _use_lock_path(entry)
    key = str(lock)
    if key not in _HELD:
        lock.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
        fcntl.flock(fd, fcntl.LOCK_SH)
        _HELD[key] = fd
    with contextlib.suppress(OSError):
        (entry / _LAST_USE).write_text(f"{time.time():.0f}\n")


@contextlib.contextmanager
def _exclusive(entry: Path) -> Iterator[bool]:
    """Lock ``entry`` for removal if no process uses it (True), else yield False at once."""
    lock = _use_lock_path(entry)
    lock.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)


def share_with_base(rootfs: Path, base_rootfs: Path) -> tuple[int, int]:
    """Hard-link each file of ``rootfs`` that is still its base's file; returns (files, bytes)
    now shared. A file differing in any way (content, mode, owner, mtime) stays the image's."""
    linked = saved = 0
    for dirpath, _dirs, names in os.walk(rootfs):
        rel = os.path.relpath(dirpath, rootfs)
        for name in names:
            mine = os.path.join(dirpath, name)
            theirs = os.path.join(base_rootfs, rel, name)
            try:
                a, b = os.lstat(mine), os.lstat(theirs)
            except OSError:
                continue
            if not (stat.S_ISREG(a.st_mode) and stat.S_ISREG(b.st_mode)) or a.st_ino == b.st_ino:
                continue
            if (a.st_size, a.st_mode, a.st_uid, a.st_gid, a.st_mtime_ns) != (
                b.st_size, b.st_mode, b.st_uid, b.st_gid, b.st_mtime_ns
            ):  # fmt: skip
                continue
            if not filecmp.cmp(mine, theirs, shallow=False):
                continue
            if not _link_over(theirs, mine):
                continue
            linked += 1
            saved += a.st_blocks * 512
    return linked, saved


#: Trees where two images' identical files are shared: what package managers install (pip's
#: site-packages, apt's /usr, uv's cache), never the task's own files. A shared file keeps the
#: mtime of its first copy, which no installed library reads; a task's data might.
SHARED_TREES = ("usr", "opt", "lib", "lib64", "var/lib", "var/cache", "root/.cache", "root/.local")
#: Files smaller than one filesystem block are not worth an index row. Measured on 21 cached
#: images of a public Harbor set (TermiGen, each with pip's scientific stack): the files from
#: 4 to 64 KiB that two images held alike came to 1.9 GB (Python sources, headers, metadata).
MIN_SHARED_BYTES = 4 * 1024
_INDEX = "share-index.sqlite"


def share_across_images(rootfs: Path) -> tuple[int, int]:
    """Hard-link the large files of ``rootfs`` under :data:`SHARED_TREES` that another cached
    image already holds (same size, mode, owner and BLAKE2b-256 of the content), through an
    index kept in the cache (``share-index.sqlite``); returns (files, bytes) now shared. Files
    already shared with the base are left as they are."""
    import hashlib
    import sqlite3

    index = sqlite3.connect(_root() / _INDEX, timeout=60)
    index.execute("create table if not exists files (size integer, digest text, mode integer, "
                  "uid integer, gid integer, path text, primary key (size, digest, mode, uid, gid))")  # fmt: skip
    linked = saved = 0
    try:
        for tree in SHARED_TREES:
            for dirpath, _dirs, names in os.walk(rootfs / tree):
                for name in names:
                    path = os.path.join(dirpath, name)
                    try:
                        st = os.lstat(path)
                    except OSError:
                        continue
                    if (
                        not stat.S_ISREG(st.st_mode)
                        or st.st_nlink > 1
                        or st.st_size < MIN_SHARED_BYTES
                    ):
                        continue
                    with open(path, "rb") as fh:
                        digest = hashlib.file_digest(fh, lambda: hashlib.blake2b(digest_size=32))
                    key = (st.st_size, digest.hexdigest(), st.st_mode, st.st_uid, st.st_gid)
                    row = index.execute("select path from files where size=? and digest=? and "
                                        "mode=? and uid=? and gid=?", key).fetchone()  # fmt: skip
                    if row is not None and _link_over(row[0], path):
                        linked += 1
                        saved += st.st_blocks * 512
                        continue
                    index.execute("insert or replace into files values (?, ?, ?, ?, ?, ?)",
                                  (*key, path))  # fmt: skip
        index.commit()
    finally:
        index.close()
    return linked, saved


def _link_over(source: str, target: str) -> bool:
    """Replace ``target`` with a hard link to ``source`` (False if ``source`` is gone)."""
    tmp = target + ".exploreval-link"
    try:
        os.link(source, tmp)
        os.replace(tmp, target)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        return False
    return True


@dataclass
class CacheEntry:
    """One image or base in the cache."""

    kind: str  # "image" or "base"
    name: str
    path: Path
    own_bytes: int  # on disk, in files no other entry shares
    shared_bytes: int  # on disk, in files it shares with other entries (counted once in total)
    last_use: float  # seconds since the epoch (its build when never used since)
    in_use: bool
    note: str


def _entries() -> list[tuple[str, Path]]:
    root = _root()
    found: list[tuple[str, Path]] = []
    if root.is_dir():
        found += [("image", p) for p in sorted(root.iterdir()) if (p / "image.json").is_file()]
    bases = root / "bases"
    if bases.is_dir():
        found += [("base", p) for p in sorted(bases.iterdir()) if (p / ".complete").is_file()]
    return found


def _in_use(entry: Path) -> bool:
    with _exclusive(entry) as free:
        return not free


def list_cache() -> tuple[list[CacheEntry], int]:
    """Every cached image and base with its size and last use; and the cache's total bytes on
    disk (a shared file counted once)."""
    owners: dict[tuple[int, int], set[int]] = {}
    blocks: dict[tuple[int, int], int] = {}
    found = _entries()
    for index, (_, path) in enumerate(found):
        for dirpath, _dirs, names in os.walk(path):
            for name in [*names, *_dirs]:
                try:
                    st = os.lstat(os.path.join(dirpath, name))
                except OSError:
                    continue
                inode = (st.st_dev, st.st_ino)
                owners.setdefault(inode, set()).add(index)
                blocks[inode] = st.st_blocks * 512
    own = [0] * len(found)
    shared = [0] * len(found)
    for inode, who in owners.items():
        for index in who:
            if len(who) == 1:
                own[index] += blocks[inode]
            else:
                shared[index] += blocks[inode]
    out = []
    for index, (kind, path) in enumerate(found):
        out.append(CacheEntry(kind, path.name, path, own[index], shared[index],
                              _last_use(path), _in_use(path), _note(kind, path)))  # fmt: skip
    return out, sum(blocks.values())


def _last_use(path: Path) -> float:
    for name in (_LAST_USE, "image.json", ".complete"):
        with contextlib.suppress(OSError, ValueError):
            if name == _LAST_USE:
                return float((path / name).read_text().strip())
            return (path / name).stat().st_mtime
    return 0.0


def _note(kind: str, path: Path) -> str:
    with contextlib.suppress(OSError, ValueError):
        if kind == "base":
            return (path / ".complete").read_text().strip()
        return str(json.loads((path / "image.json").read_text()).get("base", ""))
    return ""


def cap_bytes() -> int | None:
    """The cache's cap from ``EXPLOREVAL_IMAGE_CACHE_MAX_GB`` (None: no cap)."""
    raw = os.environ.get(CAP_ENV, "").strip()
    try:
        gb = float(raw) if raw else DEFAULT_CAP_GB
    except ValueError:
        raise ValueError(f"{CAP_ENV}={raw!r}: expected a number of GB (0: no cap)") from None
    if gb < 0:
        raise ValueError(f"{CAP_ENV}={raw!r}: expected a number of GB (0: no cap)")
    return None if gb == 0 else int(gb * 1e9)


def prune(
    *,
    everything: bool = False,
    unused_for_s: float | None = None,
    max_bytes: int | None = None,
    keep: Path | None = None,
    dry_run: bool = False,
) -> tuple[list[CacheEntry], int]:
    """Remove images and bases: ``everything``; those unused for ``unused_for_s``; then the least
    recently used (images before bases) until the cache is at most ``max_bytes``. Never one in
    use, nor ``keep``. Returns what was (``dry_run``: would be) removed and the bytes freed."""
    entries, total = list_cache()
    chosen: list[CacheEntry] = []
    now = time.time()
    candidates = [e for e in entries if not e.in_use and e.path != keep]
    for entry in candidates:
        if everything or (unused_for_s is not None and now - entry.last_use > unused_for_s):
            chosen.append(entry)
    if max_bytes is not None:
        remaining = total - sum(e.own_bytes for e in chosen)
        order = sorted((e for e in candidates if e not in chosen),
                       key=lambda e: (e.kind == "base", e.last_use))  # fmt: skip
        for entry in order:
            if remaining <= max_bytes:
                break
            chosen.append(entry)
            remaining -= entry.own_bytes
    removed, freed = [], 0
    for entry in chosen:
        if dry_run:
            removed.append(entry)
            freed += entry.own_bytes
            continue
        with _exclusive(entry.path) as free:
            if not free:  # taken since it was listed
                continue
            _remove(entry)
        removed.append(entry)
        freed += entry.own_bytes
    return removed, freed


def _remove(entry: CacheEntry) -> None:
    """Remove an entry so that a half-removed one never looks complete: its marker goes first."""
    marker = entry.path / ("image.json" if entry.kind == "image" else ".complete")
    with contextlib.suppress(FileNotFoundError):
        marker.unlink()
    subprocess.run(["rm", "-rf", "--one-file-system", str(entry.path)], check=False)


def enforce_cap(keep: Path | None = None) -> list[CacheEntry]:
    """After a build: evict least recently used entries until the cache fits its cap."""
    cap = cap_bytes()
    if cap is None:
        return []
    removed, _ = prune(max_bytes=cap, keep=keep)
    return removed


def lock_exclusive(path: Path) -> int:
    """An exclusive ``flock`` on ``path`` (created): one build of an image at a time."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def unlock(fd: int) -> None:
    with contextlib.suppress(OSError):
        fcntl.flock(fd, fcntl.LOCK_UN)
    os.close(fd)
