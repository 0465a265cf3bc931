"""Checks run by CI over the report templates (templates/*.html.j2 and inline ones).

Marking user-controlled values with |safe disables autoescaping; the check below
fails the build for any template that does it on a field not in SAFE_FIELDS.
"""

from __future__ import annotations

import re
from pathlib import Path

SAFE_FIELDS = frozenset({"summary_html", "highlights_html"})
_SAFE_FILTER = re.compile(r"\{\{\s*(\w+)\s*\|\s*safe\s*\}\}")


def unsafe_fields(template_text: str) -> list[str]:
    """Fields rendered with the safe filter that are not known to hold trusted HTML."""
    return [m.group(1) for m in _SAFE_FILTER.finditer(template_text)
            if m.group(1) not in SAFE_FIELDS]


def check_dir(root: Path) -> dict[str, list[str]]:
    problems: dict[str, list[str]] = {}
    for path in sorted(root.rglob("*.html.j2")):
        # e.g. {{ notes|safe }} in a template is reported here.
        bad = unsafe_fields(path.read_text(encoding="utf-8"))
        if bad:
            problems[str(path)] = bad
    return problems
