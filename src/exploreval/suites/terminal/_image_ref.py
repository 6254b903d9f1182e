"""An image reference (``postgres:15``, ``ghcr.io/org/app:1``, ``x@sha256:...``) read as Docker
reads it. Its own module: the ``FROM`` mapping (:mod:`._bases`) and the recipe checks read
references at load time, before anything can be pulled (:mod:`._registry`).
"""

from __future__ import annotations

import re

#: Docker Hub's names: where ``postgres:15`` and ``vulhub/minio`` live, and the host it serves.
DOCKER_HUB = "docker.io"
DOCKER_HUB_HOST = "registry-1.docker.io"
_NAME = re.compile(r"^[a-z0-9]+(?:[._-][a-z0-9]+)*(?:/[a-z0-9]+(?:[._-][a-z0-9]+)*)*$")
_TAG = re.compile(r"^[\w][\w.-]{0,127}$")
_DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")


class Reference:
    """A parsed image reference, fully qualified as Docker reads it."""

    def __init__(self, text: str) -> None:
        self.text = text
        rest = text.strip()
        digest = ""
        if "@" in rest:
            rest, digest = rest.split("@", 1)
            if not _DIGEST.match(digest):
                raise ValueError(f"image reference {text!r}: {digest!r} is not a sha256 digest")
        tag = ""
        last = rest.rsplit("/", 1)[-1]
        if ":" in last:
            rest, tag = rest.rsplit(":", 1)
            if not _TAG.match(tag):
                raise ValueError(f"image reference {text!r}: {tag!r} is not a tag")
        first, _, remainder = rest.partition("/")
        if remainder and ("." in first or ":" in first or first == "localhost"):
            registry, path = first, remainder
        else:
            registry, path = DOCKER_HUB, rest
        if registry == DOCKER_HUB and "/" not in path:
            path = f"library/{path}"  # Docker Hub's official images
        if not _NAME.match(path):
            raise ValueError(f"image reference {text!r}: {path!r} is not a repository name")
        self.registry = registry
        self.path = path
        self.tag = tag or ("" if digest else "latest")
        self.digest = digest

    @property
    def qualified(self) -> str:
        """``registry/path[:tag][@digest]``: the full name, with no short-name lookup."""
        return (f"{self.registry}/{self.path}" + (f":{self.tag}" if self.tag else "")
                + (f"@{self.digest}" if self.digest else ""))  # fmt: skip

    @property
    def pullable(self) -> str:
        """``registry/path@digest`` when pinned, else :attr:`qualified`: skopeo refuses a tag and
        digest together, and the digest is what names the content (the tag is then only a label)."""
        return f"{self.registry}/{self.path}@{self.digest}" if self.digest else self.qualified

    @property
    def host(self) -> str:
        """The host a pull connects to (without a port)."""
        return DOCKER_HUB_HOST if self.registry == DOCKER_HUB else self.registry.split(":")[0]
