"""Images from a container registry: for compose services that name one and build none, and
for a Dockerfile's ``FROM`` or ``COPY --from`` that names one (:mod:`._pulled_base`).

A Terminal-Bench or Harbor task often runs a stock image beside the agent (``db: image:
postgres:15``, three ``vulhub/minio`` nodes). Such an image is pulled as Docker pulls it, by the
tools containers are pulled with: ``skopeo copy`` (the registry's token auth, manifest lists and
the platform, every blob checked against its digest) into an OCI layout, then ``umoci raw
unpack`` (layers applied in order, whiteouts honoured, no path escaping the root) into the cache
as an image like a built one (``image.json`` beside ``rootfs``): listed, held, pruned and shared
the same way (:mod:`._image_cache`).

The image's config gives what Docker would: ``Env``, ``WorkingDir``, ``Entrypoint`` and ``Cmd``
(compose's ``entrypoint``/``command`` override them as in Docker) and Docker's ``Healthcheck``
extension when the image has one. ``User`` is recorded, not applied: a service runs as its
sandbox's root, as a built service image does.

A reference is pulled once, like compose's default ``pull_policy: missing``: the cache keys it by
the reference as written, and ``exploreval images prune`` makes the next run pull it again.
A registry this machine cannot reach fails the pull before it starts, naming the host
(:class:`ImageBuildError` ``unreachable``): for Docker Hub, ``registry-1.docker.io``. Plain-HTTP
registries (a local one) are named in ``EXPLOREVAL_INSECURE_REGISTRIES`` (comma-separated
``host:port``).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

from exploreval.suites.terminal._cache_entry import make_entry
from exploreval.suites.terminal._image_cache import images_root
from exploreval.suites.terminal._image_recipe import BuiltImage, ImageBuildError
from exploreval.suites.terminal._image_ref import Reference

INSECURE_ENV = "EXPLOREVAL_INSECURE_REGISTRIES"


MIRRORS_ENV = "EXPLOREVAL_REGISTRY_MIRRORS"


def _insecure(registry: str) -> bool:
    return registry in {r.strip() for r in os.environ.get(INSECURE_ENV, "").split(",") if r}


def registry_mirrors() -> dict[str, str]:
    """``EXPLOREVAL_REGISTRY_MIRRORS`` (``registry=mirror,...``): where a registry's pulls go
    instead, as Docker's ``registry-mirrors`` (``docker.io=cache.local:5000``)."""
    found: dict[str, str] = {}
    for item in os.environ.get(MIRRORS_ENV, "").split(","):
        if not item.strip():
            continue
        registry, sep, mirror = item.strip().partition("=")
        if not sep or not registry or not mirror or "/" in mirror:
            raise ImageBuildError(
                f"{MIRRORS_ENV}: {item.strip()!r} is not registry=mirror-host[:port] "
                "(e.g. docker.io=127.0.0.1:5000)"
            )
        found[registry] = mirror
    return found


def pull_location(ref: Reference) -> Reference:
    """Where ``ref`` is pulled from: its own registry, or the mirror configured for it."""
    mirror = registry_mirrors().get(ref.registry)
    if mirror is None:
        return ref
    tail = (f":{ref.tag}" if ref.tag else "") + (f"@{ref.digest}" if ref.digest else "")
    return Reference(f"{mirror}/{ref.path}{tail}")


_ANSWERS: dict[str, bool] = {}


def registry_reachable(ref: Reference) -> bool:
    """Can the registry ``ref`` is pulled from be reached (TCP, its port, or 443/80)?"""
    location = pull_location(ref)
    host, _, port = location.registry.partition(":")
    if not port:
        from exploreval.suites.terminal._reachability import reachable

        return reachable(location.host)
    if location.registry not in _ANSWERS:
        import socket

        try:
            socket.create_connection((host, int(port)), timeout=4).close()
            _ANSWERS[location.registry] = True
        except (OSError, ValueError):
            _ANSWERS[location.registry] = False
    return _ANSWERS[location.registry]


def pulled_key(reference: str) -> str:
    """The cache entry of ``reference``: ``pull-`` + a hash of its fully qualified form."""
    qualified = Reference(reference).qualified
    return "pull-" + hashlib.sha256(qualified.encode()).hexdigest()[:20]


