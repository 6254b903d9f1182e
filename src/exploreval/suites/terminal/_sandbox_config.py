"""What a sandbox is configured with and returns: :class:`SandboxConfig` (independent of any task
format), :class:`ExecResult`, :class:`Observation`, and the fixed paths of its control dir, tmux
server and shell rc file, shared by the sandbox, its pane and the verifier.
"""

from __future__ import annotations

import os
import posixpath
import stat
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from exploreval.suites.terminal._errors import SandboxError
from exploreval.suites.terminal._limits import Limits

#: The agent's home directory in every sandbox (``HOME``), as a container's root has it.
AGENT_HOME = "/root"

CTL_DIR = "/tmp/.exploreval"


TMUX_SOCK = f"{CTL_DIR}/tmux.sock"


TMUX_CONF = f"{CTL_DIR}/tmux.conf"


BASHRC_PATH = f"{CTL_DIR}/bashrc"


#: Where the pane's shell records that it printed a prompt (the blocking-command marker).
PROMPT_MARK = f"{CTL_DIR}/prompt"


PANE_RAW = f"{CTL_DIR}/pane.raw"


#: Read-only dir of harness helpers inside a host-system sandbox: the ``python`` shim (images
#: ``FROM python:*`` have ``python``; Debian has only ``python3``).
SHIM_DIR = "/opt/exploreval/bin"


SANDBOX_PATH = f"/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:{SHIM_DIR}"


SHELLS = frozenset({"bash", "sh", "dash"})


#: Paths the work dir may not be bound at (system, harness and test mounts).
RESERVED_PATHS = ("/usr", "/etc", "/proc", "/dev", "/tmp", "/tests", "/logs", "/opt/exploreval",
             "/bin", "/lib", "/lib64", "/sbin", "/root")  # fmt: skip


#: The pane's shell rc file: the prompt, and a prompt marker the host reads to know a
#: command line finished (Terminus 1's blocking commands). Nothing is typed into the pane and
#: nothing is printed on it; the variable is not exported to the agent's programs.
BASHRC = (
    "[ -f /etc/bash.bashrc ] && . /etc/bash.bashrc\n"
    "PS1='root@\\h:\\w# '\n"
    "__exploreval_n=0\n"
    "PROMPT_COMMAND='__exploreval_n=$((__exploreval_n+1)); "
    f'printf "%s %s\\n" $$ $__exploreval_n > {PROMPT_MARK} 2>/dev/null\'\n'
)


#: How a service's command runs: its output appended to the service log, its exit status kept.
SERVICE_WRAPPER = (
    f'"$@" >> {CTL_DIR}/service.log 2>&1 < /dev/null; echo $? > {CTL_DIR}/service.exit'
)


EndReason = Literal["", "closed", "exited", "wall", "cpu", "memory", "nproc", "start_failed"]


