"""Task loaders: Terminal-Bench 1 and Harbor folder layouts, into :class:`TerminalTask`.

Both layouts describe their work dir with a Dockerfile. Without Docker we *materialise* what the
honoured subset of it asks for (docs/terminal.md, "Task formats") into a cached work-dir
template, and gather the test files into a tests directory mounted at ``/tests``. The cache is
keyed by a hash of the task folder, so editing a task rebuilds it; the task folder itself is
never written.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import tempfile
import tomllib
from pathlib import Path
from typing import Any

import yaml

from exploreval.core import user_cache_dir
from exploreval.suites.terminal._bwrap_check import run_sandboxed
from exploreval.suites.terminal._compose import (
    ComposeService,
    OtherService,
    read_compose,
    service_specs,
)
from exploreval.suites.terminal._contract import ImageRecipe, ServiceSpec, TerminalTask
from exploreval.suites.terminal._dockerfile import CopyOp, DockerPlan, MkdirOp, parse_dockerfile
from exploreval.suites.terminal._errors import TaskFormatError
from exploreval.suites.terminal._oracle import solution_archive, solution_env

#: Files of a Terminal-Bench 1 task folder that are never part of the agent's work dir.
TB1_PRIVATE = frozenset(
    {
        "task.yaml",
        "solution.sh",
        "solution.yaml",
        "run-tests.sh",
        "tests",
        "Dockerfile",
        "docker-compose.yaml",
        "docker-compose.yml",
        ".dockerignore",
        "dockerignore",
    }
)
_DIFFICULTIES = ("easy", "medium", "hard")
_KINDS = ("file", "text", "script", "git", "swe", "api")


#: A Terminal-Bench 1 task's resident memory (MB) when run from its image. Terminal-Bench sets
#: none (a container may use the host's memory); 1 GB killed mlflow-register's own gold (an MLflow
#: server with four workers beside the client that registers the model).
TB1_MEMORY_MB = 4096


def cache_root() -> Path:
    """Where materialised work-dir templates and tests live (``EXPLOREVAL_TERMINAL_CACHE``)."""
    return user_cache_dir("terminal-tasks", "EXPLOREVAL_TERMINAL_CACHE")


def _tree_hash(root: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            digest.update(str(path.relative_to(root)).encode())
            digest.update(b"\0")
            digest.update(path.read_bytes())
            digest.update(b"\0")
    return digest.hexdigest()[:16]


def is_task_dir(path: Path) -> bool:
    return (path / "task.yaml").is_file() or (
        (path / "task.toml").is_file() and (path / "instruction.md").is_file()
    )


def load_tasks(path: Path, *, strict: bool = True, image: str = "host") -> list[TerminalTask]:
    """Every task under ``path`` (a task folder, or a folder of task folders), sorted by id.

    ``image="build"``: each task's Dockerfile becomes an image (built on first use, see
    ``._image``); ``"host"``: the honoured subset of it is materialised over this machine's
    system (the built-in tasks' way)."""
    path = Path(path)
    if not path.is_dir():
        raise TaskFormatError(
            f"{path}: not a directory (expected a task folder or a folder of them)"
        )
    if is_task_dir(path):
        return [load_task(path, strict=strict, image=image)]
    tasks = [
        load_task(d, strict=strict, image=image) for d in sorted(path.iterdir()) if is_task_dir(d)
    ]
    if not tasks:
        raise TaskFormatError(
            f"{path}: no task folders found (a Terminal-Bench 1 task has task.yaml; a Harbor task "
            "has task.toml and instruction.md)"
        )
    ids = [t.id for t in tasks]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        raise TaskFormatError(f"{path}: duplicate task ids {dupes}")
    return tasks


def load_task(path: Path, *, strict: bool = True, image: str = "host") -> TerminalTask:
    """One task folder in either layout (``image``: see :func:`load_tasks`)."""
    path = Path(path).resolve()
    if (path / "task.yaml").is_file():
        return _load_tb1(path, strict=strict, image=image)
    if (path / "task.toml").is_file() and (path / "instruction.md").is_file():
        return _load_harbor(path, strict=strict, image=image)
    raise TaskFormatError(
        f"{path}: not a task folder: expected task.yaml (Terminal-Bench 1) or task.toml + "
        "instruction.md (Harbor)"
    )


# --------------------------------------------------------------------------- Terminal-Bench 1
def _load_tb1(path: Path, *, strict: bool, image: str = "host") -> TerminalTask:
    meta_path = path / "task.yaml"
    try:
        meta = yaml.safe_load(meta_path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise TaskFormatError(f"{meta_path}: not valid YAML: {exc}") from exc
    if not isinstance(meta, dict):
        raise TaskFormatError(f"{meta_path}: expected a mapping at the top level")
    instruction = meta.get("instruction")
    if not isinstance(instruction, str) or not instruction.strip():
        # Terminal-Bench 1 also allowed `descriptions: [{key: base, description: ...}]`.
        descs = meta.get("descriptions")
        if isinstance(descs, list) and descs and isinstance(descs[0], dict):
            instruction = descs[0].get("description")
        if not isinstance(instruction, str) or not instruction.strip():
            raise TaskFormatError(f"{meta_path}: field 'instruction' must be a non-empty string")
    parser = meta.get("parser_name", "pytest")
    if parser != "pytest":
        raise TaskFormatError(
            f"{meta_path}: field 'parser_name' is {parser!r}; only 'pytest' is supported"
        )
    solution = _tb1_solution(path)
    if image != "host":
        return _tb1_image_task(path, meta, meta_path, instruction, solution)
    _refuse_services_on_host(path)
    docker = path / "Dockerfile"
    plan = parse_dockerfile(docker, strict=strict) if docker.is_file() else None
    workdir, tests_dir = _materialise(path, plan, context=path, tb1=True, strict=strict)
    notes = list(plan.notes) if plan else ["no Dockerfile: the work dir starts empty"]
    test_command, test_note = _tb1_test_command(path)
    if test_note:
        notes.append(test_note)
    return TerminalTask(
        id=path.name,
        instruction=instruction.strip() + "\n",
        category=str(meta.get("category", "")),
        difficulty=_difficulty(meta.get("difficulty"), meta_path),
        kind=_kind(meta.get("kind", "file"), meta_path),
        tags=tuple(str(t) for t in (meta.get("tags") or ())),
        workdir=workdir,
        tests_dir=tests_dir,
        test_command=test_command,
        parser="pytest",
        agent_timeout_s=_number(meta, "max_agent_timeout_sec", 360.0, meta_path),
        test_timeout_s=_number(meta, "max_test_timeout_sec", 60.0, meta_path),
        env={"TEST_DIR": "/tests", **(plan.env if plan else {})},
        solution=solution,
        source_layout="terminal-bench-1",
        dockerfile_notes=tuple(notes),
        container_workdir=plan.workdir if plan else "/app",
        source_dir=path,
    )


def _refuse_services_on_host(
    path: Path, names: tuple[str, ...] = ("docker-compose.yaml", "docker-compose.yml")
) -> None:
    """On this machine's system there is no image to run another service from. ``names``: the
    Compose files the task's benchmark reads (Harbor: ``docker-compose.yaml`` only)."""
    for name in names:
        if (path / name).is_file():
            others = read_compose(path / name, path).others
            if others:
                raise TaskFormatError(
                    f"{others[0].where}: the task runs services beside the agent's "
                    f"({', '.join(o.name for o in others)}), each from its own image: it cannot "
                    "run on this machine's system (image=host); load it with image=build"
                )
            return


#: What Terminal-Bench 1's harness ran when a task had no run-tests.sh, minus the network:
#: pytest on the test files, with this machine's python3 (its pytest comes from the system).
OFFLINE_PYTEST = "python3 -m pytest -q -rA -p no:cacheprovider /tests"
_NETWORK_SETUP = re.compile(
    r"^[ \t]*(curl|wget|apt-get|apt|uv\s+(venv|pip)|pip3?\s+install|source\s+\$HOME/\.local)", re.M
)


def _tb1_test_command(path: Path) -> tuple[str, str | None]:
    """The test command, and a note when run-tests.sh was replaced (missing or needs network)."""
    script = path / "run-tests.sh"
    if not script.is_file():
        return OFFLINE_PYTEST, "no run-tests.sh: tests run with `" + OFFLINE_PYTEST + "`"
    text = script.read_text(encoding="utf-8")
    hit = _NETWORK_SETUP.search(text)
    if hit is None:
        return "bash /tests/run-tests.sh", None
    line = text[: hit.start()].count("\n") + 1
    target = (
        "/tests/test_outputs.py" if (path / "tests" / "test_outputs.py").is_file() else "/tests"
    )
    command = OFFLINE_PYTEST.replace("/tests", target)
    return command, (
        f"run-tests.sh line {line} ({hit.group(0).strip()}) needs the network to install the "
        f"test tools; replaced by `{command}`"
    )


def _tb1_solution(path: Path) -> str | None:
    sh = path / "solution.sh"
    if sh.is_file():
        return sh.read_text(encoding="utf-8")
    yml = path / "solution.yaml"
    if not yml.is_file():
        return None
    try:
        steps = yaml.safe_load(yml.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise TaskFormatError(f"{yml}: not valid YAML: {exc}") from exc
    if not isinstance(steps, list):
        raise TaskFormatError(f"{yml}: expected a list of {{command: ...}} entries")
    lines = ["#!/bin/bash"]
    for i, step in enumerate(steps):
        if not isinstance(step, dict) or not isinstance(step.get("command"), str):
            raise TaskFormatError(f"{yml}: entry {i} needs a string field 'command'")
        lines.append(step["command"].rstrip("\n"))
    return "\n".join(lines) + "\n"


# -> Any: a task.yaml value, validated by pydantic after
def _difficulty(value: Any, where: Path) -> Any:
    if value is None:
        return "unknown"
    if value not in _DIFFICULTIES:
        raise TaskFormatError(
            f"{where}: field 'difficulty' must be one of {_DIFFICULTIES}, got {value!r}"
        )
    return value


# -> Any: a task.yaml value, validated by pydantic after
def _kind(value: Any, where: Path) -> Any:
    if value not in _KINDS:
        raise TaskFormatError(f"{where}: field 'kind' must be one of {_KINDS}, got {value!r}")
    return value


def _number(meta: dict[str, Any], key: str, default: float, where: Path) -> float:
    value = meta.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise TaskFormatError(f"{where}: field {key!r} must be a positive number, got {value!r}")
    return float(value)


def _tb1_image_task(
    path: Path, meta: dict[str, Any], meta_path: Path, instruction: str, solution: str | None
) -> TerminalTask:
    """A Terminal-Bench task run as shipped: its compose service's image, its run-tests.sh."""
    compose_path = next(
        (path / n for n in ("docker-compose.yaml", "docker-compose.yml") if (path / n).is_file()),
        None,
    )
    if compose_path is not None:
        service = read_compose(compose_path, path)
    else:
        service = ComposeService(path, path / "Dockerfile")
        if not service.dockerfile.is_file():
            raise TaskFormatError(f"{path}: no Dockerfile (and no docker-compose.yaml)")
    recipe = ImageRecipe(
        dockerfile=service.dockerfile,
        context=service.context,
        args=service.args,
        terminal_bench_tools=True,
        exclude=tuple(sorted(TB1_PRIVATE - {"Dockerfile"})) if service.context == path else (),
    )
    workdir, notes = _check_image(recipe)
    tests_dir = _tb1_tests(path)
    test_command = "bash /tests/run-tests.sh"
    if not (path / "run-tests.sh").is_file():
        test_command = "bash /tests/run-uv-pytest.sh"
        notes.append("no run-tests.sh: the tests run as Terminal-Bench's default (uv + pytest)")
    env = {"TEST_DIR": "/tests", **service.environment}

    def service_recipe(other: OtherService) -> ImageRecipe:
        dockerfile, context = other.build_paths
        private = tuple(sorted(TB1_PRIVATE - {"Dockerfile"})) if context == path else ()
        return ImageRecipe(dockerfile=dockerfile, context=context, args=other.args, exclude=private)

    services = service_specs(service, service_recipe, _check_image)
    notes.append("the agent's sandbox has a network, as Terminal-Bench gives every task's "
                 "container (env option network=false turns it off)")  # fmt: skip
    return _image_task(
        path, meta, meta_path, recipe, service, services, workdir, notes,
        instruction=instruction.strip() + "\n",
        tests_dir=tests_dir,
        test_command=test_command,
        parser="pytest",
        agent_timeout_s=_number(meta, "max_agent_timeout_sec", 360.0, meta_path),
        test_timeout_s=_number(meta, "max_test_timeout_sec", 60.0, meta_path),
        env=env,
        solution=solution,
        agent_network=True,  # Terminal-Bench's harness gives every container one
        memory_mb=TB1_MEMORY_MB,
        source_layout="terminal-bench-1",
    )  # fmt: skip


def _image_task(
    path: Path,
    meta: dict[str, Any],
    meta_path: Path,
    recipe: ImageRecipe,
    service: ComposeService,
    services: tuple[ServiceSpec, ...],
    workdir: str,
    notes: list[str],
    **layout: Any,
) -> TerminalTask:
    """A task run as shipped from its image: what both layouts (Terminal-Bench 1, Harbor) fill
    the same way from their metadata (``meta``: task.yaml, or task.toml's ``[metadata]``), the
    compose file and the image; ``layout``: the fields each fills its own way."""
    return TerminalTask(
        id=path.name,
        category=str(meta.get("category", "")),
        difficulty=_difficulty(meta.get("difficulty"), meta_path),
        kind=_kind(meta.get("kind", "file"), meta_path),
        tags=tuple(str(t) for t in (meta.get("tags") or ())),
        workdir=None,
        image=recipe,
        dockerfile_notes=tuple(notes),
        compose_notes=tuple(service.notes),
        services=services,
        depends_on=service.depends_on,
        container_workdir=workdir,
        source_dir=path,
        **layout,
    )


def _check_image(recipe: ImageRecipe) -> tuple[str, list[str]]:
    """(the image's working directory, load notes); refusals raise TaskFormatError."""
    from exploreval.suites.terminal._image_recipe import BuildRecipe, static_workdir
    from exploreval.suites.terminal._recipe_check import check_recipe

    build = BuildRecipe(**recipe.model_dump())
    df, bases, notes = check_recipe(build)
    return static_workdir(df, bases[-1], recipe.args), notes


#: Terminal-Bench's harness puts these next to a task's tests: its test tools (uv, pytest). The
#: stand-ins use what the image provisions (uv at /root/.local/bin, a pytest cache) instead of
#: downloading uv from astral.sh and GitHub at test time.
SETUP_UV_PYTEST = """#!/bin/bash
# exploreval's stand-in for Terminal-Bench's setup-uv-pytest.sh (sourced by run-tests.sh): uv is
# provisioned in the image and pytest is in its uv cache, so nothing is downloaded here.
export PATH="/root/.local/bin:$HOME/.local/bin:$PATH"
if [ "$PWD" = "/" ]; then
    echo "Error: No working directory set. Please set a WORKDIR in your Dockerfile before running this script."
    exit 1
fi
uv init
uv add pytest==8.4.1
"""
RUN_UV_PYTEST = """#!/bin/bash
# exploreval's stand-in for Terminal-Bench's run-uv-pytest.sh
export PATH="/root/.local/bin:$HOME/.local/bin:$PATH"
uv run pytest $TEST_DIR/test_outputs.py -rA
"""


def _tb1_tests(path: Path) -> Path:
    """The task's tests + run-tests.sh + the harness's helpers, as /tests (cached by hash)."""
    key = f"{path.name}-{_tree_hash(path / 'tests') if (path / 'tests').is_dir() else 'none'}"
    key += "-" + hashlib.sha256((SETUP_UV_PYTEST + RUN_UV_PYTEST).encode()).hexdigest()[:8]
    script = path / "run-tests.sh"
    if script.is_file():
        key += "-" + hashlib.sha256(script.read_bytes()).hexdigest()[:8]
    target = cache_root() / "tests" / key
    if target.is_dir():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{key}.", dir=target.parent))
    try:
        tests = tmp / "tests"
        if (path / "tests").is_dir():
            shutil.copytree(path / "tests", tests, ignore=_ignore_pycache)
        else:
            tests.mkdir()
        if script.is_file():
            shutil.copy2(script, tests / "run-tests.sh")
        (tests / "setup-uv-pytest.sh").write_text(SETUP_UV_PYTEST)
        (tests / "run-uv-pytest.sh").write_text(RUN_UV_PYTEST)
        with contextlib.suppress(OSError):  # built concurrently: keep theirs
            os.rename(tests, target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target


# --------------------------------------------------------------------------- Harbor
def _load_harbor(path: Path, *, strict: bool, image: str = "host") -> TerminalTask:
    meta_path = path / "task.toml"
    try:
        meta = tomllib.loads(meta_path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise TaskFormatError(f"{meta_path}: not valid TOML: {exc}") from exc
    instruction = (path / "instruction.md").read_text(encoding="utf-8")
    if not instruction.strip():
        raise TaskFormatError(f"{path / 'instruction.md'}: empty instruction")
    tables = {
        k: meta.get(k, {}) for k in ("metadata", "verifier", "agent", "environment", "solution")
    }
    for name, table in tables.items():
        if not isinstance(table, dict):
            raise TaskFormatError(f"{meta_path}: [{name}] must be a table")
    md, env_t = tables["metadata"], tables["environment"]
    solve = path / "solution" / "solve.sh"
    env_dir = path / "environment"
    docker = env_dir / "Dockerfile"
    if image != "host":
        return _harbor_image_task(path, meta_path, instruction, tables, solve)
    if env_t.get("allow_internet") is True:
        raise TaskFormatError(
            f"{meta_path}: [environment] allow_internet = true; the sandbox has no network "
            "(load with image building, where the option network gives it one)"
        )
    _refuse_services_on_host(env_dir, (HARBOR_COMPOSE,))
    plan = parse_dockerfile(docker, strict=strict) if docker.is_file() else None
    workdir, _ = _materialise(path, plan, context=env_dir, tb1=False, strict=strict)
    tests = path / "tests"
    if not (tests / "test.sh").is_file():
        raise TaskFormatError(f"{path}: Harbor task without tests/test.sh")
    memory = env_t.get("memory_mb", 1024)
    if isinstance(env_t.get("memory"), str):
        memory = _parse_memory(env_t["memory"], meta_path)
    oracle, oracle_notes = _harbor_oracle(tables["solution"], meta_path, solve)
    return TerminalTask(
        id=path.name,
        instruction=instruction,
        category=str(md.get("category", "")),
        difficulty=_difficulty(md.get("difficulty"), meta_path),
        kind=_kind(md.get("kind", "file"), meta_path),
        tags=tuple(str(t) for t in (md.get("tags") or ())),
        workdir=workdir,
        tests_dir=tests,
        test_command="bash /tests/test.sh",
        parser="reward_file",
        agent_timeout_s=_number(tables["agent"], "timeout_sec", 600.0, meta_path),
        test_timeout_s=_number(tables["verifier"], "timeout_sec", 120.0, meta_path),
        cpus=float(env_t.get("cpus", env_t.get("cpu", 1))),
        memory_mb=int(memory),
        env=dict(plan.env) if plan else {},
        **oracle,
        source_layout="harbor",
        dockerfile_notes=tuple(
            [*(plan.notes if plan else ["no Dockerfile: the work dir starts empty"]), *oracle_notes]
        ),
        container_workdir=plan.workdir if plan else "/app",
        source_dir=path,
    )


#: The one Compose file name Harbor reads in a task's ``environment/``.
HARBOR_COMPOSE = "docker-compose.yaml"


def harbor_allows_internet(environment: dict[str, Any]) -> bool:
    """Harbor's own default: ``allow_internet`` is true unless the task says false (or sets
    ``network_mode = "no-network"``, its newer spelling)."""
    if environment.get("network_mode") == "no-network":
        return False
    return environment.get("allow_internet", True) is not False


def _harbor_image_task(
    path: Path, meta_path: Path, instruction: str, tables: dict[str, Any], solve: Path
) -> TerminalTask:
    """A Harbor task run as shipped: environment/'s image, tests/test.sh writing its reward."""
    md, env_t, verifier = tables["metadata"], tables["environment"], tables["verifier"]
    env_dir = path / "environment"
    # Harbor reads environment/docker-compose.yaml and no other name: a docker-compose.yml there
    # is a file of the build context (a task about fixing one, as TermiGen has), not services
    if (env_dir / HARBOR_COMPOSE).is_file():
        service = read_compose(env_dir / HARBOR_COMPOSE, env_dir)
    else:
        service = ComposeService(env_dir, env_dir / "Dockerfile")
    if not service.dockerfile.is_file():
        raise TaskFormatError(f"{path}: Harbor task without environment/Dockerfile")
    tests = path / "tests"
    if not (tests / "test.sh").is_file():
        raise TaskFormatError(f"{path}: Harbor task without tests/test.sh")
    if str(verifier.get("mode", "shared")) == "separate":
        raise TaskFormatError(
            f'{meta_path}: [verifier] mode = "separate" (tests in their own image) is not '
            "supported: exploreval verifies in a fresh sandbox over the task's own image"
        )
    recipe = ImageRecipe(
        dockerfile=service.dockerfile,
        context=service.context,
        args=service.args,
        timeout_s=_number(env_t, "build_timeout_sec", 1800.0, meta_path),
    )
    workdir, notes = _check_image(recipe)
    services = service_specs(
        service,
        lambda other: ImageRecipe(
            dockerfile=other.build_paths[0], context=other.build_paths[1], args=other.args,
            timeout_s=recipe.timeout_s,
        ),
        _check_image,
    )  # fmt: skip
    if harbor_allows_internet(env_t):
        notes.append("the agent's sandbox has a network, as Harbor gives it ([environment] "
                     "allow_internet, default true; env option network=false turns it off)")  # fmt: skip
    memory = env_t.get("memory_mb", 1024)
    if isinstance(env_t.get("memory"), str):
        memory = _parse_memory(env_t["memory"], meta_path)
    storage = env_t.get("storage_mb")
    if isinstance(env_t.get("storage"), str):
        storage = _parse_memory(env_t["storage"], meta_path)
    oracle, oracle_notes = _harbor_oracle(tables["solution"], meta_path, solve)
    notes.extend(oracle_notes)
    return _image_task(
        path, md, meta_path, recipe, service, services, workdir, notes,
        instruction=instruction,
        tests_dir=tests,
        test_command="bash /tests/test.sh",
        parser="reward_file",
        agent_timeout_s=_number(tables["agent"], "timeout_sec", 600.0, meta_path),
        test_timeout_s=_number(verifier, "timeout_sec", 120.0, meta_path),
        cpus=float(env_t.get("cpus", env_t.get("cpu", 1))),
        memory_mb=int(memory),
        disk_mb=int(storage) if storage else None,
        agent_network=harbor_allows_internet(env_t),
        env=dict(service.environment),
        **oracle,
        source_layout="harbor",
    )  # fmt: skip


def _harbor_oracle(
    table: dict[str, Any], meta_path: Path, solve: Path
) -> tuple[dict[str, Any], list[str]]:
    """What Harbor's oracle runs: ``solve.sh``, the whole ``solution/`` folder it runs in and
    ``[solution] env`` (:mod:`._oracle`); with the notes of what it could not carry."""
    if not solve.is_file():
        return {"solution": None}, []
    env, notes = solution_env(table.get("env"), meta_path)
    archive, note = solution_archive(solve.parent)
    oracle = {
        "solution": solve.read_text(encoding="utf-8"),
        "solution_archive": archive,
        "solution_env": env,
    }
    return oracle, [*notes, *([note] if note else [])]


def _parse_memory(text: str, where: Path) -> int:
    units = {"k": 1 / 1024, "m": 1, "g": 1024}
    t = text.strip().lower().rstrip("b")
    if t and t[-1] in units and t[:-1].replace(".", "", 1).isdigit():
        return int(float(t[:-1]) * units[t[-1]])
    raise TaskFormatError(f"{where}: [environment] memory {text!r} is not like '2G' or '512M'")


# --------------------------------------------------------------------------- materialisation
def _materialise(
    task_dir: Path, plan: DockerPlan | None, *, context: Path, tb1: bool, strict: bool
) -> tuple[Path, Path | None]:
    """(work-dir template, tests dir) in the cache; built once per content hash."""
    key = f"{task_dir.name}-{_tree_hash(task_dir)}"
    target = cache_root() / key
    if not (target / ".complete").is_file():
        cache_root().mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{key}.", dir=cache_root()))
        tmp.chmod(0o755)  # mkdtemp makes 0700; a sandbox running as another uid must read it
        try:
            work = tmp / "workdir"
            work.mkdir()
            if plan is not None:
                _apply_plan(plan, context, work, task_dir, tb1=tb1, strict=strict)
            if tb1:
                tests = tmp / "tests"
                if (task_dir / "tests").is_dir():
                    shutil.copytree(task_dir / "tests", tests, ignore=_ignore_pycache)
                else:
                    tests.mkdir()
                if (task_dir / "run-tests.sh").is_file():
                    shutil.copy2(task_dir / "run-tests.sh", tests / "run-tests.sh")
            (tmp / ".complete").write_text(str(task_dir) + "\n")
            try:
                os.rename(tmp, target)
            except OSError:  # built concurrently by another process: keep theirs
                shutil.rmtree(tmp, ignore_errors=True)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    tests_dir = target / "tests" if tb1 else None
    return target / "workdir", tests_dir


def _ignore_pycache(_dir: str, names: list[str]) -> list[str]:
    return [n for n in names if n == "__pycache__" or n.endswith(".pyc")]


def _apply_plan(
    plan: DockerPlan, context: Path, work: Path, task_dir: Path, *, tb1: bool, strict: bool
) -> None:
    docker = context / "Dockerfile"
    for op in plan.ops:
        where = f"{docker}:{op.line}"
        if isinstance(op, MkdirOp):
            (work / op.path).mkdir(parents=True, exist_ok=True)
            continue
        if not isinstance(op, CopyOp):
            run = run_sandboxed(work, op.command, mount=op.workdir, env=plan.env, timeout_s=120.0)
            if run.returncode != 0:
                msg = (
                    f"{where}: RUN failed offline in the sandbox (exit {run.returncode}"
                    f"{', timed out' if run.timed_out else ''}); output:\n{run.output[-2000:]}"
                )
                if strict:
                    raise TaskFormatError(msg)
                plan.notes.append(f"line {op.line}: WARNING RUN failed, task may fail")
            continue
        for src_text in op.sources:
            src = (context / src_text).resolve()
            if not str(src).startswith(str(context.resolve())):
                raise TaskFormatError(
                    f"{where}: COPY source {src_text} lies outside the build context"
                )
            if not src.exists():
                raise TaskFormatError(
                    f"{where}: COPY source {src_text} does not exist in {context}"
                )
            dest = work / op.dest if op.dest else work
            if src.is_dir():
                for child in sorted(src.iterdir()):
                    if tb1 and src == context.resolve() and child.name in TB1_PRIVATE:
                        continue
                    if child.name == "__pycache__":
                        continue
                    _copy_any(child, dest / child.name)
            else:
                target = dest / src.name if op.dest_is_dir else dest
                _copy_any(src, target)


def _copy_any(src: Path, dest: Path) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    if src.is_dir():
        shutil.copytree(src, dest, dirs_exist_ok=True, symlinks=True, ignore=_ignore_pycache)
    else:
        shutil.copy2(src, dest)
