"""Propose: pick blueprints and an engine, make proposals, store them as they arrive, then execute
and grade them (verify)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import cast

import streamlit as st

from codesearch_core import corpora, ingest, studio
from codesearch_core.engines import (
    DEFAULT_RULES,
    DEFAULT_SYSTEM,
    PRESETS,
    SCHEMA_MODES,
    TOOL_FORMATS,
    Engine,
    Example,
    MutationEngine,
    OpenAIEngine,
    OpenAISchemaMode,
    OpenAISettings,
    PromptConfig,
    SamplingSettings,
    SchemaMode,
    build_messages,
    messages_to_text,
)
from codesearch_core.errors import CodesearchError
from codesearch_core.models import Blueprint, ToolName
from codesearch_core.store import BlueprintFilters, QueueFilters
from codesearch_core.tools import OPENAI_TOOLS
from codesearch_core.verify import VerifyProgress, verify_pending
from pages import _rollouts, _shared, _vllm

_shared.ensure_routed()

ANY = "any"
KINDS = {
    "mutations": "Mutations (built in)",
    "vllm": "vLLM in this process",
    "openai": "OpenAI-compatible server",
    "import": "Upload proposals JSONL",
}
LAST_RUN = "propose_last_run"  # what the last run did, shown after a rerun (or a stop)
#: Below this many pending proposals verification runs inline: a process pool costs more to start.
INLINE_VERIFY_BELOW = 200

store = _shared.get_store()
st.title("Propose")


def _verify(progress_text: str = "Executing and grading") -> None:
    """Execute and grade every pending proposal, with a progress bar; results stored as they come."""
    counts = store.counts()
    pending = counts.proposals - counts.executed
    if pending <= 0:
        return
    bar = st.progress(0.0, text=f"{progress_text}: 0 of {pending}")

    def on_progress(p: VerifyProgress) -> None:
        total = p.total or pending
        bar.progress(min(p.done / max(total, 1), 1.0), text=f"{progress_text}: {p.done} of {total}")

    report = verify_pending(
        store, workers=1 if pending < INLINE_VERIFY_BELOW else None, on_progress=on_progress
    )
    bar.empty()
    st.session_state[LAST_RUN] = {
        **st.session_state.get(LAST_RUN, {}),
        "verified": report.count,
        "verify_errors": report.errors,
        "mean_f1": report.mean_f1,
        "skipped": dict(report.skipped),
    }


# --- blueprints ---------------------------------------------------------------------------------

st.subheader("1 · Blueprints", anchor=False)
chosen_ids: list[str] | None = st.session_state.get(_shared.PROPOSE_SELECTION)
blueprints: list[Blueprint]
if chosen_ids:
    blueprints = store.blueprints.get_many(chosen_ids)
    c1, c2 = st.columns([4, 1])
    c1.info(f"{studio.plural(len(blueprints), 'blueprint')} selected on the Blueprints page: "
            + ", ".join(f"`{b.id}`" for b in blueprints[:8])
            + (" …" if len(blueprints) > 8 else ""), icon=":material/checklist:")  # fmt: skip
    if c2.button("Use filters instead", icon=":material/filter_list:"):
        st.session_state.pop(_shared.PROPOSE_SELECTION, None)
        st.rerun()
else:
    f1, f2, f3, f4, f5 = st.columns([2, 1, 1, 1, 1])
    text = f1.text_input("Intent contains", key="pf:text", placeholder="any")
    corpus_name = f2.selectbox("Corpus", [ANY, *corpora.list_corpora()], key="pf:corpus")
    tool = f3.selectbox("Tool", [ANY, *(t.value for t in ToolName)], key="pf:tool")
    tag = f4.text_input("Tag", key="pf:tag", placeholder="any")
    limit = int(f5.number_input("At most", 1, 100_000, 1000, step=100, key="pf:limit"))
    filters = BlueprintFilters(
        text=text.strip() or None,
        corpus=None if corpus_name == ANY else corpus_name,
        tool=None if tool == ANY else tool,
        tag=tag.strip() or None,
    )
    blueprints = studio.all_blueprints(store, filters, limit=limit)
    st.caption(f"{studio.plural(len(blueprints), 'blueprint')} match.")

# --- engine -------------------------------------------------------------------------------------

st.subheader("2 · Engine", anchor=False)
kind = st.segmented_control(
    "Engine", list(KINDS), format_func=KINDS.__getitem__, default="mutations", key="pe:kind",
    required=True, label_visibility="collapsed",
)  # fmt: skip
engine: Engine | None = None
n = 1
sampling: SamplingSettings | None = None
chunk_size = 32
upload = None
template_tools = False

with st.container(border=True):
    if kind == "mutations":
        st.caption("Plausible wrong calls made from each reference call (dropped pcre2, swapped "
                   "file type, regex instead of structure, …): hard negatives, no model needed.")  # fmt: skip
        n = int(st.columns(4)[0].number_input("Mutations per blueprint", 1, 12, 3, key="pe:mut_n"))
        engine = MutationEngine()
        chunk_size = 64
    elif kind == "vllm":
        presets = {p.hf_id: p for p in PRESETS}
        m1, m2 = st.columns([3, 2])
        preset_id = m1.selectbox(
            "Model", [*presets, "other"], key="pe:vllm_preset",
            format_func=lambda k: "Other (a Hugging Face id or a local directory)" if k == "other"
            else f"{k} · {presets[k].params_b:g}B · {presets[k].context_tokens:,} tokens",
        )  # fmt: skip
        preset = presets.get(preset_id)
        model = preset_id
        if preset is None:
            model = m2.text_input("Model id or path", key="pe:vllm_model").strip()
        else:
            m2.caption(preset.notes)
        # Widgets keyed by preset: choosing a model brings back its own defaults (and your edits).
        key = f"{preset_id}"
        v1, v2, v3, v4 = st.columns(4)
        tp = int(v1.number_input("Tensor parallel", 1, 8, 2, key=f"pe:vllm_tp:{key}"))
        max_len = int(v2.number_input(
            "Max model len", 256, 1_048_576, preset.max_model_len if preset else 4096, step=1024,
            key=f"pe:vllm_len:{key}"))  # fmt: skip
        gpu_util = float(v3.slider("GPU memory", 0.1, 1.0, 0.9, key="pe:vllm_gpu"))
        eager = v4.toggle("Eager (no CUDA graphs; always on a CPU)", key="pe:vllm_eager")
        f1, f2, f3, f4 = st.columns(4)
        formats = list(TOOL_FORMATS)
        tool_format = f1.selectbox(
            "Tool format", formats, formats.index(preset.tool_format if preset else "hermes"),
            key=f"pe:vllm_format:{key}", format_func=lambda f: TOOL_FORMATS[f].label,
            help="The syntax the model's chat template teaches; the answer is read in it. json: "
                 "the tools described in the system prompt, for models without a tool template.",
        )  # fmt: skip
        dtypes = ["auto", "bfloat16", "float16", "float32"]
        dtype = f2.selectbox("dtype", dtypes, dtypes.index(preset.dtype if preset else "auto"),
                             key=f"pe:vllm_dtype:{key}",
                             help="auto: the dtype the weights are stored in")  # fmt: skip
        kv_gib = float(f3.number_input(
            "KV cache GiB (0: automatic)", 0.0, 1024.0, 0.0, step=1.0, key="pe:vllm_kv",
            help="0: vLLM's memory fraction on a GPU, 2 GiB on a CPU"))  # fmt: skip
        compact = f4.toggle("Compact JSON", True, key="pe:vllm_compact",
                            help="No whitespace between JSON tokens: fewer tokens")  # fmt: skip
        s1, s2, s3, s4 = st.columns(4)
        temperature = float(s1.slider("Temperature", 0.0, 2.0, preset.temperature if preset
                                      else 0.7, key=f"pe:t:{key}"))  # fmt: skip
        top_p = float(s2.slider("Top p", 0.05, 1.0, preset.top_p if preset else 0.95,
                                key=f"pe:top_p:{key}"))  # fmt: skip
        n = int(s3.number_input("Samples per blueprint (n)", 1, 16, 1, key="pe:n"))
        max_tokens = int(s4.number_input("Max tokens", 16, 4096, 512, key="pe:max_tokens"))
        sampling = SamplingSettings(temperature=temperature, top_p=top_p, max_tokens=max_tokens)
        template_tools = TOOL_FORMATS[tool_format].template_tools
        chunk_size = 64
        if not _vllm.vllm_installed():
            st.warning("vLLM is not installed in this environment: `uv sync --extra vllm` on a "
                       "GPU machine, or use an OpenAI-compatible server.", icon=":material/memory:")  # fmt: skip
        elif model:
            with _shared.shown_errors():
                settings = _vllm.vllm_settings(
                    model=model, tensor_parallel_size=tp, max_model_len=max_len,
                    gpu_memory_utilization=gpu_util, enforce_eager=eager or None, dtype=dtype,
                    tool_format=tool_format, compact_json=compact, kv_cache_gib=kv_gib or None,
                    chat_template_kwargs=preset.chat_template_kwargs if preset else (),
                )  # fmt: skip
                engine = _vllm.vllm_engine_status(settings, load=st.button(
                    "Load the model", icon=":material/memory:", key="pe:vllm_load"))  # fmt: skip
    elif kind == "openai":
        o1, o2 = st.columns([3, 2])
        urls = o1.text_area("Base URLs (one per line)", "http://127.0.0.1:8000/v1",
                            key="pe:oa_urls", height=80)  # fmt: skip
        model = o2.text_input("Model", key="pe:oa_model", placeholder="as the server names it")
        api_key = o2.text_input("API key", type="password", key="pe:oa_key",
                                placeholder="optional")  # fmt: skip
        q1, q2 = st.columns(2)
        schema_mode_oa = q1.selectbox(
            "How the server is asked", SCHEMA_MODES, key="pe:oa_mode",
            format_func=lambda m: {
                "tools": "tools · tool_choice required (any server)",
                "tools_compact": "tools · compact JSON between the markers (vLLM)",
                "response_format": "json · response_format schema",
                "structured_outputs": "json · vLLM structured_outputs",
                "none": "json · no schema",
            }[m],
            help="tools: start vLLM with --enable-auto-tool-choice --tool-call-parser <format>",
        )  # fmt: skip
        formats = list(TOOL_FORMATS)
        oa_format = q2.selectbox("Tool format", formats, 0, key="pe:oa_format",
                                 format_func=lambda f: TOOL_FORMATS[f].label)  # fmt: skip
        template_tools = schema_mode_oa in ("tools", "tools_compact")
        s1, s2, s3, s4 = st.columns(4)
        temperature = float(s1.slider("Temperature", 0.0, 2.0, 0.7, key="pe:oa_t"))
        top_p = float(s2.slider("Top p", 0.05, 1.0, 0.95, key="pe:oa_top_p"))
        n = int(s3.number_input("Samples per blueprint (n)", 1, 16, 1, key="pe:oa_n"))
        concurrency = int(s4.number_input("Parallel requests", 1, 64, 8, key="pe:oa_conc"))
        sampling = SamplingSettings(temperature=temperature, top_p=top_p)
        chunk_size = 4 * concurrency
        base_urls = tuple(u.strip() for u in urls.splitlines() if u.strip())
        with _shared.shown_errors():
            if model.strip():
                engine = OpenAIEngine(
                    OpenAISettings(base_urls=base_urls, model=model.strip(),
                                   api_key=api_key or None, max_concurrency=concurrency,
                                   schema_mode=cast(OpenAISchemaMode, schema_mode_oa),
                                   tool_format=oa_format)
                )  # fmt: skip
            else:
                st.caption(":red[Give the model name the server serves.]")
        if base_urls and st.button("Test the connection", icon=":material/lan:", key="pe:oa_test"):
            with _shared.shown_errors():
                served = studio.probe_openai_server(base_urls[0], api_key or None)
                st.success(f"Reachable; it serves: {', '.join(served) or '(no models listed)'}")
    else:
        st.caption("Proposals made elsewhere (e.g. a batch job on a GPU cluster), one JSON object "
                   "per line with `blueprint_id` and `raw_text` or `call`.")  # fmt: skip
        upload = st.file_uploader("Proposals JSONL", type=["jsonl", "json", "txt"], key="pe:upload",
                                  max_upload_size=_shared.max_upload_mb())  # fmt: skip

prompt_config: PromptConfig | None = None
examples: list[Example] = []
if kind in ("vllm", "openai"):
    with st.expander("Prompt", icon=":material/chat:"):
        system = st.text_area("System message", DEFAULT_SYSTEM, key="pp:system", height=68)
        p1, p2, p3 = st.columns(3)
        with_rules = p1.toggle("Rules on choosing and writing the call", True, key="pp:rules")
        schema_mode = p2.segmented_control(
            "Tool schema in the prompt", ["compact", "full", "none"], default="compact",
            key="pp:schema", required=True, disabled=template_tools,
            help="Only for the json format: a tool template shows the model the tools itself.",
        )  # fmt: skip
        shots = int(p3.number_input("Few-shot examples (accepted items)", 0, 8, 0, key="pp:shots"))
        prompt_config = PromptConfig(
            system=system, rules=DEFAULT_RULES if with_rules else (),
            schema=cast(SchemaMode, schema_mode or "compact"), max_examples=shots,
        )  # fmt: skip
        examples = studio.accepted_examples(store, shots)
        if shots and len(examples) < shots:
            st.caption(f"Only {len(examples)} accepted items to draw examples from.")
        if blueprints:
            st.caption(f"The prompt for `{blueprints[0].id}`:")
            messages = build_messages(blueprints[0].intent, prompt_config, examples,
                                      template_tools=template_tools)  # fmt: skip
            st.code(messages_to_text(messages), language="text", wrap_lines=True, height=240)
            if template_tools:
                st.caption(f"The {len(OPENAI_TOOLS)} tools (the same `tools` list the exports "
                           "write) go to the model's chat template, which renders them with "
                           "these messages in the model's own format.")  # fmt: skip

if engine is not None:
    _shared.set_active_engine(kind or "mutations", f"{KINDS[kind or 'mutations']} · {engine.model}")

# --- run ----------------------------------------------------------------------------------------

st.subheader("3 · Run", anchor=False)
r1, r2, r3, _ = st.columns([1, 1, 1, 2])
ready = (engine is not None and bool(blueprints)) or (kind == "import" and upload is not None)
start = r1.button("Propose", type="primary", icon=":material/play_arrow:", disabled=not ready,
                  key="propose_start", width="stretch")  # fmt: skip
# Clicking Stop during a run interrupts it: Streamlit stops the script at its next progress update,
# after the chunk in hand is stored, and reruns the page (which shows what was done).
stop = r2.button("Stop", icon=":material/stop:", key="propose_stop", width="stretch")
verify_now = r3.button("Verify pending", icon=":material/rule:", key="propose_verify",
                       width="stretch", help="Execute and grade proposals not run yet.")  # fmt: skip
if stop:
    st.warning("Stopped. What was proposed before the stop is stored; verify it below.",
               icon=":material/stop_circle:")  # fmt: skip

if start:
    try:
        if kind == "import" and upload is not None:
            with tempfile.TemporaryDirectory() as tmp:
                path = Path(tmp) / "upload.jsonl"
                path.write_bytes(upload.getvalue())
                report = ingest.import_proposals_jsonl(store, path, source=f"upload:{upload.name}")
            st.session_state[LAST_RUN] = {"engine": "import", "proposals": report.new + report.existing,
                                          "new": report.new}  # fmt: skip
        elif engine is not None:
            if kind == "openai":
                # Fail at once on a server that is down, not after every request's retries.
                for url in base_urls:
                    studio.probe_openai_server(url, api_key or None)
            bar = st.progress(0.0, text="Proposing…")
            st.session_state[LAST_RUN] = {"engine": engine.name}

            def on_chunk(p: studio.ProposeProgress) -> None:
                st.session_state[LAST_RUN] = {"engine": engine.name if engine else "",
                                              "proposals": p.proposals, "new": p.new,
                                              "invalid": p.invalid}  # fmt: skip
                bar.progress(
                    p.blueprints_done / max(p.blueprints_total, 1),
                    text=f"Proposing: {p.blueprints_done} of {p.blueprints_total} blueprints · "
                    f"{p.proposals} proposals",
                )

            studio.propose_into_store(store, engine, blueprints, n=n, settings=sampling,
                                      chunk_size=chunk_size, prompt=prompt_config,
                                      examples=examples, on_chunk=on_chunk)  # fmt: skip
            bar.empty()
        _verify()
    except CodesearchError as err:
        st.error(f"The run stopped: {err}\n\nProposals stored before the error are kept.",
                 icon=":material/error:")  # fmt: skip
elif verify_now:
    with _shared.shown_errors():
        _verify()

last = st.session_state.get(LAST_RUN)
if last:
    parts = [f"**{last.get('proposals', 0)}** proposals ({last.get('new', 0)} new)"]
    if last.get("invalid"):
        parts.append(f"{last['invalid']} invalid")
    if "verified" in last:
        parts.append(f"{last['verified']} executed and graded, mean span F1 {last['mean_f1']:.2f}")
    st.success("Last run: " + " · ".join(parts), icon=":material/task_alt:")
    for corpus, n in last.get("skipped", {}).items():
        st.warning(f"{n} proposal(s) left pending: their corpus `{corpus}` is not on this "
                   "machine. Add it on the Corpus page, then verify again.",
                   icon=":material/folder_off:")  # fmt: skip
counts = store.counts()
st.caption(f"Store: {counts.proposals} proposals · {counts.proposals - counts.executed} not "
           f"executed yet · {counts.undecided} undecided")  # fmt: skip
if counts.undecided and st.button("Review them", icon=":material/fact_check:", key="to_review"):
    engine_name = (last or {}).get("engine")
    _shared.go_to(
        _shared.PAGE_REVIEW,
        params=studio.filters_to_params(QueueFilters(engine=engine_name or None)),
    )

# --- episodes -----------------------------------------------------------------------------------

_rollouts.section(store, blueprints, engine if kind in ("openai", "vllm") else None, sampling)
