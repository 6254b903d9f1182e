"""The Task2Quiz suite as a plugin: registers lazily (``exploreval envs`` never imports textworld)."""

from __future__ import annotations

from exploreval.core import SuitePlugin

_M = "exploreval.suites.task2quiz"
ENV_ID = "exploreval/Task2Quiz-v0"
FAMILY = "task2quiz"


def register() -> None:
    from exploreval.metrics import register_headline_metrics as _headline

    _headline(FAMILY, ("tsr", "eus", "eus_answerable", "explore_error_rate", "exploit_error_rate"))
    from exploreval.agents import register_agent, register_harness
    from exploreval.core import register_env, register_suite
    from exploreval.metrics import (
        register_budget,
        register_episode_metrics,
        register_run_metrics,
        register_state_identity,
    )
    from exploreval.report import register_report, register_step_annotations, register_step_view

    register_env(
        ENV_ID,
        f"{_M}._env:Task2QuizEnv",
        family=FAMILY,
        presets=("easy", "medium", "hard"),
        default_preset="easy",
        extras=("textworld",),
        description="TextWorld coverage tasks in one world, then a quiz (Task2Quiz: TSR, EUS)",
        success_means="every Stage-1 task of the world was won (TSR = 1); the quiz is scored "
        "separately (EUS)",
    )
    agents = (
        (
            "walkthrough",
            "WalkthroughAgent",
            "privileged: each task's planned walkthrough (TSR 1.0)",
        ),
        (
            "explorer",
            "ExplorerAgent",
            "privileged planner: tours the unseen world before each goal",
        ),
        ("task-only", "TaskOnlyAgent", "searches each goal with what the game shows; no map"),
        ("quiz-oracle", "QuizOracleAgent", "walkthroughs, then honest answers (EUS 1.0 check)"),
        ("random-explorer", "RandomExplorerAgent", "uniformly random admissible command"),
        ("random", "RandomExplorerAgent", "= random-explorer (the env checker's random agent)"),
    )
    for name, cls, description in agents:
        register_agent(
            name,
            f"{_M}._agents_play:{cls}",
            families=(FAMILY,),
            description=f"{description}; option quiz=recall|honest|guess|abstain",
        )
    register_harness(
        "default",
        f"{_M}._harness:Task2QuizHarness",
        families=(FAMILY,),
        description="Appendix C: observation + inventory + score, {reason, command} JSON; the "
        "QA template with the memory (--history full|window:K|summary|retrieval:K|none) as "
        "context; options announce_quiz, lenient",
    )
    register_episode_metrics(FAMILY, "task2quiz", f"{_M}._quiz_metrics:task2quiz_episode_metrics")
    register_run_metrics(
        FAMILY,
        "task2quiz",
        f"{_M}._quiz_metrics:task2quiz_tables_from_rows",
        partial=f"{_M}._quiz_metrics:quiz_rows",
    )
    # TIDE: every task is its own trajectory, capped per task; a state is the observation with
    # the task header and score messages removed.
    register_budget(FAMILY, f"{_M}._tide:task_budget")
    register_state_identity(FAMILY, f"{_M}._tide:STATE_IDENTITY")
    presets = ["easy", "medium", "hard"]
    register_suite(
        "task2quiz-bench",
        [{"env_id": ENV_ID, "presets": presets, "seeds": list(range(10))}],
        "Task2Quiz benchmark (T2QBench-like): 3 difficulties x 10 environments, full quizzes",
    )
    from exploreval.core import register_profile_part
    from exploreval.suites.task2quiz._profile import profile_part

    register_profile_part(profile_part())
    register_suite(
        "task2quiz-smoke",
        [
            {
                "env_id": ENV_ID,
                "presets": ["easy"],
                "seeds": [0, 1],
                "env_options": {"max_questions": 10},
            }
        ],  # fmt: skip
        "Task2Quiz quick check: 2 easy environments, 10 questions each (seeded subsample)",
    )
    # Table 2, Figures 4/5/6/8, the run's worlds beside Table 1, diagnostics, world maps
    register_report(FAMILY, "task2quiz", f"{_M}._report:task2quiz_sections")
    # the viewer: world map with the path, or the quiz answer with its evidence; per-step values
    register_step_view(FAMILY, f"{_M}._viewer:step_view")
    register_step_annotations(FAMILY, f"{_M}._viewer:step_annotations", name="task2quiz_steps")


PLUGIN = SuitePlugin(
    name="task2quiz",
    description="Task2Quiz: coverage tasks on TextWorld worlds, then trajectory-conditioned quizzes",
    register=register,
    commands=f"{_M}._cli:register",
    families=(FAMILY,),
    docs="docs/task2quiz.md",
)
