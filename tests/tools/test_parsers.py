"""The stream parsers on output captured from the real rg 15 and ast-grep 0.51."""

from __future__ import annotations

import pytest

from codesearch_core.models import Finding
from codesearch_core.tools.parsers import (
    AstGrepParser,
    RipgrepParser,
    ToolOutputError,
    parse_ast_grep_json,
    parse_ripgrep_json,
)

# `rg --json --crlf -e café -- .` over u.py = "x = café + café\nfoo\nbar\n"
RG_TWO_SUBMATCHES_UNICODE = b"""\
{"type":"begin","data":{"path":{"text":"./u.py"}}}
{"type":"match","data":{"path":{"text":"./u.py"},"lines":{"text":"x = caf\xc3\xa9 + caf\xc3\xa9\\n"},"line_number":1,"absolute_offset":0,"submatches":[{"match":{"text":"caf\xc3\xa9"},"start":4,"end":9},{"match":{"text":"caf\xc3\xa9"},"start":12,"end":17}]}}
{"type":"end","data":{"path":{"text":"./u.py"},"binary_offset":null,"stats":{"elapsed":{"secs":0,"nanos":42273,"human":"0.000042s"},"searches":1,"searches_with_match":1,"bytes_searched":26,"bytes_printed":284,"matched_lines":1,"matches":2}}}
{"data":{"elapsed_total":{"human":"0.003215s","nanos":3215145,"secs":0},"stats":{"bytes_printed":284,"bytes_searched":56,"elapsed":{"human":"0.000076s","nanos":76134,"secs":0},"matched_lines":1,"matches":2,"searches":3,"searches_with_match":1}},"type":"summary"}
"""

# `rg --json -U -e 'foo\nbar\n' -- u.py`: the match ends with its newline.
RG_MULTILINE = b"""\
{"type":"begin","data":{"path":{"text":"u.py"}}}
{"type":"match","data":{"path":{"text":"u.py"},"lines":{"text":"foo\\nbar\\n"},"line_number":2,"absolute_offset":18,"submatches":[{"match":{"text":"foo\\nbar\\n"},"start":0,"end":8}]}}
{"type":"end","data":{"path":{"text":"u.py"},"binary_offset":null,"stats":{"elapsed":{"secs":0,"nanos":31267,"human":"0.000031s"},"searches":1,"searches_with_match":1,"bytes_searched":26,"bytes_printed":230,"matched_lines":2,"matches":1}}}
"""

# `rg --json -e caf -- .` over a Latin-1 file named b"lat\xe9.txt" holding b"caf\xe9 = 1\r\n".
RG_NON_UTF8 = b"""\
{"type":"begin","data":{"path":{"bytes":"Li9sYXTpLnR4dA=="}}}
{"type":"match","data":{"path":{"bytes":"Li9sYXTpLnR4dA=="},"lines":{"bytes":"Y2Fm6SA9IDENCg=="},"line_number":1,"absolute_offset":0,"submatches":[{"match":{"text":"caf"},"start":0,"end":3}]}}
{"type":"end","data":{"path":{"bytes":"Li9sYXTpLnR4dA=="},"binary_offset":null,"stats":{"elapsed":{"secs":0,"nanos":37055,"human":"0.000037s"},"searches":1,"searches_with_match":1,"bytes_searched":10,"bytes_printed":255,"matched_lines":1,"matches":1}}}
"""

# `rg --json -C1 -e foo -- u.py`: context lines around one match.
RG_CONTEXT = b"""\
{"type":"begin","data":{"path":{"text":"u.py"}}}
{"type":"context","data":{"path":{"text":"u.py"},"lines":{"text":"x = caf\xc3\xa9 + caf\xc3\xa9\\n"},"line_number":1,"absolute_offset":0,"submatches":[]}}
{"type":"match","data":{"path":{"text":"u.py"},"lines":{"text":"foo\\n"},"line_number":2,"absolute_offset":18,"submatches":[{"match":{"text":"foo"},"start":0,"end":3}]}}
{"type":"context","data":{"path":{"text":"u.py"},"lines":{"text":"bar\\n"},"line_number":3,"absolute_offset":22,"submatches":[]}}
{"type":"end","data":{"path":{"text":"u.py"},"binary_offset":null,"stats":{"elapsed":{"secs":0,"nanos":30405,"human":"0.000030s"},"searches":1,"searches_with_match":1,"bytes_searched":26,"bytes_printed":489,"matched_lines":1,"matches":1}}}
"""

