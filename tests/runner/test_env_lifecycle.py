"""The env contract for sandboxes and engines: blocking work off the event loop, timeouts that
interrupt a stuck step, cleanup on every ending (a killed run included), shared per-run setup,
and the nondeterministic flag."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

import _lifecycle_envs as life
from exploreval.core import make_env, reap_stale_scratch
from exploreval.runner import EnvCheckError, check_env, run_experiment, spec_from_dict
from exploreval.store import RunDir

life.register_lifecycle_envs()


def spec(env_id: str, *, seeds: str = "0-3", agents: list[str] | None = None, **extra: object):
    return spec_from_dict(
        {
            "suites": [{"env_id": env_id, "seeds": seeds, **extra.pop("suite", {})}],  # type: ignore[dict-item]
            "agents": [{"kind": "scripted", "agent": a} for a in (agents or ["plus"])],
            **extra,
        }
    )


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie is dead for our purposes
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


def test_blocking_steps_run_off_the_event_loop(tmp_path: Path) -> None:
    """Four episodes whose steps sleep 0.2 s run side by side, and the loop keeps ticking."""
    life.CONCURRENCY.update(now=0, max=0)
    life.STEP_THREADS.clear()
    loop_thread: list[int] = []

    async def main() -> None:
        from exploreval.runner import Runner

        runner = Runner(
            spec("life/Blocking-v0", concurrency=4, suite={"options": {"delay": 0.2}}),
            str(tmp_path / "r"),
        )
        runner.prepare()
        loop_thread.append(threading.get_ident())
        summary = await runner.execute_async()
        assert summary.completed == 4

    asyncio.run(main())
    assert life.CONCURRENCY["max"] >= 2  # steps of different episodes overlapped
    # no blocking step ran on the loop's thread (checked by thread, not by timing: a loaded
    # 2-core machine delays a heartbeat whatever runs where)
    assert len(life.STEP_THREADS) >= 4 and loop_thread[0] not in life.STEP_THREADS
    assert not life.HELD


def test_async_env_hanging_step_is_interrupted_by_the_episode_timeout(tmp_path: Path) -> None:
    before = life.AsyncWalkEnv.closed
    started = time.perf_counter()
    summary = run_experiment(
        spec(
            "life/AsyncWalk-v0",
            seeds="0-1",
            episode_timeout_s=0.5,
            suite={"options": {"hang": True}},
        ),
        str(tmp_path / "r"),
    )
    assert time.perf_counter() - started < 20
    assert summary.errored == 2 and summary.completed == 0
    records = list(RunDir(tmp_path / "r").iter_records())
    assert all(r.status == "error" and "timed out after 0.5s" in (r.error or "") for r in records)
    assert life.AsyncWalkEnv.closed - before == 2  # cleanup ran for both
    assert not life.HELD


def test_sync_stuck_step_is_abandoned_and_released_by_close(tmp_path: Path) -> None:
    life.StuckSyncEnv.released.clear()
    started = time.perf_counter()
    summary = run_experiment(
        spec("life/StuckSync-v0", seeds="0", episode_timeout_s=0.5), str(tmp_path / "r")
    )
    assert summary.errored == 1
    assert time.perf_counter() - started < 20
    deadline = time.time() + 5
    while not life.StuckSyncEnv.released and time.time() < deadline:
        time.sleep(0.01)
    assert life.StuckSyncEnv.released == [True]  # close() let the stuck thread return
    assert not life.HELD


@pytest.mark.parametrize("ending", ["success", "error", "timeout", "cancel"])
def test_resources_are_released_on_every_ending(ending: str, tmp_path: Path) -> None:
    held: list[tuple[Path, int]] = []
    original = life._hold

    def spy(env):  # type: ignore[no-untyped-def]
        original(env)
        held.append(life.HELD[id(env)])

    life._hold = spy
    try:
        if ending == "cancel":

            async def main() -> None:
                from exploreval.agents import make_agent
                from exploreval.runner import run_episode

                env = make_env("life/AsyncWalk-v0", hang=True)

                async def play() -> None:
                    try:
                        await run_episode(env, make_agent("life", "plus"), seed=0)
                    finally:
                        await env.aclose()

                task = asyncio.create_task(play())
                while not held:
                    await asyncio.sleep(0.01)
                task.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await task

            asyncio.run(main())
        else:
            options = {
                "success": {},
                "error": {"fail_at": 1, "delay": 0.0},
                "timeout": {"delay": 5.0},
            }[ending]
            summary = run_experiment(
                spec(
                    "life/Blocking-v0",
                    seeds="0",
                    episode_timeout_s=0.5 if ending == "timeout" else None,
                    suite={"options": options},
                ),
                str(tmp_path / "r"),
            )
            assert (summary.completed, summary.errored) == (
                (1, 0) if ending == "success" else (0, 1)
            )
    finally:
        life._hold = original
    assert held, "the env never took its resources"
    deadline = time.time() + 10  # a timed-out sync step finishes its sleep before closing
    while any(path.exists() or alive(pid) for path, pid in held) and time.time() < deadline:
        time.sleep(0.05)
    for path, pid in held:
        assert not path.exists(), f"{ending}: scratch dir {path} survived"
        assert not alive(pid), f"{ending}: child process {pid} survived"


KILLED_RUN = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, {tests!r})
    import _lifecycle_envs as life
    life.register_lifecycle_envs()
    from exploreval.runner import run_experiment, spec_from_dict
    import threading
    original = life._hold
    printing = threading.Lock()
    def report(env):
        original(env)
        path, pid = life.HELD[id(env)]
        # envs reset in worker threads: one locked write, or two lines can interleave
        with printing:
            sys.stdout.write(f"{{path}} {{pid}}\\n")
            sys.stdout.flush()
    life._hold = report
    run_experiment(spec_from_dict({{
        "suites": [{{"env_id": "life/Blocking-v0", "seeds": "0-1",
                    "options": {{"delay": 30}}}}],
        "agents": [{{"kind": "scripted", "agent": "plus"}}],
        "concurrency": 2,
    }}), {out!r})
    """
)


