"""Errors of the terminal suite's task side."""

from __future__ import annotations


class TaskFormatError(ValueError):
    """A task folder (or one of its files) is not in a layout we can load; names file and field."""


class SandboxError(RuntimeError):
    """The sandbox could not do what was asked (it died, a command timed out...)."""
