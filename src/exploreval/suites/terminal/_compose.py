"""A task's ``docker-compose.yaml``: the agent's service, and the services beside it.

Terminal-Bench starts a task's ``client`` service (``sleep infinity``) and runs the agent in it
(Harbor calls it ``main``). exploreval builds that service's image (``build.context``,
``build.dockerfile``, ``build.args``) and honours its ``environment`` (Terminal-Bench's
``${T_BENCH_*}`` variables resolved as its harness does).

Every *other* service (a mock API, a web server, a database the task talks to) becomes a
:class:`ServiceSpec`: its own sandbox from its own image, started before the agent's in dependency
order and healthy before the episode starts, on the episode's one private network where its name
resolves (``._services``). What each compose key gets (docs/terminal.md, "Compose services"):

* honoured: ``build`` (context, dockerfile, args), ``environment``, ``env_file``, ``command``,
  ``entrypoint``, ``working_dir``, ``healthcheck`` (test, interval, timeout, retries,
  start_period, disable), ``depends_on`` (list, or conditions ``service_started``,
  ``service_healthy``, ``service_completed_successfully``), ``hostname`` and network
  ``aliases`` (further names that resolve);
* pulled: a service with ``image`` and no ``build`` runs that image from its registry
  (``._registry``: skopeo + umoci), its config's Env, WorkingDir, Entrypoint, Cmd and
  Healthcheck applied under compose's keys as Docker applies them (:func:`pulled_defaults`);
* ignored, noted: keys that only place a container on a Docker host (``image`` beside a
  ``build``, ``container_name``, ``ports``, ``expose``, ``networks``, ``restart``, ``deploy``,
  resource limits, ``tty``...);
* refused at load, naming the file and line: a service with neither ``build`` nor ``image``,
  a malformed image reference, ``network_mode``, a named volume that two services share, a
  dependency cycle or an unknown dependency, and a built service with no command to run.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import yaml

from exploreval.suites.terminal._contract import (
    HealthCheck,
    ImageRecipe,
    ServiceCondition,
    ServiceSpec,
)
from exploreval.suites.terminal._errors import TaskFormatError

#: What Terminal-Bench's harness sets when it starts a task (the values a compose file sees).
TBENCH_VARIABLES = {
    "T_BENCH_TEST_DIR": "/tests",
    "T_BENCH_CONTAINER_LOGS_PATH": "/logs",
    "T_BENCH_CONTAINER_AGENT_LOGS_PATH": "/agent-logs",
}
_IGNORED_KEYS = ("image", "container_name", "command", "volumes", "platform", "dns",
                 "extra_hosts", "networks", "tmpfs", "working_dir", "stdin_open", "tty",
                 "restart", "init", "ulimits", "mem_limit", "cpus", "shm_size", "deploy",
                 "ports", "expose", "labels", "logging", "stop_grace_period", "stop_signal",
                 "security_opt", "cap_add", "cap_drop", "privileged", "user", "pull_policy",
                 "mem_reservation", "pids_limit", "sysctls", "hostname", "healthcheck",
                 "depends_on", "entrypoint", "env_file")  # fmt: skip
#: Keys of another service that this module reads (the rest is noted, or refused below).
_SERVICE_HONOURED = ("build", "environment", "env_file", "command", "entrypoint", "working_dir",
                     "healthcheck", "depends_on", "hostname", "networks")  # fmt: skip
_CONDITIONS = ("service_started", "service_healthy", "service_completed_successfully")
_MAIN_NAMES = ("client", "main")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


@dataclass
class ComposeService:
    """The agent's service, and what the compose file puts beside it."""

    context: Path
    dockerfile: Path
    args: dict[str, str] = field(default_factory=dict)
    environment: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    #: The agent's own ``depends_on``.
    depends_on: dict[str, ServiceCondition] = field(default_factory=dict)
    #: The other services, in start order (dependencies first).
    others: list[OtherService] = field(default_factory=list)


