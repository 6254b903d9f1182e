"""Compose files (issue 43): which services run beside the agent's, in what order, with which
command and health check; what is honoured, noted or refused (docs/terminal.md, "Compose
services"). Loading only: the services running are in test_services.py."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exploreval.suites.terminal._compose import (
    image_defaults,
    parse_duration,
    read_compose,
)
from exploreval.suites.terminal._errors import TaskFormatError
from exploreval.suites.terminal._tasks import load_task

FIXTURE = Path(__file__).parents[2] / "fixtures" / "terminal" / "compose" / "tb1-api-service"


def _task(tmp_path: Path, compose: str, dockerfiles: dict[str, str] | None = None) -> Path:
    """A Terminal-Bench task folder with this compose file and service Dockerfiles."""
    (tmp_path / "task.yaml").write_text("instruction: do it\n")
    (tmp_path / "Dockerfile").write_text("FROM python:3.11-slim\nWORKDIR /app\n")
    (tmp_path / "tests").mkdir(exist_ok=True)
    (tmp_path / "tests" / "test_x.py").write_text("def test_x():\n    pass\n")
    (tmp_path / "docker-compose.yaml").write_text(textwrap.dedent(compose))
    for folder, text in (dockerfiles or {}).items():
        (tmp_path / folder).mkdir(exist_ok=True)
        (tmp_path / folder / "Dockerfile").write_text(textwrap.dedent(text))
    return tmp_path


SERVER = 'FROM python:3.11-slim\nCMD ["python3", "-m", "http.server"]\n'


def test_the_fixture_loads_its_services_in_dependency_order_with_their_image_defaults() -> None:
    task = load_task(FIXTURE, image="build")
    assert [s.name for s in task.services] == ["api", "seed"]
    api, seed = task.services
    assert api.command == ("python3", "server.py")  # the Dockerfile's CMD
    assert api.workdir == "/srv" and api.env == {"API_PORT": "8080"}
    assert api.aliases == ("inventory",)  # its hostname resolves too
    assert api.healthcheck is not None
    assert (api.healthcheck.interval_s, api.healthcheck.timeout_s) == (1.0, 5.0)
    assert api.healthcheck.retries == 30 and api.healthcheck.test[0] == "python3"
    assert seed.command == ("python3", "/srv/seed.py", "http://api:8080")  # compose's command
    assert seed.depends_on == {"api": "service_healthy"} and seed.healthcheck is None
    assert task.depends_on == {"api": "service_healthy", "seed": "service_completed_successfully"}
    notes = "\n".join(task.compose_notes)
    assert "container_name, ports of 'api' have no effect" in notes


def test_a_compose_entrypoint_drops_the_images_cmd_as_docker_does(tmp_path: Path) -> None:
    path = _task(tmp_path, """
        services:
          client: {build: .}
          a: {build: ./srv, entrypoint: ["/bin/run"]}
          b: {build: ./srv, entrypoint: /bin/run --fast, command: ["x y"]}
          c: {build: ./srv, command: serve --port 9}
        """, {"srv": 'FROM python:3.11-slim\nENTRYPOINT ["tini", "--"]\nCMD python3 app.py\n'})  # fmt: skip
    commands = {s.name: s.command for s in load_task(path, image="build").services}
    assert commands == {
        "a": ("/bin/run",),
        "b": ("/bin/run", "--fast", "x y"),
        "c": ("tini", "--", "serve", "--port", "9"),  # the image's ENTRYPOINT stays
    }


def test_dockerfile_defaults_shell_and_exec_forms_and_healthcheck(tmp_path: Path) -> None:
    dockerfile = tmp_path / "Dockerfile"
    dockerfile.write_text(
        "FROM python:3.11-slim AS base\nCMD python3 a.py\n"
        "HEALTHCHECK --interval=2s --retries=4 --start-period=1m CMD curl -f localhost || exit 1\n"
        "FROM base\nRUN true\n"
    )
    defaults = image_defaults(dockerfile)
    assert defaults.cmd == ["/bin/sh", "-c", "python3 a.py"]  # inherited from the stage it uses
    assert defaults.healthcheck is not None
    assert defaults.healthcheck.test == ("/bin/sh", "-c", "curl -f localhost || exit 1")
    assert (defaults.healthcheck.interval_s, defaults.healthcheck.retries) == (2.0, 4)
    assert defaults.healthcheck.start_period_s == 60.0
    dockerfile.write_text('FROM x\nCMD ["a"]\nHEALTHCHECK NONE\nENTRYPOINT ["e"]\n')
    later = image_defaults(dockerfile)
    assert later.healthcheck is None and later.entrypoint == ["e"] and later.cmd == ["a"]
    dockerfile.write_text('FROM x AS a\nCMD ["a"]\nFROM a\nENTRYPOINT ["e"]\n')
    assert image_defaults(dockerfile).cmd == []  # an inherited CMD is dropped by ENTRYPOINT


@pytest.mark.parametrize(
    ("compose", "dockerfiles", "expected"),
    [
        ("services:\n  client: {build: .}\n  db:\n    environment: {A: '1'}\n", {},
         r"docker-compose.yaml:3: service 'db' has neither 'build' nor 'image'"),
        ("services:\n  client: {build: .}\n  db:\n    image: Postgres:16\n", {},
         r"docker-compose.yaml:3: service 'db': image reference 'Postgres:16': 'library/Postgres' "
         r"is not a repository name"),
        ("services:\n  client: {build: .}\n  s: {build: ./srv, network_mode: host}\n",
         {"srv": SERVER}, r"docker-compose.yaml:3: network_mode of 's'"),
        ("services:\n  client: {build: ., depends_on: [a]}\n  a: {build: ./srv, depends_on: [b]}\n"
         "  b: {build: ./srv, depends_on: [a]}\n", {"srv": SERVER},
         r"depends_on forms a cycle: a -> b -> a"),
        ("services:\n  client: {build: .}\n  a: {build: ./srv, depends_on: [nope]}\n",
         {"srv": SERVER}, r"docker-compose.yaml:3: depends_on names 'nope', which is no service"),
        ("services:\n  client: {build: ., volumes: ['data:/d']}\n"
         "  a: {build: ./srv, volumes: ['data:/var/d']}\n", {"srv": SERVER},
         r"volume 'data' is shared by 'client' and 'a'"),
        ("services:\n  client: {build: .}\n  a: {build: ./srv}\n", {"srv": "FROM python:3.11\n"},
         r"service 'a' has no command"),
        ("services:\n  client: {build: .}\n  a:\n    build: ./srv\n    healthcheck:\n"
         "      test: [CMD, 'true']\n      interval: soon\n", {"srv": SERVER},
         r"expected a duration such as '10s'"),
        ("services:\n  client: {build: ., depends_on: {a: {condition: service_ready}}}\n"
         "  a: {build: ./srv}\n", {"srv": SERVER}, r"condition must be one of"),
    ],
    ids=["no-image", "bad-reference", "network-mode", "cycle", "unknown-dependency", "shared-volume",
         "no-command", "bad-duration", "bad-condition"],
)  # fmt: skip
def test_what_cannot_run_faithfully_is_refused_naming_the_file_and_line(
    tmp_path: Path, compose: str, dockerfiles: dict[str, str], expected: str
) -> None:
    path = _task(tmp_path, compose, dockerfiles)
    with pytest.raises(TaskFormatError, match=expected):
        load_task(path, image="build")


def test_services_cannot_run_on_the_host_system(tmp_path: Path) -> None:
    path = _task(tmp_path, "services:\n  client: {build: .}\n  a: {build: ./srv}\n",
                 {"srv": SERVER})  # fmt: skip
    with pytest.raises(TaskFormatError, match=r"services beside the agent's \(a\).*image=build"):
        load_task(path, image="host")
    assert [s.name for s in load_task(path, image="build").services] == ["a"]


def test_a_one_service_compose_file_still_loads_on_the_host(tmp_path: Path) -> None:
    path = _task(tmp_path, "services:\n  client:\n    build: .\n    environment: [A=1]\n")
    task = load_task(path, image="host")
    assert task.services == () and task.env["TEST_DIR"] == "/tests"


def test_env_file_then_environment_and_harbors_main_service(tmp_path: Path) -> None:
    (tmp_path / "srv").mkdir()
    (tmp_path / "srv" / "Dockerfile").write_text(SERVER)
    (tmp_path / "Dockerfile").write_text("FROM python:3.11-slim\n")
    (tmp_path / "api.env").write_text("# settings\nA=1\nexport B='two'\n")
    (tmp_path / "docker-compose.yaml").write_text(
        "services:\n  main: {build: .}\n"
        "  api: {build: ./srv, env_file: api.env, environment: {B: three}}\n"
    )
    compose = read_compose(tmp_path / "docker-compose.yaml", tmp_path)
    assert compose.dockerfile == tmp_path / "Dockerfile"  # Harbor's agent service is "main"
    assert [o.name for o in compose.others] == ["api"]
    assert compose.others[0].environment == {"A": "1", "B": "three"}


@given(parts=st.lists(st.tuples(st.integers(0, 99), st.sampled_from(["h", "m", "s", "ms"])),
                      min_size=1, max_size=4))  # fmt: skip
def test_compose_durations_add_their_parts(parts: list[tuple[int, str]]) -> None:
    text = "".join(f"{n}{unit}" for n, unit in parts)
    seconds = {"h": 3600, "m": 60, "s": 1, "ms": 0.001}
    assert parse_duration(text, "x") == pytest.approx(sum(n * seconds[u] for n, u in parts))


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_services_start_after_everything_they_depend_on(data: st.DataObject) -> None:
    import tempfile

    count = data.draw(st.integers(1, 6))
    names = [f"s{i}" for i in range(count)]
    # edges only to earlier names in a shuffled order: always acyclic
    ranked = data.draw(st.permutations(names))
    deps = {n: sorted(data.draw(st.sets(st.sampled_from(ranked[: ranked.index(n)]))
                      if ranked.index(n) else st.just(set()))) for n in names}  # fmt: skip
    lines = ["services:", "  client: {build: .}"]
    for name in names:
        lines.append(f"  {name}: {{build: ./srv, depends_on: {deps[name]}}}")
    with tempfile.TemporaryDirectory() as tmp:
        path = _task(Path(tmp), "\n".join(lines) + "\n", {"srv": SERVER})
        order = [o.name for o in read_compose(path / "docker-compose.yaml", path).others]
    assert sorted(order) == names
    for name in names:
        assert all(order.index(dep) < order.index(name) for dep in deps[name])


TB_CORE = Path(__file__).parents[2] / "fixtures" / "terminal" / "real" / "tb-core"


def test_terminal_bench_cores_scraper_task_loads_its_mock_website_as_a_service() -> None:
    """A real terminal-bench-core task, as shipped: the client is built from ``client/``, and the
    ``server`` service from ``server/`` (its compose ``command``, its health check), healthy
    before the agent's sandbox starts; what Docker alone gives is named, not silently lost."""
    folder = TB_CORE / "simple-web-scraper"
    task = load_task(folder, image="build")
    assert task.image is not None and task.image.dockerfile == folder / "client" / "Dockerfile"
    [server] = task.services
    assert server.name == "server" and server.image.dockerfile == folder / "server" / "Dockerfile"
    assert server.command == ("python", "./mock_website.py") and server.workdir == "/app"
    assert server.healthcheck is not None
    assert server.healthcheck.test == ("curl", "-f", "http://localhost:8000")
    assert task.depends_on == {"server": "service_healthy"}
    notes = "\n".join(task.compose_notes)
    assert "container_name, image, ports of 'server' have no effect without Docker" in notes


