"""The harness beside the image: exploreval's own programs in a read-only tree of the verifier's.

The agent's pane needs a tmux server, verification a Python with pytest when the image has none
(Terminal-Bench's uv would download one), and the test scripts curl. Installed into the image,
they would change what its Dockerfile made: its ``dpkg -l``, its apt pins (a task that pins
``ca-certificates=20230311+deb12u1`` fails to downgrade over the harness's newer one), its
Python. So they live beside it: the host's own ``tmux``, ``curl``, ``ps`` and ``python3`` (its
standard library and pytest with what pytest imports), each with every shared library it loads
and the host's dynamic loader, patched (``patchelf``) to load only those
(``--set-interpreter`` and ``DT_RPATH`` into the tree). A program of the tree runs the same in
any image, whatever its C library (a focal image's glibc 2.31, a distroless one with none), and
loads nothing of the image's.

The tree is built once per host (keyed by the programs' contents; :func:`_trees_home`) and mounted
read-only at :data:`HARNESS_ROOT` in every sandbox, the agent's and the verifier's
(:func:`._sandbox_argv.bwrap_root_args`), with its ``bin`` at ``/opt/exploreval/bin``: last on
the verifier's ``PATH``, never on the agent's (the image's ``PATH`` is the agent's, as in
Docker). The harness runs its tmux by its absolute path (:data:`HARNESS_TMUX`).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from exploreval.suites.terminal._image_cache import images_root
from exploreval.suites.terminal._image_recipe import ImageBuildError

#: Where the tree is mounted in every sandbox.
HARNESS_ROOT = "/opt/exploreval/harness"
#: The pane's tmux, by absolute path (never the image's: an image has its own or none).
HARNESS_TMUX = f"{HARNESS_ROOT}/bin/tmux"
#: The harness's Python (with pytest), for an image that has none.
HARNESS_PYTHON = f"{HARNESS_ROOT}/bin/python3"
#: The host's programs the tree carries (tmux always; curl and ps where the host has them).
PROGRAMS = ("tmux", "curl", "ps")
#: The host's certificate store (its proxy's CA included, where it has one), for downloads
#: from a sandbox: an image need not ship ca-certificates (ubuntu:24.04 and the slim images do
#: not), and tools pointed at the host's CAs must find a store whatever the image holds.
HOST_CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")
HARNESS_CA_BUNDLE = f"{HARNESS_ROOT}/certs/ca-certificates.crt"
#: What pytest imports (the host's distributions of them go into the tree's site directory).
PYTEST_MODULES = (
    "_pytest",
    "pytest",
    "py",
    "pluggy",
    "iniconfig",
    "attr",
    "attrs",
    "packaging",
    "exceptiongroup",
    "tomli",
    "more_itertools",
)
#: Parts of the standard library no harness use needs (tests, GUIs, the 2to3 tool).
_STDLIB_SKIP = frozenset({"test", "idlelib", "tkinter", "turtledemo", "lib2to3", "__pycache__"})
_TREE_VERSION = 2
_HOST_PYTHON = "/usr/bin/python3"
#: Printed by the host's Python: where its standard library and pytest's modules are.
_SURVEY = """
import importlib.util, json, sys, sysconfig
mods = {}
for name in sys.argv[1].split(","):
    spec = importlib.util.find_spec(name)
    if spec is not None and spec.origin not in (None, "built-in", "frozen"):
        path = spec.origin
        if spec.submodule_search_locations:
            path = list(spec.submodule_search_locations)[0]
        mods[name] = path
print(json.dumps({"stdlib": sysconfig.get_paths()["stdlib"],
                  "dynload": sysconfig.get_config_var("DESTSHARED"),
                  "version": "%d.%d" % sys.version_info[:2],
                  "executable": sys.executable, "modules": mods}))
"""


def _host_programs() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for name in PROGRAMS:
        where = shutil.which(name, path="/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin")
        if where is None and name != "tmux":
            continue  # carried where the host has it: test scripts' curl, ps
        if where is None:
            raise ImageBuildError(
                f"the harness needs the host's {name} (Debian's package "
                f"{'procps' if name == 'ps' else name}; scripts/install.sh installs it)"
            )
        found[name] = Path(where).resolve()
    return found


def _survey_python() -> dict[str, Any]:
    done = subprocess.run(
        [_HOST_PYTHON, "-c", _SURVEY, ",".join(PYTEST_MODULES)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    if done.returncode != 0:
        raise ImageBuildError(f"the harness needs {_HOST_PYTHON}: {done.stderr.strip()[-300:]}")
    survey: dict[str, Any] = json.loads(done.stdout)
    if "pytest" not in survey["modules"]:
        raise ImageBuildError(
            f"the harness needs pytest importable by {_HOST_PYTHON} (Debian's python3-pytest)"
        )
    return survey


@functools.cache
def harness_key() -> str:
    """The tree's cache key: its version and the contents of the host programs it carries."""
    digest = hashlib.sha256(str(_TREE_VERSION).encode())
    survey = _survey_python()
    for path in [*_host_programs().values(), Path(survey["executable"]).resolve()]:
        digest.update(str(path).encode())
        digest.update(path.read_bytes())
    digest.update(json.dumps(survey, sort_keys=True).encode())
    if HOST_CA_BUNDLE.is_file():
        digest.update(HOST_CA_BUNDLE.read_bytes())
    return digest.hexdigest()[:16]


_TREES: dict[str, Path] = {}


