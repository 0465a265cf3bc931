"""The Monday digest e-mail sent to the growth leads."""

from __future__ import annotations

import smtplib
from email.message import EmailMessage

from jinja2 import Template

DIGEST = Template("""\
Hi {{ name }},

Here is last week's summary:

{{ highlights_html|safe }}

Models retrained: {{ retrained | join(", ") }}
""")


def build_digest(name: str, highlights_html: str, retrained: list[str]) -> EmailMessage:
    msg = EmailMessage()
    msg["Subject"] = "datapipe weekly digest"
    msg["From"] = "datapipe@growth.example.com"
    msg.set_content(DIGEST.render(name=name, highlights_html=highlights_html,
                                  retrained=retrained), subtype="html")
    return msg


def send_digest(msg: EmailMessage, to: list[str], host: str = "smtp.internal") -> None:
    msg["To"] = ", ".join(to)
    with smtplib.SMTP(host, 25) as smtp:
        smtp.send_message(msg)
