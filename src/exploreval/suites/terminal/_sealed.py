"""The verifier's environment: the test command runs the way the task ships it, and only that way.

Everything here is *construction*: it decides what the test tools read, so that nothing the
agent wrote is consulted in the first place (what slips through anyway is caught from outside by
the trace, :mod:`._audit`). The test command, its scripts and its tests are the task's, run
unmodified; what the verifier owns is the environment around them:

* **pytest's configuration is pinned** (``PYTEST_ADDOPTS``): ``--rootdir=/tests``,
  ``--confcutdir=/tests`` and ``-c`` naming the configuration the task ships beside its tests
  (or the verifier's empty ``pytest.ini``). pytest then searches no other directory for a
  configuration file, a ``setup.py`` or a ``conftest.py``: no file anywhere in the image changes
  which tests run or how they report. Options the test command passes itself still apply (they
  come after these): the task's own command line is the task's.
* **Python start-up is the verifier's**: ``PYTHONSAFEPATH`` (no working directory or script
  directory first on ``sys.path``), the verifier's ``sitecustomize`` first on ``PYTHONPATH``
  (it appends the working directory and the script's directory *after* everything installed: the
  tests still import the code under test, which can shadow nothing), no user site; in an image,
  byte code is read only from the image's own, mirrored as a ``PYTHONPYCACHEPREFIX`` tree under
  a throwaway layer (a ``__pycache__`` the agent planted is never read).
* **The verification environment is built from the verifier's files**: uv reads no
  configuration file (``UV_NO_CONFIG``, ``UV_NO_ENV_FILE``) and works in the verifier's own
  project (``UV_PROJECT``), seeded with the project files the *image* ships in the work dir (a
  ``pyproject.toml``, ``uv.lock`` or ``.python-version`` the agent wrote is never read; without
  such files the project is empty and uv works as in a clean work dir: the test script's
  ``uv init`` makes it, or ``uv run`` uses the venv the script activated); a ``pyproject.toml``
  the agent left in ``/`` or ``/opt``, where uv would look for a workspace, is hidden from the
  verification; its venv is fresh and its cache the image's pristine one. pip reads no
  configuration file (``PIP_CONFIG_FILE=/dev/null``); the image's own pip settings (the index
  the image was built against) are passed as variables.
* **Only the test tools' pytest plugins load**: autoloading is off
  (``PYTEST_DISABLE_PLUGIN_AUTOLOAD``) and the results plugin loads, by entry point as
  autoloading would, the plugins of pytest, of what the test scripts install, of the image's
  own distributions, and of what those require (``EXPLOREVAL_TOOL_DISTS``): a plugin a package
  of the agent's brings (jupyter's anyio) never runs. pip runs with its own code only (an
  installed package it would import when present, rich's ``attr``, is not loaded).
* **The image's project venv, as built**: what the image installed into its work dir's
  ``.venv`` the tests import after the test venv's own packages (``SITECUSTOMIZE``).
* **The tests' own subprocesses get the task's environment back**: the results plugin restores
  every variable above to the task's value when pytest loads it, so a program the tests run (the
  agent's code, a ``uv run`` in the work dir) sees what it would in Terminal-Bench.
"""

from __future__ import annotations

import configparser
import json
import os
import tomllib
from pathlib import Path

from exploreval.suites.terminal._audit import MARKER
from exploreval.suites.terminal._index import normalize
from exploreval.suites.terminal._sandbox_config import AGENT_HOME
from exploreval.suites.terminal._verifier import (
    HARNESS_DIR,
    IMAGE_VENV_PATH,
    PYCACHE_PATH,
    VERIFY_HOME,
    VERIFY_PROJECT,
    VERIFY_VENV_DIR,
)
from exploreval.suites.terminal._view import list_in_root, read_in_root

