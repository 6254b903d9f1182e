"""Cache rows filed under their episode, and the cache a cluster worker plays from: what the
Ray executor relies on so that a resumed episode pays for no call twice."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from exploreval.models import CALL_EPISODE, Completion, ResponseCache, TransitCache


def _in_episode(episode: str | None, cache: ResponseCache | TransitCache, key: str) -> None:
    token = CALL_EPISODE.set(episode)
    try:
        cache.put(key, "m", Completion(text=f"reply {key}", cached=True, retries=2))
    finally:
        CALL_EPISODE.reset(token)


def test_rows_are_filed_under_the_episode_that_made_them(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "cache.sqlite")
    _in_episode("e1", cache, "k1")
    _in_episode("e1", cache, "k2")
    _in_episode("e2", cache, "k3")
    _in_episode(None, cache, "k4")  # a call outside any episode (a judge run by hand)
    assert cache.episodes() == {"e1", "e2"}
    assert sorted(row[0] for row in cache.rows_for("e1")) == ["k1", "k2"]
    (row,) = cache.rows_for("e2")
    stored = Completion.model_validate_json(row[2])
    # stored as a fresh answer: not "cached", no retries (what a replay reports is its own)
    assert stored.text == "reply k3" and not stored.cached and stored.retries == 0
    cache.close()


def test_a_cache_from_before_the_episode_column_is_upgraded_in_place(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    with sqlite3.connect(path) as db:
        db.execute(
            "CREATE TABLE responses (key TEXT PRIMARY KEY, model TEXT NOT NULL, "
            "created REAL NOT NULL DEFAULT 0, completion TEXT NOT NULL)"
        )
        db.execute(
            "INSERT INTO responses (key, model, completion) VALUES (?, ?, ?)",
            ("old", "m", Completion(text="kept").model_dump_json()),
        )
    cache = ResponseCache(path)
    hit = cache.get("old")
    assert hit is not None and hit.text == "kept"  # old rows still answer
    assert cache.episodes() == set()  # but belong to no episode
    _in_episode("e1", cache, "new")
    assert [r[0] for r in cache.rows_for("e1")] == ["new"]
    cache.close()
    assert ResponseCache(path).rows_for("e1")  # a second open leaves the column as it is


def test_a_transit_cache_answers_seeded_rows_and_hands_back_only_new_ones() -> None:
    driver_rows = [("k1", "m", Completion(text="paid").model_dump_json(), "e1")]
    transit = TransitCache()
    transit.seed(driver_rows)
    hit = transit.get("k1")
    assert hit is not None and hit.text == "paid" and transit.hits == 1
    assert transit.get("k2") is None and transit.misses == 1

    async def two_episodes() -> None:
        async def episode(name: str, keys: list[str]) -> None:
            CALL_EPISODE.set(name)  # each asyncio task has its own context
            for key in keys:
                await asyncio.sleep(0)
                transit.put(key, "m", Completion(text=key))

        await asyncio.gather(episode("e1", ["a", "b"]), episode("e2", ["c"]))

    asyncio.run(two_episodes())
    assert sorted(r[0] for r in transit.take("e1")) == ["a", "b"]
    assert transit.take("e1") == []  # taken once
    assert [r[0] for r in transit.take()] == ["c"]  # everything else, whoever made it
    transit.forget("e1")
    assert transit.get("a") is None and transit.get("k1") is None  # e1's rows are gone
    assert transit.get("c") is not None  # e2's stay until it is forgotten


@given(st.lists(st.tuples(st.sampled_from(["e1", "e2", "e3"]), st.text(min_size=1)), max_size=30))
def test_what_a_worker_hands_back_rebuilds_the_cache_it_made(calls: list[tuple[str, str]]) -> None:
    """Taking rows episode by episode loses none and duplicates none."""
    transit = TransitCache()
    for episode, key in calls:
        token = CALL_EPISODE.set(episode)
        transit.put(key, "m", Completion(text=key))
        CALL_EPISODE.reset(token)
    taken = [row for e in ("e1", "e2") for row in transit.take(e)] + transit.take()
    assert sorted((r[3], r[0]) for r in taken) == sorted(calls)
    assert transit.take() == []
