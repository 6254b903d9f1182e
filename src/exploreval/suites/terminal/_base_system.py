"""Base systems: the Debian or Ubuntu root a Dockerfile's ``FROM`` maps to (:mod:`._bases`).

Built once per (release, packages) with ``mmdebstrap --variant=minbase`` from the host's apt
mirror (Ubuntu: ``EXPLOREVAL_UBUNTU_MIRROR`` or Ubuntu's archive, its keyring checked against a
pinned hash), with the conventions an image from Docker Hub has (apt's sandbox user, locales,
``/etc/hosts``...), and kept in the image cache beside the images built over it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shlex
import shutil
import subprocess
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path

from exploreval.suites.terminal._bases import Base
from exploreval.suites.terminal._host_settings import (
    apt_mirror,
    host_apt_options,
    host_cas,
    host_pip_config,
)
from exploreval.suites.terminal._image_cache import (
    images_root,
    lock_exclusive,
    unlock,
)
from exploreval.suites.terminal._image_recipe import (
    BUILD_PATH,
    BUILDER_VERSION,
    PYTEST_VERSION,
    UV_VERSION,
    BuildLog,
    ImageBuildError,
)
from exploreval.suites.terminal._reachability import unreachable_host
from exploreval.suites.terminal._root_run import run_in_root
from exploreval.suites.terminal._test_tools import provision_test_tools

#: The Ubuntu archive keyring, checked against this hash before it is trusted.
UBUNTU_KEYRING = (
    "pool/main/u/ubuntu-keyring/ubuntu-keyring_2023.11.28.1_all.deb",
    "36de43b15853ccae0028e9a767613770c704833f82586f28eb262f0311adb8a8",
)


def remove_tree(path: Path) -> None:
    """Remove a build tree (files owned by any uid, possibly read-only dirs)."""
    subprocess.run(["rm", "-rf", "--one-file-system", str(path)], check=False)


def ensure_base(base: Base, log: BuildLog | None = None, *, tools: bool = False) -> Path:
    """The base system's root file system, built once per (release, packages, test tools).

    ``tools``: Terminal-Bench's test tools are provisioned here, before the task's Dockerfile
    runs (a task may break the network or DNS of its image on purpose)."""
    root = images_root() / "bases"
    key = hashlib.sha256(
        json.dumps(
            [
                BUILDER_VERSION,
                base.key,
                apt_mirror(base),
                host_apt_options(),
                [p.read_text(errors="replace") for p in host_cas()],
                [UV_VERSION, PYTEST_VERSION] if tools else None,
            ]
        ).encode()
    ).hexdigest()[:16]
    target = root / f"{base.distro}-{base.release}-{key}"
    return ensure_entry(target, lambda: _build_base(base, target, log, tools=tools), base.note)


def ensure_entry(target: Path, build: Callable[[], None], note: str) -> Path:
    """``target/rootfs``, built once by ``build`` under the entry's lock and held for this
    process; a failed build leaves nothing behind (prune lists complete entries only)."""
    from exploreval.suites.terminal._image_cache import hold

    if (target / ".complete").is_file():
        hold(target)
        if (target / ".complete").is_file():
            return target / "rootfs"
    lock = lock_exclusive(target.parent / "locks" / f"{target.name}.lock")
    try:
        if (target / ".complete").is_file():
            hold(target)
            return target / "rootfs"
        remove_tree(target)
        target.mkdir(parents=True)
        try:
            build()
        except BaseException:
            remove_tree(target)
            raise
        (target / ".complete").write_text(note + "\n")
        hold(target)
        return target / "rootfs"
    finally:
        unlock(lock)


def _build_base(base: Base, target: Path, log: BuildLog | None, *, tools: bool) -> None:
    """mmdebstrap the release into ``target/rootfs``, then the images' conventions and tools."""
    argv = [
        "mmdebstrap", "--variant=minbase", f"--include={','.join(base.packages)}",
        "--components=main" + (",universe" if base.distro == "ubuntu" else ""),
    ]  # fmt: skip
    for option in host_apt_options():
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
            unreachable=unreachable_host(done.stdout + done.stderr),
        )
    base_conventions(target / "rootfs", base)
    if tools:
        note = provision_test_tools(target / "rootfs", target, log)
        if note:
            (target / TOOLS_NOTE).write_text(note + "\n")


