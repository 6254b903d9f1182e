"""What a run needs, checked before anything is written (issue 21).

A run that would fail every episode for want of an optional extra, a system tool or a model
endpoint is refused before its directory exists, with one line per missing part naming it and
the command that installs it (or what to start): nothing is left half-made, nothing is paid for.
"""

from __future__ import annotations

import os
import socket
from urllib.parse import urlparse

from exploreval.core import EXTRAS, env_spec, extra_problem
from exploreval.runner._plan import EpisodeSpec
from exploreval.runner._spec import ExperimentSpec


def missing_requirements(
    spec: ExperimentSpec, plan: list[EpisodeSpec], *, models: bool = True, executor: bool = True
) -> list[str]:
    """Every problem found, one line each (empty: the run can start). ``models``: also check
    the LLM agents' local models and endpoints (off when a test injects model clients, and on
    a cluster node, which checks its endpoints itself). ``executor``: also the executor's extra
    (off on a cluster node, which has Ray by definition)."""
    problems: list[str] = []

    def add(line: str | None) -> None:
        if line and line not in problems:
            problems.append(line)

    for env_id in sorted({e.env_id for e in plan}):
        es = env_spec(env_id)
        for extra in es.extras:
            add(extra_problem(extra, env_id))
        if any(extra_problem(extra, env_id) for extra in es.extras):
            continue  # importing the env would only repeat what is missing
        try:
            cls = es.load()
        except ImportError as exc:
            add(f"{env_id} cannot be imported ({exc}); reinstall exploreval or its plugin")
            continue
        options = next(e.env_options for e in plan if e.env_id == env_id)
        for problem in cls.preflight(dict(options)):
            add(f"{env_id}: {problem}")
    for index, agent in enumerate(spec.agents):
        if agent.kind == "llm":
            from exploreval.agents import MEMORY_BACKENDS

            backend = agent.history.partition(":")[0]
            if backend in MEMORY_BACKENDS:
                add(EXTRAS[MEMORY_BACKENDS[backend][0]].problem(f"--history {agent.history}"))
                add(EXTRAS["embeddings"].problem(f"--history {agent.history}"))
        if not models or agent.kind != "llm" or agent.model is None:
            continue
        if agent.model.startswith("local:") and agent.base_url is None:
            from exploreval.models import ModelError, local_model_path

            try:
                local_model_path(agent.model)
            except ModelError as exc:
                add(f"agents.{index} ({agent.model}): {exc}")
        elif agent.base_url is not None:
            add(endpoint_problem(index, agent.model, agent.base_url))
    if spec.executor == "ray" and executor:
        add(EXTRAS["ray"].problem("--executor ray"))
        add(ray_address_problem(os.environ.get("RAY_ADDRESS")))
    return problems


def ray_address_problem(address: str | None) -> str | None:
    """``RAY_ADDRESS`` names a cluster nothing answers at (Ray itself would retry for minutes)."""
    if not address or address in ("auto", "local"):
        return None
    url = urlparse(address if "://" in address else f"ray://{address}")
    if not url.hostname or url.port is None:
        return f"--executor ray: RAY_ADDRESS={address} is not HOST:PORT (or ray://HOST:PORT)"
    try:
        socket.create_connection((url.hostname, url.port), timeout=3).close()
    except OSError as exc:
        return (
            f"--executor ray: nothing answers at RAY_ADDRESS={address} ({exc.strerror or exc}); "
            "start the cluster (ray start --head), fix RAY_ADDRESS, or unset it to run on a "
            "local cluster"
        )
    return None


def endpoint_problem(index: int, model: str, base_url: str) -> str | None:
    """Nothing answers at the endpoint's host and port (a server not started, a typo)."""
    url = urlparse(base_url)
    if url.scheme not in ("http", "https") or not url.hostname:
        return f"agents.{index} ({model}): --base-url {base_url} is not an http(s) URL"
    port = url.port or (443 if url.scheme == "https" else 80)
    try:
        socket.create_connection((url.hostname, port), timeout=3).close()
    except OSError as exc:
        return (
            f"agents.{index} ({model}): nothing answers at {url.hostname}:{port} ({base_url}: "
            f"{exc.strerror or exc}); start the server, or fix --base-url"
        )
    return None


def run_notes(spec: ExperimentSpec) -> list[str]:
    """What each suite's env says about its defaults (``Env.run_notes``) under the suite's
    options, prefixed with the env id, each line once. Nothing here refuses a run."""
    notes: list[str] = []
    for suite in spec.suites:
        try:
            cls = env_spec(suite.env_id).load()
        except (ImportError, KeyError):
            continue  # missing_requirements and planning say so
        for note in cls.run_notes(dict(suite.env_options)):
            line = f"{suite.env_id}: {note}"
            if line not in notes:
                notes.append(line)
    return notes
