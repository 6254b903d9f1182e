"""What runs on a Ray node: long-lived episode workers, and one embedded-model host per node.

A worker (:class:`EpisodeWorker`, an async Ray actor holding one CPU) plays many episodes at
once with the same :func:`~exploreval.runner._runner.play` as the local executor, and returns
each episode as it ends, with everything the episode made: its record, its prompt texts, the
response-cache rows of its model calls, and its artifact directory as a tar archive. It touches
no file of the run: prompt texts and cache rows live in memory (:class:`BlobCollector`,
:class:`TransitCache`), artifacts in a scratch directory on the node's own disk, removed once
packed. The driver seeds the cache with the rows a resumed episode already paid for.

:class:`NodeModels` serves the embedded ``local:*`` models of one node: the workers on that node
share one llama.cpp server per model, reached on the node's loopback.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import shutil
import tarfile
import tempfile
from pathlib import Path
from typing import Any

from exploreval.core import SharedResources
from exploreval.models import CacheRow, ModelError, TransitCache
from exploreval.runner._build import ClientPool, is_local_model
from exploreval.runner._episode import EpisodeSpec
from exploreval.runner._spec import AgentSpec, ExperimentSpec

#: What a worker returns for one episode (plain types: Ray pickles it to the driver).
EpisodeResult = dict[str, Any]


def node_identity() -> tuple[str, str]:
    """This node's (IP address, Ray node id)."""
    import ray

    ip: str = ray.util.get_node_ip_address()  # type: ignore[no-untyped-call]
    return ip, ray.get_runtime_context().get_node_id()


def pack_dir(directory: Path) -> bytes | None:
    """``directory`` as an uncompressed tar archive (None when the episode made no artifacts)."""
    if not directory.is_dir():
        return None
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        archive.add(directory, arcname=".")
    return buffer.getvalue()


def unpack_dir(data: bytes, directory: Path) -> None:
    """Replace ``directory`` with the archive's contents; the ``data`` filter refuses members
    that would land outside it (absolute paths, ``..``, links out, device files)."""
    if directory.exists():  # an episode played again after a worker died: its newest artifacts
        shutil.rmtree(directory)
    directory.mkdir(parents=True)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r") as archive:
        archive.extractall(directory, filter="data")


class NodeModels:
    """The embedded model servers of one node, started on first use and shared by its workers."""

    def __init__(self) -> None:
        self._urls: dict[str, str] = {}
        self._lock = asyncio.Lock()

    async def url(self, model: str) -> str:
        from exploreval.models import acquire_local

        async with self._lock:
            if model not in self._urls:
                self._urls[model] = await acquire_local(model)
            return self._urls[model]

    def stop(self) -> None:
        from exploreval.models import release_local

        for model in self._urls:
            with contextlib.suppress(Exception):
                release_local(model)
        self._urls.clear()


class EpisodeWorker:
    """Plays the episodes the driver sends, ``share`` at a time (the driver keeps the count)."""

    def __init__(self, config: dict[str, Any]) -> None:
        self.config = config
        self.run_id: str = config["run_id"]
        self.tasks: set[asyncio.Task[Any]] = set()
        self.scratch: Path | None = None
        self.cache = TransitCache()
        self.pool: ClientPool | None = None
        self.shared: SharedResources | None = None
        self.agents: list[AgentSpec] = []
        self.spec: ExperimentSpec | None = None

    async def start(self, node_models: Any | None) -> dict[str, Any]:
        """Load the experiment here and report what this node lacks (nothing: ready to play)."""
        from exploreval.runner._plan import check_buildable
        from exploreval.runner._requirements import endpoint_problem, missing_requirements

        ip, node_id = node_identity()
        identity = {"node": ip, "node_id": node_id, "pid": os.getpid()}
        try:
            spec = ExperimentSpec.model_validate(self.config["spec"])
            spec.load_plugins()
            check_buildable(spec)
            samples = [EpisodeSpec(**e) for e in self.config["samples"]]
            problems = missing_requirements(spec, samples, models=False, executor=False)
        except Exception as exc:  # a plugin missing on this node, say
            return {**identity, "problems": [f"{type(exc).__name__}: {exc}"]}
        agents = [AgentSpec.model_validate(a) for a in self.config["agents"]]
        for index, agent in enumerate(agents):
            if agent.kind == "llm" and agent.base_url is not None:
                problem = await asyncio.to_thread(
                    endpoint_problem, index, agent.model or "", agent.base_url
                )
                if problem:
                    problems.append(problem)
        if problems:
            return {**identity, "problems": problems}
        self.spec = spec
        self.scratch = Path(tempfile.mkdtemp(prefix=f"exploreval-ray-{self.run_id}-"))
        self.shared = SharedResources(f"run {self.run_id}, Ray worker {ip} pid {os.getpid()}")
        self.pool = ClientPool(
            None, prices=spec.prices, concurrency=self.config["share"], cache=self.cache
        )
        resolved: list[AgentSpec] = []
        for agent in agents:
            if is_local_model(agent) and agent.base_url is None and node_models is not None:
                url = await node_models.url.remote(agent.model)
                agent = agent.model_copy(update={"base_url": url})
            resolved.append(agent)
        self.agents = resolved
        # the model clients now (the SDK's import is most of it), not at the first episode
        for agent in resolved:
            self.pool.client_for(agent)
        return {**identity, "problems": []}

    async def play(self, episode_data: dict[str, Any], rows: list[CacheRow]) -> EpisodeResult:
        from exploreval.runner._play import ScratchOutput, model_error_record, play

        assert self.spec is not None and self.pool is not None and self.scratch is not None
        task = asyncio.current_task()
        if task is not None:
            self.tasks.add(task)
        episode = EpisodeSpec(**episode_data)
        agent = self.agents[episode.agent_index]
        self.cache.seed(rows)
        output = ScratchOutput(self.scratch)
        model_error: str | None = None
        try:
            record = await play(
                episode,
                agent,
                self.pool,
                max_steps=self.spec.max_steps,
                episode_timeout=self.spec.episode_timeout,
                run=output,
                run_id=self.run_id,
                shared=self.shared,
            )
        except ModelError as exc:
            record = model_error_record(exc, episode, agent, self.run_id)
            model_error = str(exc)
        finally:
            if task is not None:
                self.tasks.discard(task)
        artifacts_dir = self.scratch / "artifacts" / episode.episode_id
        artifacts = await asyncio.to_thread(pack_dir, artifacts_dir)
        shutil.rmtree(artifacts_dir, ignore_errors=True)
        made = self.cache.take(episode.episode_id)
        self.cache.forget(episode.episode_id)
        return {
            "record": record.model_dump_json(),
            "texts": output.blobs.texts,
            "rows": made,
            "artifacts": artifacts,
            "model_error": model_error,
        }

    def drain(self) -> list[CacheRow]:
        """Cache rows made so far by episodes still playing (the driver writes them now, so a
        driver killed mid-episode does not pay those calls again)."""
        return self.cache.take()

    async def stop(self) -> None:
        """Cancel the episodes in flight (their envs closed) and free what the worker holds."""
        for task in list(self.tasks):
            task.cancel()
        if self.tasks:
            await asyncio.gather(*self.tasks, return_exceptions=True)
        if self.pool is not None:
            await self.pool.__aexit__(None, None, None)
        if self.shared is not None:
            await asyncio.to_thread(self.shared.close)
        if self.scratch is not None:
            shutil.rmtree(self.scratch, ignore_errors=True)
