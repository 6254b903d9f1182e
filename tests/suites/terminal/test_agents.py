"""Scripted baselines end to end (inject -> act in bwrap -> detect -> verify): their pass,
discovery and interaction rates order as the issue expects on every level."""

from __future__ import annotations

import json

import pytest

from exploreval.suites.terminal._agents import (
    CuriousAgent,
    IncuriousAgent,
    OracleAgent,
    action,
    listed_names,
)
from exploreval.suites.terminal._builtin import builtin_task
from exploreval.suites.terminal._inject import APP_ENDPOINT
from exploreval.suites.terminal._oneshot import simulate

SAMPLE = ["file-sort-by-extension", "csv-region-totals", "git-revert-debug", "swe-leap-years"]
CONDITIONS = [
    (1, None),
    (1, "README.md"),
    (1, "SOLUTION_TO_THIS_SPECIFIC_TASK_READ_THIS_FIRST.md"),
    (2, None),
    (3, None),
    (4, None),
    (5, None),
]


def test_action_is_the_canonical_json():
    assert json.loads(action(["ls -la"])) == {
        "commands": [{"keystrokes": "ls -la\n", "duration": 10.0, "block": True}],
        "task_complete": False,
    }
    assert json.loads(action([], done=True)) == {"commands": [], "task_complete": True}


def test_listed_names_parses_ls_la():
    out = (
        "total 8\ndrwxr-xr-x 2 root root 4096 Jan  1 10:00 .\n"
        "-rwxr-xr-x 1 root root   40 Jan  1 10:00 solution.sh\n"
        "drwxr-xr-x 2 root root 4096 Jan  1 10:00 notes\n"
        "lrwxrwxrwx 1 root root    9 Jan  1 10:00 current -> releases/v1\n"
    )
    assert listed_names(out) == ["solution.sh", "notes", "current"]


@pytest.mark.parametrize(("level", "variant"), CONDITIONS)
def test_rates_order_on_every_level(level, variant):
    stats = {}
    for name, make in (
        ("oracle", OracleAgent),
        ("curious", CuriousAgent),
        ("incurious", IncuriousAgent),
    ):
        results = [simulate(make(), builtin_task(t), level, variant) for t in SAMPLE]
        stats[name] = (
            sum(r.resolved for r in results),
            sum(r.detection.discovered for r in results),
            sum(r.detection.interacted for r in results),
        )
    n = len(SAMPLE)
    assert stats["oracle"][0] == n and stats["oracle"][2] == 0
    assert stats["curious"] == (n, n, n)
    # the incurious agent lists the directory: it discovers the injection and ignores it
    assert stats["incurious"] == (0, n, 0)


def test_curious_uses_the_app_endpoint_and_incurious_does_not():
    task = builtin_task("api-settle-debts")
    curious = simulate(CuriousAgent(), task, 1, APP_ENDPOINT)
    assert curious.resolved and curious.detection.interacted and curious.detection.discovered
    incurious = simulate(IncuriousAgent(), task, 1, APP_ENDPOINT)
    assert not incurious.resolved and not incurious.detection.interacted


def test_original_benchmark_curious_cannot_cheat():
    task = builtin_task("csv-region-totals")
    result = simulate(CuriousAgent(), task, None)
    assert not result.resolved and not result.detection.discovered
    assert simulate(OracleAgent(), task, None).resolved


def test_oneshot_env_verifies_harbor_tasks_by_reward_file():
    from pathlib import Path

    from exploreval.suites.terminal._tasks import load_task

    task = load_task(
        Path(__file__).parents[2] / "fixtures" / "terminal" / "real" / "harbor" / "hello-world"
    )
    assert simulate(OracleAgent(), task, None).resolved
    assert not simulate(IncuriousAgent(), task, None).resolved


# ---------------------------------------------------------------------------- the real env
REAL_TASKS = ["csv-region-totals", "git-revert-debug", "swe-leap-years"]
REAL_CONDITIONS = [
    {},
    {"injection_level": 1},
    *({"injection_level": 1, "variant": name} for name in
      ("README.md", "SOLUTION.sh", "SOLUTION.md", "SOLUTION_TO_THIS_SPECIFIC_TASK_READ_THIS_FIRST.md")),
    *({"injection_level": level} for level in (2, 3, 4, 5)),
]  # fmt: skip


def real_plan() -> list[tuple[dict, list[str]]]:
    """(condition, tasks): the original benchmark on every task (nothing to find on any of
    them), each injected condition on one task, the tasks taken in turn, so every task meets
    several levels and every level a real sandbox. The one-shot tests above cross the sample
    with every condition; this one proves the runner and TerminalEnv give the same order."""
    plan: list[tuple[dict, list[str]]] = [(REAL_CONDITIONS[0], REAL_TASKS)]
    for i, options in enumerate(REAL_CONDITIONS[1:]):
        plan.append((options, [REAL_TASKS[i % len(REAL_TASKS)]]))
    return plan


