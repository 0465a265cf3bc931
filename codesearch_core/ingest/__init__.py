"""Loading data into the store: blueprint and proposal JSONL files (whole-file validation, then one
write) and the shipped seeds on first start.

Public API: `import_blueprints_jsonl`, `import_proposals_jsonl`, `corpus_check_errors`
(`ingest.jsonl`); `ensure_seeded`
(`ingest.seeds`). Sits above `store` and `engines` (a proposals file is parsed by the import
engine).
"""

from codesearch_core.ingest.jsonl import (
    corpus_check_errors,
    import_blueprints_jsonl,
    import_proposals_jsonl,
)
from codesearch_core.ingest.seeds import ensure_seeded

__all__ = [
    "corpus_check_errors",
    "ensure_seeded",
    "import_blueprints_jsonl",
    "import_proposals_jsonl",
]