@dataclass
class OtherService:
    """Another service as the compose file states it (the image's defaults not yet applied)."""

    name: str
    where: str  # "file:line", for messages
    context: Path | None  # None: an image pulled from a registry (``pull``)
    dockerfile: Path | None
    args: dict[str, str]
    environment: dict[str, str]
    #: Compose ``entrypoint`` / ``command`` as argv (None: the image's).
    entrypoint: list[str] | None
    command: list[str] | None
    working_dir: str | None
    #: None: the Dockerfile's HEALTHCHECK, if any; False: ``disable: true``.
    healthcheck: HealthCheck | None | bool
    depends_on: dict[str, ServiceCondition]
    aliases: list[str]
    #: compose ``image`` when the service has no ``build``: a registry reference.
    pull: str | None = None

    @property
    def build_paths(self) -> tuple[Path, Path]:
        """(Dockerfile, context) of a service that builds its image."""
        if self.dockerfile is None or self.context is None:
            raise ValueError(f"service '{self.name}' pulls {self.pull}: it builds nothing")
        return self.dockerfile, self.context


def _line(node: yaml.Node) -> int:
    return node.start_mark.line + 1


_VARIABLE = re.compile(r"\$\{([A-Za-z_]\w*)(?::?-([^}]*))?\}|\$([A-Za-z_]\w*)")


def _substitute(value: str) -> str:
    """``${NAME}``, ``${NAME:-default}``, ``$NAME`` with Terminal-Bench's harness values."""

    def replace(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(3)
        return TBENCH_VARIABLES.get(name, match.group(2) or "")

    return _VARIABLE.sub(replace, value)


_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|us|ns|h|m|s)")


def parse_duration(value: object, where: str) -> float:
    """Compose's duration (``1m30s``, ``500ms``, or a number of seconds) in seconds."""
    if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
        return float(value)
    text = str(value).strip()
    units = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}
    if text and _DURATION.sub("", text) == "":
        return sum(float(n) * units[u] for n, u in _DURATION.findall(text))
    raise TaskFormatError(f"{where}: expected a duration such as '10s' or '1m30s', got {value!r}")


def _argv(value: object, where: str) -> list[str]:
    """A compose command: a list as is, a string split as a shell would (no shell runs it)."""
    if isinstance(value, list):
        return [_substitute(str(v)) for v in value]
    try:
        return shlex.split(_substitute(str(value)))
    except ValueError as exc:
        raise TaskFormatError(f"{where}: command does not parse: {exc}") from exc


def _health_test(value: object, where: str) -> tuple[str, ...] | None:
    """Compose's ``test``: ``[CMD, ...]``, ``[CMD-SHELL, x]``, ``[NONE]`` or a shell string."""
    if isinstance(value, str):
        return ("/bin/sh", "-c", _substitute(value))
    if not isinstance(value, list) or not value:
        raise TaskFormatError(f"{where}: healthcheck test must be a string or a list")
    kind, rest = str(value[0]), [_substitute(str(v)) for v in value[1:]]
    if kind == "NONE":
        return None
    if kind == "CMD" and rest:
        return tuple(rest)
    if kind == "CMD-SHELL" and len(rest) == 1:
        return ("/bin/sh", "-c", rest[0])
    raise TaskFormatError(
        f"{where}: healthcheck test must start with CMD, CMD-SHELL (one command) or NONE, "
        f"got {value!r}"
    )


def _healthcheck(spec: object, where: str) -> HealthCheck | bool:
    if not isinstance(spec, dict):
        raise TaskFormatError(f"{where}: healthcheck must be a mapping")
    if spec.get("disable") is True:
        return False
    if "test" not in spec:
        raise TaskFormatError(f"{where}: healthcheck without 'test'")
    test = _health_test(spec["test"], where)
    if test is None:
        return False
    defaults = HealthCheck(test=test)
    retries = spec.get("retries", defaults.retries)
    if isinstance(retries, bool) or not isinstance(retries, int) or retries < 1:
        raise TaskFormatError(f"{where}: healthcheck retries must be a positive integer")
    return HealthCheck(
        test=test,
        interval_s=parse_duration(spec.get("interval", defaults.interval_s), where),
        timeout_s=parse_duration(spec.get("timeout", defaults.timeout_s), where),
        retries=retries,
        start_period_s=parse_duration(spec.get("start_period", 0), where),
    )