#: The results plugin's module name (``-p exploreval_results``).
PLUGIN_MODULE = "exploreval_results"
#: Where Terminal-Bench's uv venv of the test run lives (a fresh tmpfs of the verifier's).
VERIFY_VENV = f"{VERIFY_VENV_DIR}/.venv"
SHIM_DIR = "/opt/exploreval/bin"
#: The verifier's PATH: system directories only (nothing under the work dir, /tmp or $HOME).
VERIFY_PATH = f"/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:{SHIM_DIR}"
#: The empty configuration pytest is pinned to when the task ships none beside its tests.
EMPTY_CONFIG = f"{HARNESS_DIR}/pytest.ini"
#: Configuration files pytest reads, in its own order of preference, and the table each must
#: hold to count (None: the file counts as it is).
PYTEST_CONFIGS: tuple[tuple[str, str | None], ...] = (
    ("pytest.ini", None),
    (".pytest.ini", None),
    ("pytest.toml", None),
    (".pytest.toml", None),
    ("pyproject.toml", "tool.pytest"),
    ("tox.ini", "pytest"),
    ("setup.cfg", "tool:pytest"),
)
#: uv's project files in a work dir (seeded from the image into the verifier's project).
PROJECT_FILES = ("pyproject.toml", "uv.lock", ".python-version")
#: The verifier's uv project (``UV_PROJECT``): its own mount. uv also looks for a project or a
#: workspace in the ancestors (``/opt``, ``/``): a ``pyproject.toml`` the agent left there is
#: hidden from the verification (``_verifier.ANCESTOR_PROJECTS``).
UV_PROJECT_DIR = VERIFY_PROJECT
#: Variables the verifier sets for the test tools only: the results plugin restores each to the
#: task's own value for the programs the tests run.
PINNED = ("PYTEST_ADDOPTS", "PYTHONPATH", "PYTHONSAFEPATH", "PYTHONPYCACHEPREFIX",
          "PYTHONNOUSERSITE", "PYTEST_DISABLE_PLUGIN_AUTOLOAD", "EXPLOREVAL_TOOL_DISTS", "UV_PROJECT",
          "UV_PROJECT_ENVIRONMENT", "UV_NO_CONFIG", "UV_NO_ENV_FILE", "PIP_CONFIG_FILE")  # fmt: skip

#: The verifier's Python start-up (first on PYTHONPATH, so no other ``sitecustomize`` runs): the
#: working directory and a script's own directory come *after* the standard library and every
#: installed package, so the tests import the code under test and it can shadow nothing. In the
#: test venv, the image's own project venv (as built) comes after the venv's packages: what the
#: image installed there (``uv pip install numpy``) the tests import, as Terminal-Bench's
#: ``uv run`` in the work dir would give them; the test tools the script installs come first.
#: pip runs with its own code only: an installed package it imports when present (its rich's
#: ``attr``, ``keyring``) is not loaded, so a package the agent installed never runs in the pip
#: that installs the test tools.
SITECUSTOMIZE = """\
import os
import sys


def _append(path):
    if path and path not in sys.path:
        sys.path.append(path)


def _running_pip():
    argv = list(getattr(sys, "orig_argv", None) or sys.argv)[1:]
    while argv:
        arg = argv.pop(0)
        if arg == "-m":
            return bool(argv) and argv[0] in ("pip", "pip.__main__")
        if arg in ("-X", "-W", "-Q"):
            argv[:1] = []
        elif not arg.startswith("-"):
            name = os.path.basename(arg)
            return name.rstrip("0123456789.") == "pip" or arg.endswith("/pip/__main__.py")
    return False


class _PipOwnCodeOnly:
    # installed packages pip imports when present (rich's attr, keyring): not loaded

    OWN = ("pip", "setuptools", "pkg_resources", "_distutils_hack", "wheel")

    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if path is not None or name.partition(".")[0] in cls.OWN:
            return None
        spec = _PathFinder.find_spec(name)
        origin = (spec and spec.origin) or ""
        if "/site-packages/" in origin or "/dist-packages/" in origin:
            raise ModuleNotFoundError("pip runs with its own code: %s is not loaded" % name,
                                      name=name)
        return None


if _running_pip():
    from importlib.machinery import PathFinder as _PathFinder

    sys.meta_path.insert(0, _PipOwnCodeOnly)

if sys.prefix == "__VERIFY_VENV__":
    import site

    _image = "__IMAGE_VENV__/lib/python%d.%d/site-packages" % sys.version_info[:2]
    if os.path.isdir(_image):
        site.addsitedir(_image)
try:
    _append(os.getcwd())
except OSError:
    pass
if sys.argv and sys.argv[0] not in ("", "-c", "-m"):
    _append(os.path.dirname(os.path.abspath(sys.argv[0])))
""".replace("__VERIFY_VENV__", VERIFY_VENV).replace("__IMAGE_VENV__", IMAGE_VENV_PATH)

