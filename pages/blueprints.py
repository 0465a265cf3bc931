"""Blueprints: list, filter and search them; author or edit one (intent, reference call, expected
findings, tags, difficulty); import and export blueprint JSONL."""

from __future__ import annotations

from dataclasses import replace

import pandas as pd
import streamlit as st

from codesearch_core import corpora, studio
from codesearch_core.access import Action
from codesearch_core.corpora import dumps_blueprints_jsonl
from codesearch_core.errors import CodesearchError
from codesearch_core.models import Difficulty, Split, ToolName
from codesearch_core.store import BlueprintFilters
from codesearch_core.studio import Mark, Tone, marked_window_html
from codesearch_core.tools import run_tool_call
from pages import _call_editor, _drafts_queue, _shared

_shared.ensure_routed()

WORKING = "bp_working"  # the BlueprintDraft being edited
VERSION = "bp_version"  # bumped when another draft is loaded: editor widgets start afresh
TABLE = "bp_expected_table"  # the rows the expected-findings editor started from
PAGE_SIZE = 100
ANY = "any"
RUN_TIMEOUT_S = 10.0
RUN_MAX_FINDINGS = 2000

TABLE_COLUMNS = ("id", "intent", "corpus", "language", "tool", "expected", "tags", "difficulty",
                 "split")  # fmt: skip
store = _shared.get_store()
st.title("Blueprints")


def _load(draft: studio.BlueprintDraft | None) -> None:
    st.session_state[WORKING] = draft
    st.session_state[VERSION] = int(st.session_state.get(VERSION, 0)) + 1
    st.session_state[TABLE] = (
        studio.expected_table(draft.found, draft.expected, draft.corpus)
        if draft is not None
        else []
    )


incoming = st.session_state.pop(_shared.BLUEPRINT_DRAFT, None)
if incoming is not None:
    _load(incoming)

# --- list ---------------------------------------------------------------------------------------

