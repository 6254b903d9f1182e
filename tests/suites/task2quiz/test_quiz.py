"""The quiz: references agree with a brute-force reading of TextWorld's own facts, answerability
follows the Stage-1 evidence exactly (recomputed here independently), answers parse and
normalise, and the question subsample is deterministic."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exploreval.suites.task2quiz._contract import NON_ANSWERABLE, QuizWorld, Stage1StepFacts
from exploreval.suites.task2quiz._quiz_api import (
    GUIDELINES,
    check_max_questions,
    evidence_from_steps,
    generate_questions,
    normalise,
    parse_answer,
    question_prompt,
    select_questions,
    start_quiz,
)

WORLDS = [("easy", 0), ("easy", 1), ("medium", 0), ("medium", 3)]
DIRECTIONS = {"north_of": "north", "south_of": "south", "east_of": "east", "west_of": "west"}


@pytest.fixture(scope="module")
def worlds(tw_cache: Path) -> list[QuizWorld]:
    from exploreval.suites.task2quiz._benchmark import build_world

    return [build_world(d, s, tw_cache) for d, s in WORLDS]  # type: ignore[arg-type]


def brute_force(world: QuizWorld, text: str) -> str:
    """Answer a question from TextWorld's serialised propositions (not from the summary)."""
    names = {eid: info["name"] for eid, info in world.world["infos"] if info.get("name")}
    types = {eid: info["type"] for eid, info in world.world["infos"]}
    by_name = {v: k for k, v in names.items()}
    facts = [(f["name"], [a["name"] for a in f["arguments"]]) for f in world.world["world"]]
    holder = {args[0]: args[1] for name, args in facts if name in ("at", "in", "on")}

    def room_of(entity: str) -> str:
        while types[entity] != "r":
            entity = holder[entity]
        return entity

    def between(prefix: str, suffix: str) -> str:
        assert text.startswith(prefix) and text.endswith(suffix), text
        return text[len(prefix) : len(text) - len(suffix)]

    adjacent = {frozenset(args) for name, args in facts if name in DIRECTIONS}
    if text == "In which room did you start?":
        (room,) = [args[1] for name, args in facts if name == "at" and types[args[0]] == "P"]
        return names[room]
    if text.startswith("What does the ") and text.endswith(" open?"):
        key = by_name[between("What does the ", " open?")]
        (thing,) = [args[1] for name, args in facts if name == "match" and args[0] == key]
        return names[thing]
    if text.startswith("In which room was the "):
        return names[room_of(by_name[between("In which room was the ", " at the start?")])]
    if " directly connected to the " in text:
        a, b = between("Is the ", "?").split(" directly connected to the ")
        return "yes" if frozenset((by_name[a], by_name[b])) in adjacent else "no"
    if text.startswith("Which direction do you go from the "):
        a, b = between("Which direction do you go from the ", "?").split(" to reach the ")
        # north_of(X, Y): X lies north of Y, so from Y one goes north to reach X
        (way,) = [
            DIRECTIONS[n]
            for n, args in facts
            if n in DIRECTIONS and args == [by_name[b], by_name[a]]
        ]
        return way
    if text.startswith("Which key opens the "):
        thing = by_name[between("Which key opens the ", "?")]
        (key,) = [args[0] for name, args in facts if name == "match" and args[1] == thing]
        return names[key]
    if text.startswith("Was the ") and text.endswith(" locked at the start?"):
        thing = by_name[between("Was the ", " locked at the start?")]
        return "yes" if ("locked", [thing]) in facts else "no"
    if text.startswith("Was the ") and text.endswith(" open at the start?"):
        thing = by_name[between("Was the ", " open at the start?")]
        return "yes" if ("open", [thing]) in facts else "no"
    raise AssertionError(f"unexpected question {text!r}")


def test_every_reference_agrees_with_a_brute_force_reading_of_the_facts(
    worlds: list[QuizWorld],
) -> None:
    for world in worlds:
        questions = generate_questions(world, world.seed)
        assert {q.qtype for q in questions} == {
            "location", "connectivity", "direction", "match", "property",
        }  # fmt: skip
        # Appendix C's formats but the catch-all and "description" (no per-thing kind question:
        # docs/task2quiz.md, "Questions"); lock and open state are both asked
        assert {q.format for q in questions} == {"yes_no", "which", "where", "what"}
        assert any(q.text.endswith(" open at the start?") for q in questions)
        assert len({q.id for q in questions}) == len(questions) == len({q.text for q in questions})
        for question in questions:
            assert normalise(question.answer) == normalise(brute_force(world, question.text)), (
                question.text
            )
            if question.choices:
                assert question.answer in question.choices


