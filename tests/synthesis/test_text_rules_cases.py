"""The text rules' known wrong cases (issue 36), each on a corpus written here with the real rg and
ast-grep: a quote in a comment or inside another string is no string literal, a package's relative
imports are imports of it, an extension-less script is a shell file, and a name the docs wrap in
markup or write in the plural is still mentioned there. Each case fails on the rules before the fix: either the
reference finds the wrong lines, or the rule's second opinion (`synthesis.second_opinion`) lets the
wrong item through."""

from __future__ import annotations

from pathlib import Path

import pytest

from codesearch_core.corpora import corpus_root
from codesearch_core.models import Span, ToolName
from codesearch_core.synthesis.second_opinion import Judge, Subject
from codesearch_core.synthesis.text_rules import TEXT_TEMPLATES
from codesearch_core.tools import parse_tool_call, run_tool_call

_BY_ID = {t.id: t for t in TEXT_TEMPLATES}

STRINGS_PY = '''"""Encodings."""

DEFAULT = "utf-8"
# use 'utf-8' when unsure
NOTE = "it's 'utf-8' here"


def read(path, encoding='utf-8'):
    """Read a file.

    Pass 'utf-8' for text.
    """
    return open(path, encoding=encoding)
'''
PKG_INIT = "from .core import run\nfrom . import utils\n"
PKG_CORE = "import json\n\n\ndef run():\n    return json.dumps({})\n"
PKG_UTILS = "import json\n"
APP_MAIN = "from pkg.core import run\nimport pkg.core as core\n"
TEST_PY = "import pkg\nimport json\n"
TOOL = "#!/usr/bin/env bash\n# TODO: quote the path \necho hi\n"
LIB_SH = "#!/bin/sh\n# TODO: drop this \nexit 0\n"
LIB_BASH = "# TODO: helper \nhelper() { :; }\n"
GUIDE_MD = """# Routing

A `HEAD` request is answered like GET.
The router answers __HEAD__ itself when no route does.

Register it with `app.head()`.
"""
API_RST = """API
===

Requests with HEAD carry no body; see also the HEADs section.
"""


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")


@pytest.fixture()
def cases(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    _write(tmp_path / "cases", {
        "enc/strings.py": STRINGS_PY, "pkg/__init__.py": PKG_INIT, "pkg/core.py": PKG_CORE,
        "pkg/utils.py": PKG_UTILS, "app/main.py": APP_MAIN, "tests/test_pkg.py": TEST_PY,
        "bin/tool": TOOL, "lib/setup.sh": LIB_SH, "lib/helpers.bash": LIB_BASH,
        "docs/guide.md": GUIDE_MD, "docs/api.rst": API_RST,
    })  # fmt: skip
    monkeypatch.setenv("CODESEARCH_CORPORA", str(tmp_path))
    return "cases"


def _reference(corpus: str, rule: str, language: str, subject: str) -> list[tuple[str, int]]:
    """The lines the rule's reference call finds on the whole corpus."""
    arguments = _BY_ID[rule].reference(language, subject)
    call = parse_tool_call({"name": ToolName.RIPGREP.value, "arguments": arguments})
    run = run_tool_call(call, corpus_root(corpus))
    assert run.ok, run.error
    return sorted({(f.path, f.start_line) for f in run.findings})


def _verdict(corpus: str, rule: str, language: str, subject: str,
             lines: list[tuple[str, int]]) -> str:  # fmt: skip
    spans = tuple(Span(path, line, line) for path, line in lines)
    return Judge().judge(Subject(corpus, rule, language, subject, spans))


def test_a_quote_in_a_comment_or_in_another_string_is_no_string_literal(cases: str) -> None:
    found = _reference(cases, "string-literal", "python", "utf-8")
    # not the comment (4), not `"it's 'utf-8' here"` (5); the docstring's line (11) the text
    # search cannot tell from code...
    assert found == [("enc/strings.py", 3), ("enc/strings.py", 8), ("enc/strings.py", 11)]
    # ...so the second opinion drops the item, and keeps the one without it.
    verdict = _verdict(cases, "string-literal", "python", "utf-8", found)
    assert verdict == "included:inside_string"
    assert _verdict(cases, "string-literal", "python", "utf-8", found[:2]) == ""
    # An item holding the comment's line is dropped too, and one missing a literal as missed.
    commented = [*found[:2], ("enc/strings.py", 4)]
    assert _verdict(cases, "string-literal", "python", "utf-8", commented) == "included:comment"
    assert _verdict(cases, "string-literal", "python", "utf-8", found[:1]) == "missed:ast_string"


def test_a_package_imported_relatively_is_no_import_item(cases: str) -> None:
    # `pkg/__init__.py` imports `pkg.core` as `.core`: the text search sees the absolute ones only.
    found = _reference(cases, "import", "python", "pkg.core")
    assert found == [("app/main.py", 1), ("app/main.py", 2)]
    assert _verdict(cases, "import", "python", "pkg.core", found) == "missed:relative_import"
    package = _reference(cases, "import", "python", "pkg")
    assert _verdict(cases, "import", "python", "pkg", package) == "missed:relative_import"
    # A module from outside the corpus is imported absolutely only: the item stands.
    outside = _reference(cases, "import", "python", "json")
    assert len(outside) == 3
    assert _verdict(cases, "import", "python", "json", outside) == ""


def test_an_extensionless_shell_script_is_a_shell_file(cases: str) -> None:
    # `*.sh` is a shell file as much as `*.bash`...
    trailing = _reference(cases, "trailing-space", "bash", "")
    assert trailing == [("lib/helpers.bash", 1), ("lib/setup.sh", 2)]
    # ...and so is `bin/tool`, which no file type or glob selects: the items are dropped.
    missed = "missed:extensionless_script"
    assert _verdict(cases, "trailing-space", "bash", "", trailing) == missed
    todos = _reference(cases, "todo-marker", "bash", "TODO")
    assert todos == [("lib/helpers.bash", 1), ("lib/setup.sh", 2)]
    assert _verdict(cases, "todo-marker", "bash", "TODO", todos) == missed


def test_a_name_the_docs_wrap_in_markup_or_pluralize_is_mentioned_there(cases: str) -> None:
    found = _reference(cases, "docs-mention", "", "HEAD")
    # The whole word finds `HEAD` and "HEAD carry"; `__HEAD__` and "HEADs" are mentions too.
    assert found == [("docs/api.rst", 4), ("docs/guide.md", 3)]
    assert _verdict(cases, "docs-mention", "", "HEAD", found) == "missed:loose_mention"
    everything = [("docs/api.rst", 4), ("docs/guide.md", 3), ("docs/guide.md", 4)]
    assert _verdict(cases, "docs-mention", "", "HEAD", everything) == ""
