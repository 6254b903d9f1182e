"""Terminal-Bench's test tools, put in an image before its Dockerfile runs.

``setup-uv-pytest.sh`` downloads uv from astral.sh, which a sandbox may not reach: uv (from the
package index) goes to ``/root/.local/bin`` as Astral's installer would put it, and a uv cache
holding pytest at ``/opt/exploreval-uv-cache``, so the script works offline as it would online.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from exploreval.suites.terminal._harness_tree import HARNESS_ROOT, ensure_harness_tree
from exploreval.suites.terminal._host_settings import (
    trust_env,
)
from exploreval.suites.terminal._image_cache import (
    images_root,
)
from exploreval.suites.terminal._image_recipe import (
    BUILD_PATH,
    PYCACHE_MIRROR,
    PYTEST_VERSION,
    UV_CACHE,
    UV_VERSION,
    BuildLog,
    ImageBuildError,
)
from exploreval.suites.terminal._reachability import unreachable_host
from exploreval.suites.terminal._root_run import run_in_root
from exploreval.suites.terminal._sandbox_config import SHIM_DIR


def fetch_uv(version: str = UV_VERSION) -> Path:
    """The uv binary of ``version`` (and uvx), from the package index, cached."""
    target = images_root() / "tools" / f"uv-{version}"
    if (target / "uv").is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        done = subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
             "--platform", "manylinux_2_17_x86_64", "--python-version", "3.11",
             f"uv=={version}", "-d", tmp],  # fmt: skip
            capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        wheels = list(Path(tmp).glob("uv-*.whl"))
        if done.returncode != 0 or not wheels:
            raise ImageBuildError(
                f"uv {version} could not be downloaded from the package index: "
                f"{done.stderr.strip()[-500:]}",
                unreachable=unreachable_host(done.stderr),
            )
        out = Path(tmp) / "out"
        out.mkdir()
        with zipfile.ZipFile(wheels[0]) as wheel:
            for name in wheel.namelist():
                base = name.rsplit("/", 1)[-1]
                if ".data/scripts/" in name and base in ("uv", "uvx"):
                    (out / base).write_bytes(wheel.read(name))
                    (out / base).chmod(0o755)
        if not (out / "uv").is_file():
            raise ImageBuildError(f"the uv {version} wheel holds no uv binary")
        with contextlib.suppress(OSError):
            os.rename(out, target)
    return target


def mirror_pycache(rootfs: Path) -> int:
    """Hard-link every ``__pycache__/*.pyc`` of the built image into :data:`PYCACHE_MIRROR`, laid
    out as Python's ``PYTHONPYCACHEPREFIX`` expects (``<prefix>/<source dir>/<name>.pyc``).
    Python checks each against its source's mtime and size, so a source the agent later changes
    is compiled afresh. Returns how many files were mirrored."""
    mirror = rootfs / PYCACHE_MIRROR.lstrip("/")
    skip = {rootfs / d for d in ("proc", "sys", "dev", "tmp")} | {mirror}
    count = 0
    for dirpath, dirnames, filenames in os.walk(rootfs):
        here = Path(dirpath)
        dirnames[:] = [d for d in dirnames
                       if here / d not in skip and not os.path.islink(here / d)]  # fmt: skip
        if here.name != "__pycache__":
            continue
        source_dir = here.parent.relative_to(rootfs)
        for name in filenames:
            if not name.endswith(".pyc") or os.path.islink(here / name):
                continue
            target = mirror / source_dir / name
            target.parent.mkdir(parents=True, exist_ok=True)
            with contextlib.suppress(FileExistsError):
                os.link(here / name, target)
                count += 1
    if mirror.is_dir():
        for dirpath, _dirs, _files in os.walk(mirror):
            os.chmod(dirpath, 0o755)
    return count


#: What the provisioning script prints when pytest could not be cached.
_NO_PYTEST = "exploreval: pytest was not cached"


def provision_test_tools(rootfs: Path, scratch: Path, log: BuildLog | None) -> str | None:
    """Terminal-Bench's test tools: uv where Astral's installer puts it (with its ``env`` file)
    and a uv cache holding pytest, so its setup-uv-pytest.sh works without downloading uv.

    Returns a note when pytest cannot be cached: its pinned release needs a newer Python than
    the image's (pytest 8.4 needs 3.9; focal's is 3.8), or uv wants a Python of its own from a
    host this machine cannot reach (bullseye's 3.9). The image is still built, as Docker would
    build it: the task's own test setup then has to do what this step could not, and fails or
    names the host as it would at test time."""
    uv = fetch_uv()
    script = "\n".join([
        "set -e",
        "mkdir -p /root/.local/bin",
        "cp /.exploreval-uv/uv /.exploreval-uv/uvx /root/.local/bin/",
        "cat > /root/.local/bin/env <<'EOF'",
        "#!/bin/sh",
        "# uv's installer puts this here: it adds uv to PATH",
        'case ":${PATH}:" in *:"$HOME/.local/bin":*) ;; *) export PATH="$HOME/.local/bin:$PATH" ;; esac',
        'case ":${PATH}:" in *:"/root/.local/bin":*) ;; *) export PATH="/root/.local/bin:$PATH" ;; esac',
        "EOF",
        f"mkdir -p {UV_CACHE}",
        "work=$(mktemp -d)",
        f"(cd $work && export UV_CACHE_DIR={UV_CACHE} && "
        "/root/.local/bin/uv init --quiet --no-workspace . >/dev/null && "
        f"/root/.local/bin/uv add --quiet pytest=={PYTEST_VERSION}) 2>&1 | tail -n 12",
        f"[ -e $work/uv.lock ] && grep -q pytest $work/uv.lock || echo '{_NO_PYTEST}'",
        "rm -rf $work",
        f"chmod -R a+rX {UV_CACHE}",
    ])  # fmt: skip
    # the harness's Python last on PATH, as at verification: uv resolves pytest for the image's
    # own Python, or for the harness's where the image has none (not a download it cannot make)
    tree = ensure_harness_tree()
    env = {"PATH": f"{BUILD_PATH}:{SHIM_DIR}", "HOME": "/root", **trust_env()}
    binds = [(uv, "/.exploreval-uv"), (tree, HARNESS_ROOT), (tree / "bin", SHIM_DIR)]
    try:
        output = run_in_root(
            rootfs,
            ["/bin/sh", "-c", script],
            env=env,
            binds=binds,
            network=True,
            what="provisioning the test tools (uv, pytest)",
            log=log,
            scratch=scratch,
            timeout=900,
        )
    finally:
        for mountpoint in ("/.exploreval-uv", HARNESS_ROOT, SHIM_DIR, "/opt/exploreval"):
            with contextlib.suppress(OSError):  # bwrap's empty mount points, not the image's
                (rootfs / mountpoint.lstrip("/")).rmdir()
    if _NO_PYTEST not in output:
        return None
    lines = output.split(_NO_PYTEST)[0].strip().splitlines()
    cause = next((ln.strip() for ln in lines if "×" in ln or "error" in ln.lower()), "")
    host = unreachable_host(output)
    why = f"uv needs {host}, which this machine cannot reach" if host else cause or "see the log"
    return (f"pytest {PYTEST_VERSION} is not in the uv cache ({why[:300]}): the task's own test "
            "setup has to install it, as it would without exploreval's provisioning")  # fmt: skip
