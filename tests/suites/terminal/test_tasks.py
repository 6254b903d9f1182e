"""Task loaders (Terminal-Bench 1, Harbor) on real task folders, and the Dockerfile subset."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from exploreval.suites.terminal._bwrap_check import check_task
from exploreval.suites.terminal._errors import TaskFormatError
from exploreval.suites.terminal._tasks import OFFLINE_PYTEST, load_task, load_tasks

REAL = Path(__file__).parents[2] / "fixtures" / "terminal" / "real"


def _tree(path: Path) -> str:
    digest = hashlib.sha256()
    for p in sorted(path.rglob("*")):
        digest.update(str(p.relative_to(path)).encode())
        if p.is_file():
            digest.update(p.read_bytes())
    return digest.hexdigest()


def test_tb1_hello_world_loads_and_runs():
    folder = REAL / "tb1" / "hello-world"
    before = _tree(folder)
    task = load_task(folder)
    assert task.id == "hello-world" and task.source_layout == "terminal-bench-1"
    assert task.instruction.startswith('Create a file called /app/hello.txt. Write "Hello, world!"')
    assert (task.difficulty, task.category, task.tags) == (
        "easy",
        "file-operations",
        ("file-operations",),
    )
    assert (task.agent_timeout_s, task.test_timeout_s) == (900.0, 180.0)
    assert task.solution == '#!/bin/bash\n\necho "Hello, world!" > /app/hello.txt\n'
    assert task.test_command == OFFLINE_PYTEST
    assert any("no run-tests.sh" in n for n in task.dockerfile_notes)
    assert any("no Dockerfile" in n for n in task.dockerfile_notes)
    assert check_task(task, task.solution).passed
    assert not check_task(task, None).passed
    assert _tree(folder) == before  # loading and checking never write into the task folder


def test_tb1_network_run_tests_is_replaced_with_a_note():
    task = load_task(REAL / "tb1" / "climate-data")
    assert task.difficulty == "medium" and task.category == "scientific-computing"
    assert task.tags == ("climate", "data-processing", "environment", "csv")
    assert task.instruction.startswith("Climate Data Analyzer")
    assert task.solution is None
    assert task.test_command == OFFLINE_PYTEST
    note = next(n for n in task.dockerfile_notes if "run-tests.sh" in n)
    assert "line 7 (apt-get" in note and "needs the network" in note


def test_harbor_hello_world_loads_and_runs():
    task = load_task(REAL / "harbor" / "hello-world")
    assert task.source_layout == "harbor" and task.parser == "reward_file"
    assert task.instruction.startswith("# Task: Hello World")
    assert (task.agent_timeout_s, task.test_timeout_s, task.cpus, task.memory_mb) == (
        120.0,
        60.0,
        1.0,
        512,
    )
    assert task.container_workdir == "/workspace"
    assert task.test_command == "bash /tests/test.sh"
    notes = " | ".join(task.dockerfile_notes)
    assert "FROM ignored" in notes and "WORKDIR /workspace honoured" in notes
    assert check_task(task, task.solution).passed
    assert not check_task(task, None).passed


def test_load_tasks_reads_a_folder_of_tasks():
    tasks = load_tasks(REAL / "tb1")
    assert [t.id for t in tasks] == ["climate-data", "hello-world"]


def _task(tmp_path: Path, dockerfile: str, files: dict[str, str] | None = None) -> Path:
    folder = tmp_path / "t1"
    (folder / "tests").mkdir(parents=True)
    (folder / "task.yaml").write_text("instruction: do it\ndifficulty: easy\n")
    (folder / "tests" / "test_outputs.py").write_text("def test_x():\n    assert False\n")
    (folder / "Dockerfile").write_text(dockerfile)
    for rel, text in (files or {}).items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text)
    return folder


def test_dockerfile_subset_is_honoured(tmp_path):
    folder = _task(
        tmp_path,
        "FROM ubuntu:24.04\nWORKDIR /srv\nENV MODE=fast LEVEL=3\nENV GREETING hello world\n"
        "COPY data/ /srv/data/\nCOPY one.txt ./renamed.txt\n"
        "RUN apt-get update && apt-get install -y git && rm -rf /var/lib/apt/lists/*\n"
        "RUN pip install pytest\nRUN mkdir -p /srv/out/logs\n"
        "RUN printf built > /srv/built.txt && git init -q /srv/repo\n"
        'CMD ["bash"]\n',
        {"data/a.csv": "x\n", "one.txt": "1\n"},
    )
    task = load_task(folder)
    assert task.container_workdir == "/srv"
    assert task.env["MODE"] == "fast" and task.env["LEVEL"] == "3"
    assert task.env["GREETING"] == "hello world"
    assert (task.workdir / "data" / "a.csv").read_text() == "x\n"
    assert (task.workdir / "renamed.txt").read_text() == "1\n"
    assert (task.workdir / "out" / "logs").is_dir()
    assert (task.workdir / "built.txt").read_text() == "built"  # RUN executed offline
    assert (task.workdir / "repo" / ".git").is_dir()
    assert not (task.workdir / "task.yaml").exists()
    notes = " | ".join(task.dockerfile_notes)
    assert "apt install already satisfied" in notes and "pip install already satisfied" in notes


@pytest.mark.parametrize(
    ("dockerfile", "message"),
    [
        (
            "FROM x\nWORKDIR /app\nCOPY a.txt /etc/a.txt\n",
            r"Dockerfile:3: COPY destination /etc/a.txt lies outside",
        ),
        (
            "FROM x\nRUN pip install surely-not-installed-pkg-4821\n",
            r"Dockerfile:2: RUN installs pip packages not present.*surely-not-installed-pkg-4821",
        ),
        (
            "FROM x\nRUN apt-get install -y surely-not-a-deb-4821\n",
            r"Dockerfile:2: RUN installs apt packages.*surely-not-a-deb-4821",
        ),
        ("FROM x\nADD https://example.org/x.tgz /app/\n", r"Dockerfile:2: ADD of a URL"),
        (
            "FROM x\nRUN curl -fsS https://example.org > /app/x\n",
            r"Dockerfile:2: RUN failed offline in the sandbox",
        ),
        ("FROM x\nFROBNICATE now\n", r"Dockerfile:2: unknown instruction FROBNICATE"),
    ],
)
def test_dockerfile_refusals_name_the_line(tmp_path, dockerfile, message):
    folder = _task(tmp_path, dockerfile, {"a.txt": "a\n"})
    with pytest.raises(TaskFormatError, match=message):
        load_task(folder)


def test_non_strict_loads_with_a_warning(tmp_path):
    folder = _task(tmp_path, "FROM x\nRUN curl -fsS https://example.org > /app/x\n")
    task = load_task(folder, strict=False)
    assert any("WARNING" in n for n in task.dockerfile_notes)


@pytest.mark.parametrize(
    ("yaml_text", "message"),
    [
        ("instruction: [unclosed\n", "task.yaml: not valid YAML"),
        ("difficulty: easy\n", "field 'instruction' must be a non-empty string"),
        ("instruction: x\ndifficulty: trivial\n", "field 'difficulty' must be one of"),
        (
            "instruction: x\nmax_agent_timeout_sec: -1\n",
            "'max_agent_timeout_sec' must be a positive number",
        ),
        ("instruction: x\nparser_name: swebench\n", "only 'pytest' is supported"),
    ],
)
def test_bad_task_yaml_is_named(tmp_path, yaml_text, message):
    folder = tmp_path / "bad"
    folder.mkdir()
    (folder / "task.yaml").write_text(yaml_text)
    with pytest.raises(TaskFormatError, match=message):
        load_task(folder)


def test_not_a_task_folder(tmp_path):
    with pytest.raises(TaskFormatError, match="no task folders found"):
        load_tasks(tmp_path)
    with pytest.raises(TaskFormatError, match="not a directory"):
        load_tasks(tmp_path / "missing")


def test_harbor_allow_internet_is_refused(tmp_path):
    folder = tmp_path / "h"
    shutil.copytree(REAL / "harbor" / "hello-world", folder)
    toml = folder / "task.toml"
    toml.write_text(toml.read_text() + "allow_internet = true\n")
    with pytest.raises(TaskFormatError, match="allow_internet = true; the sandbox has no network"):
        load_task(folder)


def test_editing_a_task_rebuilds_its_cached_work_dir(tmp_path):
    folder = _task(tmp_path, "FROM x\nWORKDIR /app\nCOPY a.txt /app/\n", {"a.txt": "one\n"})
    first = load_task(folder)
    (folder / "a.txt").write_text("two\n")
    second = load_task(folder)
    assert first.workdir != second.workdir
    assert (second.workdir / "a.txt").read_text() == "two\n"
    assert (first.workdir / "a.txt").read_text() == "one\n"


def test_solution_yaml_and_descriptions_are_read(tmp_path):
    folder = tmp_path / "legacy"
    folder.mkdir()
    (folder / "task.yaml").write_text(
        "descriptions:\n  - key: base\n    description: Make out.txt\ndifficulty: medium\n"
    )
    (folder / "solution.yaml").write_text(
        "- command: echo hi > out.txt\n  min_timeout_sec: 1\n- command: cat out.txt\n"
    )
    task = load_task(folder)
    assert task.instruction == "Make out.txt\n"
    assert task.solution == "#!/bin/bash\necho hi > out.txt\ncat out.txt\n"
    (folder / "solution.yaml").write_text("- cmd: nope\n")
    with pytest.raises(TaskFormatError, match="entry 0 needs a string field 'command'"):
        load_task(folder)


def test_materialised_template_is_readable_by_other_users(tmp_path):
    import stat

    folder = _task(tmp_path, "FROM x\nWORKDIR /app\nCOPY a.txt /app/\n", {"a.txt": "one\n"})
    task = load_task(folder)
    for path in (task.workdir.parent, task.workdir, task.tests_dir):
        assert stat.S_IMODE(path.stat().st_mode) & 0o005 == 0o005, path


@pytest.mark.parametrize(
    ("extra", "network"),
    [("", True), ("allow_internet = false\n", False), ('network_mode = "no-network"\n', False),
     ("allow_internet = true\n", True)],
)  # fmt: skip
def test_a_harbor_task_built_as_shipped_has_harbors_network_default(
    tmp_path: Path, extra: str, network: bool
) -> None:
    """Issue 43: Harbor's ``allow_internet`` defaults to true, so a task that says nothing gets
    a network in the agent's sandbox, as Harbor gives it; saying false (or the newer
    ``network_mode = "no-network"``) keeps it off."""
    folder = tmp_path / "h"
    shutil.copytree(REAL / "harbor" / "hello-world", folder)
    toml = folder / "task.toml"
    text = toml.read_text().replace("allow_internet = false\n", "")
    toml.write_text(text.replace("[environment]\n", "[environment]\n" + extra))
    task = load_task(folder, image="build")
    assert task.agent_network is network
    assert any("has a network, as Harbor gives it" in n for n in task.dockerfile_notes) is network


def test_a_terminal_bench_task_built_as_shipped_has_a_network(tmp_path: Path) -> None:
    """Terminal-Bench's harness gives every task's container a network; a task loaded to run as
    shipped does too (most gold solutions install packages), and its notes say how to turn it
    off. A task run on this machine's system (image=host) keeps it off."""
    folder = tmp_path / "t"
    shutil.copytree(REAL / "tb1" / "hello-world", folder)
    (folder / "Dockerfile").write_text("FROM python:3.11-slim\nWORKDIR /app\n")
    task = load_task(folder, image="build")
    assert task.agent_network is True
    assert any("network=false turns it off" in n for n in task.dockerfile_notes)
    assert load_task(folder).agent_network is False


