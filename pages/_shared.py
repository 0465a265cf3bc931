"""The studio's Streamlit-aware plumbing: the cached store, the sidebar, routing, page switches
(the call editor is `pages/_call_editor.py`, the vLLM engine `pages/_vllm.py`). Logic lives in
`codesearch_core`; this wires it to Streamlit's caches and session state (keys named here once).
"""

from __future__ import annotations

import runpy
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final

import streamlit as st

from codesearch_core import config, corpora, ingest, studio
from codesearch_core.access import Action
from codesearch_core.errors import CodesearchError
from codesearch_core.store import Store
from pages import _identity
from pages._identity import REVIEWER
from pages._vllm import vllm_status_line

#: The corpus picked in the sidebar (Corpus page and blueprint authoring start from it).
CORPUS: Final = "corpus"
CORPUS_ADDED: Final = "corpus_added"  # a corpus just added: picked on the next run
#: What the Propose page last built: {"kind": "mutations"|"vllm"|"openai"|"import", "label": ...}.
ENGINE: Final = "active_engine"
#: Filters the Review page applies, set by Overview's chart links and the Review page's own widgets.
REVIEW_FILTERS: Final = "review_filters"
#: A call handed from the Corpus page (or a review item) to the Blueprints editor.
BLUEPRINT_DRAFT: Final = "blueprint_draft"
#: Blueprint ids handed from the Blueprints list to the Propose page.
PROPOSE_SELECTION: Final = "propose_selection"

APP_SCRIPT: Final = Path(__file__).resolve().parent.parent / "app.py"
PAGE_OVERVIEW: Final = "pages/overview.py"
PAGE_CORPUS: Final = "pages/corpus.py"
PAGE_BLUEPRINTS: Final = "pages/blueprints.py"
PAGE_PROPOSE: Final = "pages/propose.py"
PAGE_REVIEW: Final = "pages/review.py"
PAGE_EXPORT: Final = "pages/export.py"
PAGE_AUDIT: Final = "pages/audit.py"


_routing = threading.local()


@contextmanager
def routed() -> Iterator[None]:
    """Marks the page run as coming through app.py (see `ensure_routed`)."""
    _routing.active = True
    try:
        yield
    finally:
        _routing.active = False


def ensure_routed() -> None:
    """Run the app through app.py when Streamlit ran this page file on its own.

    On a fresh server (and in AppTest after `switch_page`), a request straight to e.g. /review runs
    pages/review.py alone, in Streamlit's legacy `pages/` folder mode, until some run has called
    `st.navigation`: no sidebar, no page config. This runs app.py in its place, in the same script
    run (so a click that caused the run is not lost), then ends the legacy run.
    """
    if getattr(_routing, "active", False):
        return
    # The flag `st.navigation` clears itself; clearing it first makes the legacy mode end for good.
    from streamlit.runtime.pages_manager import PagesManager

    PagesManager.uses_pages_directory = False
    runpy.run_path(str(APP_SCRIPT), run_name="__main__")
    st.stop()


@st.cache_resource(show_spinner="Opening the store…", on_release=lambda s: s.close())
def _open_store(path: str) -> Store:
    """One Store per file per process, shared by every session and thread (it is thread-safe); a
    new, empty store gets the shipped seed blueprints, so the first start is a working studio."""
    store = Store(path)
    try:
        ingest.ensure_seeded(store)
    except CodesearchError:
        store.close()
        raise
    return store


def open_store() -> Store:
    """The store at `config.db_path()`; on failure the page shows why and stops (nothing to show)."""
    path = str(config.db_path())
    try:
        return _open_store(path)
    except CodesearchError as err:
        st.error(f"The store at `{path}` cannot be opened: {err}", icon=":material/database:")
        st.stop()


def get_store() -> Store:
    """The store, acting as the person using this run: each write is checked and audited as theirs."""
    return open_store().acting_as(_identity.current().actor)


def max_upload_mb() -> int:
    """The largest upload the settings allow (the server refuses more than server.maxUploadSize)."""
    return _identity.current().settings.max_upload_mb


def denial(action: Action) -> str | None:
    """Why the current person may not take `action` (a disabled widget's help), or None."""
    return _identity.denial(action)


@contextmanager
def shown_errors(prefix: str = "") -> Iterator[None]:
    """Show a CodesearchError raised inside the block as an error message and carry on drawing."""
    try:
        yield
    except CodesearchError as err:
        st.error(f"{prefix}{err}", icon=":material/error:")


@st.cache_data(show_spinner=False, max_entries=256)
def file_lines(corpus_name: str, rel: str, mtime_ns: int) -> list[str]:
    """A corpus file's lines. Keyed by mtime so an edited file is read again."""
    del mtime_ns
    return corpora.read_file_lines(corpus_name, rel)


def lines_of(corpus_name: str, rel: str) -> list[str]:
    """The lines of a corpus file, cached; CorpusError when the file cannot be shown."""
    return file_lines(corpus_name, rel, studio.file_mtime_ns(corpus_name, rel))


def sidebar() -> None:
    """Who is reviewing, corpus, active engine and store file: on every page."""
    with st.sidebar:
        sync_params({REVIEWER: _identity.draw_who()})
        names = corpora.list_corpora()
        if names:
            if (added := st.session_state.pop(CORPUS_ADDED, None)) in names:  # before the widget
                st.session_state[CORPUS] = added
            if st.session_state.get(CORPUS) not in names:
                st.session_state[CORPUS] = names[0]
            st.selectbox("Corpus", names, key=CORPUS, persist_state="session")
        else:
            st.warning(f"No corpora in `{config.corpora_dir()}`.")
        # A slot, not a caption: the Propose page sets the engine after the sidebar is drawn.
        _routing.engine_slot = st.empty()
        _draw_engine()
        st.caption(f"**Store** · `{config.db_path()}`")


def _draw_engine() -> None:
    engine = st.session_state.get(ENGINE) or {"label": "mutations (built in)"}
    line = f"**Engine** · {engine['label']}"
    if status := vllm_status_line():
        line += f"  \n{status}"
    slot = getattr(_routing, "engine_slot", None)
    if slot is not None:
        slot.caption(line)


def set_active_engine(kind: str, label: str) -> None:
    """Record the engine the Propose page is set up with, and show it in the sidebar at once."""
    st.session_state[ENGINE] = {"kind": kind, "label": label}
    _draw_engine()


def reviewer() -> str:
    """Whom decisions are recorded under: the login, or the name typed in the sidebar ("" : none)."""
    return _identity.current().reviewer


def current_corpus() -> str | None:
    return str(value) if (value := st.session_state.get(CORPUS)) else None


def sync_params(wanted: Mapping[str, str | None]) -> None:
    """Make the address hold `wanted` (empty removes), writing only what differs (one message each)."""
    for key, value in wanted.items():
        if value and st.query_params.get(key) != value:
            st.query_params[key] = value
        elif not value and key in st.query_params:
            del st.query_params[key]


def go_to(
    page: str, *, params: Mapping[str, str] | None = None, state: Mapping[str, Any] | None = None
) -> None:
    """Hand `state` to the next page (session state) and switch; its address gets `params`."""
    st.session_state.update(state or {})
    name = _identity.name_for_address()
    st.switch_page(page, query_params={**(params or {}), **({REVIEWER: name} if name else {})})
