"""Ray executor: the same plan, played by long-lived workers spread over a Ray cluster.

What runs where:

- **The driver** (this process, on any node) plans, resumes, checks the budget before each
  episode is sent, and is the only writer of the run directory: log, manifest, response
  cache, prompt blobs and artifacts. Nodes share no disk with it.
- **Workers** (:class:`~exploreval.runner._ray_worker.EpisodeWorker`, async actors of one CPU
  each, as many as the cluster has whole CPUs, fewer when ``concurrency`` or a model's
  connection limit is smaller) are placed node by node in proportion to each node's CPUs. Each
  keeps its share of ``concurrency`` episodes in flight on its own event loop and returns every
  episode as it ends, with its prompt texts, response-cache rows and artifacts.
- **Model connections**: an agent's ``max_connections`` is split
  between the workers, so the cluster as a whole keeps it.
- **Resume**: each cache row names its episode; an episode sent again carries the rows its
  earlier attempt made, and the rows of episodes still playing are fetched every second, so
  neither a driver killed mid-run nor a worker that dies makes a call be paid twice.
- **Failures**: a worker (or node) that dies has its episodes in flight played again by the
  others; nothing it did reaches the run directory unless its episode's result arrived whole.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections import deque
from collections.abc import AsyncGenerator, Sequence
from dataclasses import dataclass, field
from typing import Any

from exploreval.core import EpisodeRecord
from exploreval.models import ModelError, ResponseCache
from exploreval.runner._build import is_local_model
from exploreval.runner._episode import EpisodeSpec
from exploreval.runner._errors import RunFailedError, SpecError
from exploreval.runner._play import RunState
from exploreval.runner._ray_worker import EpisodeResult, unpack_dir
from exploreval.store import RunDir

#: Seconds between collections of the cache rows of episodes still playing.
DRAIN_EVERY_S = 1.0

#: Seconds the workers may take to start (a node that must first pull a runtime env is slow).
WORKER_START_TIMEOUT_S = 300.0

#: Seconds workers may take to cancel their episodes and close their envs at the end.
WORKER_STOP_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class WorkerSlot:
    """One worker to start: its node, its episodes in flight, its share of each agent's
    connection limit (``None``: the agent has none)."""

    node_id: str
    share: int
    connections: tuple[int | None, ...]


def split_evenly(total: int, parts: int) -> list[int]:
    """``total`` in ``parts`` integers that differ by at most one and sum to ``total``."""
    base, extra = divmod(total, parts)
    return [base + (1 if i < extra else 0) for i in range(parts)]


def plan_workers(
    node_cpus: dict[str, float], concurrency: int, limits: Sequence[int | None]
) -> list[WorkerSlot]:
    """Where the workers go and what each holds.

    One worker per whole CPU of the cluster, capped by ``concurrency`` and by every agent's
    connection limit (each worker holds at least one connection to each model); nodes get
    workers in proportion to their CPUs (largest remainder, never more than their CPUs). The
    shares of ``concurrency`` and of each limit sum exactly to them, so the cluster as a whole
    keeps both.
    """
    cpus = {node: int(count) for node, count in sorted(node_cpus.items()) if int(count) >= 1}
    total = sum(cpus.values())
    if total == 0:
        raise SpecError(
            "the Ray cluster has no node with a whole CPU to place a worker on; add nodes, or "
            "start them with --num-cpus"
        )
    count = min(total, concurrency, *(limit for limit in limits if limit is not None))
    quotas = {node: count * c / total for node, c in cpus.items()}
    per_node = {node: int(q) for node, q in quotas.items()}
    by_remainder = sorted(cpus, key=lambda node: (per_node[node] - quotas[node], node))
    for node in by_remainder[: count - sum(per_node.values())]:
        per_node[node] += 1
    nodes = [node for node in cpus for _ in range(per_node[node])]
    shares = split_evenly(concurrency, count)
    connections = [
        split_evenly(limit, count) if limit is not None else [None] * count for limit in limits
    ]
    return [
        WorkerSlot(node, shares[i], tuple(c[i] for c in connections))
        for i, node in enumerate(nodes)
    ]


def placement_summary(placement: Sequence[dict[str, Any]]) -> str:
    """One line on where a Ray run's workers were: per node, its workers and episodes."""
    nodes: dict[str, list[dict[str, Any]]] = {}
    for worker in placement:
        nodes.setdefault(f"{worker['node']} ({worker['node_id'][:8]})", []).append(worker)
    parts = [
        f"{node}: {len(ws)} worker{'s' * (len(ws) != 1)}, "
        f"{sum(w['episodes_in_flight'] for w in ws)} episodes in flight"
        for node, ws in nodes.items()
    ]
    count = len(placement)
    return (
        f"ray: {count} worker{'s' * (count != 1)} on {len(nodes)} "
        f"node{'s' * (len(nodes) != 1)}: " + "; ".join(parts)
    )


