"""The view-models the app's pages call, one module per page concern, tested without Streamlit.

`studio.drafts` (blueprint authoring and uploads), `studio.review` (next item, findings diff,
re-running an edited call), `studio.propose` (engines into the store), `studio.diff` (the findings
diff rows), `studio.code` (code windows and marked lines as HTML), `studio.forms` (the tool-call
forms). The top of the library: imports every layer below, and nothing imports it but `pages/`.
"""

from codesearch_core.studio.code import (
    Mark,
    Tone,
    file_mtime_ns,
    file_tree,
    hit_windows,
    marked_window_html,
    render_lines_html,
)
from codesearch_core.studio.diff import Change, FindingStatus, call_diff
from codesearch_core.studio.drafts import (
    EXPECTED_COLUMNS,
    BlueprintDraft,
    add_expected_span,
    blueprint_from_draft,
    check_upload,
    draft_from_blueprint,
    draft_from_run,
    expected_table,
    infer_language,
    parse_tags,
    spans_from_table,
    suggest_blueprint_id,
)
from codesearch_core.studio.forms import (
    AstGrepForm,
    FieldKind,
    FormField,
    FormResult,
    ast_grep_form_of,
    build_call,
    call_from_json_text,
    form_fields,
    form_values,
)
from codesearch_core.studio.propose import (
    ProposeProgress,
    accepted_examples,
    all_blueprints,
    probe_openai_server,
    propose_into_store,
)
from codesearch_core.studio.review import (
    EDIT_ENGINE,
    REJECT_REASONS,
    finding_rows_for,
    next_item_id,
    rerun_edited,
)

__all__ = [
    "EDIT_ENGINE",
    "EXPECTED_COLUMNS",
    "REJECT_REASONS",
    "AstGrepForm",
    "BlueprintDraft",
    "Change",
    "FieldKind",
    "FindingStatus",
    "FormField",
    "FormResult",
    "Mark",
    "ProposeProgress",
    "Tone",
    "accepted_examples",
    "add_expected_span",
    "all_blueprints",
    "ast_grep_form_of",
    "blueprint_from_draft",
    "build_call",
    "call_diff",
    "call_from_json_text",
    "check_upload",
    "draft_from_blueprint",
    "draft_from_run",
    "expected_table",
    "file_mtime_ns",
    "file_tree",
    "finding_rows_for",
    "form_fields",
    "form_values",
    "hit_windows",
    "infer_language",
    "marked_window_html",
    "next_item_id",
    "parse_tags",
    "probe_openai_server",
    "propose_into_store",
    "render_lines_html",
    "rerun_edited",
    "spans_from_table",
    "suggest_blueprint_id",
]
