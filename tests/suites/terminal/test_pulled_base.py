"""A Dockerfile's ``FROM`` (and ``COPY --from``) a registry image (issue 43: terminal-bench-core's
``create-bucket`` is ``FROM localstack/localstack:4.3``, ``conda-env-conflict-resolution`` copies
``/opt/conda`` from ``continuumio/miniconda3``). The real path: a Debian minbase, as slim as
``debian:bookworm-slim`` (no tmux, python3, curl or ps), made an image with umoci and served by
Debian's ``docker-registry`` on loopback; the task's image is built over it and the agent's pane
runs in it."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from exploreval.suites.terminal._bases import BaseRefused, map_base
from exploreval.suites.terminal._errors import TaskFormatError
from exploreval.suites.terminal._image_recipe import BuildRecipe
from exploreval.suites.terminal._recipe_check import check_recipe

from .conftest import local_registry


def test_an_image_no_release_maps_to_is_pulled_and_alpine_is_refused() -> None:
    base = map_base("localstack/localstack:4.3")
    assert base.pulled == "localstack/localstack:4.3" and base.distro == "pulled"
    assert "pulled from registry-1.docker.io" in base.note
    assert map_base("ghcr.io/team/app:1").key != map_base("ghcr.io/team/app:2").key
    for image in ("alpine:3.20", "docker.io/library/alpine", "python:3.12-alpine"):
        with pytest.raises(BaseRefused, match="Alpine"):
            map_base(image)
    with pytest.raises(BaseRefused, match="is not a repository name"):
        map_base("Team/App:1")


@pytest.mark.parametrize(
    "source", ["continuumio/miniconda3:25.1.1-2", "builder", "Not/A/Ref", "a//b"]
)
def test_copy_from_names_a_stage_or_an_image(tmp_path: Path, source: str) -> None:
    """A name no stage has is an image, as Docker reads it (``builder`` is Docker Hub's
    ``library/builder``): pulled at build; a name that is not a reference fails at load."""
    (tmp_path / "Dockerfile").write_text(f"FROM debian:12\nCOPY --from={source} /opt /opt\n")
    recipe = BuildRecipe(dockerfile=tmp_path / "Dockerfile", context=tmp_path)
    if source[0].isupper() or "//" in source:
        with pytest.raises(TaskFormatError, match="no earlier stage has that name, and image"):
            check_recipe(recipe)
    else:
        _, _, notes = check_recipe(recipe)
        assert any(f"--from={source}: pulled from its registry" in n for n in notes)


#: The same image served as Docker's official ``debian:bookworm-slim`` is on ECR's mirror.
OFFICIAL_ON_MIRROR = "docker/library/debian:bookworm-slim"


@pytest.fixture(scope="module")
def slim_registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A registry on loopback serving ``exploreval/slim:1``: Debian bookworm's minbase (bash,
    apt; no tmux, python3, curl or procps), its config naming Env and WorkingDir."""
    from exploreval.suites.terminal._base_system import _sources

    root = tmp_path_factory.mktemp("slim-registry")
    with local_registry(root) as (address, umoci):
        layout, bundle = f"{root}/layout", root / "bundle"
        umoci("new", "--image", f"{layout}:slim")
        umoci("unpack", "--image", f"{layout}:slim", str(bundle))
        shutil.rmtree(bundle / "rootfs")
        subprocess.run(["mmdebstrap", "--quiet", "--variant=minbase", "bookworm",
                        str(bundle / "rootfs"), *_sources(map_base("debian:12"))],
                       check=True, capture_output=True, timeout=900)  # fmt: skip
        umoci("repack", "--image", f"{layout}:slim", str(bundle))
        umoci("config", "--image", f"{layout}:slim", "--config.workingdir", "/srv",
              "--config.env", "GREETING=hello from the slim image",
              "--config.env", "PATH=/usr/local/bin:/usr/bin:/bin")  # fmt: skip
        for name in ("exploreval/slim:1", OFFICIAL_ON_MIRROR):
            subprocess.run(["skopeo", "copy", "--quiet", "--dest-tls-verify=false",
                            f"oci:{layout}:slim", f"docker://{address}/{name}"],
                           check=True, capture_output=True)  # fmt: skip
        yield address


