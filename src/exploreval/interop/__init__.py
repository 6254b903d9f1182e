"""Working with other tools both ways: inspect_ai (export runs as logs ``inspect view`` opens;
run exploreval's environments from ``inspect eval``). Reading other tools' logs is
``exploreval.store``'s import. Everything here needs the ``[inspect]`` extra and says so."""

from typing import TYPE_CHECKING

from exploreval.core import lazy_exports

if TYPE_CHECKING:
    from exploreval.interop._inspect_export import export_inspect
    from exploreval.interop._inspect_model import InspectModelClient

_EXPORTS: dict[str, str] = {
    "export_inspect": "._inspect_export",
    "InspectModelClient": "._inspect_model",
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())

__all__ = ["InspectModelClient", "export_inspect"]
