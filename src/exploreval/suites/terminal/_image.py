"""Task images without Docker: a root file system built from a task's Dockerfile, cached.

``build_image(recipe)`` returns a :class:`BuiltImage` whose ``rootfs`` every episode of the task
mounts read-only as the lower layer of its own copy-on-write root (:mod:`._rootfs`). The steps:

1. **Base.** ``FROM`` maps to a Debian or Ubuntu release (:mod:`._bases`), built once per
   (release, packages) with ``mmdebstrap --variant=minbase`` from the host's apt mirror (Ubuntu:
   ``EXPLOREVAL_UBUNTU_MIRROR`` or Ubuntu's archive, its keyring checked against a pinned hash).
   The host's apt proxy and validity settings are carried into the build.
2. **Instructions**, in order, in the image: ``RUN`` executes in bubblewrap over the image being
   built, as root with Docker's default capabilities, with a network (user-mode NAT, the host's
   loopback unreachable) and the host's pip index settings; ``COPY``/``ADD`` (context files with
   ``.dockerignore``, globs, heredocs, ``--chown``/``--chmod``, other stages with ``--from``, URLs,
   local archives) are staged on the host and copied *inside* the image's sandbox, so a symbolic
   link in the image can never redirect a write to the host; ``ENV``, ``ARG``, ``WORKDIR``,
   ``USER``, ``SHELL`` set the build state; ``CMD``, ``ENTRYPOINT``, ``EXPOSE``, ``LABEL``,
   ``VOLUME``, ``HEALTHCHECK``, ``STOPSIGNAL`` are recorded and have no effect (the harness starts
   the agent's shell itself).
3. **Test tools** (Terminal-Bench tasks): uv (from the package index) at ``/root/.local/bin`` as
   Astral's installer would put it, and a uv cache holding pytest 8.4.1 at
   ``/opt/exploreval-uv-cache``, so ``setup-uv-pytest.sh`` works without downloading uv.

Images are cached by a content hash of everything that defines them (builder version, Dockerfile,
build context, base mapping, build args) under ``EXPLOREVAL_IMAGE_CACHE`` (default:
``~/.cache/exploreval/images``); a build holds a lock, so concurrent runs build once. A failing
step raises :class:`ImageBuildError` with the Dockerfile line, the step's last output and, when it
is a network failure, the host it could not reach.
"""

from __future__ import annotations

import contextlib
import fcntl
import fnmatch
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from exploreval.core import spawn_tied, write_atomic
from exploreval.suites.terminal._bases import Base, BaseRefused, map_base
from exploreval.suites.terminal._docker_syntax import (
    Dockerfile,
    Instruction,
    Stage,
    arg_of,
    env_pairs,
    expand,
    parse_dockerfile_file,
    split_words,
)
from exploreval.suites.terminal._errors import TaskFormatError
from exploreval.suites.terminal._image_cache import (
    images_root,
    share_across_images,
    share_with_base,
)
from exploreval.suites.terminal._output import bwrap_child_pid
from exploreval.suites.terminal._userns import DOCKER_CAPS

#: Bump when what a build produces changes: every cached image is rebuilt.
BUILDER_VERSION = 4
UV_VERSION = "0.7.13"
PYTEST_VERSION = "8.4.1"
UV_CACHE = "/opt/exploreval-uv-cache"
#: The image's own byte code, mirrored as a ``PYTHONPYCACHEPREFIX`` tree: verification reads
#: byte code only from there (a ``__pycache__`` the agent planted is never read), and still
#: starts Python and pip from compiled modules.
PYCACHE_MIRROR = "/opt/exploreval-pycache"
#: The Ubuntu archive keyring, checked against this hash before it is trusted.
UBUNTU_KEYRING = (
    "pool/main/u/ubuntu-keyring/ubuntu-keyring_2023.11.28.1_all.deb",
    "36de43b15853ccae0028e9a767613770c704833f82586f28eb262f0311adb8a8",
)
#: Docker's default capability set: what a ``RUN`` may do as root in its image.
_NO_EFFECT = ("CMD", "ENTRYPOINT", "EXPOSE", "LABEL", "VOLUME", "HEALTHCHECK", "STOPSIGNAL",
              "MAINTAINER", "ONBUILD")  # fmt: skip
_UNREACHABLE = (
    re.compile(r"Could not resolve host:? '?([\w.-]+)"),
    re.compile(r"Failed to connect to ([\w.-]+)"),
    re.compile(r"Could not connect to ([\w.-]+)"),
    re.compile(r"host='([\w.-]+)'.*(?:Max retries|ConnectTimeout|NewConnectionError)"),
    re.compile(r"Temporary failure resolving '([\w.-]+)'"),
    re.compile(r"unable to access 'https?://([\w.-]+)"),
    re.compile(r"Name or service not known.*?([\w-]+\.[\w.-]+)"),
    re.compile(r"unable to resolve host address [‘'\"]([\w.-]+)"),
    re.compile(r"Resolving ([\w.-]+) \([\w.-]+\)\.\.\. failed"),
    # uv: "error sending request for url (https://github.com/...)" ... "dns error"
    re.compile(r"(?:Failed to download|error sending request for url \(?) ?https?://([\w.-]+)"),
    # huggingface_hub / transformers: "We couldn't connect to 'https://huggingface.co' to load"
    re.compile(r"couldn't connect to '?https?://([\w.-]+)"),
)
#: Clients whose offline failure names no host: the host they fetch from by default.
_CLIENT_HOSTS = (
    # huggingface_hub with no network (or HF_HUB_OFFLINE): a model not in the local cache
    (re.compile(r"LocalEntryNotFoundError|OfflineModeIsEnabled|We couldn't connect to"),
     "huggingface.co"),
)  # fmt: skip
_BUILD_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


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
            workdir = path if path.startswith("/") else _join(workdir, path)
    return workdir


