"""The project's annotation guidelines on the page: edited on Overview by a lead (each save a new
version, with who and when), shown folded on every queue's card (`_queue_frame.position` draws it,
so a new queue has it too). The store keeps the versions and, with each decision, the one in force.
"""

from __future__ import annotations

import streamlit as st

from codesearch_core.access import Action
from codesearch_core.errors import CodesearchError
from codesearch_core.store import Guidelines, Store
from pages import _shared

_FLASH = "guidelines_flash"  # what the last save did, shown once above the editor


def _byline(g: Guidelines) -> str:
    return f"**v{g.version}** · saved by {g.author} · {g.saved_at:%Y-%m-%d %H:%M} UTC"


def folded() -> None:
    """The guidelines in force, folded ("Guidelines v3"), for the card; nothing before any exist."""
    g = _shared.get_store().guidelines.get()
    if g is None:
        return
    with st.expander(f"Guidelines v{g.version}", icon=":material/menu_book:"):
        st.caption(_byline(g))
        st.markdown(g.text)


def _save(store: Store) -> None:
    try:
        saved = store.guidelines.save(str(st.session_state.get("gl:text", "")))
    except CodesearchError as err:
        st.session_state[_FLASH] = ("error", str(err))  # the text stays in the box
        return
    st.session_state[_FLASH] = (
        ("info", "Unchanged: that is the version in force already.")
        if saved is None
        else ("success", f"Saved as v{saved.version}: decisions from now on keep it.")
    )


@st.fragment
def editor() -> None:
    """Overview's section: the version in force, and for a lead a Markdown editor that saves the
    next version (a form: typing then clicking Save saves what was typed)."""
    store = _shared.get_store()
    st.subheader("Annotation guidelines", anchor=False)
    current = store.guidelines.get()
    st.caption(
        _byline(current) if current else "None yet: what a lead writes here shows, folded, on "
        "every review card."
    )  # fmt: skip
    if flash := st.session_state.pop(_FLASH, None):
        kind, text = flash
        {"error": st.error, "info": st.info}.get(kind, st.success)(text)
    not_lead = _shared.denial(Action.EDIT_GUIDELINES)
    if not_lead:
        if current:
            with st.expander(f"Guidelines v{current.version}", icon=":material/menu_book:"):
                st.markdown(current.text)
        return
    if "gl:text" not in st.session_state:
        st.session_state["gl:text"] = current.text if current else ""
    with st.form("guidelines", border=False):
        st.text_area(
            "Guidelines (Markdown)", key="gl:text", height=180,
            placeholder="# What to accept\n\n- Accept a call only when …",
        )  # fmt: skip
        st.form_submit_button(
            "Save as a new version", icon=":material/save:", on_click=_save, args=(store,)
        )