#: A base's note on its test tools (written when they could not all be provisioned).
TOOLS_NOTE = "tools-note"

#: apt's download directories, which it hands to its ``_apt`` user.
APT_PARTIAL_DIRS = ("var/cache/apt/archives/partial", "var/lib/apt/lists/partial")


def single_uid_apt(rootfs: Path) -> None:
    """Let apt work where the root has one uid. A Docker container's root runs apt, which drops
    to its ``_apt`` user (uid 42) to download; a sandbox maps one uid, so that switch fails
    (``setgroups``, ``seteuid 42``) and ``_apt``'s 0700 download directories are unreachable:
    a test script's ``apt-get install`` failed. apt is told to stay root
    (``APT::Sandbox::User "root"``) and its download directories are root's, so installing
    works as in the container, minus the privilege drop."""
    if not (rootfs / "etc/apt").is_dir():  # an image without apt (a pulled one)
        return
    conf = rootfs / "etc/apt/apt.conf.d/99exploreval-one-uid"
    conf.parent.mkdir(parents=True, exist_ok=True)
    conf.write_text('// exploreval: the sandbox has one uid; apt cannot switch to _apt\n'
                    'APT::Sandbox::User "root";\n')  # fmt: skip
    for rel in APT_PARTIAL_DIRS:
        with contextlib.suppress(OSError):
            os.chown(rootfs / rel, 0, 0)


def write_host_apt_options(rootfs: Path) -> None:
    """The host's apt options (proxy, validity...) in the image, so its apt works from here."""
    options = host_apt_options()
    if options:
        conf = rootfs / "etc/apt/apt.conf.d/99exploreval-host"
        conf.parent.mkdir(parents=True, exist_ok=True)
        conf.write_text("".join(f"{o};\n" for o in options))


def _apt_conventions(rootfs: Path) -> None:
    """apt as the official images set it up, working with one uid and the host's settings."""
    write_host_apt_options(rootfs)
    single_uid_apt(rootfs)
    # Docker's official debian and ubuntu images delete the packages apt downloaded once they
    # are installed (their apt.conf.d/docker-clean); without it every image kept its .debs
    # (1.7 GB over terminal-bench-core's images)
    clean = "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb || true"
    (rootfs / "etc/apt/apt.conf.d/docker-clean").write_text(
        f'DPkg::Post-Invoke {{ "{clean}"; }};\nAPT::Update::Post-Invoke {{ "{clean}"; }};\n'
    )
    # dpkg before 1.20 (focal, bullseye) needs this file for ``--set-selections``, which every
    # ``apt-get purge``/``remove`` runs; the official images carry it, a minbase does not
    available = rootfs / "var/lib/dpkg/available"
    if available.parent.is_dir() and not available.exists():
        available.touch()


