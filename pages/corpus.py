"""Corpus: browse a corpus's files, run an ad-hoc rg / ast-grep call, see the hits in the files, and
start a blueprint from the call."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from codesearch_core import corpora, studio
from codesearch_core.errors import CodesearchError
from codesearch_core.models import RunResult
from codesearch_core.studio import (
    Mark,
    Tone,
    file_tree,
    hit_windows,
    marked_window_html,
    render_lines_html,
)
from codesearch_core.tools import run_tool_call
from pages import _call_editor, _corpus_admin, _shared

_shared.ensure_routed()

#: The file open in the viewer, and the last ad-hoc search: {"corpus", "call", "result"}.
OPEN_FILE = "corpus_open_file"
LAST_SEARCH = "corpus_last_search"
MAX_TREE_ENTRIES = 400
ADHOC_TIMEOUT_S = 10.0
ADHOC_MAX_FINDINGS = 2000
CORPUS_PARAM = "corpus"
ADDRESSED = "corpus_addressed"  # the corpus this page last put in the address

st.title("Corpus")
_corpus_admin.added_message()
name = _shared.current_corpus()
# The corpus is in the address (issue 29), so a link, a reload or Back opens it. An address that
# names another corpus than this page last wrote came from outside: the sidebar picks it on a
# rerun (its widget is drawn already in this one).
addressed = st.query_params.get(CORPUS_PARAM)
new_address = addressed and addressed not in (name, st.session_state.get(ADDRESSED))
if new_address and addressed in corpora.list_corpora():
    st.session_state[ADDRESSED] = addressed
    st.session_state[_shared.CORPUS_ADDED] = addressed
    st.rerun()
st.session_state[ADDRESSED] = name
_shared.sync_params({CORPUS_PARAM: name})
_corpus_admin.add_corpus_form(expanded=name is None)
if name is None:
    st.info("There is no corpus to browse yet: add one above.", icon=":material/folder_off:")
    st.stop()


check = _corpus_admin.pinning_status(name)
# The check walked the folder already: its file list, not a second walk of 20,000 files.
files = corpora.visible_files(check.paths) if check else corpora.list_files(name)


def _line_text(corpus_name: str, path: str, line: int) -> str:
    try:
        lines = _shared.lines_of(corpus_name, path)
    except CodesearchError:
        return ""
    return lines[line - 1].strip()[:200] if 0 < line <= len(lines) else ""


# --- search -------------------------------------------------------------------------------------

with st.container(border=True):
    st.subheader("Search this corpus", anchor=False)
    last = st.session_state.get(LAST_SEARCH)
    result_for_corpus: RunResult | None = None
    if last and last["corpus"] == name:
        result_for_corpus = last["result"]
    # One editor per corpus, starting ast-grep on the corpus's own language (not the first in the
    # list: bug 7 of the review issue searched a JavaScript corpus as bash).
    form = _call_editor.call_editor(
        f"adhoc:{name}",
        last["call"] if last and last["corpus"] == name else None,
        default_language=corpora.main_language(files),  # the list above: no second walk
    )
    run_col, draft_col, _ = st.columns([1, 2, 4])
    # Never greyed by the form (see `explain_not_runnable`): the click commits what was typed.
    clicked = run_col.button("Run", type="primary", icon=":material/play_arrow:", key="adhoc_run")
    if clicked and form.parsed is None:
        _call_editor.explain_not_runnable(form)
    elif clicked and form.parsed is not None:
        with _shared.shown_errors("The call cannot run: "), st.spinner("Searching…"):
            result = run_tool_call(
                form.parsed,
                corpora.corpus_root(name),
                timeout_s=ADHOC_TIMEOUT_S,
                max_findings=ADHOC_MAX_FINDINGS,
            )
            st.session_state[LAST_SEARCH] = {"corpus": name, "call": form.call, "result": result}
            result_for_corpus = result
            if result.findings:
                # The viewer opens the first hit, not the file open before the search (issue 29).
                st.session_state[OPEN_FILE] = result.findings[0].path
                st.session_state.pop("corpus_picked_finding", None)
    if result_for_corpus is not None and draft_col.button(
        "Start a blueprint from this call", icon=":material/add_task:", key="adhoc_to_blueprint"
    ):
        call = st.session_state[LAST_SEARCH]["call"]
        draft = studio.draft_from_run(name, call, result_for_corpus.findings)
        _shared.go_to(_shared.PAGE_BLUEPRINTS, state={_shared.BLUEPRINT_DRAFT: draft})

hits_by_file: dict[str, list[Mark]] = {}
if result_for_corpus is not None:
    result = result_for_corpus
    if not result.ok:
        kind = result.error_kind.value if result.error_kind else "error"
        st.error(f"**{kind}**: {result.error}", icon=":material/error:")
    else:
        files_hit = sorted({f.path for f in result.findings})
        note = " (cut at the limit)" if result.truncated else ""
        if result.findings:
            st.success(
                f"{len(result.findings)} findings{note} in {len(files_hit)} files · "
                f"{result.elapsed_s * 1000:.0f} ms",
                icon=":material/search:",
            )
        else:  # nothing found is no success: most often a wrong language, glob or pattern
            st.warning(
                f"**No findings** ({result.elapsed_s * 1000:.0f} ms). Check the pattern, the "
                "language and the globs against the files below."
                + (
                    f"\n\nThe tool said: `{result.stderr.strip()[:400]}`"
                    if result.stderr.strip()
                    else ""
                )
                + "".join(f"\n\n{w}" for w in result.warnings),
                icon=":material/search_off:",
            )
        for f in result.findings:
            hits_by_file.setdefault(f.path, []).append(
                Mark(f.start_line, f.end_line, Tone.MATCH, f.start_col, f.end_col)
            )
        if result.findings:
            table = pd.DataFrame(
                [  # the whole first line of each hit: the matched text alone says little
                    {
                        "path": f.path,
                        "lines": f"{f.start_line}"
                        if f.start_line == f.end_line
                        else f"{f.start_line}-{f.end_line}",
                        "line": _line_text(name, f.path, f.start_line),
                    }
                    for f in result.findings
                ]
            )
            picked = st.dataframe(
                table, hide_index=True, on_select="rerun", selection_mode="single-row",
                key="adhoc_findings", height=min(38 + 35 * len(table), 300),
            )  # fmt: skip
            rows = picked.selection.rows if picked else []
            if rows:
                chosen = result.findings[rows[0]]
                # Open the file once per new pick, so browsing elsewhere is not pulled back.
                if st.session_state.get("corpus_picked_finding") != rows[0]:
                    st.session_state["corpus_picked_finding"] = rows[0]
                    st.session_state[OPEN_FILE] = chosen.path
                with _shared.shown_errors():
                    lines = _shared.lines_of(name, chosen.path)
                    mark = Mark(
                        chosen.start_line, chosen.end_line, Tone.MATCH,
                        chosen.start_col, chosen.end_col,
                    )  # fmt: skip
                    st.html(marked_window_html(lines, mark, context=6, title=chosen.path))
        if result.argv:
            with st.expander("Command line"):
                st.code(" ".join(result.argv), language="bash", wrap_lines=True)

# --- browse -------------------------------------------------------------------------------------

st.subheader("Files", anchor=False)
tree_col, view_col = st.columns([2, 5], gap="medium")
with tree_col:
    query = st.text_input(
        "Filter", placeholder="part of a path", key="corpus_filter", label_visibility="collapsed"
    )
    shown = [f for f in files if query.lower() in f.lower()] if query else files
    if hits_by_file and st.toggle("Only files with hits", key="corpus_only_hits"):
        shown = [f for f in shown if f in hits_by_file]
    entries = file_tree(shown[:MAX_TREE_ENTRIES])
    if len(shown) > MAX_TREE_ENTRIES:
        st.caption(f"Showing {MAX_TREE_ENTRIES} of {len(shown)} files: filter to narrow.")
    labels = {
        e.path: "\u2003" * e.depth
        + (f":material/folder: {e.name}" if e.is_dir else f":material/description: {e.name}")
        + (
            f" · {len(hits_by_file[e.path])} hit{'' if len(hits_by_file[e.path]) == 1 else 's'}"
            if e.path in hits_by_file
            else ""
        )
        for e in entries
    }
    options = list(labels)
    current = st.session_state.get(OPEN_FILE)
    if current not in labels:
        current = next((e.path for e in entries if not e.is_dir), None)
    with st.container(height=560, border=False):
        if options:
            picked_path = st.radio(
                "Files", options, index=options.index(current) if current in options else 0,
                format_func=labels.__getitem__, label_visibility="collapsed",
                key=f"corpus_tree:{name}:{query}:{current}",
            )  # fmt: skip
            st.session_state[OPEN_FILE] = picked_path
        else:
            st.caption("No file matches.")

with view_col:
    path = st.session_state.get(OPEN_FILE)
    if path and path.endswith("/"):
        inside = [f for f in files if f.startswith(path)]
        st.markdown(f"**{path}** · {len(inside)} files")
        st.dataframe(
            pd.DataFrame(
                {
                    "file": [f.removeprefix(path) for f in inside],
                    "language": [corpora.highlight_language(f) for f in inside],
                }
            ),
            hide_index=True,
        )
    elif path and studio.file_size(name, path) > corpora.MAX_READ_BYTES:
        with _shared.shown_errors():
            head, size = corpora.read_file_head(name, path)
            st.markdown(f"**{path}** · {size:,} bytes")
            st.info(
                f"Too large to show whole: the first {len(head.encode()):,} bytes "
                f"({head.count(chr(10)):,} lines) of {size:,}. Searches cover all of it.",
                icon=":material/content_cut:",
            )
            st.code(head, language=corpora.highlight_language(path), line_numbers=True, height=640)
    elif path:
        with _shared.shown_errors():
            lines = _shared.lines_of(name, path)
            marks = hits_by_file.get(path, [])
            language = corpora.highlight_language(path)
            encoding = corpora.file_encoding(name, path)
            st.markdown(
                f"**{path}** · {language} · {len(lines)} lines"
                + ("" if encoding == "UTF-8" else f" · {encoding}")
                + (f" · :orange[{len(marks)} hits]" if marks else "")
            )
            view = "Source"
            if marks:
                view = st.segmented_control(
                    "View", ["Hits", "Whole file, hits marked", "Source"], default="Hits",
                    key="corpus_view", required=True, label_visibility="collapsed",
                )  # fmt: skip
            if view == "Hits":
                for first, last in hit_windows(len(lines), marks, context=4):
                    st.html(
                        render_lines_html(lines[first - 1 : last], first_line=first, marks=marks)
                    )
            elif view == "Whole file, hits marked":
                st.html(render_lines_html(lines, marks=marks, max_height_px=640))
            else:
                st.code("\n".join(lines), language=language, line_numbers=True, height=640)
