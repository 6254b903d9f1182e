"""Grid-suite commands: export/check maps, write the named suites, render trajectories.

* ``exploreval grid-map PRESET --seed N [--out FILE]``: the generated (or packaged) map as
  custom-map JSON, plus an ASCII drawing on stderr.
* ``exploreval grid-check MAP.json``: validate a custom map; print its drawing, budget and
  oracle lower bound.
* ``exploreval grid-suite [main|semantic] --out FILE.yaml``: the paper's experiment as an
  experiment file for ``exploreval run --config``.
* ``exploreval grid-render RUN_DIR [--episode ID]`` or ``--task T.json --positions P.json``:
  PNG frames and an animated GIF of trajectories (Appendix F style).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape

from exploreval.core import CommandHost

_err = Console(stderr=True)


def _task_for_preset(preset: str, seed: int) -> tuple[Any, dict[str, Any]]:
    from exploreval.core import make_env

    env = make_env("exploreval/GridDAG-v0", preset=preset)
    env.reset(seed=seed)
    truth = env.ground_truth()
    from exploreval.suites.grid import GridTask

    return GridTask.from_dict(truth["task"]), truth


def grid_map_cmd(
    preset: Annotated[str, typer.Argument(help="Preset, e.g. explore-high/dag-large")],
    seed: Annotated[int, typer.Option(help="Seed (the env's reset seed)")] = 0,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Write the JSON here")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No drawing on stderr")] = False,
) -> None:
    """Export the map of a preset and seed as custom-map JSON (loadable with map=FILE)."""
    from exploreval.suites.grid._render import ascii_map

    task, truth = _task_for_preset(preset, seed)
    text = json.dumps(task.to_dict(), indent=1)
    if out is not None:
        try:
            out.write_text(text + "\n", encoding="utf-8")
        except OSError as exc:
            raise ValueError(f"cannot write {out}: {exc.strerror}") from None
        _err.print(f"wrote {out}", markup=False)
    else:
        typer.echo(text)
    if not quiet:
        _err.print(
            ascii_map(task, str(truth.get("naming", "semantic"))), highlight=False, markup=False
        )
        _err.print(
            f"budget {truth['budget']}, oracle lower bound {truth['oracle_steps']} steps",
            highlight=False,
        )


def grid_check_cmd(
    map_path: Annotated[Path, typer.Argument(metavar="MAP.json", help="Custom-map JSON file")],
    naming: Annotated[str, typer.Option(help="semantic | symbolic")] = "semantic",
) -> None:
    """Validate a custom map; print its drawing, step budget and oracle lower bound."""
    from exploreval.core import make_env
    from exploreval.suites.grid import GridTask
    from exploreval.suites.grid._render import ascii_map

    if not map_path.exists():
        raise FileNotFoundError(f"{map_path}: no such map file")
    task = GridTask.load(map_path)
    env = make_env("exploreval/GridDAG-v0", map=str(map_path), naming=naming)
    env.reset(seed=0)  # also checks the names can be shown
    truth = env.ground_truth()
    typer.echo(ascii_map(task, naming))
    oracle = truth["oracle_steps"]
    typer.echo(
        f"ok: {task.width}x{task.height}, {task.n_traversable} traversable cells, "
        f"{len(task.nodes)} nodes, goal {task.goal}, budget {task.step_budget}, "
        f"oracle lower bound {oracle if oracle is not None else 'n/a (too many nodes)'} steps"
    )


def grid_suite_cmd(
    suite: Annotated[
        str, typer.Argument(help="main (3x3 x seeds 0-2) | semantic | figure20 (8x8)")
    ] = "main",
    out: Annotated[Path, typer.Option("--out", "-o", help="Experiment YAML to write")] = Path(
        "grid-main.yaml"
    ),
    agent: Annotated[
        list[str], typer.Option("--agent", "-a", help="Scripted agent (repeatable)")
    ] = [],  # noqa: B006
    model: Annotated[str | None, typer.Option(help="Add LLM agents for this model")] = None,
    base_url: Annotated[str | None, typer.Option(help="OpenAI-compatible endpoint")] = None,
    prompt_set: Annotated[
        list[str],
        typer.Option(
            help="default, default-exploration, ..., reasoning-balance (repeatable; default: "
            "the paper's for the suite: all 8 for main, default and reasoning for semantic)"
        ),
    ] = [],  # noqa: B006
    harness: Annotated[str, typer.Option(help="react | memory")] = "react",
    history: Annotated[str, typer.Option(help="full | none | window:K | summary")] = "full",
) -> None:
    """Write a named grid experiment (the paper's main, semantic or Figure 20 suite) as YAML."""
    import yaml

    from exploreval.suites.grid._suite import (
        SCRIPTED_BASELINES,
        SUITE_PROMPT_SETS,
        SUITES,
        llm_agents,
        main_suite_spec,
    )

    if suite not in SUITES:
        raise ValueError(f"unknown grid suite {suite!r}; known: {', '.join(SUITES)}")
    agents: list[dict[str, Any]] = [{"kind": "scripted", "agent": a} for a in agent]
    if model:
        chosen = prompt_set or list(SUITE_PROMPT_SETS[suite] or []) or None
        agents += llm_agents(model, chosen, harness=harness, base_url=base_url, history=history)
    elif prompt_set:
        raise ValueError("--prompt-set needs --model")
    if not agents:
        agents = [{"kind": "scripted", "agent": a} for a in SCRIPTED_BASELINES]
    data = main_suite_spec(agents, suite=suite)
    assert _HOST is not None, "grid commands are registered through the suite plugin"
    n_episodes = _HOST.experiment_size(data, f"grid-suite {suite}")  # validate before writing
    try:
        out.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"cannot write {out}: {exc.strerror}") from None
    typer.echo(f"wrote {out}: {n_episodes} episodes. Run it with: exploreval run --config {out}")


