"""Report plugin: trajectory pictures for a few episodes of every grid run.

Rendering every episode would dominate report time, so the plugin draws one episode per
agent (the first by preset, seed, repeat; failures preferred when the agent has any, since
they are the interesting ones), at most ``MAX_EPISODES`` in all: the last frame as a PNG plus
an animated GIF. ``exploreval grid-render`` draws any other episode on demand.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from exploreval.core import EpisodeRecord
from exploreval.report import ReportSection, episode_link

MAX_EPISODES = 6
GIF_FRAMES = 80


def pick_episodes(
    records: Sequence[EpisodeRecord], limit: int = MAX_EPISODES
) -> list[EpisodeRecord]:
    """One representative episode per agent, deterministic."""
    by_agent: dict[str, list[EpisodeRecord]] = {}
    for record in records:
        if record.status == "ok" and "task" in (record.ground_truth or {}):
            by_agent.setdefault(record.agent.name, []).append(record)
    chosen: list[EpisodeRecord] = []
    for agent in sorted(by_agent):
        ordered = sorted(by_agent[agent], key=lambda r: (r.preset or "", r.seed, r.repeat))
        failures = [r for r in ordered if not r.success]
        chosen.append((failures or ordered)[0])
    return chosen[:limit]


def pick_from_rows(
    records: Sequence[EpisodeRecord], rows: pd.DataFrame | None, limit: int = MAX_EPISODES
) -> list[EpisodeRecord] | None:
    """``pick_episodes`` from the results rows (one per record, in the records' order): only
    the picked records are read. None when the rows cannot stand for the records."""
    needed = {"agent", "preset", "seed", "repeat", "success"}
    if rows is None or len(rows) != len(records) or not needed <= set(rows):
        return None
    frame = rows.reset_index(drop=True)
    order = frame.assign(
        _preset=frame["preset"].fillna(""), _solved=frame["success"].astype(bool)
    ).sort_values(["agent", "_solved", "_preset", "seed", "repeat"], kind="stable")
    first = order.drop_duplicates("agent").head(limit)
    picked = [records[int(i)] for i in first.index]
    if not all("task" in (r.ground_truth or {}) for r in picked):
        return None  # an episode without the map's task: choose among the records
    return picked


def trajectory_report(
    records: Sequence[EpisodeRecord], rows: pd.DataFrame, out_dir: Path
) -> list[ReportSection]:
    from exploreval.suites.grid._render import render_record

    picked = pick_from_rows(records, rows)
    if picked is None:
        picked = pick_episodes(records)
    if not picked:
        return []
    target = Path(out_dir) / "grid_trajectories"
    files: list[Path] = []
    lines = [
        "One episode per agent (a failed one when there is any). Nodes: grey = undiscovered, "
        "orange = discovered, green = achieved, gold ring = goal; purple line = path; "
        "x marks = metric errors (red explore, blue exploit, purple both). Render any other "
        "episode with `exploreval grid-render RUN_DIR --episode ID`.",
        "",
        "| agent | preset | seed | success | steps | explore err | exploit err | episode | files |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    notes: set[str] = set()
    for record in picked:
        result = render_record(record, target, frames="last", gif=True, max_gif_frames=GIF_FRAMES)
        if result.note:
            notes.add(result.note)
        names = [p.name for p in result.pngs] + ([result.gif.name] if result.gif else [])
        files.extend(result.pngs)
        if result.gif:
            files.append(result.gif)
        lines.append(
            f"| {record.agent.name} | {record.preset or '-'} | {record.seed} | {record.success} | "
            f"{record.n_steps} | {result.errors.get('explore', '-')} | "
            f"{result.errors.get('exploit', '-')} | "
            f"{episode_link(record.run_id, record.episode_id)} | {', '.join(names)} |"
        )
    for note in sorted(notes):
        lines += ["", f"_Note: {note}_"]
    return [ReportSection(title="Grid trajectories", markdown="\n".join(lines), files=files)]