#: exploreval's pytest plugin. Its socket is the only channel a verdict is read from; the host
#: knows which process sent each message (the kernel stamps it), and checks that process from
#: outside (``_audit``).
RESULTS_PLUGIN = r'''"""exploreval's results channel: pytest's own reports, one message each, to the host."""
import json
import os

import pytest

_STATE = {"fd": -1}


def _take_channel():
    raw = os.environ.pop("EXPLOREVAL_RESULTS_FD", "")
    if raw.isdigit():
        try:
            _STATE["fd"] = os.dup(int(raw))  # a close-on-exec copy; the inherited number closed
            os.close(int(raw))
        except OSError:
            _STATE["fd"] = -1


def _no_dumping():
    """Programs the tests start run as this user: they may not trace this process or read its
    memory and descriptors (PR_SET_DUMPABLE 0; execve of a child resets its own flag)."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)
    except Exception:
        pass


def _restore_environment(hold=()):
    """The variables the verifier pinned for the test tools go back to the task's values, for
    the programs the tests run (those in ``hold`` later, at the next call)."""
    if "restore" not in _STATE:
        raw = os.environ.pop("EXPLOREVAL_RESTORE", "")
        try:
            _STATE["restore"] = json.loads(raw) if raw else {}
        except ValueError:
            _STATE["restore"] = {}
    values = _STATE["restore"]
    for key in [k for k in values if k not in hold]:
        value = values.pop(key)
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


def _normalize(name):
    import re

    return re.sub(r"[-_.]+", "-", name or "").lower()


def _tool_distributions(named):
    """The distributions whose pytest plugins load: those the verifier named (pytest, the test
    scripts' tools, the image's own plugins) and what they require (not their extras)."""
    import re
    from importlib import metadata

    wanted = [n for n in named.split(",") if n]
    seen = set()
    while wanted:
        name = _normalize(wanted.pop())
        if name in seen:
            continue
        seen.add(name)
        try:
            requires = metadata.distribution(name).requires or []
        except Exception:
            continue
        for requirement in requires:
            head, _, marker = requirement.partition(";")
            found = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", head)
            if found and "extra" not in marker:
                wanted.append(found.group(1))
    return seen


_take_channel()
_no_dumping()
_TOOLS = os.environ.pop("EXPLOREVAL_TOOL_DISTS", None)
# pytest reads PYTEST_DISABLE_PLUGIN_AUTOLOAD once this module is loaded: it goes back later
_restore_environment(hold=("PYTEST_DISABLE_PLUGIN_AUTOLOAD",))


def pytest_addhooks(pluginmanager):
    """Autoloading is off: load the test tools' own plugins, as autoloading would (by entry
    point name, unless blocked with ``-p no:``). A plugin the agent installed is not loaded."""
    if _TOOLS is None:
        return
    from importlib import metadata

    tools = _tool_distributions(_TOOLS)
    for dist in metadata.distributions():
        if _normalize(dist.metadata["Name"]) not in tools:
            continue
        for entry in dist.entry_points:
            if entry.group != "pytest11":
                continue
            if pluginmanager.get_plugin(entry.name) or pluginmanager.is_blocked(entry.name):
                continue
            pluginmanager.register(entry.load(), name=entry.name)


def _send(event):
    fd = _STATE["fd"]
    if fd < 0:
        return
    event["pid"] = os.getpid()
    try:
        os.write(fd, json.dumps(event, default=str).encode("utf-8", "replace"))
    except OSError:
        pass


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config):
    import sys

    _restore_environment()
    _send({"e": "start", "pytest": getattr(pytest, "__version__", "?"),
           "executable": sys.executable, "rootdir": str(getattr(config, "rootpath", "")),
           "inifile": str(getattr(config, "inipath", "") or "")})


@pytest.hookimpl(tryfirst=True)
def pytest_collection(session):
    try:  # the trace's boundary: from here on, the tests import their subject
        with open("__MARKER__", "rb"):
            pass
    except OSError:
        pass


def pytest_collection_finish(session):
    items = [[item.nodeid, str(getattr(item, "path", "") or getattr(item, "fspath", ""))]
             for item in session.items]
    for start in range(0, len(items), 200):
        _send({"e": "items", "items": items[start:start + 200]})


def pytest_collectreport(report):
    if report.failed:
        _send({"e": "collect", "nodeid": report.nodeid, "outcome": "failed",
               "message": str(getattr(report, "longreprtext", ""))[-1500:]})


def pytest_runtest_logreport(report):
    event = {"e": "test", "nodeid": report.nodeid, "when": report.when,
             "outcome": report.outcome}
    if hasattr(report, "wasxfail"):
        event["xfail"] = True
    if report.failed:
        event["message"] = str(getattr(report, "longreprtext", ""))[-1500:]
    _send(event)


def pytest_sessionfinish(session, exitstatus):
    _send({"e": "finish", "exitstatus": int(exitstatus),
           "collected": getattr(session, "testscollected", None)})
    fd = _STATE["fd"]
    if fd >= 0:
        try:
            os.close(fd)
        except OSError:
            pass
    _STATE["fd"] = -1
'''.replace("__MARKER__", MARKER)