class SandboxConfig(BaseModel):
    """Everything a sandbox needs, independent of any task format."""

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    schema_version: int = 2
    #: Host directory copied fresh into the episode's work dir (None: it starts empty). With an
    #: ``image``, the image already holds the work dir and this is ignored.
    workdir_template: Path | None = None
    #: Where the work dir is bound inside and the shell starts (the task's WORKDIR).
    workdir: str = "/app"
    #: Host directory made visible read-only at /tests only in the verification run.
    tests_dir: Path | None = None
    #: A built image's root file system (``._image``): the sandbox's copy-on-write root. None:
    #: this machine's system, read-only (the built-in tasks).
    image: Path | None = None
    env: dict[str, str] = Field(default_factory=dict)
    limits: Limits = Field(default_factory=Limits)
    #: The episode's whole writable space (work dir, /tmp, /root, or the image's changes), MB.
    disk_mb: int = Field(default=2048, ge=16)
    #: Where that disk lives (``._rootfs.DISK_BACKINGS``): ``auto`` is memory (a tmpfs) up to a
    #: quarter of this machine's RAM, else an ext4 file system in a sparse file on the host.
    disk_backing: Literal["auto", "memory", "file"] = "auto"
    #: A network for the agent's sandbox: user-mode (slirp4netns), the host's loopback blocked.
    network: bool = False
    width: int = Field(default=160, ge=20, le=1000)
    height: int = Field(default=40, ge=5, le=500)
    history_limit: int = Field(default=100_000, ge=100)
    max_output_bytes: int = Field(default=10_000, ge=100)
    #: Record what the pane showed for an asciinema cast v2 file.
    record_cast: bool = True
    #: The cast's events are at most this many bytes (``._cast``: the rest is counted, marked).
    max_cast_bytes: int = Field(default=4_000_000, ge=1000)
    #: Watch the work dir with inotify for file-access evidence.
    watch_files: bool = True
    #: Give the sandbox a writable /logs (Harbor tasks write /logs/verifier/reward.txt).
    logs_dir: bool = False
    hostname: str = "sandbox"
    #: A compose service: this argv runs as the sandbox's process (its output in the service
    #: log) instead of the agent's tmux server and shell. Empty: the agent's sandbox.
    command: tuple[str, ...] = ()
    #: ``many``: the root of an image sandbox has other users and Docker's capabilities inside
    #: its own user namespace (``._userns``); ``one``: one uid, no capability.
    users: Literal["one", "many"] = "one"

    @model_validator(mode="after")
    def _workdir(self) -> SandboxConfig:
        value = self.workdir
        norm = posixpath.normpath(value) if value else ""
        if not value.startswith("/") or ".." in value.split("/"):
            raise ValueError(f"workdir {value!r} must be an absolute directory path")
        if self.image is None:  # the work dir is a mount over this machine's system
            if norm in ("/", "//"):
                raise ValueError(f"workdir {value!r} must not be '/' on the host system")
            for reserved in RESERVED_PATHS:
                if norm == reserved or norm.startswith(reserved + "/"):
                    raise ValueError(
                        f"workdir {value!r} is inside {reserved}, which the sandbox reserves "
                        "(system, tests, logs or harness files); use a path such as /app"
                    )
        if self.image is None and self.users == "many":
            raise ValueError("users='many' needs an image: the host system has one set of users")
        if self.image is not None and (norm in ("/tests", "/logs")
                                       or norm.startswith(("/tests/", "/opt/exploreval"))):  # fmt: skip
            raise ValueError(f"workdir {value!r} is where the verification mounts its files")
        object.__setattr__(self, "workdir", norm if norm != "//" else "/")
        return self


class ExecResult(BaseModel):
    schema_version: int = 1
    argv: list[str]
    returncode: int | None
    stdout: str
    stderr: str
    timed_out: bool = False
    duration_s: float = 0.0


class Observation(BaseModel):
    """What the agent is shown after a step (terminal_use / Terminus semantics)."""

    schema_version: int = 1
    kind: Literal["new_output", "screen"]
    text: str
    in_progress: bool
    truncated_bytes: int = 0

    @property
    def truncated(self) -> bool:
        return self.truncated_bytes > 0

    def render(self) -> str:
        title = "New Terminal Output" if self.kind == "new_output" else "Current Terminal Screen"
        return f"{title}:\n{self.text}"


SANDBOX_SHELL = f"bash --noprofile --rcfile {BASHRC_PATH} -i"


def tmux_conf(config: SandboxConfig) -> bytes:
    return (
        f"set -g history-limit {config.history_limit}\n"
        "set -g exit-empty off\n"
        "set -g status off\n"
        "set -g remain-on-exit off\n"
        "set -g escape-time 0\n"
        "set -g default-terminal tmux-256color\n"
    ).encode()


def check_traversable(path: Path) -> None:
    for parent in [path, *path.parents]:
        if not os.stat(parent).st_mode & 0o001:
            raise SandboxError(
                f"the sandbox's scratch directory {path} is not reachable by the sandbox's "
                f"unprivileged uid: {parent} lacks the others-execute bit (chmod o+x {parent}, "
                "or point EXPLOREVAL_SCRATCH at a directory under /tmp)"
            )


def chown_tree(root: Path, uid: int) -> None:
    os.lchown(root, uid, uid)
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            os.lchown(os.path.join(dirpath, name), uid, uid)


def read_plain_file(directory: Path, name: str, limit: int = 1_000_000, offset: int = 0) -> bytes:
    """Read ``directory/name`` written by the sandbox: no symbolic link followed, a regular file
    only (a FIFO or device the agent put there is never opened for real), at most ``limit``
    bytes from ``offset``; b"" when absent or not a plain file."""
    try:
        dir_fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return b""
    try:
        fd = os.open(
            name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd
        )
    except OSError:
        return b""
    finally:
        os.close(dir_fd)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return b""
        if offset:
            os.lseek(fd, offset, os.SEEK_SET)
        return os.read(fd, limit)
    except OSError:
        return b""
    finally:
        os.close(fd)
