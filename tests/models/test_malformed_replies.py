"""Issue 8 §3: malformed 200 replies, bad Retry-After, lone surrogates, keys echoed back."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest

from exploreval.core import Message
from exploreval.models import ModelRequestError, OpenAIClient, ResponseCache
from exploreval.models.testing import MALFORMED_KINDS, StubServer

MESSAGES = [Message(role="user", content="hi")]
KEY = "sk-test-0123456789abcdefSECRET"


def complete(client: OpenAIClient) -> object:
    async def go() -> object:
        try:
            return await client.complete(MESSAGES)
        finally:
            await client.aclose()

    return asyncio.run(go())


def client_for(server: StubServer, **kwargs: object) -> OpenAIClient:
    options: dict = {"backoff_base_s": 0.01, "max_retries": 2, "request_timeout": 5.0, **kwargs}
    return OpenAIClient("stub-model", server.base_url, **options)


@pytest.mark.parametrize("kind", sorted(MALFORMED_KINDS))
def test_a_malformed_200_is_retried_like_a_5xx(kind: str) -> None:
    with StubServer(reply="fine") as server:
        server.malformed_next(kind, times=2)
        completion = complete(client_for(server))
        assert completion.text == "fine"  # type: ignore[attr-defined]
        assert completion.retries == 2  # type: ignore[attr-defined]
        assert all("malformed reply" in line for line in completion.retry_log)  # type: ignore[attr-defined]
        assert server.request_count == 3


@pytest.mark.parametrize("kind", sorted(MALFORMED_KINDS))
def test_a_persistent_malformed_reply_is_a_request_error_naming_the_endpoint(kind: str) -> None:
    with StubServer() as server:
        server.malformed_next(kind, times=10)
        with pytest.raises(ModelRequestError, match="malformed reply") as info:
            complete(client_for(server))
        assert server.base_url.split("/v1")[0] in str(info.value)
        assert server.request_count == 3  # first try + 2 retries


def test_an_unparseable_retry_after_falls_back_to_backoff() -> None:
    with StubServer(reply="ok") as server:
        server.fail_next(429, headers={"Retry-After": "soon-ish, maybe"})
        completion = complete(client_for(server))
        assert completion.text == "ok"  # type: ignore[attr-defined]
        assert completion.retries == 1  # type: ignore[attr-defined]
        assert "(Retry-After)" not in completion.retry_log[0]  # type: ignore[attr-defined]


def test_lone_surrogates_are_stored_escaped_and_never_re_paid(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # json.dumps writes "\ud800" as an escape: the wire carries a lone surrogate
    with StubServer(reply="before \ud800 after") as server:
        cache = ResponseCache(str(tmp_path / "cache.sqlite"))
        first = complete(client_for(server, cache=cache))
        assert first.text == "before \\ud800 after"  # type: ignore[attr-defined]
        json.dumps(first.model_dump(mode="json"), ensure_ascii=False).encode("utf-8")  # type: ignore[attr-defined]
        cache2 = ResponseCache(str(tmp_path / "cache.sqlite"))
        second = complete(client_for(server, cache=cache2))
        assert second.cached and second.text == first.text  # type: ignore[attr-defined]
        assert server.request_count == 1


def test_the_key_is_redacted_from_what_the_server_sends_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("STUB_KEY", KEY)
    with StubServer(
        reply=f"your key is {KEY}!", reasoning=f"I saw {KEY[:14]} in the header"
    ) as server:
        completion = complete(client_for(server, api_key_env="STUB_KEY"))
        dumped = json.dumps(completion.model_dump(mode="json"))  # type: ignore[attr-defined]
        assert KEY not in dumped and KEY[:12] not in dumped
        assert "[redacted]" in completion.text  # type: ignore[attr-defined]


def test_the_key_is_redacted_from_finish_reason_in_the_completion_and_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STUB_KEY", KEY)
    with StubServer(reply="ok", finish_reason=f"stop (key {KEY})") as server:
        cache = ResponseCache(str(tmp_path / "cache.sqlite"))
        completion = complete(client_for(server, api_key_env="STUB_KEY", cache=cache))
        cache.close()
    assert completion.finish_reason == "stop (key [redacted])"  # type: ignore[attr-defined]
    stored = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    assert KEY.encode() not in stored and KEY[:12].encode() not in stored
    assert b"[redacted]" in stored


@pytest.mark.parametrize(
    ("usage", "expected"),
    [
        ({"prompt_tokens": 12, "completion_tokens": 3}, (12, 3)),
        ({"prompt_tokens": 12.0, "completion_tokens": None}, (12, 0)),  # lenient servers
        ({}, (0, 0)),
    ],
)
def test_well_formed_usage_is_read_as_counts(usage: dict, expected: tuple[int, int]) -> None:
    client = OpenAIClient("stub-model", "http://127.0.0.1:9/v1")
    reply = {"choices": [{"message": {"content": "hi"}, "finish_reason": "stop"}], "usage": usage}
    completion = client._completion(reply, 0.0, 0, [])
    assert (completion.usage.prompt_tokens, completion.usage.completion_tokens) == expected


@pytest.mark.parametrize(
    ("usage", "finish_reason", "needle"),
    [
        ({"prompt_tokens": -5}, "stop", "prompt_tokens = -5 is outside"),
        ({"prompt_tokens": 1e30}, "stop", "prompt_tokens is not an integer count"),
        ({"completion_tokens": 10**12}, "stop", "completion_tokens = 1000000000000 is outside"),
        ({"prompt_tokens": 1.5}, "stop", "prompt_tokens is not an integer count"),
        ({"prompt_tokens": True}, "stop", "prompt_tokens is not an integer count"),
        ([1, 2], "stop", "usage is not an object"),
        ({"completion_tokens_details": {"reasoning_tokens": -1}}, "stop", "reasoning_tokens"),
        ({}, 7, "finish_reason is not a string"),
        ({}, ["stop"], "finish_reason is not a string"),
    ],
)
def test_bad_usage_and_finish_reason_are_malformed_replies(
    usage: object, finish_reason: object, needle: str
) -> None:
    from exploreval.models._openai import MalformedReply

    client = OpenAIClient("stub-model", "http://127.0.0.1:9/v1")
    reply = {
        "choices": [{"message": {"content": "hi"}, "finish_reason": finish_reason}],
        "usage": usage,
    }
    with pytest.raises(MalformedReply, match=re.escape(needle)):
        client._completion(reply, 0.0, 0, [])