def test_a_harbor_tasks_docker_compose_yml_is_build_context_not_services() -> None:
    """Issue 43, found on TermiGen's public Harbor set: Harbor reads
    ``environment/docker-compose.yaml`` only. A ``docker-compose.yml`` there is data the
    Dockerfile copies (the task is about fixing Compose files); reading it as services refused
    five real tasks Harbor runs."""
    folder = REAL / "harbor" / "termigen-docker-compose-override"
    assert (folder / "environment" / "docker-compose.yml").is_file()
    assert "COPY docker-compose.yml" in (folder / "environment" / "Dockerfile").read_text()
    task = load_task(folder, image="build")
    assert task.image is not None
    assert task.image.dockerfile == folder / "environment" / "Dockerfile"
    assert task.image.context == folder / "environment"
    assert task.agent_network is True  # allow_internet = true in its task.toml
    assert not task.services


def test_a_heredoc_buildkit_does_not_read_is_refused_where_docker_fails(tmp_path: Path) -> None:
    """``RUN cat > f << 'EOF'``: BuildKit splits the line into words and a lone ``<<`` word is no
    heredoc, so Docker fails on the body's first line. The loader refuses at that line; written
    ``<<'EOF'`` (no space) the same file is a heredoc and loads."""
    folder = REAL / "harbor" / "termigen-github-actions-matrix"
    with pytest.raises(TaskFormatError, match=r"Dockerfile:27: unknown instruction 'NAME:'"):
        load_task(folder, image="build")
    fixed = tmp_path / "fixed"
    shutil.copytree(folder, fixed)
    dockerfile = fixed / "environment" / "Dockerfile"
    dockerfile.write_text(dockerfile.read_text().replace("<< 'EOF'", "<<'EOF'"))
    task = load_task(fixed, image="build")
    assert task.image is not None and task.image.dockerfile == dockerfile


