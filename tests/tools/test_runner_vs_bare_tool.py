"""The runner's findings against an independent reading of the bare tools' output.

The corpus is real code: copies of installed packages (jsonschema, websockets, and idna for lines
full of non-ASCII characters). For each pattern the bare tool runs with its plainest command line
and its JSON is read with `json.loads` and simple code; the runner's fast parser must agree on every
match: same files, lines, columns, byte offsets, text and count. So a fast parser cannot silently
drop or shift matches.
"""

from __future__ import annotations

import base64
import importlib.util
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from codesearch_core.tools.binaries import ast_grep_path, rg_path
from codesearch_core.tools.runner import run_tool_call
from codesearch_core.tools.schemas import parse_tool_call

PACKAGES = ("jsonschema", "websockets", "idna")
Row = tuple[str, int, int, int, int, int, int, str]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # Copied out of the venv: its `.gitignore` (`*`) would hide everything from a bare tool.
    root = tmp_path_factory.mktemp("packages")
    for name in PACKAGES:
        spec = importlib.util.find_spec(name)
        assert spec is not None and spec.submodule_search_locations
        src = Path(next(iter(spec.submodule_search_locations)))
        shutil.copytree(src, root / name, ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    return root


def _bare_rg(corpus: Path, pattern: str, *extra: str) -> tuple[list[Row], int]:
    """Rows from `rg --json` read with json.loads, and rg's own count of matches."""
    out = subprocess.run(
        [rg_path(), "--json", *extra, "-e", pattern],
        cwd=corpus,
        capture_output=True,
        check=False,
        stdin=subprocess.DEVNULL,
    ).stdout
    rows: list[Row] = []
    total = -1
    for line in out.splitlines():
        msg = json.loads(line)
        if msg["type"] == "summary":
            total = msg["data"]["stats"]["matches"]
        if msg["type"] != "match":
            continue
        data = msg["data"]
        lines = _data_bytes(data["lines"])
        for sub in data["submatches"]:
            s, e = sub["start"], sub["end"]
            start_line = data["line_number"] + lines.count(b"\n", 0, s)
            line_start = lines.rfind(b"\n", 0, s) + 1
            last = max(s, e - 1)
            end_line = data["line_number"] + lines.count(b"\n", 0, last)
            end_line_start = lines.rfind(b"\n", 0, last) + 1
            rows.append(
                (
                    _data_bytes(data["path"]).decode("utf-8", "replace"),
                    start_line,
                    len(lines[line_start:s].decode("utf-8", "replace")) + 1,
                    end_line,
                    len(lines[end_line_start:e].decode("utf-8", "replace")) + 1,
                    data["absolute_offset"] + s,
                    data["absolute_offset"] + e,
                    lines[s:e].decode("utf-8", "replace"),
                )
            )
    return sorted(rows), total


def _data_bytes(data: dict[str, str]) -> bytes:
    return data["text"].encode() if "text" in data else base64.b64decode(data["bytes"])


def _bare_ast_grep(corpus: Path, pattern: str, language: str) -> list[Row]:
    out = subprocess.run(
        [ast_grep_path(), "run", "-p", pattern, "-l", language, "--json=stream"],
        cwd=corpus,
        capture_output=True,
        check=False,
        stdin=subprocess.DEVNULL,
    ).stdout
    rows: list[Row] = []
    for line in out.splitlines():
        m = json.loads(line)
        r = m["range"]
        rows.append(
            (
                m["file"],
                r["start"]["line"] + 1,
                r["start"]["column"] + 1,
                r["end"]["line"] + 1,
                r["end"]["column"] + 1,
                r["byteOffset"]["start"],
                r["byteOffset"]["end"],
                m["text"],
            )
        )
    return sorted(rows)


def _rows(corpus: Path, arguments: dict[str, Any], name: str) -> list[Row]:
    call = parse_tool_call({"name": name, "arguments": arguments})
    result = run_tool_call(call, corpus, timeout_s=60, max_findings=1_000_000)
    assert result.ok, result.error
    assert not result.truncated
    return [
        (f.path, f.start_line, f.start_col, f.end_line, f.end_col, f.byte_start, f.byte_end, f.text)
        for f in result.findings
    ]


@pytest.mark.parametrize(
    ("pattern", "flags"),
    [
        ("def ", {}),
        (r"self\.\w+", {}),
        ("import", {}),
        ("schema", {"case_sensitive": False}),
        (r"[^\x00-\x7F]+", {}),  # idna's tables: columns must count characters, not bytes
        (r"\w+[^\x00-\x7F]\w*", {}),
        (r"\)\n\s+def ", {"multiline": True}),
    ],
)
def test_rg_findings_match_the_bare_rg_json(
    corpus: Path, pattern: str, flags: dict[str, Any]
) -> None:
    extra = ["-i"] if flags.get("case_sensitive") is False else []
    extra += ["-U"] if flags.get("multiline") else []
    expected, total = _bare_rg(corpus, pattern, *extra)
    assert len(expected) == total > 0
    got = _rows(corpus, {"pattern": pattern, **flags}, "ripgrep_search")
    assert got == expected  # order included: sorted by path and position


@pytest.mark.parametrize(
    "pattern",
    ["def $F($$$A): $$$B", "self.$A = $B", "raise $E", "$X[$I]"],
)
def test_ast_grep_findings_match_the_bare_ast_grep_json(corpus: Path, pattern: str) -> None:
    expected = _bare_ast_grep(corpus, pattern, "python")
    assert expected
    got = _rows(corpus, {"pattern": pattern, "language": "python"}, "ast_grep_search")
    assert sorted(got) == expected


def test_a_pcre2_keep_out_match_without_submatches_is_the_lines_bare_rg_prints(
    tmp_path: Path,
) -> None:
    # With \K, rg can report a match whose submatch list is empty (it cannot place the match in
    # `lines`) and still print the line: the runner must not drop it.
    (tmp_path / "q.sql").write_text("users\nSELECT * FROM users;\n", encoding="utf-8")
    pattern = r"users[\s\S]*?\KSELECT \*"
    bare = subprocess.run(
        [rg_path(), "-n", "-U", "-P", "-e", pattern], cwd=tmp_path, capture_output=True,
        text=True, check=False, stdin=subprocess.DEVNULL,
    ).stdout  # fmt: skip
    assert bare.splitlines() == ["q.sql:2:SELECT * FROM users;"]
    call = parse_tool_call(
        {"name": "ripgrep_search",
         "arguments": {"pattern": pattern, "pcre2": True, "multiline": True}}
    )  # fmt: skip
    (found,) = run_tool_call(call, tmp_path).findings
    assert (found.path, found.start_line, found.end_line, found.text) == (
        "q.sql", 2, 2, "SELECT * FROM users;"
    )  # fmt: skip
    assert (found.start_col, found.end_col, found.byte_start, found.byte_end) == (1, 21, 6, 26)
