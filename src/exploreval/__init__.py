"""exploreval: measure how LLM agents explore and exploit.

The front door (each name loads on first use, so ``import exploreval`` stays fast)::

    import exploreval as ev

    ev.run(env="exploreval/GridDAG-v0", presets="explore-low/dag-small", seeds="0-2",
           agents=["frontier", "random"], out="runs/nb")      # exploreval run
    ev.score("runs/nb")                                       # exploreval score -> DataFrame
    r = ev.open_run("runs/nb")                                # records, tables, SQL
    r.sql("select agent, avg(success::int) from episodes group by 1").df()
    ev.compare("runs/a", "runs/b")                            # exploreval compare
    ev.write_report("runs/nb")                                # exploreval report
    env = ev.make("exploreval/Bandit-v0"); ev.register("me/Maze-v0", MazeEnv, family="maze")

Everything else lives in the subpackages (``exploreval.core``, ``.runner``, ``.metrics``,
``.analysis``, ``.store``...); docs/python-api.md walks through a notebook.

Importing the package makes every env id available to Gymnasium, so
``gymnasium.make("exploreval/GridDAG-v0")`` works after ``import exploreval``. It does so lazily
(``core._gym``): registration happens when Gymnasium is imported, so ``import exploreval`` and
``exploreval --help`` pay for neither Gymnasium nor numpy.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("exploreval")
except PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0.0.0"

from exploreval.core import register_all_with_gymnasium as _register_gym  # noqa: E402

_register_gym()

#: The front door: name -> where it lives (loaded on first use).
_FRONT_DOOR = {
    "run": "exploreval._api",
    "arun": "exploreval._api",
    "open_run": "exploreval._api",
    "Run": "exploreval._api",
    "score": "exploreval._api",
    "compare": "exploreval._api",
    "write_report": "exploreval._api",
    "make": "exploreval._api",
    "register": "exploreval._api",
    "ExperimentSpec": "exploreval.runner",
    "EpisodeRecord": "exploreval.core",
}


def __getattr__(name: str) -> object:
    module = _FRONT_DOOR.get(name)
    if module is None:
        raise AttributeError(f"module 'exploreval' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_FRONT_DOOR])


__all__ = [
    "EpisodeRecord",
    "ExperimentSpec",
    "Run",
    "__version__",
    "arun",
    "compare",
    "make",
    "open_run",
    "register",
    "run",
    "score",
    "write_report",
]