def _trees_home() -> Path:
    """Where trees are kept: a sandbox runs as its own uid when the host process is root, and
    bwrap opens the tree with that uid's rights, so root keeps it in a root-owned directory
    every uid may traverse (``/var/cache/exploreval``; root's own cache is usually behind a
    private home). Any other user's sandbox runs as that user: the image cache serves."""
    if os.geteuid() == 0:
        home = Path(os.environ.get("EXPLOREVAL_HARNESS_CACHE", "/var/cache/exploreval"))
        home.mkdir(parents=True, exist_ok=True)
        os.chmod(home, 0o755)
        return home
    return images_root() / "tools"


def ensure_harness_tree() -> Path:
    """The host's harness tree (module docstring), built once into the image cache's tools
    (a work dir renamed into place: a crash or a concurrent build leaves no half tree)."""
    key = harness_key()
    if key in _TREES:
        return _TREES[key]
    target = _trees_home() / f"harness-{key}"
    if not (target / "tree.json").is_file():
        target.parent.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=f".harness-{key}.", dir=target.parent))
        try:
            meta = _build(work)
            (work / "tree.json").write_text(json.dumps(meta, indent=1))
            os.chmod(work, 0o755)
            with contextlib.suppress(OSError):  # another process made it first
                os.rename(work, target)
        finally:
            if work.exists():
                shutil.rmtree(work, ignore_errors=True)
    _TREES[key] = target / "tree"
    return _TREES[key]


_LDD_LINE = re.compile(r"^\s*(\S+)\s+=>\s+(/\S+)\s+\(0x")
_LOADER_LINE = re.compile(r"^\s*(/\S*ld-linux\S*)\s+\(0x")


def _libraries(elves: list[Path]) -> tuple[dict[str, Path], Path]:
    """Every shared library the ELF files load (by soname) and the loader they name."""
    libs: dict[str, Path] = {}
    loader: Path | None = None
    for elf in elves:
        done = subprocess.run(["ldd", str(elf)], capture_output=True, text=True, timeout=60)
        for line in done.stdout.splitlines():
            if match := _LDD_LINE.match(line):
                libs.setdefault(match.group(1), Path(match.group(2)))
            elif match := _LOADER_LINE.match(line):
                loader = Path(match.group(1))
    if loader is None:
        raise ImageBuildError("the harness's programs name no dynamic loader (ldd)")
    return libs, loader


def _patch(path: Path, *, interpreter: bool) -> None:
    if shutil.which("patchelf") is None:
        raise ImageBuildError("the harness tree needs patchelf (scripts/install.sh installs it)")
    argv = ["patchelf", "--force-rpath", "--set-rpath", f"{HARNESS_ROOT}/lib"]
    if interpreter:
        argv += ["--set-interpreter", f"{HARNESS_ROOT}/lib/ld-linux-x86-64.so.2"]
    done = subprocess.run([*argv, str(path)], capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        raise ImageBuildError(f"patchelf {path.name}: {done.stderr.strip()[-300:]}")


def _build(work: Path) -> dict[str, Any]:
    tree = work / "tree"
    bin_dir, lib_dir = tree / "bin", tree / "lib"
    bin_dir.mkdir(parents=True)
    lib_dir.mkdir()
    survey = _survey_python()
    version = survey["version"]
    programs = {**_host_programs(), "python3": Path(survey["executable"]).resolve()}
    stdlib = lib_dir / f"python{version}"
    shutil.copytree(
        survey["stdlib"],
        stdlib,
        symlinks=True,
        ignore=lambda d, names: [
            n for n in names if n in _STDLIB_SKIP or n.startswith("EXTERNALLY")
        ],
    )
    dynload = stdlib / "lib-dynload"
    if not dynload.is_dir():
        shutil.copytree(survey["dynload"], dynload)
    site = lib_dir / "python3" / "dist-packages"
    site.mkdir(parents=True)
    for name, origin in survey["modules"].items():
        source = Path(origin)
        if source.name == "__init__.py":
            source = source.parent
        if source.is_dir():
            shutil.copytree(
                source,
                site / source.name,
                symlinks=True,
                ignore=shutil.ignore_patterns("__pycache__"),
            )
        else:
            shutil.copy2(source, site / source.name)
        for meta in source.parent.glob(f"{name}-*"):
            if meta.suffix in (".dist-info", ".egg-info") and not (site / meta.name).exists():
                if meta.is_dir():
                    shutil.copytree(meta, site / meta.name)
                else:
                    shutil.copy2(meta, site / meta.name)
    modules = sorted(dynload.glob("*.so"))
    libs, loader = _libraries([*programs.values(), *modules])
    for soname, path in libs.items():
        shutil.copy2(path.resolve(), lib_dir / soname)
        os.chmod(lib_dir / soname, 0o755)
        _patch(lib_dir / soname, interpreter=False)
    shutil.copy2(loader.resolve(), lib_dir / "ld-linux-x86-64.so.2")
    for name, path in programs.items():
        shutil.copy2(path, bin_dir / name)
        _patch(bin_dir / name, interpreter=True)
    for module in modules:
        _patch(module, interpreter=False)
    (bin_dir / f"python{version}").symlink_to("python3")
    if HOST_CA_BUNDLE.is_file():
        (tree / "certs").mkdir()
        shutil.copyfile(HOST_CA_BUNDLE.resolve(), tree / "certs" / HOST_CA_BUNDLE.name)
    return {
        "notes": [
            f"the harness beside the image: {', '.join(programs)} and {len(libs)} shared "
            f"libraries of the host's, python {version} with pytest"
        ],
        "programs": {name: str(path) for name, path in programs.items()},
        "libraries": sorted(libs),
        "python": version,
    }


def harness_ca_bundle() -> str | None:
    """The tree's copy of the host's certificate store, as a sandbox sees it (None without one)."""
    bundle = ensure_harness_tree() / "certs" / HOST_CA_BUNDLE.name
    return HARNESS_CA_BUNDLE if bundle.is_file() else None
