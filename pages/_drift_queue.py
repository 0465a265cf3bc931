"""The Review page's Drift queue: items whose findings changed when `codesearch verify --stale`
re-ran them on a new corpus snapshot or tool version, with the findings before and after marked
in the files; a lead keeps or rejects an accepted proposal, or takes or keeps a reference's spans.
Accepted items in drift are held out of exports until decided. Its decide, skip and undo are the
shared review flow's (`pages/_item_queue.py`); what is its own is the table it picks from, the
card, and the words of its A and X: the resolution each makes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

import pandas as pd
import streamlit as st

from codesearch_core import corpora
from codesearch_core.access import Action
from codesearch_core.models import DecisionAction, Span
from codesearch_core.store import DRIFT, DriftFilters, DriftItem, Store
from codesearch_core.studio import Mark, Tone, hit_windows, reject_reasons, render_lines_html
from pages import _bulk, _identity, _item_queue, _queue_filter, _queue_frame, _shared

MAX_FILES: Final = 8
#: The queue's answers on A and X, in the order of a card's choices (`queue_kinds.DRIFT_RESOLUTIONS`).
_ANSWERS: Final = (DecisionAction.ACCEPT, DecisionAction.REJECT)


def _said(store: Store, item_id: str, action: DecisionAction, final: bool) -> str:
    """A decision's message: the resolution it made (kept, rejected, updated), or a skip's."""
    if action is DecisionAction.SKIP:
        return f"{item_id}: skipped, it stays open"
    item = store.drift.get(item_id)
    return f"{item_id}: {item.resolution if item is not None else action.value}"


QUEUE: Final = _item_queue.Flow(
    kind=DRIFT, state="drift", widgets="drift", noun="drift item", said=_said,
    undone=lambda item_id: f"{item_id}: undone, it is open again",
)  # fmt: skip


def draw(store: Store, counts: Mapping[str, int]) -> None:
    """The queue; `counts` are the queue's `counts()`, read once by the queue picker; the table
    lists the open items the typed filter selects."""
    held = store.drift.held_out()
    st.caption(
        f"Drift: {counts['open']} item(s) whose findings changed on a new corpus snapshot or tool "
        f"version · {held} accepted item(s) held out of exports until decided. "
        "`codesearch verify --stale` fills this queue."
    )
    typed = _queue_filter.box(DRIFT)  # e.g. "drifted=reference", "text=bp-001"
    _bulk.filtered_bulk(store, DRIFT, typed)
    items = store.drift.open(typed.filters if isinstance(typed.filters, DriftFilters) else None)
    QUEUE.flash()
    if not items:
        st.info("Nothing in drift." if typed.filters is None else "No drift item under this "
                "filter.", icon=":material/inbox:")  # fmt: skip
        return
    table = pd.DataFrame(
        {
            "item": [d.item_id for d in items],
            "kind": [d.kind for d in items],
            "blueprint": [d.blueprint_id for d in items],
            "before": [len(d.old_findings) for d in items],
            "after": [len(d.new_findings) for d in items],
            "snapshot": [
                f"{corpora.short_id(d.old_snapshot)} → {corpora.short_id(d.new_snapshot)}"
                for d in items
            ],
        }
    )
    picked = st.dataframe(
        table, hide_index=True, on_select="rerun", selection_mode="single-row", key="drift_table",
        height=min(38 + 35 * len(items), 260),
    )  # fmt: skip
    rows = picked.selection.rows if picked else []
    index = _pick(store, items, rows)
    _card(store, items[index], index + 1, len(items))


def _pick(store: Store, items: list[DriftItem], rows: list[int]) -> int:
    """The item on the card: one put back by Undo, else the row picked in the table, else the
    first the reviewer has not skipped (a skip moves on, as on every queue)."""
    ids = [d.item_id for d in items]
    if (put_back := st.session_state.get(QUEUE.pinned_key)) in ids:
        return ids.index(put_back)
    if rows:
        return rows[0]
    who = _shared.reviewer()
    skipped = {i for i, vote in store.queue(DRIFT).seen(who) if vote == "skip"} if who else set()
    return next((n for n, i in enumerate(ids) if i not in skipped), 0)


def _card(store: Store, item: DriftItem, position: int, total: int) -> None:
    bp = store.blueprints.get(item.blueprint_id)
    with st.container(border=True):
        _queue_frame.position(f"Item {position} of {total}", f"{total} open")
        what = "accepted proposal" if item.kind == "proposal" else "reference call"
        st.markdown(f"**{what}** `{item.item_id}` · blueprint `{item.blueprint_id}`")
        if bp is not None:
            st.markdown(f"> {bp.intent}")
        if item.kind == "proposal":
            stored = store.get_proposal(item.item_id)
            if stored is not None and stored.proposal.call is not None:
                st.code(stored.proposal.call.to_json(), language="json", wrap_lines=True)
        elif bp is not None:
            st.code(bp.reference_call.to_json(), language="json", wrap_lines=True)
        if item.old_tools != item.new_tools and item.old_tools:
            st.caption(f"Tools: {item.old_tools} → {item.new_tools}")
        old, new = set(item.old_findings), set(item.new_findings)
        st.markdown(
            f":green[{len(old & new)} unchanged] · :red[{len(old - new)} gone] · "
            f":orange[{len(new - old)} new]"
        )
        if bp is not None:
            _files(bp.corpus, old, new)
        _actions(store, item)


def _files(corpus: str, old: set[Span], new: set[Span]) -> None:
    """The files where findings changed, first and open; files with unchanged findings only
    behind an expander (a drift is about what changed)."""
    by_file: dict[str, list[Mark]] = {}
    for span in old | new:
        tone = Tone.HIT if span in old and span in new else Tone.MISS if span in old else Tone.EXTRA
        by_file.setdefault(span.path, []).append(Mark(span.start_line, span.end_line, tone))
    changed = sorted(p for p, marks in by_file.items() if any(m.tone != Tone.HIT for m in marks))
    for path in changed[:MAX_FILES]:
        # Only the windows around a change: a file's unchanged findings are in the expander.
        _file(corpus, path, [m for m in by_file[path] if m.tone != Tone.HIT], by_file[path])
    if len(changed) > MAX_FILES:
        st.caption(f"… and {len(changed) - MAX_FILES} more files with changes")
    unchanged = sorted(set(by_file) - set(changed))
    same = sum(m.tone == Tone.HIT for marks in by_file.values() for m in marks)
    if same:
        with st.expander(f"{same} unchanged finding(s)"):
            for path in [*changed, *unchanged][:MAX_FILES]:
                hits = [m for m in by_file[path] if m.tone == Tone.HIT]
                if hits:
                    _file(corpus, path, hits, by_file[path])


def _file(corpus: str, path: str, around: list[Mark], marks: list[Mark]) -> None:
    with _shared.shown_errors():
        lines = _shared.lines_of(corpus, path)
        st.markdown(f"`{path}`")
        for first, last in hit_windows(len(lines), around, context=2):
            st.html(render_lines_html(lines[first - 1 : last], first_line=first, marks=marks))


def _actions(store: Store, item: DriftItem) -> None:
    refused = _shared.denial(Action.RESOLVE)
    who = _identity.ask_name("to decide drift items")
    # The first choice is the keep-as-is answer on A, the second the change on X: the same keys as
    # accept and reject on every other queue.
    if item.kind == "proposal":
        choices = [
            ("kept", "Still right: keep it accepted", ":material/check:", "keep"),
            ("rejected", "Reject it", ":material/close:", "reject"),
        ]
    else:
        choices = [
            ("updated", "Take the new findings as expected", ":material/sync:", "take new"),
            ("kept", "Keep the expected spans", ":material/undo:", "keep"),
        ]
    if who:
        _queue_frame.progress(*store.queue(DRIFT).progress(who))
    _queue_frame.action_row(
        [
            *(
                _queue_frame.Choice(
                    label, icon, f"drift:{resolution}:{item.item_id}", word=word, shortcut=key,
                    primary=key == "A", disabled=refused is not None or not who, help=refused,
                    on_click=QUEUE.decide, args=(item.item_id, action, None), width=2.4,
                )
                for (resolution, label, icon, word), key, action
                in zip(choices, "AX", _ANSWERS, strict=True)
            ),
            _queue_frame.Choice(
                "Skip", ":material/skip_next:", "drift:skip", shortcut="S",
                disabled=refused is not None or not who, help=refused, on_click=QUEUE.decide,
                args=(item.item_id, DecisionAction.SKIP, None), width=1.2,
            ),
            _queue_frame.Choice(
                "Undo", ":material/undo:", "drift:undo", shortcut="U",
                disabled=not who or store.queue(DRIFT).last_undoable(who or "") is None,
                help="Undo your own last drift decision (it is open again)", on_click=QUEUE.undo,
                width=1.2,
            ),
        ],
        note_key=QUEUE.note_key(item.item_id),
        note_placeholder="note · Enter, then A / X / S",
        # X on an accepted proposal rejects it, for a proposal's reasons; on a reference's spans
        # it keeps them: nothing is rejected, so nothing to say why.
        reasons=_queue_frame.Reasons(reject_reasons(DRIFT), QUEUE.reason_key(item.item_id))
        if item.kind == "proposal" else None,
    )  # fmt: skip
