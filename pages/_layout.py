"""Layout rules for narrow windows that Streamlit's settings cannot express (issue 29: at 900 px
the sidebar stayed open on a third of the screen and the review card's buttons were cut to
"rejec").

- The sidebar folds once per tab when the window opens narrower than `NARROW_PX`; the person can
  open it again (it is not hidden, only folded, and not folded again until a reload).
- Enter or Esc leaves the Note and Reviewer fields (`LEAVE_FIELD_SCRIPT`).
- The queue card's action row wraps instead of squeezing its buttons when it is narrower than
  they need (see `ACTION_ROW_CSS`).
"""

from __future__ import annotations

from typing import Final

import streamlit as st

NARROW_PX: Final = 1100

_FOLD_SCRIPT: Final = f"""<script>
if (!window.__codesearchFold) {{
  window.__codesearchFold = true;
  if (window.innerWidth < {NARROW_PX}) {{
    let tries = 0;
    const fold = setInterval(() => {{
      const side = document.querySelector('[data-testid="stSidebar"]');
      const open = side && side.getBoundingClientRect().right > 10 ? side : null;
      const button = document.querySelector('[data-testid="stSidebarCollapseButton"] button');
      // The fold button is only drawn while the pointer is over the sidebar: say it is.
      if (open && !button) open.dispatchEvent(new MouseEvent("mouseover", {{bubbles: true}}));
      if (open && button) {{ button.click(); clearInterval(fold); }}
      if (++tries > 50) clearInterval(fold);
    }}, 100);
  }}
}}
</script>"""

#: The class Streamlit gives a container keyed "queue_actions".
ACTION_ROW_KEY: Final = "queue_actions"
#: The row wraps by its own width, not the window's: the page's column is about 46rem wide in any
#: window wider than the sidebar needs, and four buttons, a note and a reason field do not fit in
#: it (the QA card's "Incorrect" was cut to "Inco…" at 1440 px).
ACTION_ROW_CSS: Final = f"""<style>
.st-key-{ACTION_ROW_KEY} {{ container-type: inline-size; }}
@container (max-width: 56rem) {{
  .st-key-{ACTION_ROW_KEY} [data-testid="stHorizontalBlock"] {{ flex-wrap: wrap; }}
  .st-key-{ACTION_ROW_KEY} [data-testid="stColumn"] {{ min-width: 9rem; flex: 1 1 9rem !important; }}
}}
</style>"""


#: The fields Enter or Esc leaves: the text is kept (a text field commits on blur) and the next
#: A / X / S decides. Streamlit rightly leaves plain-letter shortcuts to the focused field, so
#: without this "a" meant to accept was typed into the note (issue 29), or into the name just
#: typed in the sidebar ("ann" became "anna" and decided under that name).
LEAVE_FIELD_SCRIPT: Final = """<script>
if (!window.__codesearchLeaveFields) {
  window.__codesearchLeaveFields = true;
  document.addEventListener("keydown", (e) => {
    const t = e.target;
    if ((e.key === "Enter" || e.key === "Escape") && t instanceof HTMLInputElement
        && ["Note", "Reviewer"].includes(t.getAttribute("aria-label"))) {
      t.blur();
    }
  }, true);
}
</script>"""


def fold_sidebar_when_narrow() -> None:
    st.html(_FOLD_SCRIPT, unsafe_allow_javascript=True)


def keys_leave_fields() -> None:
    """One listener per tab (see `LEAVE_FIELD_SCRIPT`), installed beside the fields it serves: the
    sidebar's name and the queue card's action row."""
    st.html(LEAVE_FIELD_SCRIPT, unsafe_allow_javascript=True)