def _depends_on(value: object, names: set[str], where: str) -> dict[str, ServiceCondition]:
    if value is None:
        return {}
    out: dict[str, ServiceCondition] = {}
    items: list[tuple[str, object]]
    if isinstance(value, list):
        items = [(str(v), {}) for v in value]
    elif isinstance(value, dict):
        items = [(str(k), v) for k, v in value.items()]
    else:
        raise TaskFormatError(f"{where}: depends_on must be a list or a mapping")
    for name, spec in items:
        if name not in names:
            raise TaskFormatError(f"{where}: depends_on names {name!r}, which is no service")
        condition = (spec or {}).get("condition", "service_started") if isinstance(
            spec, dict) else "service_started"  # fmt: skip
        if condition not in _CONDITIONS:
            raise TaskFormatError(
                f"{where}: depends_on {name}: condition must be one of {_CONDITIONS}, "
                f"got {condition!r}"
            )
        out[name] = cast(ServiceCondition, condition)
    return out


def _environment(spec: dict[str, Any], base: Path, where: str) -> dict[str, str]:
    """``env_file`` first, then ``environment`` (compose's precedence)."""
    environment: dict[str, str] = {}
    files = spec.get("env_file") or []
    for entry in [files] if isinstance(files, str | dict) else files:
        name = entry.get("path") if isinstance(entry, dict) else entry
        required = not (isinstance(entry, dict) and entry.get("required") is False)
        path = (base / _substitute(str(name))).resolve()
        if base.resolve() not in (path, *path.parents):
            raise TaskFormatError(f"{where}: env_file {name} is outside the task")
        if not path.is_file():
            if required:
                raise TaskFormatError(f"{where}: env_file {name} does not exist")
            continue
        for raw in path.read_text(encoding="utf-8").splitlines():
            line = raw.strip()
            if line and not line.startswith("#") and "=" in line:
                key, _, value = line.removeprefix("export ").partition("=")
                environment[key.strip()] = value.strip().strip("'\"")
    raw_env = spec.get("environment") or {}
    items = raw_env.items() if isinstance(raw_env, dict) else (
        str(e).split("=", 1) if "=" in str(e) else (str(e), "") for e in raw_env)  # fmt: skip
    for key, value in items:
        environment[str(key)] = _substitute(str(value if value is not None else ""))
    return environment


def _build(spec: dict[str, Any], task_dir: Path, where: str) -> tuple[Path, Path, dict[str, str]]:
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
        raise TaskFormatError(f"{where}: build context {context_rel} is outside the task")
    dockerfile = (context / dockerfile_rel).resolve()
    if not dockerfile.is_file():
        raise TaskFormatError(f"{where}: no Dockerfile at {dockerfile}")
    return context, dockerfile, args


def _named_volumes(spec: dict[str, Any]) -> set[str]:
    """Named volumes a service mounts (``name:/path``; a path source is a bind mount)."""
    names: set[str] = set()
    for volume in spec.get("volumes") or []:
        if isinstance(volume, dict):
            source = _substitute(str(volume.get("source") or ""))
            named = volume.get("type", "volume") == "volume"
        else:
            source, colon, _ = _substitute(str(volume)).partition(":")
            named = bool(colon)  # "/path" alone is an anonymous volume
        if named and source and not source.startswith((".", "/", "~")):
            names.add(source)
    return names


def _aliases(name: str, spec: dict[str, Any]) -> list[str]:
    aliases: list[str] = []
    hostname = spec.get("hostname")
    if isinstance(hostname, str) and _NAME.match(hostname) and hostname != name:
        aliases.append(hostname)
    networks = spec.get("networks")
    if isinstance(networks, dict):
        for net in networks.values():
            for alias in (net or {}).get("aliases") or [] if isinstance(net, dict) else []:
                if _NAME.match(str(alias)) and str(alias) not in (name, *aliases):
                    aliases.append(str(alias))
    return aliases


def _start_order(deps: dict[str, dict[str, ServiceCondition]], path: Path) -> list[str]:
    """Dependencies first, else compose-file order; a cycle is refused."""
    order: list[str] = []
    state: dict[str, int] = {}

    def visit(name: str, trail: list[str]) -> None:
        if state.get(name) == 2:
            return
        if state.get(name) == 1:
            cycle = " -> ".join([*trail[trail.index(name) :], name])
            raise TaskFormatError(f"{path}: depends_on forms a cycle: {cycle}")
        state[name] = 1
        for dep in deps[name]:
            visit(dep, [*trail, name])
        state[name] = 2
        order.append(name)

    for name in deps:
        visit(name, [])
    return order


