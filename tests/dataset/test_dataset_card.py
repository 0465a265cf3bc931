"""The card's figures: the mix and the intents' lexical diversity."""

from __future__ import annotations

from codesearch_core.dataset.card import diversity, mix, wordings


def test_diversity_counts_distinct_bigrams_and_the_most_common_opening() -> None:
    figures = diversity(["Find the foo calls", "Find the bar calls", "List every class"])
    # find the, the foo, foo calls, the bar, bar calls, list every, every class
    assert figures["distinct_bigrams"] == 7 and figures["intents"] == 3
    assert figures["distinct_bigram_share"] == round(7 / 8, 4)
    assert figures["top_openings"][0] == {"words": "find the", "count": 2, "share": round(2 / 3, 4)}
    assert figures["top_opening_share"] == round(2 / 3, 4)


def test_the_mix_counts_empty_answers_and_plans() -> None:
    items = [
        {"tool": "plan", "rule": "seed", "language": "python", "difficulty": "hard",
         "corpus": "c", "expected": []},
        {"tool": "ripgrep_search", "rule": "todo", "language": "python", "difficulty": "easy",
         "corpus": "c", "expected": [{"path": "a", "start_line": 1, "end_line": 1}]},
    ]  # fmt: skip
    figures = mix(items)
    assert figures["items"] == 2
    assert figures["plans"] == {"count": 1, "share": 0.5}
    assert figures["empty_answers"] == {"count": 1, "share": 0.5}
    assert figures["tool"]["ripgrep_search"] == {"count": 1, "share": 0.5}


def test_wordings_take_the_subject_and_language_out() -> None:
    items = [
        {"intent": f"Find every call to `{s}` in the {lang} code", "subject": s, "language": lg}
        for s, lang, lg in (("echo", "Python", "python"), ("run", "Java", "java"))
    ] + [{"intent": "Where is `open` called?", "subject": "open", "language": "python"}]
    figures = wordings(items)
    assert figures["distinct"] == 2
    assert figures["top"][0] == {"wording": "Find every call to `{subject}` in the {lang} code",
                                 "count": 2}  # fmt: skip
    assert figures["top10_share"] == 1.0
