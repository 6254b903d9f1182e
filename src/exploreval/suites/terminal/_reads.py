"""What a process does with a file it opens: runs it, reads it as its configuration, or as data.

The audit (:mod:`._audit`) asks this of every file of the agent's (or written during the run by
a process that ran the agent's code) that a process of the verification opened. The answer
decides whether the process is *tainted*: a process that ran, sourced or was configured by
something of the agent's is no longer the verifier's, nor is anything it starts or writes.

The question is answered from what the opener is (the programs it executed: a Python
interpreter, a shell, a package manager or installer) and what the file holds *when it was
opened* (``head``: the first bytes the host read before the open went on), never from its name
alone:

* **executed**, or **a library or an archive** by content (ELF, zip, ``ar``: a ``.deb``, a wheel
  or an egg, whatever its name; and ``/etc/ld.so.preload``): code for any process (the loader
  maps libraries into any program; installers unpack archives);
* a **Python interpreter**: its source and byte code (``.py``, ``.pyc``...), the script its
  command line names (``python3 /app/check``, any name), and its start-up configuration: every
  ``.pth`` file (a path-only one extends ``sys.path``; one with ``import`` lines runs them) and
  ``pyvenv.cfg``;
* a **shell**: the script its command line names (``bash /app/run.sh``: a program it runs),
  and every other file it opens (a sourced file such as a venv's ``activate``, its start-up
  files, a file it reads lines from), whatever the name: its configuration;
* a **package manager, installer, build tool or version control** (apt, dpkg, pip, uv, npm, git,
  make, curl, wget...: :data:`TOOLS`, or a Python interpreter that imported pip): every file it
  opens is its configuration or its input (``/etc/apt/apt.conf.d`` hooks are commands), but for
  the package databases it keeps as data (:data:`TOOL_DATA`) and distribution metadata;
* other programs (``cat``, ``grep``, a test's own Python reading an output file): data.

Two kinds of file are data for every opener: what the C library and TLS read on behalf of any
program (:data:`SYSTEM_DATA`: users, name resolution, time zones, locales, certificates,
terminal descriptions; a library they name is checked when it is opened), and distribution
metadata (``*.dist-info/``, ``*.egg-info/``: what a plugin loader or a resolver reads; the code
an entry point names is checked when it is imported).
"""

from __future__ import annotations

import posixpath
import re

#: Roles that make the opener run or be configured by the file (the opener is tainted).
EXECUTED = "executed"
LIBRARY = "a library or an archive"
PYTHON_CODE = "Python code"
PYTHON_SCRIPT = "the script a Python interpreter ran"
PYTHON_STARTUP = "Python start-up configuration"
SHELL_SCRIPT = "the script a shell ran"
SHELL_READ = "sourced or read by a shell"
TOOL_READ = "configuration or input of a package manager or installer"
COUNTED = frozenset(
    {
        EXECUTED,
        LIBRARY,
        PYTHON_CODE,
        PYTHON_SCRIPT,
        PYTHON_STARTUP,
        SHELL_SCRIPT,
        SHELL_READ,
        TOOL_READ,
    }
)
#: Roles in which a file configures the program that reads it rather than being its subject:
#: read so by a process of the verification's own chain, an agent's file is a violation at
#: once, whatever the process does next (:mod:`._audit`).
CONFIGURATION = frozenset({PYTHON_STARTUP, SHELL_READ, TOOL_READ})
#: Roles of data (the opener is not tainted by it).
DATA = "data"
METADATA = "distribution metadata"
SYSTEM = "system data"

PYTHON_SOURCES = (".py", ".pyc", ".pyo", ".pyw")
_PYTHON = re.compile(r"^python[\d.]*$")
_SHELLS = frozenset({"bash", "sh", "dash", "zsh", "ksh", "ash", "mksh", "busybox"})
#: Programs that read their configuration and their input from files anywhere, and act on it
#: (hooks, scripts, options, packages): everything of the agent's they open counts.
TOOLS = frozenset(
    [
        "apt",
        "apt-get",
        "apt-cache",
        "apt-config",
        "apt-key",
        "apt-mark",
        "aptitude",
        "dpkg",
        "dpkg-deb",
        "dpkg-query",
        "dpkg-divert",
        "dpkg-trigger",
        "debconf",
        "pip",
        "pip3",
        "uv",
        "uvx",
        "pipx",
        "poetry",
        "pdm",
        "hatch",
        "conda",
        "mamba",
        "micromamba",
        "node",
        "nodejs",
        "npm",
        "npx",
        "yarn",
        "pnpm",
        "corepack",
        "git",
        "make",
        "gmake",
        "cmake",
        "ninja",
        "cargo",
        "rustup",
        "go",
        "gem",
        "bundle",
        "curl",
        "wget",
        "perl",
        "ruby",
        "java",
        "mvn",
        "gradle",
    ]
)
_PIP_VERSIONED = re.compile(r"^pip3\.\d+$")
#: Files the C library and TLS read for any program (data: what they name is checked itself).
SYSTEM_DATA = tuple(
    [
        "/etc/passwd",
        "/etc/group",
        "/etc/shadow",
        "/etc/gshadow",
        "/etc/nsswitch.conf",
        "/etc/ld.so.cache",
        "/etc/localtime",
        "/etc/timezone",
        "/usr/share/zoneinfo/",
        "/etc/hosts",
        "/etc/resolv.conf",
        "/etc/host.conf",
        "/etc/gai.conf",
        "/etc/services",
        "/etc/protocols",
        "/etc/hostname",
        "/etc/machine-id",
        "/etc/os-release",
        "/usr/lib/os-release",
        "/etc/debian_version",
        "/etc/mime.types",
        "/etc/ssl/",
        "/usr/share/ca-certificates/",
        "/etc/ca-certificates",
        "/etc/pki/",
        "/usr/lib/locale/",
        "/usr/share/locale/",
        "/usr/share/i18n/",
        "/usr/share/terminfo/",
        "/lib/terminfo/",
        "/usr/lib/terminfo/",
        "/etc/terminfo/",
    ]
)
#: Package managers' own databases: what is installed, what was fetched (a cached package is an
#: archive, checked by content; maintainer scripts are run by a shell, checked as its reads).
TOOL_DATA = (
    "/var/lib/dpkg/",
    "/var/lib/apt/",
    "/var/cache/apt/",
    "/var/cache/debconf/",
    "/var/log/",
)
#: What a file starts with when it is code for any process that opens it.
_MAGIC = (b"\x7fELF", b"PK\x03\x04", b"PK\x05\x06", b"PK\x07\x08", b"!<arch>\n")
_SHARED_LIBRARY = re.compile(r"\.so(\.\d+)*$")
LOADER_HOOKS = frozenset({"/etc/ld.so.preload"})


