"""A local OpenAI-compatible stub server for tests and benchmarks.

It speaks just enough of ``/v1/chat/completions`` for the official SDK, answers after a
fixed delay, and can be told to fail (HTTP status + headers, e.g. 429 with Retry-After)
for the next N requests, or to demand an API key. It uses only the standard library so
it runs wherever exploreval does.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

ReplyFn = Callable[[list[dict[str, Any]]], str]


#: 200 replies that are not chat completions, as proxies and broken servers send them.
MALFORMED_KINDS: dict[str, tuple[str, bytes]] = {
    "html": ("text/html", b"<html><body><h1>502 Bad Gateway</h1></body></html>"),
    "bad_json": ("application/json", b'{"choices": [{"message": '),
    "no_choices": ("application/json", b'{"id": "x", "object": "chat.completion"}'),
    "bad_usage": (
        "application/json",
        b'{"choices": [{"message": {"role": "assistant", "content": "hi"}}],'
        b' "usage": {"prompt_tokens": "many"}}',
    ),
    "negative_usage": (
        "application/json",
        b'{"choices": [{"message": {"role": "assistant", "content": "hi"}}],'
        b' "usage": {"prompt_tokens": -5, "completion_tokens": 1}}',
    ),
    "absurd_usage": (
        "application/json",
        b'{"choices": [{"message": {"role": "assistant", "content": "hi"}}],'
        b' "usage": {"prompt_tokens": 1e30, "completion_tokens": 1}}',
    ),
    "bad_finish_reason": (
        "application/json",
        b'{"choices": [{"message": {"role": "assistant", "content": "hi"},'
        b' "finish_reason": {"why": "stop"}}]}',
    ),
}


class StubServer:
    """``with StubServer(delay_s=0.1, reply="<a>next</a>") as s: s.base_url``.

    * ``reply`` / ``reply_fn(messages)``: the assistant text.
    * ``tool_calls_fn(body)``: ``[(name, arguments_json)]`` to answer with function calls (the
      request body carries ``tools``/``tool_choice``); None or ``[]`` for a text reply.
    * ``fail_next(status, headers=None, times=1)``: the next requests fail that way.
    * ``malformed_next(kind, times=1)``: the next requests get a 200 that is not a chat
      completion: one of ``MALFORMED_KINDS`` (HTML, bad JSON, no choices, usage that is not a
      count or is negative or absurd, a finish_reason that is not a string).
    * ``finish_reason``: what the replies' ``finish_reason`` says (default ``stop``).
    * ``require_key``: answer 401 unless ``Authorization: Bearer <key>``.
    * ``requests``: bodies received (for asserting pass-through of parameters).
    * ``max_in_flight``: the most chat requests it was answering at once (connection limits).
    * ``first_request_at`` / ``last_request_at``: when the first and the latest chat request
      arrived (``time.time()``), so a benchmark can tell its client's start-up and wind-down
      from the steady state between them.
    """

    def __init__(
        self,
        *,
        delay_s: float = 0.0,
        reply: str = "ok",
        reply_fn: ReplyFn | None = None,
        tool_calls_fn: Callable[[dict[str, Any]], list[tuple[str, str]] | None] | None = None,
        require_key: str | None = None,
        reasoning: str | None = None,
        finish_reason: str = "stop",
    ) -> None:
        self.delay_s = delay_s
        self.finish_reason = finish_reason
        self.reply = reply
        self.reply_fn = reply_fn
        self.tool_calls_fn = tool_calls_fn
        self.require_key = require_key
        self.reasoning = reasoning
        self.requests: list[dict[str, Any]] = []
        self.request_count = 0
        self.first_request_at: float | None = None
        self.last_request_at: float | None = None
        self.in_flight = 0
        self.max_in_flight = 0
        self._faults: deque[tuple[int, dict[str, str]]] = deque()
        self._malformed: deque[str] = deque()
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        assert self._server is not None, "StubServer not started"
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def fail_next(self, status: int, headers: dict[str, str] | None = None, times: int = 1) -> None:
        with self._lock:
            for _ in range(times):
                self._faults.append((status, dict(headers or {})))

    def malformed_next(self, kind: str, times: int = 1) -> None:
        if kind not in MALFORMED_KINDS:
            raise ValueError(f"malformed kind {kind!r}; one of {sorted(MALFORMED_KINDS)}")
        with self._lock:
            self._malformed.extend([kind] * times)

    # -- lifecycle ------------------------------------------------------------------------
    def start(self) -> StubServer:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body go out in two writes; with Nagle on, the body waits for the
            # client's delayed ACK (~40 ms) and the stub, not exploreval, sets the pace.
            disable_nagle_algorithm = True

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

            def _send(self, status: int, body: dict[str, Any], headers: dict[str, str]) -> None:
                data = json.dumps(body).encode()
                self._uncount()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for key, value in headers.items():
                    self.send_header(key, value)
                self.end_headers()
                # the client may have gone away (killed mid-request in crash tests)
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.wfile.write(data)

            def do_GET(self) -> None:  # noqa: N802 - http.server naming
                if self.path.rstrip("/").endswith("/stats"):
                    stats = {
                        "requests": stub.request_count,
                        "first_request_at": stub.first_request_at,
                        "last_request_at": stub.last_request_at,
                        "max_in_flight": stub.max_in_flight,
                        "pid": os.getpid(),
                    }
                    self._send(200, stats, {})
                    return
                self._send(200, {"object": "list", "data": [{"id": "stub", "object": "model"}]}, {})

            def do_POST(self) -> None:  # noqa: N802 - http.server naming
                with stub._lock:
                    stub.in_flight += 1
                    stub.max_in_flight = max(stub.max_in_flight, stub.in_flight)
                self._counted = True
                try:
                    self._answer()
                finally:
                    self._uncount()

            def _uncount(self) -> None:
                # before the reply goes out: the client may send its next request as soon as it
                # has this one, and must not find this one still counted
                if getattr(self, "_counted", False):
                    self._counted = False
                    with stub._lock:
                        stub.in_flight -= 1

            def _answer(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                arrived = time.time()
                with stub._lock:
                    stub.request_count += 1
                    if stub.first_request_at is None:
                        stub.first_request_at = arrived
                    stub.last_request_at = arrived
                    stub.requests.append(body)
                    fault = stub._faults.popleft() if stub._faults else None
                    malformed = stub._malformed.popleft() if stub._malformed else None
                if stub.require_key is not None:
                    auth = self.headers.get("Authorization", "")
                    if auth != f"Bearer {stub.require_key}":
                        self._send(
                            401,
                            {"error": {"message": "Incorrect API key provided", "type": "auth"}},
                            {},
                        )
                        return
                if stub.delay_s:
                    time.sleep(stub.delay_s)
                if fault is not None:
                    status, headers = fault
                    self._send(
                        status, {"error": {"message": f"stub fault {status}", "type": "x"}}, headers
                    )
                    return
                if malformed is not None:
                    ctype, data = MALFORMED_KINDS[malformed]
                    self._uncount()
                    self.send_response(200)
                    self.send_header("Content-Type", ctype)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                        self.wfile.write(data)
                    return
                messages = body.get("messages", [])
                text = stub.reply_fn(messages) if stub.reply_fn else stub.reply
                prompt_tokens = sum(len(str(m.get("content", "")).split()) for m in messages)
                message: dict[str, Any] = {"role": "assistant", "content": text}
                if stub.reasoning is not None:
                    message["reasoning_content"] = stub.reasoning
                calls = stub.tool_calls_fn(body) if stub.tool_calls_fn else None
                if calls:
                    message["content"] = None
                    message["tool_calls"] = [
                        {"id": f"call_{i}", "type": "function",
                         "function": {"name": name, "arguments": arguments}}
                        for i, (name, arguments) in enumerate(calls)
                    ]  # fmt: skip
                self._send(
                    200,
                    {
                        "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
                        "object": "chat.completion",
                        "created": int(time.time()),
                        "model": body.get("model", "stub"),
                        "choices": [
                            {"index": 0, "message": message, "finish_reason": stub.finish_reason}
                        ],
                        "usage": {
                            "prompt_tokens": prompt_tokens,
                            "completion_tokens": len(text.split()),
                            "total_tokens": prompt_tokens + len(text.split()),
                        },
                    },
                    {},
                )

        class Server(ThreadingHTTPServer):
            daemon_threads = True
            request_queue_size = 256

        self._server = Server(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> StubServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _serve_forever() -> None:  # pragma: no cover - exercised by the benchmark
    """``python -m exploreval.models.testing --delay 0.1``: serve until killed.

    Prints the base URL on the first line. ``GET /v1/stats`` returns the request count, so
    a benchmark can keep the server out of its own process (and its GIL).
    """
    import argparse
    import signal
    import sys

    parser = argparse.ArgumentParser()
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("--reply", default="ok")
    args = parser.parse_args()
    server = StubServer(delay_s=args.delay, reply=args.reply).start()
    print(server.base_url, flush=True)
    signal.sigwait({signal.SIGTERM, signal.SIGINT})
    server.stop()
    sys.exit(0)


if __name__ == "__main__":
    _serve_forever()
