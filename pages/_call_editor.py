"""The tool-call editor that the Corpus, Blueprints and Review pages share: a form per tool, or the
call as raw JSON. Building and checking the call is `codesearch_core.studio`'s; this only draws it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

import streamlit as st

from codesearch_core.models import ToolName, canonical_json
from codesearch_core.studio import (
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
        shown = st.session_state.get(f"{key}:call")
        # A page handing back the call this editor made on the last run (a draft that follows the
        # form, the call just run) is no new call: re-keying the widgets for it would drop the edit
        # made since (bug 2 of the review issue: every other edit was lost).
        if (
            f"{key}:version" not in st.session_state
            or not shown
            or (canonical_json(shown) != fingerprint)
        ):
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


def explain_not_runnable(result: FormResult) -> None:
    """Say why a Run click did nothing. The Run buttons are never greyed for an invalid call: a
    text field commits only on Enter or blur, so a button greyed by the last committed value stays
    grey while the person types and swallows the click that would have committed it (issue 29)."""
    why = next(iter(result.errors.values()), "the call is not complete")
    st.error(f"The call cannot run yet: {why}", icon=":material/rule:")


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