# Two files, as rg prints them from two threads: each file's block is contiguous.
RG_TWO_FILES = b"""\
{"type":"begin","data":{"path":{"text":"b.py"}}}
{"type":"match","data":{"path":{"text":"b.py"},"lines":{"text":"import os\\n"},"line_number":3,"absolute_offset":40,"submatches":[{"match":{"text":"import"},"start":0,"end":6}]}}
{"type":"end","data":{"path":{"text":"b.py"},"binary_offset":null,"stats":{"elapsed":{"secs":0,"nanos":1,"human":"0s"},"searches":1,"searches_with_match":1,"bytes_searched":1,"bytes_printed":1,"matched_lines":1,"matches":1}}}
{"type":"begin","data":{"path":{"text":"a/x.py"}}}
{"type":"match","data":{"path":{"text":"a/x.py"},"lines":{"text":"  import re\\r\\n"},"line_number":1,"absolute_offset":0,"submatches":[{"match":{"text":"import"},"start":2,"end":8}]}}
{"type":"end","data":{"path":{"text":"a/x.py"},"binary_offset":null,"stats":{"elapsed":{"secs":0,"nanos":1,"human":"0s"},"searches":1,"searches_with_match":1,"bytes_searched":1,"bytes_printed":1,"matched_lines":1,"matches":1}}}
"""

# `ast-grep run -p '$A + $B' -l python --json=stream -- u.py`
AST_GREP_UNICODE = b"""\
{"text":"caf\xc3\xa9 + caf\xc3\xa9","range":{"byteOffset":{"start":4,"end":17},"start":{"line":0,"column":4},"end":{"line":0,"column":15}},"file":"u.py","lines":"x = caf\xc3\xa9 + caf\xc3\xa9","charCount":{"leading":4,"trailing":0},"language":"Python","metaVariables":{"single":{"A":{"text":"caf\xc3\xa9","range":{"byteOffset":{"start":4,"end":9},"start":{"line":0,"column":4},"end":{"line":0,"column":8}}},"B":{"text":"caf\xc3\xa9","range":{"byteOffset":{"start":12,"end":17},"start":{"line":0,"column":11},"end":{"line":0,"column":15}}}},"multi":{},"transformed":{}}}
"""

# `ast-grep run -p 'def $F(): $$$B' -l python --json=stream`: a node spanning two lines (the
# `./` is added: ast-grep strips it itself, the parser must too).
AST_GREP_MULTILINE = b"""\
{"text":"def f():\\n    return 1","range":{"byteOffset":{"start":0,"end":21},"start":{"line":0,"column":0},"end":{"line":1,"column":12}},"file":"./b.py","lines":"def f():\\n    return 1","charCount":{"leading":0,"trailing":0},"language":"Python","metaVariables":{"single":{},"multi":{},"transformed":{}}}
"""


def test_one_finding_per_submatch_with_character_columns_and_byte_offsets() -> None:
    first, second = parse_ripgrep_json(RG_TWO_SUBMATCHES_UNICODE)
    # "x = café + café": the second café starts at byte 12 but character 11 (é is two bytes).
    assert first == Finding("u.py", 1, 5, 1, 9, 4, 9, "café")
    assert second == Finding("u.py", 1, 12, 1, 16, 12, 17, "café")


def test_rg_path_loses_its_leading_dot_slash() -> None:
    assert {f.path for f in parse_ripgrep_json(RG_TWO_SUBMATCHES_UNICODE)} == {"u.py"}


def test_multiline_match_ending_with_its_newline_ends_on_that_line() -> None:
    (f,) = parse_ripgrep_json(RG_MULTILINE)
    assert (f.start_line, f.start_col) == (2, 1)
    # "bar\n": the last matched character is the newline at column 4, so end_col (exclusive) is 5.
    assert (f.end_line, f.end_col) == (3, 5)
    assert (f.byte_start, f.byte_end) == (18, 26)
    assert f.text == "foo\nbar\n"


def test_base64_path_and_lines_decode_with_replacement() -> None:
    (f,) = parse_ripgrep_json(RG_NON_UTF8)
    assert f.path == "lat\ufffd.txt"
    assert (f.start_line, f.start_col, f.end_col, f.byte_start, f.byte_end) == (1, 1, 4, 0, 3)
    assert f.text == "caf"


def test_context_lines_are_not_findings() -> None:
    (f,) = parse_ripgrep_json(RG_CONTEXT)
    assert (f.path, f.start_line, f.text, f.byte_start) == ("u.py", 2, "foo", 18)


def test_each_match_takes_the_path_of_its_file_block() -> None:
    b, a = parse_ripgrep_json(RG_TWO_FILES)
    assert (b.path, b.start_line, b.byte_start) == ("b.py", 3, 40)
    assert (a.path, a.start_line, a.start_col, a.end_col) == ("a/x.py", 1, 3, 9)


