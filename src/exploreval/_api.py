"""The front door: what a notebook needs, in a few names (``import exploreval as ev``).

Each function is the Python twin of a CLI command and goes through the same code: ``run`` is
``exploreval run``, ``score`` is ``exploreval score``, ``compare`` is ``exploreval compare``,
``write_report`` is ``exploreval report``, ``open_run`` reads a run directory (its records, and its
columnar tables through DuckDB). ``make`` and ``register`` are the env registry's.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Unpack

if TYPE_CHECKING:
    import duckdb
    import pandas as pd

    from exploreval.analysis import Comparison
    from exploreval.core import AsyncTextEnv, EnvSpec, EpisodeRecord, RunOptions, TextEnv
    from exploreval.runner import ExperimentSpec, RunSummary
    from exploreval.store import RunColumns, RunManifest

PathLike = str | Path


def _spec(
    experiment: ExperimentSpec | dict[str, Any] | PathLike | None, options: dict[str, Any]
) -> ExperimentSpec:
    """The experiment ``run`` was given: the same option table as ``exploreval run``'s flags
    (``runner.RUN_OPTIONS``), so a keyword and its flag reach the same spec field."""
    from exploreval.core import OPTIONS_BY_NAME
    from exploreval.runner import (
        ExperimentSpec,
        SpecError,
        api_speller,
        experiment_from_options,
        load_spec,
        spec_from_dict,
    )

    commands = sorted(
        n for n in options if n in OPTIONS_BY_NAME and OPTIONS_BY_NAME[n].role == "command"
    )
    if commands:
        raise SpecError(
            f"exploreval.run: {', '.join(commands)} belong to the command line, not to run(...)"
        )
    if experiment is None:
        return experiment_from_options(
            options, set(options), spell=api_speller, source="exploreval.run(...)"
        )
    if isinstance(experiment, ExperimentSpec):
        stored = experiment
    elif isinstance(experiment, dict):
        stored = spec_from_dict(experiment, "exploreval.run(experiment)")
    else:
        stored = load_spec(experiment)
    return experiment_from_options(
        options, set(options), stored=stored, spell=api_speller,
        source="exploreval.run(experiment, ...)",
    )  # fmt: skip


def run(
    experiment: ExperimentSpec | dict[str, Any] | PathLike | None = None,
    *,
    out: PathLike,
    force: bool = False,
    **options: Unpack[RunOptions],
) -> RunSummary:
    """Run (or resume) an experiment into ``out``; the same as ``exploreval run``.

    ``experiment`` is an ``ExperimentSpec``, a dict in the config file's shape, or the path of a
    YAML/TOML config. Without one, the keywords describe it as ``exploreval run``'s flags do, with
    the same names (``exploreval.runner.RUN_OPTIONS``): ``env``, ``presets``, ``seeds``,
    ``agents`` (scripted names or agent dicts), ``models``, ``history``, ``temperature``,
    ``concurrency``, ``max_steps``, ``repeats``... With one, only the options that may override a
    stored experiment are taken (``seeds``, ``repeats``, ``concurrency``, ``max_connections``,
    budgets...), as with ``--config``. Re-running the same call finishes only the missing
    episodes.

    >>> import exploreval as ev
    >>> summary = ev.run(env="exploreval/GridDAG-v0", presets="explore-low/dag-small",
    ...                  seeds="0-2", agents=["frontier", "random"], out="runs/nb")  # doctest: +SKIP
    >>> summary.status  # doctest: +SKIP
    'finished'
    """
    from exploreval.runner import run_experiment

    spec = _spec(experiment, dict(options))
    return run_experiment(spec, str(out), force=force)


async def arun(
    experiment: ExperimentSpec | dict[str, Any] | PathLike | None = None,
    *,
    out: PathLike,
    force: bool = False,
    **options: Unpack[RunOptions],
) -> RunSummary:
    """:func:`run` for code already in an event loop (a notebook cell with ``await``): the
    experiment runs on a worker thread with its own loop, this one stays free.

    >>> summary = await ev.arun(env="exploreval/Bandit-v0", agents="ucb", out="runs/b")  # doctest: +SKIP
    """
    return await asyncio.to_thread(lambda: run(experiment, out=out, force=force, **options))


class Run:
    """A run directory opened for analysis: its manifest, records, scores and columnar tables.

    >>> r = ev.open_run("runs/nb")  # doctest: +SKIP
    >>> r.episodes().df().groupby("agent")["success"].mean()  # doctest: +SKIP
    >>> r.sql("select agent, avg(n_steps) from episodes group by 1").df()  # doctest: +SKIP
    """

    def __init__(self, path: PathLike) -> None:
        from exploreval.store import RunDir, StoreError

        self.path = Path(path)
        self._dir = RunDir(self.path)
        if not self._dir.exists():
            raise StoreError(f"{self.path} is not a run directory (no manifest.json)")
        self._con: duckdb.DuckDBPyConnection | None = None

    def __repr__(self) -> str:
        return f"Run({str(self.path)!r})"

    @property
    def manifest(self) -> RunManifest:
        """What the run is and how far it got (status, config, usage)."""
        return self._dir.read_manifest()

    def records(self) -> Iterator[EpisodeRecord]:
        """Each episode's latest record, one at a time (typed ``EpisodeRecord`` objects)."""
        yield from self._dir.latest_records().values()

    def record(self, episode_id: str) -> EpisodeRecord:
        """One episode's latest record, read from its place in the log."""
        from exploreval.store import StoreError

        row = self.sql(
            "select log_offset, log_length from episodes where episode_id = $id",
            params={"id": episode_id},
        ).fetchall()
        if not row:
            raise StoreError(f"{self.path} has no episode {episode_id!r}")
        return self._columns().record(int(row[0][0]), int(row[0][1]))

    def _columns(self) -> RunColumns:
        from exploreval.store import RunColumns

        return RunColumns(self._dir)

    def connection(self) -> duckdb.DuckDBPyConnection:
        """A DuckDB connection with the run's views (``episodes``, ``steps``, ``all_*``,
        ``results``), synced with the log on first use."""
        if self._con is None:
            self._con = self._columns().connect()
        return self._con

    def sql(
        self, query: str, params: dict[str, Any] | None = None
    ) -> duckdb.DuckDBPyRelation | duckdb.DuckDBPyConnection:
        """A DuckDB relation (``.df()``, ``.to_arrow_table()``, ``.pl()``) for ``query`` over the views;
        with ``params``, the executed statement (the same methods)."""
        if params:
            return self.connection().execute(query, params)
        return self.connection().sql(query)

    def episodes(self) -> duckdb.DuckDBPyRelation:
        """One row per episode (its latest record) as a DuckDB relation."""
        return self.connection().sql("select * from episodes")

    def steps(self, columns: Sequence[str] | None = None) -> duckdb.DuckDBPyRelation:
        """One row per step (of each episode's latest record), only ``columns`` when given."""
        chosen = ", ".join(f'"{c}"' for c in columns) if columns else "*"
        return self.connection().sql(f"select {chosen} from steps")

    def results(self) -> pd.DataFrame:
        """One row per episode with every metric (``score`` computes it when needed)."""
        return score(self.path)

    def to_pandas(self) -> pd.DataFrame:
        """The episodes table as pandas."""
        frame: pd.DataFrame = self.episodes().df()
        return frame