def harness_files() -> dict[str, bytes]:
    """The verifier's read-only files at /opt/exploreval/verify (names relative to it)."""
    return {
        f"{PLUGIN_MODULE}.py": RESULTS_PLUGIN.encode(),
        "sitecustomize.py": SITECUSTOMIZE.encode(),
        "pytest.ini": b"[pytest]\n",
        MARKER.rsplit("/", 1)[1]: b"",
    }


def shipped_pytest_config(tests_dir: Path | None) -> str:
    """The pytest configuration the task ships beside its tests, as the sandbox sees it
    (``/tests/<name>``), chosen as pytest would in that directory; else the empty one."""
    if tests_dir is None or not tests_dir.is_dir():
        return EMPTY_CONFIG
    for name, table in PYTEST_CONFIGS:
        path = tests_dir / name
        if not path.is_file() or path.is_symlink():
            continue
        if table is None or _has_table(path, table):
            return f"/tests/{name}"
    return EMPTY_CONFIG


def _has_table(path: Path, table: str) -> bool:
    text = path.read_text(errors="replace")
    if path.suffix == ".toml":
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError:
            return False
        node: object = data
        for part in table.split("."):
            if not isinstance(node, dict) or part not in node:
                return False
            node = node[part]
        return True
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error:
        return False
    return parser.has_section(table)


def verification_project(lower: Path | None, workdir: str) -> dict[str, bytes]:
    """The files of the verifier's uv project (names in :data:`VERIFY_PROJECT`): the project
    files the *image* ships in its work dir, if any (none the agent wrote); without those it is
    empty and uv works as in a clean work dir (the test script's ``uv init`` makes the project,
    or ``uv run`` uses the venv the script activated)."""
    files: dict[str, bytes] = {}
    if lower is None or read_in_root(lower, f"{workdir}/pyproject.toml", 1) is None:
        return files
    for name in PROJECT_FILES:
        data = read_in_root(lower, f"{workdir}/{name}", 4_000_000)
        if data is not None:
            files[name] = data
    return files