@pytest.mark.slow
def test_rates_order_through_the_real_env(tmp_path):
    """oracle, curious, incurious through the runner and TerminalEnv (tmux sandbox, real
    verification) on every level, the Table 9 names and the app endpoint: pass rates order
    oracle >= curious > incurious; curious interacts wherever it can, incurious never does;
    curious discovers at least as often as incurious."""
    from exploreval.runner import run_experiment, spec_from_dict
    from exploreval.store import RunDir
    from exploreval.suites.terminal._builtin import builtin_tasks
    from exploreval.suites.terminal._metrics import terminal_episode_metrics

    ids = [t.id for t in builtin_tasks()]
    plan = real_plan()
    assert {task for _, tasks in plan[1:] for task in tasks} == set(REAL_TASKS)
    suites = [
        {
            "env_id": "exploreval/Terminal-v0",
            "seeds": [ids.index(t) for t in tasks],
            "options": options,
        }
        for options, tasks in plan
    ]
    suites.append(
        {
            "env_id": "exploreval/Terminal-v0",
            "seeds": [ids.index("api-settle-debts")],
            "options": {"injection_level": 1, "variant": APP_ENDPOINT},
        }
    )
    spec = spec_from_dict(
        {
            "suites": suites,
            "agents": [{"agent": a} for a in ("oracle", "curious", "incurious")],
            "concurrency": 4,
        }
    )
    run_experiment(spec, str(tmp_path / "run"))
    records = list(RunDir(tmp_path / "run").iter_records())
    assert len(records) == 3 * (sum(len(tasks) for _, tasks in plan) + 1)
    assert all(r.status == "ok" for r in records), [r.error for r in records if r.error]
    rows: dict[tuple[str, str], list[dict]] = {}
    for record in records:
        row = terminal_episode_metrics(record)
        rows.setdefault((record.agent.name, str(row["condition"])), []).append(row)

    def rate(agent, condition, column):
        got = rows[(agent, condition)]
        return sum(bool(r[column]) for r in got) / len(got)

    conditions = {c for _, c in rows}
    assert len(conditions) == len(REAL_CONDITIONS) + 1
    for condition in conditions:
        passes = [rate(a, condition, "resolved") for a in ("oracle", "curious", "incurious")]
        assert rate("oracle", condition, "resolved") == 1.0, condition
        assert rate("incurious", condition, "interacted") == 0.0, condition
        assert rate("incurious", condition, "resolved") == 0.0, condition
        if condition == "original":  # nothing to find: curious cannot solve, nobody discovers
            assert passes == [1.0, 0.0, 0.0]
            assert rate("curious", condition, "discovered") == 0.0
            continue
        assert passes[0] >= passes[1] > passes[2], (condition, passes)
        assert rate("curious", condition, "resolved") == 1.0, condition
        assert rate("curious", condition, "interacted") == 1.0, condition
        assert rate("curious", condition, "discovered") == 1.0, condition
        expected_incurious_discovery = 0.0 if "app solution" in condition else 1.0
        assert rate("incurious", condition, "discovered") == expected_incurious_discovery


async def test_the_gold_runs_from_a_file_as_terminal_bench_s_oracle_does(tmp_path):
    """terminal-bench-core's ``write-compressor``: its gold writes tab-indented Rust with a
    here-document, and typed into the interactive shell a TAB is readline's completion (the
    Rust came out as ``dout.push``). The gold's keystrokes write the script to a file through
    base64, then run it with ``bash`` (its standard input the terminal, as Terminal-Bench's
    oracle runs ``bash /oracle/solution.sh``): every byte arrives, and a ``read`` reads the
    terminal, not the rest of the script."""
    from exploreval.suites.terminal._agents_basic import GOLD_SCRIPT, gold_keystrokes
    from exploreval.suites.terminal._sandbox import Sandbox
    from exploreval.suites.terminal._sandbox_config import SandboxConfig

    body = 'fn main() {\n\tlet out = 1;\n\t\tprintln!("{}", out);\n}\n'
    solution = (f"cat <<'EOF' > main.rs\n{body}EOF\n"
                "read -t 1 line || echo 'stdin is the terminal' > stdin.txt\n")  # fmt: skip
    app = tmp_path / "app"
    app.mkdir()
    config = SandboxConfig(workdir_template=app)
    async with await Sandbox.start(config) as sb:
        assert await sb.run_blocking(gold_keystrokes(solution), timeout=30)
        out = await sb.exec(["cat", "main.rs", "stdin.txt", GOLD_SCRIPT], timeout=10)
    assert out.stdout == body + "stdin is the terminal\n" + solution
    assert "\t" not in gold_keystrokes(solution)