def read_compose(path: Path, task_dir: Path) -> ComposeService:
    """The agent's service and the others, or :class:`TaskFormatError` naming file and line."""
    try:
        text = path.read_text(encoding="utf-8")
        root = yaml.compose(text)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise TaskFormatError(f"{path}: not valid YAML: {exc}") from exc
    if not isinstance(root, yaml.MappingNode) or not isinstance(data, dict):
        raise TaskFormatError(f"{path}: expected a mapping with 'services'")
    services_node = next((v for k, v in root.value if k.value == "services"), None)
    if not isinstance(services_node, yaml.MappingNode) or not services_node.value:
        raise TaskFormatError(f"{path}: no 'services'")
    services: dict[str, Any] = data["services"]
    names = [k.value for k, _ in services_node.value]
    lines = {k.value: _line(k) for k, _ in services_node.value}
    main = next((n for n in _MAIN_NAMES if n in services), None) or next(
        (n for n in names if isinstance(services[n], dict) and "build" in services[n]), names[0]
    )  # fmt: skip
    specs = {n: (services[n] if isinstance(services[n], dict) else {}) for n in names}
    where = {n: f"{path}:{lines[n]}" for n in names}
    for name in names:
        if not _NAME.match(name):
            raise TaskFormatError(f"{where[name]}: service name {name!r} is not a host name")
        if "network_mode" in specs[name]:
            raise TaskFormatError(
                f"{where[name]}: network_mode of '{name}' is not supported: every service of "
                "an episode shares one private network"
            )
    deps = {n: _depends_on(specs[n].get("depends_on"), set(names) - {n}, where[n]) for n in names}
    mounted: dict[str, str] = {}
    for name in names:
        for volume in sorted(_named_volumes(specs[name])):
            if volume in mounted:
                raise TaskFormatError(
                    f"{where[name]}: volume {volume!r} is shared by '{mounted[volume]}' and "
                    f"'{name}': each service runs in its own sandbox, with its own files"
                )
            mounted[volume] = name
    context, dockerfile, args = _build(specs[main], task_dir, where[main])
    spec = specs[main]
    notes = [f"compose: service '{main}' built from {dockerfile.relative_to(task_dir)}"]
    honoured = ("build", "environment", "env_file", "depends_on")
    ignored = sorted(k for k in spec if k in _IGNORED_KEYS and k not in honoured)
    if ignored:
        notes.append(f"compose: {', '.join(ignored)} of '{main}' have no effect without Docker")
    unknown = sorted(k for k in spec if k not in (*_IGNORED_KEYS, *honoured))
    if unknown:
        notes.append(f"compose: {', '.join(unknown)} of '{main}' not honoured")
    others: list[OtherService] = []
    for name in _start_order(deps, path):
        if name == main:
            continue
        others.append(_other(name, specs[name], task_dir, where[name], deps[name], notes))
    return ComposeService(
        context, dockerfile, args, _environment(spec, task_dir, where[main]), notes, deps[main],
        others,
    )  # fmt: skip