def check_recipe(recipe: BuildRecipe) -> tuple[Dockerfile, list[Base], list[str]]:
    """Parse the Dockerfile and map every stage's base; refuse what cannot be honoured with the
    file, line and reason (:class:`TaskFormatError`). Returns the parse, the bases and notes."""
    df = parse_dockerfile_file(recipe.dockerfile)
    notes: list[str] = []
    bases: list[Base] = []
    aliases: set[str] = set()
    variables = {k: v for k, v in df.global_args.items() if v is not None} | recipe.args
    for stage in df.stages:
        ref = expand(stage.base, variables)
        if ref in aliases:
            raise TaskFormatError(
                f"{recipe.dockerfile}:{stage.line}: FROM an earlier stage ({ref}) is not "
                "supported; build the stage's steps into one stage"
            )
        try:
            base = map_base(ref, stage.platform)
        except BaseRefused as exc:
            raise TaskFormatError(f"{recipe.dockerfile}:{stage.line}: {exc}") from None
        bases.append(base)
        notes.append(f"line {stage.line}: FROM {base.note}")
        if stage.alias:
            aliases.add(stage.alias)
        for ins in stage.instructions:
            if ins.keyword in ("COPY", "ADD") and "from" in ins.flags:
                source = expand(ins.flags["from"], variables)
                if (
                    source not in aliases
                    and source.isdigit() is False
                    and _known_image(source) is None
                ):
                    raise TaskFormatError(
                        f"{ins.where(recipe.dockerfile)}: {ins.keyword} --from={source}: only "
                        "earlier stages and the uv image (ghcr.io/astral-sh/uv) can be copied "
                        "from here (no container registry)"
                    )
            if ins.keyword in _NO_EFFECT:
                notes.append(f"line {ins.line}: {ins.keyword} recorded, no effect")
            if ins.keyword == "RUN" and "mount" in ins.flags:
                notes.append(f"line {ins.line}: RUN --mount={ins.flags['mount']} ignored")
    return df, bases, notes


def _known_image(ref: str) -> str | None:
    """A registry image whose files we can produce from the package index: uv's."""
    match = re.match(
        r"^(?:ghcr\.io/astral-sh/uv|astral/uv|docker\.io/astral/uv):(\d+\.\d+\.\d+)", ref
    )
    return match.group(1) if match else None


# -- cache keys ----------------------------------------------------------------------------------
def _context_files(recipe: BuildRecipe) -> list[Path]:
    ignore = _dockerignore(recipe.context)
    files = []
    for path in sorted(recipe.context.rglob("*")):
        rel = path.relative_to(recipe.context).as_posix()
        if path.is_dir() and not path.is_symlink():
            continue
        if _ignored(rel, ignore) or rel in recipe.exclude or rel.split("/")[0] in recipe.exclude:
            continue
        files.append(path)
    return files


