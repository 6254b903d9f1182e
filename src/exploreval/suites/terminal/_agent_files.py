"""Which files are the agent's when the verification begins: what its phase created or changed.

An image's overlay layer holds exactly that; a host-system sandbox's work dir is compared with
the task's template (its /tmp and /root are the agent's whole). The audit (:mod:`._audit`) then
knows these files by identity, so code that renames or deletes its own file is still named.
"""

from __future__ import annotations

import filecmp
import os
import posixpath
import stat as stat_mod
from pathlib import Path


def agent_files_in_upper(upper: Path, lower: Path | None = None) -> set[str]:
    """Every regular file or link an image's overlay layer holds that is not byte for byte the
    image's own (``lower``, the layer as built): what the agent created or changed.

    A file the agent wrote back unchanged (a gold that re-runs the Dockerfile's ``pip install
    -e .`` rewrites its ``.pth`` with the same bytes) holds the pristine image's content, and
    is trusted for that content, as a work dir file equal to the task's template is."""
    found: set[str] = set()
    for dirpath, dirnames, filenames in os.walk(upper):
        rel = os.path.relpath(dirpath, upper)
        base = "/" if rel == "." else "/" + rel + "/"
        for name in filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
            st = os.lstat(os.path.join(dirpath, name))
            if stat_mod.S_ISREG(st.st_mode) or stat_mod.S_ISLNK(st.st_mode):
                inner = base + name
                if lower is not None and _same(Path(dirpath) / name, lower / inner.lstrip("/")):
                    continue
                found.add(inner)
        dirnames[:] = [d for d in dirnames if not os.path.islink(os.path.join(dirpath, d))]
    return found


def agent_files_in_dir(host_dir: Path, mount: str, template: Path | None) -> set[str]:
    """Files under ``host_dir`` (seen at ``mount`` inside) that differ from ``template``'s (all
    of them without a template): a host-system sandbox's work dir, /tmp and /root."""
    found: set[str] = set()
    for dirpath, dirnames, filenames in os.walk(host_dir):
        rel_dir = os.path.relpath(dirpath, host_dir)
        for name in filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
            rel = name if rel_dir == "." else f"{rel_dir}/{name}"
            if template is not None and _same(Path(dirpath) / name, template / rel):
                continue
            found.add(posixpath.join(mount, rel))
        dirnames[:] = [d for d in dirnames if not os.path.islink(os.path.join(dirpath, d))]
    return found


def _same(a: Path, b: Path) -> bool:
    try:
        sa, sb = os.lstat(a), os.lstat(b)
        if stat_mod.S_ISLNK(sa.st_mode) or stat_mod.S_ISLNK(sb.st_mode):
            return (
                stat_mod.S_ISLNK(sa.st_mode)
                and stat_mod.S_ISLNK(sb.st_mode)
                and os.readlink(a) == os.readlink(b)
            )
        if not (stat_mod.S_ISREG(sa.st_mode) and stat_mod.S_ISREG(sb.st_mode)):
            return False
        if sa.st_size != sb.st_size:
            return False
        return filecmp.cmp(a, b, shallow=False)  # in blocks: a reinstalled wheel can be large
    except OSError:
        return False