def _other(
    name: str,
    spec: dict[str, Any],
    task_dir: Path,
    where: str,
    depends_on: dict[str, ServiceCondition],
    notes: list[str],
) -> OtherService:
    pull: str | None = None
    context: Path | None
    dockerfile: Path | None
    args: dict[str, str]
    if "build" not in spec:
        pull = _substitute(str(spec.get("image") or ""))
        if not pull:
            raise TaskFormatError(f"{where}: service '{name}' has neither 'build' nor 'image'")
        from exploreval.suites.terminal._image_ref import Reference

        try:
            Reference(pull)
        except ValueError as exc:
            raise TaskFormatError(f"{where}: service '{name}': {exc}") from None
        context, dockerfile, args = None, None, {}
    else:
        context, dockerfile, args = _build(spec, task_dir, where)
    health: HealthCheck | None | bool = None
    if "healthcheck" in spec:
        health = _healthcheck(spec["healthcheck"], where)
    skipped = sorted(k for k in spec if k not in _SERVICE_HONOURED and k != "volumes")
    if skipped:
        notes.append(f"compose: {', '.join(skipped)} of '{name}' have no effect without Docker")
    if spec.get("volumes"):
        notes.append(f"compose: volumes of '{name}' not mounted (its files are its image's)")
    origin = (f"pulled from a registry ({pull})" if dockerfile is None
              else f"built from {dockerfile.relative_to(task_dir)}")  # fmt: skip
    notes.append(f"compose: service '{name}' {origin}, started before the agent's on the "
                 "episode's network")  # fmt: skip
    return OtherService(
        name=name,
        where=where,
        context=context,
        dockerfile=dockerfile,
        args=args,
        environment=_environment(spec, task_dir, where),
        entrypoint=_argv(spec["entrypoint"], where) if spec.get("entrypoint") is not None else None,
        command=_argv(spec["command"], where) if spec.get("command") is not None else None,
        working_dir=str(spec["working_dir"]) if spec.get("working_dir") else None,
        healthcheck=health,
        depends_on=depends_on,
        aliases=_aliases(name, spec),
        pull=pull,
    )


# ------------------------------------------------------------------ the image's own defaults
@dataclass
class ImageDefaults:
    """What a Dockerfile's final stage says about how its container runs."""

    entrypoint: list[str] = field(default_factory=list)
    cmd: list[str] = field(default_factory=list)
    healthcheck: HealthCheck | None = None


def _exec_form(args: str, json_args: list[str] | None) -> list[str]:
    return list(json_args) if json_args is not None else ["/bin/sh", "-c", args]


def image_defaults(dockerfile: Path) -> ImageDefaults:
    """ENTRYPOINT, CMD and HEALTHCHECK of the final stage (and the stages it builds on)."""
    from exploreval.suites.terminal._docker_syntax import parse_dockerfile_file

    parsed = parse_dockerfile_file(dockerfile)
    by_alias = {s.alias: s for s in parsed.stages if s.alias}
    chain = [parsed.final]
    while chain[-1].base in by_alias and by_alias[chain[-1].base] not in chain:
        chain.append(by_alias[chain[-1].base])
    out = ImageDefaults()
    for stage in reversed(chain):  # the first stage first; what a later stage sets wins
        cmd_set = False  # Docker: an ENTRYPOINT drops a CMD this stage did not set itself
        for ins in stage.instructions:
            if ins.keyword == "CMD":
                out.cmd, cmd_set = _exec_form(ins.args, ins.json_args), True
            elif ins.keyword == "ENTRYPOINT":
                out.entrypoint = _exec_form(ins.args, ins.json_args)
                out.cmd = out.cmd if cmd_set else []
            elif ins.keyword == "HEALTHCHECK":
                out.healthcheck = _dockerfile_health(ins.args, ins.flags, ins.where(dockerfile))
    return out


def _dockerfile_health(args: str, flags: dict[str, str], where: str) -> HealthCheck | None:
    kind, _, rest = args.strip().partition(" ")
    if kind.upper() == "NONE":
        return None
    if kind.upper() != "CMD" or not rest.strip():
        raise TaskFormatError(f"{where}: HEALTHCHECK expects 'NONE' or 'CMD command'")
    rest = rest.strip()
    test: tuple[str, ...] = ("/bin/sh", "-c", rest)
    if rest.startswith("["):
        with_json = _health_test(["CMD", *yaml.safe_load(rest)], where)
        test = with_json or test
    defaults = HealthCheck(test=test)
    return HealthCheck(
        test=test,
        interval_s=parse_duration(flags.get("interval", defaults.interval_s), where),
        timeout_s=parse_duration(flags.get("timeout", defaults.timeout_s), where),
        retries=int(flags.get("retries", defaults.retries)),
        start_period_s=parse_duration(flags.get("start-period", 0), where),
    )


