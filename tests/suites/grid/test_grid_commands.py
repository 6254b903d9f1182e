"""Grid CLI commands: grid-map, grid-check, grid-suite, grid-render; and `exploreval run`."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from grid_helpers import TINY_MAP, write_map
from PIL import Image
from typer.testing import CliRunner

from exploreval.cli import app
from exploreval.runner import load_spec, plan_episodes
from exploreval.store import RunDir
from exploreval.suites.grid import GridTask, generate_task

runner = CliRunner()


def cli(*args: str) -> tuple[int, str]:
    """In-process run with the entry point's rule: user errors -> exit code 2 + message."""
    from exploreval.cli._app import _user_errors

    result = runner.invoke(app, list(args))
    error = result.exception
    if error is not None and not isinstance(error, SystemExit):
        if isinstance(error, _user_errors()):
            return 2, f"{result.output}error: {error}"
        raise error
    return result.exit_code, result.output


def test_user_errors_exit_with_code_2_from_the_entry_point(tmp_path: Path) -> None:
    proc = subprocess.run(
        ["exploreval", "grid-check", str(tmp_path / "missing.json")], capture_output=True, text=True
    )
    assert proc.returncode == 2 and "no such map file" in " ".join(proc.stderr.split())


def test_grid_map_exports_the_env_map(tmp_path: Path) -> None:
    out = tmp_path / "m.json"
    code, text = cli("grid-map", "explore-high/dag-medium", "--seed", "2", "--out", str(out))
    assert code == 0, text
    exported = GridTask.load(out)
    assert exported.to_dict() == generate_task("explore-high/dag-medium", 2).to_dict()
    assert "oracle lower bound" in text and "budget" in text  # drawing + facts on stderr
    code, text = cli("grid-map", "custom-202/symbolic", "-q")
    assert code == 0 and json.loads(text)["name"] == "custom-202"


def test_grid_map_unknown_preset_is_a_user_error() -> None:
    code, text = cli("grid-map", "explore-low/dag-huge")
    assert code == 2 and "Unknown preset 'explore-low/dag-huge'" in text


def test_grid_check_reports_good_and_bad_maps(tmp_path: Path) -> None:
    code, text = cli("grid-check", str(write_map(tmp_path, TINY_MAP)))
    assert code == 0, text
    assert "ok: 3x3, 8 traversable cells, 3 nodes, goal G3GG, budget 24" in text
    assert "oracle lower bound 8 steps" in text
    broken = json.loads(json.dumps(TINY_MAP))
    broken["nodes"][0]["cell"] = [1, 1]
    code, text = cli("grid-check", str(write_map(tmp_path, broken, "bad.json")))
    assert code == 2 and "bad.json" in text and "is an obstacle" in text
    code, text = cli("grid-check", str(tmp_path / "nope.json"))
    assert code == 2 and "no such map file" in text


def test_grid_suite_writes_the_main_experiment(tmp_path: Path) -> None:
    out = tmp_path / "main.yaml"
    code, text = cli("grid-suite", "main", "--out", str(out))
    assert code == 0, text
    spec = load_spec(out)
    assert len(spec.suites[0].presets) == 9 and spec.suites[0].seeds == [0, 1, 2]
    assert len(plan_episodes(spec)) == 27 * 4
    code, text = cli(
        "grid-suite",
        "main",
        "-o",
        str(out),
        "--model",
        "gpt-4.1",
        "--harness",
        "memory",
        "-a",
        "oracle",
    )
    assert code == 0, text
    spec = load_spec(out)
    llm = [a for a in spec.agents if a.kind == "llm"]
    assert len(llm) == 8 and {a.harness for a in llm} == {"memory"}
    assert {(a.harness_options["strategy"], a.harness_options["reasoning"]) for a in llm} == {
        (s, r) for s in ("base", "exploration", "exploitation", "balance") for r in (False, True)
    }
    code, text = cli("grid-suite", "semantic", "-o", str(out))
    assert code == 0 and "160 episodes" in text  # 4 maps x 2 namings x 5 seeds x 4 baselines
    code, text = cli("grid-suite", "main", "-o", str(out), "--prompt-set", "default")
    assert code == 2 and "--prompt-set needs --model" in text
    code, text = cli("grid-suite", "main", "-o", str(out), "--model", "m", "--prompt-set", "fancy")
    assert code == 2 and "unknown prompt set 'fancy'" in text


