"""Layout rules for narrow windows that Streamlit's settings cannot express (issue 29: at 900 px
the sidebar stayed open on a third of the screen and the review card's buttons were cut to
"rejec").

- The sidebar folds once per tab when the window opens narrower than `NARROW_PX`; the person can
  open it again (it is not hidden, only folded, and not folded again until a reload).
- Enter or Esc leaves the Note and Reviewer fields, and a page's own name box
  (`LEAVE_FIELD_SCRIPT`).
- The queue card's action row wraps instead of squeezing its buttons when it is narrower than
  they need, and its note shows no "Press Enter to apply" over the text typed (`ACTION_ROW_CSS`).
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
#: it (the QA card's "Incorrect" was cut to "Inco…" at 1440 px). It wraps before it cuts a
#: button's words or the reason's prompt at any width (the Drafts card's "Accept as blueprint"
#: was cut at 1440 and 900 px). Streamlit draws "Press Enter to apply" inside a text field while
#: it is typed in, over the end of the text: in the note's narrow column it covered the last words
#: typed (issue 39); the row's key line says it instead.
ACTION_ROW_CSS: Final = f"""<style>
.st-key-{ACTION_ROW_KEY} {{ container-type: inline-size; }}
.st-key-{ACTION_ROW_KEY} [data-testid="InputInstructions"] {{ display: none; }}
.st-key-{ACTION_ROW_KEY} [data-testid="stHorizontalBlock"] {{ flex-wrap: wrap; }}
.st-key-{ACTION_ROW_KEY} [data-testid="stColumn"]:has(button) {{ min-width: max-content; }}
.st-key-{ACTION_ROW_KEY} [data-testid="stColumn"]:has(input) {{ min-width: 12rem; flex-grow: 1; }}
@container (max-width: 56rem) {{
  .st-key-{ACTION_ROW_KEY} [data-testid="stColumn"] {{ min-width: 9rem; flex: 1 1 9rem !important; }}
  .st-key-{ACTION_ROW_KEY} [data-testid="stColumn"]:has(button) {{ min-width: max-content; }}
}}
</style>"""


#: The fields Enter or Esc leaves: the text is kept (a text field commits on blur) and the next
#: A / X / S decides. Streamlit rightly leaves plain-letter shortcuts to the focused field, so
#: without this "a" meant to accept was typed into the note (issue 29), or into the name just
#: typed in the sidebar ("ann" became "anna" and decided under that name). The card's reason
#: picker is left once a reason is picked (a click or Enter on it): it kept the focus, and the X
#: pressed next searched its reasons for "x" instead of rejecting (issue 39).
LEAVE_FIELD_SCRIPT: Final = f"""<script>
if (!window.__codesearchLeaveFields) {{
  window.__codesearchLeaveFields = true;
  const picker = (t) => t instanceof HTMLInputElement
      && t.closest('.st-key-{ACTION_ROW_KEY} [data-testid="stSelectbox"]');
  // After the picker has taken the option: leaving it first would drop the pick.
  const leaveLater = (t) => setTimeout(() => t.blur(), 0);
  document.addEventListener("keydown", (e) => {{
    const t = e.target;
    if (e.key !== "Enter" && e.key !== "Escape") return;
    if (t instanceof HTMLInputElement
        && ["Note", "Reviewer", "Your name"].includes(t.getAttribute("aria-label"))) {{
      t.blur();
    }} else if (picker(t)) {{
      leaveLater(t);
    }}
  }}, true);
  document.addEventListener("click", (e) => {{
    const t = document.activeElement;
    if (e.target instanceof Element && e.target.closest('[role="option"]') && picker(t)) {{
      leaveLater(t);
    }}
  }}, true);
}}
</script>"""


def fold_sidebar_when_narrow() -> None:
    st.html(_FOLD_SCRIPT, unsafe_allow_javascript=True)


def keys_leave_fields() -> None:
    """One listener per tab (see `LEAVE_FIELD_SCRIPT`), installed beside the fields it serves: the
    sidebar's name, a page's own name box and the queue card's action row."""
    st.html(LEAVE_FIELD_SCRIPT, unsafe_allow_javascript=True)
