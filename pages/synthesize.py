"""Synthesize: draft blueprints from a corpus, for the Drafts queue on the Review page. The targets
come from the rule templates; their intents from the templates' wordings (no model), the vLLM
engine in this process, or an OpenAI-compatible server. The counts per stage show as the run
goes; Stop keeps what was made."""

from __future__ import annotations

import streamlit as st

from codesearch_core import corpora, studio
from codesearch_core.access import Action
from codesearch_core.engines import PRESETS, OpenAIEngine, OpenAISettings, SamplingSettings
from codesearch_core.errors import CodesearchError
from codesearch_core.store import DRAFT
from codesearch_core.synthesis import IntentWriter, openai_writer, vllm_writer
from pages import _shared, _vllm

_shared.ensure_routed()

LAST_RUN = "synthesize_last_run"  # the counts of the last run, shown after a rerun or a stop
ENGINES = {
    "templates": "Rule templates (no model)",
    "vllm": "vLLM in this process",
    "openai": "OpenAI-compatible server",
}

store = _shared.get_store()
st.title("Synthesize")
st.caption("Mine a corpus with ast-grep and ripgrep rule templates, keep the targets a plain text "
           "search cannot fake, verify and de-duplicate them, and write each as a draft for the "
           "**Drafts** queue on the Review page.")  # fmt: skip

names = corpora.list_corpora()
current = _shared.current_corpus()
c1, c2, c3 = st.columns([2, 1, 1])
corpus = c1.selectbox("Corpus", names, index=names.index(current) if current in names else 0,
                      key="syn:corpus")  # fmt: skip
limit = c2.number_input("At most (new drafts)", 1, 10_000, 50, key="syn:limit")
seed = c3.number_input("Seed", 0, 2**31 - 1, 0, key="syn:seed",
                       help="Orders the targets and picks each intent's wording.")  # fmt: skip

st.subheader("Intents written by", anchor=False)
kind = st.segmented_control("Intents written by", list(ENGINES), format_func=ENGINES.__getitem__,
                            default="templates", key="syn:engine", required=True,
                            label_visibility="collapsed")  # fmt: skip
writer: IntentWriter | None = None
waiting = ""  # why Synthesize cannot start yet with this engine
probe: tuple[str, str | None] | None = None  # an OpenAI server to check before the run
with st.container(border=True):
    if kind == "templates":
        st.caption("Each intent is one of its rule's wordings, picked by the seed: no model, "
                   "no GPU.")  # fmt: skip
    else:
        st.caption("The model writes `n` samples per target, held to `{intent, difficulty}` by "
                   "structured outputs; a sample that is not that JSON or that quotes the "
                   "search pattern is dropped and counted, and the best of the rest is kept.")  # fmt: skip
        s1, s2, s3 = st.columns(3)
        n = int(s1.number_input("Samples per target (n)", 1, 16, 4, key="syn:n"))
        temperature = float(s2.slider("Temperature", 0.0, 2.0, 0.8, key="syn:t"))
        max_tokens = int(s3.number_input("Max tokens", 16, 1024, 96, key="syn:max_tokens"))
        with _shared.shown_errors():
            sampling = SamplingSettings(temperature=temperature, max_tokens=max_tokens,
                                        seed=int(seed))  # fmt: skip
    if kind == "vllm":
        presets = [p.hf_id for p in PRESETS]
        m1, m2, m3, m4 = st.columns([3, 2, 1, 1])
        choice = m1.selectbox("Model", [*presets, "other"], key="syn:vllm_preset")
        model = choice if choice != "other" else m2.text_input(
            "Model id or path", key="syn:vllm_model").strip()  # fmt: skip
        tp = int(m3.number_input("Tensor parallel", 1, 8, 1, key="syn:vllm_tp"))
        max_len = int(m4.number_input("Max model len", 256, 1_048_576, 4096, step=1024,
                                      key="syn:vllm_len"))  # fmt: skip
        if not _vllm.vllm_installed():
            waiting = ("vLLM is not installed in this environment: `uv sync --extra vllm` on a "
                       "GPU machine, or use an OpenAI-compatible server.")  # fmt: skip
            st.warning(waiting, icon=":material/memory:")
        elif not model:
            waiting = "Give the model id or path."
        else:
            with _shared.shown_errors("vLLM could not start: "):
                settings = _vllm.vllm_settings(model=model, tensor_parallel_size=tp,
                                               max_model_len=max_len, seed=int(seed))  # fmt: skip
                engine = _vllm.vllm_engine_status(settings, load=st.button(
                    "Load the model", icon=":material/memory:", key="syn:vllm_load"))  # fmt: skip
                if engine is not None:
                    writer = vllm_writer(engine, sampling, n=n)
            if writer is None:
                waiting = waiting or "Load the model first."
    elif kind == "openai":
        o1, o2, o3 = st.columns([3, 2, 2])
        url = o1.text_input("Base URL", "http://127.0.0.1:8000/v1", key="syn:oa_url").strip()
        model = o2.text_input("Model", key="syn:oa_model", placeholder="as the server names it")
        api_key = o3.text_input("API key", type="password", key="syn:oa_key",
                                placeholder="optional") or None  # fmt: skip
        if not url or not model.strip():
            waiting = "Give the server's base URL and the model it serves."
        else:
            with _shared.shown_errors():
                engine_oa = OpenAIEngine(OpenAISettings(base_urls=(url,), model=model.strip(),
                                                        api_key=api_key))  # fmt: skip
                writer = openai_writer(engine_oa, sampling, n=n)
                probe = (url, api_key)
            waiting = "" if probe else "Fix the settings above."
            if st.button("Test the connection", icon=":material/lan:", key="syn:oa_test"):
                with _shared.shown_errors():
                    served = studio.probe_openai_server(url, api_key)
                    st.success(f"Reachable; it serves: {', '.join(served) or '(no models listed)'}")