def program_kind(path: str) -> str:
    """What an executed program is, for :func:`role`: ``python``, ``shell``, ``tool`` or ``""``."""
    name = posixpath.basename(path)
    if _PYTHON.match(name):
        return "python"
    if name in _SHELLS:
        return "shell"
    if name in TOOLS or _PIP_VERSIONED.match(name):
        return "tool"
    return ""


def _is_another_program(argv: tuple[str, ...], kind: str) -> bool:
    """The command line the host read is not a program of that kind's: the opener has exec'd
    another since (none read: not known, and the name decides)."""
    return bool(argv) and program_kind(argv[0]) != kind


def is_metadata(path: str) -> bool:
    return ".dist-info/" in path or ".egg-info/" in path


def is_system_data(path: str) -> bool:
    return path.startswith(SYSTEM_DATA) or path in SYSTEM_DATA


def runs_as_library(path: str, head: bytes) -> bool:
    """A shared library, an archive or the loader's preload list: code for any opener."""
    name = posixpath.basename(path)
    return head.startswith(_MAGIC) or bool(_SHARED_LIBRARY.search(name)) or path in LOADER_HOOKS


def role(
    path: str,
    *,
    kinds: set[str],
    executed: bool = False,
    head: bytes = b"",
    argv: tuple[str, ...] = (),
    cwd: str = "",
) -> str:
    """What opening ``path`` was for a process whose current program is ``kinds`` (module
    docstring). ``head``: the file's first bytes when it was opened (empty: not captured, then
    the name decides what content would)."""
    if executed:
        return EXECUTED
    if runs_as_library(path, head) or (not head and path.endswith((".zip", ".egg", ".whl"))):
        return LIBRARY
    name = posixpath.basename(path)
    if "python" in kinds:
        if name.endswith(PYTHON_SOURCES):
            return PYTHON_CODE
        if name.endswith(".pth") or name == "pyvenv.cfg":
            return PYTHON_STARTUP
        if path == python_script(argv, cwd) or _is_another_program(argv, "python"):
            # the script its command line names; or, when the command line the host read is
            # another program's (the interpreter exec'd away before the host took the event),
            # possibly its script: what it ran cannot be told, so it counts as code
            return PYTHON_SCRIPT
    if is_system_data(path):
        return SYSTEM
    if "shell" in kinds:
        if path == shell_script(argv, cwd) or _is_another_program(argv, "shell"):
            return SHELL_SCRIPT  # its script (or, exec'd away since, possibly it)
        return SHELL_READ
    if is_metadata(path):
        return METADATA
    if "tool" in kinds:
        return DATA if path.startswith(TOOL_DATA) else TOOL_READ
    return DATA


#: Python options that take an argument (the script is the first argument after the options).
_PYTHON_OPTIONS_WITH_ARGUMENT = frozenset({"-W", "-X", "--check-hash-based-pycs"})


def python_script(argv: tuple[str, ...], cwd: str) -> str:
    """The script a Python command line runs (absolute), or "" (``-c``, ``-m``, none)."""
    args = list(argv[1:])
    while args:
        arg = args.pop(0)
        if arg in ("-c", "-m", "-") or arg.startswith(("-c", "-m")) and len(arg) > 2:
            return ""
        if arg == "--":
            break
        if arg in _PYTHON_OPTIONS_WITH_ARGUMENT:
            if args:
                args.pop(0)
            continue
        if arg.startswith("-"):
            continue
        args.insert(0, arg)
        break
    if not args:
        return ""
    script = args[0]
    return posixpath.normpath(posixpath.join(cwd or "/", script))


#: Shell options that take an argument.
_SHELL_OPTIONS_WITH_ARGUMENT = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"})


def shell_script(argv: tuple[str, ...], cwd: str) -> str:
    """The script a shell command line runs (absolute), or "" (``-c``, ``-s``, interactive)."""
    args = list(argv[1:])
    while args:
        arg = args.pop(0)
        if arg == "--":
            break
        if arg in _SHELL_OPTIONS_WITH_ARGUMENT:
            if args:
                args.pop(0)
            continue
        if arg.startswith(("-", "+")):
            if not arg.startswith("--") and ("c" in arg or "s" in arg):
                return ""
            continue
        args.insert(0, arg)
        break
    if not args:
        return ""
    return posixpath.normpath(posixpath.join(cwd or "/", args[0]))
