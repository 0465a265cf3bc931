"""Code as the studio shows it: the file tree, line windows, and marked HTML."""

from __future__ import annotations

from codesearch_core.studio.code import (
    Mark,
    Tone,
    file_tree,
    hit_windows,
    line_window,
    marked_window_html,
    render_lines_html,
)


def test_the_tree_lists_directories_first_and_folds_single_child_chains() -> None:
    entries = file_tree(
        [
            "pom.xml",
            "src/main/java/com/example/A.java",
            "src/main/java/com/example/B.java",
            "src/main/resources/app.properties",
            "README.md",
        ]
    )
    assert [("  " * e.depth) + e.name for e in entries] == [
        "src/main",
        "  java/com/example",
        "    A.java",
        "    B.java",
        "  resources",
        "    app.properties",
        "README.md",
        "pom.xml",
    ]
    folded = next(e for e in entries if e.name == "java/com/example")
    assert folded.is_dir and folded.path == "src/main/java/com/example/"


def test_line_window_adds_context_and_stays_inside_the_file() -> None:
    assert line_window(100, 50, 52, context=2) == (48, 54)
    assert line_window(3, 1, 1, context=5) == (1, 3)
    assert line_window(500, 10, 300, context=2, max_lines=40) == (8, 47)


def test_hit_windows_merge_hits_that_are_close() -> None:
    marks = [Mark(44, 44, Tone.MATCH), Mark(46, 46, Tone.MATCH), Mark(90, 91, Tone.MATCH)]
    assert hit_windows(100, marks, context=3) == [(41, 49), (87, 94)]


def test_marked_html_escapes_code_and_wraps_the_matched_columns() -> None:
    html = render_lines_html(
        ["ok = 1", "if a < b: foo(<x>)"], marks=[Mark(2, 2, Tone.HIT, start_col=11, end_col=19)]
    )
    assert "&lt;x&gt;" in html and "<x>" not in html
    assert ">foo(&lt;x&gt;)</mark>" in html
    assert 'title="hit"' in html
    assert html.count('title="') == 1  # only the marked line carries a tone


def test_a_window_is_numbered_as_in_the_file() -> None:
    lines = [f"line {i}" for i in range(1, 21)]
    html = marked_window_html(lines, Mark(10, 10, Tone.MISS), context=1, title="f.py")
    assert ">9</span>line 9" in html and ">11</span>line 11" in html
    assert "line 8<" not in html and "line 12<" not in html
    assert 'title="miss"' in html and "f.py" in html
