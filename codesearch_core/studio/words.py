"""Numbers and codes as a person reads them on the studio's pages: plurals, sizes, and the
synthesis pipeline's drop codes in words (issue 29: "1 blueprints", "2,147,483,648 bytes" and a
bare `baseline_close` each misled or said nothing)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from codesearch_core.store import KINDS

#: Why the synthesis pipeline dropped a candidate, in words; the code stays beside it (it is what
#: the CLI's JSON report and the docs use).
DROP_REASONS: Final[Mapping[str, str]] = {
    "too_small": "found too few spans to be a task",
    "too_large": "found too many spans, or its files were too big to run",
    "not_in_pass": "not found in the mining pass",
    "baseline_close": "a plain text search does nearly as well",
    "not_reproduced": "a second run found something else",
    "same_findings": "finds the same spans as a draft kept already",
    "too_slow_whole_corpus": "too slow on the whole corpus",
    "whole_corpus_differs": "finds other spans on the whole corpus",
}


def plural(n: int, word: str, many: str | None = None) -> str:
    """`1 blueprint`, `2 blueprints` (with thousands separators); `many` for irregular words."""
    return f"{n:,} {word if n == 1 else many or word + 's'}"


def human_size(n: int) -> str:
    """Bytes in binary units, as a person reads a size: `2 GiB`, `1.5 MiB`, `812 bytes`."""
    if n < 1024:
        return plural(n, "byte")
    size = float(n)
    for unit in ("KiB", "MiB", "GiB", "TiB"):
        size /= 1024
        if size < 1024 or unit == "TiB":
            return f"{size:.1f} {unit}".replace(".0 ", " ")
    raise AssertionError("unreachable")


def drop_reason(code: str) -> str:
    """A drop code in words, the code beside it (`baseline_close` → "a plain text search does
    nearly as well (baseline_close)"); an unknown code as itself."""
    words = DROP_REASONS.get(code)
    return f"{words} (`{code}`)" if words else f"`{code}`"


#: Each queue kind as the Review page's picker names it (the kind's own `title`).
QUEUE_NAMES: Final = {name: kind.title for name, kind in KINDS.items()}

#: How a kind's items are named in a sentence ("3 proposals", "1 QA item").
_ITEM_WORDS: Final = {name: kind.noun for name, kind in KINDS.items()}


def settings_change(opened: Mapping[str, int], reviews: int, *, would: bool = False) -> str:
    """What a change of the reviews per item did to the items' states, in words: the items it
    opened again and those it settled, by kind (`Store.set_review_settings`); with `would`, what
    it would do (`Store.preview_review_settings`, said before saving); "" when none changed
    state (issue 39: a change reopened settled items without a word)."""
    parts = []
    for kind, n in opened.items():
        one, many = _ITEM_WORDS.get(kind, (kind, kind + "s"))
        items, are = plural(abs(n), one, many), "is" if abs(n) == 1 else "are"
        be = "would be" if would else are
        parts.append(f"{items} settled by fewer reviews {be} open again" if n > 0
                     else f"{items} that waited for more reviews {be} settled now")  # fmt: skip
    return f"With {plural(reviews, 'review')} per item: {'; '.join(parts)}." if parts else ""