def grid_render_cmd(
    run_dir: Annotated[Path | None, typer.Argument(help="Run directory")] = None,
    episode: Annotated[
        list[str], typer.Option("--episode", "-e", help="Episode id or prefix (repeatable)")
    ] = [],  # noqa: B006
    task_path: Annotated[
        Path | None, typer.Option("--task", help="Map JSON (with --positions)")
    ] = None,
    positions_path: Annotated[
        Path | None, typer.Option("--positions", help="JSON list of [x, y] at t = 0, 1, ...")
    ] = None,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Output directory")] = None,
    frames: Annotated[str, typer.Option(help="key | last | all | none | 0,5,10")] = "key",
    gif: Annotated[bool, typer.Option(help="Also write an animated GIF")] = True,
    max_gif_frames: Annotated[int, typer.Option(help="Subsample longer episodes")] = 120,
) -> None:
    """Render trajectories as PNG frames + GIF: map, node states, path, metric error marks."""
    from exploreval.suites.grid._render import render_record, render_trajectory

    frame_arg: str | list[int] = frames
    if frames not in ("key", "last", "all", "none"):
        try:
            frame_arg = [int(part) for part in frames.split(",") if part.strip()]
        except ValueError:
            raise ValueError(
                f"--frames {frames!r}: expected key, last, all, none or a comma list of t"
            ) from None
    results = []
    if task_path is not None or positions_path is not None:
        if task_path is None or positions_path is None or run_dir is not None:
            raise ValueError("give either RUN_DIR, or both --task and --positions")
        from exploreval.suites.grid import GridTask

        for path in (task_path, positions_path):
            if not path.exists():
                raise FileNotFoundError(f"{path}: no such file")
        task = GridTask.load(task_path)
        try:
            positions = json.loads(positions_path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise ValueError(
                f"{positions_path}: not valid JSON ({exc.msg} at line {exc.lineno})"
            ) from None
        if not isinstance(positions, list) or not all(
            isinstance(p, list) and len(p) == 2 and all(isinstance(v, int) for v in p)
            for p in positions
        ):
            raise ValueError(f"{positions_path}: expected a JSON list of [x, y] integer pairs")
        target = out or Path("grid_render")
        results.append(
            render_trajectory(
                task,
                [(p[0], p[1]) for p in positions],
                target,
                stem=task_path.stem,
                frames=frame_arg,
                gif=gif,
                max_gif_frames=max_gif_frames,
                title=task.name or task_path.name,
            )
        )
    else:
        if run_dir is None:
            raise ValueError("give a RUN_DIR (or --task and --positions)")
        from exploreval.store import RunDir
        from exploreval.suites.grid._report import pick_episodes

        run = RunDir(run_dir)
        if not run.episodes_path.exists():
            raise FileNotFoundError(f"{run_dir}: no episodes.jsonl (not a run directory?)")
        records = list(run.latest_records().values())
        if episode:
            chosen = []
            for prefix in episode:
                matches = [r for r in records if r.episode_id.startswith(prefix)]
                if len(matches) != 1:
                    raise ValueError(
                        f"--episode {prefix!r} matches {len(matches)} episodes in {run_dir}"
                        + ("" if matches else "; list them with exploreval score RUN_DIR --json")
                    )
                chosen.append(matches[0])
        else:
            chosen = pick_episodes(records)
            if not chosen:
                raise ValueError(f"{run_dir} holds no finished grid episodes")
        target = out or run.path / "grid_render"
        for record in chosen:
            results.append(
                render_record(
                    record, target, frames=frame_arg, gif=gif, max_gif_frames=max_gif_frames
                )
            )
    for result in results:
        for path in result.pngs:
            typer.echo(str(path))
        if result.gif:
            typer.echo(str(result.gif))
        if result.note:
            _err.print(f"[yellow]note[/]: {escape(str(result.note))}")


_HOST: CommandHost | None = None


def register(app: typer.Typer, host: CommandHost) -> None:
    """Add the grid suite's commands to the ``exploreval`` CLI."""
    global _HOST
    _HOST = host
    from exploreval.suites.grid._cli_score import score_grid_cmd

    app.command("score-grid")(score_grid_cmd)
    app.command("grid-map")(grid_map_cmd)
    app.command("grid-check")(grid_check_cmd)
    app.command("grid-suite")(grid_suite_cmd)
    app.command("grid-render")(grid_render_cmd)
