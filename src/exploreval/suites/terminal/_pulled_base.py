"""A Dockerfile's ``FROM`` a registry image (``localstack/localstack:4.3``, an application's own
image): pulled as Docker pulls it (:mod:`._registry`), then made into a base the agent can work in.

The harness (the pane's tmux; for verification a Python with pytest, curl and ps) is beside the
image, never added to it (:mod:`._harness_tree`): the image keeps its own packages, whatever its
distribution or package manager. It needs only a shell (``/bin/sh``) for the agent's pane; one
without is refused at build time. The host's apt options, pip index and CA files are carried in
as on any built base (:func:`._base_system.base_conventions`), and Terminal-Bench's test tools
are provisioned as on any base.

The image's config gives the stage its starting ``Env`` and ``WorkingDir``, as in Docker. The
result is a base cache entry (``bases/pulled-<name>-<key>``) keyed by the pulled manifest's
digest, so a re-pulled tag that moved makes a new base; the images built over it share its files
like any base's (:func:`._image_cache.share_with_base`).
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path
from typing import Any

from exploreval.suites.terminal._base_system import (
    TOOLS_NOTE,
    base_conventions,
    ensure_entry,
)
from exploreval.suites.terminal._bases import Base
from exploreval.suites.terminal._host_settings import host_apt_options, host_cas
from exploreval.suites.terminal._image_cache import images_root
from exploreval.suites.terminal._image_recipe import (
    BUILD_PATH,
    BUILDER_VERSION,
    PYTEST_VERSION,
    UV_VERSION,
    BuildLog,
    ImageBuildError,
)
from exploreval.suites.terminal._registry import pull_image
from exploreval.suites.terminal._root_run import run_in_root
from exploreval.suites.terminal._test_tools import provision_test_tools

_CONFIG = "pulled.json"
#: The programs the agent's pane would reach for that the image may lack (noted, not added).
_COMMON_TOOLS = ("bash", "python3", "curl", "ps", "tmux")
_SURVEY = "\n".join([
    *(f"command -v {tool} >/dev/null 2>&1 || echo 'lacks {tool}'" for tool in _COMMON_TOOLS),
    "grep -s '^ID=' /etc/os-release /usr/lib/os-release | head -n 1 || true",
])  # fmt: skip


def ensure_pulled_base(base: Base, log: BuildLog | None, *, tools: bool) -> Path:
    """The root file system of ``base.pulled`` with the harness added; pulled and made once."""
    assert base.pulled is not None
    pulled = pull_image(base.pulled)
    key = hashlib.sha256(
        json.dumps(
            [
                BUILDER_VERSION,
                base.key,
                pulled.meta.get("manifest_digest"),
                host_apt_options(),
                [p.read_text(errors="replace") for p in host_cas()],
                [UV_VERSION, PYTEST_VERSION] if tools else None,
            ]
        ).encode()
    ).hexdigest()[:16]
    target = images_root() / "bases" / f"pulled-{base.release}-{key}"[:120]
    return ensure_entry(
        target, lambda: _make(base, pulled.rootfs, pulled.meta, target, log, tools), base.note
    )


def pulled_config(base_root: Path) -> dict[str, Any]:
    """What a stage over a pulled base starts from: ``env``, ``workdir`` and ``notes``."""
    config: dict[str, Any] = json.loads((base_root.parent / _CONFIG).read_text())
    return config


def _make(
    base: Base,
    image_root: Path,
    meta: dict[str, Any],
    target: Path,
    log: BuildLog | None,
    tools: bool,
) -> None:
    rootfs = target / "rootfs"
    if log is not None:
        log.write(f"$ cp -a {image_root} {rootfs}\n")
    subprocess.run(["cp", "-a", "--reflink=auto", str(image_root), str(rootfs)], check=True)
    env = {"PATH": BUILD_PATH, "HOME": "/root", "DEBIAN_FRONTEND": "noninteractive"}
    try:
        survey = run_in_root(rootfs, ["/bin/sh", "-c", _SURVEY], env=env, binds=[],
                             network=False, what=f"surveying {base.pulled}", log=log,
                             scratch=target, timeout=120)  # fmt: skip
    except ImageBuildError as exc:
        raise ImageBuildError(
            f"FROM {base.pulled}: the image cannot run a shell (/bin/sh), which the agent's "
            f"pane needs: {str(exc)[-300:]}"
        ) from None
    lacks = [line.split(" ", 1)[1] for line in survey.splitlines() if line.startswith("lacks ")]
    system = next((ln.split("=", 1)[1].strip('"') for ln in survey.splitlines() if "ID=" in ln),
                  "unknown")  # fmt: skip
    notes = [f"pulled {base.pulled} ({meta.get('manifest_digest', '')[:19]}, {system})"]
    if " -> the real image" in base.note:  # an official image, not emulated (._base_source)
        notes.append(base.note)
    notes.extend(n for n in meta.get("notes", []) if not n.startswith("pulled "))  # mirror, USER
    if lacks:
        notes.append(
            f"the image has no {', '.join(lacks)}: left so (the harness's own are "
            "beside the image, not on the agent's PATH)"
        )
    base_conventions(rootfs, base)
    if tools:
        note = provision_test_tools(rootfs, target, log)
        if note:
            (target / TOOLS_NOTE).write_text(note + "\n")
    config = {
        "env": {"PATH": BUILD_PATH, **meta.get("env", {})},
        "workdir": meta.get("workdir") or "/",
        "notes": notes,
    }
    (target / _CONFIG).write_text(json.dumps(config, indent=1))
