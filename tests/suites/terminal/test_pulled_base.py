"""A Dockerfile's ``FROM`` (and ``COPY --from``) a registry image (issue 43: terminal-bench-core's
``create-bucket`` is ``FROM localstack/localstack:4.3``, ``conda-env-conflict-resolution`` copies
``/opt/conda`` from ``continuumio/miniconda3``). The real path: a Debian minbase, as slim as
``debian:bookworm-slim`` (no tmux, python3, curl or ps), made an image with umoci and served by
Debian's ``docker-registry`` on loopback; the task's image is built over it and the agent's pane
runs in it."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from exploreval.suites.terminal._bases import BaseRefused, map_base
from exploreval.suites.terminal._errors import TaskFormatError
from exploreval.suites.terminal._image_recipe import BuildRecipe, check_recipe

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
        subprocess.run(["skopeo", "copy", "--quiet", "--dest-tls-verify=false",
                        f"oci:{layout}:slim", f"docker://{address}/exploreval/slim:1"],
                       check=True, capture_output=True)  # fmt: skip
        yield address


@pytest.mark.slow
async def test_a_task_built_from_a_registry_image_runs_its_pane_there(
    slim_registry: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The image is pulled, the harness it lacks is added with its own apt, its Env and
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
        added = next(n for n in image.notes if n.startswith("added with the image's apt"))
        for package in ("tmux", "python3", "curl", "procps"):
            assert package in added
        assert "bash" not in added  # the minbase has it: only what is missing is added
        assert image.env["GREETING"] == "hello from the slim image"
        assert (image.rootfs / "pwd.txt").read_text().strip() == "/srv"
        assert (image.rootfs / "opt/debian_version").read_text().startswith("12.")
        config = SandboxConfig(image=image.rootfs, workdir="/app", env=image.env)
        async with await Sandbox.start(config) as sb:
            assert await sb.run_blocking("echo $GREETING > g; tmux -V >> g\n", timeout=20)
            seen = (await sb.exec(["cat", "/app/g"])).stdout
            assert seen.startswith("hello from the slim image\ntmux 3.3")
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
