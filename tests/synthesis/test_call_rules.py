"""The call rules (`call`, `await-call`, `new`, `function-calling`, `async-awaiting`) on a corpus
written here, with the real rg and ast-grep: a call of `echo` is counted however it is written
(qualified, as a method, generic, with a Kotlin trailing lambda), a function is listed only for
the calls it makes itself, a dotted subject needs a receiver a developer would name, and a C++
cast is no call subject. Each rule's second opinion agrees with the items it should keep."""

from __future__ import annotations

from pathlib import Path

import pytest

from codesearch_core.models import Span
from codesearch_core.synthesis.mine import Candidate, Target, candidates, measure
from codesearch_core.synthesis.rules import TEMPLATES
from codesearch_core.synthesis.second_opinion import Judge, Subject
from codesearch_core.tools import parse_tool_call

CLI_PY = """import click


def hello(name):
    click.echo(f"Hello {name}")  # the qualified form


def bye(self):
    echo("bye")
    self.echo("later")


def outer():
    def inner():
        echo("only the inner function calls it")
    return inner


class Key:
    def run(self, key):
        # echo("a comment is no call")
        key.exchange(1)
        return lambda: echo("a lambda is part of run")
"""
MORE_PY = """import click


def main():
    click.echo("main")
    key = make()
    key.exchange(2)


async def fetch(client):
    await client.echo("awaited")
    await echo("awaited too")


async def later():
    async def soon():
        await echo("the inner coroutine awaits it")
    return soon
"""
APP_JS = """const handler = function (req, res) {
  res.send('hi');
};

function wrap() {
  return function () {
    res.send('nested');
  };
}

class Store {
  send(x) {
    return this.send(x);
  }
}
"""
HOOK_TS = """const [a, b] = useState<string>('x');
useState<number>(1);
const view = new Widget<string>('w');
const other = new ui.Widget(2);
"""
MODULE_KT = """class ClipboardModule : Module() {
  override fun definition() = ModuleDefinition {
    AsyncFunction<Boolean>("hasStringAsync") { false }
    AsyncFunction("setStringAsync") { text: String -> true }
  }
}
"""
CAST_CPP = """int f(double d) {
  char c = char(d);
  char e = char(d + 1);
  int n = compute(c);
  return static_cast<int>(d) + n + compute(e);
}
"""


@pytest.fixture
def calls_corpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    files = {
        "cli.py": CLI_PY, "more.py": MORE_PY, "app.js": APP_JS, "hooks.ts": HOOK_TS,
        "Module.kt": MODULE_KT, "cast.cpp": CAST_CPP,
    }  # fmt: skip
    (tmp_path / "calls").mkdir()
    for rel, text in files.items():
        (tmp_path / "calls" / rel).write_text(text, encoding="utf-8")
    monkeypatch.setenv("CODESEARCH_CORPORA", str(tmp_path))
    return "calls"


def _found(corpus: str) -> dict[tuple[str, str, str], Candidate]:
    return {(c.template.id, c.language, c.subject): c for c in candidates(corpus)}


def _target(corpus: str, found: dict[tuple[str, str, str], Candidate], *key: str) -> Target:
    target, why = measure(corpus, found[key[0], key[1], key[2]])
    assert target is not None, (key, why)
    return target


def _lines(target: Target) -> list[tuple[str, int]]:
    return [(s.path, s.start_line) for s in target.expected]


def _judged(corpus: str, target: Target) -> str:
    item = Subject(corpus, target.rule, target.language, target.subject, target.expected)
    return Judge().judge(item)


def test_a_call_counts_the_qualified_and_method_forms(calls_corpus: str) -> None:
    found = _found(calls_corpus)
    echo = _target(calls_corpus, found, "call", "python", "echo")
    # `click.echo`, `echo`, `self.echo`, `client.echo` awaited, the lambda's; not the comment.
    assert _lines(echo) == [
        ("cli.py", 5), ("cli.py", 9), ("cli.py", 10), ("cli.py", 15), ("cli.py", 23),
        ("more.py", 5), ("more.py", 11), ("more.py", 12), ("more.py", 17),
    ]  # fmt: skip
    assert _judged(calls_corpus, echo) == ""
    # `click` is imported: `click.echo` is a subject of its own, the qualified calls only; the
    # corpus also calls a bare `echo`, which a reader of "calls to `click.echo`" may count, so the
    # second opinion drops that item.
    qualified = _target(calls_corpus, found, "call", "python", "click.echo")
    assert _lines(qualified) == [("cli.py", 5), ("more.py", 5)]
    assert _judged(calls_corpus, qualified) == "missed:text_call"


