"""Team & audit: who is in the studio with which role (admins change roles), and every change
made in it, filtered by when, who and what (leads and admins)."""

from __future__ import annotations

import json
from datetime import date, datetime, time, timedelta

import pandas as pd
import streamlit as st

from codesearch_core.access import Action, Role
from codesearch_core.errors import CodesearchError
from codesearch_core.store import AuditFilters, utc_now
from pages import _identity, _shared

_shared.ensure_routed()

LIMIT = 1000

store = _shared.get_store()
st.title("Team & audit")
if refused := _shared.denial(Action.VIEW_AUDIT):
    st.info(f"Not for you: {refused}.", icon=":material/lock:")
    st.stop()

st.subheader("People", anchor=False)
people = store.users()
if people:
    st.dataframe(
        pd.DataFrame(
            [
                {"name": u.name, "role": str(u.role), "added by": u.added_by, "since": u.added_at}
                for u in people
            ]
        ),
        hide_index=True,
    )
else:
    st.caption("Nobody has logged in yet (in local mode nobody does: the studio is yours).")
if (roles_note := _identity.current().settings.mode.roles_note) is not None:
    st.info(roles_note, icon=":material/info:")
if not_admin := _shared.denial(Action.MANAGE_USERS):
    st.caption(f"Changing roles: {not_admin}.")
else:
    with st.form("team:role", border=False):
        r1, r2, r3 = st.columns([3, 2, 1], vertical_alignment="bottom")
        name = r1.text_input(
            "Name (as they log in)", key="team:name", placeholder="ann@example.com"
        )
        role = r2.selectbox("Role", [str(r) for r in Role], key="team:role_value")
        if r3.form_submit_button("Set role", icon=":material/manage_accounts:"):
            try:
                old = store.set_role(name, role)
                st.success(f"{name.strip()}: {old or 'new'} → {role}.", icon=":material/check:")
            except CodesearchError as err:
                st.error(f"Not changed: {err}", icon=":material/error:")

st.subheader("Audit trail", anchor=False)
a1, a2, a3 = st.columns(3)
since_day = a1.date_input("Since", value=(utc_now() - timedelta(days=7)).date(), key="audit:since")
actor = a2.selectbox("Who", ["", *(u.name for u in people)], key="audit:actor",
                     format_func=lambda n: n or "anyone", accept_new_options=True)  # fmt: skip
families = sorted({a.split(".")[0] for a in store.audit_actions()} | set(store.audit_actions()))
action = a3.selectbox("What", ["", *families], key="audit:action",
                      format_func=lambda a: a or "any change")  # fmt: skip
since = datetime.combine(since_day, time()) if isinstance(since_day, date) else None
entries = store.audit_log(AuditFilters(since=since, actor=actor or "", action=action or ""),
                          limit=LIMIT)  # fmt: skip
st.caption(f"{len(entries):,} change{'' if len(entries) == 1 else 's'}, newest first" + (f" (the latest {LIMIT:,})"
           if len(entries) == LIMIT else "") + " · times in UTC.")  # fmt: skip
if entries:
    st.dataframe(
        pd.DataFrame(
            [
                {
                    "when": e.at,
                    "who": e.actor,
                    "role": e.role,
                    "how": e.mode,
                    "what": e.action,
                    "on": e.target,
                    "detail": json.dumps(e.detail, ensure_ascii=False),
                }
                for e in entries
            ]
        ),
        hide_index=True,
        width="stretch",
    )
