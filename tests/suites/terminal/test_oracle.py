"""The gold solution as the task's own oracle runs it (issue 56): Harbor's whole ``solution/``
folder at ``/solution``, ``solve.sh`` run there from the work dir with ``DEBIAN_FRONTEND`` and
``[solution] env``; the folder carried by content, links never followed out of it."""

from __future__ import annotations

import base64
import gzip
import io
import json
import os
import shutil
import tarfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from exploreval.suites.terminal._agents_basic import GoldSolutionAgent
from exploreval.suites.terminal._errors import TaskFormatError
from exploreval.suites.terminal._oracle import (
    HARBOR_SOLUTION_DIR,
    gold_keystrokes,
    oracle_keystrokes,
    solution_archive,
    solution_env,
)
from exploreval.suites.terminal._tasks import load_task

HELLO = Path(__file__).parents[2] / "fixtures" / "terminal" / "real" / "harbor" / "hello-world"


def _members(archive: str) -> dict[str, tarfile.TarInfo]:
    data = gzip.decompress(base64.b64decode(archive))
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        return {m.name: m for m in tar.getmembers()}


def _unpack(archive: str, target: Path) -> None:
    data = gzip.decompress(base64.b64decode(archive))
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(target, filter="tar")


_NAMES = st.text(alphabet="abcxyz_-.", min_size=1, max_size=8).filter(
    lambda n: n not in {".", ".."}
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    files=st.dictionaries(
        st.lists(_NAMES, min_size=1, max_size=3).map(tuple),
        st.tuples(st.binary(max_size=300), st.booleans()),
        min_size=1,
        max_size=8,
    ),
    mtime=st.integers(min_value=0, max_value=2**31 - 1),
)
def test_the_folder_round_trips_byte_for_byte_and_mode_for_mode(
    tmp_path_factory: pytest.TempPathFactory,
    files: dict[tuple[str, ...], tuple[bytes, bool]],
    mtime: int,
) -> None:
    """Whatever the folder holds comes out the same (bytes, the executable bit), and the archive
    names the content only: the same files touched at another time make the same archive."""
    root = tmp_path_factory.mktemp("solution")
    written: dict[str, tuple[bytes, bool]] = {}
    for parts, (data, executable) in files.items():
        target = root.joinpath(*parts)
        if any(p.exists() and not p.is_dir() for p in target.parents if root in p.parents):
            continue  # a file where a directory would go
        if target.exists():
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        target.chmod(0o755 if executable else 0o644)
        written["/".join(parts)] = (data, executable)
    first, note = solution_archive(root)
    assert first is not None and note is None
    for path in root.rglob("*"):
        os.utime(path, (mtime, mtime))
    assert solution_archive(root)[0] == first
    out = tmp_path_factory.mktemp("out")
    _unpack(first, out)
    for rel, (data, executable) in written.items():
        assert (out / rel).read_bytes() == data
        assert bool((out / rel).stat().st_mode & 0o100) is executable


