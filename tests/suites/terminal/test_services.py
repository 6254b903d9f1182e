"""Compose services running (issue 43): each its own sandbox from its own image, healthy before
the agent starts, on one private network where their names resolve, seen by the tests as the
tests expect, stopped with the episode, their output kept. Real images, real sandboxes."""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import textwrap
from pathlib import Path
from typing import Any

import pytest

from exploreval.suites.terminal._env import TerminalEnv
from exploreval.suites.terminal._errors import SandboxError

pytestmark = pytest.mark.slow

FIXTURE = Path(__file__).parents[2] / "fixtures" / "terminal" / "compose" / "tb1-api-service"


async def _episode(
    task: Path, keystrokes: str, artifacts: Path | None = None, **options: Any
) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """One episode: the keystrokes (blocking), then task_complete; (screen, info, truth)."""
    env = TerminalEnv(tasks=str(task), image="build", cast=False, **options)
    env.artifact_dir = artifacts
    try:
        await env.areset(seed=0)
        commands = [{"keystrokes": keystrokes, "duration": 60, "block": True}]
        obs, _, _, _, _ = await env.astep(json.dumps({"commands": commands}))
        _, _, _, _, info = await env.astep(json.dumps({"commands": [], "task_complete": True}))
    finally:
        await env.aclose()
    return obs, info, env.ground_truth()


async def test_the_gold_solution_reaches_the_service_and_the_tests_see_it(tmp_path: Path) -> None:
    gold = (FIXTURE / "solution.sh").read_text()
    obs, info, truth = await _episode(FIXTURE, f"bash <<'EOF'\n{gold}EOF\ncat /etc/hosts\n",
                                      artifacts=tmp_path)  # fmt: skip
    verification = info["verification"]
    assert verification["resolved"] is True, verification
    assert {t["outcome"] for t in verification["tests"]} == {"passed"}
    assert re.search(r"127.0.0.1\s+localhost api inventory seed", obs)  # names resolve
    services = truth["services"]
    assert services["api"]["healthy_s"] >= 1.0  # the server warms up for a second first
    assert services["api"]["probes"] >= 2  # so the first probe failed, a later one passed
    assert services["seed"]["exit_code"] == 0 and "healthy_s" not in services["seed"]
    log = (tmp_path / "services" / "api.log").read_text()
    assert services["api"]["log"] == "services/api.log"
    assert "seeded a code of 16 characters" in log  # the seed job ran before the agent
    assert log.count("GET /code") == 2  # once by the agent, once by the tests
    assert "POST /seed" in (tmp_path / "services" / "api.log").read_text()


async def test_without_the_service_call_the_tests_fail() -> None:
    """A code written in advance cannot match: the seed job makes a new one each episode."""
    _, info, _ = await _episode(FIXTURE, "echo 0123456789abcdef > /app/code.txt\n")
    assert info["verification"]["resolved"] is False
    outcomes = {t["name"].split("::")[1]: t["outcome"] for t in info["verification"]["tests"]}
    assert outcomes == {"test_code_matches_the_running_api": "failed",
                        "test_the_api_answers_to_its_hostname_too": "passed"}  # fmt: skip


async def test_the_agent_shares_the_network_but_nothing_else_of_the_services() -> None:
    """Its own processes only; no capability on the network; low ports open (as a container's
    root); the services' ports are not counted as the agent's servers."""
    script = textwrap.dedent("""\
        import glob, socket
        print("PROCS", sorted({open(p).read().strip() for p in glob.glob("/proc/[0-9]*/comm")}))
        try:
            socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
            print("RAW", "allowed")
        except PermissionError:
            print("RAW", "refused")
        socket.socket().bind(("0.0.0.0", 80))
        print("BOUND", 80)
        socket.create_connection(("api", 8080))
        print("REACHED", "api")
        """)  # fmt: skip
    env = TerminalEnv(tasks=str(FIXTURE), image="build", cast=False)
    try:
        await env.areset(seed=0)
        command = {"keystrokes": f"python3 - <<'EOF'\n{script}EOF\n", "duration": 30,
                   "block": True}  # fmt: skip
        obs, _, _, _, _ = await env.astep(json.dumps({"commands": [command]}))
        assert env.sandbox is not None and env._services is not None
        assert 8080 in env._services.ports()
        assert 8080 not in env.sandbox.listening_ports()  # the api's, not the agent's
    finally:
        await env.aclose()
    printed = dict(line.split(" ", 1) for line in obs.splitlines()
                   if line.split(" ", 1)[0] in ("PROCS", "RAW", "BOUND", "REACHED"))  # fmt: skip
    assert printed["BOUND"] == "80" and printed["REACHED"] == "api"
    assert printed["RAW"] == "refused"  # no capability on the shared network
    procs = set(ast.literal_eval(printed["PROCS"]))
    assert {"bash", "python3"} <= procs
    # the services' wrappers (sh) and the network's holder (sleep) are in other PID namespaces
    assert not procs & {"sh", "sleep"}, procs


def _ancestors(pid: int) -> list[int]:
    """``pid``'s parent, its parent... up to init (from ``/proc/PID/stat``)."""
    chain = []
    while pid > 1:
        stat = Path(f"/proc/{pid}/stat").read_text()
        pid = int(stat.rsplit(")", 1)[1].split()[1])
        chain.append(pid)
    return chain


async def test_an_unhealthy_service_stops_the_episode_with_its_reason_and_leaves_nothing(
    tmp_path: Path,
) -> None:
    task = tmp_path / "broken"
    shutil.copytree(FIXTURE, task)
    compose = (task / "docker-compose.yaml").read_text()
    compose = compose.replace("interval: 1s", "interval: 0.2s").replace("retries: 30", "retries: 2")
    compose = compose.replace(
        "urlopen('http://localhost:8080/health')", "urlopen('http://localhost:9/x')"
    )
    (task / "docker-compose.yaml").write_text(compose)
    env = TerminalEnv(tasks=str(task), image="build", cast=False)
    before = set(os.listdir("/proc"))
    with pytest.raises(SandboxError) as caught:
        await env.areset(seed=0)
    await env.aclose()
    message = str(caught.value)
    assert "service 'api' was not healthy within" in message
    assert "Connection refused" in message and "listening on 8080" in message  # probe, log
    assert env.sandbox is None and env._services is None
    # new processes of this test's line only: one under a process that is not an ancestor of
    # this test (someone's shell on the same machine) is not ours; a process of ours that
    # leaked and was reparented to init or a subreaper above us still counts
    ours = {1, os.getpid(), *_ancestors(os.getpid())}
    foreign = {int(p) for p in before if p.isdigit()} - ours
    names = []
    for pid in (int(p) for p in set(os.listdir("/proc")) - before if p.isdigit()):
        try:
            if foreign.intersection(_ancestors(pid)):
                continue
            names.append(Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].decode())
        except OSError:
            continue
    assert not [n for n in names if n.endswith(("bwrap", "sleep", "python3"))], names
