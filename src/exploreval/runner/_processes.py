"""Worker processes for the local executor (``workers: N``): episodes on N event loops.

One event loop spends 2-3 ms of CPU on each model request (the SDK and its HTTP stack, mostly).
With 256 episodes in flight their replies come back in waves, and asyncio handles a wave round
robin, so every reply waits for the whole wave's CPU before its episode's next request goes out:
256 in flight against a 1 s endpoint reached 72-78% of the bound on one loop. N worker
processes, each with its own loop, SDK clients and env instances, split the waves.

The parent stays what it is with one process: it plans, resumes, checks the budget before each
episode starts, and is the only writer of ``episodes.jsonl`` and the manifest. A worker is
``python -m exploreval.runner._processes``: it reads one config line and then one planned
episode per line on its stdin, plays them with :func:`~exploreval.runner._runner.play` (the
same function as in-process), and answers on a private copy of its stdout (fd 1 itself is
pointed at stderr, so a plugin's ``print`` cannot corrupt the channel):

- ``R <record json>``: a finished (or errored) episode;
- ``E <json string>``: the endpoint failed for good (``ModelError``); the run stops as it
  does in-process, after the episodes in flight finish;
- ``X <json string>``: the worker cannot play this experiment (a plugin that does not import,
  an env registered only in the parent's own script); the run stops with that message.

Workers share the run's response cache and prompt blobs (SQLite in WAL mode, as Ray workers
do). Stdin's end tells a worker no more episodes come: it finishes those in flight and exits.
SIGTERM cancels its episodes (their envs closed) and it exits; the parent sends it when the run
is interrupted, or when the embedded model's server dies.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
from collections import deque
from collections.abc import AsyncGenerator
from dataclasses import dataclass
from typing import BinaryIO

from exploreval.core import EpisodeRecord
from exploreval.models import ModelError
from exploreval.runner._build import ClientPool
from exploreval.runner._episode import EpisodeSpec
from exploreval.runner._errors import RunFailedError, SpecError
from exploreval.runner._play import RunState
from exploreval.runner._spec import AgentSpec, ExperimentSpec

#: Seconds a worker may take to end its episodes after SIGTERM before it is killed.
WORKER_STOP_TIMEOUT_S = 30.0

#: Longest line a worker may send (one episode record): records of long terminal or TextWorld
#: episodes run to megabytes; asyncio's default limit is 64 kB.
RECORD_LINE_LIMIT = 1 << 30


def split_max_connections(agents: list[AgentSpec], workers: int) -> list[AgentSpec]:
    """Each worker's share of an agent's ``max_connections`` (requests in flight per model), so
    the run as a whole keeps the limit. A limit below the worker count cannot be split: refused."""
    shared: list[AgentSpec] = []
    for index, agent in enumerate(agents):
        limit = agent.max_connections
        if agent.kind != "llm" or limit is None:
            shared.append(agent)
            continue
        if limit < workers:
            raise SpecError(
                f"agents.{index}.max_connections is {limit}, below workers {workers}: each "
                "worker process holds at least one request to the model, so the run would "
                f"exceed it; use workers <= {limit}, or raise max_connections (--max-connections)"
            )
        shared.append(agent.model_copy(update={"max_connections": limit // workers}))
    return shared


@dataclass
class _Worker:
    index: int
    process: asyncio.subprocess.Process
    #: Planned episodes sent and not yet answered.
    in_flight: int = 0
    exited: bool = False
    #: Set when the parent tells it no more episodes come; before that, an exit is a crash.
    stdin_closed: bool = False

    async def send(self, line: bytes) -> None:
        """Write one line; a worker that is gone is noticed by its reader (its channel ends)."""
        assert self.process.stdin is not None
        with contextlib.suppress(ConnectionError):
            self.process.stdin.write(line)
            await self.process.stdin.drain()

    def close_stdin(self) -> None:
        if self.stdin_closed or self.process.stdin is None:
            return
        self.stdin_closed = True
        with contextlib.suppress(Exception):
            self.process.stdin.close()


async def _start_worker(index: int, *, llm: bool) -> _Worker:
    """Start a worker; its config follows on stdin once the parent has it (``llm``: it imports
    the model SDK meanwhile, the bulk of its start-up)."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "exploreval.runner._processes",
        *(["--llm"] if llm else []),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        limit=RECORD_LINE_LIMIT,
    )
    return _Worker(index, process)


#: What the parent waits on: (worker or None for the run itself, kind, payload).
Inbox = asyncio.Queue[tuple["_Worker | None", str, str]]


async def _read_messages(worker: _Worker, inbox: Inbox) -> None:
    """Every line the worker sends, then ``("exit", "")`` when its channel closes."""
    assert worker.process.stdout is not None
    try:
        while line := await worker.process.stdout.readline():
            kind, _, payload = line.decode().rstrip("\n").partition(" ")
            await inbox.put((worker, kind, payload))
    finally:
        await inbox.put((worker, "exit", ""))


