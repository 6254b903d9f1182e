"""The episode viewer: an index of a run's episodes, a local server, and a static bundle.

``exploreval view RUN_DIR`` serves it; ``write_viewer_bundle(run_dirs, out_dir)`` writes the same
page as plain files (the HTML report puts one at ``<report_dir>/viewer/`` and links to
``viewer/index.html#/run/<run_id>/episode/<episode_id>``). What each step shows beyond the record
itself (pictures, per-step metrics) is what suites register in ``exploreval.report``.

Names load on first use, so ``import exploreval.viewer`` is cheap.
"""

from typing import TYPE_CHECKING

from exploreval.core import lazy_exports

if TYPE_CHECKING:
    from exploreval.viewer._data import PromptReader, episode_payload
    from exploreval.viewer._episode_index import INDEX_DIR, EpisodeIndex
    from exploreval.viewer._index import index_from_records, load_index, refresh_index
    from exploreval.viewer._server import (
        ViewerRuns,
        ViewerServer,
        episode_link,
        list_link,
        write_records_bundle,
        write_viewer_bundle,
    )

_EXPORTS: dict[str, str] = {
    "INDEX_DIR": "._episode_index",
    "EpisodeIndex": "._episode_index",
    "PromptReader": "._data",
    "ViewerRuns": "._server",
    "ViewerServer": "._server",
    "episode_link": "._server",
    "episode_payload": "._data",
    "list_link": "._server",
    "index_from_records": "._index",
    "load_index": "._index",
    "refresh_index": "._index",
    "write_records_bundle": "._server",
    "write_viewer_bundle": "._server",
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
__all__ = [
    "INDEX_DIR",
    "EpisodeIndex",
    "PromptReader",
    "ViewerRuns",
    "ViewerServer",
    "episode_link",
    "episode_payload",
    "list_link",
    "index_from_records",
    "load_index",
    "refresh_index",
    "write_records_bundle",
    "write_viewer_bundle",
]
