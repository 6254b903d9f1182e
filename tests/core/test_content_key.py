"""``content_key``: a grouping key that must separate exactly what canonical JSON separates."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from exploreval.core import canonical_json, content_key

_leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),  # past 64 bits: the canonical JSON path
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=8),
)
_configs = st.recursive(
    _leaves,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=400)
@given(_configs, _configs)
def test_two_configs_share_a_content_key_exactly_when_their_canonical_json_is_equal(
    a: Any, b: Any
) -> None:
    """Agents and maps are grouped by ``content_key``: it must neither merge two configs that
    differ nor split two that are equal (key order, 1 against 1.0, big integers)."""
    assert (content_key(a) == content_key(b)) == (canonical_json(a) == canonical_json(b))


@given(st.dictionaries(st.text(max_size=4), _leaves, min_size=2, max_size=6))
def test_key_order_does_not_change_the_key(config: dict[str, Any]) -> None:
    reordered = dict(reversed(list(config.items())))
    assert content_key(reordered) == content_key(config)


@settings(max_examples=300)
@given(_configs)
def test_a_config_read_back_from_its_json_has_the_same_key(config: Any) -> None:
    """A config as a record stores it and as the log gives it back: one group, not two."""
    import json

    assert content_key(json.loads(canonical_json(config))) == content_key(config)
