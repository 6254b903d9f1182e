"""What the host carries into image builds: its apt proxy and validity settings, its pip index,
its apt mirror and the certificate authorities it trusts locally (a proxy's CA among them), so
the image's downloads work as the host's do.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from exploreval.suites.terminal._bases import Base


# -- host configuration carried into builds -------------------------------------------------------
def host_apt_options() -> list[str]:
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


def host_pip_config() -> list[str]:
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


def trust_env(bundle: str | None = None) -> dict[str, str]:
    """:data:`TRUST_ENV`, pointed at ``bundle`` when given (a sandbox's: the harness tree's copy
    of the host's store, which exists whatever the image ships), when the host has CAs."""
    if not host_cas():
        return {}
    if bundle is None:
        return dict(TRUST_ENV)
    return {k: (bundle if v.endswith(".crt") else v) for k, v in TRUST_ENV.items()}


def apt_mirror(base: Base) -> str:
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
