"""A corpus cannot change how the tools run on it: its own `sgconfig.yml`, `.rgignore`, `.ignore`
and `.gitignore` files (at the root or in subfolders, in a git checkout or not) change neither
which files are searched nor which rules or languages ast-grep loads."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from codesearch_core.models import ToolCall, ToolName
from codesearch_core.tools import run_tool_call

CONFIG_FILES = {
    "sgconfig.yml": "ruleDirs: [rules]\nlanguageGlobs:\n  python: ['*.txt']\n",
    "rules/print.yml": "id: extra\nlanguage: python\nrule: {pattern: 'print($A)'}\n",
    ".rgignore": "a.py\n",
    ".ignore": "sub/\n",
    ".gitignore": "*.py\n",
    "sub/.gitignore": "*\n",
}


def _corpus(root: Path, with_config: bool) -> Path:
    (root / "sub").mkdir(parents=True)
    (root / "a.py").write_text("print(1)\n", encoding="utf-8")
    (root / "sub" / "b.py").write_text("print(2)\n", encoding="utf-8")
    (root / "notes.txt").write_text("print(3)\n", encoding="utf-8")
    if with_config:
        for rel, text in CONFIG_FILES.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text, encoding="utf-8")
        subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


CALLS = [
    ToolCall(ToolName.AST_GREP, {"pattern": "print($A)", "language": "python"}),
    ToolCall(ToolName.AST_GREP, {"rule": {"pattern": "print($A)"}, "language": "python"}),
    ToolCall(ToolName.RIPGREP, {"pattern": r"print\(\d\)"}),
]


@pytest.mark.parametrize("call", CALLS, ids=["ast-grep pattern", "ast-grep rule", "rg"])
def test_what_a_corpus_carries_changes_nothing(tmp_path: Path, call: ToolCall) -> None:
    plain = run_tool_call(call, _corpus(tmp_path / "plain", with_config=False))
    configured = run_tool_call(call, _corpus(tmp_path / "configured", with_config=True))
    assert plain.ok and configured.ok, (plain.error, configured.error)
    spans = sorted((f.path, f.start_line) for f in configured.findings)
    assert spans == sorted((f.path, f.start_line) for f in plain.findings)
    # Every file is searched (no ignore file applies); notes.txt is Python only to the corpus's
    # sgconfig, which ast-grep never reads.
    expected = {"a.py", "sub/b.py"} | ({"notes.txt"} if call.name is ToolName.RIPGREP else set())
    assert {path for path, _ in spans} == expected
