"""What a Dockerfile's ``FROM`` becomes: a Debian or Ubuntu system built with ``mmdebstrap``.

A Debian, Ubuntu or ``python:`` base is rebuilt from the distribution's own packages (the host's
apt mirror for Debian, ``EXPLOREVAL_UBUNTU_MIRROR`` or Ubuntu's archive for Ubuntu), not pulled:
the agent's image needs the harness built in, and these need no registry. An image no release
maps to is pulled instead, and the harness added to it (``._registry``, ``._pulled_base``). The mapping (docs/terminal.md, "Images", has the table):

* ``debian:<release>`` (``bookworm``, ``12``, ``bullseye``, ``trixie``, ``-slim`` or not,
  ``stable``/``latest``) -> that Debian release.
* ``ubuntu:<version>`` (``20.04``/``focal``, ``22.04``/``jammy``, ``24.04``/``noble``,
  ``latest``) -> that Ubuntu release.
* ``python:<X.Y>[-variant]`` -> the distribution release whose own ``python3`` is X.Y (3.8 focal,
  3.9 bullseye, 3.10 jammy, 3.11 bookworm, 3.12 noble, 3.13 trixie), with ``python3``, ``pip``
  and ``venv``, ``python``/``pip`` on ``PATH`` and pip allowed to install system-wide (no
  ``EXTERNALLY-MANAGED``), as in the official images. The *Python* version is honoured exactly;
  the variant's Debian release is not when it disagrees (``python:3.10-slim-bookworm`` is Ubuntu
  jammy), and a non-slim variant adds the build tools its ``buildpack-deps`` base has.
* Terminal-Bench's own bases: ``ghcr.io/laude-institute/t-bench/python-3-13`` = ``python:3.13``
  + tmux (its asciinema, Terminal-Bench's recorder, is left out: on the mapped image's only
  Python its Debian dependencies would block pip upgrades); ``.../ubuntu-24-04`` =
  ``ubuntu:24.04`` + tmux + asciinema.
* Docker's official images under their mirrors' names (``public.ecr.aws/docker/library/debian``,
  ``mirror.gcr.io/library/python``...: :data:`OFFICIAL_IMAGE_PREFIXES`) map as the bare name.
* Alpine and ``scratch`` are refused with the reason.
* Any other image (an application's: ``localstack/localstack``, another registry's) is pulled
  from its registry and the harness is added to it with its own apt (:mod:`._pulled_base`).

A rebuilt base has the packages of the image it stands for and nothing more: the harness (tmux,
a Python with pytest for verification, curl, ps) is beside the image, never in it
(:mod:`._harness_tree`), so the image's ``dpkg -l``, its apt pins and its Python are what its
Dockerfile made. ``debian:*`` and ``ubuntu:*`` are a minbase (their official images are);
``python:*`` add Python, pip, venv and the CA certificates, as the official ones have.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from exploreval.suites.terminal._image_ref import Reference

#: Python version -> (distribution, release) whose python3 is that version.
PYTHON_RELEASES: dict[str, tuple[str, str]] = {
    "3.8": ("ubuntu", "focal"),
    "3.9": ("debian", "bullseye"),
    "3.10": ("ubuntu", "jammy"),
    "3.11": ("debian", "bookworm"),
    "3.12": ("ubuntu", "noble"),
    "3.13": ("debian", "trixie"),
}
DEBIAN_RELEASES = {
    "bullseye": "bullseye", "11": "bullseye", "bookworm": "bookworm", "12": "bookworm",
    "trixie": "trixie", "13": "trixie", "stable": "trixie", "latest": "trixie",
}  # fmt: skip
UBUNTU_RELEASES = {
    "20.04": "focal", "focal": "focal", "22.04": "jammy", "jammy": "jammy",
    "24.04": "noble", "noble": "noble", "latest": "noble", "rolling": "noble",
}  # fmt: skip
#: What every rebuilt base has: its minbase (essential packages) and apt, as the official
#: ``debian``/``ubuntu`` images. The harness is not here (module docstring).
BASE_PACKAGES = ("apt",)
#: ``python:`` images (slim ones included) ship Python's C headers: tasks build extensions
#: (``setup.py build_ext``) against them, so the headers come with every python base.
_PYTHON_PACKAGES = (
    "python3",
    "python3-pip",
    "python3-venv",
    "python3-dev",
    "ca-certificates",
    "netbase",
    "tzdata",
)
#: What the non-slim ``python:`` images inherit from ``buildpack-deps``.
_BUILDPACK = ("build-essential", "git", "wget", "openssh-client", "libffi-dev", "libssl-dev",
              "zlib1g-dev", "pkg-config", "unzip", "xz-utils")  # fmt: skip
_TBENCH = "ghcr.io/laude-institute/t-bench/"


class BaseRefused(ValueError):
    """The ``FROM`` image has no mapping here; the message says why."""


@dataclass(frozen=True)
class Base:
    """A base system to build: a distribution release plus packages and image conventions."""

    distro: str  # "debian" | "ubuntu"
    release: str
    packages: tuple[str, ...]
    #: ``X.Y`` for a ``python:`` image (``python``/``pip`` on PATH, pip may install system-wide).
    python: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    #: The image's WORKDIR before the Dockerfile sets one (Terminal-Bench's bases: /app).
    workdir: str | None = None
    #: One line: what ``FROM`` named and what it became.
    note: str = ""
    #: A registry image to pull and carry the harness into (``._pulled_base``), instead of a
    #: release to build: ``distro`` is then "pulled" and ``release`` a name for the cache.
    pulled: str | None = None
    #: Why this image is rebuilt from packages though its ``FROM`` names a real image
    #: (:mod:`._base_source`); None for the real image, pulled.
    emulated: str | None = None

    @property
    def key(self) -> str:
        return (
            f"{self.distro}-{self.release}-{'-'.join(sorted(self.packages))}"
            + (f"-py{self.python}" if self.python else "")
            + (f"-wd{self.workdir}" if self.workdir else "")
            + (f"-pulled-{self.pulled}" if self.pulled else "")
        )


#: Where Docker's official images are served under another name: Docker Hub's own hosts and
#: the public mirrors (Harbor's task collections pin ``public.ecr.aws/docker/library/...``).
#: The same image, so the same mapping.
OFFICIAL_IMAGE_PREFIXES = (
    "docker.io/library/",
    "registry-1.docker.io/library/",
    "index.docker.io/library/",
    "public.ecr.aws/docker/library/",
    "mirror.gcr.io/library/",
)


def _strip_ref(image: str) -> tuple[str, str]:
    """(name without registry default/digest, tag); an official image under any of
    :data:`OFFICIAL_IMAGE_PREFIXES` has its bare name (``debian``)."""
    ref = image.split("@", 1)[0]
    name, _, tag = ref.rpartition(":") if ":" in ref.rsplit("/", 1)[-1] else (ref, "", "latest")
    for prefix in (*OFFICIAL_IMAGE_PREFIXES, "docker.io/", "library/"):
        if name.startswith(prefix):
            name = name[len(prefix) :]
            break
    return name, tag or "latest"


_DEFAULT_ENV = {
    "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "LANG": "C.UTF-8",
}


def map_base(image: str, platform: str | None = None) -> Base:
    """The :class:`Base` for a ``FROM`` image reference, or :class:`BaseRefused` (the reason).

    Releases whose tmux predates 3.2 (focal's 3.0a, bullseye's 3.1c) are mapped too: their
    sandbox runs the pane's server through a wrapper (:func:`._sandbox_argv.tmux_server_argv`)."""
    return _map_base(image, platform)