#: Directories a search for the image's Python never enters: the kernel's, and trees of
#: byte code, packages of other languages and version control.
_NOT_PYTHON_SITES = frozenset({"proc", "sys", "dev", "__pycache__", "node_modules", ".git"})
#: How deep under ``/`` a site directory is looked for (``/opt/conda/envs/x/lib/python3.12/
#: site-packages`` is 7), and how many directories at most the search lists.
_SITE_DEPTH, _SITE_DIRECTORIES = 8, 200_000


def image_python_sites(lower: Path) -> list[str]:
    """Every ``site-packages`` and ``dist-packages`` directory of the image as built (sandbox
    paths), wherever it lives: a Harbor task's ``/opt/verifier-venv`` is found as
    ``/usr/local`` is. The image's pristine layer only, so none is the agent's; links are not
    followed (a link to the host's Python is not the image's)."""
    sites: list[str] = []
    seen = 0
    for top, dirs, _files in os.walk(lower):
        relative = os.path.relpath(top, lower)
        depth = 0 if relative == "." else relative.count(os.sep) + 1
        seen += len(dirs)
        kept = []
        for name in dirs:
            if name in ("site-packages", "dist-packages"):
                sites.append("/" + os.path.join(relative, name).removeprefix("./"))
            elif name not in _NOT_PYTHON_SITES and depth < _SITE_DEPTH:
                kept.append(name)
        dirs[:] = [] if seen > _SITE_DIRECTORIES else sorted(kept)
    return sorted(sites)


def image_pytest_plugins(lower: Path | None) -> set[str]:
    """The distributions of the *image* (as built: none the agent installed) that declare a
    pytest plugin (``pytest11``), normalized: their plugins load as autoloading would. Found by
    what the image holds, in any of its site directories (:func:`image_python_sites`), not by a
    list of where Python usually is; what then loads is judged by its content (the trace)."""
    found: set[str] = set()
    if lower is None:
        return found
    for site in image_python_sites(lower):
        for name, _real in list_in_root(lower, site):
            if not name.endswith((".dist-info", ".egg-info")):
                continue
            text = read_in_root(lower, f"{site}/{name}/entry_points.txt", 200_000)
            if text is not None and b"[pytest11]" in text:
                found.add(normalize(name.rsplit(".", 1)[0].split("-", 1)[0]))
    return found


def pristine_pip_env(lower: Path | None) -> dict[str, str]:
    """The image's own pip settings (its ``/etc/pip.conf`` and ``/etc/xdg/pip/pip.conf`` as
    built) as ``PIP_*`` variables: pip itself then reads no configuration file."""
    env: dict[str, str] = {}
    if lower is None:
        return env
    for path in ("/etc/xdg/pip/pip.conf", "/etc/pip.conf"):
        data = read_in_root(lower, path, 100_000)
        if data is None:
            continue
        parser = configparser.ConfigParser(interpolation=None)
        try:
            parser.read_string(data.decode("utf-8", "replace"))
        except configparser.Error:
            continue
        for section in ("global", "install"):
            if parser.has_section(section):
                for key, value in parser.items(section):
                    env["PIP_" + key.upper().replace("-", "_")] = value
    return env


def verification_env(task_env: dict[str, str] | None, *, host_system: bool) -> dict[str, str]:
    """The test command's environment before the pins: the system ``PATH``, the agent's
    ``HOME`` (pinned to a fresh one until the tests begin, :func:`sealed_env`), git hooks and
    fsmonitor off, then the task's own variables (its Dockerfile ``ENV``)."""
    env = {
        "PATH": VERIFY_PATH,
        "HOME": AGENT_HOME,
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "TEST_DIR": "/tests",
        "PYTHONDONTWRITEBYTECODE": "1",
        "GIT_CONFIG_COUNT": "2",
        "GIT_CONFIG_KEY_0": "core.fsmonitor",
        "GIT_CONFIG_VALUE_0": "false",
        "GIT_CONFIG_KEY_1": "core.hooksPath",
        "GIT_CONFIG_VALUE_1": "/dev/null",
    }
    env.update(task_env or {})
    return env


