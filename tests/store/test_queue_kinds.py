"""Each queue kind's filters from the command line's `KEY=VALUE` texts: every field of the kind's
filters type is a key, values take the field's type, and a bad key or value is a clear error."""

from __future__ import annotations

from dataclasses import fields

import pytest

from codesearch_core.errors import StoreError
from codesearch_core.store import (
    DecisionState,
    DraftFilters,
    EpisodeFilters,
    QAFilters,
    QueueFilters,
)
from codesearch_core.store.queue_kinds import KINDS, kind_of


def test_every_kind_has_filters_whose_fields_each_become_sql() -> None:
    for kind in KINDS.values():
        own = {f.name for f in fields(kind.filters)} - {"decision", "reviewer"}
        # The proposals' filters have their own WHERE (`queries.queue_where`).
        assert kind.filters is QueueFilters or set(kind.filter_sql) == own, kind.name


def test_key_value_texts_become_the_kinds_filters() -> None:
    assert kind_of("episode").parse_filters(
        ["engine=reference", "min_reward=1", "tool_used=read_file", "state=Any"]
    ) == EpisodeFilters(engine="reference", min_reward=1.0, tool_used="read_file",
                        decision=DecisionState.ANY)  # fmt: skip
    assert kind_of("qa").parse_filters(["rule=call", "text= x y "]) == QAFilters(
        rule="call", text="x y"
    )
    assert kind_of("draft").parse_filters([]) == DraftFilters()
    assert kind_of("proposal").parse_filters(["valid_only=yes", "max_f1=0.5"]) == QueueFilters(
        valid_only=True, max_f1=0.5
    )


@pytest.mark.parametrize(
    ("kind", "pair", "message"),
    [
        ("episode", "reward=1", "unknown filter 'reward=1' for the episode queue: use KEY=VALUE "
         "with a key of min_reward, max_reward, engine"),
        ("qa", "rule", "unknown filter 'rule' for the qa queue"),
        ("episode", "max_reward=lots", "max_reward='lots': use a number"),
        ("draft", "decision=maybe", "decision='maybe': use one of undecided, accepted"),
        ("proposal", "valid_only=perhaps", "valid_only='perhaps': use true or false"),
        ("drift", "drifted=", "drifted= needs a value"),
    ],
)  # fmt: skip
def test_a_bad_key_or_value_names_what_the_kind_takes(kind: str, pair: str, message: str) -> None:
    with pytest.raises(StoreError, match=message.replace("(", r"\(")):
        kind_of(kind).parse_filters([pair])


def test_what_blocks_one_accept_also_blocks_it_in_a_bulk_plan() -> None:
    # A bulk plan reads the kind's accept rules, never its per-item blocker.
    for kind in KINDS.values():
        assert (kind.accept_blocker is None) == (not kind.accept_rules), kind.name
