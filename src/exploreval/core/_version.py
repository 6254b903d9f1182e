"""The installed package's version, in core so that every layer can read it without importing
the root package (whose front door names the layers above: ``exploreval.__version__`` is this)."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

try:
    VERSION = version("exploreval")
except PackageNotFoundError:  # pragma: no cover - running from a source tree
    VERSION = "0.0.0"