def test_run_score_and_render_a_grid_run(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    code, text = cli(
        "run", "exploreval/GridDAG-v0", "-p", "explore-low/dag-small", "-p", "custom-201/semantic",
        "--seeds", "0-1", "-a", "frontier", "-a", "random", "-o", str(run_dir), "-q",
    )  # fmt: skip
    assert code == 0, text
    report = (run_dir / "report" / "report.md").read_text(encoding="utf-8")
    assert "## Grid trajectories" in report and ".gif" in report
    records = list(RunDir(run_dir).iter_records())
    assert len(records) == 8
    first = records[0]
    code, text = cli(
        "grid-render", str(run_dir), "--episode", first.episode_id[:10], "--frames", "0,2"
    )
    assert code == 0, text
    files = [Path(line) for line in text.split() if line.endswith((".png", ".gif"))]
    assert [f.suffix for f in files] == [".png", ".png", ".gif"] and all(f.exists() for f in files)
    code, text = cli("grid-render", str(run_dir), "--episode", "zzzz")
    assert code == 2 and "matches 0 episodes" in text


def test_render_a_bare_trajectory(tmp_path: Path) -> None:
    task_path = write_map(tmp_path, TINY_MAP, "tiny.json")
    positions = tmp_path / "p.json"
    positions.write_text(json.dumps([[0, 1], [0, 2], [1, 2], [2, 2]]), encoding="utf-8")
    out = tmp_path / "pics"
    code, text = cli(
        "grid-render", "--task", str(task_path), "--positions", str(positions), "-o", str(out),
        "--frames", "last", "--no-gif",
    )  # fmt: skip
    assert code == 0, text
    (png,) = out.glob("*.png")
    assert png.name == "tiny_t0003.png" and Image.open(png).size[0] > 500
    positions.write_text(json.dumps([[0, 1], [5, 5]]), encoding="utf-8")
    code, text = cli("grid-render", "--task", str(task_path), "--positions", str(positions))
    assert code == 2 and "not a traversable cell" in text
    positions.write_text('{"x": 1}', encoding="utf-8")
    code, text = cli("grid-render", "--task", str(task_path), "--positions", str(positions))
    assert code == 2 and "expected a JSON list of [x, y]" in text
    code, text = cli("grid-render", "--task", str(task_path))
    assert code == 2 and "give either RUN_DIR, or both --task and --positions" in text


def test_each_suite_defaults_to_the_papers_prompt_sets(tmp_path: Path) -> None:
    out = tmp_path / "semantic.yaml"
    code, text = cli("grid-suite", "semantic", "-o", str(out), "--model", "gpt-4.1")
    # Appendix C.2: 2 prompt sets x 2 namings x 4 maps x 5 seeds = 80 episodes per model
    assert code == 0 and "80 episodes" in text, text
    spec = load_spec(out)
    assert [a.label for a in spec.agents] == ["gpt-4.1/react/default", "gpt-4.1/react/reasoning"]
    code, text = cli("grid-suite", "main", "-o", str(out), "--model", "gpt-4.1")
    assert code == 0 and "216 episodes" in text  # 8 prompt sets x 27 maps, as the paper's
    code, text = cli(
        "grid-suite", "semantic", "-o", str(out), "--model", "m", "--prompt-set", "default-balance"
    )
    assert code == 0 and [a.label for a in load_spec(out).agents] == ["m/react/default-balance"]
    code, text = cli("grid-suite", "fig20", "-o", str(out))
    assert code == 2 and "unknown grid suite 'fig20'" in text and "figure20" in text


def test_the_figure20_suite_is_32_maps_per_graph_on_the_8x8_grid_run_three_times(
    tmp_path: Path,
) -> None:
    out = tmp_path / "figure20.yaml"
    code, text = cli("grid-suite", "figure20", "-o", str(out), "--model", "gpt-4.1")
    assert code == 0, text
    spec = load_spec(out)
    assert spec.repeats == 3 and [a.label for a in spec.agents] == ["gpt-4.1/react/default"]
    seeds = {s.presets[0]: list(s.seeds) for s in spec.suites}
    demand = [seeds[f"8x8/explore-{e}/dag-medium"] for e in ("low", "medium", "high")]
    dag = [seeds[f"8x8/explore-medium/dag-{d}"] for d in ("small", "medium", "large")]
    for graph in (demand, dag):  # "96 runs on 32 different maps with 3 random seeds"
        assert sum(len(s) for s in graph) == 32 and len({x for s in graph for x in s}) == 32
    assert demand[1] == dag[1]  # the medium/medium maps serve both graphs
    assert len(plan_episodes(spec)) == (32 + 32 - len(demand[1])) * 3 == 162
    assert "162 episodes" in text
    task = generate_task("8x8/explore-high/dag-medium", seed=0)
    assert (task.width, task.height) == (8, 8)


def test_figure20_takes_each_graph_from_its_own_8x8_maps(tmp_path: Path) -> None:
    from exploreval.analysis import score_run
    from exploreval.suites.grid._comparisons import figure20_frame

    run_dir = tmp_path / "run"
    presets = [
        "8x8/explore-low/dag-medium",
        "8x8/explore-medium/dag-medium",
        "8x8/explore-medium/dag-small",
        "explore-high/dag-large",  # a main preset beside them plays no part
    ]
    args = ["run", "exploreval/GridDAG-v0", "--seeds", "0-1", "-a", "frontier", "-o", str(run_dir)]
    code, text = cli(*args, *[x for p in presets for x in ("-p", p)], "-q")
    assert code == 0, text
    frame = figure20_frame(score_run(RunDir(run_dir), write=False).table)
    demand = frame[frame["factor"] == "demand"]
    dag = frame[frame["factor"] == "dag"]
    assert list(demand["level"]) == ["low", "medium"] and list(dag["level"]) == ["small", "medium"]
    assert set(frame["episodes"]) == {2} and set(frame["setting"]) == {"8x8, other factor medium"}
