"""Numbers and codes in the words a page shows them in (issue 29)."""

from __future__ import annotations

from codesearch_core import studio
from codesearch_core.models import ToolName
from codesearch_core.studio.forms import form_fields


def test_plurals_agree_with_their_number() -> None:
    assert studio.plural(1, "blueprint") == "1 blueprint"
    assert studio.plural(0, "blueprint") == "0 blueprints"
    assert studio.plural(1234, "query", "queries") == "1,234 queries"


def test_sizes_are_human() -> None:
    assert studio.human_size(2_147_483_648) == "2 GiB"
    assert studio.human_size(1536 * 1024) == "1.5 MiB"
    assert studio.human_size(1) == "1 byte"
    assert studio.human_size(812) == "812 bytes"


def test_drop_codes_come_with_words_and_the_code() -> None:
    said = studio.drop_reason("baseline_close")
    assert "plain text search" in said and "baseline_close" in said
    assert "few" in studio.drop_reason("too_small")
    assert studio.drop_reason("new_code") == "`new_code`"


def test_pcre2_is_spelled_as_its_project_spells_it() -> None:
    labels = {f.name: f.label for f in form_fields(ToolName.RIPGREP)}
    assert labels["pcre2"] == "PCRE2" and labels["case_sensitive"] == "Case sensitive"


def test_a_change_of_reviews_per_item_says_what_it_opened_and_settled() -> None:
    assert studio.settings_change({"proposal": 2, "qa": -1}, 2) == (
        "With 2 reviews per item: 2 proposals settled by fewer reviews are open again; 1 QA item "
        "that waited for more reviews is settled now."
    )
    assert studio.settings_change({}, 1) == ""
