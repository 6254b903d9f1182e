"""Where a ``FROM`` comes from: the real image when its registry can be reached, else emulated.

Docker builds on the image a ``FROM`` names. So does exploreval, wherever it can: an official
image (``debian``, ``ubuntu``, ``python``, under any of Docker's names or mirrors) and
Terminal-Bench's own bases are pulled (:mod:`._registry`, at the digest the reference pins) when
a registry that serves them answers, tried in this order: the host the reference names, then
the official images' other mirrors (:data:`._bases.OFFICIAL_IMAGE_PREFIXES`; the same image, the
same digest). Only when none answers, or the user asks for it (``EXPLOREVAL_BASE_IMAGES=emulate``),
is the image rebuilt from the distribution's packages (:mod:`._bases`), and then the image's
notes say so: which image was emulated, why, and how the emulation differs where that is known
(the release, the packages' current versions against the image's at its date). A verification
that fails on an emulated base says so in its reasons (:func:`emulation_reason`).

``EXPLOREVAL_REGISTRY_MIRRORS`` (``registry=mirror,...``, e.g. ``docker.io=cache.local:5000``)
sends a registry's pulls to a mirror, as Docker's ``registry-mirrors`` and containers'
``registries.conf`` do; a plain-HTTP mirror is named in ``EXPLOREVAL_INSECURE_REGISTRIES``.
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import replace
from pathlib import Path

from exploreval.suites.terminal._bases import (
    OFFICIAL_IMAGE_PREFIXES,
    Base,
    BaseRefused,
    map_base,
)
from exploreval.suites.terminal._image_ref import Reference
from exploreval.suites.terminal._registry import registry_reachable

BASE_IMAGES_ENV = "EXPLOREVAL_BASE_IMAGES"
_MODES = ("real", "emulate")
#: Where an official image is served, as a pull names it (Docker Hub first).
_OFFICIAL_SOURCES = (
    "docker.io/library/",
    "public.ecr.aws/docker/library/",
    "mirror.gcr.io/library/",
)


def base_mode() -> str:
    """``real`` (the default: pull where the registry answers) or ``emulate`` (always rebuild)."""
    mode = os.environ.get(BASE_IMAGES_ENV, "real").strip() or "real"
    if mode not in _MODES:
        raise BaseRefused(f"{BASE_IMAGES_ENV}={mode!r}: expected one of {', '.join(_MODES)}")
    return mode


def _candidates(image: str) -> list[str]:
    """The references that name the same image: as written, then its official mirrors."""
    ref = Reference(image)
    official = ref.registry == "docker.io" and ref.path.startswith("library/")
    name = ref.path.removeprefix("library/")
    for prefix in OFFICIAL_IMAGE_PREFIXES:
        host, _, path = prefix.partition("/")
        if ref.registry == host and f"{ref.path}/".startswith(path) and path:
            official, name = True, ref.path[len(path) :]
    if not official:
        return [image]
    tail = (f":{ref.tag}" if ref.tag else "") + (f"@{ref.digest}" if ref.digest else "")
    return list(dict.fromkeys([image, *(f"{p}{name}{tail}" for p in _OFFICIAL_SOURCES)]))


def choose_base(image: str, platform: str | None = None) -> Base:
    """The :class:`Base` a ``FROM image`` builds on (module docstring); :class:`BaseRefused`
    for an image that has no mapping and cannot be pulled either (Alpine, ``scratch``)."""
    emulated = map_base(image, platform)
    if emulated.pulled is not None:
        return emulated  # an application's image: pulled, never emulated
    mode = base_mode()
    if mode == "emulate":
        return _emulated(emulated, f"emulated as asked ({BASE_IMAGES_ENV}=emulate)")
    candidates = _candidates(image)
    for candidate in candidates:
        if registry_reachable(Reference(candidate)):
            ref = Reference(candidate)
            pinned = f" at {ref.digest[:19]}" if ref.digest else ""
            return replace(
                emulated,
                distro="pulled",
                release=ref.path.replace("/", "-"),
                packages=(),
                python=None,
                env={},
                workdir=None,
                pulled=candidate,
                note=f"{image} -> the real image{pinned}, pulled from {ref.host}",
            )
    hosts = ", ".join(dict.fromkeys(Reference(c).host for c in candidates))
    return _emulated(emulated, f"emulated: this machine cannot reach {hosts}")


def _emulated(base: Base, why: str) -> Base:
    return replace(base, note=f"{base.note} [{why}]", emulated=why)


#: Packages whose versions say most about how an emulated base differs from the image.
_KEY_PACKAGES = ("libc6", "libssl3", "libssl3t64", "openssl", "python3", "bash", "apt")


def emulation_note(rootfs: Path, base: Base) -> str:
    """What an emulated base is, for the image's notes: its release and key package versions
    (the release's current ones, where the real image has those of its build date)."""
    release = "unknown release"
    with contextlib.suppress(OSError):
        fields = dict(
            line.split("=", 1)
            for line in (rootfs / "etc/os-release").read_text().splitlines()
            if "=" in line
        )
        release = fields.get("PRETTY_NAME", release).strip('"')
    versions: dict[str, str] = {}
    with contextlib.suppress(OSError):
        for block in (rootfs / "var/lib/dpkg/status").read_text().split("\n\n"):
            lines = dict(ln.split(": ", 1) for ln in block.splitlines() if ": " in ln)
            if lines.get("Package") in _KEY_PACKAGES and "Version" in lines:
                versions[lines["Package"]] = lines["Version"]
    listed = ", ".join(f"{p} {versions[p]}" for p in _KEY_PACKAGES if p in versions)
    return (
        f"emulated base for {base.note.split(' -> ')[0]}: {release} from its current packages "
        f"({listed}); the real image has the packages of its own build"
    )


def emulation_reason(image_root: Path | None) -> str | None:
    """For a failed verification: the reason to give when the task's image was emulated (read
    from the built image's ``image.json``), or None (the real image, or the host system)."""
    if image_root is None:
        return None
    try:
        meta = json.loads((image_root.parent / "image.json").read_text())
    except (OSError, ValueError):
        return None
    emulated = meta.get("emulated")
    if not emulated:
        return None
    return (
        f"the image was built on an emulated base ({'; '.join(emulated)}): a failure may be the "
        "emulation's (another release, other package versions), not the agent's or the task's"
    )
