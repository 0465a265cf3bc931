from __future__ import annotations

from pipeline.reports.html_report import render_report
from pipeline.reports.sanitize import unsafe_fields


def test_title_is_escaped() -> None:
    html = render_report("<b>x</b>", "<i>ok</i>", [])
    assert "&lt;b&gt;" in html
    assert "<i>ok</i>" in html


def test_sanitize_flags_unknown_safe_field() -> None:
    assert unsafe_fields("{{ comment|safe }}") == ["comment"]
    assert unsafe_fields("{{ summary_html|safe }}") == []
