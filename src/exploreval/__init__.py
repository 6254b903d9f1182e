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

import typing as _typing  # noqa: E402

from exploreval.core import VERSION as __version__
from exploreval.core import lazy_exports as _lazy_exports  # noqa: E402
from exploreval.core import register_all_with_gymnasium as _register_gym  # noqa: E402

_register_gym()

#: The front door: name -> where it lives (loaded on first use).
_EXPORTS = {
    "run": "._api",
    "arun": "._api",
    "open_run": "._api",
    "Run": "._api",
    "score": "._api",
    "compare": "._api",
    "write_report": "._api",
    "make": "._api",
    "register": "._api",
    "ExperimentSpec": ".runner",
    "EpisodeRecord": ".core",
}

if _typing.TYPE_CHECKING:  # what type checkers see of the lazy names (tests keep the two equal)
    from exploreval._api import (
        Run,
        arun,
        compare,
        make,
        open_run,
        register,
        run,
        score,
        write_report,
    )
    from exploreval.core import EpisodeRecord
    from exploreval.runner import ExperimentSpec

__getattr__, __dir__ = _lazy_exports(__name__, _EXPORTS, globals())

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