def test_generation_is_deterministic_across_processes(
    worlds: list[QuizWorld], tmp_path: Path
) -> None:
    world = worlds[2]
    path = tmp_path / "w.json"
    path.write_text(world.model_dump_json())
    code = (
        "import sys, json; from exploreval.suites.task2quiz._contract import QuizWorld;"
        "from exploreval.suites.task2quiz._quiz_api import generate_questions;"
        "w = QuizWorld.model_validate_json(open(sys.argv[1]).read());"
        "print(json.dumps([q.model_dump(mode='json') for q in generate_questions(w, 3)]))"
    )
    extra = {"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else {}
    outs = {
        subprocess.run(
            [sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True,
            env={"PYTHONHASHSEED": h, "PATH": "/usr/bin:/bin", **extra},
        ).stdout
        for h in ("1", "2")
    }  # fmt: skip
    assert len(outs) == 1
    assert json.loads(outs.pop()) == [
        q.model_dump(mode="json") for q in generate_questions(world, 3)
    ]


# -- evidence, computed independently of the implementation -----------------------------------

_KEY_MESSAGE = re.compile(r"You have to unlock the (.+?) with the (.+?) first")


def independent_atoms(world: QuizWorld, steps: list[Stage1StepFacts]) -> set[str]:
    """The evidence atoms of a trajectory, written from the rules in docs/task2quiz.md."""
    s = world.summary or {}
    start, names = s["start_room"], s["names"]
    ids = {v: k for k, v in names.items()}
    adjacent = {frozenset((c["src"], c["dst"])) for c in s["connections"]}
    keys = {x: v["key"] for x, v in {**s["doors"], **s["containers"]}.items()}
    atoms = {f"visited:{start}"}
    by_task: dict[int, list[Stage1StepFacts]] = {}
    for step in steps:
        by_task.setdefault(step.task_index, []).append(step)
    for task_steps in by_task.values():
        here = start
        for step in task_steps:
            if step.room:
                atoms.add(f"visited:{step.room}")
                if step.room != here and frozenset((here, step.room)) in adjacent:
                    atoms |= {f"moved:{here}:{step.room}", f"moved:{step.room}:{here}"}
                here = step.room
            for fact in step.facts_added:
                if fact.startswith("open("):
                    atoms.add(f"opened:{fact[5:-1]}")
                if fact.startswith("in(") and fact.endswith(",I)"):
                    atoms.add(f"held:{fact[3:-3]}")
            atoms |= {f"unlocked:{f[7:-1]}" for f in step.facts_removed if f.startswith("locked(")}
            for thing, key in _KEY_MESSAGE.findall(step.feedback):
                if keys.get(ids.get(thing, "")) == ids.get(key):
                    atoms.add(f"keynamed:{ids[thing]}")
        atoms |= _told_states(s, task_steps)
    return atoms


def _told_states(s: dict[str, Any], task_steps: list[Stage1StepFacts]) -> set[str]:
    """``described:X:state`` from one task's text, as the docs state the rule: the task's intro,
    then each step's feedback, while X is untouched in this task; a container's "locked",
    "closed" or "open(ed)" (before its name, or "The X is locked/closed"), a door's "open"."""
    names = s["names"]
    out: set[str] = set()
    touched: set[str] = set()
    texts: list[tuple[str, list[str]]] = []
    for i, step in enumerate(task_steps):
        if i == 0:
            texts.append((step.intro, []))
        texts.append((step.feedback, [*step.facts_added, *step.facts_removed]))
    for text, facts in texts:
        for fact in facts:
            head, _, rest = fact.partition("(")
            if head in ("open", "closed", "locked"):
                touched.add(rest.rstrip(")").split(",")[0])
        low = " ".join(text.lower().split())
        for x in s["containers"]:
            if x in touched:
                continue
            n = names[x].lower()
            for word in ("locked", "closed", "open", "opened"):
                article = "an" if word[0] == "o" else "a"
                if f"{article} {word} {n}" in low or (
                    word in ("locked", "closed") and f"the {n} is {word}" in low
                ):
                    out.add(f"described:{x}:{'open' if word.startswith('open') else word}")
        for x in s["doors"]:
            n = names[x].lower()
            if x not in touched and (f"an open {n}" in low or f"an opened {n}" in low):
                out.add(f"described:{x}:open")
    return out


def holds(formula: Any, atoms: set[str]) -> bool:
    if isinstance(formula, dict):
        parts = [holds(f, atoms) for f in formula.get("all", formula.get("any", []))]
        return all(parts) if "all" in formula else any(parts)
    return formula in atoms


def test_evidence_from_hand_written_steps(worlds: list[QuizWorld]) -> None:
    world = worlds[0]  # easy seed 0: ballroom r_0 -S-> library r_1 -S-> kitchen r_2; N: r_3
    steps = [
        Stage1StepFacts(task_index=0, command="open plaster door", feedback="", room="r_0",
                        facts_added=("open(d_0)",), facts_removed=("closed(d_0)",)),
        Stage1StepFacts(task_index=0, command="go south", feedback="", room="r_1"),
        Stage1StepFacts(task_index=0, command="open safe", room="r_1",
                        feedback="You have to unlock the safe with the enamel key first."),
        Stage1StepFacts(task_index=0, command="take bent key from desk", feedback="", room="r_1",
                        facts_added=("in(k_0,I)",), facts_removed=("on(k_0,s_0)",)),
        # a new task restarts in the ballroom: kitchen is not adjacent to it, so no move
        Stage1StepFacts(task_index=1, command="go south", feedback="", room="r_2"),
        Stage1StepFacts(task_index=1, command="unlock oak door with bent key", room="r_2",
                        feedback="You have to unlock the oak door with the enamel key first.",
                        facts_removed=("locked(d_1)",)),
    ]  # fmt: skip
    found = evidence_from_steps(world, steps)
    assert found.visited == {"r_0", "r_1", "r_2"}
    assert found.moves == {frozenset(("r_0", "r_1"))}
    assert found.opened == {"d_0"} and found.held == {"k_0"} and found.unlocked == {"d_1"}
    # the true key named counts; a message naming the wrong key (never sent by the game) not
    assert found.keynamed == {"c_1"}
    assert found.atoms() == independent_atoms(world, steps)


def _atom_steps(world: QuizWorld) -> list[Stage1StepFacts]:
    """Synthetic Stage-1 evidence touching everything: walk each connection both ways (one
    task per connection), open/unlock/take everything, and try each locked thing once."""
    s = world.summary or {}
    names = s["names"]
    steps: list[Stage1StepFacts] = []
    path = _bfs_paths(s)
    task = 0
    for c in s["connections"]:
        for a, b in ((c["src"], c["dst"]), (c["dst"], c["src"])):
            for room in [*path[a], b]:
                steps.append(Stage1StepFacts(task_index=task, command="go", feedback="", room=room))
            task += 1
    for thing, info in sorted({**s["doors"], **s["containers"]}.items()):
        if info["key"]:
            message = f"You have to unlock the {names[thing]} with the {names[info['key']]} first."
            steps.append(
                Stage1StepFacts(task_index=task, command="open", feedback=message, room=None)
            )
        steps.append(
            Stage1StepFacts(task_index=task, command="open", feedback="", room=None,
                            facts_added=(f"open({thing})",),
                            facts_removed=(f"locked({thing})", f"closed({thing})"))
        )  # fmt: skip
        task += 1
    for item in sorted(s["items"]):
        steps.append(
            Stage1StepFacts(task_index=task, command="take", feedback="", room=None,
                            facts_added=(f"in({item},I)",))
        )  # fmt: skip
        task += 1
    # TextWorld's own phrasing of each state, once in an intro and once in a reply
    for thing, info in sorted({**s["doors"], **s["containers"]}.items()):
        word = {"locked": "a locked", "closed": "a closed", "open": "an open"}[info["state"]]
        phrase = f"You make out {word} {names[thing]}."
        steps.append(Stage1StepFacts(task_index=task, command="look", feedback="", room=None,
                                     intro=f"Task {task + 1}. {phrase}"))  # fmt: skip
        steps.append(Stage1StepFacts(task_index=task, command="look", feedback=phrase, room=None))
        task += 1
    return steps


def _bfs_paths(s: dict[str, Any]) -> dict[str, list[str]]:
    """Rooms walked through from the start to each room (start excluded, room included)."""
    neighbours: dict[str, list[str]] = {r: [] for r in s["rooms"]}
    for c in s["connections"]:
        neighbours[c["src"]].append(c["dst"])
        neighbours[c["dst"]].append(c["src"])
    paths: dict[str, list[str]] = {s["start_room"]: []}
    frontier = [s["start_room"]]
    while frontier:
        room = frontier.pop(0)
        for other in neighbours[room]:
            if other not in paths:
                paths[other] = [*paths[room], other]
                frontier.append(other)
    return paths


def test_full_evidence_answers_everything(worlds: list[QuizWorld]) -> None:
    for world in worlds:
        session = start_quiz(world, _atom_steps(world), world.seed)
        assert session.references == [q.answer for q in session.questions]


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_answerability_is_exactly_the_checkpoints_over_the_trajectory_evidence(
    worlds: list[QuizWorld], data: st.DataObject
) -> None:
    """For any sub-trajectory (whole tasks kept or dropped), a question is answerable iff its
    checkpoint formula holds over the evidence computed independently from those steps."""
    world = data.draw(st.sampled_from(worlds))
    full = _atom_steps(world)
    tasks = sorted({s.task_index for s in full})
    keep = set(data.draw(st.lists(st.sampled_from(tasks), unique=True)))
    steps = [s for s in full if s.task_index in keep]
    atoms = independent_atoms(world, steps)
    session = start_quiz(world, steps, world.seed)
    for question, reference in zip(session.questions, session.references, strict=True):
        expected = question.answer if holds(question.checkpoints, atoms) else NON_ANSWERABLE
        assert reference == expected, question.text


def expected_answerable(world: QuizWorld, text: str, atoms: set[str]) -> bool:
    """The answerability rules of docs/task2quiz.md ("Evidence and checkpoints"), written
    independently of the implementation's checkpoint formulas."""
    s = world.summary or {}
    ids = {v: k for k, v in s["names"].items()}
    lockables = {**s["doors"], **s["containers"]}
    neighbours: dict[str, set[str]] = {r: set() for r in s["rooms"]}
    for c in s["connections"]:
        neighbours[c["src"]].add(c["dst"])
        neighbours[c["dst"]].add(c["src"])

    def seen(x: str) -> bool:
        if x in s["containers"]:
            return f"visited:{s['containers'][x]['room']}" in atoms
        if x in s["supporters"]:
            return f"visited:{s['supporters'][x]['room']}" in atoms
        item = s["items"][x]
        if f"held:{x}" in atoms:
            return True
        if f"visited:{item['room']}" not in atoms:
            return False
        kind, where = item["location"]
        hidden = kind == "in" and s["containers"][where]["state"] != "open"
        return not hidden or f"opened:{where}" in atoms

    def all_exits(r: str) -> bool:
        return all(f"moved:{r}:{o}" in atoms for o in neighbours[r])

    if text == "In which room did you start?":
        return f"visited:{s['start_room']}" in atoms
    if text.startswith("What does the ") and text.endswith(" open?"):
        key = ids[text[len("What does the ") : -len(" open?")]]
        (x,) = [t for t, v in lockables.items() if v["key"] == key]
        return f"unlocked:{x}" in atoms or f"keynamed:{x}" in atoms
    prefix, suffix = "In which room was the ", " at the start?"
    if text.startswith(prefix) and text.endswith(suffix):
        return seen(ids[text[len(prefix) : len(text) - len(suffix)]])
    if " directly connected to the " in text:
        a, b = (ids[n] for n in text[len("Is the ") : -1].split(" directly connected to the "))
        if b in neighbours[a]:
            return f"moved:{a}:{b}" in atoms
        both = f"visited:{a}" in atoms and f"visited:{b}" in atoms
        return both and (all_exits(a) or all_exits(b))
    if text.startswith("Which direction do you go from the "):
        a, b = text[len("Which direction do you go from the ") : -1].split(" to reach the ")
        return f"moved:{ids[a]}:{ids[b]}" in atoms
    if text.startswith("Which key opens the "):
        x = ids[text[len("Which key opens the ") : -1]]
        return f"unlocked:{x}" in atoms or f"keynamed:{x}" in atoms
    if text.startswith("Was the ") and text.endswith(" locked at the start?"):
        x = ids[text[len("Was the ") : -len(" locked at the start?")]]
        state = lockables[x]["state"]
        box = x in s["containers"]
        if state == "locked":
            told = box and f"described:{x}:locked" in atoms
            return f"keynamed:{x}" in atoms or f"unlocked:{x}" in atoms or told
        if state == "closed":
            return f"opened:{x}" in atoms or (box and f"described:{x}:closed" in atoms)
        rooms = lockables[x]["rooms"] if x in s["doors"] else [lockables[x]["room"]]
        return any(f"visited:{r}" in atoms for r in rooms)
    if text.startswith("Was the ") and text.endswith(" open at the start?"):
        x = ids[text[len("Was the ") : -len(" open at the start?")]]
        if lockables[x]["state"] == "open":
            rooms = lockables[x]["rooms"] if x in s["doors"] else [lockables[x]["room"]]
            return any(f"visited:{r}" in atoms for r in rooms)
        acted = {f"opened:{x}", f"unlocked:{x}", f"keynamed:{x}"}
        told = {f"described:{x}:closed", f"described:{x}:locked"} if x in s["containers"] else set()
        return bool((acted | told) & atoms)
    raise AssertionError(text)


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_checkpoint_formulas_implement_the_documented_rules(
    worlds: list[QuizWorld], data: st.DataObject
) -> None:
    world = data.draw(st.sampled_from(worlds))
    universe = sorted(independent_atoms(world, _atom_steps(world)))
    atoms = set(data.draw(st.lists(st.sampled_from(universe), unique=True)))
    for question in generate_questions(world, world.seed):
        assert holds(question.checkpoints, atoms) == expected_answerable(
            world, question.text, atoms
        ), question.text


@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_non_answerable_flips_exactly_when_a_checkpoint_is_removed(
    worlds: list[QuizWorld], data: st.DataObject
) -> None:
    """Dropping the one task that produced an evidence atom flips exactly the questions whose
    formula needed it, and nothing else."""
    world = data.draw(st.sampled_from(worlds))
    full = _atom_steps(world)
    base = start_quiz(world, full, world.seed)
    dropped = data.draw(st.sampled_from(sorted({s.task_index for s in full})))
    rest = [s for s in full if s.task_index != dropped]
    lost = independent_atoms(world, full) - independent_atoms(world, rest)
    after = start_quiz(world, rest, world.seed)
    atoms_after = independent_atoms(world, rest)
    for q, before, now in zip(base.questions, base.references, after.references, strict=True):
        flipped = before != now
        assert flipped == (not holds(q.checkpoints, atoms_after)), q.text
        if flipped:
            assert now == NON_ANSWERABLE and _mentions(q.checkpoints) & lost


def _mentions(formula: Any) -> set[str]:
    if isinstance(formula, dict):
        parts = formula.get("all", formula.get("any", []))
        return set().union(*(_mentions(f) for f in parts)) if parts else set()
    return {formula}


@pytest.mark.slow
def test_dropping_a_real_task_flips_exactly_what_only_it_showed(
    worlds: list[QuizWorld], tmp_path: Path
) -> None:
    """On a real walkthrough trajectory (the engine's own step facts): removing one task's
    steps flips exactly the questions whose evidence only that task provided."""
    from exploreval.runner import run_experiment, spec_from_dict
    from exploreval.store import RunDir
    from exploreval.suites.task2quiz._quiz_metrics import stage1_from_record

    spec = spec_from_dict(
        {
            "suites": [{"env_id": "exploreval/Task2Quiz-v0", "presets": ["medium"], "seeds": [0]}],
            "agents": [{"kind": "scripted", "agent": "quiz-oracle"}],
        }
    )
    run_experiment(spec, str(tmp_path / "run"))
    (record,) = list(RunDir(tmp_path / "run").iter_records())
    world = QuizWorld.model_validate(record.ground_truth["quiz_world"])
    steps = stage1_from_record(record)
    base = start_quiz(world, steps, world.seed)
    assert base.references == record.ground_truth["references"]
    flips = 0
    for task in sorted({s.task_index for s in steps}):
        rest = [s for s in steps if s.task_index != task]
        atoms = independent_atoms(world, rest)
        after = start_quiz(world, rest, world.seed)
        for q, ref in zip(after.questions, after.references, strict=True):
            assert ref == (q.answer if holds(q.checkpoints, atoms) else NON_ANSWERABLE)
        flips += sum(a != b for a, b in zip(base.references, after.references, strict=True))
    assert flips > 0


# -- answers and prompts ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "answer"),
    [
        ('{"answer": "Kitchen", "reason": "saw it"}', "Kitchen"),
        ('```json\n{"answer": "yes"}\n```', "yes"),
        ('Sure! {"answer": true, "reason": "x"} done', "yes"),
        ('{"answer": "The Bent Key."}', "The Bent Key."),
    ],
)
def test_answers_parse_tolerantly(raw: str, answer: str) -> None:
    assert parse_answer(raw) == (answer, None)


def test_unparseable_answers_carry_a_reason_and_normalisation_folds_synonyms() -> None:
    for raw in ("kitchen", '{"answer": ', '{"reason": "no answer field"}', '{"answer": [1]}'):
        parsed, error = parse_answer(raw)
        assert parsed is None and error
    assert normalise("The Bent  Key.") == normalise("bent key")
    assert normalise("Unknown") == normalise(NON_ANSWERABLE) == normalise("Non-Answerable")
    assert normalise("north") != normalise("south")


def test_prompt_follows_appendix_c(worlds: list[QuizWorld]) -> None:
    questions = generate_questions(worlds[0], 0)
    which = next(q for q in questions if q.format == "which")
    text = question_prompt(which, 3, len(questions))
    assert text.startswith(f"Question 4 of {len(questions)}: {which.text}")
    assert "Choices:\n" + "\n".join(f"- {c}" for c in which.choices) in text
    assert GUIDELINES["which"] in text and '"non-answerable"' in text
    yes_no = next(q for q in questions if q.format == "yes_no")
    assert "Choices" not in question_prompt(yes_no, 0, 1)
    assert (
        "answer"
        not in json.dumps(start_quiz(worlds[0], [], 0).public(0))
        .replace('"format"', "")
        .split('"guideline"')[0]
    )


@settings(max_examples=40, deadline=None)
@given(limit=st.integers(1, 200), seed=st.integers(0, 10**6))
def test_question_subsample_is_seeded_spread_and_ordered(
    worlds: list[QuizWorld], limit: int, seed: int
) -> None:
    questions = generate_questions(worlds[2], 0)
    chosen = select_questions(questions, limit, seed)
    assert chosen == sorted(set(chosen)) and len(chosen) == min(limit, len(questions))
    assert chosen == select_questions(questions, limit, seed)
    counts: dict[str, int] = {}
    for i in chosen:
        counts[questions[i].qtype] = counts.get(questions[i].qtype, 0) + 1
    available = {t: sum(q.qtype == t for q in questions) for t in counts}
    # round robin: no type gets two more than another unless that one ran out
    for a in counts:
        for b in counts:
            assert counts[a] <= counts[b] + 1 or counts[b] == available[b]


def test_max_questions_option_is_validated() -> None:
    assert check_max_questions(None) is None and check_max_questions("12") == 12
    for bad in ("0", "-3", "ten", "2.5", 1.5):
        with pytest.raises(ValueError, match="max_questions"):
            check_max_questions(bad)


def test_the_quiz_rule_is_validated_recorded_and_rescored_by() -> None:
    from exploreval.suites.task2quiz._quiz_api import QUIZ_RULES, check_quiz_rule

    assert check_quiz_rule(None) == "paper" and QUIZ_RULES == ("paper", "per-element")
    assert check_quiz_rule("per-element") == "per-element"
    with pytest.raises(ValueError, match="option 'quiz_rule' must be one of paper, per-element"):
        check_quiz_rule("table2")