def open_run(path: PathLike) -> Run:
    """Open a run directory for analysis (records, tables, SQL).

    >>> r = ev.open_run("runs/nb")  # doctest: +SKIP
    """
    return Run(path)


def score(run_dir: PathLike | Run) -> pd.DataFrame:
    """Every metric of every episode, recomputed from the stored log (``exploreval score``):
    one row per episode (errored episodes included, with their error); also written to
    ``results.parquet``.

    >>> table = ev.score("runs/nb")  # doctest: +SKIP
    >>> table.groupby("agent")["explore_error"].mean()  # doctest: +SKIP
    """
    from exploreval.analysis import score_run
    from exploreval.store import RunDir

    path = run_dir.path if isinstance(run_dir, Run) else Path(run_dir)
    return score_run(RunDir(path)).all_rows()


def compare(
    a: PathLike | Run,
    b: PathLike | Run,
    *,
    agent_a: str | None = None,
    agent_b: str | None = None,
) -> Comparison:
    """A paired comparison of two runs on their shared episode specs (``exploreval compare``):
    per agent pair, each metric's mean difference with its paired bootstrap CI and p-values.

    >>> c = ev.compare("runs/before", "runs/after")  # doctest: +SKIP
    >>> c.comparisons[0].metrics[0]  # doctest: +SKIP
    """
    from exploreval.analysis import compare_tables, run_labels, score_run
    from exploreval.store import RunDir

    dirs = [RunDir(x.path if isinstance(x, Run) else Path(x)) for x in (a, b)]
    names = run_labels([(d.read_manifest(), d.path) for d in dirs])
    tables = [score_run(d).table for d in dirs]
    return compare_tables(tables[0], tables[1], name_a=names[0], name_b=names[1],
                          agent_a=agent_a, agent_b=agent_b)  # fmt: skip


def write_report(*runs: PathLike | Run, out: PathLike | None = None, html: bool = True) -> Path:
    """Write report.md (and a self-contained index.html) for one or several runs; returns the
    path of report.md (``exploreval report``). Not named ``report``: that is the package suites
    register their report sections into (``exploreval.report``), and importing it would
    replace a function of the same name on the package.

    >>> ev.write_report("runs/nb")  # doctest: +SKIP
    PosixPath('runs/nb/report/report.md')
    """
    from exploreval.analysis import build_report
    from exploreval.store import RunDir

    if not runs:
        raise ValueError("exploreval.write_report needs at least one run directory")
    dirs = [RunDir(x.path if isinstance(x, Run) else Path(x)) for x in runs]
    return build_report(dirs if len(dirs) > 1 else dirs[0], Path(out) if out else None, html=html)


def make(env_id: str, preset: str | None = None, **options: Any) -> TextEnv:
    """A registered environment (Gymnasium conventions: ``reset(seed=)``, 5-tuple ``step``).

    >>> env = ev.make("exploreval/GridDAG-v0", preset="explore-low/dag-small")
    >>> observation, info = env.reset(seed=0)
    >>> observation.splitlines()[0]
    'Step 0. You are at [2, 0].'
    """
    from exploreval.core import make_env

    return make_env(env_id, preset=preset, **options)


def register(
    env_id: str,
    entry_point: type[TextEnv] | type[AsyncTextEnv] | str,
    *,
    family: str,
    description: str = "",
    presets: Sequence[str] | None = None,
    default_preset: str | None = None,
    nondeterministic: bool | None = None,
    extras: tuple[str, ...] = (),
    success_means: str = "",
) -> EnvSpec:
    """Register an environment class (or ``"module:Class"``) under a versioned id such as
    ``"myorg/Maze-v0"``; then ``make``, ``run`` and ``inspect eval`` know it.

    >>> ev.register("myorg/Maze-v0", "mypkg.maze:MazeEnv", family="maze")  # doctest: +SKIP
    """
    from exploreval.core import register_env

    return register_env(
        env_id, entry_point, family=family, description=description,
        presets=list(presets) if presets is not None else None, default_preset=default_preset,
        nondeterministic=nondeterministic, extras=extras, success_means=success_means,
    )  # fmt: skip