async def _stop_workers(workers: list[_Worker]) -> None:
    """SIGTERM every worker still running (its episodes are cancelled and their envs closed),
    then wait for them; one that does not end in time is killed."""
    for worker in workers:
        if worker.process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                worker.process.terminate()
    for worker in workers:
        try:
            await asyncio.wait_for(worker.process.wait(), WORKER_STOP_TIMEOUT_S)
        except (TimeoutError, asyncio.CancelledError):
            with contextlib.suppress(ProcessLookupError):
                worker.process.kill()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(worker.process.wait(), 5.0)


async def execute_processes(runner: RunState) -> AsyncGenerator[list[EpisodeRecord], None]:
    """Play the runner's pending episodes on ``spec.workers`` worker processes; yield each
    record (as a batch of one) as it comes back (the caller appends it and updates the totals before the next
    episode is sent, so the budget is checked exactly as in-process)."""
    from exploreval.runner._play import budget_exhausted

    spec = runner.spec
    count = spec.workers
    share = -(-spec.concurrency // count)  # episodes in flight per worker
    llm = any(a.kind == "llm" for a in spec.agents)
    inbox: Inbox = asyncio.Queue()
    workers: list[_Worker] = []
    readers: list[asyncio.Task[None]] = []
    try:
        # Started first: their imports overlap with an embedded model's server start.
        for index in range(count):
            worker = await _start_worker(index, llm=llm)
            workers.append(worker)
            readers.append(asyncio.create_task(_read_messages(worker, inbox)))
    except BaseException:
        await asyncio.shield(_stop_workers(workers))
        raise
    async with ClientPool(str(runner.run.cache_path), prices=spec.prices,
                          concurrency=spec.concurrency) as pool:  # fmt: skip

        def server_died(report: str) -> None:
            # The embedded model's server is gone: stop now (the finally below stops the
            # workers; their episodes in flight are re-run by a resume, from the cache).
            inbox.put_nowait((None, "died", report))

        watcher: asyncio.Task[None] | None = None
        pending = deque(runner.pending)
        fatal: str | None = None
        try:
            # The embedded model's server is started (or shared) here, once; workers get its URL.
            agents = [await pool.resolve_local(a) for a in spec.agents]
            watcher = asyncio.create_task(pool.watch_local(server_died))
            config = {
                "spec": spec.model_dump(mode="json"),
                "agents": [a.model_dump(mode="json") for a in split_max_connections(agents, count)],
                "concurrency": share,
                "run_path": str(runner.run.path),
                "run_id": runner.run_id,
                "sys_path": list(sys.path),
            }
            line = (json.dumps(config) + "\n").encode()
            for worker in workers:
                await worker.send(line)
            while not all(w.exited for w in workers):
                # Fill every worker up to its share, least loaded first, while the plan, the
                # budget and the endpoint allow; then tell idle workers no more will come.
                stop = fatal is not None or budget_exhausted(spec, runner.totals) is not None
                while pending and not stop:
                    open_workers = [w for w in workers if not w.exited and w.in_flight < share]
                    if not open_workers:
                        break
                    worker = min(open_workers, key=lambda w: w.in_flight)
                    episode = pending.popleft()
                    worker.in_flight += 1
                    await worker.send((json.dumps(episode.__dict__) + "\n").encode())
                    stop = budget_exhausted(spec, runner.totals) is not None
                if stop or not pending:
                    for worker in workers:
                        worker.close_stdin()
                sender, kind, payload = await inbox.get()
                if sender is None:  # "died"
                    raise ModelError(payload)
                if kind == "R":
                    sender.in_flight -= 1
                    yield [EpisodeRecord.model_validate_json(payload)]
                elif kind == "E":
                    fatal = fatal or json.loads(payload)
                elif kind == "X":
                    raise SpecError(json.loads(payload))
                elif kind != "exit":
                    raise RunFailedError(
                        f"worker process {sender.index} sent a line that is not a message "
                        f"({kind[:40]!r}...): stopping"
                    )
                else:
                    sender.exited = True
                    returncode = await sender.process.wait()
                    if not sender.stdin_closed or (sender.in_flight and fatal is None):
                        raise RunFailedError(
                            f"worker process {sender.index} (pid {sender.process.pid}) exited "
                            f"with code {returncode} while playing {sender.in_flight} episodes "
                            "(its output is above); the finished episodes are kept: re-run the "
                            "same command to resume"
                        )
            if fatal is not None:
                raise ModelError(fatal)
        finally:
            if watcher is not None:
                watcher.cancel()
            for worker in workers:
                worker.close_stdin()
            await asyncio.shield(_stop_workers(workers))
            for reader in readers:
                reader.cancel()


# -- the worker side --------------------------------------------------------------------------


def _channel() -> BinaryIO:
    """The parent's channel: a copy of fd 1; fd 1 itself (and ``sys.stdout``) now goes to
    stderr, so whatever a plugin, env or library prints cannot corrupt a record line."""
    channel = os.fdopen(os.dup(1), "wb")  # buffered: a write is whole even if a signal lands
    os.dup2(2, 1)
    return channel


async def _serve(reader: asyncio.StreamReader, channel: BinaryIO) -> None:
    from exploreval.core import SharedResources
    from exploreval.runner._plan import check_buildable
    from exploreval.runner._play import model_error_record, play
    from exploreval.store import RunDir

    write_lock = asyncio.Lock()

    def write(line: bytes) -> None:
        channel.write(line)
        channel.flush()

    async def say(kind: str, payload: str) -> None:
        async with write_lock:  # one whole line at a time, off the loop (a full pipe blocks)
            await asyncio.to_thread(write, f"{kind} {payload}\n".encode())

    config = json.loads(await reader.readline())
    for entry in reversed(config["sys_path"]):  # the parent's plugin modules import here too
        if entry not in sys.path:
            sys.path.insert(0, entry)
    try:
        spec = ExperimentSpec.model_validate(config["spec"])
        spec.load_plugins()
        check_buildable(spec)
    except Exception as exc:
        await say("X", json.dumps(_unplayable(exc)))
        return
    agents = [AgentSpec.model_validate(a) for a in config["agents"]]
    run = RunDir(config["run_path"])
    run_id = config["run_id"]
    shared = SharedResources(f"run {run_id}, worker process {os.getpid()}")
    tasks: set[asyncio.Task[None]] = set()
    async with ClientPool(str(run.cache_path), prices=spec.prices,
                          concurrency=config["concurrency"]) as pool:  # fmt: skip

        async def one(episode: EpisodeSpec) -> None:
            try:
                record = await play(
                    episode,
                    agents[episode.agent_index],
                    pool,
                    max_steps=spec.max_steps,
                    episode_timeout=spec.episode_timeout,
                    run=run,
                    run_id=run_id,
                    shared=shared,
                )
            except ModelError as exc:
                stored = model_error_record(exc, episode, agents[episode.agent_index], run_id)
                await say("R", stored.model_dump_json())
                await say("E", json.dumps(str(exc)))
                return
            await say("R", record.model_dump_json())

        try:
            while line := await reader.readline():
                task = asyncio.create_task(one(EpisodeSpec(**json.loads(line))))
                tasks.add(task)
                task.add_done_callback(tasks.discard)
            if tasks:
                await asyncio.gather(*tasks)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            await asyncio.to_thread(shared.close)
            run.close()


def _unplayable(exc: Exception) -> str:
    message = str(exc) if isinstance(exc, SpecError) else f"{type(exc).__name__}: {exc}"
    return (
        f"a worker process cannot play this experiment: {message}\n(workers see the envs, "
        "agents and harnesses that plugins register: entry points and the modules under "
        "'plugins' (--plugin MODULE), not ones registered only by your own script; name that "
        "module as a plugin, or run with workers: 1)"
    )


async def _cancel_when_orphaned(
    parent: int, task: asyncio.Task[None], every_s: float = 1.0
) -> None:
    """A parent killed outright (``kill -9``) never sends SIGTERM: once this process has been
    handed to another parent, stop as if it had (episodes cancelled, envs closed)."""
    while True:
        await asyncio.sleep(every_s)
        if os.getppid() != parent:
            task.cancel()
            return


def worker_main() -> int:
    """``python -m exploreval.runner._processes``: one worker, until stdin ends or SIGTERM."""
    channel = _channel()
    if "--llm" in sys.argv[1:]:  # before the config arrives: the SDK is most of a start-up
        import openai  # noqa: F401

    # Ctrl-C reaches the whole process group: the parent decides what stops (it sends SIGTERM),
    # so a worker never ends on its own mid-run (asyncio.run keeps an ignored SIGINT ignored).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    parent = os.getppid()

    async def main() -> None:
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None
        loop.add_signal_handler(signal.SIGTERM, task.cancel)
        watch = asyncio.create_task(_cancel_when_orphaned(parent, task))
        reader = asyncio.StreamReader(limit=RECORD_LINE_LIMIT)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        try:
            await _serve(reader, channel)
        finally:
            watch.cancel()

    try:
        asyncio.run(main())
    except (asyncio.CancelledError, KeyboardInterrupt):
        return 128 + int(signal.SIGTERM)
    except BrokenPipeError:  # the parent is gone
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(worker_main())