@pytest.mark.parametrize("output", [RG_TWO_SUBMATCHES_UNICODE, RG_MULTILINE, RG_TWO_FILES])
def test_feeding_any_split_of_the_stream_gives_the_same_findings(output: bytes) -> None:
    whole = parse_ripgrep_json(output)
    for cut in range(1, len(output)):
        parser = RipgrepParser()
        parts = parser.feed(output[:cut]) + parser.feed(output[cut:]) + parser.close()
        assert parts == whole, cut


@pytest.mark.parametrize("size", [1, 7, 64])
def test_a_line_that_arrives_in_many_reads_is_joined_once_and_parsed_whole(size: int) -> None:
    # A minified bundle's match is one JSON line of many reads: every piece but the last has no
    # newline, and the line is whole only when its newline comes.
    long_line = b"x" * 5000 + "café".encode() + b"y" * 5000
    output = (
        b'{"type":"begin","data":{"path":{"text":"min.js"}}}\n'
        b'{"type":"match","data":{"path":{"text":"min.js"},"lines":{"text":"'
        + long_line
        + b'\\n"},"line_number":1,"absolute_offset":0,"submatches":[{"match":{"text":"caf'
        + "é".encode()
        + b'"},"start":5000,"end":5005}]}}\n'
    )
    parser = RipgrepParser(multiline=False)
    found = [f for i in range(0, len(output), size) for f in parser.feed(output[i : i + size])]
    assert found + parser.close() == parse_ripgrep_json(output)
    (finding,) = found
    assert (finding.path, finding.start_line, finding.byte_start, finding.byte_end) == (
        "min.js",
        1,
        5000,
        5005,
    )


def test_a_last_line_without_newline_is_parsed_on_close() -> None:
    rg = RipgrepParser()
    assert rg.feed(RG_CONTEXT.rstrip(b"\n")) != []  # the match line was complete
    assert rg.close() == []  # the unterminated `end` line holds no finding

    sg = AstGrepParser("python")
    assert sg.feed(AST_GREP_UNICODE.rstrip(b"\n")) == []
    assert len(sg.close()) == 1


def test_output_that_is_not_rg_json_is_a_tool_output_error() -> None:
    with pytest.raises(ToolOutputError, match="rg printed output that is not the expected JSON"):
        parse_ripgrep_json(b"rg: warning: something\n")
    with pytest.raises(ToolOutputError):
        parse_ripgrep_json(b'{"type":"surprise","data":{}}\n')


def test_ast_grep_positions_become_one_based_and_carry_the_language() -> None:
    (f,) = parse_ast_grep_json(AST_GREP_UNICODE, "python")
    assert f == Finding("u.py", 1, 5, 1, 16, 4, 17, "café + café", "python")


def test_ast_grep_multiline_node_and_dot_slash_path() -> None:
    (f,) = parse_ast_grep_json(AST_GREP_MULTILINE, "python")
    assert (f.path, f.start_line, f.start_col, f.end_line, f.end_col) == ("b.py", 1, 1, 2, 13)
    assert (f.byte_start, f.byte_end) == (0, 21)


def test_ast_grep_node_ending_with_newline_ends_on_its_line_like_rg() -> None:
    line = (
        b'{"text":"foo\\n","range":{"byteOffset":{"start":10,"end":14},'
        b'"start":{"line":2,"column":3},"end":{"line":3,"column":0}},"file":"a.py"}\n'
    )
    (f,) = parse_ast_grep_json(line)
    # Same rule as rg: the newline is the last character (column 4 + 3 = 7), end_col is one past.
    assert (f.start_line, f.start_col, f.end_line, f.end_col) == (3, 4, 3, 8)


def test_ast_grep_output_that_is_not_a_match_is_a_tool_output_error() -> None:
    with pytest.raises(ToolOutputError, match="ast-grep"):
        parse_ast_grep_json(b'{"text": "x"}\n')


def test_empty_output_has_no_findings() -> None:
    assert parse_ripgrep_json(b"") == []
    assert parse_ast_grep_json(b"") == []


def test_several_submatches_across_lines_of_one_multiline_message() -> None:
    # `rg -U` can report one `lines` block holding two lines and a match on each.
    line = (
        '{"type":"match","data":{"path":{"text":"m.txt"},"lines":{"text":"é a\\nb é\\n"},'
        '"line_number":4,"absolute_offset":100,"submatches":['
        '{"match":{"text":"é"},"start":0,"end":2},{"match":{"text":"é"},"start":7,"end":9}]}}\n'
    )
    first, second = parse_ripgrep_json(
        b'{"type":"begin","data":{"path":{"text":"m.txt"}}}\n' + line.encode()
    )
    assert (first.start_line, first.start_col, first.end_line, first.end_col) == (4, 1, 4, 2)
    assert (second.start_line, second.start_col, second.end_line, second.end_col) == (5, 3, 5, 4)
    assert (second.byte_start, second.byte_end, second.text) == (107, 109, "é")
