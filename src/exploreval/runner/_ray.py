"""Ray executor: the same plan, episodes spread over a Ray cluster.

The driver connects with ``ray.init()`` (address from ``RAY_ADDRESS`` when set, else a
local cluster), ships batches of episode specs to remote tasks, and appends each
finished record to the run's log as batches return. Workers share the run's SQLite
cache and prompt blobs through the file system (one machine or a shared volume).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING, Any

from exploreval.core import EpisodeRecord
from exploreval.models import ModelError, ModelPrice
from exploreval.runner._build import ClientPool
from exploreval.runner._episode import EpisodeSpec
from exploreval.runner._spec import AgentSpec
from exploreval.store import RunDir

if TYPE_CHECKING:
    from exploreval.runner._runner import Runner


def _play_batch(
    episodes: list[dict[str, Any]],
    agents: list[dict[str, Any]],
    max_steps: int | None,
    timeout_s: float | None,
    run_path: str,
    run_id: str,
    plugins: list[str],
    prices: dict[str, Any],
) -> list[str]:
    """Runs inside a Ray worker: play a batch, return records as JSON."""
    import importlib

    from exploreval.runner._runner import play

    for module in plugins:
        importlib.import_module(module)

    async def main() -> list[str]:
        run = RunDir(run_path)
        specs = [AgentSpec.model_validate(a) for a in agents]
        out: list[str] = []
        price_table = {k: ModelPrice.model_validate(v) for k, v in prices.items()}
        async with ClientPool(str(run.cache_path), prices=price_table) as pool:
            for data in episodes:
                episode = EpisodeSpec(**data)
                agent = specs[episode.agent_index]
                try:
                    record = await play(
                        episode,
                        agent,
                        pool,
                        max_steps=max_steps,
                        timeout_s=timeout_s,
                        run=run,
                        run_id=run_id,
                    )
                except ModelError as exc:
                    # same policy as the local executor: the episode's steps so far are stored,
                    # the run stops; tell the driver
                    if isinstance(exc.record, EpisodeRecord):
                        out.append(exc.record.model_dump_json())
                    out.append(MODEL_ERROR_MARK + str(exc))
                    break
                out.append(record.model_dump_json())
        run.close()
        return out

    return asyncio.run(main())


#: A worker's line that is not a record: the endpoint failed for good (ModelError).
MODEL_ERROR_MARK = "\x00model-error:"


def _batches(items: list[EpisodeSpec], n_batches: int) -> list[list[EpisodeSpec]]:
    n_batches = max(1, min(n_batches, len(items)))
    return [items[i::n_batches] for i in range(n_batches)]


async def execute_ray(runner: Runner) -> AsyncGenerator[EpisodeRecord, None]:
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
    from exploreval.runner._runner import _budget_exhausted

    spec = runner.spec
    async with ClientPool(str(runner.run.cache_path), prices=spec.prices,
                          concurrency=spec.concurrency) as pool:  # fmt: skip
        agents = [await pool.resolve_local(a) for a in spec.agents]
        remote = ray.remote(_play_batch)
        cpus = int(ray.cluster_resources().get("CPU", 1))  # type: ignore[no-untyped-call]
        pending = list(runner.pending)
        args = (
            [a.model_dump(mode="json") for a in agents],
            spec.max_steps,
            spec.episode_timeout_s,
            str(runner.run.path),
            runner.run_id,
            list(spec.plugins),
            {k: v.model_dump() for k, v in spec.prices.items()},
        )
        budgeted = any(v is not None for v in spec.budget.model_dump().values())
        # With a budget, one episode per task and at most `concurrency` in flight, so the budget
        # is checked before each new episode starts, as the local executor does; without one,
        # a few batches per CPU amortise the task overhead.
        batches = [[e] for e in pending] if budgeted else _batches(pending, cpus * 4)
        limit = spec.concurrency if budgeted else len(batches)
        queue = list(reversed(batches))
        refs: list[Any] = []
        try:
            while queue or refs:
                while queue and len(refs) < limit:
                    if budgeted and _budget_exhausted(spec, runner.totals) is not None:
                        queue.clear()
                        break
                    batch = queue.pop()
                    refs.append(remote.remote([e.__dict__ for e in batch], *args))
                if not refs:
                    break
                ready, refs = await asyncio.to_thread(ray.wait, refs, num_returns=1)
                for line in ray.get(ready[0]):
                    if line.startswith(MODEL_ERROR_MARK):
                        raise ModelError(line[len(MODEL_ERROR_MARK) :])
                    yield EpisodeRecord.model_validate_json(line)
        finally:
            for ref in refs:  # stop what is still running (budget reached, model error, cancel)
                ray.cancel(ref, force=True)
