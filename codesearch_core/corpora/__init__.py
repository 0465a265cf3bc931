"""Corpora and blueprints: finding a corpus and its files, reading and writing blueprint JSONL, and
the one bounded JSONL line reader every importer uses.

Public API: `corpus_root`, `list_corpora`, `list_files`, `read_file_text`, `read_file_lines`,
`text_lines`, `file_encoding`, `language_for_path`, `main_language`, `corpus_info`, `check_corpus`,
`current_snapshot`, `pin_corpus`, `AST_GREP_EXTENSIONS` (`corpora.corpus`);
`add_corpus` (`corpora.sources`: a pinned snapshot of a folder, git checkout, sdist or npm package);
`Manifest`, `read_manifest`, `short_id` (`corpora.snapshot`: manifests and snapshot ids); `read_blueprints_jsonl`, `blueprint_from_dict`, `blueprint_to_dict`,
`check_expected_files` (`corpora.blueprints`); `check_seed_file`, `read_seed_file`, `pin_seed_file`,
`CATEGORY_TAGS`, `FLAG_TAGS` (`corpora.seed_rules`: the shipped seeds' extra rules); `open_jsonl`, `bounded_lines` (`corpora.jsonl_lines`);
`SEED_SETS`, `load_seed_set`, `seed_files`, `describe_seed_set` (`corpora.seed_sets`: what
`--blueprints seeds` and `seeds-all` mean, everywhere).
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
    AST_GREP_EXTENSIONS,
    MAX_READ_BYTES,
    CorpusInfo,
    check_corpus,
    check_search_environment,
    corpus_info,
    corpus_root,
    current_snapshot,
    file_encoding,
    highlight_language,
    language_for_path,
    list_corpora,
    list_files,
    main_language,
    pin_corpus,
    read_file_head,
    read_file_lines,
    read_file_text,
    text_lines,
    visible_files,
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
from codesearch_core.corpora.seed_sets import (
    SEED_SETS,
    SEEDS,
    SEEDS_ALL,
    describe_seed_set,
    load_seed_set,
    seed_files,
)
from codesearch_core.corpora.snapshot import (
    MANIFEST_NAME,
    CheckResult,
    FileEntry,
    Manifest,
    read_manifest,
    short_id,
)
from codesearch_core.corpora.sources import (
    AddResult,
    add_corpus,
    max_corpus_bytes,
    remove_tree,
    sweep_staging,
)

__all__ = [
    "AST_GREP_EXTENSIONS",
    "CATEGORY_TAGS",
    "FIRST_LINE_MAX",
    "FLAG_TAGS",
    "KEYWORD_HIT",
    "KEYWORD_SHARE",
    "MANIFEST_NAME",
    "MAX_READ_BYTES",
    "SEEDS",
    "SEEDS_ALL",
    "SEED_SETS",
    "WEAK_ABOVE",
    "AddResult",
    "CheckResult",
    "CorpusInfo",
    "FileEntry",
    "Manifest",
    "add_corpus",
    "blueprint_from_dict",
    "blueprint_to_dict",
    "bounded_lines",
    "check_corpus",
    "check_expected_files",
    "check_search_environment",
    "check_seed_file",
    "corpus_info",
    "corpus_root",
    "current_snapshot",
    "describe_seed_set",
    "dumps_blueprints_jsonl",
    "file_encoding",
    "highlight_language",
    "language_for_path",
    "line_too_long",
    "list_corpora",
    "list_files",
    "load_seed_blueprints",
    "load_seed_set",
    "main_language",
    "max_corpus_bytes",
    "open_jsonl",
    "pin_corpus",
    "pin_seed_file",
    "read_blueprints_jsonl",
    "read_file_head",
    "read_file_lines",
    "read_file_text",
    "read_manifest",
    "read_seed_file",
    "remove_tree",
    "seed_files",
    "short_id",
    "sweep_staging",
    "text_lines",
    "visible_files",
]
