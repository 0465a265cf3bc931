"""Export: curated items out of the store in one trainer's layout (xLAM, Hugging Face chat /
preference / GRPO prompts, OpenAI SFT / DPO, LLaMA-Factory ShareGPT, and the older chat and pairs),
or the gym's accepted episodes, multi-turn (hf-agent, openai-sft-agent, sharegpt-agent: written
through the gym, which replays each one first), previewed, counted, downloaded or written to a path
with a manifest and a dataset card beside it."""

from __future__ import annotations

import tempfile
from dataclasses import replace
from pathlib import Path

import streamlit as st

from codesearch_core import config
from codesearch_core.access import Action
from codesearch_core.errors import CodesearchError
from codesearch_core.export import (
    ALWAYS_REFERENCE,
    EPISODE_FORMATS,
    EXPORT_RULE,
    FORMAT_READERS,
    GYM_FORMATS,
    OBSERVED,
    RANKED,
    ExportFormat,
    Manifest,
    export,
    export_path,
    preview,
)
from codesearch_core.gym import (
    episode_export_counts,
    episode_frame,
    export_episodes,
    export_step_pairs,
)
from codesearch_core.models import ToolName
from codesearch_core.store import DecisionState, QueueFilters
from pages import _shared

_shared.ensure_routed()

ANY = "any"
FORMATS = {f.value: f"{f.value}: {FORMAT_READERS[f]}" for f in ExportFormat}
LAST_MANIFEST = "export_manifest"
COUNTED = "export_counted"  # (the export's settings, its record count) from the last count
PREVIEW_RECORDS = 3

store = _shared.get_store()
st.title("Export")
# Who may export is checked again by `export` itself; this only says so before anyone tries.
refused = _shared.denial(Action.EXPORT)
if refused:
    st.info(f"You can see what an export would hold, but not preview or write it: {refused}.",
            icon=":material/lock:")  # fmt: skip

fmt_value = st.selectbox("Format", list(FORMATS), format_func=FORMATS.__getitem__, key="ex:format",
                         help="Each layout is the one its reader takes; docs/exports.md lists them.")  # fmt: skip
fmt = ExportFormat(fmt_value or ExportFormat.XLAM.value)
agent = fmt in EPISODE_FORMATS  # the gym's episodes, not curated items
steps = fmt is ExportFormat.DPO_STEPS  # reviewers' corrected steps of the gym's episodes

with st.container(border=True):
    f1, f2, f3, f4, f5 = st.columns(5)
    tool = f1.selectbox("Tool", [ANY, *(t.value for t in ToolName)], key="ex:tool")
    language = f2.text_input("Language", key="ex:language", placeholder="any")
    tag = f3.text_input("Tag", key="ex:tag", placeholder="any")
    engine = f4.text_input("Engine", key="ex:engine", placeholder="any")
    min_f1 = float(f5.slider("Min span F1", 0.0, 1.0, 0.0, step=0.05, key="ex:min_f1"))
    o1, o2, o4, o3 = st.columns([2, 2, 2, 1])
    with_meta = o1.toggle("With metadata (hashes, grades, decision provenance)", key="ex:meta")
    include_reference = o2.toggle(
        "Also the reference call of each blueprint (gold items)", key="ex:reference",
        disabled=fmt in ALWAYS_REFERENCE or agent or steps,
        help="The preference formats and the GRPO prompts always use the blueprints.",
    )  # fmt: skip
    include_eval = o4.toggle(
        "Include the eval split", key="ex:eval",
        help="Blueprints marked split: eval are held out of exports (and counted in the "
        "manifest) unless this is on: they are for scoring models (codesearch eval).",
    )  # fmt: skip
    license_field = o3.text_input("Card license", value="other", key="ex:license")
filters = QueueFilters(
    tool=None if tool == ANY else tool,
    language=language.strip() or None,
    tag=tag.strip() or None,
    engine=engine.strip() or None,
    min_f1=min_f1 or None,
)
include_reference = include_reference and fmt not in ALWAYS_REFERENCE and fmt not in GYM_FORMATS
held_out = store.export_blueprint_counts(filters)["eval"]
if held_out and not include_eval:
    st.caption(f"{held_out:,} blueprint(s) of the eval split are held out of this export.")

k1, k2, k3 = st.columns(3)
if agent:
    counts = episode_export_counts(store, filters, include_eval=include_eval)
    going = counts.pop("episodes")
    k1.metric("Episodes", f"{going:,}", help="accepted, on a corpus that is here, matching the "
              "filters: the episodes this export writes")  # fmt: skip
    k2.metric("Corpus gone", f"{counts.pop('corpus_gone', 0):,}",
              help="accepted episodes whose corpus is no longer here: kept, not exported")  # fmt: skip
else:
    counts = store.export_answer_counts(
        filters if include_eval else replace(filters, split="train")
    )
    accepted = counts.pop("answers")  # what the export rule takes; the rest is what it leaves out
    rejected = store.review_queue(replace(filters, decision=DecisionState.REJECTED), limit=0).total
    k1.metric("Accepted items", f"{accepted:,}", help="resolved as accepted, ran ok, graded now")
    k2.metric("Rejected items", f"{rejected:,}", help="the rejected side of preference pairs")
if agent:
    k3.metric("Records", f"{going:,}", help="one multi-turn conversation per episode")
elif steps:
    k3.metric("Pairs", f"{len(store.steps.corrections()):,}",
              help="one per corrected episode not rejected in review (`codesearch review correct`)")  # fmt: skip
