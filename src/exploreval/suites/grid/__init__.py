"""Grid maps with hidden task DAGs (Park et al., exploration/exploitation errors).

Importing this package registers ``exploreval/GridDAG-v0`` with its presets, the scripted
agents (random, frontier, exploit_first, oracle), the harnesses (react = default, memory),
the grid episode metrics, the trajectory report, and the explore/exploit metric
registrations of ``exploreval.suites.grid.explore_exploit`` when that module is installed."""

from typing import TYPE_CHECKING

from exploreval.core import lazy_exports

if TYPE_CHECKING:
    from exploreval.suites.grid._agents import (
        ExploitFirstAgent,
        FrontierAgent,
        OracleAgent,
        RandomWalkAgent,
    )
    from exploreval.suites.grid._belief import (
        GridBelief,
        StateFacts,
    )
    from exploreval.suites.grid._env import (
        PACKAGED_MAPS,
        GridDAGEnv,
        load_map,
        packaged_map_path,
    )
    from exploreval.suites.grid._generator import (
        DAG_LEVELS,
        EXPLORE_LEVELS,
        MAIN_SUITE_SEEDS,
        PRESETS,
        GeneratedTask,
        GeneratorConfig,
        SampledDag,
        generate,
        generate_task,
        is_symbolic_name,
        map_size,
        preset_config,
        random_name,
        sample_dag,
    )
    from exploreval.suites.grid._harness import (
        MemoryHarness,
        ReactHarness,
    )
    from exploreval.suites.grid._metrics import (
        grid_episode_metrics,
        record_positions,
    )
    from exploreval.suites.grid._paths import (
        OraclePlan,
        bfs_distances,
        goal_ancestors,
        oracle_plan,
        plan_moves,
        shortest_moves,
    )
    from exploreval.suites.grid._prompts import (
        STRATEGY_SENTENCES,
        system_prompt,
    )
    from exploreval.suites.grid._suite import (
        main_suite_spec,
    )
    from exploreval.suites.grid._task import (
        GRID_TASK_SCHEMA_VERSION,
        MOVES,
        Cell,
        GridNode,
        GridTask,
        GridTaskError,
    )
    from exploreval.suites.grid._text import (
        CellView,
        NodeView,
        ObservationParseError,
        format_observation,
        parse_env_action,
        parse_model_reply,
        parse_observation,
    )

_EXPORTS: dict[str, str] = {
    "Cell": "._task",
    "CellView": "._text",
    "DAG_LEVELS": "._generator",
    "EXPLORE_LEVELS": "._generator",
    "ExploitFirstAgent": "._agents",
    "FrontierAgent": "._agents",
    "GRID_TASK_SCHEMA_VERSION": "._task",
    "GeneratedTask": "._generator",
    "GeneratorConfig": "._generator",
    "GridBelief": "._belief",
    "GridDAGEnv": "._env",
    "GridNode": "._task",
    "GridTask": "._task",
    "GridTaskError": "._task",
    "MAIN_SUITE_SEEDS": "._generator",
    "MOVES": "._task",
    "MemoryHarness": "._harness",
    "NodeView": "._text",
    "ObservationParseError": "._text",
    "OracleAgent": "._agents",
    "OraclePlan": "._paths",
    "PACKAGED_MAPS": "._env",
    "PRESETS": "._generator",
    "RandomWalkAgent": "._agents",
    "ReactHarness": "._harness",
    "STRATEGY_SENTENCES": "._prompts",
    "SampledDag": "._generator",
    "StateFacts": "._belief",
    "bfs_distances": "._paths",
    "format_observation": "._text",
    "generate": "._generator",
    "generate_task": "._generator",
    "goal_ancestors": "._paths",
    "grid_episode_metrics": "._metrics",
    "is_symbolic_name": "._generator",
    "load_map": "._env",
    "main_suite_spec": "._suite",
    "map_size": "._generator",
    "oracle_plan": "._paths",
    "packaged_map_path": "._env",
    "parse_env_action": "._text",
    "parse_model_reply": "._text",
    "parse_observation": "._text",
    "plan_moves": "._paths",
    "preset_config": "._generator",
    "random_name": "._generator",
    "record_positions": "._metrics",
    "sample_dag": "._generator",
    "shortest_moves": "._paths",
    "system_prompt": "._prompts",
}

ENV_ID = "exploreval/GridDAG-v0"
FAMILY = "grid"

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
__all__ = [
    "Cell",
    "CellView",
    "DAG_LEVELS",
    "ENV_ID",
    "EXPLORE_LEVELS",
    "ExploitFirstAgent",
    "FAMILY",
    "FrontierAgent",
    "GRID_TASK_SCHEMA_VERSION",
    "GeneratedTask",
    "GeneratorConfig",
    "GridBelief",
    "GridDAGEnv",
    "GridNode",
    "GridTask",
    "GridTaskError",
    "MAIN_SUITE_SEEDS",
    "MOVES",
    "MemoryHarness",
    "NodeView",
    "ObservationParseError",
    "OracleAgent",
    "OraclePlan",
    "PACKAGED_MAPS",
    "PRESETS",
    "RandomWalkAgent",
    "ReactHarness",
    "STRATEGY_SENTENCES",
    "SampledDag",
    "StateFacts",
    "bfs_distances",
    "format_observation",
    "generate",
    "generate_task",
    "goal_ancestors",
    "grid_episode_metrics",
    "is_symbolic_name",
    "load_map",
    "main_suite_spec",
    "map_size",
    "oracle_plan",
    "packaged_map_path",
    "parse_env_action",
    "parse_model_reply",
    "parse_observation",
    "plan_moves",
    "preset_config",
    "random_name",
    "record_positions",
    "sample_dag",
    "shortest_moves",
    "system_prompt",
]
