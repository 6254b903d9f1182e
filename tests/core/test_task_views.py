"""``EpisodeRecord.task_views``: the shortcut for what the runner stores most (one task, every
step acting and of that task) gives exactly the views of the general construction."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from exploreval.core import AgentInfo, EpisodeRecord, Step, TaskOutcome

STEP = st.tuples(st.sampled_from(["task", "quiz"]), st.integers(0, 2), st.sampled_from("abc"))


def record(steps: list[tuple[str, int, str]], tasks: list[int], final: str | None) -> EpisodeRecord:
    return EpisodeRecord(
        episode_id="e",
        env_id="x/Y-v0",
        family="y",
        preset="p",
        seed=3,
        agent=AgentInfo(name="a", kind="scripted"),
        reset_info={"pos": [0, 0]},
        steps=[
            Step(t=t, phase=phase, task=task, observation=f"o{t}{text}", action=text)
            for t, (phase, task, text) in enumerate(steps)
        ],
        tasks=[TaskOutcome(index=i, success=i % 2 == 0, steps=1, reward=0.5) for i in tasks],
        final_observation=final,
        success=True,
    )


@settings(max_examples=300, deadline=None)
@given(
    st.lists(STEP, max_size=8),
    st.lists(st.integers(0, 2), max_size=3, unique=True),
    st.sampled_from([None, "end"]),
)
def test_views_equal_the_general_construction(
    steps: list[tuple[str, int, str]], tasks: list[int], final: str | None
) -> None:
    r = record(steps, tasks, final)
    assert r.task_views() == r._task_views()


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from("abc"), max_size=8), st.integers(0, 2))
def test_a_single_task_record_has_one_view_of_all_its_steps(actions: list[str], index: int) -> None:
    r = record([("task", index, a) for a in actions], [index], "end")
    (view,) = r.task_views()
    assert view == r._task_views()[0]
    assert view.steps == r.steps and view.steps is not r.steps
    assert view.final_observation == ("end" if actions else None)
    assert view.reset_info["task_id"] == f"p|3#task{index}" and view.episode_id == f"e#task{index}"
