"""Render the weekly model report as HTML (jinja2)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jinja2 import Environment, select_autoescape

_env = Environment(autoescape=select_autoescape(["html"]))

REPORT_TEMPLATE = """\
<html>
  <head><title>{{ title }}</title></head>
  <body>
    <h1>{{ title }}</h1>
    <p class="summary">{{ summary_html|safe }}</p>
    <table>
      {% for row in metrics %}
      <tr><td>{{ row.name }}</td><td>{{ row.value }}</td></tr>
      {% endfor %}
    </table>
    <div class="notes">{{ notes|safe }}</div>
  </body>
</html>
"""


def render_report(title: str, summary_html: str, metrics: list[dict[str, Any]],
                  notes: str = "") -> str:
    template = _env.from_string(REPORT_TEMPLATE)
    return template.render(title=title, summary_html=summary_html, metrics=metrics, notes=notes)


def write_report(path: Path, **kwargs: Any) -> Path:
    path.write_text(render_report(**kwargs), encoding="utf-8")
    return path