def test_a_variables_method_is_asked_for_by_its_name_alone(calls_corpus: str) -> None:
    found = _found(calls_corpus)
    assert ("call", "python", "key.exchange") not in found
    assert ("call", "javascript", "res.send") not in found
    exchange = _target(calls_corpus, found, "call", "python", "exchange")
    assert _lines(exchange) == [("cli.py", 22), ("more.py", 7)]
    send = _target(calls_corpus, found, "call", "javascript", "send")
    assert _lines(send) == [("app.js", 2), ("app.js", 7), ("app.js", 13)]
    # The method's own definition (`send(x) {`) is no call, and the text check knows it.
    assert _judged(calls_corpus, send) == ""


def test_generic_and_trailing_lambda_calls(calls_corpus: str) -> None:
    found = _found(calls_corpus)
    use_state = _target(calls_corpus, found, "call", "typescript", "useState")
    assert _lines(use_state) == [("hooks.ts", 1), ("hooks.ts", 2)]
    assert _judged(calls_corpus, use_state) == ""
    async_function = _target(calls_corpus, found, "call", "kotlin", "AsyncFunction")
    assert _lines(async_function) == [("Module.kt", 3), ("Module.kt", 4)]
    assert _judged(calls_corpus, async_function) == ""
    widget = _target(calls_corpus, found, "new", "typescript", "Widget")
    assert _lines(widget) == [("hooks.ts", 3), ("hooks.ts", 4)]  # generic, and from a namespace


def test_a_function_is_listed_for_the_calls_it_makes_itself(calls_corpus: str) -> None:
    found = _found(calls_corpus)
    callers = _target(calls_corpus, found, "function-calling", "python", "echo")
    # bye, inner (not outer: only its nested function calls echo), run (its lambda's call).
    assert [(s.path, s.start_line, s.end_line) for s in callers.expected] == [
        ("cli.py", 4, 5), ("cli.py", 8, 10), ("cli.py", 14, 15), ("cli.py", 20, 23),
        ("more.py", 4, 7), ("more.py", 10, 12), ("more.py", 16, 17),
    ]  # fmt: skip
    assert _judged(calls_corpus, callers) == ""
    senders = _target(calls_corpus, found, "function-calling", "javascript", "send")
    # The function expressions (a handler, the one wrap returns) and the method; not wrap.
    assert [(s.path, s.start_line) for s in senders.expected] == [
        ("app.js", 1), ("app.js", 6), ("app.js", 12),
    ]  # fmt: skip
    assert _judged(calls_corpus, senders) == ""
    awaiting = _target(calls_corpus, found, "async-awaiting", "python", "echo")
    # fetch and soon; not later, whose nested coroutine does the awaiting.
    assert [(s.path, s.start_line) for s in awaiting.expected] == [("more.py", 10), ("more.py", 16)]
    assert _judged(calls_corpus, awaiting) == ""


def test_a_cpp_cast_is_no_call_subject(calls_corpus: str) -> None:
    found = _found(calls_corpus)
    assert not any(k[1] == "cpp" and k[2] in ("char", "static_cast") for k in found)
    compute = _target(calls_corpus, found, "call", "cpp", "compute")
    assert _lines(compute) == [("cast.cpp", 4), ("cast.cpp", 5)]


def test_a_second_opinion_drops_an_item_that_misses_a_call() -> None:
    # The old answer to "calls of `echo`": the plain calls only.
    template = next(t for t in TEMPLATES if t.id == "call")
    assert template.second is not None
    item = Subject("click", "call", "python", "echo", (Span("src/click/utils.py", 1, 1),))
    assert Judge().judge(item) == "missed:text_call"


