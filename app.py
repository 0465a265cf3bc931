"""codesearch-gym studio: the Streamlit entry point. It routes to the pages and draws the sidebar.

Run it with `uv run streamlit run app.py`. Every page lives in `pages/`; the few Streamlit-aware
helpers they share (cached store and engines, sidebar, error display) live in `pages/_shared.py`.
"""

import streamlit as st

from codesearch_core.errors import CodesearchError
from pages import _history, _identity, _layout, _shared

st.set_page_config(page_title="codesearch-gym studio", page_icon="🔎", layout="wide")

# Before anything writes the address: that only filling the address in is no new Back step.
_history.keep_back_meaningful()
_layout.fold_sidebar_when_narrow()
# Who is here comes first: without a login (or the proxy's header) only the login page is drawn.
_identity.identify(_shared.open_store)
navigation = st.navigation(
    {
        "Curate": [
            st.Page(
                _shared.PAGE_OVERVIEW, title="Overview", icon=":material/dashboard:", default=True
            ),
            st.Page(_shared.PAGE_REVIEW, title="Review", icon=":material/fact_check:"),
        ],
        "Build": [
            st.Page(_shared.PAGE_CORPUS, title="Corpus", icon=":material/folder_open:"),
            st.Page(_shared.PAGE_BLUEPRINTS, title="Blueprints", icon=":material/edit_note:"),
            st.Page(_shared.PAGE_PROPOSE, title="Propose", icon=":material/auto_awesome:"),
            st.Page("pages/synthesize.py", title="Synthesize", icon=":material/factory:"),
        ],
        "Ship": [
            st.Page(_shared.PAGE_EXPORT, title="Export", icon=":material/download:"),
            st.Page("pages/evaluations.py", title="Evaluations", icon=":material/leaderboard:"),
        ],
        # For everyone: a lead or admin sees the team and the trail, others why they cannot.
        "Team": [
            st.Page(_shared.PAGE_AUDIT, title="Team & audit", icon=":material/shield_person:")
        ],
    }
)
_shared.sidebar()
try:
    with _shared.routed():
        navigation.run()
except CodesearchError as err:
    # The last line of defence: a page that did not expect an error still shows a message, not a
    # traceback. Pages catch what they expect closer to the widget it is about.
    st.error(str(err), icon=":material/error:")
