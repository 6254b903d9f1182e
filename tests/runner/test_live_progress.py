"""Live progress (issue 42 §5): steps and tokens move with every step of a model episode, not
only when it ends, and the CLI shows no ETA until an episode of every agent has finished."""

from __future__ import annotations

from pathlib import Path

from exploreval.models.testing import StubServer
from exploreval.runner import Runner, Totals, spec_from_dict


def test_steps_and_tokens_move_with_every_step(tmp_path: Path) -> None:
    seen: list[tuple[int, int, int]] = []

    def progress(totals: Totals, planned: int) -> None:
        seen.append(
            (
                totals.episodes,
                totals.steps + totals.live_steps,
                totals.usage.total_tokens + totals.live_tokens,
            )  # fmt: skip
        )

    with StubServer(delay_s=0.02, reply="<a>+</a>") as server:
        spec = spec_from_dict(
            {
                "suites": [{"env_id": "test/LineWalk-v0", "presets": ["long"], "seeds": "0-1"}],
                "agents": [{"kind": "llm", "model": "m", "base_url": server.base_url}],
                "plugins": ["_toy"],
                "concurrency": 1,
            }
        )
        runner = Runner(spec, str(tmp_path / "run"), on_progress=progress)
        runner.prepare()
        runner.execute()
    before_any_end = [(steps, tokens) for episodes, steps, tokens in seen if episodes == 0]
    assert len(before_any_end) >= 2 and before_any_end[0][0] == 1  # the first step, live
    assert before_any_end[-1][1] > before_any_end[0][1] > 0  # tokens too
    # steps only ever grow, and end as the stored total with nothing left "live"
    assert [s for _, s, _ in seen] == sorted(s for _, s, _ in seen)
    assert runner.totals.live_steps == runner.totals.live_tokens == 0
    assert seen[-1][1] == runner.totals.steps == server.request_count
    assert runner.totals.finished_agents == {spec.agents[0].display_name}


def test_no_eta_until_the_rate_means_something() -> None:
    import time

    from rich.progress import Progress, ProgressSample, TimeRemainingColumn

    from exploreval.cli._run_output import eta_column

    column, plain = eta_column(), TimeRemainingColumn()
    with Progress(column, disable=True) as progress:
        task_id = progress.add_task("episodes", total=10, completed=5, eta_ready=False)
        task = progress.tasks[task_id]
        now = time.monotonic()  # a measured rate: 5 episodes in 10 s
        task._progress.extend([ProgressSample(now - 10, 0), ProgressSample(now, 5)])
        assert plain.render(task).plain not in ("-:--:--", "")  # rich would guess one
        assert column.render(task).plain == "-:--:--"  # ours waits
        progress.update(task_id, eta_ready=True)
        assert column.render(task).plain == plain.render(task).plain
