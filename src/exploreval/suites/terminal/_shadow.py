"""Files the agent left that would run before, or instead of, the test tools.

The verifier's own start-up is fixed (``_verify``), but the tests run over the agent's files. A
few kinds of file make code the agent wrote run *inside* the test process before the tests do, or
replace the test tools outright; none of them is part of any legitimate solution, so the
verification refuses to resolve an episode that leaves one (``VerificationResult.shadowing``):

* in the work dir (the tests' cwd, which ``python -m pytest`` puts first on ``sys.path``):
  ``pytest.py``, ``pytest/``, ``_pytest/``, ``pluggy/``, ``py.py``, ``sitecustomize.py``,
  ``usercustomize.py``, a ``conftest.py`` or ``pytest.ini`` the task did not ship (or that the
  agent changed), and a
  ``*.dist-info`` declaring a pytest plugin (``[pytest11]``);
* anywhere the agent changed an image's system (its overlay layer): ``sitecustomize.py`` /
  ``usercustomize.py``, ``*.pth`` files with ``import`` lines other than the forms pip and
  setuptools write themselves, the programs and libraries every test run goes through (the
  shells, ``env``, ``timeout``, the Python interpreters and standard library, uv and its
  provisioned cache, the dynamic loader, libc, ``/etc/ld.so.preload`` and ``ld.so.conf``; not
  ``ld.so.cache`` or ``ld.so.conf.d``, which package installs rewrite), and files of pytest or
  pluggy edited in place (changed without a new ``.dist-info``: a reinstall is not flagged).

Only files the agent created or changed count: the task's own files (its work-dir template, or
the image's lower layer) never do. What is not detected (docs/terminal.md, "What remains"): a
reinstall of a doctored pytest wheel, and any other program the test script runs that the agent
replaced (the results pipe is inherited by the whole test command).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from exploreval.suites.terminal._sandbox import Sandbox

#: Names in the work dir that take the place of the test tools on ``sys.path``.
WORKDIR_SHADOWS = frozenset(
    {"pytest.py", "pytest", "_pytest", "pluggy", "py.py", "sitecustomize.py", "usercustomize.py"}
)
#: Test configuration that pytest reads from the work dir (only when the task did not ship it).
WORKDIR_CONFIG = frozenset({"conftest.py", "pytest.ini"})
STARTUP_HOOKS = frozenset({"sitecustomize.py", "usercustomize.py"})
#: ``.pth`` import lines pip and setuptools generate (editable installs, distutils shim).
_PTH_ALLOWED = (
    re.compile(r"^import __editable___[\w.]+_finder; __editable___[\w.]+_finder\.install\(.*\)$"),
    re.compile(r"^import os; var = 'SETUPTOOLS_USE_DISTUTILS'; enabled = .*"),
    re.compile(r"^import _virtualenv$"),
)
_MAX_FILES = 200_000


def _pth_runs_code(path: Path) -> bool:
    try:
        text = path.read_text(errors="replace")[:200_000]
    except OSError:
        return False
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped.startswith(("import ", "import\t")):
            continue
        if not any(p.match(stripped) for p in _PTH_ALLOWED):
            return True
    return False


def _declares_pytest_plugin(dist_info: Path) -> bool:
    entry_points = dist_info / "entry_points.txt"
    try:
        return "[pytest11]" in entry_points.read_text(errors="replace")
    except OSError:
        return False


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.read_bytes() == b.read_bytes()
    except OSError:
        return False


def workdir_shadows(workdir: Path, pristine: Path | None) -> list[str]:
    """Shadowing names the agent left in the work dir (absent from ``pristine``, if given)."""
    found: list[str] = []
    seen = 0
    for dirpath, dirnames, filenames in os.walk(workdir):
        rel_dir = os.path.relpath(dirpath, workdir)
        names = dirnames + filenames
        seen += len(names)
        if seen > _MAX_FILES:
            break
        for name in names:
            rel = name if rel_dir == "." else f"{rel_dir}/{name}"
            if (
                pristine is not None
                and os.path.lexists(pristine / rel)
                and (name not in WORKDIR_CONFIG or _same_file(Path(dirpath) / name, pristine / rel))
            ):
                continue  # the task's own file (test configuration: only if unchanged)
            at_top = rel_dir == "."
            if (
                at_top
                and name in WORKDIR_SHADOWS
                or name == "conftest.py"
                or (at_top and name == "pytest.ini")
                or at_top
                and name.endswith(".dist-info")
                and _declares_pytest_plugin(Path(dirpath) / name)
            ):
                found.append(rel)
        dirnames[:] = [d for d in dirnames if not os.path.islink(os.path.join(dirpath, d))]
    return sorted(found)


#: Programs and libraries every test run goes through: the agent replacing one could forge the
#: whole run (regular expressions over paths in an image's overlay, "/"-rooted).
CRITICAL_PATHS = tuple(
    re.compile(p)
    for p in (
        r"^/(usr/)?bin/(bash|sh|dash|env|timeout)$",
        r"^/(usr/)?(local/)?bin/python[\d.]*$",
        r"^/(usr/local/bin|root/\.local/bin)/uvx?$",
        r"^/etc/ld\.so\.(preload|conf)$",
        r"^/(usr/)?lib(64)?/(x86_64-linux-gnu/)?(ld-linux[^/]*|libc\.so[^/]*|libpython[^/]*)$",
        r"^/usr/(local/)?lib/python3\.\d+/[^/]+\.py$",
        r"^/usr/(local/)?lib/python3\.\d+/(encodings|importlib|lib-dynload)/",
        r"^/opt/exploreval-uv-cache/",
    )
)
#: Packages of the test tools: an in-place edit (files changed, their dist-info not) is tampering.
TEST_PACKAGES = ("pytest", "_pytest", "pluggy")


def upper_toolchain_changes(upper: Path) -> list[str]:
    """Critical programs and libraries, and test-tool packages edited in place, that the agent
    changed (or removed) in an image: the test run would go through them."""
    found: list[str] = []
    reinstalled: set[str] = set()
    edited: dict[str, list[str]] = {}
    for dirpath, dirnames, filenames in os.walk(upper):
        rel_dir = "/" + os.path.relpath(dirpath, upper)
        for name in dirnames:
            if name.split("-", 1)[0].lower() in TEST_PACKAGES and name.endswith(".dist-info"):
                reinstalled.add(f"{rel_dir}/{name.split('-', 1)[0].lower()}")
        for name in filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
            rel = f"{rel_dir}/{name}".replace("//", "/")
            if any(p.search(rel) for p in CRITICAL_PATHS):
                found.append(rel)
                continue
            parts = rel.split("/")
            for i, part in enumerate(parts[:-1]):
                if part in TEST_PACKAGES and i > 0 and parts[i - 1] in ("site-packages",
                                                                       "dist-packages"):  # fmt: skip
                    edited.setdefault("/".join(parts[: i + 1]), []).append(rel)
                    break
        dirnames[:] = [d for d in dirnames if not os.path.islink(os.path.join(dirpath, d))]
    for package, files in sorted(edited.items()):
        stem = package.rsplit("/", 1)[0]
        if not any(r.startswith(stem + "/") for r in reinstalled):
            found += sorted(files)[:3]
    return sorted(set(found))


def upper_startup_hooks(upper: Path) -> list[str]:
    """Python start-up hooks the agent created or changed anywhere in an image (its overlay)."""
    found: list[str] = []
    seen = 0
    for dirpath, dirnames, filenames in os.walk(upper):
        seen += len(filenames)
        if seen > _MAX_FILES:
            break
        for name in filenames:
            path = Path(dirpath) / name
            rel = "/" + os.path.relpath(path, upper)
            if name in STARTUP_HOOKS or (name.endswith(".pth") and _pth_runs_code(path)):
                found.append(rel)
        dirnames[:] = [d for d in dirnames if not os.path.islink(os.path.join(dirpath, d))]
    return sorted(found)


def toolchain_shadows(sandbox: Sandbox, template: Path | None = None) -> list[str]:
    """Everything the verification must not run over (module docstring). ``template``: the
    pristine work dir of a host-system task."""
    found: list[str] = []
    workdir = sandbox.host_workdir
    if sandbox.disk is None or workdir is None:
        return found
    if sandbox.image_root is not None:
        upper = sandbox.disk.disk / "upper"
        lower = sandbox.disk.dir / "lower"
        rel = sandbox.config.workdir.lstrip("/")
        upper_work = upper / rel
        if upper_work.is_dir():
            found += [
                f"{sandbox.config.workdir}/{p}" for p in workdir_shadows(upper_work, lower / rel)
            ]
        found += upper_startup_hooks(upper)
        found += upper_toolchain_changes(upper)
    else:
        found += [f"{sandbox.config.workdir}/{p}" for p in workdir_shadows(workdir, template)]
    return sorted(set(found))