@pytest.mark.slow
async def test_a_task_built_from_a_registry_image_runs_its_pane_there(
    slim_registry: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The image is pulled and keeps its own packages (the harness is beside it), its Env and
    WorkingDir start the stage (a RUN before any WORKDIR runs in /srv), ``COPY --from`` reads
    from it, and the agent's pane runs there with the image's environment."""
    from exploreval.suites.terminal._image import build_image
    from exploreval.suites.terminal._image_cache import _remove, list_cache
    from exploreval.suites.terminal._sandbox import Sandbox
    from exploreval.suites.terminal._sandbox_config import SandboxConfig

    monkeypatch.setenv("EXPLOREVAL_INSECURE_REGISTRIES", slim_registry)
    image_ref = f"{slim_registry}/exploreval/slim:1"
    (tmp_path / "Dockerfile").write_text(
        f"FROM {image_ref}\nRUN pwd > /pwd.txt\n"
        f"COPY --from={image_ref} /etc/debian_version /opt/debian_version\nWORKDIR /app\n"
    )
    recipe = BuildRecipe(dockerfile=tmp_path / "Dockerfile", context=tmp_path)
    _, bases, notes = check_recipe(recipe)
    assert bases[0].pulled == image_ref and f"pulled from {slim_registry.split(':')[0]}" in notes[0]
    try:
        image = await asyncio.to_thread(build_image, recipe)
        lacks = next(n for n in image.notes if n.startswith("the image has no "))
        for program in ("tmux", "python3", "curl", "ps"):
            assert program in lacks  # noted, never added: the harness is beside the image
        assert "bash" not in lacks
        status = (image.rootfs / "var/lib/dpkg/status").read_text()
        assert "Package: tmux\n" not in status and "Package: python3\n" not in status
        assert image.env["GREETING"] == "hello from the slim image"
        assert (image.rootfs / "pwd.txt").read_text().strip() == "/srv"
        assert (image.rootfs / "opt/debian_version").read_text().startswith("12.")
        config = SandboxConfig(image=image.rootfs, workdir="/app", env=image.env)
        async with await Sandbox.start(config) as sb:
            assert await sb.run_blocking("echo $GREETING > g; echo ${TMUX%%,*} >> g\n", timeout=20)
            seen = (await sb.exec(["cat", "/app/g"])).stdout
            assert seen == "hello from the slim image\n/tmp/.exploreval/tmux.sock\n"
    finally:
        entries, _ = list_cache()
        for entry in entries:  # each run's registry has its own port: leave no entry behind
            if slim_registry in entry.note or entry.name.startswith("pulled-exploreval-slim"):
                _remove(entry)


_DIGEST = "sha256:" + "ab" * 32


@pytest.mark.parametrize(
    "mirror",
    [
        "",
        "docker.io/library/",
        "public.ecr.aws/docker/library/",
        "mirror.gcr.io/library/",
        "registry-1.docker.io/library/",
    ],
)
def test_an_official_image_under_a_mirrors_name_maps_as_the_image_itself(mirror: str) -> None:
    """Harbor's collections pin Docker's official images on their ECR mirror
    (``FROM public.ecr.aws/docker/library/debian:bookworm-slim@sha256:...``): it is the same
    image as ``debian:bookworm-slim``, so it maps the same, never to a registry pull."""
    for image, (distro, release) in (
        ("debian:bookworm-slim", ("debian", "bookworm")),
        ("python:3.11-slim-bookworm", ("debian", "bookworm")),
        ("ubuntu:24.04", ("ubuntu", "noble")),
    ):
        base = map_base(f"{mirror}{image}@{_DIGEST}")
        assert (base.distro, base.release, base.pulled) == (distro, release, None)
        assert base.key == map_base(image).key
        assert "digest is not reproducible" in base.note


def test_an_image_that_only_looks_official_is_pulled_from_its_own_registry() -> None:
    """Another owner's ``debian`` on the same hosts is not Docker's: it is pulled."""
    for image in ("public.ecr.aws/someone/debian:12", "mirror.gcr.io/someone/python:3.11"):
        base = map_base(image)
        assert base.pulled == image and base.distro == "pulled"


def _digest(address: str, name: str) -> str:
    done = subprocess.run(["skopeo", "inspect", "--tls-verify=false", f"docker://{address}/{name}"],
                          check=True, capture_output=True, text=True)  # fmt: skip
    digest: str = json.loads(done.stdout)["Digest"]
    return digest


@pytest.mark.slow
def test_an_official_image_is_the_real_one_where_a_registry_serves_it(
    slim_registry: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``FROM public.ecr.aws/docker/library/debian:bookworm-slim@sha256:...`` builds on the image
    the registry serves at that digest (here ECR's name mirrored to the local registry), not on
    a rebuild; with no registry reachable, or when asked, it is emulated and says why; a digest
    the registry does not have fails the build naming it."""
    from exploreval.suites.terminal._base_source import choose_base, emulation_reason
    from exploreval.suites.terminal._image import build_image
    from exploreval.suites.terminal._image_cache import _remove, list_cache

    digest = _digest(slim_registry, OFFICIAL_ON_MIRROR)
    image = f"public.ecr.aws/docker/library/debian:bookworm-slim@{digest}"
    monkeypatch.setenv("EXPLOREVAL_INSECURE_REGISTRIES", slim_registry)
    # no mirror: this machine reaches none of the official image's registries
    monkeypatch.delenv("EXPLOREVAL_REGISTRY_MIRRORS", raising=False)
    emulated = choose_base(image)
    assert emulated.distro == "debian" and emulated.emulated is not None
    assert "cannot reach public.ecr.aws, registry-1.docker.io, mirror.gcr.io" in emulated.note
    monkeypatch.setenv("EXPLOREVAL_REGISTRY_MIRRORS", f"public.ecr.aws={slim_registry}")
    real = choose_base(image)
    assert real.pulled == image and real.emulated is None and "the real image" in real.note
    # the bare name is the same image: Docker Hub is tried first, then the mirrors
    assert choose_base("debian:bookworm-slim").pulled == (
        "public.ecr.aws/docker/library/debian:bookworm-slim"
    )
    monkeypatch.setenv("EXPLOREVAL_BASE_IMAGES", "emulate")
    assert "emulated as asked" in (choose_base(image).emulated or "")
    monkeypatch.setenv("EXPLOREVAL_BASE_IMAGES", "sometimes")
    with pytest.raises(BaseRefused, match="EXPLOREVAL_BASE_IMAGES='sometimes': expected"):
        choose_base(image)
    monkeypatch.delenv("EXPLOREVAL_BASE_IMAGES")
    (tmp_path / "Dockerfile").write_text(f"FROM {image}\nRUN echo $GREETING > /greeting\n")
    recipe = BuildRecipe(dockerfile=tmp_path / "Dockerfile", context=tmp_path)
    wrong = tmp_path / "wrong"
    wrong.mkdir()
    (wrong / "Dockerfile").write_text(f"FROM {image.replace(digest[-6:], '000000')}\n")
    try:
        built = build_image(recipe)
        assert (built.rootfs / "greeting").read_text() == "hello from the slim image\n"
        assert built.meta["emulated"] == [] and emulation_reason(built.rootfs) is None
        assert any("pulled from its mirror" in n for n in built.notes)
        with pytest.raises(Exception, match="000000"):
            build_image(BuildRecipe(dockerfile=wrong / "Dockerfile", context=wrong))
    finally:
        entries, _ = list_cache()
        for entry in entries:
            if slim_registry in entry.note or "docker-library-debian" in entry.name:
                _remove(entry)


def test_a_failed_verification_on_an_emulated_base_says_so(tmp_path: Path) -> None:
    from exploreval.suites.terminal._base_source import emulation_reason

    rootfs = tmp_path / "image" / "rootfs"
    rootfs.mkdir(parents=True)
    assert emulation_reason(rootfs) is None and emulation_reason(None) is None
    (rootfs.parent / "image.json").write_text(json.dumps({"emulated": []}))
    assert emulation_reason(rootfs) is None
    note = "debian:bookworm-slim -> debian bookworm [emulated: this machine cannot reach x]"
    (rootfs.parent / "image.json").write_text(json.dumps({"emulated": [note]}))
    reason = emulation_reason(rootfs)
    assert reason is not None and note in reason and "not the agent's" in reason