denied = _shared.denial(Action.PROPOSE)
r1, r2, _ = st.columns([1, 1, 3])
start = r1.button("Synthesize", type="primary", icon=":material/play_arrow:", key="syn:start",
                  disabled=not corpus or bool(denied) or bool(waiting),
                  help=denied or waiting or None, width="stretch")  # fmt: skip
if waiting and kind != "templates":
    st.caption(f":orange[{waiting}]")
# Stop interrupts the script at its next progress update, after the drafts in hand are stored
# (each in its own transaction), and reruns the page, which shows what was made.
stop = r2.button("Stop", icon=":material/stop:", key="syn:stop", width="stretch")
if stop:
    st.warning(
        "Stopped. The drafts made before the stop are stored.", icon=":material/stop_circle:"
    )

if start and corpus:
    bar = st.progress(0.0, text="Mining…")
    st.session_state[LAST_RUN] = None

    def on_progress(counts: studio.SynthesisCounts) -> None:
        st.session_state[LAST_RUN] = counts.to_dict()
        bar.progress(min(counts.kept / int(limit), 1.0),
                     text=f"mined {counts.mined} · verified {counts.verified} · "
                     f"deduplicated {counts.deduplicated} · kept {counts.kept}")  # fmt: skip

    try:
        if probe is not None:  # an unreachable server says so now, not as N failed targets
            studio.probe_openai_server(*probe)
        report = studio.synthesize_into_store(store, corpus, limit=int(limit), seed=int(seed),
                                              writer=writer, on_progress=on_progress)  # fmt: skip
        st.session_state[LAST_RUN] = report.counts.to_dict()
        bar.empty()
    except CodesearchError as err:
        bar.empty()
        st.error(f"{err}", icon=":material/error:")

last = st.session_state.get(LAST_RUN)
if last:
    st.success(f"Last run: **{last['kept']}** new drafts, {last.get('already_drafted', 0)} "
               "already drafted", icon=":material/task_alt:")  # fmt: skip
    st.dataframe([{"stage": s, "targets": last[s]} for s in studio.SYNTHESIS_STAGES],
                 hide_index=True)  # fmt: skip
    if last.get("dropped"):
        st.caption("Dropped: " + " · ".join(f"{v:,} {studio.drop_reason(k)}"
                                            for k, v in last["dropped"].items()))  # fmt: skip
counts = store.queue(DRAFT).counts()
st.caption(f"Store: {counts['open']} drafts to review · {counts['accept']} accepted · "
           f"{counts['reject']} rejected")  # fmt: skip
if counts["open"] and st.button("Review the drafts", icon=":material/fact_check:",
                                   key="syn:review"):  # fmt: skip
    _shared.go_to(_shared.PAGE_REVIEW, params={"queue": "drafts"})
