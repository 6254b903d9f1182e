"""Runner: experiment specs -> episode plan -> executors (asyncio or Ray) -> run store.

Names load on first use (``exploreval.core._lazy``), so importing the package is cheap."""

from typing import TYPE_CHECKING

from exploreval.core import lazy_exports

if TYPE_CHECKING:
    from exploreval.runner._build import (
        ClientFactory,
        ClientPool,
        build_agent,
        check_api_keys,
    )
    from exploreval.runner._check import (
        EnvCheckError,
        check_env,
    )
    from exploreval.runner._episode import (
        EpisodeSpec,
        run_episode,
        run_single,
    )
    from exploreval.runner._errors import (
        ConfigMismatchError,
        RunFailedError,
        RunInterruptedError,
        SpecError,
    )
    from exploreval.runner._options import (
        api_speller,
        cli_speller,
        experiment_from_options,
        key_values,
        refuse_repeats,
        split_models,
    )
    from exploreval.runner._plan import (
        check_buildable,
        pending_episodes,
        plan_episodes,
    )
    from exploreval.runner._play import Totals
    from exploreval.runner._ray import placement_summary
    from exploreval.runner._runner import (
        Runner,
        RunSummary,
        run_experiment,
    )
    from exploreval.runner._spec import (
        AgentSpec,
        BudgetSpec,
        ExperimentSpec,
        SuiteSpec,
        load_spec,
        parse_seeds,
        spec_from_dict,
    )

_EXPORTS: dict[str, str] = {
    "RunInterruptedError": "._errors",
    "EnvCheckError": "._check",
    "check_env": "._check",
    "AgentSpec": "._spec",
    "BudgetSpec": "._spec",
    "ClientFactory": "._build",
    "ClientPool": "._build",
    "ConfigMismatchError": "._errors",
    "EpisodeSpec": "._episode",
    "ExperimentSpec": "._spec",
    "RunFailedError": "._errors",
    "RunSummary": "._runner",
    "Runner": "._runner",
    "placement_summary": "._ray",
    "SpecError": "._errors",
    "SuiteSpec": "._spec",
    "Totals": "._play",
    "build_agent": "._build",
    "check_api_keys": "._build",
    "check_buildable": "._plan",
    "load_spec": "._spec",
    "parse_seeds": "._spec",
    "pending_episodes": "._plan",
    "plan_episodes": "._plan",
    "run_episode": "._episode",
    "run_experiment": "._runner",
    "run_single": "._episode",
    "spec_from_dict": "._spec",
    "api_speller": "._options",
    "cli_speller": "._options",
    "experiment_from_options": "._options",
    "key_values": "._options",
    "split_models": "._options",
    "refuse_repeats": "._options",
}


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
__all__ = [
    "RunInterruptedError",
    "EnvCheckError",
    "check_env",
    "AgentSpec",
    "BudgetSpec",
    "ClientFactory",
    "ClientPool",
    "ConfigMismatchError",
    "EpisodeSpec",
    "ExperimentSpec",
    "RunFailedError",
    "RunSummary",
    "Runner",
    "placement_summary",
    "SpecError",
    "SuiteSpec",
    "Totals",
    "build_agent",
    "check_api_keys",
    "check_buildable",
    "load_spec",
    "parse_seeds",
    "pending_episodes",
    "plan_episodes",
    "run_episode",
    "run_experiment",
    "run_single",
    "spec_from_dict",
    "api_speller",
    "cli_speller",
    "experiment_from_options",
    "key_values",
    "split_models",
    "refuse_repeats",
]