def test_terminal_bench_cores_minio_cluster_pulls_its_registry_images() -> None:
    """``security-vulhub-minio`` runs three ``vulhub/minio`` containers from Docker Hub, with no
    Dockerfile to build them from: each becomes a service pulled from its registry, with its
    compose command and environment over the image's config (applied once pulled)."""
    from exploreval.suites.terminal._registry import Reference

    folder = TB_CORE / "security-vulhub-minio"
    task = load_task(folder, image="build")
    assert [s.name for s in task.services] == ["node1", "node2", "node3"]
    for service in task.services:
        assert service.image is None and service.pull == "vulhub/minio:2023-02-27T18-10-45Z"
        assert service.command == () and service.compose_entrypoint is None
        assert service.compose_command is not None and service.compose_command[:2] == (
            "minio", "server")  # fmt: skip
        assert service.env["MINIO_ROOT_USER"] == "minioadmin"
    assert Reference(task.services[0].pull or "").host == "registry-1.docker.io"
    assert not any(s.healthcheck_disabled for s in task.services)
    notes = "\n".join(task.compose_notes)
    assert "service 'node1' pulled from a registry (vulhub/minio:2023-02-27T18-10-45Z)" in notes


def test_a_pulled_service_keeps_composes_keys_for_when_its_image_is_known(tmp_path: Path) -> None:
    """At load a pulled image's config is unknown: compose's entrypoint, command, working_dir
    and a disabled health check are kept as written, to apply over the config at start."""
    path = _task(tmp_path, """\
        services:
          client: {build: .}
          db:
            image: postgres:16
            entrypoint: ["docker-entrypoint.sh"]
            working_dir: /srv
            healthcheck: {disable: true}
          cache:
            image: redis:7
            command: ["redis-server", "--save", ""]
    """)  # fmt: skip
    db, cache = load_task(path, image="build").services
    assert (db.pull, db.compose_entrypoint, db.compose_command) == (
        "postgres:16", ("docker-entrypoint.sh",), None)  # fmt: skip
    assert db.workdir == "/srv" and db.healthcheck_disabled and db.healthcheck is None
    assert (cache.compose_entrypoint, cache.compose_command) == (
        None, ("redis-server", "--save", ""))  # fmt: skip
    assert cache.workdir == "" and not cache.healthcheck_disabled
