"""Issue 8 §3: each silent failure a new user hit now fails loudly (or works), via the real CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import gymnasium
import pytest

import exploreval
from _cli import cli
from exploreval.core import list_envs
from exploreval.models import SamplingParams
from exploreval.runner import parse_seeds, split_models

GRID = "exploreval/GridDAG-v0"


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--agent", "typo"], "Unknown agent 'typo'"),
        (["--agent", "random", "--model", "m", "--harness", "nope"], "Unknown harness 'nope'"),
        (["--agent", "random", "--seeds=-3"], "negative"),
        (["--agent", "random", "--seeds", "0-99999999"], "at most 100000"),
        (["--model", "m", "--temperature", "nan"], "finite number"),
        (["--model", "a,b", "--model", "a"], "--model a given more than once"),
    ],
)
def test_bad_names_and_values_are_refused_before_the_run_dir_exists(
    tmp_path: Path, args: list[str], needle: str
) -> None:
    result = cli("run", GRID, *args, "--out", "r", "-q", cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert needle in " ".join(result.stderr.split()), result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "r").exists()


def test_debug_shows_the_traceback_behind_the_one_line_error(tmp_path: Path) -> None:
    plain = cli("run", GRID, "--agent", "typo", "--out", "r", cwd=tmp_path)
    debug = cli("--debug", "run", GRID, "--agent", "typo", "--out", "r", cwd=tmp_path)
    # a refusal exploreval words itself: one line, no hint (issue 42: the hint only after an
    # unexpected error); --debug still shows what raised it
    assert "Traceback" not in plain.stderr and "--debug" not in plain.stderr
    assert plain.stderr.strip().count("\n") == 0 and plain.returncode == 2
    assert "Traceback" in debug.stderr and debug.returncode == 2


def test_seed_and_sampling_validation_at_parse_time() -> None:
    assert parse_seeds("0-3,7") == [0, 1, 2, 3, 7]
    for bad in ("-1", "-5-2", [-1], "0-200000"):
        with pytest.raises(ValueError):
            parse_seeds(bad)
    for bad_field in ({"temperature": float("nan")}, {"top_p": 1.5}, {"max_tokens": 0}):
        with pytest.raises(ValueError):
            SamplingParams(**bad_field)  # type: ignore[arg-type]


def test_several_models_become_several_agents_and_repeats_are_refused() -> None:
    assert split_models(["a", "b,c"]) == ["a", "b", "c"]
    assert split_models([" a , b "]) == ["a", "b"]
    with pytest.raises(ValueError, match="b given more than once"):
        split_models(["a,b", "b"])


def _experiment(tmp_path: Path) -> Path:
    path = tmp_path / "e.yaml"
    path.write_text(
        f"name: t\nsuites: [{{env_id: {GRID}, seeds: '0-1'}}]\nagents: [{{agent: random}}]\n"
    )
    return path


def test_config_plus_a_flag_the_file_owns_is_refused_naming_the_flag(tmp_path: Path) -> None:
    result = cli(
        "run",
        "--config",
        str(_experiment(tmp_path)),
        "--agent",
        "frontier",
        "--out",
        "r",
        cwd=tmp_path,
    )
    assert result.returncode == 2
    assert "--agent cannot be combined with --config" in " ".join(result.stderr.split())
    assert not (tmp_path / "r").exists()


def test_config_plus_override_flags_override_the_file(tmp_path: Path) -> None:
    result = cli(
        "run", "--config", str(_experiment(tmp_path)), "--seeds", "5", "--repeats", "2",
        "--no-report", "--out", "r", "-q", cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    config = json.loads((tmp_path / "r" / "manifest.json").read_text())["config"]
    assert config["suites"][0]["seeds"] == [5] and config["repeats"] == 2
    lines = (tmp_path / "r" / "episodes.jsonl").read_text().splitlines()
    assert sorted((json.loads(x)["seed"], json.loads(x)["repeat"]) for x in lines) == [
        (5, 0),
        (5, 1),
    ]


def test_resume_from_the_run_directory_alone(tmp_path: Path) -> None:
    first = cli(
        "run",
        GRID,
        "--agent",
        "random",
        "--seeds",
        "0-1",
        "--no-report",
        "--out",
        "r",
        "-q",
        cwd=tmp_path,
    )
    assert first.returncode == 0, first.stderr
    log = tmp_path / "r" / "episodes.jsonl"
    kept = log.read_text().splitlines()[:1]
    log.write_text(kept[0] + "\n")  # as if the run died after one episode
    again = cli("run", "--out", "r", "--no-report", "-q", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert "1 episode run, 1 resumed" in again.stderr
    assert len(log.read_text().splitlines()) == 2


def test_max_connections_sets_the_per_model_limit(tmp_path: Path) -> None:
    from exploreval.runner import experiment_from_options, spec_from_dict

    spec = spec_from_dict(
        {
            "suites": [{"env_id": GRID}],
            "agents": [{"kind": "llm", "model": "m"}, {"agent": "random"}],
        },
        "test",
    )
    assert spec.agents[0].max_connections is None  # follows the experiment's concurrency
    changed = experiment_from_options(
        {"max_connections": 32, "concurrency": 32},
        {"max_connections", "concurrency"},
        stored=spec,
        source="--config",
    )
    assert changed.agents[0].max_connections == 32 and changed.concurrency == 32


BROKEN_PLUGIN = """
from exploreval.agents import ScriptedAgent, register_agent
from exploreval.core import TextEnv, register_env