@dataclass
class _Worker:
    index: int
    slot: WorkerSlot
    actor: Any
    node: str = ""
    alive: bool = True
    in_flight: int = 0


@dataclass
class _Landing:
    """The driver's side of the run directory for results coming back from workers."""

    run: RunDir
    cache: ResponseCache
    #: Episodes whose calls the cache already holds rows for (a resumed run): only those are
    #: looked up before sending, so a fresh sweep does no query per episode.
    cached_episodes: set[str] = field(default_factory=set)

    def rows_for(self, episode_id: str) -> list[Any]:
        return self.cache.rows_for(episode_id) if episode_id in self.cached_episodes else []

    def land(self, results: list[tuple[EpisodeResult, str]]) -> None:
        """Everything these episodes made, on disk before their record lines are appended:
        one commit for all their prompt texts, one for all their cache rows."""
        texts = [text for result, _ in results for text in result["texts"].values()]
        if texts:
            self.run.blobs.put_many(texts)  # hashed again here: a text is its name
        rows = [row for result, _ in results for row in result["rows"]]
        if rows:
            self.cache.put_rows(rows)
        for result, episode_id in results:
            if result["artifacts"] is not None:
                unpack_dir(result["artifacts"], self.run.path / "artifacts" / episode_id)


# -> Any: the ray module, imported only when the Ray executor runs (an optional extra)
def _connect() -> Any:
    try:
        import ray
    except ImportError as exc:
        raise RuntimeError(
            "--executor ray needs the ray extra: pip install 'exploreval[ray]'"
        ) from exc
    if not ray.is_initialized():
        ray.init(
            address=os.environ.get("RAY_ADDRESS"), ignore_reinit_error=True, log_to_driver=False
        )
    return ray


# -> Any: a Ray scheduling strategy (ray's own type, imported lazily)
def _on_node(node_id: str) -> Any:
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    return NodeAffinitySchedulingStrategy(node_id, soft=False)


def _lost_errors() -> tuple[type[BaseException], ...]:
    """What a result that died with its worker or node raises (the episode is played again)."""
    from ray import exceptions as rex

    names = ("RayActorError", "WorkerCrashedError", "ObjectLostError", "OwnerDiedError",
             "NodeDiedError", "ActorUnavailableError")  # fmt: skip
    return tuple(getattr(rex, name) for name in names if hasattr(rex, name))


def _samples(plan: list[EpisodeSpec]) -> list[dict[str, Any]]:
    """One planned episode per env: what a node checks its requirements against."""
    first: dict[str, EpisodeSpec] = {}
    for episode in plan:
        first.setdefault(episode.env_id, episode)
    return [e.__dict__ for e in first.values()]


