"""An episode's compose services: started before the agent, healthy before it acts, stopped
with the episode, their output kept.

Each service is its own sandbox from its own image (``._sandbox`` with a ``command``), with its
own uid, PID namespace and files; all of them, the agent's sandbox and the verification run share
the episode's network (``._network.EpisodeNetwork``), where every service name resolves. Start
order is the compose file's dependency order; a dependent waits for each ``depends_on``
condition. Before the agent's sandbox starts, every service with a health check is healthy and
every condition of the agent's own ``depends_on`` holds.

**Health.** A probe is the check's ``test`` run inside the service (``Sandbox.exec``); it passes
on exit status 0 within ``timeout``. Docker probes every ``interval``; here a probe runs as soon
as the service starts and again every ``min(interval, 0.5 s)`` until one passes, so a healthy
service is found as early as it can be. The service is declared unhealthy when no probe passed
by Docker's own deadline, ``start_period + retries × (interval + timeout)``: no service that
Docker would call healthy is refused, and no episode waits longer than Docker would. Episodes
whose services do not come up fail to start with :class:`ServiceError` naming the service, the
last probe's output and the tail of its log.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any, Literal

from exploreval.suites.terminal._compose import pulled_defaults
from exploreval.suites.terminal._contract import (
    HealthCheck,
    ImageRecipe,
    ServiceCondition,
    ServiceSpec,
)
from exploreval.suites.terminal._errors import SandboxError
from exploreval.suites.terminal._limits import Limits
from exploreval.suites.terminal._network import EpisodeNetwork
from exploreval.suites.terminal._registry import pull_image
from exploreval.suites.terminal._sandbox import Sandbox
from exploreval.suites.terminal._sandbox_config import SandboxConfig

#: How long a ``service_completed_successfully`` dependency may run before it counts as failed.
COMPLETION_TIMEOUT_S = 600.0
_PROBE_EVERY_S = 0.5
_LOG_TAIL = 2000


class ServiceError(SandboxError):
    """A compose service did not start, did not become healthy, or did not complete."""


class RunningServices:
    """The services of one episode and their shared network."""

    def __init__(self, network: EpisodeNetwork) -> None:
        self.network = network
        self.sandboxes: dict[str, Sandbox] = {}
        self.specs: dict[str, ServiceSpec] = {}
        #: Per service: seconds from its start to started / healthy / completed, probes run.
        self.events: dict[str, dict[str, Any]] = {}
        self._started_at: dict[str, float] = {}
        self._healthy: dict[str, asyncio.Future[None]] = {}

    @property
    def names(self) -> list[str]:
        return self.network.names

    def ports(self) -> frozenset[int]:
        """TCP ports the services listen on now (read from one service's view of the network)."""
        for sb in self.sandboxes.values():
            if sb.child_pid and sb.alive:
                return frozenset(sb.listening_ports())
        return frozenset()

    async def _wait_for(self, name: str, condition: str, *, by: str) -> None:
        sb = self.sandboxes[name]
        if condition == "service_started":
            if not sb.alive and sb.service_exit() is None:
                raise ServiceError(f"service '{name}' (needed by {by}) ended at start: "
                                   f"{self._tail(sb)}")  # fmt: skip
            return
        if condition == "service_healthy":
            if name not in self._healthy:  # its own, or (pulled) its image's
                raise ServiceError(
                    f"{by} waits for service '{name}' to be healthy, but '{name}' has no health "
                    "check (compose 'healthcheck', the Dockerfile's HEALTHCHECK or the pulled image's)"
                )
            await self._healthy[name]
            return
        deadline = time.monotonic() + COMPLETION_TIMEOUT_S
        while (code := sb.service_exit()) is None:
            if time.monotonic() > deadline:
                raise ServiceError(f"service '{name}' (needed by {by}) did not complete within "
                                   f"{COMPLETION_TIMEOUT_S:.0f} s")  # fmt: skip
            await asyncio.sleep(0.05)
        self.events[name]["completed_s"] = round(time.monotonic() - self._started_at[name], 3)
        self.events[name]["exit_code"] = code
        if code != 0:
            raise ServiceError(f"service '{name}' (needed by {by}) exited with status {code}: "
                               f"{self._tail(sb)}")  # fmt: skip

    async def _probe_until_healthy(self, name: str, check: HealthCheck) -> None:
        sb = self.sandboxes[name]
        started = self._started_at[name]
        deadline = started + check.start_period_s + check.retries * (
            check.interval_s + check.timeout_s)  # fmt: skip
        probes, last = 0, "no probe ran"
        while True:
            if not sb.alive:
                raise ServiceError(f"service '{name}' exited before it was healthy: "
                                   f"{self._tail(sb)}")  # fmt: skip
            probes += 1
            try:
                result = await sb.exec(list(check.test), timeout=check.timeout_s,
                                       max_output_bytes=4000)  # fmt: skip
            except SandboxError as exc:
                last = str(exc)
            else:
                if result.returncode == 0:
                    self.events[name].update(
                        healthy_s=round(time.monotonic() - started, 3), probes=probes
                    )
                    return
                last = (f"exit {result.returncode}"
                        + (" (timed out)" if result.timed_out else "")
                        + f": {(result.stdout + result.stderr).strip()[-500:]}")  # fmt: skip
            if time.monotonic() >= deadline:
                self.events[name]["probes"] = probes
                raise ServiceError(
                    f"service '{name}' was not healthy within {deadline - started:.0f} s "
                    f"({probes} probes of {' '.join(check.test)!r}; last: {last}); "
                    f"its log: {self._tail(sb)}"
                )
            await asyncio.sleep(min(check.interval_s, _PROBE_EVERY_S))

    @staticmethod
    def _tail(sb: Sandbox) -> str:
        text = sb.service_log(_LOG_TAIL).decode(errors="replace").strip()
        return text[-_LOG_TAIL:] if text else "(no output)"

    def logs(self) -> dict[str, bytes]:
        return {name: sb.service_log() for name, sb in self.sandboxes.items()}

    async def close(self, log_dir: Path | None = None) -> None:
        """Stop every service (their logs kept under ``log_dir``), then the network."""
        try:
            if log_dir is not None and self.sandboxes:
                log_dir.mkdir(parents=True, exist_ok=True)
                for name, data in self.logs().items():
                    (log_dir / f"{name}.log").write_bytes(data)
        finally:
            for task in self._healthy.values():
                task.cancel()
            for sb in reversed(list(self.sandboxes.values())):
                with contextlib.suppress(Exception):
                    await sb.close()
            self.network.close()


async def start_services(
    services: tuple[ServiceSpec, ...],
    *,
    agent_depends_on: Mapping[str, ServiceCondition],
    image_of: Callable[[ImageRecipe], Awaitable[Any]],
    limits: Limits,
    internet: bool,
    users: Literal["one", "many"] = "many",
) -> RunningServices:
    """Start ``services`` in order on a new episode network and wait until the agent may start.

    ``image_of(recipe)`` returns the built image (``._image.BuiltImage``) of a service."""
    from exploreval.suites.terminal._system import require_system

    require_system(image=True, network=internet, services=True)
    names: list[str] = []
    for spec in services:
        names += [spec.name, *spec.aliases]
    network = EpisodeNetwork(names)
    running = RunningServices(network)
    try:
        await network.start(internet=internet)
        for spec in services:
            for dep, condition in spec.depends_on.items():
                await running._wait_for(dep, condition, by=f"service '{spec.name}'")
            command, workdir, env, health = spec.command, spec.workdir, spec.env, spec.healthcheck
            if spec.pull is not None:  # as Docker: pulled, then the image's config applies
                image = await asyncio.to_thread(pull_image, spec.pull)
                command, workdir, env, health = pulled_defaults(spec, image.meta)
            else:
                assert spec.image is not None
                image = await image_of(spec.image)
                env = {**image.env, **env}
            config = SandboxConfig(
                image=image.rootfs,
                workdir=workdir,
                env=env,
                limits=limits,
                record_cast=False,
                watch_files=False,
                hostname=spec.name,
                command=command,
                users=users,
            )
            running.specs[spec.name] = spec
            running.events[spec.name] = {"command": list(command)}
            if spec.pull is not None:
                running.events[spec.name]["image"] = image.meta.get("base", spec.pull)
            running._started_at[spec.name] = time.monotonic()
            sb = await Sandbox.start(config, network_of=network)
            running.sandboxes[spec.name] = sb
            running.events[spec.name]["started_s"] = round(sb.start_seconds, 3)
            if health is not None:
                running._healthy[spec.name] = asyncio.ensure_future(
                    running._probe_until_healthy(spec.name, health)
                )
        for name, condition in agent_depends_on.items():
            await running._wait_for(name, condition, by="the agent's service")
        for name in running._healthy:  # every health check passes before the episode starts
            await running._healthy[name]
    except BaseException:
        await running.close()
        raise
    return running
