"""Store errors that say which file failed and why."""

from __future__ import annotations

import errno
from pathlib import Path


class StoreError(RuntimeError):
    """A run directory could not be read or written."""


class RunNote(UserWarning):
    """Something about a run that was handled, not fatal, but that the user should know (the
    command line prints it as one ``note:`` line on stderr)."""


class ColumnsRebuiltWarning(RunNote):
    """A run's column tables were damaged (a part unreadable or missing) and were rebuilt from
    the log, which is the truth; nothing was lost, but the user should know it happened."""


class ReadOnlyRunWarning(RunNote):
    """A run that cannot be written to was scored without storing the scores in it."""


class UnreadableResultsWarning(RunNote):
    """A run's ``results.parquet`` cannot be read: queries leave it out until ``score`` writes
    it again."""


def describe_os_error(action: str, path: Path, exc: OSError) -> StoreError:
    """Turn an OSError into a message a user can act on."""
    if exc.errno == errno.ENOSPC:
        why = "the disk is full; free some space and re-run the same command to resume"
    elif exc.errno in (errno.EACCES, errno.EPERM):
        why = "permission denied; choose another --out directory or fix its permissions"
    elif exc.errno == errno.EROFS:
        why = "the file system is read-only; choose another --out directory on a writable one"
    else:
        why = exc.strerror or str(exc)
    return StoreError(f"cannot {action} {path}: {why}")