def service_specs(
    compose: ComposeService,
    recipe_of: Callable[[OtherService], ImageRecipe],
    check: Callable[[ImageRecipe], tuple[str, list[str]]],
) -> tuple[ServiceSpec, ...]:
    """Each other service with its image's defaults applied (Docker's rules: a compose
    ``entrypoint`` drops the image's CMD unless ``command`` is given too)."""
    specs: list[ServiceSpec] = []
    for other in compose.others:
        if other.pull is not None:  # the image's defaults are known once it is pulled
            specs.append(
                ServiceSpec(
                    name=other.name,
                    pull=other.pull,
                    compose_entrypoint=_maybe_tuple(other.entrypoint),
                    compose_command=_maybe_tuple(other.command),
                    env=other.environment,
                    workdir=other.working_dir or "",
                    healthcheck=other.healthcheck
                    if isinstance(other.healthcheck, HealthCheck)
                    else None,
                    healthcheck_disabled=other.healthcheck is False,
                    depends_on=other.depends_on,
                    aliases=tuple(other.aliases),
                )
            )
            continue
        dockerfile, _context = other.build_paths
        recipe = recipe_of(other)
        workdir, _notes = check(recipe)
        defaults = image_defaults(dockerfile)
        entrypoint = other.entrypoint if other.entrypoint is not None else defaults.entrypoint
        if other.command is not None:
            cmd = other.command
        else:
            cmd = defaults.cmd if other.entrypoint is None else []
        command = [*entrypoint, *cmd]
        if not command:
            raise TaskFormatError(
                f"{other.where}: service '{other.name}' has no command: neither 'command' nor "
                f"'entrypoint' here, nor CMD/ENTRYPOINT in {dockerfile.name}"
            )
        health = other.healthcheck
        if health is None:
            health = defaults.healthcheck
        specs.append(
            ServiceSpec(
                name=other.name,
                image=recipe,
                command=tuple(command),
                env=other.environment,
                workdir=other.working_dir or workdir,
                healthcheck=health if isinstance(health, HealthCheck) else None,
                depends_on=other.depends_on,
                aliases=tuple(other.aliases),
            )
        )
    return tuple(specs)


def _maybe_tuple(argv: list[str] | None) -> tuple[str, ...] | None:
    return None if argv is None else tuple(argv)


def pulled_defaults(
    spec: ServiceSpec, meta: dict[str, Any]
) -> tuple[tuple[str, ...], str, dict[str, str], HealthCheck | None]:
    """(command, working dir, environment, health check) of a service whose image was pulled
    (``meta``: its ``image.json``), by Docker's rules: compose's ``entrypoint`` replaces the
    image's and drops its ``Cmd`` unless compose gives ``command`` too; compose's environment
    over the image's ``Env``; compose's health check, else the image's (``NONE``, or compose's
    ``disable: true``: none)."""
    entrypoint = (list(spec.compose_entrypoint) if spec.compose_entrypoint is not None
                  else list(meta.get("entrypoint") or []))  # fmt: skip
    if spec.compose_command is not None:
        cmd = list(spec.compose_command)
    else:
        cmd = list(meta.get("cmd") or []) if spec.compose_entrypoint is None else []
    command = (*entrypoint, *cmd)
    if not command:
        raise TaskFormatError(
            f"service '{spec.name}': {spec.pull} has no command: neither 'command' nor "
            "'entrypoint' in the compose file, nor Entrypoint/Cmd in the image's config"
        )
    health = spec.healthcheck
    image_health = meta.get("healthcheck") or {}
    test = list(image_health.get("Test") or [])
    if (
        health is None
        and not spec.healthcheck_disabled
        and test
        and test[0] in ("CMD", "CMD-SHELL")
    ):
        argv = tuple(test[1:]) if test[0] == "CMD" else ("/bin/sh", "-c", " ".join(test[1:]))
        nanos = 1e9
        defaults = HealthCheck(test=argv)
        health = HealthCheck(
            test=argv,
            interval_s=image_health.get("Interval", 0) / nanos or defaults.interval_s,
            timeout_s=image_health.get("Timeout", 0) / nanos or defaults.timeout_s,
            retries=int(image_health.get("Retries") or defaults.retries),
            start_period_s=image_health.get("StartPeriod", 0) / nanos,
        )
    env = {**dict(meta.get("env") or {}), **spec.env}
    return command, spec.workdir or str(meta.get("workdir") or "/"), env, health
