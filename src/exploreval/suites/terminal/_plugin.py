"""The terminal suite as a plugin: env, scripted agents, harnesses, metrics, named suites."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from exploreval.core import SuitePlugin

_M = "exploreval.suites.terminal"
ENV_ID = "exploreval/Terminal-v0"
FAMILY = "terminal"
_TASKS_DIR = Path(__file__).resolve().parent / "tasks"

TABLE9_NAMES = (
    "solution.sh",
    "README.md",
    "SOLUTION.sh",
    "SOLUTION.md",
    "SOLUTION_TO_THIS_SPECIFIC_TASK_READ_THIS_FIRST.md",
)
PROMPT_VARIANT_NAMES = ("base", "exploration", "curiosity", "reflection", "investigate")


def builtin_task_ids() -> list[str]:
    """The built-in task ids in the env's order (sorted), from the folder names alone (cheap:
    ``register`` must not load the tasks)."""
    return sorted(
        name for name in os.listdir(_TASKS_DIR) if (_TASKS_DIR / name / "task.yaml").is_file()
    )


def _entry(seeds: list[int], **options: Any) -> dict[str, Any]:
    return {"env_id": ENV_ID, "seeds": seeds, "env_options": options}


def named_suites() -> dict[str, tuple[list[dict[str, Any]], str]]:
    """The paper's task sets over the built-in tasks; seed i plays task i (sorted ids)."""
    ids = builtin_task_ids()
    every = list(range(len(ids)))
    api = [i for i, task_id in enumerate(ids) if task_id.startswith("api-")]
    levels = [_entry(every, injection_level=level) for level in (1, 2, 3, 4, 5)]
    n = len(ids)
    return {
        "terminal-main": (
            [_entry(every), *levels],
            f"Solution injection, main conditions: {n} built-in tasks x (no injection + "
            "levels 1-5)",
        ),
        "terminal-levels": (
            levels,
            f"Table 10: {n} built-in tasks x injection levels 1-5 (terminal-main adds the original)",
        ),
        "terminal-table9": (
            [_entry(every, injection_level=1, variant=name) for name in TABLE9_NAMES]
            + [_entry(api, injection_level=1, variant="app solution")],
            f"Table 9: level 1 under 5 file names ({n} tasks) + the `app solution` endpoint "
            f"({len(api)} API tasks)",
        ),
        "terminal-interventions": (
            [
                _entry(every, injection_level=1),
                _entry(every, injection_level=1, intervention="reflect_at_discovery"),
                _entry(every, intervention="solution_in_first_thought"),
                _entry(every, intervention="solution_in_prompt"),
                _entry(every, injection_level=1, intervention="run_the_file"),
            ],
            f"Table 5: baseline (L1) + the 4 oracle interventions, {n} tasks (3-4 without "
            "injection, as in the paper)",
        ),
        "terminal-prompts": (
            [
                _entry(every, **level, prompt_variant=variant)
                for variant in PROMPT_VARIANT_NAMES
                for level in ({}, {"injection_level": 1})
            ],
            f"Table 12: 5 prompt variants x (original, level 1), {n} tasks (LLM harnesses)",
        ),
    }


def register() -> None:
    from exploreval.metrics import register_headline_metrics as _headline

    _headline(FAMILY, ("resolved", "discovered", "interacted", "first_discovery_step"))
    from exploreval.agents import register_agent, register_harness
    from exploreval.core import register_env, register_suite
    from exploreval.metrics import (
        register_episode_metrics,
        register_judged_metrics,
        register_run_metrics,
    )
    from exploreval.report import (
        own_pass_at_k,
        register_report,
        register_step_annotations,
        register_step_view,
    )

    register_env(
        ENV_ID,
        f"{_M}._env:TerminalEnv",
        family=FAMILY,
        nondeterministic=True,
        description="Terminal tasks in a bubblewrap + tmux sandbox, solution injection optional",
        success_means="the task's hidden tests all passed in a fresh sandbox after the episode "
        "(resolved)",
    )
    register_agent(
        "random", f"{_M}._agents_basic:RandomTerminalAgent", families=(FAMILY,),
        description="random harmless keystrokes (env checker)",
    )  # fmt: skip
    register_agent(
        "gold", f"{_M}._agents_basic:GoldSolutionAgent", families=(FAMILY,),
        description="privileged: runs the task's gold solution",
    )  # fmt: skip
    for name, cls, description in (
        ("oracle", "OracleAgent", "privileged: runs the gold solution (paper's upper bound)"),
        ("curious", "CuriousAgent", "lists and reads every new file, follows what it finds"),
        ("incurious", "IncuriousAgent", "works from the instruction only; ignores what it sees"),
    ):
        register_agent(name, f"{_M}._agents:{cls}", families=(FAMILY,), description=description)
    register_episode_metrics(FAMILY, "terminal", f"{_M}._metrics:terminal_episode_metrics")
    register_run_metrics(
        FAMILY,
        "terminal",
        f"{_M}._metrics:terminal_tables_from_rows",
        partial=f"{_M}._metrics:attempt_row",
    )
    register_judged_metrics(FAMILY, "terminal_judge", f"{_M}._judge:judge_tables")
    register_report(FAMILY, "terminal", f"{_M}._report:terminal_sections", uses_tables=True)
    register_report(FAMILY, "terminal_judge", f"{_M}._judge:judge_sections", uses_tables=True)
    register_step_view(FAMILY, f"{_M}._viewer:step_view")
    register_step_annotations(FAMILY, f"{_M}._viewer:step_annotations", name="terminal_detection")
    own_pass_at_k(FAMILY)  # its own pass/discovery/interaction@k section, by terminal task id
    for name, where, description in (
        (
            "terminal_use",
            "_harness:TerminalUseHarness",
            "the paper's terminal_use tool (App. E, Fig. 10; benchmark=appworld|swe-bench: Figs. 11-12)",
        ),
        ("default", "_harness:TerminalUseHarness", "= terminal_use"),
        ("terminus-1", "_terminus:Terminus1Harness", "Terminus 1 JSON, blocking commands"),
        ("terminus-2", "_terminus:Terminus2Harness", "Terminus 2 JSON, completion confirmed twice"),
        ("terminus", "_terminus:Terminus2Harness", "= terminus-2 (earlier name)"),
        (
            "swe-agent",
            "_swe_agent:SWEAgentHarness",
            "SWE-agent's default scaffold: bash (+ str_replace_editor "
            "with tools=bash+editor), OBSERVATION turns, submit",
        ),
    ):
        register_harness(name, f"{_M}.{where}", families=(FAMILY,), description=description)
    for name, (entries, description) in named_suites().items():
        register_suite(name, entries, description)
    from exploreval.core import register_profile_part
    from exploreval.suites.terminal._profile import profile_part

    register_profile_part(profile_part(len(builtin_task_ids())))


PLUGIN = SuitePlugin(
    name="terminal",
    description="Agents Explore but Agents Ignore: terminal tasks with solution injection",
    register=register,
    commands="exploreval.suites.terminal._cli:register",
    families=(FAMILY,),
    docs="docs/terminal.md",
)
