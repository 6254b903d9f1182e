"""Store errors that say which file failed and why."""

from __future__ import annotations

import errno
from pathlib import Path


class StoreError(RuntimeError):
    """A run directory could not be read or written."""


class ColumnsRebuiltWarning(UserWarning):
    """A run's column tables were damaged (a part unreadable or missing) and were rebuilt from
    the log, which is the truth; nothing was lost, but the user should know it happened."""


def describe_os_error(action: str, path: Path, exc: OSError) -> StoreError:
    """Turn an OSError into a message a user can act on."""
    if exc.errno == errno.ENOSPC:
        why = "the disk is full; free some space and re-run the same command to resume"
    elif exc.errno in (errno.EACCES, errno.EPERM):
        why = "permission denied; choose another --out directory or fix its permissions"
    elif exc.errno == errno.EROFS:
        why = "the file system is read-only"
    else:
        why = exc.strerror or str(exc)
    return StoreError(f"cannot {action} {path}: {why}")
