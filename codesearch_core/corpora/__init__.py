"""Corpora and blueprints: finding a corpus and its files, reading and writing blueprint JSONL, and
the one bounded JSONL line reader every importer uses.

Public API: `corpus_root`, `list_corpora`, `list_files`, `read_file_text`, `file_encoding`, `language_for_path`,
`main_language` (`corpora.corpus`); `read_blueprints_jsonl`, `blueprint_from_dict`, `blueprint_to_dict`,
`check_expected_files` (`corpora.blueprints`); `check_seed_file`, `read_seed_file`, `pin_seed_file`,
`CATEGORY_TAGS`, `FLAG_TAGS` (`corpora.seed_rules`: the shipped seeds' extra rules); `open_jsonl`, `bounded_lines` (`corpora.jsonl_lines`).
Imports `tools` and below.
"""

from codesearch_core.corpora.blueprints import (
    blueprint_from_dict,
    blueprint_to_dict,
    check_expected_files,
    dumps_blueprints_jsonl,
    load_seed_blueprints,
    read_blueprints_jsonl,
)
from codesearch_core.corpora.corpus import (
    corpus_root,
    file_encoding,
    highlight_language,
    language_for_path,
    list_corpora,
    list_files,
    main_language,
    read_file_text,
)
from codesearch_core.corpora.jsonl_lines import bounded_lines, line_too_long, open_jsonl
from codesearch_core.corpora.seed_rules import (
    CATEGORY_TAGS,
    FIRST_LINE_MAX,
    FLAG_TAGS,
    KEYWORD_HIT,
    KEYWORD_SHARE,
    WEAK_ABOVE,
    check_seed_file,
    pin_seed_file,
    read_seed_file,
)

__all__ = [
    "CATEGORY_TAGS",
    "FIRST_LINE_MAX",
    "FLAG_TAGS",
    "KEYWORD_HIT",
    "KEYWORD_SHARE",
    "WEAK_ABOVE",
    "blueprint_from_dict",
    "blueprint_to_dict",
    "bounded_lines",
    "check_expected_files",
    "check_seed_file",
    "corpus_root",
    "dumps_blueprints_jsonl",
    "file_encoding",
    "highlight_language",
    "language_for_path",
    "line_too_long",
    "list_corpora",
    "list_files",
    "load_seed_blueprints",
    "main_language",
    "open_jsonl",
    "pin_seed_file",
    "read_blueprints_jsonl",
    "read_file_text",
    "read_seed_file",
]
