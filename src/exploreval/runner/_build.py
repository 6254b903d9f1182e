"""Turn agent specs into agents, opening one model client per (model, endpoint)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

from exploreval.agents import Agent, LLMAgent, make_agent, make_harness
from exploreval.core import DEFAULT_CONCURRENCY
from exploreval.models import ModelClient, ModelPrice, TransitCache
from exploreval.runner._spec import DEFAULT_API_KEY_ENV, AgentSpec, ExperimentSpec

#: Builds the model client of an LLM agent spec (tests inject a ScriptedModel here).
ClientFactory = Callable[[AgentSpec], ModelClient]


def build_agent(spec: AgentSpec, family: str, client: ModelClient | None) -> Agent:
    """A fresh agent for one episode (harness state is per episode; clients are shared)."""
    if spec.kind == "scripted":
        assert spec.agent is not None
        agent = make_agent(family, spec.agent, **spec.options)
        agent.name = spec.display_name
        return agent
    if client is None:
        raise ValueError(f"LLM agent {spec.display_name!r} has no model client")
    harness = make_harness(family, spec.harness, history=spec.history, **spec.harness_options)
    params = spec.sampling
    overrides: dict[str, Any] = dict(getattr(harness, "sampling_overrides", {}) or {})
    if overrides:
        # Prompt designs that fix their own temperature (e.g. bandit codes ending in 0/1/D).
        params = params.model_copy(
            update={k: v for k, v in overrides.items() if getattr(params, k) is None}
        )
    memory = None
    if harness.history.mode == "memory":
        from exploreval.agents import make_memory

        memory = make_memory(harness.history.backend, client, params, harness.history.window)
    return LLMAgent(client, harness, params, name=spec.display_name,
                    constrain=spec.constrain != "off", memory=memory)  # fmt: skip


def check_api_keys(spec: ExperimentSpec) -> None:
    """Every LLM agent that needs a key has one in its environment variable, checked before the
    run directory is created (rather than a run that starts and fails at its first call).

    OpenAI's endpoint (no ``base_url``) needs a key; the embedded ``local:*`` models and servers
    at a ``base_url`` need none, unless ``api_key_env`` names a variable other than the default,
    which then must be set.
    """
    import os

    from exploreval.runner._errors import SpecError

    for index, agent in enumerate(spec.agents):
        if agent.kind != "llm" or is_local_model(agent) or os.environ.get(agent.api_key_env):
            continue
        if agent.base_url is None:
            raise SpecError(
                f"agents.{index} (model {agent.model}): no API key: set the environment variable "
                f"{agent.api_key_env} (or name another with --api-key-env), or point --base-url "
                "at a server that needs none"
            )
        if agent.api_key_env != DEFAULT_API_KEY_ENV:
            raise SpecError(
                f"agents.{index} (model {agent.model}): api_key_env names {agent.api_key_env}, "
                "which is not set in the environment"
            )


def is_local_model(spec: AgentSpec) -> bool:
    from exploreval.models import is_local_model as local_name

    return spec.kind == "llm" and local_name(spec.model)


class ClientPool:
    """One client per distinct (model, endpoint); local models are served on demand.

    Local servers come from the process-wide ``LOCAL_SERVERS`` registry, so several agents
    on the same local model (e.g. ``--history full`` and ``--history none``) share one.
    """

    def __init__(
        self,
        cache_path: str | None,
        factory: ClientFactory | None = None,
        prices: dict[str, ModelPrice] | None = None,
        concurrency: int = DEFAULT_CONCURRENCY,
        cache: TransitCache | None = None,
    ) -> None:
        self.cache_path = cache_path
        #: A cluster worker's cache (seeded and emptied by the driver), used instead of the path.
        self.cache = cache
        self.factory = factory
        self.prices = prices or {}
        #: Requests in flight per model when an agent does not say (its episodes' concurrency).
        self.concurrency = concurrency
        self._clients: dict[str, ModelClient] = {}
        self._local: list[str] = []

    async def __aenter__(self) -> ClientPool:
        return self

    async def __aexit__(self, *exc: object) -> None:
        for client in self._clients.values():
            with contextlib.suppress(Exception):
                await client.aclose()
        from exploreval.models import release_local

        for model in self._local:
            with contextlib.suppress(Exception):
                release_local(model)
        self._local.clear()

    async def resolve_local(self, spec: AgentSpec) -> AgentSpec:
        """Start (or share) the embedded server for ``local:*`` models; point the spec at it."""
        if not is_local_model(spec) or spec.base_url or self.factory is not None:
            return spec
        from exploreval.models import acquire_local

        assert spec.model is not None
        base_url = await acquire_local(spec.model)
        self._local.append(spec.model)
        return spec.model_copy(update={"base_url": base_url})

    async def watch_local(self, on_death: Callable[[str], None], every_s: float = 0.2) -> None:
        """Call ``on_death(report)`` once, as soon as an embedded server of this pool dies."""
        if not self._local:
            return
        from exploreval.models import LOCAL_SERVERS

        while True:
            await asyncio.sleep(every_s)
            for model in dict.fromkeys(self._local):
                report = LOCAL_SERVERS.death_report(model, wait_s=0.0)
                if report is not None:
                    on_death(report)
                    return

    def client_for(self, spec: AgentSpec) -> ModelClient | None:
        if spec.kind != "llm":
            return None
        key = f"{spec.model}|{spec.base_url}|{spec.api_key_env}|{spec.constrain}"
        if key not in self._clients:
            if self.factory is not None:
                self._clients[key] = self.factory(spec)
            else:
                self._clients[key] = open_client(spec, self.cache_path, self.prices,
                                                 default_concurrency=self.concurrency,
                                                 cache=self.cache)  # fmt: skip
        return self._clients[key]


def open_client(
    spec: AgentSpec,
    cache_path: str | None,
    prices: dict[str, ModelPrice] | None = None,
    *,
    default_concurrency: int = DEFAULT_CONCURRENCY,
    cache: TransitCache | None = None,
) -> ModelClient:
    """The real client: the openai SDK against ``spec.base_url`` with the run's cache."""
    from exploreval.models import open_model_client

    assert spec.model is not None
    return open_model_client(
        spec.model,
        base_url=spec.base_url,
        api_key_env=spec.api_key_env,
        cache_path=cache_path,
        max_connections=spec.max_connections or default_concurrency,
        request_timeout=spec.request_timeout,
        max_retries=spec.max_retries,
        prices=prices,
        constrain_wire=spec.constrain if spec.constrain in ("grammar", "json_schema") else "auto",
        cache=cache,
    )
