"""The reward a Harbor test script writes, read by inode, never by name alone.

The reward directory (``/logs/verifier``) is made empty on the verification's own disk after the
agent's processes have stopped; the agent never saw it. A program of the agent's that the test
script runs could still act on it while the script runs: hard-link a file of its own in as
``reward.txt``, or turn the expected file into a link to somewhere else. So the host:

* refuses a reward directory holding a symbolic link, a file with more than one hard link, a
  FIFO or a device (the channel was tampered with);
* opens the reward without following links and keeps its identity (device, inode): the audit
  then checks that *this inode* was written during the run, and only by processes of the
  verification that ran nothing of the agent's (:meth:`._audit.Auditor._check_reward`).
"""

from __future__ import annotations

import contextlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path

REWARD_NAMES = ("reward.txt", "reward.json")


@dataclass(frozen=True)
class RewardRead:
    """What the host read of the reward directory."""

    text: str | None = None
    #: (device, inode) of the file ``text`` came from.
    identity: tuple[int, int] | None = None
    #: Why the directory cannot be trusted ("" when it can).
    tampered: str = ""


def read_reward_dir(directory: Path, limit: int = 1000) -> RewardRead:
    """The first of :data:`REWARD_NAMES` in ``directory``, with its identity (module docstring)."""
    try:
        dir_fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return RewardRead()
    try:
        problem = _tampering(dir_fd)
        if problem:
            return RewardRead(tampered=problem)
        for name in REWARD_NAMES:
            try:
                fd = os.open(
                    name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd
                )
            except OSError:
                continue
            try:
                st = os.fstat(fd)
                if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1:
                    return RewardRead(tampered=f"{name} is not a plain file with one link")
                data = os.read(fd, limit)
            finally:
                os.close(fd)
            if data:
                text = data.decode("utf-8", errors="replace")
                return RewardRead(text=text, identity=(st.st_dev, st.st_ino))
        return RewardRead()
    finally:
        os.close(dir_fd)


def _tampering(dir_fd: int) -> str:
    """Why the reward directory's entries cannot be trusted, or ""."""
    with contextlib.suppress(OSError), os.scandir(dir_fd) as entries:
        for entry in entries:
            st = entry.stat(follow_symlinks=False)
            if stat.S_ISLNK(st.st_mode):
                return f"{entry.name} in the reward directory is a symbolic link"
            if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
                return f"{entry.name} in the reward directory is not a plain file"
            if stat.S_ISREG(st.st_mode) and st.st_nlink != 1:
                return f"{entry.name} in the reward directory has {st.st_nlink} hard links"
    return ""
