"""The text-search (ripgrep) rule templates (`synthesis.text_rules`) end to end with the real rg: a
small corpus written here holds each rule's facts and the decoys a plain search also finds (other
languages, docs, longer names, the other quote style), so every rule gives a verified draft that
beats its naive searches; the intents vary and a seed makes the same drafts."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from codesearch_core.models import ToolName
from codesearch_core.store import Draft
from codesearch_core.synthesis import TemplateWriter, synthesize
from codesearch_core.synthesis.second_opinion import Judge, Subject
from codesearch_core.synthesis.text_rules import TEXT_TEMPLATES

TEXT_RULES = frozenset(t.id for t in TEXT_TEMPLATES)

SERVICE_PY = """import json
import jsonschema
from app.render import page

ENCODING = "utf-8" \n

def render(doc):  # TODO: cache the template
    logger.info("rendering")
    return page(doc)


def render_all(docs):
    # it is is the slow path
    return [render(d) for d in docs]


def load(text):
    if not text:
        raise ValueError("empty document")
    logger.info(text)
    return json.loads(text, encoding="utf-8")
"""
WORKER_PY = """from json import dumps
from app.render import renderer

BOM = 'utf-8'


def render(job):
\treturn renderer(job)


def run(job):
    # TODO(ops) retry here
    logger.info('job started')
    logger.info(job)
    try:
        return dumps(render(job)) \n    except ValueError:
        raise ValueError('bad job')


def renderer(job):
    # as as before
    return dumps(job, encoding='utf-8')
"""
HELPERS_PY = """def render_page(doc):
    logger.info(doc)
    return doc


def renderer_for(kind):
	return kind

# render one document: call render, not render_page
# (render is the slow path)
# render once
parse = json.loads
load_all = json.loads
"""
CLIENT_JS = """const db = require('./db');
// TODO: paginate
async function list() {
  return await db.query('SELECT 1');
}
async function one(id) {
  await db.query('SELECT 2', [id]);
  return await db.query('SELECT 3');
}
"""
SERVER_JS = """const db = require('./db');
// TODO: close the pool
function warm() {
  db.query('SELECT 0');
  return db.query('SELECT 0').then(() => true);
}
"""
GUIDE_RST = """Rendering \n=========