elif fmt is ExportFormat.PAIRS:
    k3.metric(
        "Pairs", f"{rejected:,}", help="one per rejected item, when its blueprint has a chosen call"
    )
elif fmt in RANKED or fmt is ExportFormat.HF_PROMPTS:
    # These are only known by building them (pairs are ranked, prompts skip plans): counted on a
    # click, into a temporary file, so the count is there before anything is written (issue 29).
    what = "Pairs" if fmt in RANKED else "Prompts"
    settings = repr((fmt, filters, with_meta, include_reference, include_eval))
    counted = st.session_state.get(COUNTED)
    if counted and counted[0] == settings:
        k3.metric(what, f"{counted[1]:,}", help="counted by building the export once")
    elif k3.button(f"Count the {what.lower()}", icon=":material/functions:", key="ex:count",
                   disabled=bool(refused), help=refused):  # fmt: skip
        with _shared.shown_errors("Not counted: "), tempfile.TemporaryDirectory() as tmp:
            rows = export(store, fmt, Path(tmp) / "count.jsonl", filters=filters,
                          with_meta=with_meta, include_reference=include_reference,
                          include_eval=include_eval).rows  # fmt: skip
            st.session_state[COUNTED] = (settings, rows)
            st.rerun()
else:
    k3.metric("Records", f"{accepted:,}" + (" + gold" if include_reference else ""))

st.caption(f"**Rule**: {EXPORT_RULE}.")
if fmt in OBSERVED:
    st.caption("Each call is run again when written: the tool turn holds its real output.")
if agent:
    st.caption("Each episode is replayed in the gym before the file is put in place: the tool "
               "messages must be what the gym answers now, or nothing is written.")  # fmt: skip
if any(counts.values()):
    st.caption(
        ("Left out: " if agent else "Left out as answers: ")
        + " · ".join(f"{n:,} {k.replace('_', ' ')}" for k, n in counts.items() if n)
    )

st.subheader("Preview", anchor=False)
with _shared.shown_errors():
    first = [] if refused else preview(store, fmt, filters, limit=PREVIEW_RECORDS, with_meta=with_meta,
                    include_reference=include_reference, include_eval=include_eval,
                    frame=episode_frame() if fmt in GYM_FORMATS else None)  # fmt: skip
    if not first and not refused:
        st.info("Nothing to export with these filters: " + (
                "play episodes (`codesearch rollouts`) and accept some in the Episodes queue."
                if agent else "accept some items on the Review page (or include the reference "
                "calls)."), icon=":material/info:")  # fmt: skip
    for i, record in enumerate(first, start=1):
        with st.expander(f"Record {i}", expanded=i == 1):
            # The top level only: a fully opened record ran to 9,000 px and pushed Write and
            # Download out of reach (issue 29); the reader opens what they want to see.
            st.json(record, expanded=1)


def _write(path: Path, license: str) -> Manifest:
    """The export written to `path`: the gym's episodes through its replay check, or the items."""
    if steps:
        return export_step_pairs(store, path, filters=filters, with_meta=with_meta,
                                 include_eval=include_eval, license=license)  # fmt: skip
    if agent:
        return export_episodes(store, fmt, path, filters=filters, with_meta=with_meta,
                               include_eval=include_eval, license=license)[0]  # fmt: skip
    return export(store, fmt, path, filters=filters, with_meta=with_meta,
                  include_reference=include_reference, include_eval=include_eval,
                  license=license)  # fmt: skip


st.subheader("Write", anchor=False)
st.caption(f"Exports are written under `{config.exports_dir()}` (a manifest beside each file).")
w1, w2, w3 = st.columns([4, 1, 1])
name = w1.text_input("File name", value=f"{fmt.value}.jsonl", key=f"ex:path:{fmt.value}",
                     label_visibility="collapsed")  # fmt: skip
# Where the file goes, said before Write is pressed (a refused name says why here too).
with _shared.shown_errors("Cannot be written there: "):
    st.caption(f"Will be written to `{export_path(name)}`, with its manifest and card beside it.")
if w2.button("Write", type="primary", icon=":material/save:", key="ex:write", width="stretch",
             disabled=bool(refused), help=refused):  # fmt: skip
    # Only the latest write's outcome is shown: an earlier success never stays beside a failure.
    st.session_state.pop(LAST_MANIFEST, None)
    try:
        manifest = _write(export_path(name), license_field.strip() or "other")
        st.session_state[LAST_MANIFEST] = manifest.to_dict()
    except (CodesearchError, OSError) as err:
        st.error(f"Not written: {err}", icon=":material/error:")


def _export_bytes() -> bytes:
    # Runs when the button is clicked (deferred): the export is built then, not on every rerun.
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{fmt.value}.jsonl"
        _write(path, "other")
        return path.read_bytes()


w3.download_button("Download", data=_export_bytes, file_name=f"{fmt.value}.jsonl",
                   mime="application/jsonl", icon=":material/download:", width="stretch",
                   key="ex:download", disabled=bool(refused), help=refused)  # fmt: skip

manifest_dict = st.session_state.get(LAST_MANIFEST)
if manifest_dict:
    st.success(f"Wrote **{manifest_dict['rows']:,}** records ({manifest_dict['bytes']:,} bytes) to "
               f"`{manifest_dict['path']}`", icon=":material/task_alt:")  # fmt: skip
    st.markdown("**Manifest**")
    st.json(manifest_dict, expanded=True)
    written = Path(manifest_dict["path"])
    if written.is_file():
        st.download_button("Download the written file", data=written.read_bytes(),
                           file_name=written.name, mime="application/jsonl",
                           key="ex:download_written")  # fmt: skip
