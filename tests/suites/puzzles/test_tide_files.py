"""TIDE's published instance files played as shipped (``instances=PATH``): the boards TIDE's own
code draws, the PDDL problems as written, content named by hash, and bad files refused by name.

TIDE's repository has no licence, so its files are not copied here: each test writes a file of
the same format. The expected boards below were drawn by TIDE's own generators (their
``ragen/env/frozen_lake/utils.py`` and ``ragen/env/sudoku/utils.py`` at commit 6e21b5b) for
instances of their published files; they are reference values, not this code's output.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from exploreval.agents import make_agent
from exploreval.cli import app
from exploreval.core import make_env
from exploreval.runner._episode import run_single
from exploreval.store import RunDir
from exploreval.suites.puzzles import PuzzleParamError
from exploreval.suites.puzzles._blocksworld import (
    HAND,
    TABLE,
    optimal_length,
    parse_pddl_problem,
)
from exploreval.suites.puzzles._frozenlake import ragen_lake, shortest_path_length
from exploreval.suites.puzzles._sudoku import geometry, grid_rows, tide_sudoku

# (instance of data/frozen_lake/100_6_15.json, grid_size, seed, the map TIDE's generator draws)
TIDE_LAKES = [
    (
        0,
        8,
        2103,
        [
            "HFFFFFFF",
            "HFFHFFHF",
            "FHFHFFFF",
            "HFFFFFHH",
            "FSFFFHHF",
            "HFFFFFFF",
            "FHFFFFFH",
            "GFFFHHFH",
        ],
    ),
    (10, 7, 33, ["FFHFFFF", "FFFFFFF", "FFHFFFF", "SHFHFFF", "FHHHFFF", "FFGFFFF", "FHFFFFF"]),
    (25, 6, 6510, ["FFSFGH", "FHFFFF", "FFFFFF", "FFFFFH", "FHFFFH", "FHFFFF"]),
    (
        3,
        13,
        3431,
        [
            "FFFFFFHHFHFHF",
            "FFFFFFFFHFFFF",
            "FFFFHFHFFFFFF",
            "FFFFHFFFFFFFF",
            "FHFFFFFGFFFFF",
            "HSFFFFFFFFFHF",
            "FFHFFFFFFFFFF",
            "HFFFFFFFFFFFF",
            "FHFFFHHFFHFFH",
            "FFFFFFFFHFFFF",
            "FFHFFFFHFHFHF",
            "FFFFHFHHFFHHF",
            "HFFFFFFFFFFHF",
        ],
    ),
]

# (instance of data/sudoku/100_gs3_1_15.json, box side, level, seed, puzzle, solution)
TIDE_SUDOKUS = [
    (
        0,
        3,
        7,
        265,
        [
            "_36794158",
            "478561392",
            "915_8274_",
            "357826914",
            "689147235",
            "142953_67",
            "56123_479",
            "89347_621",
            "724619_83",
        ],
        [
            "236794158",
            "478561392",
            "915382746",
            "357826914",
            "689147235",
            "142953867",
            "561238479",
            "893475621",
            "724619583",
        ],
    ),
    (
        2,
        3,
        2,
        8977,
        [
            "634528971",
            "759631284",
            "128947635",
            "51246_897",
            "346789152",
            "897215346",
            "_81354769",
            "965872413",
            "473196528",
        ],
        [
            "634528971",
            "759631284",
            "128947635",
            "512463897",
            "346789152",
            "897215346",
            "281354769",
            "965872413",
            "473196528",
        ],
    ),
    (
        5,
        3,
        15,
        8291,
        [
            "2__3_9716",
            "7__65_983",
            "639_17542",
            "_712_4839",
            "8625_3174",
            "493781265",
            "_479_6358",
            "956138_27",
            "32_4_5691",
        ],
        [
            "285349716",
            "714652983",
            "639817542",
            "571264839",
            "862593174",
            "493781265",
            "147926358",
            "956138427",
            "328475691",
        ],
    ),
    (None, 2, 5, 7, ["4_13", "31_4", "_43_", "_342"], ["4213", "3124", "2431", "1342"]),
]

# A BlocksWorld label written in TIDE's PDDL form: b2 held, b3 on b1; the goal stacks b2 on b3.
# Its level says 3 though one action (stack b2 b3) reaches the goal: TIDE's levels are the
# length of the walk that made an instance, not always its optimum (their 42, 94 and 97).
LABEL = """(define (problem BW-own-1)
(:domain blocksworld-4ops)
(:objects b1 b2 b3)
(:init
(clear b3)
(holding b2)
(on b3 b1)
(ontable b1)
)
(:goal
(and
(clear b2)
(handempty)
(on b2 b3)
(on b3 b1)
(ontable b1)
))
)"""


def _write(path: Path, items: Any) -> str:
    path.write_text(json.dumps(items, indent=2), encoding="utf-8")
    return str(path)


def _run_file(path: Path | str, seeds: str, out: Path) -> Any:
    """``exploreval run`` of FrozenLake on an instance file, the optimal agent (CLI result)."""
    argv = ["run", "exploreval/FrozenLake-v0", "--env-option", f"instances={path}"]
    argv += ["--seeds", seeds, "--agent", "optimal", "--out", str(out), "-q"]
    return CliRunner().invoke(app, argv)


def _rows(grid: list[int], n: int) -> list[str]:
    return [row.replace("0", "_") for row in grid_rows(grid, n)]


@pytest.mark.parametrize(("index", "size", "seed", "expected"), TIDE_LAKES)
def test_frozenlake_boards_are_the_ones_tides_generator_draws(
    index: int, size: int, seed: int, expected: list[str]
) -> None:
    assert ragen_lake(size, seed).gym_desc() == expected


@settings(max_examples=60, deadline=None)
@given(size=st.integers(2, 12), seed=st.integers(0, 2**32 - 1))
def test_every_ragen_board_is_playable(size: int, seed: int) -> None:
    lake = ragen_lake(size, seed)
    assert lake.size == (size, size) and lake.start != lake.target
    assert lake.start not in lake.holes and lake.target not in lake.holes
    assert shortest_path_length(lake) is not None  # RAGEN redraws until the target is reachable
    assert ragen_lake(size, seed) == lake


@pytest.mark.parametrize(("index", "box", "level", "seed", "puzzle", "solution"), TIDE_SUDOKUS)
def test_sudoku_puzzles_are_the_ones_tides_generator_draws(
    index: int | None, box: int, level: int, seed: int, puzzle: list[str], solution: list[str]
) -> None:
    made_puzzle, made_solution = tide_sudoku(box, seed, level)
    assert _rows(made_puzzle, box * box) == puzzle
    assert _rows(made_solution, box * box) == solution


@settings(max_examples=40, deadline=None)
@given(box=st.sampled_from([2, 3]), seed=st.integers(0, 10**6), level=st.integers(1, 15))
def test_tide_sudoku_blanks_exactly_level_cells_of_a_valid_grid(
    box: int, seed: int, level: int
) -> None:
    n = box * box
    puzzle, solution = tide_sudoku(box, seed, level)
    geo = geometry(n)
    assert sum(v == 0 for v in puzzle) == min(level, n * n)
    assert all(p in (0, s) for p, s in zip(puzzle, solution, strict=True))
    for same in (geo.row, geo.col, geo.box):
        groups: dict[int, set[int]] = {}
        for i, value in enumerate(solution):
            groups.setdefault(same[i], set()).add(value)
        assert all(values == set(range(1, n + 1)) for values in groups.values())


def test_a_pddl_label_is_read_fact_by_fact() -> None:
    start, goal = parse_pddl_problem(LABEL)
    assert start == (TABLE, HAND, 0)
    assert goal == (TABLE, 2, 0)
    assert optimal_length(start, goal) == 1


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (("(on b3 b1)\n(ontable b1)\n)\n(:goal", "(ontable b1)\n)\n(:goal"), "b3 on nothing"),
        (("(holding b2)", "(holding b9)"), "unknown block 'b9'"),
        (("(clear b3)\n(holding", "(holding"), "disagree"),
        (("(:objects b1 b2 b3)", "(:objects a b c)"), "must be b1..bN"),
        (("(ontable b1)\n)\n(:goal", "(ontable b1)\n(ontable b3)\n)\n(:goal"), "two places"),
        (("(holding b2)", "(grasping b2)"), "4-operator domain"),
        (("(:goal", "(:target"), "no (:goal"),
    ],
)
def test_a_bad_pddl_label_is_refused_naming_the_fact(edit: tuple[str, str], message: str) -> None:
    old, new = edit
    assert old in LABEL
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(".", r"\.")):
        parse_pddl_problem(LABEL.replace(old, new, 1))


def test_frozenlake_file_seed_k_plays_instance_k_named_by_its_content(tmp_path: Path) -> None:
    items = [{"grid_size": size, "seed": seed} for _, size, seed, _ in TIDE_LAKES]
    path = _write(tmp_path / "100_6_15.json", items)
    env = make_env("exploreval/FrozenLake-v0", instances=path)
    for k, (_, size, seed, expected) in enumerate(TIDE_LAKES):
        observation, _ = env.reset(seed=k)
        truth = env.ground_truth()
        assert truth["map"] == expected and truth["size"] == [size, size]
        assert truth["instance_source"] == {
            "file": path,
            "sha256": hashlib.sha256(Path(path).read_bytes()).hexdigest(),
            "index": k,
            "kind": "frozenlake",
            "grid_size": size,
            "seed": seed,
        }
        assert observation.splitlines()[0] == expected[0].replace("F", "_").replace(
            "H", "O"
        ).replace("S", "P")
    with pytest.raises(
        PuzzleParamError, match=r"seed 4: the file has 4 instances \(seeds 0\.\.3\)"
    ):
        env.reset(seed=4)
    with pytest.raises(PuzzleParamError, match="played by seed"):
        env.reset()


def test_a_changed_file_is_played_as_it_now_is_and_says_so(tmp_path: Path) -> None:
    path = tmp_path / "lakes.json"
    _write(path, [{"grid_size": 8, "seed": 2103}])
    env = make_env("exploreval/FrozenLake-v0", instances=str(path))
    env.reset(seed=0)
    before = env.ground_truth()
    _write(path, [{"grid_size": 7, "seed": 33}])
    env.reset(seed=0)
    after = env.ground_truth()
    assert before["map"] == TIDE_LAKES[0][3] and after["map"] == TIDE_LAKES[1][3]
    assert before["instance_source"]["sha256"] != after["instance_source"]["sha256"]
    assert after["instance_source"]["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()


def test_sudoku_and_blocksworld_files_play_their_instances(tmp_path: Path) -> None:
    sudoku_items = [
        {"grid_size": box, "level": level, "seed": seed}
        for _, box, level, seed, _, _ in TIDE_SUDOKUS
    ]
    env = make_env("exploreval/Sudoku-v0", instances=_write(tmp_path / "su.json", sudoku_items))
    for k, (_, box, level, _, puzzle, solution) in enumerate(TIDE_SUDOKUS):
        env.reset(seed=k)
        truth = env.ground_truth()
        assert [row.replace("0", "_") for row in truth["puzzle"]] == puzzle
        assert [row.replace("0", "_") for row in truth["solution"]] == solution
        assert truth["blanks"] == level and truth["size"] == box * box
        assert truth["instance_source"]["unique_solution"] is True
    item = {"level": 3, "system": "TIDE's prompt", "query": "its state text", "label": LABEL}
    env = make_env("exploreval/BlocksWorld-v0", instances=_write(tmp_path / "bw.json", [item]))
    env.reset(seed=0)
    truth = env.ground_truth()
    assert truth["level"] == 3 and truth["optimal_length"] == 1
    assert truth["start_supports"] == [TABLE, HAND, 0] and truth["goal_supports"] == [TABLE, 2, 0]
    _, reward, terminated, _, info = env.step("stack b2 b3")
    assert (reward, terminated, info["success"]) == (1.0, True, True)


def test_the_optimal_agent_solves_file_instances_in_their_optimum(tmp_path: Path) -> None:
    items = [{"grid_size": size, "seed": seed} for _, size, seed, _ in TIDE_LAKES]
    path = _write(tmp_path / "lakes.json", items)
    for k, (_, size, seed, _) in enumerate(TIDE_LAKES):
        agent = make_agent("frozenlake", "optimal")
        env_id = "exploreval/FrozenLake-v0"
        record = asyncio.run(run_single(env_id, agent, seed=k, instances=path))
        optimum = shortest_path_length(ragen_lake(size, seed))
        assert record.success and record.n_steps == optimum
        assert record.ground_truth["instance_source"]["index"] == k


@pytest.mark.parametrize(
    ("env_id", "content", "message"),
    [
        ("exploreval/FrozenLake-v0", None, "cannot read"),
        ("exploreval/FrozenLake-v0", '[{"grid_size": 8,\n "seed": }]', "line 2, column"),
        ("exploreval/FrozenLake-v0", "{}", "non-empty JSON list"),
        ("exploreval/FrozenLake-v0", "[]", "non-empty JSON list"),
        (
            "exploreval/FrozenLake-v0",
            '[{"grid_size": 8, "seed": 1}, 5]',
            "instance 1: expected a JSON object",
        ),
        (
            "exploreval/FrozenLake-v0",
            '[{"grid_size": 3, "level": 4, "seed": 1}]',
            "looks like a sudoku file",
        ),
        (
            "exploreval/FrozenLake-v0",
            '[{"grid_size": true, "seed": 1}]',
            "'grid_size': expected int",
        ),
        ("exploreval/FrozenLake-v0", '[{"grid_size": 8, "seed": -1}]', "'seed': expected >= 0"),
        (
            "exploreval/Sudoku-v0",
            '[{"grid_size": 4, "level": 4, "seed": 1}]',
            "box side 2 \\(4x4\\) or 3",
        ),
        (
            "exploreval/Sudoku-v0",
            '[{"grid_size": 3, "level": 0, "seed": 1}]',
            "'level': expected 1 to 80",
        ),
        ("exploreval/Sudoku-v0", '[{"grid_size": 8, "seed": 1}]', "missing field\\(s\\) level"),
        (
            "exploreval/BlocksWorld-v0",
            '[{"level": 2, "label": "(define (problem x))"}]',
            "instance 0: label: the PDDL problem has no",
        ),
    ],
)
def test_a_bad_file_is_refused_when_the_env_is_made_naming_file_instance_and_field(
    tmp_path: Path, env_id: str, content: str | None, message: str
) -> None:
    path = tmp_path / "instances.json"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    with pytest.raises(PuzzleParamError, match=message) as caught:
        make_env(env_id, instances=str(path))
    assert str(path) in str(caught.value)


def test_the_cli_runs_a_file_and_stores_where_each_instance_came_from(tmp_path: Path) -> None:
    items = [{"grid_size": size, "seed": seed} for _, size, seed, _ in TIDE_LAKES[:3]]
    path = _write(tmp_path / "100_6_15.json", items)
    out = tmp_path / "run"
    result = _run_file(path, "0-2", out)
    assert result.exit_code == 0, result.output
    records = sorted(RunDir(out).iter_records(), key=lambda r: r.seed)
    assert [r.ground_truth["map"] for r in records] == [lake[3] for lake in TIDE_LAKES[:3]]
    assert {r.ground_truth["instance_source"]["sha256"] for r in records} == {
        hashlib.sha256(Path(path).read_bytes()).hexdigest()
    }
    assert all(r.success for r in records)
    scored = CliRunner().invoke(app, ["score", str(out)])
    assert scored.exit_code == 0 and "definition of tide_loop_ratio: published" in scored.output
    bad = _run_file(path, "0-5", tmp_path / "too-many")
    assert "the file has 3 instances" in bad.output


def test_compare_pairs_episodes_only_when_their_instance_files_hold_the_same_content(
    tmp_path: Path,
) -> None:
    from exploreval.analysis import compare_tables, score_run

    path = tmp_path / "lakes.json"

    def run(name: str, items: list[dict[str, int]]) -> Any:
        _write(path, items)
        out = tmp_path / name
        result = _run_file(path, "0-1", out)
        assert result.exit_code == 0, result.output
        return score_run(RunDir(out), write=False).table

    lakes = [{"grid_size": size, "seed": seed} for _, size, seed, _ in TIDE_LAKES[:2]]
    first, again = run("a", lakes), run("b", lakes)
    (same,) = compare_tables(first, again).comparisons
    assert same.pairs == 2
    changed = run("c", [{"grid_size": 13, "seed": 3431}, {"grid_size": 6, "seed": 6510}])
    assert set(changed["condition"]) == set(first["condition"])  # the same path, so the same spec
    comparison = compare_tables(first, changed)
    assert comparison.comparisons == []  # other boards: nothing pairs
    assert any("share no episode spec" in w for w in comparison.warnings)
