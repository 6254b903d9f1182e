"""Named grid experiments of Appendix C.2 as experiment-spec dicts (``exploreval run -c``).

* ``main``: the 3 x 3 main grid (exploration demand x DAG size) x seeds 0, 1, 2 = 27 maps.
* ``semantic``: the four cooking maps, semantic and symbolic naming, seeds 0-4.
* ``figure20``: Appendix G's fixed 8 x 8 map: per graph (exploration demand, DAG size) 32 maps
  spread over its three levels, each run 3 times (the paper's "96 runs on 32 different maps with
  3 random seeds"); the medium/medium maps serve both graphs.

LLM agents are added per prompt set: ``base``, ``exploration``, ``exploitation``,
``balance``, each with reasoning off ("default-*") or on ("reasoning-*"). Each suite defaults
to the prompt sets the paper ran it with (``SUITE_PROMPT_SETS``): all 8 for ``main``, ``default``
and ``reasoning`` for ``semantic`` (Appendix C.2), ``default`` for ``figure20`` (the paper does not
say; its other GPT-4.1 analyses use the default prompt). The ``memory`` harness gives the
harness-engineering ablation.
"""

from __future__ import annotations

from typing import Any

from exploreval.suites.grid._catalog import FIGURE20_REPEATS, figure20_suite_entries
from exploreval.suites.grid._env import PACKAGED_MAPS
from exploreval.suites.grid._generator import MAIN_SUITE_SEEDS, PRESETS
from exploreval.suites.grid._prompts import STRATEGY_SENTENCES

ENV_ID = "exploreval/GridDAG-v0"
SUITES = ("main", "semantic", "figure20")
SCRIPTED_BASELINES = ("random", "frontier", "exploit_first", "oracle")
#: The paper's prompt-set names -> (strategy, reasoning).
PROMPT_SETS: dict[str, tuple[str, bool]] = {
    ("reasoning" if reasoning else "default") + ("" if s == "base" else f"-{s}"): (s, reasoning)
    for reasoning in (False, True)
    for s in STRATEGY_SENTENCES
}

#: The prompt sets each suite runs when none are named (Appendix C.2; None = all 8).
SUITE_PROMPT_SETS: dict[str, tuple[str, ...] | None] = {
    "main": None,
    "semantic": ("default", "reasoning"),
    "figure20": ("default",),
}


def llm_agents(
    model: str,
    prompt_sets: list[str] | None = None,
    harness: str = "react",
    base_url: str | None = None,
    history: str = "full",
    sampling: dict[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """One LLM agent spec per prompt set (default: all 8)."""
    chosen = prompt_sets or list(PROMPT_SETS)
    agents: list[dict[str, Any]] = []
    for name in chosen:
        if name not in PROMPT_SETS:
            raise ValueError(f"unknown prompt set {name!r}; known: {', '.join(PROMPT_SETS)}")
        strategy, reasoning = PROMPT_SETS[name]
        agent: dict[str, Any] = {
            "kind": "llm",
            "label": f"{model}/{harness}/{name}",
            "model": model,
            "harness": harness,
            "harness_options": {"strategy": strategy, "reasoning": reasoning},
            "history": history,
            "sampling": dict(sampling or {"temperature": 0.0}),
        }
        if base_url:
            agent["base_url"] = base_url
        agents.append(agent)
    return agents


def main_suite_spec(
    agents: list[dict[str, Any]] | None = None, suite: str = "main", name: str | None = None
) -> dict[str, Any]:
    """The experiment dict of a named suite (scripted baselines unless ``agents`` given)."""
    suites: list[dict[str, Any]]
    if suite == "main":
        suites = [{"env_id": ENV_ID, "presets": list(PRESETS), "seeds": list(MAIN_SUITE_SEEDS)}]
    elif suite == "semantic":
        presets = [f"{m}/{naming}" for m in PACKAGED_MAPS for naming in ("semantic", "symbolic")]
        suites = [{"env_id": ENV_ID, "presets": presets, "seeds": [0, 1, 2, 3, 4]}]
    elif suite == "figure20":
        suites = figure20_suite_entries()
    else:
        raise ValueError(f"unknown grid suite {suite!r}; known: {', '.join(SUITES)}")
    return {
        "name": name or f"grid-{suite}",
        "suites": suites,
        **({"repeats": FIGURE20_REPEATS} if suite == "figure20" else {}),
        "agents": agents
        if agents is not None
        else [{"kind": "scripted", "agent": a} for a in SCRIPTED_BASELINES],
    }