def _map_base(image: str, platform: str | None = None) -> Base:
    """The :class:`Base` for a ``FROM`` image reference, or :class:`BaseRefused`."""
    if platform and platform not in ("linux/amd64", "linux/x86_64", "$BUILDPLATFORM",
                                     "${BUILDPLATFORM}", "$TARGETPLATFORM"):  # fmt: skip
        raise BaseRefused(f"FROM --platform={platform}: this machine builds linux/amd64 only")
    name, tag = _strip_ref(image)
    digest = " (its digest is not reproducible here; the release's current packages are used)"
    pinned = digest if "@" in image else ""
    if name.startswith(_TBENCH):
        kind = name[len(_TBENCH) :]
        if kind == "python-3-13":
            # asciinema is left out here: Terminal-Bench's recorder (exploreval records its own
            # casts). Its Debian package once broke pip upgrades on the image's only Python;
            # /usr/local is now its own environment (_base_system), which apt's modules never
            # reach, so leaving it out only spares the download
            base = _map_base("python:3.13-slim-bookworm")
            return _with(base, ("tmux",),
                         f"{image} = python:3.13-slim-bookworm + tmux, asciinema, WORKDIR /app "
                         f"-> {base.distro} {base.release} (without asciinema: exploreval records "
                         f"the pane itself){pinned}", "/app")  # fmt: skip
        if kind == "ubuntu-24-04":
            return _with(_map_base("ubuntu:24.04"), ("tmux", "asciinema"),
                         f"{image} = ubuntu:24.04 + tmux, asciinema, WORKDIR /app -> ubuntu "
                         f"noble{pinned}", "/app")  # fmt: skip
        raise BaseRefused(
            f"FROM {image}: unknown Terminal-Bench base image (known: python-3-13, ubuntu-24-04)"
        )
    if name == "python":
        match = re.match(r"^(\d+\.\d+)(?:\.\d+)?(?:-(.*))?$", tag)
        if tag == "latest":
            match = re.match(r"^(3\.13)$", "3.13")
        if match is None:
            raise BaseRefused(f"FROM {image}: expected python:X.Y[-variant]")
        version = match.group(1)
        variant = (match.group(2) if match.lastindex and match.lastindex >= 2 else None) or ""
        if "alpine" in variant:
            raise BaseRefused(
                f"FROM {image}: Alpine (musl, apk) has no mapping here; this machine builds "
                "images from Debian and Ubuntu packages"
            )
        if "windows" in variant:
            raise BaseRefused(f"FROM {image}: Windows images cannot run here")
        release = PYTHON_RELEASES.get(version)
        if release is None:
            known = ", ".join(PYTHON_RELEASES)
            raise BaseRefused(
                f"FROM {image}: no Debian or Ubuntu release ships Python {version} (known: {known})"
            )
        distro, rel = release
        keyring = ("ubuntu-keyring",) if distro == "ubuntu" else ()
        wheels: tuple[str, ...] = ()
        if tuple(map(int, version.split("."))) <= (3, 11):  # images to 3.11 ship setuptools
            # releases before bookworm/jammy ship one package with every wheel in it
            wheels = ("python-pip-whl",) if rel in ("focal", "bullseye", "buster") else (
                "python3-setuptools-whl", "python3-wheel-whl")  # fmt: skip
        packages = _PYTHON_PACKAGES + keyring + wheels + (() if "slim" in variant else _BUILDPACK)
        wanted = re.search(r"(bookworm|bullseye|trixie|buster)", variant)
        differs = wanted and (distro, rel) != ("debian", wanted.group(1))
        note = (
            f"{image} -> {distro} {rel} (python3 {version})"
            + (
                f"; the variant's {wanted.group(1)} is not honoured (no {wanted.group(1)} ships "
                f"Python {version})"
                if differs and wanted
                else ""
            )
            + pinned
        )
        return Base(distro, rel, _merge(BASE_PACKAGES, packages), python=version,
                    env=dict(_DEFAULT_ENV), note=note)  # fmt: skip
    if name == "debian":
        rel_name = re.sub(r"-slim$", "", tag)
        debian = DEBIAN_RELEASES.get(rel_name)
        if debian is None:
            raise BaseRefused(
                f"FROM {image}: unknown Debian release {tag!r} (known: "
                f"{', '.join(sorted(set(DEBIAN_RELEASES)))})"
            )
        return Base("debian", debian, BASE_PACKAGES, env=dict(_DEFAULT_ENV),
                    note=f"{image} -> debian {debian}{pinned}")  # fmt: skip
    if name == "ubuntu":
        ubuntu = UBUNTU_RELEASES.get(tag)
        if ubuntu is None:
            raise BaseRefused(
                f"FROM {image}: unknown Ubuntu release {tag!r} (known: "
                f"{', '.join(sorted(set(UBUNTU_RELEASES)))})"
            )
        return Base("ubuntu", ubuntu, (*BASE_PACKAGES, "ubuntu-keyring"),
                    env=dict(_DEFAULT_ENV), note=f"{image} -> ubuntu {ubuntu}{pinned}")  # fmt: skip
    if name in ("scratch",):
        raise BaseRefused("FROM scratch: an empty image has no shell for the agent")
    if name == "alpine" or name.endswith("/alpine"):
        raise BaseRefused(
            f"FROM {image}: Alpine (musl, apk) has no mapping here; the harness (tmux, bash, "
            "python3) is installed into a pulled image with apt (Debian, Ubuntu) only"
        )
    # any other image is pulled from its registry, as Docker would, and the harness is
    # installed into it with its own apt (._pulled_base); the reference is checked here
    try:
        ref = Reference(image)
    except ValueError as exc:
        raise BaseRefused(f"FROM {image}: {exc}") from None
    return Base(
        "pulled", ref.path.replace("/", "-"), BASE_PACKAGES, pulled=ref.text,
        note=f"{image} -> pulled from {ref.host} (the harness beside it, not in it)",
    )  # fmt: skip


def _merge(*groups: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(p for group in groups for p in group))


def _with(base: Base, extra: tuple[str, ...], note: str, workdir: str | None = None) -> Base:
    return Base(base.distro, base.release, _merge(base.packages, extra), base.python,
                dict(base.env), workdir or base.workdir, note)  # fmt: skip
