"""Synthesize: draft blueprints from a corpus with the rule templates (no model), for the Drafts
queue on the Review page. The counts per stage show as the run goes; Stop keeps what was made."""

from __future__ import annotations

import streamlit as st

from codesearch_core import corpora, studio
from codesearch_core.access import Action
from codesearch_core.errors import CodesearchError
from pages import _shared

_shared.ensure_routed()

LAST_RUN = "synthesize_last_run"  # the counts of the last run, shown after a rerun or a stop

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
denied = _shared.denial(Action.PROPOSE)
r1, r2, _ = st.columns([1, 1, 3])
start = r1.button("Synthesize", type="primary", icon=":material/play_arrow:", key="syn:start",
                  disabled=not corpus or bool(denied), help=denied, width="stretch")  # fmt: skip
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
        report = studio.synthesize_into_store(store, corpus, limit=int(limit), seed=int(seed),
                                              on_progress=on_progress)  # fmt: skip
        st.session_state[LAST_RUN] = report.counts.to_dict()
        bar.empty()
    except CodesearchError as err:
        bar.empty()
        st.error(f"{err}", icon=":material/error:")

last = st.session_state.get(LAST_RUN)
if last:
    st.success(f"Last run: **{last['kept']}** new drafts", icon=":material/task_alt:")
    st.dataframe([{"stage": s, "targets": last[s]} for s in studio.SYNTHESIS_STAGES],
                 hide_index=True)  # fmt: skip
    if last.get("dropped"):
        st.caption("Dropped: " + ", ".join(f"{k} {v}" for k, v in last["dropped"].items()))
counts = store.draft_counts()
st.caption(f"Store: {counts['pending']} drafts to review · {counts['accepted']} accepted · "
           f"{counts['rejected']} rejected")  # fmt: skip
if counts["pending"] and st.button("Review the drafts", icon=":material/fact_check:",
                                   key="syn:review"):  # fmt: skip
    _shared.go_to(_shared.PAGE_REVIEW, params={"queue": "drafts"})
