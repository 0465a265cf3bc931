"""Corpus browsing: names, file lists, reading files safely, languages, and the shipped corpora."""

from __future__ import annotations

from pathlib import Path

import pytest

from codesearch_core.corpora import corpus, read_manifest
from codesearch_core.errors import CorpusError
from codesearch_core.tools import parse_tool_call, run_tool_call
from codesearch_core.tools.schemas import AST_GREP_LANGUAGES


@pytest.fixture
def corpora(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Two small corpora (and some things that are not corpora) under a temporary corpora dir."""
    root = tmp_path / "corpora"
    shop = root / "shop"
    (shop / "src" / "web").mkdir(parents=True)
    (shop / "src" / "app.js").write_text("console.log('hi');\n")
    (shop / "src" / "web" / "Cart.tsx").write_text("export const Cart = () => null;\n")
    (shop / "README.md").write_text("# shop\n")
    (shop / ".git").mkdir()
    (shop / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (shop / ".env").write_text("SECRET=1\n")
    (shop / "src" / ".cache").mkdir()
    (shop / "src" / ".cache" / "x.js").write_text("x\n")
    (root / "tiny").mkdir()
    (root / "tiny" / "main.go").write_text("package main\n")
    (root / ".hidden").mkdir()
    (root / "stray-file.txt").write_text("not a corpus\n")
    monkeypatch.setenv("CODESEARCH_CORPORA", str(root))
    return root


def test_list_corpora_lists_visible_directories_sorted(corpora: Path) -> None:
    assert corpus.list_corpora() == ["shop", "tiny"]


def test_list_corpora_is_empty_when_the_directory_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CODESEARCH_CORPORA", str(tmp_path / "nowhere"))
    assert corpus.list_corpora() == []


def test_corpus_root_of_a_known_name(corpora: Path) -> None:
    assert corpus.corpus_root("shop") == corpora / "shop"


@pytest.mark.parametrize("name", ["", "shop/src", "../shop", ".hidden", "a\\b", ".."])
def test_corpus_root_refuses_names_that_are_not_plain(corpora: Path, name: str) -> None:
    with pytest.raises(CorpusError, match="not a corpus name"):
        corpus.corpus_root(name)


def test_corpus_root_of_an_unknown_name_lists_the_known_ones(corpora: Path) -> None:
    with pytest.raises(CorpusError, match=r"unknown corpus 'nope' \(known: shop, tiny\)"):
        corpus.corpus_root("nope")


def test_list_files_skips_hidden_entries_and_is_sorted_posix(corpora: Path) -> None:
    assert corpus.list_files("shop") == ["README.md", "src/app.js", "src/web/Cart.tsx"]


def test_list_files_skips_symlinks(corpora: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("top secret\n")
    (corpora / "tiny" / "link.txt").symlink_to(secret)
    assert corpus.list_files("tiny") == ["main.go"]


def test_file_tree_nests_directories(corpora: Path) -> None:
    assert corpus.file_tree("shop") == {
        "README.md": None,
        "src": {"app.js": None, "web": {"Cart.tsx": None}},
    }


def test_read_file_text_returns_the_text(corpora: Path) -> None:
    assert corpus.read_file_text("shop", "src/app.js") == "console.log('hi');\n"


def test_a_file_that_is_not_utf8_is_read_as_latin1_and_says_so(corpora: Path) -> None:
    (corpora / "tiny" / "latin1.c").write_bytes(b"/* caf\xe9 */\n")
    assert corpus.read_file_text("tiny", "latin1.c") == "/* café */\n"
    assert corpus.file_encoding("tiny", "latin1.c") == "Windows-1252 (not UTF-8)"
    assert corpus.file_encoding("shop", "src/app.js") == "UTF-8"


def test_a_byte_order_mark_is_dropped_as_rg_drops_it(corpora: Path) -> None:
    (corpora / "tiny" / "bom.html").write_bytes(
        b"\xef\xbb\xbf<!doctype html>\r\n<p>caf\xc3\xa9</p>\r\n"
    )
    assert corpus.read_file_text("tiny", "bom.html").splitlines() == [
        "<!doctype html>",
        "<p>café</p>",
    ]
    assert corpus.file_encoding("tiny", "bom.html") == "UTF-8 with BOM"


def test_a_binary_file_is_refused_with_what_the_tools_do_with_it(corpora: Path) -> None:
    (corpora / "tiny" / "font.woff2").write_bytes(b"wOF2\x00\x01\x00\x00" + bytes(range(256)))
    with pytest.raises(
        CorpusError, match=r"'font.woff2' is a binary file \(264 bytes\): not shown"
    ):
        corpus.read_file_text("tiny", "font.woff2")


@pytest.mark.parametrize("rel", ["../tiny/main.go", "/etc/passwd", "src/../../tiny/main.go"])
def test_read_file_text_refuses_paths_outside_the_corpus(corpora: Path, rel: str) -> None:
    with pytest.raises(CorpusError):
        corpus.read_file_text("shop", rel)


def test_read_file_text_refuses_a_symlink_that_escapes(corpora: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("top secret\n")
    (corpora / "tiny" / "link.txt").symlink_to(secret)
    with pytest.raises(CorpusError, match="outside the corpus"):
        corpus.read_file_text("tiny", "link.txt")


def test_read_file_text_refuses_directories_missing_files_and_big_files(corpora: Path) -> None:
    with pytest.raises(CorpusError, match="not a file"):
        corpus.read_file_text("shop", "src")
    with pytest.raises(CorpusError, match="not a file"):
        corpus.read_file_text("shop", "src/missing.js")
    (corpora / "tiny" / "big.log").write_bytes(b"x" * 2048)
    with pytest.raises(CorpusError, match="too large"):
        corpus.read_file_text("tiny", "big.log", max_bytes=1024)


@pytest.mark.parametrize(
    ("rel", "language"),
    [
        ("src/App.tsx", "tsx"),
        ("src/api.ts", "typescript"),
        ("src/Checkout.jsx", "javascript"),
        ("a/b.MJS", "javascript"),
        ("tools/sites.py", "python"),
        ("cmd/main.go", "go"),
        ("probe/include/probe.h", "c"),
        ("ringbuf/src/lib.rs", "rust"),
        ("src/Main.java", "java"),
        ("logs/server.log", None),
        ("config/default.ini", None),
        ("Makefile", None),
    ],
)
def test_language_for_path_maps_extensions_to_ast_grep_names(
    rel: str, language: str | None
) -> None:
    assert corpus.language_for_path(rel) == language


def test_every_mapped_language_is_an_ast_grep_language() -> None:
    assert set(corpus.AST_GREP_EXTENSIONS.values()) <= set(AST_GREP_LANGUAGES)


def test_highlight_language_falls_back_to_text() -> None:
    assert corpus.highlight_language("config/default.ini") == "ini"
    assert corpus.highlight_language("probe/Makefile") == "makefile"
    assert corpus.highlight_language("src/api.ts") == "typescript"
    assert corpus.highlight_language("data.unknown") == "text"


# ----------------------------------------------------------------------------- shipped corpora


def test_the_shipped_corpora_are_there_and_multilingual() -> None:
    names = corpus.list_corpora()
    assert {"webshop", "telemetry", "ledger"} <= set(names)
    languages = {
        lang
        for name in names
        for rel in corpus.list_files(name)
        if (lang := corpus.language_for_path(rel))
    }
    assert {"javascript", "typescript", "tsx", "python", "go", "c", "rust", "java"} <= languages


def test_the_shipped_corpora_have_no_hidden_files_but_their_gitignores_and_manifest() -> None:
    # Hidden files are invisible to both tools. A corpus's .gitignore is noise a real repository
    # has: the runner passes --no-ignore, so the files it names are searched like any other. The
    # manifest pins the corpus (corpora.snapshot). A published package fetched as a real corpus
    # (pypi:, npm:) keeps the dot-files its authors shipped (.github/, .keep...): they are the
    # package's, and no seed expects them.
    for name in corpus.list_corpora():
        root = corpus.corpus_root(name)
        manifest = read_manifest(root)
        if manifest is not None and manifest.source.startswith(("pypi:", "npm:")):
            continue
        hidden = [
            p for p in root.rglob(".*") if p.name not in (".gitignore", ".codesearch-manifest.json")
        ]
        assert hidden == [], f"{name}: {hidden}"


def test_files_a_corpus_gitignore_names_are_shipped_and_searched() -> None:
    # Shipped with `git add -f` (git honours the corpus's .gitignore inside this repository too):
    # a clone without them would make the scope seeds pass for the wrong reason.
    root = corpus.corpus_root("storefront")
    ignored = ["node_modules/left-pad/index.js", "packages/web/dist/app.min.js", "debug.log"]
    assert all((root / rel).is_file() for rel in ignored)
    call = parse_tool_call({"name": "ripgrep_search", "arguments": {"pattern": "leftPad"}})
    found = {f.path for f in run_tool_call(call, root).findings}
    assert "node_modules/left-pad/index.js" in found


def test_the_shipped_corpora_hold_the_adversarial_traps() -> None:
    sites = corpus.read_file_text("telemetry", "tools/sites.py")
    assert "def café(" in sites and "def cafe(" in sites
    assert "fmt.Printf(" in corpus.read_file_text("telemetry", "cmd/agent/main.go")
    assert "printf(" in corpus.read_file_text("telemetry", "probe/src/cli.c")
    assert "password=" in corpus.read_file_text("webshop", "logs/server.log")
    cart = corpus.read_file_text("webshop", "src/web/components/Cart.tsx").splitlines()
    assert any(ln.lstrip().startswith("//") and "useEffect" in ln for ln in cart)
    assert any(ln.lstrip().startswith("useEffect(") for ln in cart)
    assert "'TODO: " in corpus.read_file_text("webshop", "tests/orders.test.js")


def test_main_language_is_the_language_most_files_are_in() -> None:
    files = ["README.md", "src/a.js", "src/b.js", "src/c.py", "pom.xml"]
    assert corpus.main_language(files) == "javascript"
    assert corpus.main_language(["README.md", "notes.txt"]) is None  # ast-grep parses none


def test_read_file_lines_numbers_lines_as_the_tools_do(corpora: Path) -> None:
    # A form feed, U+2028 and a lone CR end lines for str.splitlines but not for rg or ast-grep:
    # the line a finding names must be the line shown.
    (corpora / "tiny" / "odd.py").write_bytes(
        "a = 1\x0c\nb = 2\u2028c = 3\rd = 4\r\nTARGET = 5\n".encode()
    )
    lines = corpus.read_file_lines("tiny", "odd.py")
    call = parse_tool_call({"name": "ripgrep_search", "arguments": {"pattern": "TARGET"}})
    (found,) = run_tool_call(call, corpus.corpus_root("tiny")).findings
    assert lines[found.start_line - 1] == "TARGET = 5"
    assert lines == ["a = 1\x0c", "b = 2\u2028c = 3\rd = 4", "TARGET = 5"]
