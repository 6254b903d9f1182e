"""``exploreval/Task2Quiz-v0`` on real TextWorld: walkthroughs win every task through the runner,
stage-1 step facts replay the true state, per-task caps, the quiz phase, the env checker, lazy
imports, and the Table 1 comparison."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from exploreval.core import make_env
from exploreval.suites.task2quiz import _quiz_api
from exploreval.suites.task2quiz._benchmark import EnvStats, table1
from exploreval.suites.task2quiz._contract import NON_ANSWERABLE, Question, QuizWorld

ENV_ID = "exploreval/Task2Quiz-v0"


def _initial_facts(world: dict[str, Any]) -> set[str]:
    return {f"{f['name']}({','.join(a['name'] for a in f['arguments'])})" for f in world["world"]}


@pytest.mark.slow
def test_walkthrough_agent_wins_every_task_through_the_runner(
    tw_cache: Path, tmp_path: Path
) -> None:
    from exploreval.runner import run_experiment, spec_from_dict
    from exploreval.store import RunDir

    spec = spec_from_dict(
        {
            "suites": [{"env_id": ENV_ID, "presets": ["easy"], "seeds": [0]}],
            "agents": [{"kind": "scripted", "agent": "walkthrough"}],
        }
    )
    run_experiment(spec, str(tmp_path / "run"))
    (record,) = list(RunDir(tmp_path / "run").iter_records())
    truth = record.ground_truth
    tasks = truth["quiz_world"]["tasks"]
    assert len(record.tasks) == len(tasks) >= 2
    assert all(o.success for o in record.tasks)  # TSR 1.0
    assert [o.steps for o in record.tasks] == [len(t["walkthrough"]) for t in tasks]
    assert record.success and record.terminated
    assert [s.task for s in record.steps if s.phase == "task"] == [
        i for i, t in enumerate(tasks) for _ in t["walkthrough"]
    ]
    assert sum(s.reward for s in record.steps) == len(tasks)
    # stage-1 step facts replay the true state from the initial world, task by task
    initial = _initial_facts(truth["quiz_world"]["world"])
    for i, task in enumerate(tasks):
        state = set(initial)
        steps = [s for s in record.steps if s.phase == "task" and s.task == i]
        for step in steps:
            info = step.info
            assert info["task_index"] == i and info["command"] == step.action
            assert not (set(info["facts_added"]) & set(info["facts_removed"]))
            assert set(info["facts_removed"]) <= state
            state = (state - set(info["facts_removed"])) | set(info["facts_added"])
            assert f"at(P,{info['room']})" in state
        target = task["target"]
        goal_fact = {
            "go": f"at(P,{target})",
            "take": f"in({target},I)",
            "eat": f"eaten({target})",
            "open": f"open({target})",
            "unlock": f"closed({target})",
        }[task["goal_kind"]]
        assert goal_fact in state and goal_fact not in initial
    # ids, not names, in the facts; quiz steps carry answers, not facts
    task_steps = [s for s in record.steps if s.phase == "task"]
    assert all("(" in f and " " not in f for s in task_steps for f in s.info["facts_added"])
    assert all("facts_added" not in s.info for s in record.steps if s.phase == "quiz")


class _TwoQuestions:
    """Scripted stand-in for the quiz side: two questions, exact-match answers."""

    def __init__(self, world: QuizWorld, stage1: list[Any], seed: int) -> None:
        self.stage1 = list(stage1)
        room = world.summary["names"][world.summary["start_room"]] if world.summary else "?"
        self.questions = [
            Question(id="q0", qtype="location", format="where", text="Where did you start?",
                     answer=room),
            Question(id="q1", qtype="match", format="yes_no", text="Is there a key?",
                     answer="yes"),
        ]  # fmt: skip
        self.references = [room, NON_ANSWERABLE]

    def prompt(self, i: int) -> str:
        return f"Q{i}: {self.questions[i].text}"

    def public(self, i: int) -> dict[str, Any]:
        return {"index": i, "text": self.questions[i].text}

    def record_answer(self, i: int, raw: str) -> dict[str, Any]:
        return {
            "answer": raw,
            "reference": self.references[i],
            "correct": raw == self.references[i],
        }


@pytest.mark.slow
def test_quiz_phase_caps_and_step_facts_reach_the_quiz(
    tw_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[_TwoQuestions] = []

    def start(
        world: QuizWorld, stage1: list[Any], seed: int, limit: Any = None, rule: str = "paper"
    ) -> _TwoQuestions:
        seen.append(_TwoQuestions(world, stage1, seed))
        return seen[-1]

    monkeypatch.setattr(_quiz_api, "start_quiz", start)
    env = make_env(ENV_ID, preset="easy")
    env.task_step_cap = 2
    obs, info = env.reset(seed=0)
    assert obs.startswith("Task 1 of") and info["admissible_commands"]
    n_tasks = len(env.tasks)  # type: ignore[attr-defined]
    for i in range(n_tasks):
        assert (env.phase, env.task_index) == ("task", i)
        _, r1, term, trunc, info1 = env.step("look")
        assert not info1.get("task_done") and not term and r1 == 0.0
        obs, r2, term, trunc, info2 = env.step("inventory")
        assert info2["task_done"] and info2["success"] is False and not term
    outcomes = env.task_outcomes()
    assert outcomes is not None and [o["steps"] for o in outcomes] == [2] * n_tasks
    assert all(o["truncated"] and not o["success"] for o in outcomes)
    # the quiz: stage-1 facts were handed over, prompts are observations
    assert env.phase == "quiz" and obs.endswith("Q0: Where did you start?")
    assert len(seen) == 1 and len(seen[0].stage1) == 2 * n_tasks
    start_room = seen[0].references[0]
    obs, reward, term, _, info = env.step(start_room)
    assert (obs, reward, term) == ("Q1: Is there a key?", 0.0, False)
    assert info["quiz"]["correct"] and info["question_index"] == 0
    assert info["question"] == {"index": 1, "text": "Is there a key?"}  # the next question
    obs, reward, term, _, info = env.step("yes")
    assert term and reward == 0.0 and info["quiz"]["correct"] is False
    truth = env.ground_truth()
    assert [q["id"] for q in truth["questions"]] == ["q0", "q1"]
    assert truth["references"] == [start_room, NON_ANSWERABLE]
    assert truth["quiz_world"]["content_hash"]
    env.close()


@pytest.mark.slow
def test_invalid_actions_cost_a_step_and_refused_probes_stay_valid(tw_cache: Path) -> None:
    """Invalid = the game could not act on the command at all; a command it understood but
    refused for a reason of the world (opening a locked door) is a valid probe, not admissible."""
    env = make_env(ENV_ID, preset="easy")
    _, reset_info = env.reset(seed=0)
    assert reset_info["room"] == "r_0" and reset_info["inventory"] == [] and reset_info["goal"]
    _, _, _, _, info = env.step("<invalid>")
    assert info["valid"] is False and env.t == 1
    _, _, _, _, info = env.step("dance wildly")
    assert info["valid"] is False and "unknown verb" in info["invalid_reason"]
    # never sent to the engine: its interpreter reads a backslash as an escape (random text
    # with one crashed it), takes printable ASCII only, and has a small input buffer
    for unsafe, reason in (("open \\x chest", "cannot take"), ("go nörth", "cannot take"),
                           ("take " + "x" * 200, "longer than")):  # fmt: skip
        _, _, _, _, info = env.step(unsafe)
        assert info["valid"] is False and reason in info["invalid_reason"]
        assert info["feedback"] == "Invalid action."
    _, _, _, _, info = env.step("go west")  # no exit that way
    assert info["valid"] is False and "no exit" in info["invalid_reason"]
    _, _, _, _, info = env.step("open oak door")  # locked: the game names its key
    assert info["valid"] is True and info["admissible"] is False
    assert "with the bent key" in info["feedback"]
    _, _, _, _, info = env.step("look")
    assert info["valid"] is True and info["admissible"] is True
    for command in ("open plaster door", "go south", "take bent key from desk"):
        _, _, _, _, info = env.step(command)
    assert info["inventory"] == ["bent key"] and info["score"] == 0
    env.close()


@pytest.mark.slow
def test_env_passes_the_checker(tw_cache: Path) -> None:
    from exploreval.runner import check_env

    check_env(ENV_ID, "easy", seeds=(0,), n_steps=30)


def test_listing_envs_never_imports_textworld() -> None:
    code = (
        "import sys, exploreval\n"
        "from exploreval.core import list_envs\n"
        "ids = [s.env_id for s in list_envs()]\n"
        "assert 'textworld' not in sys.modules, 'textworld imported'\n"
        "print('exploreval/Task2Quiz-v0' in ids)\n"
    )
    sys.path.insert(0, str(Path(__file__).parent))
    proc = subprocess.run(
        [sys.executable, "-c", "import conftest\n" + code],
        capture_output=True, text=True, check=True, cwd=str(Path(__file__).parent),
    )  # fmt: skip
    assert proc.stdout.strip() == "True"


def test_table1_states_the_papers_inconsistency() -> None:
    stats = [EnvStats("easy", s, 4, 8, 3, 12, None, 0.1) for s in range(10)] + [
        EnvStats("medium", s, 7, 15, 6, 30, None, 0.1) for s in range(10)
    ]
    text = table1(stats)
    assert "| easy | 4-4 / 3-5 | 8-8 / 6-10 | 3.0 / 2.4 | 4.00 / 4.17 | n/a / 34.6 |" in text
    assert "medium" in text and "hard" not in text.split("Totals")[0]
    assert "20 environments, 90 tasks, n/a questions" in text
    assert "224 tasks" in text and "give 204 tasks and 1949 questions" in text


@pytest.mark.slow
def test_build_command_builds_into_the_cache_and_prints_table1(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from exploreval.cli import app

    cache = tmp_path / "cache"
    args = ["task2quiz-build", "--cache-dir", str(cache), "--envs", "2", "--workers", "1"]
    result = CliRunner().invoke(app, [*args, "--difficulty", "easy"])
    assert result.exit_code == 0, result.output
    assert "| easy |" in result.output and "| medium |" not in result.output
    assert "2 environments" in result.output and "give 204 tasks" in result.output
    assert len(list(cache.glob("*/*/game.z8"))) >= 2
    bad = CliRunner().invoke(app, [*args, "--difficulty", "extreme"])
    assert bad.exit_code == 2 and "extreme" in bad.output


@pytest.mark.slow
def test_random_explorer_plays_admissible_commands(tw_cache: Path, tmp_path: Path) -> None:
    from exploreval.runner import run_experiment, spec_from_dict
    from exploreval.store import RunDir

    spec = spec_from_dict(
        {
            "suites": [{"env_id": ENV_ID, "presets": ["easy"], "seeds": [0]}],
            "agents": [{"kind": "scripted", "agent": "random-explorer"}],
            "max_steps": 5,
        }
    )
    run_experiment(spec, str(tmp_path / "run"))
    (record,) = list(RunDir(tmp_path / "run").iter_records())
    acting = [s for s in record.steps if s.phase == "task"]
    assert acting and all(s.valid for s in acting)
    assert all(o.steps <= 5 for o in record.tasks) and record.max_steps == 5
    assert len(record.tasks) == len(record.ground_truth["quiz_world"]["tasks"])


def test_entity_mentions_prefer_the_longer_name_and_skip_rooms() -> None:
    from exploreval.suites.task2quiz._env import EntityMentions

    mentions = EntityMentions({"k_0": "key", "k_1": "rusty key", "r_0": "kitchen", "c_0": "chest",
                               "P": "player"})  # fmt: skip
    assert mentions.find("You see a rusty key and a chest in the kitchen.") == ["c_0", "k_1"]
    assert mentions.find("take key from chest") == ["c_0", "k_0"]
    assert mentions.find("keystone monkey") == []  # whole names only
    assert EntityMentions({}).find("anything") == []


@pytest.mark.slow
def test_episodes_emit_what_memory_recall_distance_needs(tw_cache: Path, tmp_path: Path) -> None:
    """Issue 44: each step names the objects its observation shows and its command acts on, and
    the ground truth names the tasks' objects (G_task), so TIDE's recall distance (Appendix C.5)
    is defined on Task2Quiz as on AlfWorld; a walkthrough acts on objects it has just seen."""
    from exploreval.metrics._tide_records import record_recall, views_of
    from exploreval.runner import run_experiment, spec_from_dict
    from exploreval.store import RunDir

    spec = spec_from_dict({"suites": [{"env_id": ENV_ID, "presets": ["easy"], "seeds": [0]}],
                           "agents": [{"kind": "scripted", "agent": "walkthrough"}]})  # fmt: skip
    run_experiment(spec, str(tmp_path / "run"))
    (record,) = list(RunDir(tmp_path / "run").iter_records())
    names = record.ground_truth["quiz_world"]["summary"]["names"]
    relevant = set(record.ground_truth["task_entities"])
    assert relevant and all(not e.startswith("r_") for e in relevant)
    task_steps = [s for s in record.steps if s.phase == "task"]
    for step, following in zip(task_steps, [*record.steps[1:], None], strict=False):
        for eid in step.info["entities_acted"]:
            assert names[eid].lower() in step.action.lower()
        # what the step's outcome shows is what the agent reads next
        shown = str(following.observation if following is not None else "").lower()
        for eid in step.info["entities_seen"]:
            assert names[eid].lower() in shown
    events = [e for view in views_of(record) for e in record_recall(view).events]
    assert len(events) >= len(record.tasks)
    assert {e.entity for e in events} <= relevant and min(e.distance for e in events) == 1


def test_each_episode_records_its_quiz_rule_and_is_rescored_by_it(
    tw_cache: Path, tmp_path: Path
) -> None:
    from types import SimpleNamespace

    from exploreval.runner import run_experiment, spec_from_dict
    from exploreval.store import RunDir
    from exploreval.suites.task2quiz._generate import generate_world
    from exploreval.suites.task2quiz._quiz_api import generate_questions
    from exploreval.suites.task2quiz._quiz_metrics import rescored_answers

    suite = {"env_id": ENV_ID, "presets": ["easy"], "seeds": [0]}
    spec = spec_from_dict(
        {
            "suites": [suite, {**suite, "env_options": {"quiz_rule": "per-element"}}],
            "agents": [{"kind": "scripted", "agent": "walkthrough"}],
        }
    )
    run_experiment(spec, str(tmp_path / "run"))
    records = list(RunDir(tmp_path / "run").iter_records())
    world = SimpleNamespace(summary=generate_world("easy", 0).summary())
    by_rule = {r.ground_truth["quiz_rule"]: r for r in records}
    assert set(by_rule) == {"paper", "per-element"}
    for rule, record in by_rule.items():
        asked = [q["text"] for q in record.ground_truth["questions"]]
        assert asked == [q.text for q in generate_questions(world, 0, rule)]  # type: ignore[arg-type]
        rescored = rescored_answers(record)
        assert [r["question_id"] for r in rescored] == [
            q["id"] for q in record.ground_truth["questions"]
        ]
    assert len(by_rule["paper"].ground_truth["questions"]) != len(
        by_rule["per-element"].ground_truth["questions"]
    )
    old = by_rule["per-element"].model_copy(
        update={"ground_truth": {**by_rule["per-element"].ground_truth}}
    )
    del old.ground_truth["quiz_rule"]  # a record from before the rule was named
    assert len(rescored_answers(old)) == len(by_rule["per-element"].ground_truth["questions"])