def _start_workers(ray: Any, runner: RunState) -> tuple[list[_Worker], dict[str, Any]]:
    from exploreval.runner._ray_worker import EpisodeWorker, NodeModels

    spec = runner.spec
    alive = [n for n in ray.nodes() if n.get("Alive")]
    node_cpus = {n["NodeID"]: float(n.get("Resources", {}).get("CPU", 0)) for n in alive}
    limits = [a.max_connections if a.kind == "llm" else None for a in spec.agents]
    slots = plan_workers(node_cpus, spec.concurrency, limits)
    local = any(is_local_model(a) and a.base_url is None for a in spec.agents)
    hosts: dict[str, Any] = {}
    if local:  # one embedded-model host per node that has workers
        host_class = ray.remote(num_cpus=0)(NodeModels)
        for node in dict.fromkeys(s.node_id for s in slots):
            hosts[node] = host_class.options(scheduling_strategy=_on_node(node)).remote()
    worker_class = ray.remote(EpisodeWorker)
    samples = _samples(runner.plan)
    workers: list[_Worker] = []
    for index, slot in enumerate(slots):
        agents = [
            a.model_copy(update={"max_connections": slot.connections[i]})
            if slot.connections[i] is not None
            else a
            for i, a in enumerate(spec.agents)
        ]
        config = {
            "spec": spec.model_dump(mode="json"),
            "agents": [a.model_dump(mode="json") for a in agents],
            "share": slot.share,
            "run_id": runner.run_id,
            "samples": samples,
        }
        actor = worker_class.options(
            num_cpus=1,
            max_concurrency=slot.share + 8,
            max_restarts=0,
            scheduling_strategy=_on_node(slot.node_id),
        ).remote(config)
        workers.append(_Worker(index, slot, actor))
    return workers, hosts


# -> Any: whatever the actor method returns (each caller knows its own)
async def _await(ref: Any) -> Any:
    return await asyncio.wrap_future(ref.future())


async def execute_ray(runner: RunState) -> AsyncGenerator[list[EpisodeRecord], None]:
    """Play the runner's pending episodes on the cluster; yield the records that came back
    together once everything their episodes made is on the driver's disk (the runner appends
    them with one fsync)."""
    from exploreval.runner._play import budget_exhausted

    ray = _connect()
    lost = _lost_errors()
    spec = runner.spec
    landing = _Landing(runner.run, ResponseCache(runner.run.cache_path))
    pending = deque(runner.pending)
    needed = {e.episode_id for e in pending}
    landing.cached_episodes = {e for e in landing.cache.episodes() if e in needed}
    workers: list[_Worker] = []
    hosts: dict[str, Any] = {}
    in_flight: dict[asyncio.Future[Any], tuple[_Worker, EpisodeSpec]] = {}
    try:
        workers, hosts = _start_workers(ray, runner)
        starts = [_await(w.actor.start.remote(hosts.get(w.slot.node_id))) for w in workers]
        try:
            infos = await asyncio.wait_for(
                asyncio.gather(*starts, return_exceptions=True), WORKER_START_TIMEOUT_S
            )
        except TimeoutError:
            raise RunFailedError(
                f"the {len(workers)} Ray workers did not start within "
                f"{WORKER_START_TIMEOUT_S:g}s (is the cluster busy with other jobs?)"
            ) from None
        refused: dict[str, list[str]] = {}
        for worker, info in zip(workers, infos, strict=True):
            if isinstance(info, lost):  # its node died after it was placed: the others play
                _retire(ray, worker)
                continue
            if isinstance(info, BaseException):
                raise info
            worker.node = f"{info['node']} (node {info['node_id'][:12]})"
            runner.placement.append(
                {
                    "node": info["node"],
                    "node_id": info["node_id"],
                    "pid": info["pid"],
                    "episodes_in_flight": worker.slot.share,
                    "connections": list(worker.slot.connections),
                }
            )
            if info["problems"]:
                refused.setdefault(worker.node, info["problems"])
        if not any(w.alive for w in workers):
            raise RunFailedError(
                f"none of the {len(workers)} Ray workers could start: their nodes died "
                f"({type(infos[0]).__name__}); check the cluster (ray status) and re-run"
            )
        if refused:
            raise SpecError(
                "this run cannot start on the Ray cluster; missing:\n"
                + "\n".join(
                    f"- on {node}: " + "; ".join(problems) for node, problems in refused.items()
                )
            )
        fatal: str | None = None
        drained = time.monotonic()
        while True:
            stop = fatal is not None or budget_exhausted(spec, runner.totals) is not None
            while pending and not stop:
                open_workers = [w for w in workers if w.alive and w.in_flight < w.slot.share]
                if not open_workers:
                    break
                worker = min(open_workers, key=lambda w: w.in_flight)
                episode = pending.popleft()
                rows = landing.rows_for(episode.episode_id)
                sent: asyncio.Future[Any] = asyncio.ensure_future(
                    _await(worker.actor.play.remote(episode.__dict__, rows))
                )
                in_flight[sent] = (worker, episode)
                worker.in_flight += 1
                stop = budget_exhausted(spec, runner.totals) is not None
            if not in_flight:
                break
            done, _ = await asyncio.wait(
                in_flight, timeout=DRAIN_EVERY_S, return_when=asyncio.FIRST_COMPLETED
            )
            if time.monotonic() - drained >= DRAIN_EVERY_S:
                await _drain(workers, landing, lost)
                drained = time.monotonic()
            arrived: list[tuple[EpisodeResult, str]] = []
            for future in done:
                worker, episode = in_flight.pop(future)
                worker.in_flight -= 1
                try:
                    result = future.result()
                except lost as exc:
                    # the worker or its node died: the episode goes back to the front of the
                    # queue for another worker; nothing of it was written
                    _retire(ray, worker)
                    pending.appendleft(episode)
                    if not any(w.alive for w in workers):
                        raise RunFailedError(
                            f"every Ray worker died (last: {worker.node}: "
                            f"{type(exc).__name__}); the finished episodes are kept: re-run "
                            "the same command to resume"
                        ) from None
                    continue
                arrived.append((result, episode.episode_id))
                if result["model_error"] is not None:
                    fatal = fatal or result["model_error"]
            if arrived:
                await asyncio.to_thread(landing.land, arrived)
                yield [EpisodeRecord.model_validate_json(r["record"]) for r, _ in arrived]
        if fatal is not None:
            raise ModelError(fatal)
    finally:
        for future in in_flight:
            future.cancel()
        await asyncio.shield(_stop(ray, workers, hosts, landing))


