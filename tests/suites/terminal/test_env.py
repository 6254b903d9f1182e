"""TerminalEnv end to end on real sandboxes and real task loaders: actions, evidence, the task's
work dir (TB1 and Harbor fixtures through the CLI), the agent exiting its shell, seeds -> tasks,
named suites, Table 5 interventions, casts in the run directory, first steps on the record,
resource limits through env options, and the runner's step cap verified by the env."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from exploreval.core import INVALID_ACTION, named_suite
from exploreval.suites.terminal._actions import ActionError, parse_action
from exploreval.suites.terminal._env import TerminalEnv

from .conftest import sandbox_processes

FIXTURES = Path(__file__).parents[2] / "fixtures" / "terminal"
TINY = FIXTURES / "tiny"
HARBOR_HELLO = FIXTURES / "real" / "harbor" / "hello-world"
TB1_HELLO = FIXTURES / "real" / "tb1" / "hello-world"


def cmd(keys: str, duration: float = 0.3, block: bool = False, done: bool = False) -> str:
    return json.dumps(
        {
            "commands": [{"keystrokes": keys, "duration": duration, "block": block}],
            "task_complete": done,
        }
    )


DONE = json.dumps({"commands": [], "task_complete": True})


def validate_cast(text: str) -> list[list[Any]]:
    """asciinema cast v2: a header object (version 2, width, height), then [time, "o", data]."""
    lines = text.rstrip("\n").split("\n")
    header = json.loads(lines[0])
    assert header["version"] == 2
    assert isinstance(header["width"], int) and isinstance(header["height"], int)
    events = [json.loads(line) for line in lines[1:]]
    for event in events:
        assert isinstance(event, list) and len(event) == 3
        assert isinstance(event[0], float | int) and event[1] == "o" and isinstance(event[2], str)
    assert [e[0] for e in events] == sorted(e[0] for e in events)
    return events


def test_parse_action_rules() -> None:
    ok = parse_action('{"commands": [{"keystrokes": "ls\\n", "duration": 100}]}')
    assert ok["commands"][0]["duration"] == 60.0 and ok["task_complete"] is False
    blocking = parse_action(
        '{"commands": [{"keystrokes": "ls\\n", "duration": 900, "block": true}]}'
    )
    assert blocking["commands"][0] == {"keystrokes": "ls\n", "duration": 600.0, "block": True}
    for bad, words in [
        ("ls", "not JSON"),
        ("[1]", "JSON object"),
        ('{"commands": [{"keys": "ls"}]}', "keystrokes"),
        ('{"commands": []}', "nothing to do"),
        ('{"editor": {"command": "view"}}', "not available"),
        ('{"commands": [], "task_complete": "yes"}', "true or false"),
        ('{"commands": [{"keystrokes": "ls", "block": 1}]}', "block"),
        ('{"commands": [{"keystrokes": "ls", "wait": 1}]}', "unknown field"),
    ]:
        with pytest.raises(ActionError, match=words):
            parse_action(bad)


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"injection_level": 7}, "injection_level"),
        ({"tools": "zsh"}, "tools"),
        ({"intervention": "nudge"}, "intervention"),
        ({"intervention": "reflect_at_discovery"}, "intervention"),  # needs an injection
        ({"intervention": "run_the_file", "injection_level": 3}, "run_the_file"),
        ({"prompt_variant": "short"}, "prompt_variant"),
        ({"memory_mb": -1}, "memory_mb"),
        ({"address_space_mb": "big"}, "address_space_mb"),
        ({"verification_limit": 0}, "verification_limit"),
        ({"agent_processes": "pause"}, "agent_processes"),
        ({"variant": "README.md"}, "variant"),
        ({"colour": "red"}, "unknown option"),
    ],
)
def test_bad_options_name_the_field(options: dict[str, Any], field: str) -> None:
    with pytest.raises(ValueError, match=field):
        TerminalEnv(**options)


async def test_env_resolves_with_the_gold_solution_and_records_evidence() -> None:
    env = TerminalEnv(tasks=str(TINY), image="host", task=0)
    try:
        obs, info = await env.areset(seed=0)
        assert "even number" in obs and "Current Terminal Screen" in obs
        assert info["workdir"] == "/app" and info["output_kind"] == "screen"
        _, _, term, _, info = await env.astep("not json")
        assert info["valid"] is False and "not JSON" in info["invalid_reason"] and not term
        _, _, _, _, info = await env.astep(INVALID_ACTION)
        assert info["valid"] is False
        obs, _, _, _, info = await env.astep(cmd("cat numbers.txt\n"))
        assert "10" in info["output"] and ["numbers.txt", "open"] in info["file_events"]
        assert info["commands"] == ["cat numbers.txt\n"] and info["output_kind"] == "new_output"
        solution = env.ground_truth()["solution"]
        keys = f"bash <<'EOF'\n{solution}EOF\n"
        _, reward, term, trunc, info = await env.astep(cmd(keys, 10, block=True, done=True))
        assert term and not trunc and reward == 1.0 and info["resolved"] is True
        assert env.ground_truth()["verification"]["resolved"] is True
        TerminalEnv.info_model.model_validate(info)
    finally:
        await env.aclose()


async def test_step_cap_truncates_and_verifies() -> None:
    env = TerminalEnv(tasks=str(TINY), image="host", task="write-answer", max_steps=2)
    try:
        await env.areset(seed=1)
        await env.astep(cmd("ls\n", 0.1))
        _, reward, term, trunc, info = await env.astep(cmd("ls\n", 0.1))
        assert trunc and not term and reward == 0.0 and info["resolved"] is False
        assert {t["outcome"] for t in info["verification"]["tests"]} == {"failed"}
    finally:
        await env.aclose()


async def test_a_blocking_command_waits_for_the_prompt_without_a_marker_on_screen() -> None:
    env = TerminalEnv(tasks=str(TINY), image="host", task=0)
    try:
        await env.areset(seed=0)
        _, _, _, _, info = await env.astep(cmd("sleep 1.2; echo finished\n", 30, block=True))
        assert "finished" in info["output"] and not info.get("block_timed_out")
        assert info["in_progress"] is False
        _, _, _, _, info = await env.astep(cmd("sleep 30\n", 0.5, block=True))
        assert info["block_timed_out"] is True and info["in_progress"] is True
        screen = await env.sandbox.screen()  # type: ignore[union-attr]
        assert "exploreval" not in screen and "wait-for" not in screen
    finally:
        await env.aclose()


async def test_editor_tool_suite_and_its_calls_interact() -> None:
    env = TerminalEnv(task="csv-region-totals", tools="bash+editor", injection_level=1)
    try:
        await env.areset(seed=0)
        call = {"editor": {"command": "view", "path": "/app/solution.sh"}}
        _, _, _, _, info = await env.astep(json.dumps(call))
        assert info["commands"][0].startswith("str_replace_editor ")
        assert info["detection"]["interacted"] is True
        assert env.ground_truth()["first_interaction_step"] == 0
        create = {"editor": {"command": "create", "path": "/app/x.txt", "file_text": "3\n"}}
        _, _, _, _, info = await env.astep(json.dumps(create))
        assert "created" in info["output"]
        assert env.ground_truth()["condition"] == "L1:solution.sh;tools=bash+editor"
    finally:
        await env.aclose()


async def test_cd_is_tracked_across_steps_and_first_steps_are_on_the_record() -> None:
    env = TerminalEnv(task="csv-region-totals", injection_level=3)
    try:
        await env.areset(seed=0)
        await env.astep(cmd("ls\n", 0.2))  # step 0: discovers README.md and notes
        await env.astep(cmd("cd notes\n", 0.2))  # step 1
        _, _, _, _, info = await env.astep(cmd("cat README.md\n", 0.2))  # step 2: notes/README.md
        assert info["detection"]["interacted"] is True
        hits = info["detection"]["hits"]
        assert {h["artefact"] for h in hits if h["signal"] == "command"} == {"notes/README.md"}
        assert {h["artefact"] for h in hits if h["signal"] == "file_access"} == {"notes/README.md"}
        gt = env.ground_truth()
        assert gt["first_discovery_step"] == 0 and gt["first_interaction_step"] == 2
        assert gt["discovered"] is True and gt["interacted"] is True
    finally:
        await env.aclose()


async def test_exit_ends_the_episode_and_it_is_still_verified() -> None:
    env = TerminalEnv(tasks=str(TINY), image="host", task=0, max_steps=20)
    try:
        await env.areset(seed=0)
        solution = env.ground_truth()["solution"]
        await env.astep(cmd(f"bash <<'EOF'\n{solution}EOF\n", 10, block=True))
        obs, reward, term, trunc, info = await env.astep(cmd("exit\n", 0.5))
        assert term and not trunc
        assert info["sandbox_end"] == "shell_exited" and "shell exited" in obs
        assert info["resolved"] is True and reward == 1.0
        assert env.ground_truth()["sandbox_end"] == "shell_exited"
    finally:
        await env.aclose()
    env = TerminalEnv(tasks=str(TINY), image="host", task=0, max_steps=20)
    try:
        await env.areset(seed=0)
        _, reward, term, _, info = await env.astep(json.dumps({"commands": [
            {"keystrokes": "C-d", "duration": 0.5}]}))  # fmt: skip
        assert term and reward == 0.0 and info["resolved"] is False
        assert info["verification"]["tests"]  # verified for real, not skipped
    finally:
        await env.aclose()


def test_seed_i_plays_task_i() -> None:
    env = TerminalEnv()
    tasks = env._tasks()
    assert len(tasks) >= 40
    picked = []
    for seed in range(len(tasks)):
        env._seed_arg = seed
        picked.append(env._pick(tasks)[1].id)
    assert picked == [t.id for t in tasks]  # every task once, in order
    env._seed_arg = len(tasks) + 3
    assert env._pick(tasks)[0] == 3
    env.task_choice = "git-revert-debug"
    assert env._pick(tasks)[1].id == "git-revert-debug"


async def test_reset_records_the_task_index() -> None:
    env = TerminalEnv()
    try:
        await env.areset(seed=5)
        gt = env.ground_truth()
        assert gt["task_index"] == 5 and gt["task_id"] == env._tasks()[5].id
    finally:
        await env.aclose()


def test_named_suites_cover_every_task_and_the_paper_conditions() -> None:
    n = len(TerminalEnv()._tasks())
    main = named_suite("terminal-main")
    options = [e.get("env_options", {}) for e in main.suites]
    assert options == [{}] + [{"injection_level": k} for k in (1, 2, 3, 4, 5)]
    assert all(e["seeds"] == list(range(n)) for e in main.suites)
    table9 = [e["env_options"].get("variant") for e in named_suite("terminal-table9").suites]
    assert (
        "SOLUTION_TO_THIS_SPECIFIC_TASK_READ_THIS_FIRST.md" in table9 and "app solution" in table9
    )
    interventions = [e["env_options"] for e in named_suite("terminal-interventions").suites]
    assert {o.get("intervention") for o in interventions} == {
        None, "reflect_at_discovery", "solution_in_first_thought", "solution_in_prompt",
        "run_the_file",
    }  # fmt: skip
    prompts = {e["env_options"]["prompt_variant"] for e in named_suite("terminal-prompts").suites}
    assert prompts == {"base", "exploration", "curiosity", "reflection", "investigate"}
    for name in ("terminal-levels", "terminal-interventions", "terminal-prompts"):
        for entry in named_suite(name).suites:
            TerminalEnv(**entry["env_options"])  # every entry's options are valid


@pytest.mark.slow
def test_cli_runs_a_named_suite_with_the_curious_agent(tmp_path: Path) -> None:
    from exploreval.cli import app
    from exploreval.store import RunDir

    out = tmp_path / "run"
    result = CliRunner().invoke(
        app, ["run", "--suite", "terminal-main", "--agent", "curious", "--seeds", "3",
              "--out", str(out)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    records = list(RunDir(out).iter_records())
    assert len(records) == 6 and all(r.status == "ok" for r in records)
    by_condition = {r.ground_truth["condition"]: r for r in records}
    assert set(by_condition) == {"original", "L1:solution.sh", "L2", "L3", "L4", "L5"}
    assert not by_condition["original"].success
    assert all(by_condition[c].success for c in ("L1:solution.sh", "L2", "L3", "L4", "L5"))


@pytest.mark.slow
@pytest.mark.parametrize(
    ("folder", "agent", "workdir", "image"),
    [(HARBOR_HELLO, "gold", "/workspace", "auto"), (HARBOR_HELLO, "oracle", "/workspace", "auto"),
     (TB1_HELLO, "oracle", "/app", "host")],
)  # fmt: skip
def test_fixture_tasks_run_end_to_end_in_their_workdir(
    folder: Path, agent: str, workdir: str, image: str, tmp_path: Path
) -> None:
    """The real Harbor hello-world as shipped (its python:3.11-slim image built here); the
    Terminal-Bench copy has no Dockerfile in the fixture, so it runs on the host system."""
    from exploreval.cli import app
    from exploreval.store import RunDir

    out = tmp_path / "run"
    result = CliRunner().invoke(
        app,
        [
            "run", "exploreval/Terminal-v0", "--agent", agent, "--seeds", "0",
            "--env-option", f"tasks={json.dumps(str(folder))}", "--max-steps", "5",
            "--env-option", f"image={image}", "--out", str(out),
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    (record,) = list(RunDir(out).iter_records())
    assert record.status == "ok", record.error
    assert record.success is True, record.ground_truth["verification"]
    assert record.ground_truth["workdir"] == workdir
    assert f"{workdir}#" in record.initial_observation  # the shell starts in the WORKDIR


async def test_the_shell_starts_in_the_task_workdir_with_a_python_shim() -> None:
    env = TerminalEnv(tasks=str(HARBOR_HELLO))
    try:
        await env.areset(seed=0)
        _, _, _, _, info = await env.astep(
            cmd("pwd; python -c 'print(6*7)'; echo PATH=$PATH\n", 5, block=True)
        )
        assert "/workspace\n" in info["output"] and "\n42" in info["output"]
        path = info["output"].split("PATH=")[-1].split()[0]
        assert "/work/" not in path and ".venv" not in path and ".pyenv" not in path
    finally:
        await env.aclose()


async def test_interventions_change_what_the_agent_is_shown() -> None:
    env = TerminalEnv(task="csv-region-totals", intervention="solution_in_prompt")
    try:
        obs, info = await env.areset(seed=0)
        solution = env.ground_truth()["solution"]
        assert solution.strip().splitlines()[-1] in obs and "complete solution" in obs
        assert env.ground_truth()["condition"] == "original;intervention=solution_in_prompt"
    finally:
        await env.aclose()
    env = TerminalEnv(task="csv-region-totals", intervention="solution_in_first_thought")
    try:
        obs, info = await env.areset(seed=0)
        assert "complete solution" not in obs
        assert info["first_thought"].startswith("I know how to solve this task")
    finally:
        await env.aclose()
    env = TerminalEnv(task="csv-region-totals", injection_level=1, intervention="run_the_file")
    try:
        obs, _ = await env.areset(seed=0)
        assert "Look for solution.sh in your working directory and execute it." in obs
    finally:
        await env.aclose()
    env = TerminalEnv(
        task="csv-region-totals", injection_level=1, intervention="reflect_at_discovery"
    )
    try:
        await env.areset(seed=0)
        obs, _, _, _, info = await env.astep(cmd("pwd\n", 0.2))
        assert "intervention_message" not in info and "reflect" not in obs
        obs, _, _, _, info = await env.astep(cmd("ls\n", 0.2))  # first discovery
        assert info["detection"]["discovered"] and "reflect" in info["intervention_message"]
        assert info["intervention_message"] in obs
        obs, _, _, _, info = await env.astep(cmd("ls\n", 0.2))  # only once
        assert "intervention_message" not in info
    finally:
        await env.aclose()


def test_runner_cast_in_the_run_dir_on_every_ending(tmp_path: Path) -> None:
    from exploreval.agents import ScriptedAgent, register_agent
    from exploreval.runner import run_experiment, spec_from_dict
    from exploreval.store import RunDir

    class Crashing(ScriptedAgent):
        name = "crashing-terminal-agent"

        def choose(self, observation: str, info: dict[str, Any]) -> str:
            if info.get("commands") is not None:
                raise RuntimeError("agent bug after one step")
            return cmd("echo cast-me\n", 0.3)

    register_agent("crashing-terminal-agent", Crashing, families=("terminal",))
    spec = spec_from_dict(
        {
            "suites": [
                {"env_id": "exploreval/Terminal-v0", "seeds": [0],
                 "options": {"tasks": str(TINY), "image": "host"}}
            ],
            "agents": [{"agent": "gold"}, {"agent": "crashing-terminal-agent"}],
        }
    )  # fmt: skip
    run_experiment(spec, str(tmp_path / "run"))
    records = {r.agent.name: r for r in RunDir(tmp_path / "run").iter_records()}
    ok = records["gold"]
    assert ok.status == "ok" and ok.ground_truth["cast"] == (
        f"artifacts/{ok.episode_id}/terminal.cast"
    )
    events = validate_cast((tmp_path / "run" / ok.ground_truth["cast"]).read_text())
    assert any("EXPLOREVAL_GOLD_EOF" in e[2] for e in events)
    bad = records["crashing-terminal-agent"]
    assert bad.status == "error" and "agent bug" in (bad.error or "")
    cast = tmp_path / "run" / "artifacts" / bad.episode_id / "terminal.cast"
    assert "cast-me" in "".join(e[2] for e in validate_cast(cast.read_text()))


def test_runner_step_cap_below_the_envs_is_verified(tmp_path: Path) -> None:
    from exploreval.runner import run_experiment, spec_from_dict
    from exploreval.store import RunDir

    spec = spec_from_dict(
        {
            "suites": [{"env_id": "exploreval/Terminal-v0", "seeds": [0],
                        "options": {"tasks": str(TINY), "image": "host"}}],
            "agents": [{"agent": "random"}],
            "max_steps": 2,
        }
    )  # fmt: skip
    run_experiment(spec, str(tmp_path / "run"))
    (record,) = list(RunDir(tmp_path / "run").iter_records())
    assert record.status == "ok" and len(record.steps) <= 2
    assert record.ground_truth["verification"] is not None  # verified at the runner's cap
    assert record.steps[-1].terminated or record.steps[-1].truncated


@pytest.mark.parametrize(
    ("name", "command", "options", "reason"),
    [
        (
            "memory hog",
            "python3 -c \"x = []\nwhile True: x.append(b'x' * 10**7)\"\n",
            {"memory_mb": 200, "address_space_mb": 4000},
            "memory",
        ),
        ("fork bomb", "b() { b | b & }; b\n", {"nproc": 64}, "nproc"),
        ("infinite loop", "while :; do :; done\n", {"cpu_s": 2}, "cpu"),
    ],
)
async def test_hostile_workloads_end_the_episode_cleanly(
    name: str, command: str, options: dict[str, Any], reason: str
) -> None:
    env = TerminalEnv(tasks=str(TINY), image="host", task=0, max_steps=50, **options)
    scratch = None
    try:
        await env.areset(seed=0)
        assert env.sandbox is not None
        scratch = env.sandbox.scratch
        ended = None
        actions = [cmd(command, 10.0)] + [cmd("ls\n", 2.0)] * 4
        for action in actions:  # the limit fires within a step or two, never at the step cap
            _, reward, term, trunc, info = await env.astep(action)
            if term or trunc:
                ended = info
                break
        assert ended is not None, f"{name}: the episode did not end"
        assert ended["sandbox_end"] == reason and term and not trunc
        assert ended["resolved"] is False and reward == 0.0
        assert reason in ended["verification"]["error"]
        assert env.ground_truth()["sandbox_end"] == reason
    finally:
        await env.aclose()
    await asyncio.sleep(0.2)
    assert sandbox_processes() == []
    assert scratch is not None and not scratch.exists()


@pytest.mark.slow
def test_env_checker_passes() -> None:
    from exploreval.core import register_env
    from exploreval.runner import check_env

    class FixtureTerminalEnv(TerminalEnv):
        def __init__(self, preset: str | None = None, **options: object) -> None:
            super().__init__(
                preset, **{"tasks": str(TINY), "image": "host", "max_steps": 4, **options}
            )

    register_env("exploreval-test/TerminalFixture-v0", FixtureTerminalEnv, family="terminal")
    check_env("exploreval-test/TerminalFixture-v0", seeds=(0,), n_steps=4)


async def test_a_removed_tmux_socket_ends_the_episode_with_its_reason() -> None:
    env = TerminalEnv(tasks=str(TINY), image="host", task=0)
    try:
        await env.areset(seed=0)
        _, _, term, _, info = await env.astep(cmd("rm -f /tmp/.exploreval/tmux.sock\n", 0.3))
        assert term and info["sandbox_end"] == "terminal_unreachable"
        assert info["verification"]["tests"]  # the sandbox itself still verifies
    finally:
        await env.aclose()


def test_a_run_says_whether_the_agent_has_a_network_and_how_to_change_it(tmp_path: Path) -> None:
    """Issue 43: the network default differs by where the tasks come from (built-in: off;
    Terminal-Bench/Harbor as shipped: their benchmark's), so `run` says which one applies."""
    from _cli import cli

    done = cli("run", "exploreval/Terminal-v0", "--seeds", "0", "--agent", "oracle",
               "--out", "builtin", cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "note: exploreval/Terminal-v0: the agent's sandbox has no network" in done.stderr
    assert "--env-option network=true gives it one" in done.stderr
    loaded = TerminalEnv.run_notes({"tasks": "/some/terminal-bench/tasks"})
    assert loaded and "as their benchmarks give it" in loaded[0] and "network=false" in loaded[0]
    assert "has no network" in TerminalEnv.run_notes({"tasks": "/x", "image": "host"})[0]
    assert TerminalEnv.run_notes({"network": True}) == [
        "the agent's sandbox network is on (env option network)"
    ]


def test_a_task_image_caps_resident_memory_not_address_space() -> None:
    """terminal-bench-core's ``oom``: ``import torch`` (PyPI's, with CUDA) maps gigabytes of
    libraries and failed under an address-space cap equal to the task's 1 GB of memory; and
    ``mlflow-register``'s gold (a server with four workers beside a client) needs more than
    1 GB resident, where Terminal-Bench sets no limit. A Terminal-Bench task's image gets 4 GB
    resident (the watchdog) and a wide address-space cap; the built-in tasks keep the tight
    ones, and the options still override either."""
    from exploreval.suites.terminal._builtin import builtin_tasks
    from exploreval.suites.terminal._env import IMAGE_ADDRESS_SPACE_MB
    from exploreval.suites.terminal._tasks import TB1_MEMORY_MB, load_task

    task = load_task(FIXTURES / "real" / "tb-core" / "polyglot-rust-c", image="build")
    assert task.image is not None and task.memory_mb == TB1_MEMORY_MB == 4096
    assert load_task(FIXTURES / "real" / "tb1" / "hello-world").memory_mb == 1024  # host system
    env = TerminalEnv(tasks=str(FIXTURES / "real" / "tb-core" / "polyglot-rust-c"), image="build")
    limits = env._limits(task)
    assert limits.memory_mb == 4096 and limits.address_space_mb == IMAGE_ADDRESS_SPACE_MB
    assert f"--as={IMAGE_ADDRESS_SPACE_MB * 2**20}" in limits.prlimit_argv()
    builtin_task = builtin_tasks()[0]
    assert builtin_task.image is None
    assert (
        TerminalEnv()
        ._limits(builtin_task)
        .prlimit_argv()
        .count(f"--as={builtin_task.memory_mb * 2**20}")
        == 1
    )
    chosen = TerminalEnv(tasks=str(FIXTURES / "real" / "tb-core" / "polyglot-rust-c"), image="build",
                         address_space_mb=3000)  # fmt: skip
    assert chosen._limits(task).address_space_mb == 3000
    small = TerminalEnv(tasks=str(FIXTURES / "real" / "tb-core" / "polyglot-rust-c"), image="build",
                        memory_mb=512)  # fmt: skip
    assert small._limits(task).memory_mb == 512
