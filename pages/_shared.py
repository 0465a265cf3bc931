"""The studio's only Streamlit-aware helpers: cached store and engine factories, the sidebar, and a
few widgets every page draws the same way. Logic lives in `codesearch_core`; this module only wires
it to Streamlit's caches and session state. The session-state keys that pages share are named
here, once, so a typo cannot split them.
"""

from __future__ import annotations

import importlib.util
import json
import runpy
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final

import streamlit as st

from codesearch_core import config, corpus, studio
from codesearch_core.engines.vllm_engine import VllmEngine, VllmSettings, get_vllm_engine
from codesearch_core.errors import CodesearchError
from codesearch_core.models import ToolName, canonical_json
from codesearch_core.store import Store
from codesearch_core.studio_forms import (
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

#: The reviewer's name; bound to the URL so a refresh or a bookmark keeps it.
REVIEWER: Final = "reviewer"
#: The corpus picked in the sidebar (Corpus page and blueprint authoring start from it).
CORPUS: Final = "corpus"
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
    """One Store per file per process, shared by every session and thread (the Store is thread-safe).

    A new, empty store gets the shipped seed blueprints, so the first start is a working studio.
    """
    store = Store(path)
    try:
        studio.ensure_seeded(store)
    except CodesearchError:
        store.close()
        raise
    return store


def get_store() -> Store:
    """The store at `config.db_path()`; on failure the page shows why and stops (nothing to show)."""
    path = str(config.db_path())
    try:
        return _open_store(path)
    except CodesearchError as err:
        st.error(f"The store at `{path}` cannot be opened: {err}", icon=":material/database:")
        st.stop()


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
    return corpus.read_file_text(corpus_name, rel).splitlines()


def lines_of(corpus_name: str, rel: str) -> list[str]:
    """The lines of a corpus file, cached; CorpusError when the file cannot be shown."""
    return file_lines(corpus_name, rel, studio.file_mtime_ns(corpus_name, rel))


def sidebar() -> None:
    """Store file, corpus, active engine and reviewer: on every page."""
    with st.sidebar:
        st.text_input(
            "Reviewer",
            key=REVIEWER,
            placeholder="your name",
            help="Your decisions are recorded under this name; the Review page resumes where "
            "you left off. Kept in the page address, so a refresh keeps it.",
            bind="query-params",
        )
        names = corpus.list_corpora()
        if names:
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
    return str(st.session_state.get(REVIEWER) or "").strip()


def current_corpus() -> str | None:
    value = st.session_state.get(CORPUS)
    return str(value) if value else None


def go_to(page: str, **state: Any) -> None:
    """Hand `state` to the next page through session state, then switch to it."""
    for key, value in state.items():
        st.session_state[key] = value
    st.switch_page(page)


# --- the tool-call editor (Corpus, Blueprints, Review) ------------------------------------------

_TOOL_LABELS: Final = {
    ToolName.AST_GREP.value: "ast-grep (structure)",
    ToolName.RIPGREP.value: "ripgrep (text)",
}


def _load_into_editor(key: str, call: Mapping[str, Any] | None) -> None:
    """Make the editor show `call`: widgets are keyed by a version, so new widgets get new defaults."""
    st.session_state[f"{key}:version"] = int(st.session_state.get(f"{key}:version", 0)) + 1
    st.session_state[f"{key}:initial"] = dict(call) if call else None


def _on_mode_change(key: str) -> None:
    # Switching Form <-> JSON carries over what was typed in the other mode.
    _load_into_editor(key, st.session_state.get(f"{key}:call"))


def call_editor(
    key: str, initial: Mapping[str, Any] | None, *, default_language: str | None = None
) -> FormResult:
    """A tool-call editor: a form built from the schema or raw JSON, with each validation message
    under the field it is about. `initial` is loaded whenever it differs from what was loaded last.
    """
    fingerprint = canonical_json(initial) if initial else ""
    if st.session_state.get(f"{key}:loaded") != fingerprint:
        st.session_state[f"{key}:loaded"] = fingerprint
        _load_into_editor(key, initial)
    version = st.session_state[f"{key}:version"]
    start: Mapping[str, Any] | None = st.session_state.get(f"{key}:initial")
    mode = st.segmented_control(
        "Edit as",
        ["Form", "JSON"],
        default="Form",
        key=f"{key}:mode",
        on_change=_on_mode_change,
        args=(key,),
        label_visibility="collapsed",
        required=True,
    )
    k = f"{key}:{version}"
    result = _json_editor(k, start) if mode == "JSON" else _form_editor(k, start, default_language)
    st.session_state[f"{key}:call"] = result.call
    return result


def _json_editor(k: str, start: Mapping[str, Any] | None) -> FormResult:
    text = st.text_area(
        "Tool call (JSON)",
        value=json.dumps(start, indent=2, ensure_ascii=False) if start else "",
        height=220,
        key=f"{k}:json",
        placeholder='{"name": "ripgrep_search", "arguments": {"pattern": "TODO"}}',
    )
    result = call_from_json_text(text)
    for where, message in result.errors.items():
        if not text.strip():
            st.info(message)
        elif where:
            st.error(f"`{where}`: {message}", icon=":material/rule:")
        else:
            st.error(message, icon=":material/data_object:")
    return result


def _form_editor(
    k: str, start: Mapping[str, Any] | None, default_language: str | None
) -> FormResult:
    names = [t.value for t in ToolName]
    start_tool = str((start or {}).get("name") or ToolName.RIPGREP.value)
    tool_value = st.radio(
        "Tool",
        names,
        index=names.index(start_tool) if start_tool in names else 0,
        format_func=_TOOL_LABELS.__getitem__,
        horizontal=True,
        key=f"{k}:tool",
    )
    tool = ToolName(tool_value)
    shape = AstGrepForm.PATTERN
    if tool is ToolName.AST_GREP:
        shape = AstGrepForm(
            st.radio(
                "Match by",
                [f.value for f in AstGrepForm],
                index=list(AstGrepForm).index(ast_grep_form_of(start)),
                format_func={"pattern": "pattern", "rule": "rule (JSON)"}.__getitem__,
                horizontal=True,
                key=f"{k}:shape",
            )
        )
    fields = form_fields(tool, shape)
    initial = form_values(start, tool, shape)
    if (
        default_language
        and "language" in initial
        and not (start or {}).get("arguments", {}).get("language")
    ):
        initial["language"] = default_language
    values: dict[str, Any] = {}
    slots: dict[str, Any] = {}

    def draw(f: FormField) -> None:
        wk = f"{k}:{tool.value}:{shape.value}:{f.name}"
        label = f"{f.label} *" if f.required else f.label
        value = initial[f.name]
        if f.kind is FieldKind.CHOICE:
            values[f.name] = st.selectbox(
                label, f.options, index=f.options.index(value) if value in f.options else 0,
                help=f.help or None, key=wk,
            )  # fmt: skip
        elif f.kind is FieldKind.BOOL:
            values[f.name] = st.checkbox(label, value=bool(value), help=f.help or None, key=wk)
        elif f.kind is FieldKind.INT:
            values[f.name] = st.number_input(
                label, value=value, min_value=f.minimum, max_value=f.maximum, step=1,
                placeholder="default", help=f.help or None, key=wk,
            )  # fmt: skip
        elif f.kind is FieldKind.LIST:
            values[f.name] = st.text_area(
                label, value=value, height=80, placeholder="one per line",
                help=f.help or None, key=wk,
            )  # fmt: skip
        elif f.kind is FieldKind.JSON:
            values[f.name] = st.text_area(
                label, value=value, height=160, help=f.help or None, key=wk,
                placeholder='{"pattern": "await $X", "inside": {"kind": "function_declaration"}}',
            )  # fmt: skip
        else:
            values[f.name] = st.text_input(label, value=value, help=f.help or None, key=wk)
        slots[f.name] = st.empty()

    main = [f for f in fields if f.kind in (FieldKind.TEXT, FieldKind.JSON, FieldKind.CHOICE)]
    lists = [f for f in fields if f.kind is FieldKind.LIST]
    flags = [f for f in fields if f.kind in (FieldKind.BOOL, FieldKind.INT)]
    wide = [f for f in main if f.kind is not FieldKind.CHOICE]
    narrow = [f for f in main if f.kind is FieldKind.CHOICE]
    if narrow:
        left, right = st.columns([3, 1])
        with left:
            for f in wide:
                draw(f)
        with right:
            for f in narrow:
                draw(f)
    else:
        for f in wide:
            draw(f)
    if lists:
        for column, f in zip(st.columns(len(lists)), lists, strict=True):
            with column:
                draw(f)
    if flags:
        columns = st.columns(min(len(flags), 4))
        for i, f in enumerate(flags):
            with columns[i % len(columns)]:
                draw(f)
    result = build_call(tool, values, shape)
    if not start and all(values[f.name] == initial[f.name] for f in fields):
        # An untouched, empty form: "must not be empty" would only be noise.
        return result
    for name, message in result.errors.items():
        if name in slots:
            slots[name].caption(f":red[{message}]")
        else:
            st.error(message, icon=":material/rule:")
    return result


# --- the in-process vLLM engine -----------------------------------------------------------------

# Process-wide, like the engine itself: another tab sees that a model is loading or failed to.
_vllm_status: dict[str, str] = {}
_vllm_status_lock = threading.Lock()


def vllm_installed() -> bool:
    return importlib.util.find_spec("vllm") is not None


def vllm_settings(**kwargs: Any) -> VllmSettings:
    return VllmSettings(**kwargs)


@st.cache_resource(show_spinner=False, max_entries=1, hash_funcs={VllmSettings: repr})
def _vllm_engine(settings: VllmSettings) -> VllmEngine:
    # max_entries=1 and the engines' own one-per-process factory: other settings shut the old
    # engine down (freeing the GPUs) before the new one is built.
    return get_vllm_engine(settings)


def _set_vllm_status(settings: VllmSettings, state: str, message: str = "") -> None:
    with _vllm_status_lock:
        _vllm_status.update(settings=repr(settings), state=state, message=message,
                            model=settings.model)  # fmt: skip


def vllm_engine_status(settings: VllmSettings, *, load: bool) -> VllmEngine | None:
    """Show the engine's state for `settings` (not loaded, loading, ready, error) and return the
    engine when it is ready; `load` builds it (minutes for a large model)."""
    with _vllm_status_lock:
        status = dict(_vllm_status) if _vllm_status.get("settings") == repr(settings) else {}
    state = status.get("state")
    if state == "ready" or load:
        try:
            with st.status(f"Loading {settings.model} (tp={settings.tensor_parallel_size})…",
                           expanded=False) as box:  # fmt: skip
                if state != "ready":
                    _set_vllm_status(settings, "loading")
                engine = _vllm_engine(settings)
                box.update(label=f"Ready: {settings.model} · tp={settings.tensor_parallel_size}",
                           state="complete")  # fmt: skip
        except CodesearchError as err:
            _set_vllm_status(settings, "error", str(err))
            st.error(f"vLLM could not start: {err}", icon=":material/error:")
            return None
        except (
            Exception
        ) as err:  # vLLM raises many kinds; the curator needs the message, not a trace
            message = f"{type(err).__name__}: {err}"
            _set_vllm_status(settings, "error", message)
            st.error(f"vLLM could not start: {message}. Check the model name, the GPUs "
                     "(tensor parallel size) and max model len.", icon=":material/error:")  # fmt: skip
            return None
        _set_vllm_status(settings, "ready")
        return engine
    if state == "loading":
        st.info("Loading this model (in another session)…", icon=":material/hourglass_top:")
    elif state == "error":
        st.error(f"The last attempt to load it failed: {status.get('message')}",
                 icon=":material/error:")  # fmt: skip
    else:
        st.info("Not loaded. Loading a model takes a while; it then stays loaded for every "
                "session until other settings are loaded.", icon=":material/memory:")  # fmt: skip
    return None


def vllm_status_line() -> str:
    with _vllm_status_lock:
        if not _vllm_status:
            return ""
        return f"vLLM {_vllm_status['state']} · {_vllm_status['model']}"