async def _drain(
    workers: list[_Worker], landing: _Landing, lost: tuple[type[BaseException], ...]
) -> None:
    """Write the cache rows of episodes still playing (a worker that died meanwhile is skipped:
    its loss is handled when its episodes' results fail)."""
    busy = [w for w in workers if w.alive and w.in_flight]
    results = await asyncio.gather(
        *(_await(w.actor.drain.remote()) for w in busy), return_exceptions=True
    )
    rows = [row for r in results if isinstance(r, list) for row in r]
    for r in results:
        if isinstance(r, BaseException) and not isinstance(r, lost):
            raise r
    if rows:
        await asyncio.to_thread(landing.cache.put_rows, rows)


def _retire(ray: Any, worker: _Worker) -> None:
    worker.alive = False
    with contextlib.suppress(Exception):
        ray.kill(worker.actor, no_restart=True)


async def _stop(ray: Any, workers: list[_Worker], hosts: dict[str, Any], landing: _Landing) -> None:
    """Workers cancel their episodes and close their envs (bounded), then every actor ends."""
    alive = [w for w in workers if w.alive]
    with contextlib.suppress(BaseException):
        await asyncio.wait_for(
            asyncio.gather(*(_await(w.actor.stop.remote()) for w in alive),
                           return_exceptions=True),
            WORKER_STOP_TIMEOUT_S,
        )  # fmt: skip
    with contextlib.suppress(BaseException):
        await asyncio.wait_for(
            asyncio.gather(
                *(_await(h.stop.remote()) for h in hosts.values()), return_exceptions=True
            ),
            WORKER_STOP_TIMEOUT_S,
        )
    for actor in [w.actor for w in workers] + list(hosts.values()):
        with contextlib.suppress(Exception):
            ray.kill(actor, no_restart=True)
    landing.cache.close()
