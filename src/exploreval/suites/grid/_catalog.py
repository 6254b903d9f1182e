"""Names the grid suite registers before any heavy module is imported (presets, maps, seeds).

``EnvSpec.load`` checks these against ``GridDAGEnv.presets`` so the two can never drift apart.
"""

from __future__ import annotations

from typing import Any

ENV_ID = "exploreval/GridDAG-v0"
FAMILY = "grid"
EXPLORE_LEVEL_NAMES = ("low", "medium", "high")
DAG_LEVEL_NAMES = ("small", "medium", "large")
#: Cooking maps of Appendix E shipped with the package (``maps/<name>.json``).
PACKAGED_MAPS = ("custom-201", "custom-202", "custom-203", "custom-204")
NAMINGS = ("semantic", "symbolic")
#: Seeds of the named main suite (Appendix C.2).
MAIN_SUITE_SEEDS = (0, 1, 2)
DEFAULT_PRESET = "explore-low/dag-small"


def main_preset_names() -> list[str]:
    return [f"explore-{e}/dag-{d}" for e in EXPLORE_LEVEL_NAMES for d in DAG_LEVEL_NAMES]


def map_preset_names() -> list[str]:
    return [f"{m}/{naming}" for m in PACKAGED_MAPS for naming in NAMINGS]


def figure20_preset_names() -> list[str]:
    """Appendix G's fixed 8x8 map: demand levels at the medium DAG, DAG sizes at medium demand."""
    pairs = [(e, "medium") for e in EXPLORE_LEVEL_NAMES]
    pairs += [("medium", d) for d in DAG_LEVEL_NAMES if d != "medium"]
    return [f"8x8/explore-{e}/dag-{d}" for e, d in pairs]


#: Figure 20: "96 runs on 32 different maps with 3 random seeds" per graph.
FIGURE20_MAPS, FIGURE20_REPEATS = 32, 3


def figure20_seeds() -> list[range]:
    """A graph's 32 map seeds split over its three levels in order (11, 10, 11)."""
    cuts = [round(FIGURE20_MAPS * k / 3) for k in range(4)]
    return [range(cuts[k], cuts[k + 1]) for k in range(3)]


def figure20_suite_entries() -> list[dict[str, Any]]:
    """One entry per 8x8 preset with its seeds; the medium/medium maps serve both graphs."""
    out: dict[str, list[int]] = {}
    for graph, names in enumerate((EXPLORE_LEVEL_NAMES, DAG_LEVEL_NAMES)):
        for name, seeds in zip(names, figure20_seeds(), strict=True):
            explore, dag = (name, "medium") if graph == 0 else ("medium", name)
            out.setdefault(f"8x8/explore-{explore}/dag-{dag}", list(seeds))
    assert sorted(out) == sorted(figure20_preset_names())
    return [
        {"env_id": ENV_ID, "presets": [preset], "seeds": seeds} for preset, seeds in out.items()
    ]
