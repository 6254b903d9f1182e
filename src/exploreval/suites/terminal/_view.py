"""How the host reads a sandbox's files: through its mounts, never following the agent's links out.

After a verification the host reads files the agent may have written (a ``.pth`` file's lines,
a distribution's ``RECORD``, ``direct_url.json``). Every path is resolved *inside* the sandbox's
root with ``openat2(RESOLVE_IN_ROOT)``: an absolute link the agent made to ``/etc/shadow``
names the sandbox's file, never the host's.
"""

from __future__ import annotations

import ctypes
import os
import stat as stat_mod
from dataclasses import dataclass, field
from pathlib import Path

_SYS_OPENAT2 = 437  # x86-64 and aarch64
_RESOLVE_NO_MAGICLINKS, _RESOLVE_IN_ROOT = 0x02, 0x10


class _OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64),
                ("resolve", ctypes.c_uint64)]  # fmt: skip


_LIBC = ctypes.CDLL(None, use_errno=True)


def _open_in_root(root: Path, path: str, flags: int) -> int:
    """``openat2(root, path, flags, RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS)``: a descriptor
    (the caller closes it), or -1."""
    try:
        root_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return -1
    try:
        how = _OpenHow(flags | os.O_CLOEXEC, 0, _RESOLVE_IN_ROOT | _RESOLVE_NO_MAGICLINKS)
        fd: int = _LIBC.syscall(_SYS_OPENAT2, root_fd, path.lstrip("/").encode() or b".",
                                ctypes.byref(how), ctypes.sizeof(how))  # fmt: skip
        return fd if fd >= 0 else -1
    finally:
        os.close(root_fd)


def read_in_root(root: Path, path: str, limit: int = 200_000) -> bytes | None:
    """``path`` (absolute, as the sandbox sees it) read under ``root`` with every symbolic link
    resolved *inside* ``root`` (``openat2(RESOLVE_IN_ROOT)``): a link the agent made to
    ``/etc/shadow`` reads the sandbox's file, never the host's. None when absent, not a regular
    file, or unreadable."""
    fd = _open_in_root(root, path, os.O_RDONLY | os.O_NONBLOCK)
    if fd < 0:
        return None
    try:
        if not stat_mod.S_ISREG(os.fstat(fd).st_mode):
            return None
        chunks, size = [], 0
        while size < limit and (chunk := os.read(fd, min(limit - size, 1 << 20))):
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


def stat_in_root(root: Path, path: str) -> tuple[int, int] | None:
    """(device, inode) of ``path`` under ``root`` as the sandbox's own opens see it (links in
    its directories resolved inside ``root``; a link at the end is not followed), or None."""
    fd = _open_in_root(root, path, os.O_PATH | os.O_NOFOLLOW)
    if fd < 0:
        return None
    try:
        st = os.fstat(fd)
        return (st.st_dev, st.st_ino) if stat_mod.S_ISREG(st.st_mode) else None
    finally:
        os.close(fd)


def list_in_root(root: Path, path: str) -> list[tuple[str, bool]]:
    """The entries of directory ``path`` under ``root`` (links resolved inside ``root``, as
    :func:`read_in_root`): (name, is a real directory or file, not a link)."""
    fd = _open_in_root(root, path, os.O_RDONLY | os.O_DIRECTORY)
    if fd < 0:
        return []
    try:
        with os.scandir(fd) as entries:
            return [(e.name, not e.is_symlink()) for e in entries]
    except OSError:
        return []
    finally:
        os.close(fd)


@dataclass
class SandboxView:
    """How the verification sandbox's paths map to the host, and where the agent could write.

    ``mounts``: (sandbox path, host directory) of the verifier's own mounts (tests, logs, the
    harness files, its home, venv and uv project): never the agent's. ``root``: the host path
    of everything else (an image's overlay, or this machine's ``/`` for a host-system
    sandbox). ``agent_paths``: files the agent created or changed, as sandbox paths."""

    root: Path
    mounts: list[tuple[str, Path]]
    agent_paths: set[str]
    #: The same files by identity, (device, inode) -> path when the verification began: a file
    #: the agent's code renames or deletes as it runs is still known for what it was.
    agent_inodes: dict[tuple[int, int], str] = field(default_factory=dict)
    #: Sandbox prefixes where files may be the agent's (others are the verifier's or the host's).
    agent_prefixes: tuple[str, ...] = ("/",)

    def host_path(self, path: str) -> tuple[Path, str]:
        """(host directory to resolve in, path inside it) for a sandbox path."""
        for prefix, host in sorted(self.mounts, key=lambda m: -len(m[0])):
            if path == prefix or path.startswith(prefix.rstrip("/") + "/"):
                return host, "/" + path[len(prefix) :].lstrip("/")
        return self.root, path

    def read(self, path: str, limit: int = 200_000) -> bytes | None:
        host, inner = self.host_path(path)
        return read_in_root(host, inner, limit)

    def listdir(self, path: str) -> list[tuple[str, bool]]:
        host, inner = self.host_path(path)
        return list_in_root(host, inner)

    def is_verifier_mount(self, path: str) -> bool:
        return any(path == p or path.startswith(p.rstrip("/") + "/") for p, _ in self.mounts)

    def agent_wrote(self, path: str) -> bool:
        return path in self.agent_paths and not self.is_verifier_mount(path)

    def index_agent_files(self) -> None:
        """Fill :attr:`agent_inodes` from :attr:`agent_paths` (before the run starts)."""
        for path in self.agent_paths:
            host, inner = self.host_path(path)
            key = stat_in_root(host, inner)
            if key is not None:
                self.agent_inodes[key] = path
