"""Run store: run directories, manifests, the append-only episode log, prompt blobs.

Names load on first use (``exploreval.core._lazy``), so importing the package is cheap."""

from typing import TYPE_CHECKING

from exploreval.core import lazy_exports

if TYPE_CHECKING:
    from exploreval.store._blobs import (
        BlobCollector,
        BlobStore,
        PromptBatch,
        content_hash,
    )
    from exploreval.store._columns import (
        COLUMNS_SCHEMA_VERSION,
        RunColumns,
        SyncStats,
        columns_cache_root,
        open_columns,
    )
    from exploreval.store._errors import (
        ColumnsRebuiltWarning,
        ReadOnlyRunWarning,
        RunNote,
        StoreError,
        UnreadableResultsWarning,
        describe_os_error,
    )
    from exploreval.store._import_common import (
        ImportSummary,
        LogImportError,
    )
    from exploreval.store._import_inspect import EXPLOREVAL_STORE_KEY
    from exploreval.store._import_logs import (
        IMPORT_FORMATS,
        detect_format,
        import_logs,
        read_logs,
    )
    from exploreval.store._lazy_records import ChainedRecords, LazyRecords
    from exploreval.store._run import (
        BLOBS,
        CACHE,
        EPISODES,
        MANIFEST,
        RESULTS,
        LogIssue,
        RunDir,
        RunManifest,
        RunStatus,
        list_runs,
        parse_log_line,
        unique_tmp,
        validation_issue,
        write_atomic,
    )

_EXPORTS: dict[str, str] = {
    "EXPLOREVAL_STORE_KEY": "._import_inspect",
    "COLUMNS_SCHEMA_VERSION": "._columns",
    "RunColumns": "._columns",
    "columns_cache_root": "._columns",
    "LazyRecords": "._lazy_records",
    "ChainedRecords": "._lazy_records",
    "SyncStats": "._columns",
    "open_columns": "._columns",
    "BLOBS": "._run",
    "BlobCollector": "._blobs",
    "BlobStore": "._blobs",
    "CACHE": "._run",
    "EPISODES": "._run",
    "IMPORT_FORMATS": "._import_logs",
    "ImportSummary": "._import_common",
    "LogImportError": "._import_common",
    "LogIssue": "._run",
    "parse_log_line": "._run",
    "validation_issue": "._run",
    "MANIFEST": "._run",
    "PromptBatch": "._blobs",
    "RESULTS": "._run",
    "RunDir": "._run",
    "RunManifest": "._run",
    "RunStatus": "._run",
    "ColumnsRebuiltWarning": "._errors",
    "ReadOnlyRunWarning": "._errors",
    "RunNote": "._errors",
    "UnreadableResultsWarning": "._errors",
    "StoreError": "._errors",
    "content_hash": "._blobs",
    "describe_os_error": "._errors",
    "detect_format": "._import_logs",
    "import_logs": "._import_logs",
    "list_runs": "._run",
    "unique_tmp": "._run",
    "write_atomic": "._run",
    "read_logs": "._import_logs",
}


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
__all__ = [
    "EXPLOREVAL_STORE_KEY",
    "COLUMNS_SCHEMA_VERSION",
    "RunColumns",
    "columns_cache_root",
    "SyncStats",
    "open_columns",
    "LazyRecords",
    "ChainedRecords",
    "BLOBS",
    "BlobCollector",
    "BlobStore",
    "CACHE",
    "EPISODES",
    "IMPORT_FORMATS",
    "ImportSummary",
    "LogImportError",
    "LogIssue",
    "parse_log_line",
    "validation_issue",
    "MANIFEST",
    "PromptBatch",
    "RESULTS",
    "RunDir",
    "RunManifest",
    "RunStatus",
    "ColumnsRebuiltWarning",
    "ReadOnlyRunWarning",
    "RunNote",
    "UnreadableResultsWarning",
    "StoreError",
    "content_hash",
    "describe_os_error",
    "detect_format",
    "import_logs",
    "list_runs",
    "unique_tmp",
    "write_atomic",
    "read_logs",
]
