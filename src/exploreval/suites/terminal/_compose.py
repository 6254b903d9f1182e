"""A Terminal-Bench task's ``docker-compose.yaml``: its one container, or a refusal.

Terminal-Bench starts a task's ``client`` service (``sleep infinity``) and runs the agent in it.
exploreval builds that service's image (``build.context``, ``build.dockerfile``, ``build.args``)
and honours its ``environment`` (Terminal-Bench's ``${T_BENCH_*}`` variables resolved as its
harness does). A compose file with *other* services (a database, a mock API the task talks to)
is refused at load, naming the file, the line and the services: running the task without them
would measure the wrong thing (a gold solution that hard-codes the answer passes, everything
else fails). Keys that have no meaning without Docker (``image``, ``container_name``,
``command``, ``volumes``, ``platform``, ``dns``, ``extra_hosts``, ``networks``, ``tmpfs``) are
noted and ignored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from exploreval.suites.terminal._errors import TaskFormatError

#: What Terminal-Bench's harness sets when it starts a task (the values a compose file sees).
TBENCH_VARIABLES = {
    "T_BENCH_TEST_DIR": "/tests",
    "T_BENCH_CONTAINER_LOGS_PATH": "/logs",
    "T_BENCH_CONTAINER_AGENT_LOGS_PATH": "/agent-logs",
}
_IGNORED_KEYS = ("image", "container_name", "command", "volumes", "platform", "dns",
                 "extra_hosts", "networks", "tmpfs", "working_dir", "stdin_open", "tty",
                 "restart", "init", "ulimits", "mem_limit", "cpus", "shm_size")  # fmt: skip


@dataclass
class ComposeService:
    context: Path
    dockerfile: Path
    args: dict[str, str] = field(default_factory=dict)
    environment: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def _line(node: yaml.Node) -> int:
    return node.start_mark.line + 1


_VARIABLE = re.compile(r"\$\{([A-Za-z_]\w*)(?::?-([^}]*))?\}|\$([A-Za-z_]\w*)")


def _substitute(value: str) -> str:
    """``${NAME}``, ``${NAME:-default}``, ``$NAME`` with Terminal-Bench's harness values."""

    def replace(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(3)
        return TBENCH_VARIABLES.get(name, match.group(2) or "")

    return _VARIABLE.sub(replace, value)


def read_compose(path: Path, task_dir: Path) -> ComposeService:
    """The one service to build, or :class:`TaskFormatError` naming the file and line."""
    try:
        root = yaml.compose(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise TaskFormatError(f"{path}: not valid YAML: {exc}") from exc
    if not isinstance(root, yaml.MappingNode):
        raise TaskFormatError(f"{path}: expected a mapping with 'services'")
    services_node = next((v for k, v in root.value if k.value == "services"), None)
    if not isinstance(services_node, yaml.MappingNode) or not services_node.value:
        raise TaskFormatError(f"{path}: no 'services'")
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    services: dict[str, Any] = data["services"]
    names = [k.value for k, _ in services_node.value]
    lines = {k.value: _line(k) for k, _ in services_node.value}
    main = "client" if "client" in services else next(
        (n for n in names if isinstance(services[n], dict) and "build" in services[n]), names[0]
    )  # fmt: skip
    extra = [n for n in names if n != main]
    if extra:
        listed = ", ".join(f"'{n}' (line {lines[n]})" for n in extra)
        raise TaskFormatError(
            f"{path}:{lines[extra[0]]}: the task needs more containers than its own: {listed}. "
            "exploreval runs one sandbox per episode and does not start other services; a run "
            "without them would not measure the task"
        )
    spec = services[main] if isinstance(services[main], dict) else {}
    build = spec.get("build", ".")
    context_rel, dockerfile_rel, args = ".", "Dockerfile", {}
    if isinstance(build, str):
        context_rel = build
    elif isinstance(build, dict):
        context_rel = str(build.get("context", "."))
        dockerfile_rel = str(build.get("dockerfile", "Dockerfile"))
        raw_args = build.get("args") or {}
        if isinstance(raw_args, list):
            raw_args = dict(str(a).split("=", 1) for a in raw_args if "=" in str(a))
        args = {str(k): _substitute(str(v)) for k, v in dict(raw_args).items()}
    context = (task_dir / _substitute(context_rel)).resolve()
    if task_dir.resolve() not in (context, *context.parents):
        raise TaskFormatError(
            f"{path}:{lines[main]}: build context {context_rel} is outside the task"
        )
    dockerfile = (context / dockerfile_rel).resolve()
    if not dockerfile.is_file():
        raise TaskFormatError(f"{path}:{lines[main]}: no Dockerfile at {dockerfile}")
    environment: dict[str, str] = {}
    raw_env = spec.get("environment") or {}
    items = raw_env.items() if isinstance(raw_env, dict) else (
        str(e).split("=", 1) if "=" in str(e) else (str(e), "") for e in raw_env)  # fmt: skip
    for key, value in items:
        environment[str(key)] = _substitute(str(value if value is not None else ""))
    notes = [f"compose: service '{main}' built from {dockerfile.relative_to(task_dir)}"]
    ignored = sorted(k for k in spec if k in _IGNORED_KEYS)
    if ignored:
        notes.append(f"compose: {', '.join(ignored)} of '{main}' have no effect without Docker")
    unknown = sorted(k for k in spec if k not in (*_IGNORED_KEYS, "build", "environment"))
    if unknown:
        notes.append(f"compose: {', '.join(unknown)} of '{main}' not honoured")
    return ComposeService(context, dockerfile, args, environment, notes)
