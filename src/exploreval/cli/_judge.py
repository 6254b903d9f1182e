"""``score --judge-model``: the metrics that call a model (an LLM judge), post hoc on a stored run.

The judge is an LLM agent's client in every respect: the same endpoint rules (``local:*`` is
served by the embedded llama.cpp), the run's response cache (``cache.sqlite``: judging again is
free and a crash loses nothing), the same retries and errors."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pandas as pd

from exploreval.core import EpisodeRecord
from exploreval.store import RunDir


def judge_run(
    run: RunDir,
    records: Sequence[EpisodeRecord],
    *,
    model: str,
    base_url: str | None,
    api_key_env: str,
) -> dict[str, pd.DataFrame]:
    """Every registered judged table of ``records``, judged by ``model``; written to
    ``tables/judged/`` and returned."""
    from exploreval.analysis import write_judged_tables
    from exploreval.metrics import judged_metrics
    from exploreval.runner import AgentSpec, ClientPool, ExperimentSpec, check_api_keys

    spec = AgentSpec(kind="llm", model=model, base_url=base_url, api_key_env=api_key_env)
    # the same refusal as `run` (before any call): a missing key, never a table of errors
    check_api_keys(ExperimentSpec.model_construct(agents=[spec]))

    async def judged() -> dict[str, pd.DataFrame]:
        async with ClientPool(str(run.cache_path)) as pool:
            resolved = await pool.resolve_local(spec)
            client = pool.client_for(resolved)
            return await judged_metrics(records, client)

    tables = asyncio.run(judged())
    write_judged_tables(run, tables)
    return tables
