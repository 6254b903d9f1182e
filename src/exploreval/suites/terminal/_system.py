"""What the terminal sandbox needs from the machine, and what to install when it is missing.

Checked once per run before any episode (``TerminalEnv.preflight``: one run-level message) and
by :meth:`Sandbox.start`. Every problem names the Debian package to install.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from functools import lru_cache

from pydantic import BaseModel

from exploreval.suites.terminal._trace import fanotify_available

#: The PATH the sandbox runs its host tools with and its programs see (system dirs only).
SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
INSTALL_SCRIPT = "bash scripts/install.sh"

#: program -> (Debian package, what needs it)
TOOLS: dict[str, tuple[str, str]] = {
    "bwrap": ("bubblewrap", "the sandbox"),
    "tmux": ("tmux", "the agent's terminal"),
    "patchelf": ("patchelf", "the harness beside the image (its tmux, python3, curl and ps)"),
    "prlimit": ("util-linux", "the sandbox's resource limits"),
    "nsenter": ("util-linux", "running the editor and verification inside the sandbox"),
    "setpriv": ("util-linux", "dropping capabilities of commands run inside the sandbox"),
    "timeout": ("coreutils", "command timeouts inside the sandbox"),
    "jq": ("jq", "the built-in JSON tasks"),
    "git": ("git", "the built-in git tasks"),
    "make": ("make", "the built-in Makefile task"),
    "openssl": ("openssl", "solution-injection level 4 (encrypted README.md)"),
}


#: Needed only for what uses them: building task images, and a network in the sandbox.
BUILD_TOOLS: dict[str, tuple[str, str]] = {
    "mmdebstrap": ("mmdebstrap", "building task images from Dockerfiles (their base system)"),
    "mount": ("mount", "the images' copy-on-write roots"),
}
NETWORK_TOOLS: dict[str, tuple[str, str]] = {
    "slirp4netns": ("slirp4netns", "a network in the sandbox (option network / test_network)"),
}
SERVICE_TOOLS: dict[str, tuple[str, str]] = {
    "ip": ("iproute2", "the network a task's compose services share"),
}


def apt_command(packages: list[str] | tuple[str, ...]) -> str:
    return f"sudo apt-get install -y {' '.join(dict.fromkeys(packages))}"


class SandboxUnavailable(RuntimeError):
    """The machine cannot run terminal sandboxes; the message says what to install or enable."""


class SystemReport(BaseModel):
    schema_version: int = 1
    bwrap: str | None = None
    tmux: str | None = None
    python3: str | None = None
    pytest: bool = False
    user_namespaces: bool = False
    root: bool = False
    #: fanotify works here (verification records what the tests ran with it).
    fanotify: bool = False
    #: Programs not found on the sandbox's PATH.
    missing: list[str] = []
    problems: list[str] = []

    @property
    def ok(self) -> bool:
        return not self.problems


def _version(argv: list[str], path: str) -> str | None:
    exe = shutil.which(argv[0], path=path)
    if exe is None:
        return None
    try:
        out = subprocess.run([exe, *argv[1:]], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return (out.stdout or out.stderr).strip().splitlines()[0] if out.returncode == 0 else None


def _userns_max() -> int:
    try:
        with open("/proc/sys/user/max_user_namespaces") as fh:
            return int(fh.read().strip())
    except (OSError, ValueError):
        return 0


def check_system(path: str | None = None) -> SystemReport:
    """Probe the programs of :data:`TOOLS` on ``path`` (default: :data:`SYSTEM_PATH`, the
    sandbox's), python3 (+pytest for verification), user namespaces and root. Cached per path."""
    return _check_system(path or SYSTEM_PATH)


@lru_cache(maxsize=8)
def _check_system(path: str) -> SystemReport:
    report = SystemReport(
        bwrap=_version(["bwrap", "--version"], path),
        tmux=_version(["tmux", "-V"], path),
        python3=_version(["/usr/bin/python3", "--version"], path),
        root=os.geteuid() == 0,
    )
    report.user_namespaces = _userns_max() > 0
    trace_problem = fanotify_available()
    report.fanotify = trace_problem is None
    report.missing = [tool for tool in TOOLS if shutil.which(tool, path=path) is None]
    if report.python3:
        probe = subprocess.run(
            ["/usr/bin/python3", "-c", "import pytest"], capture_output=True, timeout=30
        )
        report.pytest = probe.returncode == 0
    for tool in report.missing:
        package, why = TOOLS[tool]
        report.problems.append(
            f"{tool} is not installed (needed for {why}): `{apt_command([package])}` "
            f"(or `{INSTALL_SCRIPT}` from the exploreval checkout)"
        )
    if report.python3 is None:
        report.problems.append(
            "/usr/bin/python3 is missing (tasks, the file editor and verification run it inside "
            f"the sandbox): `{apt_command(['python3', 'python3-pytest'])}`"
        )
    elif not report.pytest:
        report.problems.append(
            "pytest is not importable by /usr/bin/python3 (verification runs it inside the "
            f"sandbox, offline): `{apt_command(['python3-pytest'])}`"
        )
    if not report.user_namespaces:
        report.problems.append(
            "user namespaces are disabled (/proc/sys/user/max_user_namespaces is 0): "
            "`sudo sysctl -w user.max_user_namespaces=15000`"
        )
    if trace_problem is not None and report.root:
        report.problems.append(
            f"{trace_problem}: verification cannot check what the tests ran (a Linux kernel "
            "5.0 or newer built with CONFIG_FANOTIFY is needed, as Debian's and Ubuntu's are)"
        )
    if not report.root:
        report.problems.append(
            "the terminal sandbox runs each episode under a dedicated uid (so process and "
            "memory limits hold) and must be started as root (e.g. in the CI container)"
        )
    if len(report.missing) > 1:
        packages = [TOOLS[t][0] for t in report.missing]
        report.problems.append(f"all at once: `{apt_command(packages)}`")
    return report


def missing_tools(
    *, build: bool = False, network: bool = False, services: bool = False
) -> list[str]:
    """Problems (with the install command) for the optional tools ``build`` / ``network`` /
    compose ``services`` need."""
    wanted: dict[str, tuple[str, str]] = {}
    if build:
        wanted.update(BUILD_TOOLS)
    if network:
        wanted.update(NETWORK_TOOLS)
    if services:
        wanted.update(SERVICE_TOOLS)
    return [
        f"{tool} is not installed (needed for {why}): `{apt_command([package])}` "
        f"(or `{INSTALL_SCRIPT}` from the exploreval checkout)"
        for tool, (package, why) in wanted.items()
        if shutil.which(tool, path=SYSTEM_PATH) is None
    ]


def require_system(
    *, image: bool = False, network: bool = False, build: bool = False, services: bool = False
) -> SystemReport:
    """check_system() (+ the tools a built image, a network, a build or compose services
    need), raising SandboxUnavailable listing every problem."""
    report = check_system()
    problems = list(report.problems) + missing_tools(
        build=build or image, network=network, services=services
    )
    if problems:
        raise SandboxUnavailable(
            "the terminal sandbox cannot run on this machine:\n- " + "\n- ".join(problems)
        )
    return report
