"""Execute an experiment into a run directory, resumably.

Resume = plan minus the episodes the store already holds with status ``ok``. Each
finished episode is appended (flush + fsync) before the next one is counted, so a
crash loses at most the episodes in flight; their completed model calls are in the
response cache, so re-running does not pay for them again.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from exploreval.core import VERSION as __version__
from exploreval.core import (
    CorruptDatabaseError,
    EpisodeRecord,
    SharedResources,
    Usage,
    stable_hash,
    utcnow,
)
from exploreval.models import ModelError
from exploreval.runner._build import ClientFactory, ClientPool, check_api_keys
from exploreval.runner._episode import EpisodeSpec
from exploreval.runner._errors import (
    ConfigMismatchError,
    RunFailedError,
    RunInterruptedError,
    SpecError,
)
from exploreval.runner._plan import check_buildable, pending_episodes, plan_episodes
from exploreval.runner._play import (
    Totals,
    budget_exhausted,
    model_error_record,
    play,
)
from exploreval.runner._requirements import missing_requirements, run_notes
from exploreval.runner._spec import ExperimentSpec
from exploreval.runner._spec_versions import migrate_spec
from exploreval.store import RunDir, RunManifest, StoreError

#: Seconds between rewrites of the manifest's progress (``episodes_done``, totals) during a run.
MANIFEST_PROGRESS_INTERVAL_S = 2.0

#: Seconds a stopping run waits for record appends already running in threads.
APPEND_DRAIN_TIMEOUT_S = 30.0


@dataclass
class RunSummary:
    run_dir: str
    planned: int
    skipped: int
    completed: int
    errored: int
    status: str
    stopped_by_budget: bool = False
    error: str | None = None
    #: Per agent: (invalid actions, steps) over the run's stored episodes (this invocation
    #: and those it resumed).
    actions: dict[str, tuple[int, int]] = field(default_factory=dict)

    def mostly_invalid(self, share: float = 0.9, at_least: int = 5) -> dict[str, tuple[int, int]]:
        """Agents whose actions were (nearly) all invalid: their run measured nothing of how
        they explore, whatever its status says."""
        return {
            agent: (bad, steps)
            for agent, (bad, steps) in self.actions.items()
            if steps >= at_least and bad >= share * steps
        }


ProgressCallback = Callable[[Totals, int], None]


def config_changes(old: Any, new: Any, *, limit: int = 12) -> list[str]:
    """Each field that differs between two stored configs, ``path: old -> new`` (at most
    ``limit`` lines, then how many more)."""
    changes: list[str] = []

    def walk(a: Any, b: Any, path: str) -> None:
        if isinstance(a, dict) and isinstance(b, dict):
            for key in sorted(set(a) | set(b), key=str):
                walk(a.get(key), b.get(key), f"{path}.{key}" if path else str(key))
        elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
            for index, (x, y) in enumerate(zip(a, b, strict=True)):
                walk(x, y, f"{path}.{index}")
        elif a != b:
            changes.append(f"{path or '(top level)'}: {_short(a)} -> {_short(b)}")

    walk(old, new, "")
    if len(changes) > limit:
        changes = [*changes[:limit], f"... and {len(changes) - limit} more"]
    return changes or ["(only the config hash: a field's serialised form changed)"]


def _short(value: Any) -> str:
    text = "(absent)" if value is None else repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


class Runner:
    """Plan, resume and execute an experiment into ``out``."""

    def __init__(
        self,
        spec: ExperimentSpec,
        out: str,
        *,
        force: bool = False,
        client_factory: ClientFactory | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> None:
        self.spec = spec
        self.run = RunDir(out)
        self.force = force
        self.client_factory = client_factory
        self.on_progress = on_progress
        self.plan: list[EpisodeSpec] = []
        self.pending: list[EpisodeSpec] = []
        self.totals = Totals()
        self.run_id = ""
        #: Planned episodes stored ``ok`` so far (the manifest's ``episodes_done``).
        self._done: set[str] = set()
        self._manifest: RunManifest | None = None
        self._manifest_lock = threading.Lock()
        self._manifest_written = 0.0
        self._finished = False
        self._appends: set[asyncio.Future[None]] = set()
        self._stop_reason: str | None = None
        #: The first episode that errored in this invocation: (episode id, error message).
        self._first_error: tuple[str, str] | None = None
        #: Where the Ray executor placed its workers: one dict per worker (node, node id, pid,
        #: episodes in flight, connections per agent); empty for the local executor.
        self.placement: list[dict[str, Any]] = []
        self.notes: list[str] = []
        #: Steps and tokens of each episode still playing: (steps, tokens).
        self._live: dict[str, tuple[int, int]] = {}

    # -- preparation ------------------------------------------------------------------
    def prepare(self) -> RunManifest:
        """Validate, check the config against an existing run, compute what is missing."""
        self.spec.load_plugins()
        self.plan = plan_episodes(self.spec)
        check_buildable(self.spec)
        if self.spec.workers > 1:
            from exploreval.runner._processes import split_max_connections

            split_max_connections(self.spec.agents, self.spec.workers)  # refused before writing
            if self.client_factory is not None:
                raise SpecError(
                    f"workers: {self.spec.workers} plays episodes in other processes, which "
                    "cannot use a client_factory (it lives in this one): use workers: 1"
                )
        if self.client_factory is None:
            check_api_keys(self.spec)
        # Before the run directory exists: what is missing is refused with nothing written.
        problems = missing_requirements(self.spec, self.plan, models=self.client_factory is None)
        if problems:
            raise SpecError("this run cannot start; missing:\n- " + "\n- ".join(problems))
        #: the envs' defaults worth saying before the episodes play (``Env.run_notes``)
        self.notes = run_notes(self.spec)
        config_hash = self.spec.config_hash()
        self.run.ensure()
        self.run.lock()
        try:
            return self._prepare_locked(config_hash)
        except BaseException:
            self.run.unlock()
            raise

    def _prepare_locked(self, config_hash: str) -> RunManifest:
        existing = self.run.exists()
        if existing and self.force:
            try:
                self.run.read_manifest()
            except StoreError:  # --force: keep the unreadable file as evidence, start a new one
                bad = self.run.manifest_path
                bad.replace(bad.with_name(f"{bad.name}.unreadable-{utcnow():%Y%m%dT%H%M%S}"))
                existing = False
        if existing:
            manifest = self.run.read_manifest()
            if manifest.config_hash != config_hash and not self.force:
                changes = config_changes(
                    migrate_spec(manifest.config or {}), self.spec.model_dump(mode="json")
                )
                raise ConfigMismatchError(
                    f"{self.run.path} holds a different experiment (config hash {manifest.config_hash}, "
                    f"this command {config_hash}); what differs, stored -> this command:\n"
                    + "\n".join(f"  - {change}" for change in changes)
                    + "\nUse another --out, or --force to continue anyway (episodes of the old "
                    "config stay in the log)."
                )
            manifest = manifest.model_copy(
                update={
                    "config": self.spec.model_dump(mode="json"),
                    "config_hash": config_hash,
                    "invocations": manifest.invocations + 1,
                }
            )
        else:
            manifest = RunManifest(
                run_id=stable_hash({"hash": config_hash, "at": utcnow().isoformat()}, 12),
                name=self.spec.name,
                config=self.spec.model_dump(mode="json"),
                config_hash=config_hash,
                package_version=__version__,
                invocations=1,
            )
        self.run_id = manifest.run_id
        latest = self.run.latest_records()
        completed = {eid for eid, r in latest.items() if r.status == "ok"}
        planned_ids = {e.episode_id for e in self.plan}
        for eid in completed & planned_ids:
            self.totals.add(latest[eid])
        self.pending = pending_episodes(self.plan, completed)
        self._done = completed & planned_ids
        manifest = manifest.model_copy(
            update={
                "episodes_planned": len(self.plan),
                "episodes_done": len(completed & planned_ids),
                "status": "running",
                "started_at": manifest.started_at or utcnow(),
                "ended_at": None,
                "error": None,
            }
        )
        self.run.write_manifest(manifest)
        self._manifest = manifest
        self._manifest_written = time.monotonic()
        return manifest

    # -- execution --------------------------------------------------------------------
    def execute(self) -> RunSummary:
        """Blocking entry point (CLI). SIGTERM cancels the run cleanly: episodes in flight are
        cancelled (their envs closed), the manifest says ``interrupted``, and
        :class:`RunInterruptedError` is raised."""
        return asyncio.run(self._execute_until_signal())

    async def _execute_until_signal(self) -> RunSummary:
        loop = asyncio.get_running_loop()
        main = asyncio.current_task()
        received: list[int] = []

        def stop(signum: int) -> None:
            received.append(signum)
            self._stop_reason = f"stopped by {signal.Signals(signum).name}"
            if main is not None:
                main.cancel()

        installed: list[int] = []
        for signum in (int(signal.SIGTERM),):
            try:
                loop.add_signal_handler(signum, stop, signum)
            except (NotImplementedError, RuntimeError, ValueError):  # not the main thread
                continue
            installed.append(signum)
        try:
            return await self.execute_async()
        except asyncio.CancelledError:
            if not received:
                raise
            name = signal.Signals(received[0]).name
            raise RunInterruptedError(
                f"run interrupted by {name}: {len(self._done)} of {len(self.plan)} episodes are "
                f"done and kept in {self.run.episodes_path}; re-run the same command to resume",
                received[0],
            ) from None
        finally:
            for signum in installed:
                loop.remove_signal_handler(signum)

    async def execute_async(self) -> RunSummary:
        if not self.plan:
            self.prepare()
        skipped = len(self.plan) - len(self.pending)
        completed = errored = 0
        budget_note: str | None = None
        fatal: str | None = None
        try:
            if self.spec.executor == "ray" or self.spec.workers > 1:
                if self.spec.executor == "ray":
                    from exploreval.runner._ray import execute_ray as execute
                else:
                    from exploreval.runner._processes import execute_processes as execute
                # aclosing: an error while storing a record still stops the executor's workers
                async with contextlib.aclosing(execute(self)) as batches:
                    async for batch in batches:  # the records that came back together
                        await self._store_many(batch)
                        ok = sum(record.status == "ok" for record in batch)
                        completed += ok
                        errored += len(batch) - ok
                budget_note = budget_exhausted(self.spec, self.totals)
            else:
                completed, errored, budget_note = await self._execute_local()
        except ModelError as exc:
            fatal = str(exc)
        except (KeyboardInterrupt, asyncio.CancelledError) as exc:
            await self._drain_appends()
            self._finish("interrupted", self._stop_reason or str(exc) or "cancelled")
            raise
        except BaseException as exc:  # whatever it is, the manifest ends in a final status
            await self._drain_appends()
            known = isinstance(exc, StoreError | CorruptDatabaseError | SpecError | RunFailedError)
            message = str(exc) if known else f"{type(exc).__name__}: {exc}"
            self._finish("failed", message or type(exc).__name__)
            raise
        if fatal is not None:
            self._finish("failed", fatal)
            raise RunFailedError(
                f"run stopped: {fatal}\nFinished episodes are kept in {self.run.episodes_path}; "
                "fix the problem and re-run the same command to resume."
            )
        done = self.run.completed_ids() & {e.episode_id for e in self.plan}
        note = budget_note
        if len(done) == len(self.plan):
            status = "finished"
        elif budget_note is not None:
            status = "interrupted"
        elif self._first_error is not None:
            # The plan ran, and episodes errored (an env or agent exception, a malformed reply
            # after every retry...): "partial" when some succeeded, "failed" when none did.
            episode, message = self._first_error
            failed = len(self.plan) - len(done)
            first = f"first: episode {episode}: {message.strip().splitlines()[0][:300]}"
            if done:
                status = "partial"
                note = (
                    f"{failed} of {len(self.plan)} episodes errored ({first}); re-run to retry them"
                )
            else:
                status = "failed"
                note = f"every episode errored ({first})"
        else:
            status = "interrupted"
        self._finish(status, note)
        return RunSummary(
            run_dir=str(self.run.path),
            planned=len(self.plan),
            skipped=skipped,
            completed=completed,
            errored=errored,
            status=status,
            stopped_by_budget=budget_note is not None,
            error=note,
            actions={agent: (c[0], c[1]) for agent, c in self.totals.actions.items()},
        )

    async def _store(self, record: EpisodeRecord) -> None:
        await self._store_many([record])

    async def _store_many(self, records: list[EpisodeRecord]) -> None:
        # Off the event loop: an fsync must not stall the requests of other episodes. Shielded and
        # tracked: a cancelled run still finishes the appends it started (a thread cannot be
        # stopped) and waits for them before it writes the final manifest.
        append = asyncio.ensure_future(asyncio.to_thread(self.run.append_many, records))
        self._appends.add(append)
        append.add_done_callback(self._appends.discard)
        await asyncio.shield(append)
        for record in records:
            steps, tokens = self._live.pop(record.episode_id, (0, 0))
            self.totals.live_steps -= steps
            self.totals.live_tokens -= tokens
            self.totals.finished_agents.add(record.agent.name)
            self.totals.add(record)
            if record.status != "ok" and self._first_error is None:
                self._first_error = (record.episode_id, record.error or record.status)
            if record.status == "ok":
                self._done.add(record.episode_id)
        if time.monotonic() - self._manifest_written >= MANIFEST_PROGRESS_INTERVAL_S:
            await asyncio.to_thread(self._write_progress)
        if self.on_progress is not None:
            self.on_progress(self.totals, len(self.plan))

    def _live_step(self, episode_id: str) -> Callable[[Usage | None], None]:
        """Counts an episode's steps and tokens as they happen (the progress bar moves with
        every step, not only when an episode ends)."""

        def step(usage: Usage | None) -> None:
            steps, tokens = self._live.get(episode_id, (0, 0))
            added = usage.total_tokens if usage is not None else 0
            self._live[episode_id] = (steps + 1, tokens + added)
            self.totals.live_steps += 1
            self.totals.live_tokens += added
            if self.on_progress is not None:
                self.on_progress(self.totals, len(self.plan))

        return step

    async def _drain_appends(self) -> None:
        """Wait (bounded) for appends already handed to a thread, so the final manifest counts
        every record that reaches the log."""
        pending = [a for a in self._appends if not a.done()]
        if pending:
            with contextlib.suppress(BaseException):
                await asyncio.wait(pending, timeout=APPEND_DRAIN_TIMEOUT_S)

    def _write_progress(self) -> None:
        """``episodes_done`` and totals, rewritten at most every few seconds (one small atomic
        write), so a crashed or killed run's manifest says how far it got."""
        with self._manifest_lock:
            if self._manifest is None or self._finished:
                return
            self._manifest = self._manifest.model_copy(
                update={
                    "episodes_done": len(self._done),
                    "total_steps": self.totals.steps,
                    "usage": self.totals.usage,
                }
            )
            self._manifest_written = time.monotonic()
            with contextlib.suppress(StoreError):  # progress is best effort; the end is not
                self.run.write_manifest(self._manifest)

    def _finish(self, status: str, error: str | None) -> None:
        with self._manifest_lock:
            if self._finished:
                return
            self._finished = True
            done = self.run.completed_ids() & {e.episode_id for e in self.plan}
            with contextlib.suppress(StoreError):  # the run's own error is what the user needs
                self.run.update_manifest(
                    status=status,
                    error=error,
                    ended_at=utcnow(),
                    episodes_done=len(done),
                    total_steps=self.totals.steps,
                    usage=self.totals.usage,
                )
            self.run.close()

    @property
    def episodes_done(self) -> int:
        """Planned episodes stored ``ok`` so far (this and earlier invocations)."""
        return len(self._done)

    def abandon(self, exc: BaseException) -> None:
        """End a prepared run that never reached (or left) ``execute`` because of ``exc``: the
        manifest gets a final status instead of staying ``running``. Idempotent."""
        if self._manifest is None or self._finished:
            return
        interrupted = isinstance(exc, KeyboardInterrupt | asyncio.CancelledError)
        if isinstance(exc, RunInterruptedError):
            interrupted = True
        self._finish(
            "interrupted" if interrupted else "failed", f"{type(exc).__name__}: {exc}".rstrip(": ")
        )

    async def _execute_local(self) -> tuple[int, int, str | None]:
        spec = self.spec
        completed = errored = 0
        budget_note: str | None = None
        fatal: list[ModelError] = []
        slots = asyncio.Semaphore(spec.concurrency)
        shared = SharedResources(f"run {self.run_id}")
        async with ClientPool(str(self.run.cache_path), self.client_factory, spec.prices,
                              concurrency=spec.concurrency) as pool:  # fmt: skip
            agents = [await pool.resolve_local(a) for a in spec.agents]

            async def one(episode: EpisodeSpec) -> None:
                nonlocal completed, errored
                try:
                    if fatal:
                        return
                    agent_spec = agents[episode.agent_index]
                    try:
                        record = await play(
                            episode,
                            agent_spec,
                            pool,
                            max_steps=spec.max_steps,
                            episode_timeout=spec.episode_timeout,
                            run=self.run,
                            run_id=self.run_id,
                            shared=shared,
                            on_step=self._live_step(episode.episode_id),
                        )
                    except ModelError as exc:
                        fatal.append(exc)
                        record = model_error_record(exc, episode, agent_spec, self.run_id)
                    await self._store(record)
                    if record.status == "ok":
                        completed += 1
                    else:
                        errored += 1
                finally:
                    slots.release()

            tasks: list[asyncio.Task[None]] = []

            def server_died(report: str) -> None:
                # The embedded model's server is gone: stop now, not after every episode's
                # retries; the episodes in flight are re-run by a resume (their completed
                # model calls are replayed from the cache).
                fatal.append(ModelError(report))
                for task in tasks:
                    task.cancel()

            watcher = asyncio.create_task(pool.watch_local(server_died))
            try:
                for episode in self.pending:
                    await slots.acquire()
                    budget_note = budget_exhausted(spec, self.totals)
                    if fatal or budget_note:
                        slots.release()
                        break
                    tasks.append(asyncio.create_task(one(episode)))
                try:
                    await asyncio.gather(*tasks)
                except asyncio.CancelledError:
                    if not fatal:  # the run itself was cancelled (a signal)
                        raise
                    await asyncio.gather(*tasks, return_exceptions=True)
                    raise fatal[0] from None
            except BaseException:
                # A signal (while scheduling or waiting) or an unexpected error: stop the running
                # episodes and wait until they have ended (envs closed, records stored); left
                # alone they would go on after the final manifest is written.
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
                raise
            finally:
                watcher.cancel()
                # Per-run shared resources (templates, compiled games) go with the run.
                await asyncio.to_thread(shared.close)
        if fatal:
            raise fatal[0]
        return completed, errored, budget_note


def run_experiment(
    spec: ExperimentSpec,
    out: str,
    *,
    force: bool = False,
    client_factory: ClientFactory | None = None,
    **kwargs: Any,
) -> RunSummary:
    """Plan, resume and run ``spec`` into ``out`` (blocking)."""
    runner = Runner(spec, out, force=force, client_factory=client_factory, **kwargs)
    runner.prepare()
    return runner.execute()