def test_every_check_of_the_call_rules_is_a_valid_call() -> None:
    for template in TEMPLATES:
        assert template.second is not None, template.id
        for language in template.languages or ("",):
            for check in template.second(language, "echo"):
                parse_tool_call({"name": check.tool, "arguments": dict(check.arguments)})
            parse_tool_call({"name": template.tool,
                             "arguments": template.reference(language, "echo")})  # fmt: skip


SHAPES_PY = """import abc
from shapes import base


class Square(base.Shape):
    side = 1


class Circle(
    Shape,
    metaclass=abc.ABCMeta,
):
    radius = 1


class Registry(metaclass=Shape):
    pass


class Holder(Generic[Shape]):
    pass
"""
SHAPES_TS = """export class Square extends base.Shape<number> implements Drawable {
  side = 1;
}

class Tile implements Shape {
  side = 2;
}

const Circle = class extends Shape {
  radius = 1;
};
"""


def test_a_subclass_is_named_by_its_base_plain_or_qualified(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "shapes").mkdir()
    (tmp_path / "shapes" / "shapes.py").write_text(SHAPES_PY, encoding="utf-8")
    (tmp_path / "shapes" / "shapes.ts").write_text(SHAPES_TS, encoding="utf-8")
    monkeypatch.setenv("CODESEARCH_CORPORA", str(tmp_path))
    found = _found("shapes")
    py = _target("shapes", found, "subclass", "python", "Shape")
    # `base.Shape` and the multi-line header count, whole; a metaclass is no base. A type
    # argument (`Generic[Shape]`) is none either, but a text search reads it as one: the second
    # opinion drops such an item rather than trust it.
    assert [(s.start_line, s.end_line) for s in py.expected] == [(5, 6), (9, 13)]
    assert _judged("shapes", py) == "missed:text_extends"
    ts = _target("shapes", found, "subclass", "typescript", "Shape")
    # `extends base.Shape<number>` and a class expression; an interface implemented is not a base.
    assert [(s.start_line, s.end_line) for s in ts.expected] == [(1, 3), (9, 11)]
    assert _judged("shapes", ts) == ""


KEYWRAP_PY = """from cryptography.hazmat.primitives import constant_time
from cryptography.hazmat.primitives.constant_time import bytes_eq


def unwrap(a, b):
    return constant_time.bytes_eq(a, b)


def check(a, b):
    assert constant_time.bytes_eq(a, b)


def unwrap_padded(a, b):
    return bytes_eq(a, b)
"""


def test_a_qualified_subject_is_checked_against_every_spelling_of_its_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "wrap").mkdir()
    (tmp_path / "wrap" / "keywrap.py").write_text(KEYWRAP_PY, encoding="utf-8")
    monkeypatch.setenv("CODESEARCH_CORPORA", str(tmp_path))
    found = _found("wrap")
    qualified = _target("wrap", found, "call", "python", "constant_time.bytes_eq")
    assert _lines(qualified) == [("keywrap.py", 6), ("keywrap.py", 10)]
    # A reader of "calls to `constant_time.bytes_eq`" counts the imported name's call too (QA
    # review, issue 36): the item is dropped; the bare name's item holds both and is kept.
    assert _judged("wrap", qualified) == "missed:text_call"
    bare = _target("wrap", found, "call", "python", "bytes_eq")
    assert _lines(bare) == [("keywrap.py", 6), ("keywrap.py", 10), ("keywrap.py", 14)]
    assert _judged("wrap", bare) == ""


def test_a_cpp_projects_headers_give_no_c_items(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from codesearch_core.synthesis.mine import corpus_languages

    (tmp_path / "native").mkdir()
    (tmp_path / "native" / "proxy.h").write_text("class P { P(int a); };\n", encoding="utf-8")
    (tmp_path / "native" / "proxy.cpp").write_text('#include "proxy.h"\n', encoding="utf-8")
    monkeypatch.setenv("CODESEARCH_CORPORA", str(tmp_path))
    # ast-grep reads `.h` as C; in a C++ project it is a C++ header (QA review, issue 36).
    assert corpus_languages("native")[0] == {"cpp"}
    (tmp_path / "native" / "lz.c").write_text('#include "proxy.h"\n', encoding="utf-8")
    assert corpus_languages("native")[0] == {"c", "cpp"}
