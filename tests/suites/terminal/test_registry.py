"""Compose services that run a registry image (``db: image: postgres:15``): references read as
Docker reads them, the image's config applied under compose's keys as Docker applies it, and the
real path: Debian's ``docker-registry`` serving an image made with umoci and pushed with skopeo,
pulled and run beside the agent."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from exploreval.suites.terminal._compose import pulled_defaults
from exploreval.suites.terminal._contract import HealthCheck, ServiceSpec
from exploreval.suites.terminal._errors import TaskFormatError
from exploreval.suites.terminal._image_recipe import ImageBuildError
from exploreval.suites.terminal._registry import Reference, image_meta, pull_image

from .conftest import local_registry

SEAL = Path(__file__).parents[2] / "fixtures" / "terminal" / "seal"


@pytest.mark.parametrize(
    ("text", "qualified", "host"),
    [
        ("postgres:15", "docker.io/library/postgres:15", "registry-1.docker.io"),
        ("vulhub/minio:2023-02-27T18-10-45Z", "docker.io/vulhub/minio:2023-02-27T18-10-45Z",
         "registry-1.docker.io"),
        ("jpillora/dnsmasq", "docker.io/jpillora/dnsmasq:latest", "registry-1.docker.io"),
        ("ghcr.io/laude-institute/t-bench/python-3-13:20250620",
         "ghcr.io/laude-institute/t-bench/python-3-13:20250620", "ghcr.io"),
        ("localhost:5000/team/app", "localhost:5000/team/app:latest", "localhost"),
        ("127.0.0.1:5123/exploreval/web:1", "127.0.0.1:5123/exploreval/web:1", "127.0.0.1"),
        ("redis@sha256:" + "a" * 64, "docker.io/library/redis@sha256:" + "a" * 64,
         "registry-1.docker.io"),
    ],
)  # fmt: skip
def test_a_reference_reads_as_docker_reads_it(text: str, qualified: str, host: str) -> None:
    ref = Reference(text)
    assert (ref.qualified, ref.host) == (qualified, host)


@pytest.mark.parametrize("text", ["Postgres:15", "redis@sha256:short", "app:bad tag", "a//b", ""])
def test_a_malformed_reference_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="image reference"):
        Reference(text)


def _spec(**kw: object) -> ServiceSpec:
    return ServiceSpec(name="db", pull="postgres:15", **kw)  # type: ignore[arg-type]


_META = {
    "entrypoint": ["docker-entrypoint.sh"],
    "cmd": ["postgres"],
    "env": {"PATH": "/usr/local/bin:/usr/bin", "PGDATA": "/var/lib/postgresql/data"},
    "workdir": "/",
    "healthcheck": {"Test": ["CMD-SHELL", "pg_isready -U postgres"], "Interval": 2_000_000_000,
                    "Retries": 7},
}  # fmt: skip


def test_the_images_config_applies_under_composes_keys_as_docker_applies_it() -> None:
    command, workdir, env, health = pulled_defaults(_spec(env={"PGDATA": "/data"}), _META)
    assert command == ("docker-entrypoint.sh", "postgres") and workdir == "/"
    assert env == {"PATH": "/usr/local/bin:/usr/bin", "PGDATA": "/data"}  # compose's wins
    assert health == HealthCheck(test=("/bin/sh", "-c", "pg_isready -U postgres"),
                                 interval_s=2.0, retries=7)  # fmt: skip
    # compose's command replaces Cmd only; its entrypoint drops Cmd unless command is given
    assert pulled_defaults(_spec(compose_command=("postgres", "-c", "fsync=off")), _META)[0] == (
        "docker-entrypoint.sh", "postgres", "-c", "fsync=off")  # fmt: skip
    assert pulled_defaults(_spec(compose_entrypoint=("sleep",)), _META)[0] == ("sleep",)
    both = _spec(compose_entrypoint=("sh", "-c"), compose_command=("exit 0",), workdir="/srv")
    assert pulled_defaults(both, _META)[:2] == (("sh", "-c", "exit 0"), "/srv")
    own = HealthCheck(test=("true",))
    assert pulled_defaults(_spec(healthcheck=own), _META)[3] == own
    assert pulled_defaults(_spec(), {**_META, "healthcheck": {"Test": ["NONE"]}})[3] is None
    assert pulled_defaults(_spec(healthcheck_disabled=True), _META)[3] is None
    with pytest.raises(TaskFormatError, match="postgres:15 has no command"):
        pulled_defaults(_spec(), {"entrypoint": [], "cmd": []})


def test_a_service_spec_has_one_image() -> None:
    with pytest.raises(ValueError, match="exactly one of image"):
        ServiceSpec(name="db")


def test_image_meta_reads_an_oci_config() -> None:
    config = {"config": {"Env": ["A=1", "B=x=y"], "WorkingDir": "/srv", "User": "999",
                         "Entrypoint": ["/e"], "Cmd": ["c"]}}  # fmt: skip
    meta = image_meta(Reference("team/app:2"), config, "sha256:" + "b" * 64)
    assert meta["env"] == {"A": "1", "B": "x=y"} and meta["workdir"] == "/srv"
    assert (meta["entrypoint"], meta["cmd"], meta["user"]) == (["/e"], ["c"], "999")
    assert any("USER 999 is recorded, not applied" in n for n in meta["notes"])
    assert meta["base"] == "pulled docker.io/team/app:2"


def test_a_registry_this_machine_cannot_reach_is_named() -> None:
    """``.invalid`` never resolves (RFC 6761): the same answer on every machine."""
    with pytest.raises(ImageBuildError, match="cannot reach the registry registry.invalid") as err:
        pull_image("registry.invalid/team/app:1")
    assert err.value.unreachable == "registry.invalid"


# ------------------------------------------------------------------ the real path
@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Debian's docker-registry on loopback, with one image pushed: busybox serving /www, made
    in two layers (the second deletes /www/secret), its config naming Cmd, Env and WorkingDir."""
    root = tmp_path_factory.mktemp("registry")
    with local_registry(root) as (address, umoci):
        layout, bundle = f"{root}/layout", root / "bundle"
        umoci("new", "--image", f"{layout}:web")
        umoci("unpack", "--image", f"{layout}:web", str(bundle))
        (bundle / "rootfs" / "bin").mkdir()
        (bundle / "rootfs" / "www").mkdir()
        shutil.copy("/bin/busybox", bundle / "rootfs" / "bin" / "busybox")
        (bundle / "rootfs" / "bin" / "sh").symlink_to("busybox")
        (bundle / "rootfs" / "www" / "answer").write_text("42\n")
        (bundle / "rootfs" / "www" / "secret").write_text("deleted in the next layer\n")
        umoci("repack", "--image", f"{layout}:web", str(bundle))
        shutil.rmtree(bundle)
        umoci("unpack", "--image", f"{layout}:web", str(bundle))
        (bundle / "rootfs" / "www" / "secret").unlink()
        umoci("repack", "--image", f"{layout}:web", str(bundle))
        cmd = "echo $GREETING > greeting; exec /bin/busybox httpd -f -p 8080 -h ."
        umoci("config", "--image", f"{layout}:web", "--config.workingdir", "/www",
              "--config.env", "GREETING=hello from the image", "--config.cmd", "/bin/sh",
              "--config.cmd", "-c", "--config.cmd", cmd)  # fmt: skip
        subprocess.run(["skopeo", "copy", "--quiet", "--dest-tls-verify=false",
                        f"oci:{layout}:web", f"docker://{address}/exploreval/web:1"],
                       check=True, capture_output=True)  # fmt: skip
        yield address