def image_key(recipe: BuildRecipe, bases: list[Base]) -> str:
    digest = hashlib.sha256()
    digest.update(json.dumps({
        "builder": BUILDER_VERSION, "bases": [b.key for b in bases], "args": recipe.args,
        "tools": recipe.terminal_bench_tools, "uv": UV_VERSION, "pytest": PYTEST_VERSION,
        "host": _host_apt_options() + _host_pip_config(),
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
def _dockerignore(context: Path) -> list[tuple[bool, str]]:
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


def _ignored(rel: str, rules: list[tuple[bool, str]]) -> bool:
    ignored = False
    for negate, pattern in rules:
        regex = fnmatch.translate(pattern).replace(".*", "[^/]*").replace("[^/]*[^/]*", ".*")
        hit = re.match(regex, rel) is not None or any(
            re.match(regex, "/".join(rel.split("/")[: i + 1])) for i in range(rel.count("/"))
        )
        if hit:
            ignored = not negate
    return ignored


# -- host configuration carried into builds -------------------------------------------------------
def _host_apt_options() -> list[str]:
    """apt options of the host worth carrying: proxies, validity checks, retries."""
    try:
        dump = subprocess.run(["apt-config", "dump"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return []
    keep = ("Acquire::http::Proxy", "Acquire::https::Proxy", "Acquire::Check-Valid-Until",
            "Acquire::Check-Date", "Acquire::Retries", "Acquire::http::Timeout")  # fmt: skip
    out = []
    for line in dump.stdout.splitlines():
        key, _, value = line.partition(" ")
        if key in keep and value.endswith(";"):
            out.append(f"{key} {value[:-1]}")
    return sorted(out)


def _host_pip_config() -> list[str]:
    """The host's package-index settings (http/https only) as pip.conf lines."""
    settings: dict[str, str] = {}
    try:
        listed = subprocess.run(
            [sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True,
            timeout=30,
        )  # fmt: skip
        lines = listed.stdout.splitlines()
    except (OSError, subprocess.TimeoutExpired):
        lines = []
    for line in lines:
        key, _, value = line.partition("=")
        name = key.split(".", 1)[-1]
        if name in ("index-url", "extra-index-url", "trusted-host", "timeout"):
            settings[name] = value.strip().strip("'\"")
    for env, name in (("PIP_INDEX_URL", "index-url"), ("PIP_EXTRA_INDEX_URL", "extra-index-url"),
                      ("PIP_TRUSTED_HOST", "trusted-host")):  # fmt: skip
        if os.environ.get(env):
            settings[name] = os.environ[env]
    for name in ("index-url", "extra-index-url"):
        if name in settings:
            urls = [u for u in settings[name].split() if u.startswith(("http://", "https://"))]
            if urls:
                settings[name] = " ".join(urls)
            else:
                del settings[name]
    return [f"{k} = {v}" for k, v in sorted(settings.items())]


def host_cas() -> list[Path]:
    """Certificate authorities this host trusts locally (``/usr/local/share/ca-certificates``):
    a proxy's CA among them. Carried into every image so its downloads work as the host's do."""
    root = Path("/usr/local/share/ca-certificates")
    return sorted(p for p in root.rglob("*.crt") if p.is_file()) if root.is_dir() else []


#: Variables that make tools use the system's certificate store (with the host's CAs) instead of
#: their own bundles; set for builds, and for sandboxes with a network, when the host has CAs.
TRUST_ENV = {
    "SSL_CERT_FILE": "/etc/ssl/certs/ca-certificates.crt",
    "REQUESTS_CA_BUNDLE": "/etc/ssl/certs/ca-certificates.crt",
    "PIP_CERT": "/etc/ssl/certs/ca-certificates.crt",
    "UV_NATIVE_TLS": "1",
    "NODE_EXTRA_CA_CERTS": "/etc/ssl/certs/ca-certificates.crt",
}


def trust_env() -> dict[str, str]:
    return dict(TRUST_ENV) if host_cas() else {}


def _mirror(base: Base) -> str:
    if base.distro == "ubuntu":
        return os.environ.get("EXPLOREVAL_UBUNTU_MIRROR", "http://archive.ubuntu.com/ubuntu")
    env = os.environ.get("EXPLOREVAL_DEBIAN_MIRROR")
    if env:
        return env
    for path in sorted(Path("/etc/apt/sources.list.d").glob("*.sources")):
        for block in path.read_text(errors="replace").split("\n\n"):
            uris = re.search(r"^URIs:\s*(\S+)", block, re.M)
            if uris and "debian" in uris.group(1) and "security" not in uris.group(1):
                return uris.group(1)
    sources = Path("/etc/apt/sources.list")
    if sources.is_file():
        for line in sources.read_text(errors="replace").splitlines():
            words = line.split()
            if len(words) >= 3 and words[0] == "deb" and "security" not in words[1]:
                return words[1] if not words[1].startswith("[") else words[2]
    return "http://deb.debian.org/debian"


# -- the build ----------------------------------------------------------------------------------
class _Log:
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


def _lock(path: Path) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def _unlock(fd: int) -> None:
    with contextlib.suppress(OSError):
        fcntl.flock(fd, fcntl.LOCK_UN)
    os.close(fd)


def _held_image(target: Path) -> BuiltImage | None:
    """The built image at ``target``, marked in use by this process (``_image_cache.hold``),
    or None. Checked again once held: a prune that was removing it has finished by then."""
    from exploreval.suites.terminal._image_cache import hold

    if not (target / "image.json").is_file():
        return None
    hold(target)
    try:
        meta = json.loads((target / "image.json").read_text())
    except FileNotFoundError:
        return None
    return BuiltImage(target.name, target, meta)


def cached_image(recipe: BuildRecipe) -> BuiltImage | None:
    """The cached image of ``recipe``, or None (never builds)."""
    _, bases, _ = check_recipe(recipe)
    return _held_image(images_root() / image_key(recipe, bases))


def build_image(recipe: BuildRecipe, *, echo: IO[str] | None = None) -> BuiltImage:
    """The image of ``recipe`` (built now unless cached); blocking. A new image shares its
    base's untouched files, and the cache is then held to its cap (``_image_cache``)."""
    df, bases, notes = check_recipe(recipe)
    key = image_key(recipe, bases)
    root = images_root()
    target = root / key
    held = _held_image(target)
    if held is not None:
        return held
    lock = _lock(root / "locks" / f"{key}.lock")
    try:
        held = _held_image(target)
        if held is not None:
            return held
        work = Path(tempfile.mkdtemp(prefix=f".{key}.", dir=root))
        os.chmod(work, 0o755)
        log = _Log(work / "build.log", echo)
        started = time.monotonic()
        try:
            builder = _Builder(recipe, df, bases, work, log, started)
            meta = builder.build()
            meta["notes"] = notes + meta.get("notes", [])
            meta["seconds"] = round(time.monotonic() - started, 1)
            meta["key"] = key
            (work / "image.json").write_text(json.dumps(meta, indent=1, sort_keys=True))
            log.close()
            os.rename(work, target)
            from exploreval.suites.terminal._image_cache import enforce_cap, hold

            hold(target)
            # at its final path, so the index names files that stay where they are
            across_files, across_bytes = share_across_images(target / "rootfs")
            if across_files:
                meta["notes"].append(f"{across_files} installed files ({across_bytes / 1e6:.0f} "
                                     "MB) shared with other cached images")  # fmt: skip
                meta["shared_bytes"] = meta.get("shared_bytes", 0) + across_bytes
                write_atomic(target / "image.json",
                             lambda tmp: tmp.write_text(json.dumps(meta, indent=1, sort_keys=True)))  # fmt: skip
            for gone in enforce_cap(keep=target):
                print(f"exploreval: image cache over its cap: removed {gone.kind} {gone.name} "
                      f"({gone.own_bytes / 1e9:.1f} GB, least recently used)", file=sys.stderr)  # fmt: skip
        except BaseException:
            log.close()
            failed = root / "failed"
            failed.mkdir(exist_ok=True)
            with contextlib.suppress(OSError):
                shutil.copy2(work / "build.log", failed / f"{key}.log")
            _remove_tree(work)
            raise
        return BuiltImage(key, target, json.loads((target / "image.json").read_text()))
    finally:
        _unlock(lock)


def _remove_tree(path: Path) -> None:
    """Remove a build tree (files owned by any uid, possibly read-only dirs)."""
    subprocess.run(["rm", "-rf", "--one-file-system", str(path)], check=False)


def ensure_base(base: Base, log: _Log | None = None, *, tools: bool = False) -> Path:
    """The base system's root file system, built once per (release, packages, test tools).

    ``tools``: Terminal-Bench's test tools are provisioned here, before the task's Dockerfile
    runs (a task may break the network or DNS of its image on purpose)."""
    root = images_root() / "bases"
    key = hashlib.sha256(
        json.dumps(
            [
                BUILDER_VERSION,
                base.key,
                _mirror(base),
                _host_apt_options(),
                [p.read_text(errors="replace") for p in host_cas()],
                [UV_VERSION, PYTEST_VERSION] if tools else None,
            ]
        ).encode()
    ).hexdigest()[:16]
    target = root / f"{base.distro}-{base.release}-{key}"
    from exploreval.suites.terminal._image_cache import hold

    if (target / ".complete").is_file():
        hold(target)
        if (target / ".complete").is_file():
            return target / "rootfs"
    lock = _lock(root / "locks" / f"{target.name}.lock")
    try:
        if (target / ".complete").is_file():
            hold(target)
            return target / "rootfs"
        _remove_tree(target)
        (target).mkdir(parents=True)
        argv = [
            "mmdebstrap", "--variant=minbase", f"--include={','.join(base.packages)}",
            "--components=main" + (",universe" if base.distro == "ubuntu" else ""),
        ]  # fmt: skip
        for option in _host_apt_options():
            argv.append(f"--aptopt={option}")
        if base.distro == "ubuntu":
            argv.append(f"--keyring={_ubuntu_keyring()}")
        argv += [base.release, str(target / "rootfs"), *_sources(base)]
        if log is not None:
            log.write(f"$ {' '.join(shlex.quote(a) for a in argv)}\n")
        done = subprocess.run(argv, capture_output=True, text=True, timeout=1800)
        if done.returncode != 0:
            tail = "\n".join((done.stdout + done.stderr).splitlines()[-25:])
            raise ImageBuildError(
                f"building the base system {base.distro} {base.release} with mmdebstrap failed "
                f"(exit {done.returncode}):\n{tail}",
                unreachable=_unreachable_host(done.stdout + done.stderr),
            )
        _base_conventions(target / "rootfs", base)
        if tools:
            provision_test_tools(target / "rootfs", target, log)
        (target / ".complete").write_text(base.note + "\n")
        hold(target)
        return target / "rootfs"
    finally:
        _unlock(lock)


#: apt's download directories, which it hands to its ``_apt`` user.
APT_PARTIAL_DIRS = ("var/cache/apt/archives/partial", "var/lib/apt/lists/partial")


def single_uid_apt(rootfs: Path) -> None:
    """Let apt work where the root has one uid. A Docker container's root runs apt, which drops
    to its ``_apt`` user (uid 42) to download; a sandbox maps one uid, so that switch fails
    (``setgroups``, ``seteuid 42``) and ``_apt``'s 0700 download directories are unreachable:
    a test script's ``apt-get install`` failed. apt is told to stay root
    (``APT::Sandbox::User "root"``) and its download directories are root's, so installing
    works as in the container, minus the privilege drop."""
    conf = rootfs / "etc/apt/apt.conf.d/99exploreval-one-uid"
    conf.parent.mkdir(parents=True, exist_ok=True)
    conf.write_text('// exploreval: the sandbox has one uid; apt cannot switch to _apt\n'
                    'APT::Sandbox::User "root";\n')  # fmt: skip
    for rel in APT_PARTIAL_DIRS:
        with contextlib.suppress(OSError):
            os.chown(rootfs / rel, 0, 0)


def _base_conventions(rootfs: Path, base: Base) -> None:
    """What the official images have that a minbase lacks: ``python``/``pip`` on PATH and pip
    allowed to install system-wide (python: images); and the host's apt options, pip index and
    locally trusted certificate authorities."""
    cas = host_cas()
    if cas:
        target = rootfs / "usr/local/share/ca-certificates/exploreval-host"
        target.mkdir(parents=True, exist_ok=True)
        for i, ca in enumerate(cas):
            shutil.copy2(ca, target / f"{i}-{ca.name}")
        run_in_root(rootfs, ["update-ca-certificates"], env={"PATH": _BUILD_PATH}, binds=[],
                    network=False, what="trusting the host's certificate authorities", log=None,
                    scratch=rootfs.parent, timeout=300)  # fmt: skip
    conf = rootfs / "etc/apt/apt.conf.d/99exploreval-host"
    options = _host_apt_options()
    if options:
        conf.write_text("".join(f"{o};\n" for o in options))
    single_uid_apt(rootfs)
    pip_lines = _host_pip_config()
    if pip_lines:
        (rootfs / "etc/pip.conf").write_text("[global]\n" + "\n".join(pip_lines) + "\n")
    if base.workdir:
        (rootfs / base.workdir.lstrip("/")).mkdir(parents=True, exist_ok=True)
    if base.python:
        for marker in rootfs.glob("usr/lib/python3*/EXTERNALLY-MANAGED"):
            marker.unlink()
        # The official images' layout: pip (and, to 3.11, setuptools and wheel) installed in
        # /usr/local/lib/pythonX.Y/site-packages, ``pip`` and ``python`` in /usr/local/bin.
        # Debian's own pip wheels bootstrap it offline; the apt copy is then removed.
        version = base.python
        extra = " setuptools wheel" if tuple(map(int, version.split("."))) <= (3, 11) else ""
        script = "\n".join([
            "set -e",
            f"site=/usr/local/lib/python{version}",
            'mkdir -p "$site/dist-packages"',
            '[ -e "$site/site-packages" ] || ln -s dist-packages "$site/site-packages"',
            # --break-system-packages exists where pip enforces EXTERNALLY-MANAGED (pip 23+)
            "flag=; python3 -m pip install --help | grep -q break-system-packages && "
            "flag=--break-system-packages",
            "python3 -m pip install --quiet $flag --ignore-installed --no-index "
            f"--find-links /usr/share/python-wheels pip{extra}",
            # and what apt's pip pulled in (python3-wheel, setuptools...): the official images'
            # Python has no Debian modules for pip to trip over when it upgrades one
            "apt-get purge -y -qq --autoremove python3-pip >/dev/null",
            "ln -sf /usr/bin/python3 /usr/local/bin/python",
            "[ -e /usr/local/bin/pip ] || ln -s pip3 /usr/local/bin/pip",
            "python -m pip --version",
        ])  # fmt: skip
        run_in_root(rootfs, ["/bin/sh", "-c", script],
                    env={"PATH": _BUILD_PATH, "HOME": "/root", "DEBIAN_FRONTEND": "noninteractive"},
                    binds=[], network=False, what=f"setting up {base.note}", log=None,
                    scratch=rootfs.parent, timeout=600)  # fmt: skip


def _sources(base: Base) -> list[str]:
    """The image's apt sources, as Docker's official images have them: the release, its updates
    and its security pocket."""
    mirror = _mirror(base)
    if base.distro == "ubuntu":
        components = "main universe"
        security = mirror
    else:
        components = "main"
        security = os.environ.get("EXPLOREVAL_DEBIAN_SECURITY_MIRROR") or mirror.replace(
            "/debian", "/debian-security"
        )
    lines = [f"deb {mirror} {base.release} {components}",
             f"deb {mirror} {base.release}-updates {components}",
             f"deb {security} {base.release}-security {components}"]  # fmt: skip
    return lines


def _ubuntu_keyring() -> Path:
    target = images_root() / "keyrings" / "ubuntu-archive-keyring.gpg"
    if target.is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    pool, sha = UBUNTU_KEYRING
    url = f"{os.environ.get('EXPLOREVAL_UBUNTU_MIRROR', 'http://archive.ubuntu.com/ubuntu')}/{pool}"
    try:
        with urllib.request.urlopen(url, timeout=60) as response:  # noqa: S310 - pinned hash
            data = response.read()
    except (urllib.error.URLError, OSError) as exc:
        raise ImageBuildError(
            f"the Ubuntu keyring could not be downloaded from {url}: {exc}",
            unreachable=urllib.parse.urlparse(url).hostname,
        ) from exc
    if hashlib.sha256(data).hexdigest() != sha:
        raise ImageBuildError(f"the Ubuntu keyring from {url} does not match its pinned hash")
    with tempfile.TemporaryDirectory() as tmp:
        deb = Path(tmp) / "keyring.deb"
        deb.write_bytes(data)
        subprocess.run(["dpkg-deb", "-x", str(deb), tmp], check=True)
        shutil.copy2(Path(tmp) / "usr/share/keyrings/ubuntu-archive-keyring.gpg", target)
    return target


_NETWORK_FAILURE = re.compile(
    r"Name or service not known|Temporary failure in name resolution|Could not resolve|"
    r"Network is unreachable|Connection refused|Connection timed out|NewConnectionError|"
    r"Failed to connect|urlopen error"
)
#: A failure to reach a remote host (not a refused local connection: a server that is down).
_REMOTE_FAILURE = re.compile(
    r"Name or service not known|Temporary failure in name resolution|Could not resolve|"
    r"Network is unreachable|Connection timed out|ConnectTimeout|NameResolutionError"
)
_REACHABLE: dict[str, bool] = {}


def reachable(host: str) -> bool:
    """Can this machine open a TCP connection to ``host`` (443, else 80)? Cached per process."""
    import socket

    if host not in _REACHABLE:
        ok = False
        for port in (443, 80):
            try:
                socket.create_connection((host, port), timeout=4).close()
                ok = True
                break
            except OSError:
                continue
        _REACHABLE[host] = ok
    return _REACHABLE[host]


def unreachable_in(texts: list[str]) -> str | None:
    """The first host a URL in ``texts`` names that this machine cannot reach (checked)."""
    pattern = re.compile(
        r"https?://([A-Za-z0-9.-]+\.[A-Za-z]{2,})"
        r"|\b(?:curl|wget)\s+(?:-\S+\s+)*([A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,})\b"
    )
    for text in texts:
        for match in pattern.finditer(text):
            host = (match.group(1) or match.group(2)).lower()
            if _internet_host(host) and not reachable(host):
                return host
    return None


_HOSTNAME = re.compile(r"^[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}$")


def _internet_host(name: str) -> bool:
    """Could ``name`` be a host on the internet? Not ``localhost``, an address, a one-label name
    (a compose service: ``remote``) or a Python module path that a traceback printed near a
    network error (``urllib.request``, ``pip._vendor...``)."""
    if not _HOSTNAME.match(name) or name.endswith(".localhost"):
        return False
    first = name.split(".", 1)[0]
    return first not in sys.stdlib_module_names and first not in {"pip", "requests", "urllib3"}


def _unreachable_host(output: str, command: list[str] | None = None) -> str | None:
    """The host a network failure in ``output`` names; else, when the output shows a network
    failure, a host the failing ``command`` fetches from that this machine cannot reach."""
    for pattern in _UNREACHABLE:
        for match in pattern.finditer(output):
            host = match.group(1).strip(".'").lower()
            if _internet_host(host) and not reachable(host):
                return host
    if command and _NETWORK_FAILURE.search(output):
        return unreachable_in(command)
    return None


def unreachable_at_test_time(output: str, sources: tuple[str, ...] = ()) -> str | None:
    """The host a failed verification needed and this machine cannot reach: named by the
    failure, implied by a client's offline error (Hugging Face's hub), or fetched by the test
    files (``sources``) when the output shows a network failure. None: not a network failure."""
    host = _unreachable_host(output)
    if host:
        return host
    for pattern, default in _CLIENT_HOSTS:
        if pattern.search(output) and not reachable(default):
            return default
    if sources and _REMOTE_FAILURE.search(output):
        return unreachable_in(list(sources))
    return None


def fetch_uv(version: str = UV_VERSION) -> Path:
    """The uv binary of ``version`` (and uvx), from the package index, cached."""
    target = images_root() / "tools" / f"uv-{version}"
    if (target / "uv").is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        done = subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
             "--platform", "manylinux_2_17_x86_64", "--python-version", "3.11",
             f"uv=={version}", "-d", tmp],  # fmt: skip
            capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        wheels = list(Path(tmp).glob("uv-*.whl"))
        if done.returncode != 0 or not wheels:
            raise ImageBuildError(
                f"uv {version} could not be downloaded from the package index: "
                f"{done.stderr.strip()[-500:]}",
                unreachable=_unreachable_host(done.stderr),
            )
        out = Path(tmp) / "out"
        out.mkdir()
        with zipfile.ZipFile(wheels[0]) as wheel:
            for name in wheel.namelist():
                base = name.rsplit("/", 1)[-1]
                if ".data/scripts/" in name and base in ("uv", "uvx"):
                    (out / base).write_bytes(wheel.read(name))
                    (out / base).chmod(0o755)
        if not (out / "uv").is_file():
            raise ImageBuildError(f"the uv {version} wheel holds no uv binary")
        with contextlib.suppress(OSError):
            os.rename(out, target)
    return target


@dataclass
class _StageState:
    stage: Stage
    rootfs: Path
    env: dict[str, str]
    args: dict[str, str]
    workdir: str = "/"
    user: str = "root"
    shell: list[str] = field(default_factory=lambda: ["/bin/sh", "-c"])


class _Builder:
    def __init__(
        self,
        recipe: BuildRecipe,
        df: Dockerfile,
        bases: list[Base],
        work: Path,
        log: _Log,
        started: float,
    ) -> None:
        self.recipe = recipe
        self.df = df
        self.bases = bases
        self.work = work
        self.log = log
        self.deadline = started + recipe.timeout_s
        self.stages: dict[str, _StageState] = {}
        self.notes: list[str] = []
        self._heredoc_counter = 0

    # -- plumbing --------------------------------------------------------------------------------
    def _where(self, ins: Instruction) -> str:
        return ins.where(self.recipe.dockerfile)

    def _sandbox(
        self,
        rootfs: Path,
        argv: list[str],
        *,
        env: dict[str, str],
        cwd: str = "/",
        binds: list[tuple[Path, str]] | None = None,
        network: bool = True,
        what: str,
        ins: Instruction | None = None,
    ) -> str:
        return run_in_root(
            rootfs, argv, env=env, cwd=cwd, binds=binds or [], network=network, what=what,
            log=self.log, scratch=self.work, timeout=max(1.0, self.deadline - time.monotonic()),
        )  # fmt: skip

    # -- stages ----------------------------------------------------------------------------------
    def build(self) -> dict[str, Any]:
        final: _StageState | None = None
        final_base = Path("/")
        for index, (stage, base) in enumerate(zip(self.df.stages, self.bases, strict=True)):
            self.log.write(f"# stage {index} FROM {stage.base} ({base.note})\n")
            last = index == len(self.df.stages) - 1
            base_root = ensure_base(base, self.log, tools=last and self.recipe.terminal_bench_tools)
            rootfs = self.work / ("rootfs" if index == len(self.df.stages) - 1 else f"stage{index}")
            self.log.write(f"$ cp -a {base_root} {rootfs}\n")
            subprocess.run(["cp", "-a", "--reflink=auto", str(base_root), str(rootfs)], check=True)
            variables = {k: v for k, v in self.df.global_args.items() if v is not None}
            variables.update(self.recipe.args)
            state = _StageState(stage, rootfs, env=dict(base.env), args={},
                                workdir=base.workdir or "/")  # fmt: skip
            state.args.update({k: v for k, v in variables.items() if k in self.recipe.args})
            self._run_stage(state, variables)
            final_base = base_root
            if stage.alias:
                self.stages[stage.alias] = state
            self.stages[str(index)] = state
            final = state
        assert final is not None
        if self.recipe.terminal_bench_tools:
            self.notes.append(
                f"test tools provisioned before the Dockerfile ran: uv {UV_VERSION} at "
                f"/root/.local/bin, pytest {PYTEST_VERSION} in the uv cache {UV_CACHE}"
            )
        for name, state in self.stages.items():
            if state is not final and name.isdigit():
                _remove_tree(state.rootfs)
        single_uid_apt(final.rootfs)  # again: the Dockerfile's own apt runs may have re-made them
        # before the byte-code mirror links to the image's files (the mirror would keep the
        # image's copies of what becomes shared)
        shared_files, shared_bytes = share_with_base(final.rootfs, final_base)
        self.notes.append(f"{shared_files} files ({shared_bytes / 1e6:.0f} MB) shared with the "
                          "base system (hard links: stored once in the cache)")  # fmt: skip

        mirrored = mirror_pycache(final.rootfs)
        self.notes.append(f"{mirrored} byte-code files mirrored at {PYCACHE_MIRROR} (verification)")
        return {
            "env": final.env,
            "workdir": final.workdir,
            "user": final.user,
            "shell": final.shell,
            "base": self.bases[-1].note,
            "notes": self.notes,
            "terminal_bench_tools": self.recipe.terminal_bench_tools,
            "builder": BUILDER_VERSION,
            "base_dir": final_base.parent.name,
            "shared_bytes": shared_bytes,
        }

    def _vars(self, state: _StageState, global_vars: dict[str, str]) -> dict[str, str]:
        return {**global_vars, **state.args, **state.env}

    def _run_stage(self, state: _StageState, global_vars: dict[str, str]) -> None:
        declared: dict[str, str | None] = {}
        for ins in state.stage.instructions:
            if time.monotonic() > self.deadline:
                raise ImageBuildError(f"{self._where(ins)}: the build ran out of time")
            self.log.write(f"# {self._where(ins)} {ins.keyword} {ins.args[:200]}\n")
            variables = self._vars(state, global_vars)
            kw = ins.keyword
            if kw == "ARG":
                name, default = arg_of(ins, self.recipe.dockerfile)
                declared[name] = default
                if name in self.recipe.args:
                    state.args[name] = self.recipe.args[name]
                elif name in global_vars and default is None:
                    state.args[name] = global_vars[name]
                elif default is not None:
                    state.args[name] = expand(default, variables)
            elif kw == "ENV":
                for key, value in env_pairs(ins, variables, self.recipe.dockerfile):
                    state.env[key] = value
            elif kw == "WORKDIR":
                path = expand(ins.args.strip(), variables)
                state.workdir = path if path.startswith("/") else _join(state.workdir, path)
                self._sandbox(state.rootfs, ["mkdir", "-p", state.workdir], env=self._env(state),
                              network=False, what=f"{self._where(ins)}: WORKDIR")  # fmt: skip
            elif kw == "USER":
                state.user = expand(ins.args.strip(), variables) or "root"
            elif kw == "SHELL":
                if not ins.json_args:
                    raise TaskFormatError(f"{self._where(ins)}: SHELL needs a JSON array")
                state.shell = list(ins.json_args)
            elif kw == "RUN":
                self._run(state, ins)
            elif kw in ("COPY", "ADD"):
                self._copy(state, ins, variables)
            elif kw in _NO_EFFECT:
                continue
            else:  # pragma: no cover - the parser knows every keyword
                raise TaskFormatError(f"{self._where(ins)}: unsupported {kw}")

    def _env(self, state: _StageState) -> dict[str, str]:
        env = {"PATH": _BUILD_PATH, "HOME": "/root", "DEBIAN_FRONTEND": "noninteractive"}
        env.update(trust_env())
        env.update(state.args)
        env.update(state.env)
        return env

    def _as_user(self, state: _StageState, argv: list[str]) -> list[str]:
        user = state.user
        if user in ("root", "0", "0:0", "root:root"):
            return argv
        name, _, group = user.partition(":")
        wrapped = ["setpriv", f"--reuid={name}"]
        wrapped += [f"--regid={group}", "--clear-groups"] if group else ["--init-groups"]
        if not group:
            wrapped.append(f"--regid={name}")
        return [*wrapped, "--", *argv]

    def _run(self, state: _StageState, ins: Instruction) -> None:
        if ins.json_args is not None:
            argv = list(ins.json_args)
        elif ins.heredocs and re.fullmatch(r"\s*<<-?['\"]?\w+['\"]?\s*", ins.args):
            body = ins.heredocs[0].body
            if body.startswith("#!"):
                self._heredoc_counter += 1
                script = f"/tmp/.exploreval-heredoc-{self._heredoc_counter}"
                path = state.rootfs / script.lstrip("/")
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(body)
                path.chmod(0o755)
                argv = [script]
            else:
                argv = [*state.shell, body]
        elif ins.heredocs:
            text = ins.args
            for doc in ins.heredocs:
                text += "\n" + doc.body + doc.name
            argv = [*state.shell, text]
        else:
            argv = [*state.shell, ins.args]
        self._sandbox(
            state.rootfs,
            self._as_user(state, argv),
            env=self._env(state),
            cwd=state.workdir,
            what=f"{self._where(ins)}: RUN",
            ins=ins,
        )

    # -- COPY / ADD ------------------------------------------------------------------------------
    def _copy(self, state: _StageState, ins: Instruction, variables: dict[str, str]) -> None:
        where = self._where(ins)
        staging = Path(tempfile.mkdtemp(prefix="copy-", dir=self.work))
        try:
            if ins.json_args is not None:
                words = [expand(w, variables) for w in ins.json_args]
            else:
                words = [expand(w, variables) for w in split_words(ins.args)]
            if ins.heredocs:
                marks = {f"<<{'-' if d.strip_tabs else ''}{d.name}" for d in ins.heredocs}
                marks |= {f"<<-{d.name}" for d in ins.heredocs} | {
                    f'<<"{d.name}"' for d in ins.heredocs
                }
                marks |= {f"<<'{d.name}'" for d in ins.heredocs}
                dest_words = [w for w in words if w not in marks]
                if len(dest_words) != 1:
                    raise TaskFormatError(
                        f"{where}: {ins.keyword} with heredocs needs one destination"
                    )
                dest = dest_words[0]
                sources: list[Path] = []
                for doc in ins.heredocs:
                    body = doc.body if doc.quoted else expand(doc.body, variables)
                    name = doc.name if len(ins.heredocs) > 1 or dest.endswith("/") else "content"
                    target = staging / name
                    target.write_text(body)
                    target.chmod(0o644)
                    sources.append(target)
                if len(ins.heredocs) == 1 and not dest.endswith("/"):
                    self._install(state, ins, [(sources[0], False)], dest, single_file=True)
                else:
                    self._install(state, ins, [(s, False) for s in sources], dest)
                return
            if len(words) < 2:
                raise TaskFormatError(f"{where}: {ins.keyword} needs a source and a destination")
            *srcs, dest = words
            origin = ins.flags.get("from")
            items: list[tuple[Path, bool]] = []
            if origin is not None:
                origin = expand(origin, variables)
                items = self._from_origin(origin, srcs, staging, ins)
            else:
                for src in srcs:
                    if ins.keyword == "ADD" and re.match(r"^https?://", src):
                        items.append((self._download(src, staging, ins), False))
                        continue
                    items += [(p, ins.keyword == "ADD" and _is_archive(p)) for p in
                              self._context_sources(src, ins)]  # fmt: skip
            if not items:
                raise TaskFormatError(f"{where}: {ins.keyword} source(s) {srcs} match nothing")
            single = (
                len(items) == 1
                and not items[0][0].is_dir()
                and not items[0][1]
                and not dest.endswith("/")
            )
            self._install(state, ins, items, dest, single_file=single)
        finally:
            shutil.rmtree(staging, ignore_errors=True)

    def _context_sources(self, src: str, ins: Instruction) -> list[Path]:
        context = self.recipe.context.resolve()
        ignore = _dockerignore(context)
        pattern = src.lstrip("/")
        if pattern in ("", "."):
            matches = [context]
        else:
            matches = sorted(context.glob(pattern)) if any(c in pattern for c in "*?[") else [
                context / pattern]  # fmt: skip
        out = []
        for path in matches:
            resolved = path.resolve()
            if resolved != context and context not in resolved.parents:
                raise TaskFormatError(
                    f"{self._where(ins)}: {ins.keyword} source {src} lies outside the build context"
                )
            if not path.exists():
                raise TaskFormatError(
                    f"{self._where(ins)}: {ins.keyword} source {src} does not exist in {context}"
                )
            rel = path.relative_to(context).as_posix() if path != context else ""
            if rel and _ignored(rel, ignore):
                continue
            out.append(path)
        return out

    def _from_origin(
        self, origin: str, srcs: list[str], staging: Path, ins: Instruction
    ) -> list[tuple[Path, bool]]:
        version = _known_image(origin)
        if version is not None:
            uv = fetch_uv(version)
            out = []
            for src in srcs:
                name = src.strip("/").rsplit("/", 1)[-1]
                if name not in ("uv", "uvx"):
                    raise TaskFormatError(
                        f"{self._where(ins)}: COPY --from={origin} {src}: only /uv and /uvx are "
                        "known in the uv image"
                    )
                out.append((uv / name, False))
            return out
        state = self.stages.get(origin)
        if state is None:
            raise TaskFormatError(f"{self._where(ins)}: COPY --from={origin}: no such stage")
        out_dir = staging / "from"
        out_dir.mkdir()
        script = "set -e\n" + "".join(
            f"cp -a {shlex.quote(s)} /.exploreval-out/{i}\n" for i, s in enumerate(srcs)
        )
        # Copy out *inside* the source stage's root, so its links resolve within it.
        command = ["bwrap", "--bind", str(state.rootfs), "/", "--bind", str(out_dir),
                   "/.exploreval-out", "--proc", "/proc", "--dev", "/dev", "--unshare-all",
                   "--die-with-parent", "--cap-drop", "ALL", "--cap-add", "CAP_DAC_OVERRIDE",
                   "--cap-add", "CAP_FOWNER", "--cap-add", "CAP_CHOWN", "--",
                   "/bin/sh", "-c", script]  # fmt: skip
        done = subprocess.run(command, capture_output=True, text=True, timeout=600)
        if done.returncode != 0:
            raise ImageBuildError(f"{self._where(ins)}: COPY --from={origin} failed: {done.stderr}")
        return [(out_dir / str(i), False) for i in range(len(srcs))]

    def _download(self, url: str, staging: Path, ins: Instruction) -> Path:
        name = url.rstrip("/").rsplit("/", 1)[-1].split("?")[0] or "download"
        target = staging / name
        try:
            with urllib.request.urlopen(url, timeout=120) as response, open(target, "wb") as fh:  # noqa: S310
                shutil.copyfileobj(response, fh)
        except (urllib.error.URLError, OSError) as exc:
            host = urllib.parse.urlparse(url).hostname
            raise ImageBuildError(
                f"{self._where(ins)}: ADD {url}: the download failed ({exc}); it needs {host}, "
                "which this machine cannot reach",
                unreachable=host,
            ) from exc
        target.chmod(0o600)
        return target

    def _install(
        self,
        state: _StageState,
        ins: Instruction,
        items: list[tuple[Path, bool]],
        dest: str,
        *,
        single_file: bool = False,
    ) -> None:
        """Copy staged sources into the image, inside the image's own sandbox (its links resolve
        within it), as Docker does: a directory's contents; a file into an existing directory
        under its own name; archives extracted (``ADD``); ownership root or ``--chown``."""
        dest_path = dest if dest.startswith("/") else _join(state.workdir, dest)
        into_dir = dest.endswith("/") or len(items) > 1 or dest in (".", "./")
        q_dest = shlex.quote(dest_path)
        binds: list[tuple[Path, str]] = []
        lines = ["set -e", "copied=''"]
        for i, (source, extract) in enumerate(items):
            if extract:
                extracted = source.parent / f"x{i}"
                extracted.mkdir()
                with tarfile.open(source) as archive:
                    archive.extractall(extracted, filter="data")
                source = extracted
            name = source.name if source.name else "content"
            mount = f"/.exploreval-src/{i}/{name}"
            binds.append((source, mount))
            q_name = shlex.quote(name)
            if source.is_dir():
                lines += [f"mkdir -p {q_dest}", f"cp -a {mount}/. {q_dest}/",
                          f"for e in {mount}/* {mount}/.[!.]*; do [ -e \"$e\" ] && "
                          f"copied=\"$copied {q_dest}/$(basename \"$e\")\"; done; true"]  # fmt: skip
            elif into_dir or not single_file:
                lines += [f"mkdir -p {q_dest}", f"cp -a {mount} {q_dest}/{q_name}",
                          f"copied=\"$copied {q_dest}/{q_name}\""]  # fmt: skip
            else:
                lines += [f"t={q_dest}", f'if [ -d "$t" ]; then t="$t"/{q_name}; '
                          f'else mkdir -p "$(dirname "$t")"; fi',
                          f'cp -a {mount} "$t"', 'copied="$copied $t"']  # fmt: skip
        chown = ins.flags.get("chown")
        chmod = ins.flags.get("chmod")
        lines.append(f'[ -z "$copied" ] || chown -R {shlex.quote(_owner(chown or "0:0"))} $copied')
        if chmod:
            lines.append(f'[ -z "$copied" ] || chmod -R {shlex.quote(chmod)} $copied')
        self._sandbox(state.rootfs, ["/bin/sh", "-c", "\n".join(lines)], env=self._env(state),
                      binds=binds, network=False, what=f"{self._where(ins)}: {ins.keyword}")  # fmt: skip


def mirror_pycache(rootfs: Path) -> int:
    """Hard-link every ``__pycache__/*.pyc`` of the built image into :data:`PYCACHE_MIRROR`, laid
    out as Python's ``PYTHONPYCACHEPREFIX`` expects (``<prefix>/<source dir>/<name>.pyc``).
    Python checks each against its source's mtime and size, so a source the agent later changes
    is compiled afresh. Returns how many files were mirrored."""
    mirror = rootfs / PYCACHE_MIRROR.lstrip("/")
    skip = {rootfs / d for d in ("proc", "sys", "dev", "tmp")} | {mirror}
    count = 0
    for dirpath, dirnames, filenames in os.walk(rootfs):
        here = Path(dirpath)
        dirnames[:] = [d for d in dirnames
                       if here / d not in skip and not os.path.islink(here / d)]  # fmt: skip
        if here.name != "__pycache__":
            continue
        source_dir = here.parent.relative_to(rootfs)
        for name in filenames:
            if not name.endswith(".pyc") or os.path.islink(here / name):
                continue
            target = mirror / source_dir / name
            target.parent.mkdir(parents=True, exist_ok=True)
            with contextlib.suppress(FileExistsError):
                os.link(here / name, target)
                count += 1
    if mirror.is_dir():
        for dirpath, _dirs, _files in os.walk(mirror):
            os.chmod(dirpath, 0o755)
    return count


def provision_test_tools(rootfs: Path, scratch: Path, log: _Log | None) -> None:
    """Terminal-Bench's test tools: uv where Astral's installer puts it (with its ``env`` file)
    and a uv cache holding pytest, so its setup-uv-pytest.sh works without downloading uv."""
    uv = fetch_uv()
    script = "\n".join([
        "set -e",
        "mkdir -p /root/.local/bin",
        "cp /.exploreval-uv/uv /.exploreval-uv/uvx /root/.local/bin/",
        "cat > /root/.local/bin/env <<'EOF'",
        "#!/bin/sh",
        "# uv's installer puts this here: it adds uv to PATH",
        'case ":${PATH}:" in *:"$HOME/.local/bin":*) ;; *) export PATH="$HOME/.local/bin:$PATH" ;; esac',
        'case ":${PATH}:" in *:"/root/.local/bin":*) ;; *) export PATH="/root/.local/bin:$PATH" ;; esac',
        "EOF",
        f"mkdir -p {UV_CACHE}",
        "work=$(mktemp -d) && cd $work",
        f"UV_CACHE_DIR={UV_CACHE} /root/.local/bin/uv init --quiet --no-workspace . >/dev/null",
        f"UV_CACHE_DIR={UV_CACHE} /root/.local/bin/uv add --quiet pytest=={PYTEST_VERSION}",
        "cd / && rm -rf $work",
        f"chmod -R a+rX {UV_CACHE}",
    ])  # fmt: skip
    env = {"PATH": _BUILD_PATH, "HOME": "/root", **trust_env()}
    run_in_root(rootfs, ["/bin/sh", "-c", script], env=env, binds=[(uv, "/.exploreval-uv")],
                network=True, what="provisioning the test tools (uv, pytest)", log=log,
                scratch=scratch, timeout=900)  # fmt: skip


def run_in_root(
    rootfs: Path,
    argv: list[str],
    *,
    env: dict[str, str],
    cwd: str = "/",
    binds: list[tuple[Path, str]],
    network: bool,
    what: str,
    log: _Log | None,
    scratch: Path,
    timeout: float,
) -> str:
    """Run ``argv`` as root with Docker's default capabilities over ``rootfs`` (a build step);
    with ``network``, a user-mode stack without the host's loopback. Returns its output, or
    raises :class:`ImageBuildError` naming ``what``, the exit status and an unreachable host."""
    command = ["bwrap", "--bind", str(rootfs), "/", "--proc", "/proc", "--dev", "/dev",
               "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
               "--die-with-parent", "--hostname", "buildkitsandbox", "--cap-drop", "ALL"]  # fmt: skip
    for cap in DOCKER_CAPS:
        command += ["--cap-add", cap]
    for source, target in binds:
        command += ["--ro-bind", str(source), target]
    net: Any = None
    block_w = -1
    status_r, status_w = os.pipe()
    pass_fds: list[int] = [status_w]
    command += ["--unshare-net"]
    if network:
        r, w = os.pipe()
        os.write(w, b"nameserver 10.0.2.3\n")
        os.close(w)
        pass_fds.append(r)
        resolv = rootfs / "etc/resolv.conf"
        if resolv.is_symlink():  # (Ubuntu) a link into /run: a plain file to bind over
            resolv.unlink()
        if not resolv.exists():
            resolv.parent.mkdir(parents=True, exist_ok=True)
            resolv.touch()
        command += ["--perms", "0644", "--ro-bind-data", str(r), "/etc/resolv.conf"]
        block_r, block_w = os.pipe()
        pass_fds.append(block_r)
        command += ["--block-fd", str(block_r)]
    command += ["--json-status-fd", str(status_w), "--chdir", cwd, "--clearenv"]
    for key, value in env.items():
        command += ["--setenv", key, value]
    command += ["--", *argv]
    out_path = scratch / f"step-{os.getpid()}-{time.monotonic_ns()}.out"
    with open(out_path, "w+b") as out:
        proc = spawn_tied(command, stdin=subprocess.DEVNULL, stdout=out,
                          stderr=subprocess.STDOUT, pass_fds=tuple(pass_fds))  # fmt: skip
        for fd in pass_fds:
            os.close(fd)
        try:
            if network:
                from exploreval.suites.terminal._network import SlirpNet

                net = SlirpNet(_status_pid(status_r, proc))
                ready = os.read(net._ready_fd, 1)
                os.close(net._ready_fd)
                if ready != b"1":
                    raise ImageBuildError(f"{what}: slirp4netns did not start for the build")
                os.write(block_w, b"1")
            try:
                code = proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                raise ImageBuildError(f"{what}: the build ran out of time") from None
        finally:
            if net is not None:
                net.stop()
            for fd in (status_r, block_w):
                if fd >= 0:
                    with contextlib.suppress(OSError):
                        os.close(fd)
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        out.seek(0)
        output = out.read().decode("utf-8", errors="replace")
    out_path.unlink(missing_ok=True)
    if log is not None:
        log.write(output)
    if code != 0:
        tail = "\n".join(output.splitlines()[-20:])
        host = _unreachable_host(output, argv)
        reach = f"; it needs {host}, which this machine cannot reach" if host else ""
        raise ImageBuildError(
            f"{what} failed (exit {code}){reach}; last output:\n{tail}", unreachable=host
        )
    return output


def _status_pid(fd: int, proc: subprocess.Popen[bytes]) -> int:
    buf = b""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        chunk = os.read(fd, 4096)
        if not chunk:
            break
        buf += chunk
        child = bwrap_child_pid(buf)
        if child is not None:
            return child
    raise ImageBuildError(f"bwrap did not start for the build (exit {proc.poll()})")


def _owner(spec: str) -> str:
    """``--chown=user`` means user:user's group, as in Docker (chown would leave the group)."""
    return spec if ":" in spec else f"{spec}:{spec}" if spec.isdigit() else f"{spec}:"


def _join(base: str, rel: str) -> str:
    import posixpath

    return posixpath.normpath(posixpath.join(base, rel))


def _is_archive(path: Path) -> bool:
    if not path.is_file():
        return False
    try:
        return tarfile.is_tarfile(path)
    except OSError:
        return False