def pull_image(reference: str, *, timeout_s: float = 1800.0) -> BuiltImage:
    """The image ``reference`` names, pulled now unless cached; blocking (module docstring)."""
    try:
        ref = Reference(reference)
    except ValueError as exc:
        raise ImageBuildError(str(exc)) from None

    def pull(work: Path, started: float) -> dict[str, Any]:
        location = pull_location(ref)
        insecure = _insecure(location.registry)
        if not insecure and not registry_reachable(ref):
            raise ImageBuildError(
                f"pulling {reference}: this machine cannot reach the registry {location.host}",
                unreachable=location.host,
            )
        for tool in ("skopeo", "umoci"):
            if shutil.which(tool) is None:
                raise ImageBuildError(
                    f"pulling {reference} needs {tool} (Debian's package {tool}; "
                    "scripts/install.sh installs it)"
                )
        meta = _pull_into(location, work, insecure=insecure, timeout_s=timeout_s)
        if location is not ref:
            meta["notes"].append(
                f"{ref.qualified} pulled from its mirror {location.registry} ({MIRRORS_ENV})"
            )
            meta["reference"] = ref.text
        return meta

    return make_entry(images_root() / pulled_key(reference), pull)


def _run(argv: list[str], what: str, timeout_s: float, ref: Reference) -> None:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        raise ImageBuildError(f"{what}: no result in {timeout_s:.0f} s") from None
    if done.returncode != 0:
        from exploreval.suites.terminal._reachability import unreachable_host

        tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-5:])
        host = unreachable_host(tail) or (
            ref.host if re.search(r"no such host|dial tcp|i/o timeout", tail) else None
        )
        raise ImageBuildError(f"{what} failed (exit {done.returncode}): {tail}",
                              unreachable=host)  # fmt: skip


def _pull_into(ref: Reference, work: Path, *, insecure: bool, timeout_s: float) -> dict[str, Any]:
    layout = work / "oci"
    copy = ["skopeo", "copy", "--quiet", "--retry-times", "2", "--override-os", "linux",
            "--override-arch", "amd64"]  # fmt: skip
    if insecure:
        copy.append("--src-tls-verify=false")
    _run([*copy, f"docker://{ref.pullable}", f"oci:{layout}:image"],
         f"pulling {ref.text} (skopeo copy)", timeout_s, ref)  # fmt: skip
    _run(["umoci", "raw", "unpack", "--image", f"{layout}:image", str(work / "rootfs")],
         f"unpacking {ref.text} (umoci raw unpack)", timeout_s, ref)  # fmt: skip
    config, digest = _config(layout)
    with contextlib.suppress(OSError):
        shutil.rmtree(layout)  # the blobs: the root file system holds what runs
    return image_meta(ref, config, digest)


def _config(layout: Path) -> tuple[dict[str, Any], str]:
    """The image config of the layout's one manifest, and the manifest's digest."""

    def blob(digest: str) -> dict[str, Any]:
        algorithm, _, hexdigest = digest.partition(":")
        data: dict[str, Any] = json.loads((layout / "blobs" / algorithm / hexdigest).read_bytes())
        return data

    index = json.loads((layout / "index.json").read_text())
    digest = index["manifests"][0]["digest"]
    manifest = blob(digest)
    return blob(manifest["config"]["digest"]), digest


def image_meta(ref: Reference, config: dict[str, Any], digest: str) -> dict[str, Any]:
    """``image.json`` of a pulled image from its OCI/Docker config (module docstring)."""
    inner = config.get("config") or {}
    env: dict[str, str] = {}
    for pair in inner.get("Env") or []:
        key, _, value = str(pair).partition("=")
        env[key] = value
    health = inner.get("Healthcheck") or None
    user = str(inner.get("User") or "")
    notes = [f"pulled {ref.text} ({ref.qualified}, manifest {digest[:19]})"]
    if user not in ("", "root", "0", "0:0"):
        notes.append(f"the image's USER {user} is recorded, not applied: the service runs as its "
                     "sandbox's root, as a built service image does")  # fmt: skip
    return {
        "env": env,
        "workdir": str(inner.get("WorkingDir") or "/"),
        "user": user or "root",
        "entrypoint": list(inner.get("Entrypoint") or []),
        "cmd": list(inner.get("Cmd") or []),
        "healthcheck": health,
        "base": f"pulled {ref.qualified}",
        "reference": ref.text,
        "manifest_digest": digest,
        "notes": notes,
    }