def base_conventions(rootfs: Path, base: Base, *, cas: bool = True) -> None:
    """What the official images have that a minbase lacks: ``python``/``pip`` on PATH and pip
    allowed to install system-wide (python: images); and the host's apt options, pip index and
    locally trusted certificate authorities (``cas``: once ``update-ca-certificates`` is in)."""
    # the host's authorities go where Debian's update-ca-certificates reads local ones, and are
    # trusted now where the image has ca-certificates; an image without them gets them trusted
    # only if its Dockerfile installs ca-certificates (its postinst reads them), as locally
    # added authorities would be in Docker
    cas_found = host_cas() if cas else []
    if cas_found:
        target = rootfs / "usr/local/share/ca-certificates/exploreval-host"
        target.mkdir(parents=True, exist_ok=True)
        for i, ca in enumerate(cas_found):
            shutil.copy2(ca, target / f"{i}-{ca.name}")
    if cas_found and (rootfs / "usr/sbin/update-ca-certificates").exists():
        run_in_root(rootfs, ["update-ca-certificates"], env={"PATH": BUILD_PATH}, binds=[],
                    network=False, what="trusting the host's certificate authorities", log=None,
                    scratch=rootfs.parent, timeout=300)  # fmt: skip
    if (rootfs / "etc/apt").is_dir():  # a pulled image may have no apt
        _apt_conventions(rootfs)
    pip_lines = host_pip_config()
    if pip_lines:
        (rootfs / "etc/pip.conf").write_text("[global]\n" + "\n".join(pip_lines) + "\n")
    if base.workdir:
        (rootfs / base.workdir.lstrip("/")).mkdir(parents=True, exist_ok=True)
    if base.python:
        for marker in rootfs.glob("usr/lib/python3*/EXTERNALLY-MANAGED"):
            marker.unlink()
        # The official images' layout: their own Python in /usr/local (``python``, ``python3``,
        # ``pip`` in /usr/local/bin; pip and, to 3.11, setuptools and wheel in
        # /usr/local/lib/pythonX.Y/site-packages), which never sees a Python module that apt
        # installs (apt's go to Debian's own python3). Here one interpreter serves both, so
        # /usr/local is made its own environment (a ``pyvenv.cfg`` over the distribution's
        # interpreter, no system site): a Dockerfile's ``apt-get install asciinema`` puts
        # typing-extensions in /usr/lib/python3/dist-packages, where pip, as in the official
        # image, never sees it (it could not upgrade it: "uninstall-no-record-file").
        # Debian's own pip wheels bootstrap pip offline; the apt copy is then removed.
        version = base.python
        extra = " setuptools wheel" if tuple(map(int, version.split("."))) <= (3, 11) else ""
        script = "\n".join([
            "set -e",
            f'mkdir -p "/usr/local/lib/python{version}/site-packages"',
            "printf 'home = /usr/bin\\ninclude-system-site-packages = false\\nversion = %s\\n' "
            "\"$(python3 -c 'import platform; print(platform.python_version())')\" "
            "> /usr/local/pyvenv.cfg",
            f"ln -sf /usr/bin/python{version} /usr/local/bin/python{version}",
            f"ln -sf python{version} /usr/local/bin/python3",
            f"ln -sf python{version} /usr/local/bin/python",
            # Debian's pip, run by the /usr/local interpreter, installs pip there (its
            # scripts then run that interpreter)
            "PYTHONPATH=/usr/lib/python3/dist-packages /usr/local/bin/python3 -m pip install "
            "--quiet --ignore-installed --no-index --find-links /usr/share/python-wheels "
            f"pip{extra}",
            # and what apt's pip pulled in (python3-wheel, setuptools...)
            "apt-get purge -y -qq --autoremove python3-pip >/dev/null",
            "[ -e /usr/local/bin/pip ] || ln -s pip3 /usr/local/bin/pip",
            "python -m pip --version",
            "[ \"$(python -c 'import sys; print(sys.prefix)')\" = /usr/local ]",
        ])  # fmt: skip
        run_in_root(rootfs, ["/bin/sh", "-c", script],
                    env={"PATH": BUILD_PATH, "HOME": "/root", "DEBIAN_FRONTEND": "noninteractive"},
                    binds=[], network=False, what=f"setting up {base.note}", log=None,
                    scratch=rootfs.parent, timeout=600)  # fmt: skip


def _sources(base: Base) -> list[str]:
    """The image's apt sources, as Docker's official images have them: the release, its updates
    and its security pocket."""
    mirror = apt_mirror(base)
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
