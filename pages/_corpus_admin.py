"""The Corpus page's corpus management: the "Add a corpus" form (with progress while it fetches
and hashes) and the pinned snapshot's status (a folder edited by hand after pinning is named)."""

from __future__ import annotations

import time
from typing import Final

import streamlit as st

from codesearch_core import corpora, studio
from codesearch_core.access import Action
from codesearch_core.corpora import CheckResult, CorpusInfo
from codesearch_core.errors import CodesearchError
from codesearch_core.tools import tool_versions_json
from pages import _shared

#: How long the page trusts its last check of a corpus against its manifest (the core also skips
#: hashing while no file's stat changed; this saves the stat walk of a 20,000-file corpus).
CHECK_TTL_S: Final = 30
_STAGES: Final = {"fetch": "Fetching", "copy": "Copying files", "hash": "Hashing files"}
MAX_DIFF_LINES: Final = 50
ADDED_MESSAGE: Final = "corpus_added_message"


@st.cache_data(show_spinner=False, ttl=CHECK_TTL_S, max_entries=64)
def _check(name: str, nonce: int) -> CheckResult:
    del nonce  # the "Check now" button's counter: a new value checks again
    return corpora.check_corpus(name)


@st.cache_data(show_spinner=False, ttl=CHECK_TTL_S, max_entries=64)
def _info(name: str, nonce: int) -> CorpusInfo:
    del nonce
    return corpora.corpus_info(name)


def add_corpus_form(*, expanded: bool) -> None:
    """The "Add a corpus" form: a name and a source; progress while it runs; a clear error."""
    refused = _shared.denial(Action.MANAGE_CORPORA)
    with st.expander("Add a corpus", icon=":material/create_new_folder:", expanded=expanded):
        st.caption(
            "A pinned, read-only snapshot of a folder (as a checkout has it: `.gitignore` applies), "
            "`git:PATH@REV`, `pypi:NAME==VERSION` (the sdist) or `npm:NAME@VERSION`. "
            f"At most {studio.human_size(corpora.max_corpus_bytes())} (CODESEARCH_CORPUS_MAX_BYTES)."
        )
        with st.form("add_corpus", border=False):
            name = st.text_input("Name", placeholder="click", key="add_corpus_name")
            source = st.text_input(
                "Source", placeholder="pypi:click==8.1.7", key="add_corpus_source"
            )
            replace = st.checkbox("Replace a corpus of that name", key="add_corpus_replace")
            submitted = st.form_submit_button(
                "Add", type="primary", icon=":material/add:", disabled=refused is not None,
                help=refused,
            )  # fmt: skip
    # Progress and errors below the expander, not in it: a rerun may fold it, hiding them.
    if submitted:
        _add(name.strip(), source.strip(), replace)


def _add(name: str, source: str, replace: bool) -> None:
    if not name or not source:
        st.error("Give the corpus a name and a source.", icon=":material/error:")
        return
    if not replace and name in corpora.list_corpora():
        # Said in the page's words: the store's own refusal names the CLI's --replace flag.
        st.error(f"Not added: a corpus named **{name}** exists already. Tick **Replace a corpus "
                 "of that name** to replace it.", icon=":material/error:")  # fmt: skip
        return
    bar = st.progress(0.0, text="Starting…")
    last = [0.0]

    def progress(stage: str, done: int, total: int) -> None:
        now = time.monotonic()
        if now - last[0] < 0.2 and done != total:
            return  # one redraw per 0.2 s: hashing 20,000 files must not send 20,000 messages
        last[0] = now
        share = done / total if total else 0.0
        counted = f" {done:,} of {total:,}" if total else "…"
        bar.progress(min(share, 1.0), text=f"{_STAGES[stage]}{counted}")

    try:
        with st.spinner(f"Adding {name} from {source}…"):
            result = corpora.add_corpus(name, source, replace=replace, progress=progress)
    except CodesearchError as err:
        bar.empty()
        st.error(f"Not added: {err}", icon=":material/error:")
        return
    bar.empty()
    m = result.manifest
    skipped = f"; {result.skipped_symlinks} symlink(s) left out" if result.skipped_symlinks else ""
    st.session_state[ADDED_MESSAGE] = (
        f"Added **{name}**: {len(m.files):,} files, {studio.human_size(m.total_bytes)}, snapshot "
        f"`{corpora.short_id(m.snapshot_id)}`{skipped}."
    )
    st.session_state[_shared.CORPUS_ADDED] = name  # the sidebar picks it on the next run
    st.session_state["corpus_check_nonce"] = st.session_state.get("corpus_check_nonce", 0) + 1
    st.rerun()


def added_message() -> None:
    """The last add's outcome, shown once after the rerun that opened the new corpus."""
    if message := st.session_state.pop(ADDED_MESSAGE, None):
        st.success(message, icon=":material/check_circle:")


def _stale_blueprints(name: str, content_id: str) -> None:
    """Blueprints of this corpus whose spans were checked on another snapshot or tool version."""
    versions = tool_versions_json()
    stale = _shared.get_store().drift.stale_references({name: content_id}, versions)
    if stale:
        ids = ", ".join(f"`{bp.id}`" for bp in stale[:20]) + (" …" if len(stale) > 20 else "")
        st.warning(
            f"**{len(stale)} blueprint(s)** of this corpus were written against another snapshot "
            f"or tool version: {ids}. `codesearch verify --stale` re-checks them (changed ones go "
            "to the Drift queue on the Review page).",
            icon=":material/history:",
        )


def pinning_status(name: str) -> CheckResult | None:
    """The corpus's snapshot, and whether its folder still matches it; the check (None when the
    manifest cannot be read)."""
    nonce = int(st.session_state.get("corpus_check_nonce", 0))
    check: CheckResult | None = None
    with _shared.shown_errors("The corpus's manifest cannot be read: "):
        info = _info(name, nonce)
        check = _check(name, nonce)
        pinned = (
            f"snapshot `{corpora.short_id(info.snapshot_id)}`"
            + (f" from `{info.source}`" if info.source else "")
            if info.snapshot_id
            else "not pinned"
        )
        st.caption(
            f"**{name}** · {info.files:,} files · {studio.human_size(info.bytes)} · {pinned} · "
            f"`{corpora.corpus_root(name)}`"
        )
        if check.pinned_id is None:
            st.info(
                f"This corpus has no manifest: runs on it record no snapshot. "
                f"`codesearch corpus pin {name}` pins it as it is.",
                icon=":material/push_pin:",
            )
        elif not check.ok:
            lines = check.lines()
            shown = "\n".join(f"- `{line}`" for line in lines[:MAX_DIFF_LINES])
            more = (
                f"\n- … and {len(lines) - MAX_DIFF_LINES} more"
                if len(lines) > MAX_DIFF_LINES
                else ""
            )
            st.warning(
                f"**Edited since it was pinned**: {len(lines)} file(s) differ from snapshot "
                f"`{corpora.short_id(check.pinned_id)}`. Findings stored on the old snapshot may "
                "be stale: restore the files, or `codesearch corpus pin "
                f"{name}` and `codesearch verify --stale`.\n\n{shown}{more}",
                icon=":material/warning:",
            )
        _stale_blueprints(name, check.content_id)
        if st.button("Check now", icon=":material/fact_check:", key="corpus_check_now"):
            st.session_state["corpus_check_nonce"] = nonce + 1
            st.rerun()
    return check
