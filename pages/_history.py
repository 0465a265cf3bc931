"""The browser history the studio leaves behind, so Back and Forward walk what the person did.

Streamlit pushes a history entry for every change of the address a script run makes. Most of the
studio's changes only fill the address in for what is already on screen (the reviewer's name after
a sidebar link dropped it, the item the Review card opened on, a page's defaults): each pushed an
entry that Back returned to, only for the page to fill it in again, so Back seemed to do nothing
(issue 29). This keeps a push that only adds parameters to the same page's address as a replace;
a push that changes a value (another item, another queue) or the page stays a new entry.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import streamlit as st

from pages import _shared

_SCRIPT: Final = """<script>
if (!window.__codesearchHistory) {
  window.__codesearchHistory = true;
  const push = window.history.pushState.bind(window.history);
  const fillsIn = (url) => {
    const now = new URL(window.location.href), next = new URL(url, now);
    if (next.pathname !== now.pathname) return false;
    for (const [key, value] of now.searchParams) {
      if (next.searchParams.get(key) !== value) return false;
    }
    return true;
  };
  window.history.pushState = (state, title, url) =>
    url != null && fillsIn(url)
      ? window.history.replaceState(state, title, url)
      : push(state, title, url);
}
</script>"""


def keep_back_meaningful() -> None:
    """Install the history rule in the page (once per browser tab; later calls do nothing)."""
    st.html(_SCRIPT, unsafe_allow_javascript=True)


_ADDRESSED: Final = "addressed:"  # + a parameter: the value this session last wrote for it


def follow_address(param: str, key: str, options: Sequence[str] | None = None) -> None:
    """Before the widget `key` is drawn: an address value of `param` that this session did not
    write (a link opened, a reload, Back or Forward) picks that option (None: any text, for a text
    box); one it wrote leaves the widget be."""
    value = st.query_params.get(param)
    if value is None or value == st.session_state.get(_ADDRESSED + param):
        return
    if options is None or value in options:
        st.session_state[key] = value


def write_address(param: str, value: str | None) -> None:
    """Put the widget's value in the address (after `follow_address` and the widget)."""
    st.session_state[_ADDRESSED + param] = value
    _shared.sync_params({param: value})
