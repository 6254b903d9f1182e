"""What defines a task image: the recipe (Dockerfile, context, build args), its checks, and the
content hash it is cached under.

The hash covers everything that changes the built root: builder version, Dockerfile, build
context after ``.dockerignore``, the base mapping, build args, the test tools' versions and the
host settings carried into the build. :class:`ImageBuildError` is raised by every build step.
"""

from __future__ import annotations

import contextlib
import fnmatch
import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from exploreval.suites.terminal._bases import Base
from exploreval.suites.terminal._docker_syntax import (
    Dockerfile,
    arg_of,
    env_pairs,
    expand,
)
from exploreval.suites.terminal._errors import TaskFormatError
from exploreval.suites.terminal._host_settings import (
    host_apt_options,
    host_pip_config,
)

#: Bump when what a build produces changes: every cached image is rebuilt.
BUILDER_VERSION = 6


UV_VERSION = "0.7.13"


PYTEST_VERSION = "8.4.1"


UV_CACHE = "/opt/exploreval-uv-cache"


#: The image's own byte code, mirrored as a ``PYTHONPYCACHEPREFIX`` tree: verification reads
#: byte code only from there (a ``__pycache__`` the agent planted is never read), and still
#: starts Python and pip from compiled modules.
PYCACHE_MIRROR = "/opt/exploreval-pycache"


#: Docker's default capability set: what a ``RUN`` may do as root in its image.
NO_EFFECT = ("CMD", "ENTRYPOINT", "EXPOSE", "LABEL", "VOLUME", "HEALTHCHECK", "STOPSIGNAL",
              "MAINTAINER", "ONBUILD")  # fmt: skip


BUILD_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


class ImageBuildError(RuntimeError):
    """A build step failed; ``unreachable`` names a host the step could not reach, if any."""

    def __init__(self, message: str, *, unreachable: str | None = None) -> None:
        super().__init__(message)
        self.unreachable = unreachable


@dataclass(frozen=True)
class BuildRecipe:
    """Everything a task's image is built from."""

    dockerfile: Path
    context: Path
    #: ``ARG`` values (a compose file's ``build.args``).
    args: dict[str, str] = field(default_factory=dict)
    #: Provision Terminal-Bench's test tools (uv, a pytest cache).
    terminal_bench_tools: bool = False
    #: Files of the context that never reach the image even without a .dockerignore.
    exclude: tuple[str, ...] = ()
    timeout_s: float = 1800.0


class ImageMeta(dict[str, Any]):
    """The built image's metadata (``image.json``): env, workdir, user, shell, notes."""


@dataclass(frozen=True)
class BuiltImage:
    key: str
    path: Path
    meta: dict[str, Any]

    @property
    def rootfs(self) -> Path:
        return self.path / "rootfs"

    @property
    def env(self) -> dict[str, str]:
        return dict(self.meta.get("env", {}))

    @property
    def workdir(self) -> str:
        return str(self.meta.get("workdir") or "/")

    @property
    def notes(self) -> list[str]:
        return list(self.meta.get("notes", []))


# -- static checks (load time) -------------------------------------------------------------------
def static_workdir(df: Dockerfile, base: Base, args: dict[str, str]) -> str:
    """The final stage's working directory as the Dockerfile states it (load time, no build)."""
    variables = {k: v for k, v in df.global_args.items() if v is not None} | args
    env = dict(base.env)
    workdir = base.workdir or "/"
    for ins in df.final.instructions:
        if ins.keyword == "ENV":
            with contextlib.suppress(TaskFormatError):
                env.update(env_pairs(ins, {**variables, **env}, df.path))
        elif ins.keyword == "ARG":
            name, default = arg_of(ins, df.path)
            if name not in variables and default is not None:
                variables[name] = default
        elif ins.keyword == "WORKDIR":
            path = expand(ins.args.strip(), {**variables, **env})
            workdir = path if path.startswith("/") else join_path(workdir, path)
    return workdir


def known_image(ref: str) -> str | None:
    """A registry image whose files we can produce from the package index: uv's."""
    match = re.match(
        r"^(?:ghcr\.io/astral-sh/uv|astral/uv|docker\.io/astral/uv):(\d+\.\d+\.\d+)", ref
    )
    return match.group(1) if match else None


# -- cache keys ----------------------------------------------------------------------------------
def _context_files(recipe: BuildRecipe) -> list[Path]:
    ignore = read_dockerignore(recipe.context)
    files = []
    for path in sorted(recipe.context.rglob("*")):
        rel = path.relative_to(recipe.context).as_posix()
        if path.is_dir() and not path.is_symlink():
            continue
        if is_ignored(rel, ignore) or rel in recipe.exclude or rel.split("/")[0] in recipe.exclude:
            continue
        files.append(path)
    return files


def image_key(recipe: BuildRecipe, bases: list[Base]) -> str:
    digest = hashlib.sha256()
    digest.update(json.dumps({
        "builder": BUILDER_VERSION, "bases": [b.key for b in bases], "args": recipe.args,
        "tools": recipe.terminal_bench_tools, "uv": UV_VERSION, "pytest": PYTEST_VERSION,
        "host": host_apt_options() + host_pip_config(),
    }, sort_keys=True).encode())  # fmt: skip
    digest.update(recipe.dockerfile.read_bytes())
    for path in _context_files(recipe):
        digest.update(path.relative_to(recipe.context).as_posix().encode() + b"\0")
        if path.is_symlink():
            digest.update(os.readlink(path).encode())
        else:
            digest.update(path.read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()[:20]


# -- .dockerignore ---------------------------------------------------------------------------------
def read_dockerignore(context: Path) -> list[tuple[bool, str]]:
    path = context / ".dockerignore"
    if not path.is_file():
        return []
    rules: list[tuple[bool, str]] = []
    for line in path.read_text(errors="replace").splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        negate = line.startswith("!")
        pattern = line[1:].strip() if negate else line
        rules.append((negate, pattern.strip("/").removeprefix("./")))
    return rules


def is_ignored(rel: str, rules: list[tuple[bool, str]]) -> bool:
    ignored = False
    for negate, pattern in rules:
        regex = fnmatch.translate(pattern).replace(".*", "[^/]*").replace("[^/]*[^/]*", ".*")
        hit = re.match(regex, rel) is not None or any(
            re.match(regex, "/".join(rel.split("/")[: i + 1])) for i in range(rel.count("/"))
        )
        if hit:
            ignored = not negate
    return ignored


# -- the build ----------------------------------------------------------------------------------
class BuildLog:
    def __init__(self, path: Path, echo: IO[str] | None) -> None:
        self.path = path
        self.fh = open(path, "a", encoding="utf-8")  # noqa: SIM115 - closed by close()
        self.echo = echo

    def write(self, text: str) -> None:
        self.fh.write(text)
        self.fh.flush()
        if self.echo is not None:
            self.echo.write(text)

    def close(self) -> None:
        self.fh.close()


def join_path(base: str, rel: str) -> str:
    import posixpath

    return posixpath.normpath(posixpath.join(base, rel))