with st.container(border=True):
    f1, f2, f3, f4, f5, f6 = st.columns([3, 1, 1, 1, 1, 1])
    text = f1.text_input(
        "Search", placeholder="words of the intent, pattern or notes, or an id", key="bpf:text"
    )
    corpus_name = f2.selectbox("Corpus", [ANY, *corpora.list_corpora()], key="bpf:corpus")
    tool = f3.selectbox("Tool", [ANY, *(t.value for t in ToolName)], key="bpf:tool")
    language = f4.text_input("Language", key="bpf:language", placeholder="any")
    tag = f5.text_input("Tag", key="bpf:tag", placeholder="any")
    difficulty = f6.selectbox("Difficulty", [ANY, *(d.value for d in Difficulty)], key="bpf:diff")
    filters = BlueprintFilters(
        text=text.strip() or None,
        corpus=None if corpus_name == ANY else corpus_name,
        tool=None if tool == ANY else tool,
        language=language.strip() or None,
        tag=tag.strip() or None,
        difficulty=None if difficulty == ANY else difficulty,
    )
    first = store.blueprints.list(filters, limit=0)
    pages = max(1, -(-first.total // PAGE_SIZE))
    page_no = 1
    if pages > 1:
        page_no = int(st.number_input(f"Page (of {pages})", 1, pages, 1, key="bpf:page"))
    listing = store.blueprints.list(filters, offset=(page_no - 1) * PAGE_SIZE, limit=PAGE_SIZE)
    table = pd.DataFrame(
        [
            {
                "id": bp.id,
                "intent": bp.intent,
                "corpus": bp.corpus,
                "language": bp.language,
                "tool": bp.tool.value,
                "expected": len(bp.expected),
                "tags": ", ".join(bp.tags),
                "difficulty": bp.difficulty.value,
                "split": bp.split.value,
            }
            for bp in listing.items
        ],
        columns=[*TABLE_COLUMNS],
    )
    st.caption(
        f"{studio.plural(first.total, 'blueprint')} match · select rows to edit one or propose for several"
    )
    picked = st.dataframe(
        table,
        hide_index=True,
        on_select="rerun",
        selection_mode="multi-row",
        key="bp_table",
        height=300,
        column_config={
            "intent": st.column_config.TextColumn(width="large"),
            "expected": st.column_config.NumberColumn(help="expected findings"),
        },
    )
    selected = [listing.items[i] for i in (picked.selection.rows if picked else [])]
    a1, a2, a3, a4 = st.columns(4)
    if a1.button("New blueprint", icon=":material/add:", width="stretch", key="bp_new"):
        name = _shared.current_corpus() or (corpora.list_corpora() or [""])[0]
        _load(studio.BlueprintDraft(corpus=name, call={}))
    if a2.button(
        "Edit selected",
        key="bp_edit",
        icon=":material/edit:",
        disabled=len(selected) != 1,
        width="stretch",
        help="Select exactly one row.",
    ):
        _load(studio.draft_from_blueprint(selected[0]))
    if a3.button(
        f"Propose for {len(selected)} selected" if selected else "Propose for selected",
        key="bp_propose_selected",
        icon=":material/auto_awesome:",
        disabled=not selected,
        width="stretch",
    ):
        _shared.go_to(
            _shared.PAGE_PROPOSE, state={_shared.PROPOSE_SELECTION: [b.id for b in selected]}
        )
    a4.download_button(
        "Download JSONL",
        data=lambda: dumps_blueprints_jsonl(
            store.blueprints.list(filters, limit=max(first.total, 1)).items
        ),
        file_name="blueprints.jsonl",
        mime="application/jsonl",
        icon=":material/download:",
        width="stretch",
        help="Every blueprint that matches the filters.",
    )

with st.expander("Import blueprints JSONL", icon=":material/upload:"):
    upload = st.file_uploader("Blueprints JSONL", type=["jsonl", "json", "txt"], key="bp_upload",
                              max_upload_size=_shared.max_upload_mb())  # fmt: skip
    if upload is not None and st.button("Import", key="bp_import", icon=":material/upload:"):
        with _shared.shown_errors("Nothing was imported: "):
            blueprints, errors = studio.check_upload(upload.getvalue(), upload.name)
            if errors:
                st.error(
                    f"**Nothing was imported**: {len(errors)} bad lines in `{upload.name}`. "
                    "Fix them and upload again.\n\n"
                    + "\n".join(f"- line {e.line}: {e.detail}" for e in errors[:50]),
                    icon=":material/error:",
                )
            else:
                report = store.blueprints.add(blueprints, source=f"upload:{upload.name}")
                st.success(
                    f"Imported {report.new} new blueprints ({report.existing} already stored)."
                )

# --- editor -------------------------------------------------------------------------------------

draft: studio.BlueprintDraft | None = st.session_state.get(WORKING)
if draft is None:
    st.info("Select a row and **Edit selected**, start a **New blueprint**, or start one from a "
            "search on the Corpus page.", icon=":material/info:")  # fmt: skip
    st.stop()

v = st.session_state[VERSION]
title = f"Editing `{draft.editing}`" if draft.editing else "New blueprint"
st.subheader(title, anchor=False)
_drafts_queue.provenance_box(store, draft.editing)
with st.container(border=True):
    names = corpora.list_corpora()
    # Difficulty's three choices need the room: at [2, 1, 1, 1] "hard" was clipped to "ha".
    c1, c2, c3, c4 = st.columns([1.6, 1.1, 1.7, 1.2])
    bp_id = c1.text_input(
        "Id", value=draft.id, key=f"bp:{v}:id", placeholder="left empty: made from the intent",
        help="A slug: letters, digits, dots, dashes and underscores.",
    )  # fmt: skip
    bp_corpus = c2.selectbox(
        "Corpus", names, index=names.index(draft.corpus) if draft.corpus in names else 0,
        key=f"bp:{v}:corpus",
    )  # fmt: skip
    difficulty_value = c3.segmented_control(
        "Difficulty", [d.value for d in Difficulty], default=draft.difficulty.value,
        key=f"bp:{v}:difficulty", required=True,
    )  # fmt: skip
    split_value = c4.segmented_control(
        "Split", [s.value for s in Split], default=draft.split.value, key=f"bp:{v}:split",
        required=True, help="eval: held out of every export (unless asked) and scored by "
        "`codesearch eval --blueprints split:eval`",
    )  # fmt: skip
    intent = st.text_area(
        "Intent", value=draft.intent, key=f"bp:{v}:intent", height=90,
        placeholder="What the user asks for, in their words: e.g. Find every useEffect call in "
        "the React components; mentions in comments do not count.",
    )  # fmt: skip
    if intent.strip():
        st.session_state[f"bp:{v}:intent_typed"] = True
    if not intent.strip() and (draft.editing or st.session_state.get(f"bp:{v}:intent_typed")):
        # Only once there was an intent to empty: red on a form nobody has touched is noise
        # (issue 29). Save still refuses an empty intent with its own message.
        st.caption(":red[The intent must not be empty.]")

    st.markdown("**Reference call**")
    form = _call_editor.call_editor(
        f"bp_call:{v}", draft.call or None, default_language=draft.language or None
    )
    run_col, info_col = st.columns([1, 4])
    # Never greyed by the form (see `explain_not_runnable`): the click commits what was typed.
    run_clicked = run_col.button("Run it", icon=":material/play_arrow:", key="bp_run",
                                 type="primary")  # fmt: skip
    if run_clicked and form.parsed is None:
        _call_editor.explain_not_runnable(form)
    elif run_clicked and form.parsed is not None:
        with _shared.shown_errors("The call cannot run: "):
            result = run_tool_call(
                form.parsed, corpora.corpus_root(bp_corpus),
                timeout_s=RUN_TIMEOUT_S, max_findings=RUN_MAX_FINDINGS,
            )  # fmt: skip
            if not result.ok:
                kind = result.error_kind.value if result.error_kind else "error"
                st.error(f"**{kind}**: {result.error}", icon=":material/error:")
            else:
                for warning in result.warnings:
                    st.warning(f"**Pattern**: {warning}", icon=":material/warning:")
                first_run = not draft.found and not draft.expected
                # A first run ticks everything it found; later runs keep the author's choice.
                expected = (
                    tuple(dict.fromkeys(f.span for f in result.findings))
                    if first_run
                    else draft.expected
                )
                draft = replace(draft, found=result.findings, expected=expected, call=form.call)
                st.session_state[WORKING] = draft
                st.session_state[TABLE] = studio.expected_table(
                    draft.found, draft.expected, draft.corpus
                )
                st.session_state["bp_table_version"] = (
                    st.session_state.get("bp_table_version", 0) + 1
                )
                info_col.success(f"{len(result.findings)} findings in "
                                 f"{len({f.path for f in result.findings})} files.")  # fmt: skip

    st.markdown(
        "**Expected findings** · tick what the call must find; *supporting*: context the "
        "grade neither requires nor penalises"
    )
    base = st.session_state.get(TABLE) or []
    edited = st.data_editor(
        pd.DataFrame(base, columns=list(studio.EXPECTED_COLUMNS)),
        hide_index=True,
        disabled=["path", "lines", "text", "source"],
        column_config={
            "expected": st.column_config.CheckboxColumn(width="small"),
            "supporting": st.column_config.CheckboxColumn(
                width="small", help="context, not the answer: neither required nor penalised"
            ),
            "text": st.column_config.TextColumn(width="large"),
            "source": st.column_config.TextColumn(help="found by the last run, or added by hand"),
        },
        key=f"bp_expected:{v}:{st.session_state.get('bp_table_version', 0)}",
        height=min(38 + 35 * max(len(base), 1), 320),
    )
    expected_spans = draft.expected
    with _shared.shown_errors():
        expected_spans = studio.spans_from_table(edited.to_dict("records"))
    if not base:
        st.caption("Run the call to list its findings, or add spans by hand below.")
    m1, m2, m3 = st.columns([3, 1, 1])
    files = corpora.list_files(bp_corpus)
    add_path = m1.selectbox("Add a span the call misses: file", files, index=None,
                            key=f"bp:{v}:add_path", placeholder="file")  # fmt: skip
    add_lines = m2.text_input("Lines", key=f"bp:{v}:add_lines", placeholder="12 or 12-15")
    m3.markdown("<div style='height:28px'></div>", unsafe_allow_html=True)
    if m3.button(
        "Add span", icon=":material/add:", disabled=not add_path or not add_lines.strip(),
        key="bp_add_span",
    ):  # fmt: skip
        with _shared.shown_errors():
            draft = studio.add_expected_span(
                replace(draft, corpus=bp_corpus, expected=expected_spans), add_path or "", add_lines
            )
            st.session_state[WORKING] = draft
            st.session_state[TABLE] = studio.expected_table(
                draft.found, draft.expected, draft.corpus
            )
            st.session_state["bp_table_version"] = st.session_state.get("bp_table_version", 0) + 1
            st.rerun()

    if expected_spans:
        with st.expander(f"Preview the {len(expected_spans)} expected spans in the code"):
            for span in expected_spans[:20]:
                with _shared.shown_errors():
                    lines = _shared.lines_of(bp_corpus, span.path)
                    mark = Mark(span.start_line, span.end_line, Tone.HIT)
                    title_line = f"{span.path} · L{span.start_line}-{span.end_line}"
                    st.html(marked_window_html(lines, mark, max_lines=20, title=title_line))

    t1, t2 = st.columns([1, 2])
    # The language follows the call and its findings until the author types one.
    language_key, auto_key = f"bp:{v}:language", f"bp:{v}:language_auto"
    inferred = studio.infer_language(form.call, draft.found)
    if language_key not in st.session_state:
        st.session_state[language_key] = draft.language or inferred
        st.session_state[auto_key] = "" if draft.language else inferred
    elif st.session_state[language_key] == st.session_state.get(auto_key):
        st.session_state[language_key] = st.session_state[auto_key] = inferred
    bp_language = t1.text_input(
        "Language", key=language_key, help="ast-grep's name for it (python, tsx, go, ...), or text."
    )
    tags_text = t2.text_input(
        "Tags", value=", ".join(draft.tags), key=f"bp:{v}:tags",
        placeholder="comma separated, e.g. react, adversarial:structure-vs-text",
    )  # fmt: skip
    notes = st.text_area("Notes", value=draft.notes, key=f"bp:{v}:notes", height=68)
    if draft.plan is not None:
        earlier = draft.plan.steps[:-1]
        st.caption(f"The reference is a plan of {len(draft.plan.steps)} steps; the call above is "
                   "its last step. The earlier steps are kept as they are:")  # fmt: skip
        for i, step in enumerate(earlier, start=1):
            st.code(f"step {i}: {step.call.to_json()}", language="json", wrap_lines=True)
    if draft.counter_calls:
        # Written in the seed file by the blueprint's author; `codesearch seeds audit` runs them.
        with st.expander(f"Counter-calls ({len(draft.counter_calls)}): the natural wrong calls",
                         icon=":material/block:"):  # fmt: skip
            for counter in draft.counter_calls:
                st.markdown(f"- {counter.why}")
                st.code(counter.call.to_json(), language="json", wrap_lines=True)

    draft = replace(
        draft,
        id=bp_id,
        corpus=bp_corpus,
        intent=intent,
        call=form.call,
        expected=expected_spans,
        language=bp_language,
        tags=studio.parse_tags(tags_text),
        difficulty=Difficulty(difficulty_value or Difficulty.MEDIUM.value),
        notes=notes,
        split=Split(split_value or Split.TRAIN.value),
    )
    st.session_state[WORKING] = draft

    s1, s2, _ = st.columns([1, 1, 3])
    # Anyone may author a new blueprint; changing a stored one takes a lead (the store checks too).
    stored = bool(draft.id.strip()) and store.blueprints.get(draft.id.strip()) is not None
    not_lead = _shared.denial(Action.EDIT_BLUEPRINTS) if stored else None
    if not_lead:
        st.caption(f"Read only: {not_lead}.")
    if s1.button("Save", type="primary", icon=":material/save:", key="bp_save",
                 disabled=form.parsed is None or bool(not_lead), help=not_lead,
                 shortcut="Ctrl+S"):  # fmt: skip
        try:
            if not draft.id.strip():
                draft = replace(
                    draft,
                    id=studio.suggest_blueprint_id(
                        draft.corpus, draft.intent, lambda i: store.blueprints.get(i) is not None
                    ),
                )
            blueprint = studio.blueprint_from_draft(draft)
            outcome = store.blueprints.upsert(blueprint)
        except CodesearchError as err:
            st.error(f"Not saved: {err}", icon=":material/error:")
        else:
            _load(replace(studio.draft_from_blueprint(blueprint), found=draft.found))
            st.session_state["bp_saved"] = f"Blueprint `{blueprint.id}` {outcome}."
            st.rerun()
    if s2.button("Close editor", icon=":material/close:", key="bp_close"):
        _load(None)
        st.rerun()
    if saved := st.session_state.pop("bp_saved", None):
        st.success(saved, icon=":material/check_circle:")