def sealed_env(
    env: dict[str, str],
    *,
    host_system: bool,
    config_file: str,
    uv_project: bool,
    pip_env: dict[str, str],
    tool_dists: set[str] | None = None,
) -> dict[str, str]:
    """``env`` (the task's test environment) with the verifier's pins (module docstring), and
    ``EXPLOREVAL_RESTORE``: what the results plugin gives back to the tests' subprocesses.
    ``tool_dists``: the distributions whose pytest plugins load (with what they require)."""
    sealed = dict(env)
    pins = {
        "PYTEST_ADDOPTS": " ".join(
            [
                f"-p {PLUGIN_MODULE} -rA --rootdir=/tests --confcutdir=/tests -c {config_file}",
                env.get("PYTEST_ADDOPTS", ""),
            ]  # fmt: skip
        ).strip(),
        "PYTHONPATH": ":".join(p for p in (HARNESS_DIR, env.get("PYTHONPATH", "")) if p),
        "PYTHONSAFEPATH": "1",
        "PYTHONNOUSERSITE": "1",
        # the test tools start in a fresh home (no dotfile of the agent's is read before the
        # tests); the tests get the agent's back: Terminal-Bench's tests read ~/.jupyter...
        "HOME": VERIFY_HOME,
        # only the test tools' plugins load (the results plugin loads them): not one the agent
        # installed, on this machine's Python none
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
    }
    if not host_system:
        pins["EXPLOREVAL_TOOL_DISTS"] = ",".join(sorted({"pytest", *(tool_dists or ())}))
        pins["PYTHONPYCACHEPREFIX"] = PYCACHE_PATH
        pins.update({"UV_NO_CONFIG": "1", "UV_NO_ENV_FILE": "1", "PIP_CONFIG_FILE": "/dev/null"})
        if uv_project:
            pins["UV_PROJECT"] = UV_PROJECT_DIR
        for key, value in pip_env.items():
            sealed.setdefault(key, value)
    sealed.update(pins)
    added = set(pins) | {key for key in pip_env if key not in env}
    restore: dict[str, str | None] = {
        key: env.get(key) for key in sorted(added) if sealed.get(key) != env.get(key)
    }
    if "UV_PROJECT_ENVIRONMENT" in env:  # the verifier's venv, not the tests' subprocesses'
        restore["UV_PROJECT_ENVIRONMENT"] = None
    sealed["EXPLOREVAL_RESTORE"] = json.dumps(restore, sort_keys=True)
    return sealed


def verification_tools_env(
    task_env: dict[str, str], *, tools: bool, network: bool
) -> dict[str, str]:
    """An image's test environment: its own ENV (``PATH`` included: where its Python and tools
    live) and, for Terminal-Bench tasks, the provisioned uv on ``PATH``, its pristine cache and
    a fresh venv location (``UV_PROJECT_ENVIRONMENT``); with a network, the host's certificate
    authorities."""
    from exploreval.suites.terminal._host_settings import trust_env
    from exploreval.suites.terminal._image_recipe import UV_CACHE

    env = dict(task_env)
    path = env.get("PATH", VERIFY_PATH)
    if tools:
        path = f"/root/.local/bin:{path}"
        env.update({"UV_CACHE_DIR": UV_CACHE, "UV_PROJECT_ENVIRONMENT": VERIFY_VENV,
                    "UV_LINK_MODE": "copy", "UV_PYTHON_DOWNLOADS": "never"})  # fmt: skip
        if not network:
            env["UV_OFFLINE"] = "1"
    env["PATH"] = path
    if network:
        from exploreval.suites.terminal._harness_tree import harness_ca_bundle

        env.update(trust_env(harness_ca_bundle()))
    return env
