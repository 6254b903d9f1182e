"""One real completion from the embedded model: the install's and ``exploreval doctor``'s check.

A llama.cpp build that uses an instruction the CPU cannot run answers ``/v1/models`` and then
dies on its first completion (issue 24), so "it starts" proves nothing: this sends a real chat
completion and reads the reply, and on failure says why and what fixes it.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from dataclasses import dataclass

from exploreval.models._errors import ModelError
from exploreval.models._local import PORTABLE_CMAKE_ARGS, LocalServer


@dataclass(frozen=True)
class SmokeResult:
    model: str
    ok: bool
    #: One line: the reply and its speed, or what went wrong and the fix.
    detail: str
    completion_tokens: int = 0
    seconds: float = 0.0
    start_seconds: float = 0.0

    @property
    def tokens_per_s(self) -> float:
        return self.completion_tokens / self.seconds if self.seconds > 0 else 0.0


REBUILD = (
    f'CMAKE_ARGS="{PORTABLE_CMAKE_ARGS}" pip install --force-reinstall --no-cache-dir --no-deps '
    "llama-cpp-python"
)


def smoke_local_model(model: str = "local:smollm2", *, max_tokens: int = 16) -> SmokeResult:
    """Start ``model``'s server, ask one question, stop it. Never raises for a model failure."""
    started = time.perf_counter()
    try:
        server = LocalServer(model).start()
    except ModelError as exc:
        return SmokeResult(model, False, f"the server did not start: {exc}")
    start_s = time.perf_counter() - started
    try:
        body = json.dumps(
            {
                "model": model,
                "messages": [{"role": "user", "content": "Name one colour."}],
                "max_tokens": max_tokens,
                "temperature": 0.0,
            }
        ).encode()
        request = urllib.request.Request(
            f"{server.base_url}/chat/completions",
            data=body,
            headers={"Content-Type": "application/json"},
        )
        t0 = time.perf_counter()
        try:
            with urllib.request.urlopen(request, timeout=300) as response:  # noqa: S310 - loopback
                reply = json.loads(response.read())
        except (urllib.error.URLError, OSError, json.JSONDecodeError) as exc:
            died = server.wait_dead(1.0)
            if died is not None:
                return SmokeResult(model, False, died, start_seconds=start_s)
            return SmokeResult(model, False, f"the completion failed: {exc}", start_seconds=start_s)
        took = time.perf_counter() - t0
        try:
            text = str(reply["choices"][0]["message"]["content"] or "")
            tokens = int((reply.get("usage") or {}).get("completion_tokens") or 0)
        except (KeyError, IndexError, TypeError, ValueError):
            return SmokeResult(
                model, False, f"the reply is not a chat completion: {str(reply)[:200]}",
                start_seconds=start_s,
            )  # fmt: skip
        if not text.strip():
            return SmokeResult(model, False, "the model answered with empty text", 0, took, start_s)
        shown = " ".join(text.split())[:60]
        return SmokeResult(
            model,
            True,
            f"answered {shown!r}: {tokens} tokens in {took:.2f} s "
            f"({tokens / took if took else 0:.1f} tokens/s; server start {start_s:.1f} s)",
            tokens,
            took,
            start_s,
        )
    finally:
        server.stop()
