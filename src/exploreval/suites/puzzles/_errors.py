"""The puzzles' one error type, below every module that raises it."""

from __future__ import annotations


class PuzzleParamError(ValueError):
    """A preset or env option has the wrong type or range; the message names the field."""
