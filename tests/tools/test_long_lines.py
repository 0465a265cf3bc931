"""rg messages too long to hold are streamed (tools.long_lines) and give the findings the whole
message would: on the real rg's output, over lines with escapes, non-ASCII text, invalid UTF-8,
multi-line matches, PCRE2's \\K and context lines, however the pipe cuts them; and a 200 MB line
runs to the end with this process's memory nowhere near the line's size."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

import codesearch_core.tools.parsers as parsers
from codesearch_core.errors import ToolOutputError
from codesearch_core.models import Finding
from codesearch_core.tools import parse_tool_call, run_tool_call
from codesearch_core.tools.binaries import rg_path

#: Pieces of text that each exercise one path: JSON escapes (\" \\ \n \t \u0001), a backslash
#: before a `u` or `/` that is not an escape, 2-, 3- and 4-byte characters, CR.
PIECES = ("a", "foo", "u00e9", "/", "\\u0041", "é", "日本", "\t", "\\", '"', "\x01", "😀", " ",
          "\r", "x" * 50)  # fmt: skip


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("long")
    rng = random.Random(7)
    for i in range(4):
        text = "".join(rng.choice(PIECES) for _ in range(rng.randint(20_000, 40_000)))
        (root / f"line{i}.txt").write_bytes((text + ("\n" if i % 2 else "")).encode())
    (root / "latin1.txt").write_bytes(b"caf\xe9 foo " * 8000 + b"\n")
    (root / "two.txt").write_text("ab日本" * 8000 + "Z\nY" + "é\\" * 8000 + "\nZZ\n")
    return root


def rg_json(root: Path, *args: str) -> bytes:
    done = subprocess.run(
        [str(rg_path()), "--json", "--no-config", *args, "--", "."],
        cwd=root, capture_output=True, check=False,
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr
    return done.stdout


def parse(output: bytes, chunk: int, *, multiline: bool, root: Path | None = None) -> list[Finding]:
    parser = parsers.RipgrepParser(multiline=multiline, root=root)
    found = [f for i in range(0, len(output), chunk) for f in parser.feed(output[i : i + chunk])]
    return found + parser.close()


def stream_long_messages(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Stream every message over 1,000 bytes; the list fills with each message streamed, so a
    test can tell the streaming path ran (and did not just pass by parsing whole)."""
    streamed: list[object] = []

    class Counted(parsers.LongMessage):
        def __init__(self, path: str, root: Path | None = None, *, multiline: bool = True) -> None:
            super().__init__(path, root, multiline=multiline)
            streamed.append(self)

    monkeypatch.setattr(parsers, "LONG_MESSAGE_BYTES", 1000)
    monkeypatch.setattr(parsers, "LongMessage", Counted)
    return streamed


CASES = [
    ("foo",),
    ("é|😀",),
    ("(?s)foo.{0,5}",),
    ("\\\\",),
    ('"',),
    ("\\x01",),
    ("x{50}",),
    ("-P", "fo\\Ko"),  # PCRE2's \K: matches without submatches, the line is the finding
    ("-C", "1", "ZZ"),  # a long context line is skipped
    ("-U", "Z\\nY"),
    ("-U", "(?s)Z.Y.{0,3}"),
    ("-U", "\\\\\\nZ"),
    ("-U", "-P", "Z\\n\\KY"),
]


