"""The second opinion on a synthesized item, by its rule template's checks.

Each rule template declares the searches a reader of its intent would also count
(`RuleTemplate.second`: `Check`s, broader variants found by another tool or another pattern);
`checks_of` finds them for an item's rule, language and subject, and `Judge` is the verify layer's
judge (`verify.second_opinion`: it runs the checks on the whole corpus and says `missed:<why>`,
`included:<why>`, `second_opinion_failed:<why>`) with those checks by default. A rule that declares
no check drops its items as `no_second_opinion`: an item nobody could check is not kept unchecked.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from codesearch_core.models import Check, Span
from codesearch_core.synthesis.rule_kinds import RuleTemplate
from codesearch_core.synthesis.rules import TEMPLATES
from codesearch_core.tools import DEFAULT_TIMEOUT_S
from codesearch_core.verify import NO_SECOND_OPINION, CheckSource, Subject
from codesearch_core.verify import Judge as _Judge

__all__ = ["NO_SECOND_OPINION", "Judge", "Subject", "checks_of", "subject_of"]

_BY_ID: Final[Mapping[str, RuleTemplate]] = {t.id: t for t in TEMPLATES}


def checks_of(rule: str, language: str, subject: str) -> tuple[Check, ...] | None:
    """The rule's checks for this subject; None for an unknown rule or one that declares none."""
    template = _BY_ID.get(rule)
    if template is None or template.second is None:
        return None
    return template.second(language if template.languages else "", subject)


class Judge(_Judge):
    """The verify layer's `Judge`, by the rule templates' checks (`checks_of`) unless told."""

    def __init__(
        self, timeout_s: float = DEFAULT_TIMEOUT_S, checks: CheckSource = checks_of
    ) -> None:
        super().__init__(timeout_s, checks)


def subject_of(item: Mapping[str, Any]) -> Subject:
    """A data set item (`dataset.items`) as the second opinion reads it."""
    return Subject(
        corpus=str(item["corpus"]),
        rule=str(item["rule"]),
        language=str(item["language"]),
        subject=str(item.get("subject", "")),
        expected=tuple(
            Span(s["path"], int(s["start_line"]), int(s["end_line"])) for s in item["expected"]
        ),
    )