def test_a_placeholder_gold_solution_is_named_not_trusted(tmp_path: Path) -> None:
    """Issue 43: terminal-bench-core's ``polyglot-rust-c`` ships the task template's
    ``solution.sh`` (comments and ``# UNKNOWN``) and the tag ``no-verified-solution``. Its gold
    failing is the task's gap: the task names either reason, and a real solution names none."""
    folder = tmp_path / "t"
    shutil.copytree(REAL / "tb-core" / "polyglot-rust-c", folder)
    task = load_task(folder, image="build")
    assert task.unverified_solution() == "the task's tags say no-verified-solution"
    yaml_path = folder / "task.yaml"
    yaml_path.write_text(yaml_path.read_text().replace("  - no-verified-solution\n", ""))
    assert load_task(folder, image="build").unverified_solution() == (
        "its solution script runs no command (comments only: a placeholder)"
    )
    solution = folder / "solution.sh"
    solution.write_text(solution.read_text() + "\ncp /tmp/answer.c.rs /app/main.c.rs\n")
    assert load_task(folder, image="build").unverified_solution() is None
    assert load_task(REAL / "tb1" / "hello-world").unverified_solution() is None


@pytest.mark.parametrize(
    ("base", "release"),
    [("python:3.8-slim-bookworm", "ubuntu focal"), ("python:3.9-slim", "debian bullseye"),
     ("ubuntu:20.04", "ubuntu focal"), ("debian:11", "debian bullseye")],
)  # fmt: skip
def test_a_release_whose_tmux_predates_3_2_loads_and_says_which_release(
    tmp_path: Path, base: str, release: str
) -> None:
    """terminal-bench-core's ``fix-pandas-version`` is ``FROM python:3.8-slim-bookworm``: only
    Ubuntu focal ships Python 3.8, and its tmux (3.0a, like bullseye's 3.1c) has no ``-D``. It
    was refused at load until the sandbox ran such a tmux through a wrapper
    (``test_old_releases.py``); it now loads, its notes naming the release."""
    folder = _task(tmp_path, f"FROM {base}\nWORKDIR /app\n")
    task = load_task(folder, image="build")
    assert task.image is not None
    assert any(f"-> {release}" in note for note in task.dockerfile_notes), task.dockerfile_notes
