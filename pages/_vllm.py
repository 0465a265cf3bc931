"""The in-process vLLM engine as the app holds it: one per process, cached by Streamlit, with a
status that every session sees (loading, ready, failed)."""

from __future__ import annotations

import importlib.util
import threading
from typing import Any

import streamlit as st

from codesearch_core.engines import VllmEngine, VllmSettings, get_vllm_engine
from codesearch_core.errors import CodesearchError

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
        for notice in engine.notices:
            st.caption(notice)
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