def test_a_killed_run_leaves_no_process_or_directory(tmp_path: Path) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    env = {**os.environ, "EXPLOREVAL_SCRATCH": str(scratch)}
    script = KILLED_RUN.format(tests=str(Path(__file__).parent.parent), out=str(tmp_path / "r"))
    proc = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, env=env
    )
    held: list[tuple[Path, int]] = []
    assert proc.stdout is not None
    while len(held) < 2:
        line = proc.stdout.readline()
        assert line, "the run ended before its episodes started"
        path, pid = line.split()
        held.append((Path(path), int(pid)))
    assert all(path.exists() and alive(pid) for path, pid in held)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    deadline = time.time() + 10
    while time.time() < deadline and (
        any(path.exists() or alive(pid) for path, pid in held) or any(scratch.iterdir())
    ):
        time.sleep(0.05)
    for path, pid in held:
        assert not path.exists() and not alive(pid)
    assert list(scratch.iterdir()) == []  # the guardian removed the whole scratch root


def test_stale_scratch_of_a_dead_process_is_reaped(tmp_path: Path) -> None:
    """If the guardian died too (kill -9 of the whole group), the next start reaps the root."""
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    pid = int(dead.stdout)
    stale = tmp_path / f"exploreval-scratch-{pid}-deadbeef"
    (stale / "env-x").mkdir(parents=True)
    mine = tmp_path / f"exploreval-scratch-{os.getpid()}-cafe"
    mine.mkdir()
    removed = reap_stale_scratch(tmp_path)
    assert removed == [stale] and not stale.exists() and mine.exists()


def test_shared_setup_is_built_once_per_run_and_disposed_after(tmp_path: Path) -> None:
    life.SharedSetupEnv.builds.clear()
    life.SharedSetupEnv.disposed.clear()
    run_experiment(
        spec_from_dict(
            {
                "suites": [
                    {"env_id": "life/SharedSetup-v0", "presets": ["a", "b"], "seeds": "0-3"}
                ],
                "agents": [{"kind": "scripted", "agent": "plus"}],
                "concurrency": 4,
            }
        ),
        str(tmp_path / "r"),
    )
    assert sorted(life.SharedSetupEnv.builds) == ["a", "b"]  # 8 episodes, 2 templates
    assert sorted(life.SharedSetupEnv.disposed) == ["template-a", "template-b"]
    records = list(RunDir(tmp_path / "r").iter_records())
    assert len(records) == 8 and all("(template-" in r.initial_observation for r in records)


def test_nondeterministic_envs_skip_replay_checks_and_others_do_not() -> None:
    check_env("life/Clock-v0")
    with pytest.raises(EnvCheckError, match="non-deterministic|not deterministic"):
        check_env("life/ClockClaimingDeterminism-v0")
    import gymnasium

    assert gymnasium.spec("life/Clock-v0").nondeterministic is True


def test_our_replay_check_catches_what_a_single_step_does_not(tmp_path: Path) -> None:
    """Nondeterminism after the first step escapes Gymnasium's checker; the replay catches it."""
    import _toy

    class LateLeak(_toy.LineWalkEnv):
        calls = 0

        def _step(self, action):  # type: ignore[no-untyped-def]
            obs, reward, done, trunc, info = super()._step(action)
            LateLeak.calls += 1
            if self.t >= 3:
                obs += f" [{LateLeak.calls}]"
            return obs, reward, done, trunc, info

    from exploreval.core import register_env

    register_env("test/LateLeak-v0", LateLeak, family="toy")
    with pytest.raises(EnvCheckError, match="not deterministic"):
        check_env("test/LateLeak-v0", "long")


def test_async_env_works_through_the_sync_gymnasium_api() -> None:
    import gymnasium

    import exploreval  # noqa: F401 - registers every env with Gymnasium

    env = gymnasium.make("life/AsyncWalk-v0").unwrapped
    obs, _ = env.reset(seed=1)
    target = env.target
    for _ in range(target):
        obs, reward, terminated, _, info = env.step("+")
    assert terminated and reward == 1.0 and info["success"] is True
    env.close()
    assert not life.HELD
