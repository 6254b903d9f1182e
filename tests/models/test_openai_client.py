"""The real client (openai SDK) against a local OpenAI-compatible stub server."""

from __future__ import annotations

import asyncio
import os
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from exploreval.core import Message
from exploreval.models import (
    ModelError,
    ModelPrice,
    ModelRequestError,
    OpenAIClient,
    PriceTable,
    ResponseCache,
    SamplingParams,
)
from exploreval.models.testing import StubServer

MESSAGES = [Message(role="system", content="be brief"), Message(role="user", content="hi there")]


def client_for(server: StubServer, **kwargs: object) -> OpenAIClient:
    options: dict = {"backoff_base_s": 0.01, "max_retries": 3, "request_timeout": 5.0, **kwargs}
    return OpenAIClient("stub-model", server.base_url, **options)


def complete(client: OpenAIClient, **kwargs: object) -> object:
    async def go() -> object:
        try:
            return await client.complete(MESSAGES, **kwargs)  # type: ignore[arg-type]
        finally:
            await client.aclose()

    return asyncio.run(go())


def test_completion_usage_and_params_pass_through() -> None:
    with StubServer(reply="<a>up</a>", reasoning="I thought") as server:
        params = SamplingParams(
            temperature=0.3, top_p=0.9, max_tokens=17, seed=5, reasoning_effort="low", stop=["</a>"]
        )
        prices = PriceTable({"stub-model": ModelPrice(input=1.0, output=2.0)})
        result = complete(client_for(server, prices=prices), params=params)
        sent = server.requests[0]
    assert result.text == "<a>up</a>" and result.reasoning == "I thought"
    assert result.usage.prompt_tokens == 4 and result.usage.completion_tokens == 1
    assert result.usage.cost_usd == pytest.approx((4 * 1.0 + 1 * 2.0) / 1e6)
    assert result.retries == 0 and not result.cached
    assert sent["model"] == "stub-model"
    assert sent["messages"] == [{"role": m.role, "content": m.content} for m in MESSAGES]
    for key, value in params.model_dump(exclude_none=True).items():
        assert sent[key] == value, key


def test_retries_honour_retry_after_and_are_recorded() -> None:
    with StubServer(reply="ok") as server:
        server.fail_next(429, {"Retry-After": "0.3"})
        server.fail_next(500)
        server.fail_next(503)
        started = time.perf_counter()
        result = complete(client_for(server))
        elapsed = time.perf_counter() - started
        assert server.request_count == 4
    assert result.text == "ok" and result.retries == 3
    assert len(result.retry_log) == 3
    assert "HTTP 429" in result.retry_log[0] and "Retry-After" in result.retry_log[0]
    assert "HTTP 500" in result.retry_log[1] and "HTTP 503" in result.retry_log[2]
    assert elapsed >= 0.3  # the server's Retry-After was honoured


def test_retries_exhausted_is_a_model_error() -> None:
    with StubServer() as server:
        server.fail_next(502, times=10)
        with pytest.raises(ModelError, match="after 2 retries; last error: HTTP 502"):
            complete(client_for(server, max_retries=2))
        assert server.request_count == 3


def test_timeouts_are_retried() -> None:
    with StubServer(delay_s=0.5) as server:
        with pytest.raises(ModelError, match="timed out after 0.1s"):
            complete(client_for(server, request_timeout=0.1, max_retries=1))
        assert server.request_count == 2


def test_bad_key_names_the_variable_and_never_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "sk-test-VERYSECRET-1234567890"
    monkeypatch.setenv("MY_KEY", secret)
    with StubServer(require_key="sk-right") as server:
        with pytest.raises(ModelError) as info:
            complete(client_for(server, api_key_env="MY_KEY"))
        assert server.request_count == 1  # not retried
    message = str(info.value)
    assert "$MY_KEY" in message and "HTTP 401" in message
    assert secret not in message and secret[:8] not in message