@pytest.mark.parametrize("args", CASES, ids=[" ".join(c) for c in CASES])
def test_a_streamed_message_gives_the_findings_of_the_whole_message(
    corpus: Path, args: tuple[str, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    output = rg_json(corpus, *args)
    multiline = "-U" in args
    whole = parse(output, 1 << 30, multiline=multiline)
    assert whole, "the case finds something"
    streamed = stream_long_messages(monkeypatch)
    for chunk in (7, 4093, 65_539):
        # Without the corpus root the line's JSON is unescaped; with it (and without -U) the
        # columns are counted in the searched file.
        for root in (None, corpus):
            assert parse(output, chunk, multiline=multiline, root=root) == whole, (chunk, root)
        # In 7-byte reads every message over 1,000 bytes is streamed (a bigger read can bring
        # a whole message at once, which is then parsed whole).
        assert streamed or chunk > 7, "the long messages were streamed"


def test_a_long_line_of_a_file_rg_transcodes_is_unescaped_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A byte-order mark: rg drops it (UTF-8) or transcodes the file (UTF-16), so its offsets are
    # not the file's. The line's JSON is unescaped instead, and the findings are rg's.
    (tmp_path / "bom8.txt").write_bytes(b"\xef\xbb\xbf" + ("é foo " * 3000).encode() + b"\n")
    (tmp_path / "bom16.txt").write_bytes(("\ufeff" + "é foo " * 3000 + "\n").encode("utf-16-le"))
    output = rg_json(tmp_path, "foo")
    whole = parse(output, 1 << 30, multiline=False)
    assert {f.path for f in whole} == {"bom8.txt", "bom16.txt"}
    stream_long_messages(monkeypatch)
    assert parse(output, 4093, multiline=False, root=tmp_path) == whole


def test_a_file_changed_since_rg_read_it_is_bad_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a.js").write_text("é foo " * 3000 + "\n")
    output = rg_json(tmp_path, "foo")
    (tmp_path / "a.js").write_text("foo é " * 3000 + "\n")
    stream_long_messages(monkeypatch)
    with pytest.raises(ToolOutputError, match="changed while rg searched it"):
        parse(output, 4093, multiline=False, root=tmp_path)


def test_output_that_ends_inside_a_long_match_is_a_tool_output_error(
    corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    output = rg_json(corpus, "foo")
    monkeypatch.setattr(parsers, "LONG_MESSAGE_BYTES", 1000)
    cut = output.index(b'"lines"') + 5000
    parser = parsers.RipgrepParser()
    parser.feed(output[:cut])
    with pytest.raises(ToolOutputError, match="ended inside a match"):
        parser.close()


def test_a_long_message_that_is_not_rg_json_is_a_tool_output_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(parsers, "LONG_MESSAGE_BYTES", 1000)
    output = b'{"type":"surprise","data":"' + b"x" * 5000 + b'"}\n'
    with pytest.raises(ToolOutputError, match="not a match"):
        parse(output, 2000, multiline=False)


CHILD = """
import json, sys
from pathlib import Path
from codesearch_core.tools import parse_tool_call, run_tool_call
call = parse_tool_call({"name": "ripgrep_search", "arguments": {"pattern": "DB\\\\.query\\\\("}})
result = run_tool_call(call, Path(sys.argv[1]), timeout_s=300)
# VmHWM is this process's own peak (getrusage's can carry the parent's over from the fork).
rss = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:")) / 1024
print(json.dumps({"ok": result.ok, "error": result.error, "truncated": result.truncated,
                  "findings": [f.to_dict() for f in result.findings],
                  "rss_mb": rss}))
"""


@pytest.mark.slow
def test_a_200_mb_line_runs_to_the_end_right_and_in_bounded_memory(tmp_path: Path) -> None:
    # A minified bundle: one 200 MB line, with quotes, escapes and non-ASCII text, and a call
    # every ~32 KB. Before streaming, the runner held the line several times over (828 MB).
    block = ('f("k",\'日本\');var s="a\\\\"b";' * 1000).encode()
    call = b"DB.query(q);"
    count = 200 * 1024 * 1024 // (len(block) + len(call))
    (tmp_path / "bundle.min.js").write_bytes((block + call) * count + b"\n")
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(tmp_path)],
        capture_output=True, text=True, timeout=600, check=True,
    )  # fmt: skip
    got = json.loads(done.stdout)
    assert got["ok"] and not got["truncated"], got["error"]
    findings = got["findings"]
    assert len(findings) == min(count, 10_000)
    chars = len(block.decode()) + len(call)
    for i in (0, 1, len(findings) - 1):  # found in file order; the nth call is after n blocks
        f = findings[i]
        start = (i + 1) * len(block) + i * len(call)
        assert (f["start_line"], f["end_line"]) == (1, 1)
        assert (f["byte_start"], f["byte_end"]) == (start, start + len("DB.query("))
        assert f["start_col"] == (i + 1) * chars - len(call) + 1
        assert f["text"] == "DB.query("
    assert got["rss_mb"] < 300, f"peak RSS {got['rss_mb']:.0f} MB for a 200 MB line"


def test_a_long_line_through_the_runner_matches_the_short_path(
    corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    call = parse_tool_call({"name": "ripgrep_search", "arguments": {"pattern": "é|foo"}})
    whole = run_tool_call(call, corpus, max_findings=10**6)
    streamed_messages = stream_long_messages(monkeypatch)
    streamed = run_tool_call(call, corpus, max_findings=10**6)
    assert streamed.ok and streamed.findings == whole.findings and len(whole.findings) > 1000
    assert streamed_messages


def test_a_line_whose_submatches_are_too_many_to_hold_is_bad_output(
    corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A pattern that matches everywhere in a 200 MB line would make gigabytes of submatches: the
    # run stops with a reason, not by running out of memory (the limit is lowered to show it).
    from codesearch_core.tools import long_lines

    monkeypatch.setattr(parsers, "LONG_MESSAGE_BYTES", 1000)
    monkeypatch.setattr(long_lines, "_TAIL_LIMIT", 10_000)
    call = parse_tool_call({"name": "ripgrep_search", "arguments": {"pattern": "a|é"}})
    result = run_tool_call(call, corpus, max_findings=10**6)
    assert not result.ok and result.error_kind is not None
    assert result.error_kind.value == "bad_output" and "narrow the pattern" in (result.error or "")
