"""Several users in a task's root (issue 43): ``useradd``, ``su`` and ``chown`` to another user
work in a task image's sandbox and in its verification, from a subordinate range that is no user
of this machine, under one process cap; the host system keeps one uid (docs/terminal.md,
"Users"). Real images, real sandboxes."""

from __future__ import annotations

import json
import os
import pwd
from pathlib import Path
from typing import Any

import pytest

from exploreval.suites.terminal._env import TerminalEnv
from exploreval.suites.terminal._image import build_image
from exploreval.suites.terminal._image_recipe import BuildRecipe
from exploreval.suites.terminal._limits import SUBID_BASE, SUBID_COUNT, UID_SLOTS, Limits
from exploreval.suites.terminal._sandbox import Sandbox
from exploreval.suites.terminal._sandbox_config import SandboxConfig

pytestmark = pytest.mark.slow

FIXTURES = Path(__file__).parents[2] / "fixtures" / "terminal"
DEPLOY = FIXTURES / "users" / "tb1-deploy-user"
ANSWER = FIXTURES / "seal" / "tb1-answer"


async def _play(task: Path, keystrokes: str, **options: Any) -> dict[str, Any]:
    env = TerminalEnv(tasks=str(task), image="build", cast=False, **options)
    try:
        await env.areset(seed=0)
        commands = [{"keystrokes": keystrokes, "duration": 60, "block": True}] if keystrokes else []
        _, _, _, _, info = await env.astep(
            json.dumps({"commands": commands, "task_complete": True})
        )
    finally:
        await env.aclose()
    verification = info["verification"]
    assert isinstance(verification, dict)
    return verification


async def test_a_task_that_adds_a_user_resolves_and_the_tests_see_its_owners() -> None:
    gold = (DEPLOY / "solution.sh").read_text()
    verification = await _play(DEPLOY, f"bash <<'EOF'\n{gold}EOF\n")
    outcomes = {t["name"].split("::")[1]: t["outcome"] for t in verification["tests"]}
    assert verification["resolved"] is True, (outcomes, verification.get("output", "")[-800:])
    assert set(outcomes.values()) == {"passed"} and len(outcomes) == 3


async def test_with_one_user_the_same_solution_cannot_work() -> None:
    """The control: ``users=one`` (the sandbox before this issue) refuses what the gold does."""
    gold = (DEPLOY / "solution.sh").read_text()
    verification = await _play(DEPLOY, f"bash <<'EOF'\n{gold}EOF\n", users="one")
    assert verification["resolved"] is False
    assert {t["outcome"] for t in verification["tests"]} == {"failed"}


async def test_other_users_are_a_subordinate_range_no_host_user_has() -> None:
    recipe = BuildRecipe(dockerfile=ANSWER / "Dockerfile", context=ANSWER)
    image = await _build(recipe)
    sb = await Sandbox.start(SandboxConfig(image=image.rootfs, users="many", env=image.env))
    try:
        assert sb.many_users is not None
        sub_base = sb.many_users.sub_base
        assert SUBID_BASE <= sub_base < SUBID_BASE + UID_SLOTS * SUBID_COUNT
        shadow = await sb.exec(["stat", "-c", "%u %g", "/etc/shadow"])
        assert shadow.stdout.split() == ["0", "42"]  # the image's group shadow, kept
        added = await sb.exec(["bash", "-c", "useradd -u 1234 bob && (su bob -c 'sleep 60' >/dev/null 2>&1 &) && "
                               "sleep 0.5; ps -o user= -C sleep 2>/dev/null || true"])  # fmt: skip
        assert added.returncode == 0, added.stderr
        host_uids = set()
        for entry in os.scandir("/proc"):
            if entry.name.isdigit():
                try:
                    host_uids.add(os.stat(entry.path).st_uid)
                except OSError:
                    continue
        assert sub_base + 1234 in host_uids  # bob's sleep, as the host sees it
        with pytest.raises(KeyError):
            pwd.getpwuid(sub_base + 1234)  # no user of this machine
        caps = await sb.exec(["grep", "CapEff", "/proc/self/status"])
        effective = int(caps.stdout.split()[1], 16)
        assert effective & (1 << 7) and effective & (1 << 0)  # CAP_SETUID, CAP_CHOWN
        assert not effective & (1 << 21)  # never CAP_SYS_ADMIN: no mount, no remount
        remount = await sb.exec(["mount", "-o", "remount,rw", "/proc"])
        assert remount.returncode != 0
    finally:
        await sb.close()
    left = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                owner = os.stat(entry.path).st_uid
            except OSError:
                continue
            if sub_base <= owner < sub_base + SUBID_COUNT:
                left.append(entry.name)
    assert not left  # closing killed every user's processes


async def test_one_process_cap_holds_across_every_user() -> None:
    """A fork loop that changes uid in every child still stops at the sandbox's nproc: the
    kernel charges the namespace's processes to its creator (ucounts)."""
    recipe = BuildRecipe(dockerfile=ANSWER / "Dockerfile", context=ANSWER)
    image = await _build(recipe)
    config = SandboxConfig(image=image.rootfs, users="many", env=image.env, limits=Limits(nproc=40))
    program = (
        "import os, time\nok = 0\nfor i in range(200):\n    try:\n        pid = os.fork()\n"
        "    except OSError:\n        break\n    if pid == 0:\n        os.setgid(2000 + i)\n"
        "        os.setuid(2000 + i)\n        time.sleep(30)\n        os._exit(0)\n    ok += 1\n"
        "print('forked', ok)\n"
    )
    sb = await Sandbox.start(config)
    try:
        result = await sb.exec(["python3", "-c", program], timeout=60)
    finally:
        await sb.close()
    forked = int(result.stdout.split()[1])
    assert 5 < forked < 40, result.stdout


async def _build(recipe: BuildRecipe) -> Any:
    import asyncio

    return await asyncio.to_thread(build_image, recipe)


def test_many_users_needs_an_image() -> None:
    with pytest.raises(ValueError, match="users='many' needs an image"):
        SandboxConfig(users="many")
    with pytest.raises(ValueError, match="users=many needs a task image"):
        TerminalEnv(users="many")._users(False)
    with pytest.raises(ValueError, match=r"users='everyone': expected one of \('one', 'many'\)"):
        TerminalEnv(users="everyone")
