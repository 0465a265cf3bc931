"""The mining passes with the real rg and ast-grep: a reference run on the files its pass named
finds what a run over the whole corpus finds, and the pass sees calls however they are laid out."""

from __future__ import annotations

from itertools import islice
from pathlib import Path

import pytest

from codesearch_core.corpora import corpus_root
from codesearch_core.synthesis.mine import candidate_groups, candidates, measure, ordered
from codesearch_core.tools import run_tool_call


@pytest.mark.parametrize("corpus", ["webshop", "storefront"])
def test_a_target_run_on_its_pass_files_is_the_whole_corpus_run(corpus: str) -> None:
    # The claim that makes synthesis fast (mine.py's docstring): no finding lives outside the
    # files the text pass named. storefront holds minified bundles, vendored code and CRLF files.
    targets = [t for c in candidates(corpus) if (t := measure(corpus, c)[0]) is not None]
    assert len(targets) >= 50
    for target in targets:
        whole = run_tool_call(target.call, corpus_root(corpus))
        assert tuple(sorted({f.span for f in whole.findings})) == target.expected, target.key


def _corpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, files: dict[str, str]) -> str:
    for rel, text in files.items():
        (tmp_path / "c" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "c" / rel).write_text(text, encoding="utf-8")
    monkeypatch.setenv("CODESEARCH_CORPORA", str(tmp_path))
    return "c"


def test_the_pass_sees_chained_calls_and_not_a_comments_full_stop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus = _corpus(tmp_path, monkeypatch, {
        "a.js": "const r = (client\n  .get(1));\n",
        # A full stop ending a comment's sentence must not swallow the call on the next line.
        "b.js": "// the health check waits for.\nclient.get(2);\n",
        "c.ts": "const [a, b] = useState<string>('x');\nuseState<number>(1);\n",
    })  # fmt: skip
    found = {(c.template.id, c.language, c.subject): c for c in candidates(corpus)}
    # `client` is a variable: its method is asked for by its name alone, `client.get` is no subject.
    assert ("call", "javascript", "client.get") not in found
    get = found["call", "javascript", "get"]
    assert get.files == ("a.js", "b.js")
    target, why = measure(corpus, get)
    assert target is not None, why
    assert [(s.path, s.start_line) for s in target.expected] == [("a.js", 1), ("b.js", 2)]
    assert found["call", "typescript", "useState"].files == ("c.ts",)  # type arguments


def test_candidates_are_taken_from_every_rule_in_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    groups = candidate_groups("webshop")
    rules = {g.template.id for g in groups}
    first = list(islice(ordered(groups, seed=3), len(groups)))
    assert {c.template.id for c in first} == rules  # a --limit run samples every rule
    again = [c.subject for c in islice(ordered(groups, seed=3), 40)]
    assert again == [c.subject for c in islice(ordered(groups, seed=3), 40)]
    assert again != [c.subject for c in islice(ordered(groups, seed=4), 40)]
    assert sum(len(g.subjects) for g in groups) == len(candidates("webshop"))