def test_right_key_is_sent(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_KEY", "sk-right")
    with StubServer(require_key="sk-right", reply="fine") as server:
        assert complete(client_for(server, api_key_env="MY_KEY")).text == "fine"


def test_unreachable_endpoint_is_a_clear_model_error() -> None:
    with StubServer() as server:
        url = server.base_url
    client = OpenAIClient("m", url, backoff_base_s=0.01, max_retries=1, request_timeout=2)
    with pytest.raises(ModelError, match=r"cannot connect.*is the server running\?"):
        complete(client)


def test_openai_without_key_says_which_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ModelError, match=r"set the environment variable OPENAI_API_KEY"):
        complete(OpenAIClient("gpt-4.1-mini"))


def test_bad_request_fails_only_the_episode() -> None:
    with StubServer() as server:
        server.fail_next(400)
        with pytest.raises(ModelRequestError, match="HTTP 400"):
            complete(client_for(server))


def test_cache_replays_without_calling_and_separates_samples(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "cache.sqlite"
    with StubServer(reply_fn=lambda m: f"reply {time.perf_counter_ns()}") as server:
        first = complete(client_for(server, cache=ResponseCache(path)), scope="ep1")
        again = complete(client_for(server, cache=ResponseCache(path)), scope="ep1")
        assert server.request_count == 1
        assert again.cached and again.text == first.text and again.usage.cached_calls == 1
        assert again.usage.prompt_tokens == first.usage.prompt_tokens
        other = [
            complete(client_for(server, cache=ResponseCache(path)), **kw)
            for kw in (
                {"scope": "ep2"},
                {"scope": "ep1", "repeat": 1},
                {"scope": "ep1", "sample": 1},
            )
        ]
        assert server.request_count == 4
    assert len({first.text, *(o.text for o in other)}) == 4
    assert len(ResponseCache(path)) == 4


def test_the_stubs_stats_say_when_the_first_and_latest_requests_arrived() -> None:
    """bench_runner splits a run's start-up from its steady rate with these timestamps."""
    import json
    import urllib.request

    def stats(server: StubServer) -> dict:
        with urllib.request.urlopen(f"{server.base_url}/stats", timeout=5) as response:
            return json.load(response)

    with StubServer(delay_s=0.05) as server:
        assert stats(server) == {
            "requests": 0,
            "first_request_at": None,
            "last_request_at": None,
            "max_in_flight": 0,
            "pid": os.getpid(),  # the stub runs in this process here; bench_ray reads its CPU
        }
        before = time.time()
        complete(client_for(server))
        one = stats(server)
        assert one["requests"] == 1 and before <= one["first_request_at"] == one["last_request_at"]
        complete(client_for(server), repeat=1)  # another cache key: a second request
        two = stats(server)
        assert two["requests"] == 2 and two["first_request_at"] == one["first_request_at"]
        assert two["last_request_at"] >= one["last_request_at"] + 0.05  # after the first reply
        assert two["last_request_at"] <= time.time()


@given(st.lists(st.lists(st.floats(-30, 0), min_size=1, max_size=20), min_size=1, max_size=30))
def test_token_entropy_is_the_mean_renormalised_top_k_entropy(positions: list[list[float]]) -> None:
    """Figure 8's action entropy (issue 44): each position's top-K renormalised, entropy in
    nats, averaged over the positions; bounded by ln K, 0 for a single candidate."""
    import math

    from exploreval.models._base import token_entropy

    content = [{"logprob": tops[0], "top_logprobs": [{"logprob": v} for v in tops]}
               for tops in positions]  # fmt: skip
    scored = token_entropy(content)
    assert scored is not None
    mean, count = scored
    assert count == len(positions)
    expected = []
    for tops in positions:
        probs = [math.exp(v) for v in tops]
        total = sum(probs)
        expected.append(-sum(p / total * math.log(p / total) for p in probs if p > 0))
    assert mean == pytest.approx(sum(expected) / len(expected), abs=1e-9)
    assert -1e-12 <= mean <= math.log(max(len(t) for t in positions)) + 1e-9


def test_token_entropy_of_uniform_and_of_nothing() -> None:
    import math

    from exploreval.models._base import token_entropy

    uniform = [{"top_logprobs": [{"logprob": math.log(0.25)}] * 4}]
    assert token_entropy(uniform) == (pytest.approx(math.log(4)), 1)
    assert token_entropy([{"top_logprobs": [{"logprob": 0.0}]}]) == (0.0, 1)
    assert token_entropy(None) is None and token_entropy([{"token": "x"}]) is None
