"""The rule templates' wordings say what to find, never how: no flag names, globs or regex in any
sentence (`intents.gives_call_away`, the test a model's intents are held to as well), and every
wording fills in with the fields a target gives."""

from __future__ import annotations

import pytest

from codesearch_core.synthesis.intents import gives_call_away
from codesearch_core.synthesis.rule_kinds import LANGUAGE_LABELS
from codesearch_core.synthesis.rules import TEMPLATES


@pytest.mark.parametrize("template", TEMPLATES, ids=lambda t: t.id)
def test_no_wording_gives_the_call_away(template: object) -> None:
    from codesearch_core.synthesis.rule_kinds import RuleTemplate

    assert isinstance(template, RuleTemplate)
    language = template.languages[0] if template.languages else "python"
    fields = {"subject": template.extra.get("subject", "render"),
              "lang": LANGUAGE_LABELS[language], "what": template.what}  # fmt: skip
    for wording in template.intents:
        text = wording.format(**fields)
        assert not gives_call_away(text), (template.id, text)


@pytest.mark.parametrize(
    "intent",
    ["Every whole-word occurrence of `edit` in the Python files",
     "Which documentation pages (.rst, .md) mention `Group`?",
     "Find the doubled words in any case, case-insensitive",
     "Lines with trailing spaces in the *.rs files (by extension)"],
)  # fmt: skip
def test_flag_talk_is_caught(intent: str) -> None:
    assert gives_call_away(intent)


def test_plain_requests_with_dotted_names_pass() -> None:
    for intent in ("Where is `click.echo` called in the Python code?",
                   "Find the places that read the string `utf-8`",
                   "Which functions call `os.path.join`?"):  # fmt: skip
        assert not gives_call_away(intent), intent
