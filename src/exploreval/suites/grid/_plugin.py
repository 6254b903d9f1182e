"""The grid suite as a plugin: what it registers (lazily) and the CLI commands it adds."""

from __future__ import annotations

from exploreval.core import SuitePlugin
from exploreval.suites.grid._catalog import (
    DEFAULT_PRESET,
    ENV_ID,
    FAMILY,
    FIGURE20_REPEATS,
    MAIN_SUITE_SEEDS,
    PACKAGED_MAPS,
    figure20_preset_names,
    figure20_suite_entries,
    main_preset_names,
    map_preset_names,
)

_M = "exploreval.suites.grid"


def register() -> None:
    from exploreval.metrics import register_headline_metrics as _headline

    _headline(
        FAMILY,
        ("explore_error", "exploit_error", "coverage", "nodes_achieved", "oracle_step_ratio"),
    )
    from exploreval.agents import register_agent, register_harness
    from exploreval.core import register_env, register_suite
    from exploreval.metrics import (
        register_budget,
        register_episode_metrics,
        register_run_metrics,
        register_state_identity,
    )
    from exploreval.report import (
        register_report,
        register_step_annotations,
        register_step_view,
    )

    register_env(
        ENV_ID,
        f"{_M}._env:GridDAGEnv",
        family=FAMILY,
        presets=[*main_preset_names(), *figure20_preset_names(), *map_preset_names()],
        default_preset=DEFAULT_PRESET,
        description="Partially observable grid map with a hidden task DAG (Park et al.)",
        success_means="the goal node was achieved within the map's hidden step budget",
    )
    for name, cls, description in (
        ("random", "RandomWalkAgent", "uniform random admissible move"),
        (
            "frontier",
            "FrontierAgent",
            "nearest unobserved cell; exploits a pending state when it is closer",
        ),
        (
            "exploit_first",
            "ExploitFirstAgent",
            "achieves every pending state first, explores otherwise",
        ),
        (
            "oracle",
            "OracleAgent",
            "privileged: exact shortest achievement walk (lower bound on steps)",
        ),
    ):
        register_agent(name, f"{_M}._agents:{cls}", families=(FAMILY,), description=description)
    register_harness(
        "react",
        f"{_M}._harness:ReactHarness",
        families=(FAMILY,),
        description="Appendix C.3 prompts",
    )
    register_harness(
        "default", f"{_M}._harness:ReactHarness", families=(FAMILY,), description="= react"
    )
    register_harness(
        "memory",
        f"{_M}._harness:MemoryHarness",
        families=(FAMILY,),
        description="react + memory summary (App. D)",
    )
    register_episode_metrics(FAMILY, "grid_env", f"{_M}._metrics:grid_episode_metrics")
    register_episode_metrics(
        FAMILY, "explore_exploit", f"{_M}._explore_exploit_tables:explore_exploit_row"
    )
    register_run_metrics(
        FAMILY,
        "explore_exploit",
        f"{_M}._explore_exploit_tables:explore_exploit_from_rows",
        partial=f"{_M}._explore_exploit_tables:episode_summary",
    )
    register_report(FAMILY, "grid_trajectories", f"{_M}._report:trajectory_report")
    register_report(
        FAMILY, "explore_exploit_figure1", f"{_M}._explore_exploit_report:figure1_report"
    )
    register_report(
        FAMILY, "explore_exploit_figure5", f"{_M}._explore_exploit_report:figure5_report"
    )
    register_report(FAMILY, "grid_comparisons", f"{_M}._comparisons:comparisons_report")
    register_run_metrics(
        FAMILY,
        "exploration_fraction",
        f"{_M}._explore_exploit_tables:exploration_fraction_tables",
        partial=f"{_M}._explore_exploit_tables:exploration_fraction_row",
    )
    register_report(
        FAMILY,
        "explore_exploit_figure4a",
        f"{_M}._explore_exploit_report:figure4a_report",
        uses_tables=True,
    )
    register_state_identity(FAMILY, f"{_M}._text:STATE_IDENTITY")
    register_budget(FAMILY, f"{_M}._metrics:record_budget")
    register_step_view(FAMILY, f"{_M}._viewer:step_view")
    register_step_annotations(FAMILY, f"{_M}._viewer:step_annotations", name="explore_exploit")
    register_suite(
        "grid-main",
        [{"env_id": ENV_ID, "presets": main_preset_names(), "seeds": list(MAIN_SUITE_SEEDS)}],
        "Grid paper, main experiment: exploration level x DAG size (3x3) x seeds 0,1,2",
    )
    register_suite(
        "grid-figure20",
        figure20_suite_entries(),
        "Grid paper, Figure 20: the fixed 8x8 map, 32 maps per graph (exploration demand, DAG "
        f"size); run with --repeats {FIGURE20_REPEATS} as the paper does",
    )
    register_suite(
        "grid-semantic",
        [{"env_id": ENV_ID, "presets": map_preset_names(), "seeds": [0, 1, 2, 3, 4]}],
        f"Grid paper, Appendix E: {len(PACKAGED_MAPS)} cooking maps, semantic and symbolic names, seeds 0-4",
    )
    from exploreval.core import register_profile_part
    from exploreval.suites.grid._profile import profile_part

    register_profile_part(profile_part())


PLUGIN = SuitePlugin(
    name="grid",
    description="Grid maps with hidden task DAGs: exploration vs exploitation errors (Park et al.)",
    register=register,
    commands=f"{_M}._cli:register",
    families=(FAMILY,),
    docs="docs/grid.md",
)