def test_a_link_is_carried_as_a_link_never_followed_out_of_the_folder(tmp_path: Path) -> None:
    """A gold's folder is the task's; the host is not. A link to a host file (or a directory
    outside) travels as the link itself: the bytes it points at never enter the archive."""
    secret = tmp_path / "host-secret"
    secret.write_text("the host's own key\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "deep.txt").write_text("also the host's\n")
    folder = tmp_path / "solution"
    folder.mkdir()
    (folder / "solve.sh").write_text("#!/bin/bash\ncat key\n")
    (folder / "key").symlink_to(secret)
    (folder / "tree").symlink_to(outside)
    os.mkfifo(folder / "pipe")
    archive, note = solution_archive(folder)
    assert archive is not None
    members = _members(archive)
    assert sorted(members) == ["key", "solve.sh", "tree"]
    assert members["key"].issym() and members["key"].linkname == str(secret)
    assert members["tree"].issym()
    raw = gzip.decompress(base64.b64decode(archive))
    assert b"the host's own key" not in raw and b"also the host's" not in raw
    assert note is not None and "pipe" in note


def test_solution_env_keeps_literals_and_never_carries_the_hosts_environment() -> None:
    env, notes = solution_env({"A": "1", "FLAG": True, "N": 3, "KEY": "${OPENAI_API_KEY}"}, HELLO)
    assert env == {"A": "1", "FLAG": "true", "N": "3"}
    assert len(notes) == 1 and "KEY" in notes[0] and "not carried" in notes[0]
    assert solution_env(None, HELLO) == ({}, [])
    for bad in ({"1BAD": "x"}, {"A": ["list"]}, "not a table"):
        with pytest.raises(TaskFormatError, match=r"task|\[solution\] env"):
            solution_env(bad, HELLO / "task.toml")


def _harbor_task_with_files(tmp_path: Path) -> Path:
    folder = tmp_path / "harbor-files"
    shutil.copytree(HELLO, folder)
    lib = folder / "solution" / "files" / "lib"
    lib.mkdir(parents=True)
    (lib / "hello.py").write_text('print("Hello, World!")\n')
    (folder / "solution" / "solve.sh").write_text(
        "#!/bin/bash\n"
        'here="$(cd "$(dirname "$0")" && pwd)"\n'
        'cp "$here/files/lib/hello.py" hello.py\n'
        'echo "$here|$PWD|$DEBIAN_FRONTEND|$GREETING|${TOKEN-unset}" > /tmp/oracle-env.txt\n'
    )
    with (folder / "task.toml").open("a") as toml:
        toml.write('\n[solution]\nenv = { GREETING = "hi there", TOKEN = "${SECRET_TOKEN}" }\n')
    return folder


def test_a_harbor_task_carries_its_solution_folder_and_env(tmp_path: Path) -> None:
    task = load_task(_harbor_task_with_files(tmp_path))
    assert task.solution is not None and "files/lib/hello.py" in task.solution
    assert task.solution_archive is not None
    assert sorted(_members(task.solution_archive)) == [
        "files", "files/lib", "files/lib/hello.py", "solve.sh"
    ]  # fmt: skip
    assert task.solution_env == {"GREETING": "hi there"}
    assert any("env.TOKEN" in note for note in task.dockerfile_notes)
    truth = task.oracle_truth()
    assert truth["solution_archive"] == task.solution_archive
    agent = GoldSolutionAgent()
    agent.start(_ctx(truth), "")
    keys = json.loads(agent.choose("", {}))["commands"][0]["keystrokes"]
    assert keys == gold_keystrokes(
        task.solution, archive=task.solution_archive, env=task.solution_env
    )
    assert f"{HARBOR_SOLUTION_DIR}/solve.sh" in keys and "SECRET_TOKEN" not in keys
    assert oracle_keystrokes(truth) == keys
    assert oracle_keystrokes({"solution": None}) is None and oracle_keystrokes({}) is None
    # a Terminal-Bench task, or a Harbor one loaded before this issue, runs its script alone
    assert f"{HARBOR_SOLUTION_DIR}/solve.sh" not in gold_keystrokes("echo hi\n")


def _ctx(truth: dict[str, object]):  # type: ignore[no-untyped-def]
    import numpy as np

    from exploreval.agents import EpisodeContext

    return EpisodeContext(
        env_id="terminal/sim", family="terminal", preset=None, seed=0, repeat=0,
        rng=np.random.default_rng(0), task_description="", ground_truth=truth,
    )  # fmt: skip


async def test_the_gold_reads_its_siblings_at_solution_and_resolves(tmp_path: Path) -> None:
    """Through the real env and verification: the gold copies ``files/lib/hello.py`` from its
    own folder (Harbor's layout) and the task resolves; ``solve.sh`` runs from the work dir with
    Harbor's environment. The same gold run as its script alone fails as before."""
    from exploreval.suites.terminal._env import TerminalEnv

    folder = _harbor_task_with_files(tmp_path)

    async def play(with_folder: bool) -> tuple[bool, str]:
        env = TerminalEnv(tasks=str(folder), cast=False)
        try:
            await env.areset(seed=0)
            truth = env.ground_truth()
            keys = gold_keystrokes(
                truth["solution"],
                archive=truth["solution_archive"] if with_folder else None,
                env=truth["solution_env"],
            )
            command = {"keystrokes": keys, "duration": 60, "block": True}
            _, _, _, _, info = await env.astep(json.dumps({"commands": [command]}))
            assert env.sandbox is not None
            seen = await env.sandbox.exec(["cat", "/tmp/oracle-env.txt"], timeout=10)
            _, _, _, _, info = await env.astep(json.dumps({"commands": [], "task_complete": True}))
        finally:
            await env.aclose()
        return bool(info.get("resolved")), seen.stdout

    resolved, seen = await play(True)
    assert resolved
    assert seen == "/solution|/workspace|noninteractive|hi there|unset\n"
    resolved_alone, _ = await play(False)
    assert not resolved_alone
