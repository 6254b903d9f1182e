"""``--judge-model`` on ``score`` and ``run``: the metrics that call a model (an LLM judge), on a
stored run.

The judge is an LLM agent's client in every respect: the same endpoint rules (``local:*`` is
served by the embedded llama.cpp), the run's response cache (``cache.sqlite``: judging again is
free and a crash loses nothing), the same retries and errors."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pandas as pd

from exploreval.core import EpisodeRecord
from exploreval.store import RunDir

if TYPE_CHECKING:
    from exploreval.runner import AgentSpec


@dataclass(frozen=True)
class Judge:
    """Which model judges, and where it is served."""

    model: str
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"

    def check(self) -> None:
        """The same refusal as ``run`` gives an agent (before any call): a missing key."""
        from exploreval.runner import ExperimentSpec, check_api_keys

        check_api_keys(ExperimentSpec.model_construct(agents=[self._spec()]))

    def _spec(self) -> AgentSpec:
        from exploreval.runner import AgentSpec

        return AgentSpec(
            kind="llm", model=self.model, base_url=self.base_url, api_key_env=self.api_key_env
        )

    def run(self, run: RunDir, records: Sequence[EpisodeRecord]) -> dict[str, pd.DataFrame]:
        """Every registered judged table of ``records``; written to ``tables/judged/``."""
        from exploreval.analysis import write_judged_tables
        from exploreval.metrics import judged_metrics
        from exploreval.runner import ClientPool

        self.check()
        spec = self._spec()

        async def judged() -> dict[str, pd.DataFrame]:
            async with ClientPool(str(run.cache_path)) as pool:
                resolved = await pool.resolve_local(spec)
                client = pool.client_for(resolved)
                return await judged_metrics(records, client)

        tables = asyncio.run(judged())
        write_judged_tables(run, tables)
        return tables
