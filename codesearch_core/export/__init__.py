"""Exports of curated data for training: the formats (xLAM, chat SFT, DPO pairs) and the atomic
writers with their manifest.

Public API: `export` (one entry point for every format), `preview`, `ExportFormat`, `manifest_path`.
Imports `store`, `engines` (the prompt the chat formats carry) and below.
"""

from codesearch_core.export.writers import (
    EXPORT_RULE,
    ExportFormat,
    export,
    export_path,
    manifest_path,
    preview,
)

__all__ = [
    "EXPORT_RULE",
    "ExportFormat",
    "export",
    "export_path",
    "manifest_path",
    "preview",
]