The render step calls render_all, the renderer and render_page; the the guide says so.
It will raise ValueError on an empty document (ValueError, not TypeError). \nTODO: document ``json.loads`` and jsonschema; the encoding is utf-8 (or utf-8-sig).
TODO: say that db.query( is awaited. \n"""
ERRORS_RST = """Errors
======

Code should raise ValueError for an empty document.
A worker may raise ValueError when a job is bad.
Documents are read as utf-8.
Write utf-8 (never latin-1); utf-8-sig is accepted.
Errors are read with ``json.loads``.
"""
MAKEFILE = "all:\n\tpython -m app\n\tnode web/server.js\n\techo done\n"


@pytest.fixture()
def textmix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    files = {
        "app/service.py": SERVICE_PY, "app/worker.py": WORKER_PY, "app/helpers.py": HELPERS_PY,
        "web/client.js": CLIENT_JS, "web/server.js": SERVER_JS, "docs/guide.rst": GUIDE_RST,
        "docs/errors.rst": ERRORS_RST, "Makefile": MAKEFILE,
    }  # fmt: skip
    for rel, text in files.items():
        (tmp_path / "textmix" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "textmix" / rel).write_text(text, encoding="utf-8")
    monkeypatch.setenv("CODESEARCH_CORPORA", str(tmp_path))
    return "textmix"


class _Drafts:
    def __init__(self) -> None:
        self.drafts: list[Draft] = []

    def add(self, draft: Draft) -> bool:
        self.drafts.append(draft)
        return True


def _synthesize(corpus: str, seed: int) -> list[Draft]:
    sink = _Drafts()
    synthesize(corpus, writer=TemplateWriter(), sink=sink, seed=seed, rules=TEXT_RULES)
    return sink.drafts


def _subject(draft: Draft) -> Subject:
    return Subject(draft.corpus, draft.rule, draft.language, str(draft.sample["subject"]),
                   draft.expected)  # fmt: skip


def _lines(draft: Draft) -> list[tuple[str, int]]:
    return [(s.path, s.start_line) for s in draft.expected]


def _one(drafts: list[Draft], rule: str, subject: str, language: str) -> Draft:
    found = [d for d in drafts if (d.rule, d.sample["subject"], d.language)
             == (rule, subject, language)]  # fmt: skip
    assert len(found) == 1, (rule, subject, language, sorted((d.rule, d.sample["subject"])
                                                             for d in drafts))  # fmt: skip
    return found[0]


def test_every_text_rule_gives_verified_drafts_that_beat_the_plain_search(textmix: str) -> None:
    drafts = _synthesize(textmix, seed=0)
    assert {d.rule for d in drafts} >= TEXT_RULES
    for d in drafts:
        assert d.reference_call.name is ToolName.RIPGREP
        assert d.reference_reward == 1.0
        assert d.baseline_reward is not None and d.baseline_reward <= 0.75, d.id
    definition = _one(drafts, "definition", "render", "python")
    # `def render_all`, `def renderer` are not `render`'s definitions
    assert _lines(definition) == [("app/service.py", 8), ("app/worker.py", 7)]
    imports = _one(drafts, "import", "json", "python")
    # both import forms; not `import jsonschema`, not the docs
    assert _lines(imports) == [("app/service.py", 1), ("app/worker.py", 1)]
    raised = _one(drafts, "raise", "ValueError", "python")
    assert _lines(raised) == [("app/service.py", 20), ("app/worker.py", 18)]
    literal = _one(drafts, "string-literal", "utf-8", "python")
    assert literal.reference_call.arguments["pcre2"] is True
    assert [ln for _, ln in _lines(literal)] == [5, 22, 4, 23]
    logs = _one(drafts, "log-literal", "logger.info", "python")
    assert _lines(logs) == [("app/service.py", 9), ("app/worker.py", 13)]
    not_awaited = _one(drafts, "not-awaited", "db.query", "javascript")
    assert _lines(not_awaited) == [("web/server.js", 4), ("web/server.js", 5)]
    todos = _one(drafts, "todo-marker", "TODO", "javascript")
    assert _lines(todos) == [("web/client.js", 2), ("web/server.js", 2)]
    trailing = _one(drafts, "trailing-space", "", "python")
    assert trailing.reference_call.arguments["globs"] == ["*.py", "*.pyi"]
    assert _lines(trailing) == [("app/service.py", 5), ("app/worker.py", 16)]
    tabs = _one(drafts, "tab-indent", "", "python")
    assert _lines(tabs) == [("app/helpers.py", 7), ("app/worker.py", 8)]
    docs = _one(drafts, "docs-mention", "json.loads", "python")
    assert _lines(docs) == [("docs/errors.rst", 8), ("docs/guide.rst", 6)]
    word = _one(drafts, "word-use", "render", "python")
    assert word.reference_call.arguments["pcre2"] is True
    assert ("app/service.py", 13) not in _lines(word)  # `def render_all`
    assert not {ln for p, ln in _lines(word) if p == "app/helpers.py"}  # comment lines
    # The fixture's facts are right, so every draft passes its rule's second opinion.
    judge = Judge()
    verdicts = {d.id: judge.judge(_subject(d)) for d in drafts}
    assert verdicts == dict.fromkeys(verdicts, "")


def test_text_intents_vary_and_a_seed_makes_the_same_drafts(textmix: str) -> None:
    first = _synthesize(textmix, seed=3)
    assert [(d.id, d.intent) for d in _synthesize(textmix, seed=3)] == [
        (d.id, d.intent) for d in first
    ]
    other = {d.id: d.intent for d in _synthesize(textmix, seed=4)}
    assert any(other.get(d.id) not in (None, d.intent) for d in first)
    # Each rule's wordings open differently, so drafts of a rule do not all read alike.
    for template in TEXT_TEMPLATES:
        openings = Counter(w.split()[0] for w in template.intents)
        assert len(openings) == len(template.intents), template.id
    openings = Counter(d.intent.split()[0] for d in first)
    assert len(openings) >= 4 and max(openings.values()) < len(first) / 2