_COMPOSE = """services:
  client:
    build:
      dockerfile: Dockerfile
    image: ${{T_BENCH_TASK_DOCKER_CLIENT_IMAGE_NAME}}
    command: ["sh", "-c", "sleep infinity"]
    environment:
      - TEST_DIR=${{T_BENCH_TEST_DIR}}
    depends_on:
      web:
        condition: service_healthy
  web:
    image: {registry}/exploreval/web:1
    healthcheck:
      test: ["CMD", "/bin/busybox", "wget", "-q", "-O", "/dev/null", "http://127.0.0.1:8080/answer"]
      interval: 1s
      timeout: 5s
      retries: 20
"""


_FETCH_ANSWER = """python3 - <<'END'
from urllib.error import HTTPError
from urllib.request import urlopen
base = "http://web:8080/"
open("/app/answer.txt", "wb").write(urlopen(base + "answer").read())
print(urlopen(base + "greeting").read().decode())
try:
    code = urlopen(base + "secret").status
except HTTPError as error:
    code = error.code
print("secret:" + str(code))
END
"""


@pytest.mark.slow
async def test_a_service_pulled_from_a_registry_runs_beside_the_agent(
    registry: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The gold reads its answer from the pulled service by name; the image's Cmd, Env and
    WorkingDir ran; the file its second layer deleted is gone; untouched, the task fails."""
    from exploreval.suites.terminal._env import TerminalEnv
    from exploreval.suites.terminal._image_cache import _remove, list_cache
    from exploreval.suites.terminal._registry import pulled_key

    monkeypatch.setenv("EXPLOREVAL_INSECURE_REGISTRIES", registry)
    task = tmp_path / "answer-from-a-registry-service"
    shutil.copytree(SEAL / "tb1-answer", task)
    (task / "docker-compose.yaml").write_text(_COMPOSE.format(registry=registry))
    # python:3.11-slim has no curl (the harness's curl is not the agent's): the gold fetches
    # with the image's own Python, as it would under Docker
    keys = _FETCH_ANSWER
    results = {}
    for name, commands in (("gold", [{"keystrokes": keys, "duration": 10.0, "block": True}]),
                           ("untouched", [])):  # fmt: skip
        env = TerminalEnv(tasks=str(task), image="build", cast=False)
        try:
            obs, _ = await env.areset(seed=0)
            action = json.dumps({"commands": commands, "task_complete": True})
            obs, _, _, _, info = await env.astep(action)
            results[name] = (obs, info)
        finally:
            await env.aclose()
    obs, info = results["gold"]
    assert info["resolved"] is True, (obs, info["verification"]["reasons"])
    assert "hello from the image" in obs and "secret:404" in obs
    assert results["untouched"][1]["resolved"] is False
    entries, _ = list_cache()
    pulled = [e for e in entries if e.name == pulled_key(f"{registry}/exploreval/web:1")]
    assert pulled and pulled[0].note == f"pulled {registry}/exploreval/web:1"
    _remove(pulled[0])  # each run's registry has its own port: leave no entry behind


@pytest.mark.slow
async def test_an_agent_deleting_setpriv_changes_nothing_exec_holds() -> None:
    """No program of the image drops the capabilities exec's commands would hold (the host's
    perl does, before anything of the image runs): an agent that deletes its setpriv still gets
    an exec, and it still holds no capability."""
    from exploreval.suites.terminal._image import build_image
    from exploreval.suites.terminal._image_recipe import BuildRecipe
    from exploreval.suites.terminal._sandbox import Sandbox
    from exploreval.suites.terminal._sandbox_config import SandboxConfig
    from exploreval.suites.terminal._tasks import load_task

    task = load_task(SEAL / "tb1-answer", image="build")
    assert task.image is not None
    image = build_image(BuildRecipe(**task.image.model_dump()))
    config = SandboxConfig(image=image.rootfs, workdir=task.container_workdir, env=image.env,
                           record_cast=False, watch_files=False)  # fmt: skip
    async with await Sandbox.start(config) as sb:
        caps = await sb.exec(["grep", "CapEff", "/proc/self/status"])
        assert caps.returncode == 0 and caps.stdout.split()[-1] == "0" * 16
        gone = await sb.exec(["sh", "-c", "rm -f /usr/bin/setpriv /bin/setpriv; echo done"])
        assert "done" in gone.stdout
        assert sb.image_root is not None and not (sb.image_root / "usr/bin/setpriv").exists()
        after = await sb.exec(["grep", "CapEff", "/proc/self/status"])
        assert after.returncode == 0 and after.stdout.split()[-1] == "0" * 16
