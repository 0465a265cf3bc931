"""The Propose page's rollouts: the run `codesearch rollouts` makes (K episodes per blueprint in the
gym, those at or above the minimum reward kept in the store), played by the blueprints' own calls or
by the model the page configured, with progress; the kept episodes go to the Review page's
Episodes queue."""

from __future__ import annotations

from typing import Final

import streamlit as st

from codesearch_core import studio
from codesearch_core.engines import Engine, SamplingSettings
from codesearch_core.errors import CodesearchError
from codesearch_core.gym import DEFAULT_MIN_REWARD, seed_blueprints
from codesearch_core.models import Blueprint
from codesearch_core.store import Store
from pages import _queue_frame, _shared

LAST: Final = "rollouts:last"  # what the last run did, shown after a rerun
SOURCES: Final = {"chosen": "The blueprints above", "seeds": "Every seed (--blueprints seeds)"}


def section(
    store: Store,
    blueprints: list[Blueprint],
    engine: Engine | None,
    sampling: SamplingSettings | None,
) -> None:
    """`engine`: the chat model the page configured (an OpenAI-compatible server, vLLM), or None."""
    st.subheader("4 · Episodes", anchor=False)
    st.caption(
        "K episodes per blueprint in the gym (the reference plays each blueprint's own calls); "
        "those with at least the minimum reward are kept (best first, no duplicates) for the "
        "**Episodes** queue on the Review page, as "
        f"`{studio.ROLLOUTS_COMMAND}` does. Blueprints with episodes of this engine and model "
        "stored already are skipped."
    )
    players = {"reference": "Reference (no model)"}
    if engine is not None:
        players["engine"] = f"The engine above: {engine.name} · {engine.model}"
    c1, c2, c3, c4 = st.columns([3, 3, 2, 2])
    player = c1.selectbox("Played by", list(players), format_func=players.__getitem__,
                          key="pr:player")  # fmt: skip
    source = c2.selectbox("Blueprints", list(SOURCES), format_func=SOURCES.__getitem__,
                          key="pr:source")  # fmt: skip
    k = int(c3.number_input("Episodes per blueprint (K)", 1, 64, 1, key="pr:k"))
    min_reward = float(c4.number_input("Minimum reward", -1.0, 1.0, DEFAULT_MIN_REWARD, step=0.05,
                                       key="pr:min_reward"))  # fmt: skip
    chosen = blueprints if source == "chosen" else None
    if st.button("Roll out episodes", icon=":material/play_circle:", key="pr:start",
                 disabled=chosen is not None and not chosen):  # fmt: skip
        _run(store, chosen, engine if player == "engine" else None, sampling, k, min_reward)
    last = st.session_state.get(LAST)
    if last:
        _queue_frame.flash("success", last["text"])
        if last.get("missing"):
            st.warning(last["missing"], icon=":material/folder_off:")
        if last["kept"] and st.button("Review the episodes", icon=":material/fact_check:",
                                      key="pr:review"):  # fmt: skip
            _shared.go_to(_shared.PAGE_REVIEW, params={_queue_frame.QUEUE_PARAM: "episodes"})


def _run(
    store: Store,
    chosen: list[Blueprint] | None,
    engine: Engine | None,
    sampling: SamplingSettings | None,
    k: int,
    min_reward: float,
) -> None:
    st.session_state.pop(LAST, None)  # an error below must not leave the last run's counts
    bar = st.progress(0.0, text="Rolling out…")

    def on_progress(done: int, total: int) -> None:
        bar.progress(done / max(total, 1), text=f"Rolling out: {done} of {total} blueprints")

    try:
        blueprints = chosen if chosen is not None else seed_blueprints()
        label = "the chosen blueprints" if chosen is not None else "seeds"
        run = studio.rollouts_into_store(
            store, studio.rollout_policy(engine, sampling), blueprints, label, k=k,
            min_reward=min_reward, on_progress=on_progress,
        )  # fmt: skip
    except CodesearchError as err:
        st.error(f"The rollout stopped: {err}\n\nEpisodes stored before the error are kept.",
                 icon=":material/error:")  # fmt: skip
        return
    finally:
        bar.empty()
    r = run.report
    st.session_state[LAST] = {
        "kept": r.kept,
        "missing": run.missing,
        "text": (
            f"Episodes: **{r.kept}** stored from {r.episodes} played on "
            f"{studio.plural(r.tasks - r.skipped_stored, 'blueprint')}; {r.skipped_stored} "
            f"skipped (episodes of this engine and model stored already); {r.below_min_reward} "
            f"below the minimum reward, {r.duplicates} duplicate(s); "
            f"{len(r.unsolved)} blueprint(s) with none kept."
        ),
    }