class Broken(TextEnv):
    def _reset(self, options):
        raise RuntimeError("the engine crashed at reset")

    def _step(self, action):
        raise AssertionError("never reached")

    def ground_truth(self):
        return {}


class Poke(ScriptedAgent):
    name = "poke"

    def choose(self, observation, info):
        return "poke"


register_env("test/Broken-v0", Broken, family="broken")
register_agent("poke", Poke, families=("broken",))
"""


def test_a_run_where_every_episode_errored_exits_non_zero(tmp_path: Path) -> None:
    (tmp_path / "brokenplug.py").write_text(BROKEN_PLUGIN)
    result = cli(
        "run", "test/Broken-v0", "--plugin", "brokenplug", "--agent", "poke", "--seeds", "0-1",
        "--no-report", "--out", "r", "-q", cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 1, result.stderr
    assert "every episode errored" in result.stderr
    records = [json.loads(x) for x in (tmp_path / "r" / "episodes.jsonl").read_text().splitlines()]
    assert [r["status"] for r in records] == ["error", "error"]
    assert all("the engine crashed at reset" in r["error"] for r in records)
    manifest = json.loads((tmp_path / "r" / "manifest.json").read_text())
    assert manifest["status"] == "failed" and manifest["episodes_done"] == 0
    assert "the engine crashed at reset" in manifest["error"]  # the first error, with its episode


def test_runs_names_an_unreadable_manifest_and_survives_markup_in_paths(tmp_path: Path) -> None:
    ok = cli(
        "run", GRID, "--agent", "random", "--no-report", "--out", "runs/a[/]b", "-q", cwd=tmp_path
    )
    assert ok.returncode == 0, ok.stderr
    bad = tmp_path / "runs" / "bad"
    bad.mkdir()
    (bad / "manifest.json").write_bytes(b"\xff\xfe{")
    listing = cli("runs", "runs", cwd=tmp_path)
    assert listing.returncode == 0, listing.stderr
    text = " ".join(listing.stdout.split())
    assert "a[/]b" in text and "not UTF-8" in text


def test_force_replaces_an_unreadable_manifest_and_keeps_it_as_evidence(tmp_path: Path) -> None:
    run = tmp_path / "r"
    run.mkdir()
    (run / "manifest.json").write_bytes(b"\xff garbage")
    refused = cli("run", GRID, "--agent", "random", "--no-report", "--out", "r", "-q", cwd=tmp_path)
    assert refused.returncode == 2 and "not UTF-8" in " ".join(refused.stderr.split())
    forced = cli(
        "run", GRID, "--agent", "random", "--no-report", "--force", "--out", "r", "-q", cwd=tmp_path
    )
    assert forced.returncode == 0, forced.stderr
    kept = list(run.glob("manifest.json.unreadable-*"))
    assert len(kept) == 1 and kept[0].read_bytes() == b"\xff garbage"


def test_agents_and_harnesses_list_every_family(tmp_path: Path) -> None:
    agents = cli("agents", cwd=tmp_path)
    harnesses = cli("harnesses", "--family", "grid", cwd=tmp_path)
    assert agents.returncode == 0 and harnesses.returncode == 0
    for name in ("frontier", "ucb", "random"):
        assert name in agents.stdout
    assert "memory" in harnesses.stdout and "BSSeC0" not in harnesses.stdout


def test_gymnasium_make_works_for_every_registered_env() -> None:
    assert exploreval.__version__  # `import exploreval` registers every env with Gymnasium
    ids = [spec.env_id for spec in list_envs()]
    assert {"exploreval/GridDAG-v0", "exploreval/Terminal-v0", "exploreval/Task2Quiz-v0"} <= set(
        ids
    )
    for env_id in ids:
        env = gymnasium.make(env_id, disable_env_checker=True)
        try:
            observation, _ = env.reset(seed=0)
            assert isinstance(observation, str) and observation, env_id
        finally:
            env.close()


def test_bandit_distribution_answers_accept_scientific_notation() -> None:
    from exploreval.suites.bandit._prompts import _parse_distribution

    dist, reason = _parse_distribution("blue:1e-3, red:0.999", ["blue", "red"])
    assert reason is None and dist is not None
    assert dist[0] == pytest.approx(0.001) and dist[1] == pytest.approx(0.999)


def test_atomic_writes_use_unique_temp_names_and_keep_the_old_file_on_failure(
    tmp_path: Path,
) -> None:
    from exploreval.store import unique_tmp, write_atomic

    target = tmp_path / "results.parquet"
    target.write_text("good")
    assert unique_tmp(target) != unique_tmp(target)

    def crash(tmp: Path) -> None:
        tmp.write_text("half")
        raise RuntimeError("killed mid-write")

    with pytest.raises(RuntimeError):
        write_atomic(target, crash)
    assert target.read_text() == "good"
    assert [p.name for p in tmp_path.iterdir()] == ["results.parquet"]


def test_a_second_process_on_the_same_run_dir_is_refused_and_a_crash_releases_it(
    tmp_path: Path,
) -> None:
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from exploreval.store import RunDir; r = RunDir(sys.argv[1]); "
            "r.ensure(); r.lock(); print('locked', flush=True); time.sleep(600)",
            str(tmp_path / "r"),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        refused = cli(
            "run", GRID, "--agent", "random", "--no-report", "--out", "r", "-q", cwd=tmp_path
        )
        assert refused.returncode == 2
        assert f"in use by another exploreval process (pid {holder.pid})" in " ".join(
            refused.stderr.split()
        )
        assert not (tmp_path / "r" / "manifest.json").exists()
    finally:
        holder.kill()  # SIGKILL: the kernel releases the flock
        holder.wait()
    after = cli("run", GRID, "--agent", "random", "--no-report", "--out", "r", "-q", cwd=tmp_path)
    assert after.returncode == 0, after.stderr


@pytest.mark.parametrize("name", ["cache.sqlite", "blobs.sqlite"])
def test_a_corrupt_sqlite_file_is_a_clear_error_and_rebuild_cache_keeps_it_aside(
    tmp_path: Path, name: str
) -> None:
    from exploreval.models.testing import StubServer

    with StubServer(reply="<a>+</a>") as server:
        base = [
            "run",
            GRID,
            "--model",
            "stub",
            "--base-url",
            server.base_url,
            "--max-steps",
            "2",
            "--seeds",
            "0-1",
            "--no-report",
            "--out",
            "r",
            "-q",
        ]
        first = cli(*base, cwd=tmp_path)
        assert first.returncode == 0, first.stderr
        log = tmp_path / "r" / "episodes.jsonl"
        log.write_text(log.read_text().splitlines()[0] + "\n")  # one episode left to play
        garbage = b"this is not a database" * 100
        (tmp_path / "r" / name).write_bytes(garbage)
        for companion in ("-wal", "-shm"):
            (tmp_path / "r" / (name + companion)).unlink(missing_ok=True)
        broken = cli(*base, cwd=tmp_path)
        message = " ".join(broken.stderr.split())
        assert broken.returncode == 2 and "Traceback" not in broken.stderr
        assert (
            f"r/{name} is not a readable SQLite database" in message
            and "--rebuild-cache" in message
        )
        assert json.loads((tmp_path / "r" / "manifest.json").read_text())["status"] != "running"
        fixed = cli(
            *base[:-3],
            "--seeds",
            "0-1",
            "--no-report",
            "--rebuild-cache",
            "--out",
            "r",
            "-q",
            cwd=tmp_path,
        )
        assert fixed.returncode == 0, fixed.stderr
    kept = list((tmp_path / "r").glob(f"{name}.corrupt-*"))
    assert [p.read_bytes() for p in kept if not p.name.endswith(("-wal", "-shm"))] == [garbage]


def test_a_bad_cache_row_is_a_miss(tmp_path: Path) -> None:
    import sqlite3

    from exploreval.models import ResponseCache

    cache = ResponseCache(tmp_path / "c.sqlite")
    cache.close()
    conn = sqlite3.connect(tmp_path / "c.sqlite")
    conn.execute("INSERT INTO responses (key, model, completion) VALUES ('k', 'm', '{not json')")
    conn.commit()
    conn.close()
    again = ResponseCache(tmp_path / "c.sqlite")
    assert again.get("k") is None and again.bad_rows == 1 and again.misses == 1


def test_markup_in_a_run_path_is_printed_verbatim_by_run_score_and_report(tmp_path: Path) -> None:
    """Without -q: the progress line, the summary, score's table title and report's paths.
    One path holds the three kinds of markup rich would act on: a closing tag with nothing
    open (MarkupError), a style that would vanish, and a pair that would colour what it holds."""
    name = "a[/]b-x[bold]y-c[red]d[/red]"
    path = f"runs/{name}"
    run = cli("run", GRID, "--agent", "random", "--seeds", "0-1", "--out", path, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert "Traceback" not in run.stderr and "MarkupError" not in run.stderr
    assert f"in {path}: 2 episodes planned" in run.stderr
    assert f"report: {path}/report/report.md" in run.stdout
    manifest = json.loads((tmp_path / path / "manifest.json").read_text())
    assert manifest["status"] == "finished" and manifest["episodes_done"] == 2
    score = cli("score", path, cwd=tmp_path)
    assert score.returncode == 0, score.stderr
    assert f"{path}: 2 episodes" in score.stdout
    assert f"results: {path}/results.parquet" in score.stdout
    report = cli("report", path, cwd=tmp_path)
    assert report.returncode == 0, report.stderr
    assert report.stdout.splitlines()[:2] == [
        f"report: {path}/report/report.md",
        f"html:   {path}/report/index.html",
    ]
    tide = cli("tide", path, cwd=tmp_path)
    assert tide.returncode == 0 and f"TIDE: {path}" in tide.stdout, tide.stderr
    listing = cli("runs", "runs", cwd=tmp_path)
    assert listing.returncode == 0 and name in listing.stdout, listing.stdout


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--agent", "random", "--agent", "random"], "--agent random given more than once"),
        (
            [
                "--agent",
                "random",
                "--preset",
                "explore-low/dag-small",
                "--preset",
                "explore-low/dag-small",
            ],
            "--preset explore-low/dag-small given more than once",
        ),
        (
            ["--model", "m", "--history", "full", "--history", "full"],
            "--history full given more than once",
        ),
        (
            ["--agent", "random", "--seeds", "3,3"],
            "(--seeds 3,3): Value error, seed 3 listed more than once",
        ),
        (["--agent", "random", "--seeds", "0-4,2"], "seed 2 listed more than once"),
        (
            ["--agent", "random", "--env-option", "budget=5", "--env-option", "budget=6"],
            "--env-option budget=... given more than once",
        ),
        (
            ["--agent", "random", "--plugin", "_toy", "--plugin", "_toy"],
            "--plugin _toy given more than once",
        ),
    ],
)
def test_a_repeated_flag_value_is_refused_naming_the_flag(
    tmp_path: Path, args: list[str], needle: str
) -> None:
    result = cli("run", GRID, *args, "--out", "r", "-q", cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert needle in " ".join(result.stderr.split()), result.stderr
    assert not (tmp_path / "r").exists()


def test_a_named_suite_given_twice_is_refused(tmp_path: Path) -> None:
    result = cli(
        "run", "--suite", "grid-main", "--suite", "grid-main", "--agent", "random", "--out", "r",
        cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 2
    assert "--suite grid-main given more than once" in " ".join(result.stderr.split())
    assert not (tmp_path / "r").exists()


def test_duplicates_in_an_experiment_file_are_refused_naming_the_field() -> None:
    from exploreval.runner import SpecError, plan_episodes, spec_from_dict

    base = {"suites": [{"env_id": GRID}], "agents": [{"agent": "random"}]}
    cases = [
        ({"suites": [{"env_id": GRID, "seeds": [1, 2, 1]}]}, "suites.0.seeds", "seed 1 listed"),
        (
            {"suites": [{"env_id": GRID, "presets": ["explore-low/dag-small"] * 2}]},
            "suites.0.presets",
            "preset explore-low/dag-small listed more than once",
        ),
        (
            {"agents": [{"agent": "random"}, {"agent": "random", "label": "again"}]},
            "agents.1 is the same agent as agents.0 (agent random)",
            "",
        ),
        (
            {"agents": [{"kind": "llm", "model": "m"}, {"kind": "llm", "model": "m"}]},
            "agents.1 is the same agent as agents.0 (model m, harness default, history full)",
            "",
        ),
    ]
    for change, where, what in cases:
        with pytest.raises(SpecError) as info:
            spec_from_dict({**base, **change}, "exp.yaml")
        message = str(info.value)
        assert "exp.yaml" in message and where in message and what in message, message
    # the same agent restricted to different suites is two different sets of episodes
    fine = spec_from_dict(
        {
            "suites": [{"env_id": GRID}, {"env_id": GRID, "seeds": 1}],
            "agents": [{"agent": "random", "suites": [0]}, {"agent": "random", "suites": [1]}],
        }
    )
    assert len(plan_episodes(fine)) == 2
    overlapping = spec_from_dict(
        {"suites": [{"env_id": GRID, "seeds": "0-1"}, {"env_id": GRID, "seeds": "1-2"}], **{
            "agents": [{"agent": "random"}]
        }}
    )  # fmt: skip
    with pytest.raises(SpecError, match="seed 1 repeat 0 with agent random is planned twice"):
        plan_episodes(overlapping)


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (["--agent", "frontier"], "--agent"),
        (["--model", "m"], "--model"),
        (["--temperature", "0.5"], "--temperature"),
        (["--preset", "nope"], "--preset"),
        (["--env-option", "budget=5"], "--env-option"),
        (["--harness", "memory", "--history", "none"], "--harness, --history"),
    ],
)
def test_resume_from_the_directory_refuses_flags_the_stored_config_owns(
    tmp_path: Path, flags: list[str], named: str
) -> None:
    first = cli("run", GRID, "--agent", "random", "--no-report", "--out", "r", "-q", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    manifest = (tmp_path / "r" / "manifest.json").read_bytes()
    log = (tmp_path / "r" / "episodes.jsonl").read_bytes()
    again = cli("run", "--out", "r", *flags, "--no-report", "-q", cwd=tmp_path)
    assert again.returncode == 2, again.stderr
    message = " ".join(again.stderr.split())
    assert f"{named} cannot be combined with resuming r" in message, message
    assert "start a new run with another --out" in message
    assert (tmp_path / "r" / "manifest.json").read_bytes() == manifest
    assert (tmp_path / "r" / "episodes.jsonl").read_bytes() == log


def test_resume_from_the_directory_applies_override_flags(tmp_path: Path) -> None:
    first = cli("run", GRID, "--agent", "random", "--no-report", "--out", "r", "-q", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    missing = cli("run", "--out", "r", "--plugin", "nonexistent_mod", "-q", cwd=tmp_path)
    assert missing.returncode == 2
    assert "plugin module 'nonexistent_mod' could not be imported" in missing.stderr
    (tmp_path / "myplug.py").write_text("LOADED = True\n")
    (tmp_path / "prices.yaml").write_text("my-model: {input: 0.5, output: 1.5}\n")
    again = cli(
        "run", "--out", "r", "--plugin", "myplug", "--prices", "prices.yaml", "--name", "renamed",
        "--concurrency", "3", "--no-report", "-q", cwd=tmp_path,
    )  # fmt: skip
    assert again.returncode == 0, again.stderr
    manifest = json.loads((tmp_path / "r" / "manifest.json").read_text())
    assert manifest["status"] == "finished" and manifest["invocations"] == 2
    config = manifest["config"]
    assert config["plugins"] == ["myplug"] and config["name"] == "renamed"
    assert config["prices"]["my-model"] == {"input": 0.5, "output": 1.5}
    assert config["concurrency"] == 3
    no_llm = cli("run", "--out", "r", "--max-connections", "3", "-q", cwd=tmp_path)
    assert no_llm.returncode == 2
    assert "--max-connections only applies to LLM agents" in " ".join(no_llm.stderr.split())


@pytest.mark.parametrize(
    "flags",
    [
        ["--temperature", "0.5"],
        ["--harness", "memory"],
        ["--history", "none"],
        ["--base-url", "http://localhost:1/v1"],
        ["--max-connections", "3"],
        ["--reasoning-effort", "low"],
    ],
)
def test_llm_flags_without_a_model_are_refused_naming_the_flag(
    tmp_path: Path, flags: list[str]
) -> None:
    result = cli("run", GRID, "--agent", "random", *flags, "--out", "r", "-q", cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    message = " ".join(result.stderr.split())
    assert f"{flags[0]} only applies to LLM agents" in message, message
    assert not (tmp_path / "r").exists()


NO_KEY_ENV = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (
            [GRID, "--agent", "random", "--env-option", "bogus=1"],
            "suites.0 (exploreval/GridDAG-v0, preset None, options {'bogus': 1}): the env refuses "
            "to build: ValueError: GridDAG-v0: unknown option 'bogus'",
        ),
        (
            ["exploreval/FrozenLake-v0", "--agent", "random", "--env-option", "sizee=4"],
            "unknown option(s) ['sizee']",
        ),
        (
            ["exploreval/Bandit-v0", "--agent", "random", "--env-option", "arms=4"],
            "unknown option(s) ['arms']",
        ),
        (
            [GRID, "--model", "m", "--base-url", "http://127.0.0.1:9/v1", "--harness-option",
             "bogus=1"],
            "agents.0 (harness default options {'bogus': 1}, env family grid): refuses to build",
        ),
        (
            ["exploreval/Sudoku-v0", "--model", "m", "--base-url", "http://127.0.0.1:9/v1",
             "--harness-option", "few_shot=false"],
            "puzzle harness: unknown option(s) few_shot",
        ),
        (
            [GRID, "--model", "gpt-4.1-mini"],
            "agents.0 (model gpt-4.1-mini): no API key: set the environment variable "
            "OPENAI_API_KEY",
        ),
        (
            [GRID, "--model", "m", "--base-url", "http://127.0.0.1:9/v1", "--api-key-env",
             "MY_MISSING_KEY"],
            "api_key_env names MY_MISSING_KEY, which is not set",
        ),
        (
            [GRID, "--model", "m", "--reasoning-effort", "banana"],
            "(--reasoning-effort banana): Value error, reasoning effort 'banana' is not one the API accepts: none, minimal, low, medium, high",
        ),
    ],
)  # fmt: skip
def test_option_names_keys_and_efforts_are_checked_before_the_run_dir_exists(
    tmp_path: Path, args: list[str], needle: str
) -> None:
    result = cli("run", *args, "--out", "r", "-q", cwd=tmp_path, env=NO_KEY_ENV)
    assert result.returncode == 2, result.stderr
    assert needle in " ".join(result.stderr.split()), result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "r").exists()


def test_local_models_and_keyless_servers_need_no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    from exploreval.runner import check_api_keys, spec_from_dict

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    spec = spec_from_dict(
        {
            "suites": [{"env_id": GRID}],
            "agents": [
                {"kind": "llm", "model": "local:smollm2"},
                {"kind": "llm", "model": "vllm-model", "base_url": "http://127.0.0.1:9/v1"},
            ],
        }
    )
    check_api_keys(spec)  # no error: neither needs a key
    monkeypatch.setenv("OPENAI_API_KEY", "sk-anything")
    check_api_keys(
        spec_from_dict(
            {"suites": [{"env_id": GRID}], "agents": [{"kind": "llm", "model": "gpt-4.1"}]}
        )
    )


def test_reasoning_effort_values_are_the_sdks() -> None:
    import typing

    from openai.types.shared import ReasoningEffort

    from exploreval.models._base import REASONING_EFFORTS
    from exploreval.runner import SpecError, spec_from_dict

    (literal,) = [a for a in typing.get_args(ReasoningEffort) if a is not type(None)]
    assert set(REASONING_EFFORTS) == set(typing.get_args(literal))
    assert SamplingParams(reasoning_effort="low").reasoning_effort == "low"
    with pytest.raises(SpecError, match=r"agents.0.sampling.reasoning_effort.*'banana'"):
        spec_from_dict(
            {
                "suites": [{"env_id": GRID}],
                "agents": [
                    {"kind": "llm", "model": "m", "sampling": {"reasoning_effort": "banana"}}
                ],
            }
        )


@pytest.mark.parametrize(("flags", "expected"), [([], 32), (["--max-connections", "3"], 3)])
def test_max_connections_limits_requests_in_flight_end_to_end(
    tmp_path: Path, flags: list[str], expected: int
) -> None:
    """32 episodes in flight (--concurrency 32) against a slow server: the model sees at most
    max-connections requests at once, and reaches that limit; by default the limit follows
    --concurrency (issue 18: a plain --concurrency 32 held only 8 in flight)."""
    from exploreval.models.testing import StubServer

    with StubServer(delay_s=0.3, reply="<a>+</a>") as server:
        result = cli(
            "run", GRID, "--model", "stub", "--base-url", server.base_url, "--concurrency", "32",
            "--seeds", "0-31", "--max-steps", "2", *flags, "--no-report", "--out", "r", "-q",
            cwd=tmp_path,
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        assert server.max_in_flight == expected
        assert server.request_count == 64  # 32 episodes x 2 steps, each one call
    config = json.loads((tmp_path / "r" / "manifest.json").read_text())["config"]
    assert config["concurrency"] == 32
    assert config["agents"][0]["max_connections"] == (None if not flags else expected)


@pytest.mark.parametrize("models", [["--model", "a", "--model", "b"], ["--model", "a,b"]])
def test_several_models_run_as_several_agents_end_to_end(tmp_path: Path, models: list[str]) -> None:
    from exploreval.models.testing import StubServer

    with StubServer(reply="<a>+</a>") as server:
        result = cli(
            "run", GRID, *models, "--base-url", server.base_url, "--seeds", "0-1",
            "--max-steps", "2", "--no-report", "--out", "r", "-q", cwd=tmp_path,
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        assert sorted({body["model"] for body in server.requests}) == ["a", "b"]
    lines = [json.loads(x) for x in (tmp_path / "r" / "episodes.jsonl").read_text().splitlines()]
    assert len(lines) == 4  # 2 agents x 2 seeds: twice the episodes of one model
    by_agent = sorted((r["agent"]["name"], r["seed"]) for r in lines)
    assert by_agent == [
        ("a/default/full", 0), ("a/default/full", 1), ("b/default/full", 0), ("b/default/full", 1),
    ]  # fmt: skip
    assert all(r["status"] == "ok" and r["agent"]["kind"] == "llm" for r in lines)
    manifest = json.loads((tmp_path / "r" / "manifest.json").read_text())
    assert manifest["episodes_planned"] == 4 and manifest["episodes_done"] == 4
    assert [a["model"] for a in manifest["config"]["agents"]] == ["a", "b"]


def test_runs_names_every_kind_of_unreadable_manifest_in_one_line(tmp_path: Path) -> None:
    from exploreval.store import list_runs

    ok = cli(
        "run", GRID, "--agent", "random", "--no-report", "--out", "runs/good", "-q", cwd=tmp_path
    )
    assert ok.returncode == 0, ok.stderr
    runs = tmp_path / "runs"
    bad = {
        "not-json": b'{"run_id": "x", ',
        "wrong-schema": json.dumps({"name": 3, "status": "sleeping"}).encode(),
        "a-list": b"[1, 2]",
        "not-utf8": b"\xff\xfe{",
    }
    for name, content in bad.items():
        (runs / name).mkdir()
        (runs / name / "manifest.json").write_bytes(content)
    (runs / "a-directory" / "manifest.json").mkdir(parents=True)
    expected = {
        "not-json": "is not a valid manifest: not JSON (",
        "wrong-schema": "is not a valid manifest: field run_id: Field required (and 2 more)",
        "a-list": "is not a valid manifest: a JSON list, not an object",
        "not-utf8": "is not UTF-8 text (byte 0)",
        "a-directory": "cannot read",
    }
    found = {path.name: (manifest, error) for path, manifest, error in list_runs(runs)}
    assert found["good"][0] is not None and found["good"][1] == ""
    for name, needle in expected.items():
        manifest, error = found[name]
        assert manifest is None and needle in error, (name, error)
        assert "\n" not in error and len(error) < 400, (name, error)  # one line, not a dump
    listing = cli("runs", "runs", cwd=tmp_path)
    assert listing.returncode == 0, listing.stderr
    text = " ".join(listing.stdout.replace("│", " ").split())
    assert "finished" in text and "Traceback" not in listing.stderr
    for name in expected:
        assert f"runs/{name}" in text
    assert text.count("unreadable:") == len(expected)


def test_a_task2quiz_option_typo_is_refused_before_the_run_dir_exists(tmp_path: Path) -> None:
    for option, needle in (("bogus=1", "unknown option(s) bogus"),
                           ("max_questions=zero", "expected a positive integer")):  # fmt: skip
        result = cli(
            "run", "exploreval/Task2Quiz-v0", "--agent", "walkthrough", "--env-option", option,
            "--out", "r", "-q", cwd=tmp_path,
        )  # fmt: skip
        assert result.returncode == 2 and needle in " ".join(result.stderr.split())
        assert not (tmp_path / "r").exists()
