"""Which regexes need PCRE2, checked against the real rg's two engines."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from codesearch_core.tools.binaries import rg_path
from codesearch_core.tools.pcre2 import pcre2_features, requires_pcre2, rg_supports_pcre2

REJECTED_BY_RUST_REGEX = [
    r"(?<=DB\.)query",
    r"(?<!foo)bar",
    r"foo(?=\()",
    r"foo(?!bar)",
    r"(\w+) \1",
    r"(?<q>['\"]).*\k<q>",
    r"(a)\g{1}",
    r"(?>ab|a)c",
    r"foo\Kbar",
    r"[a-z](?=[0-9])",
    r"(\((?:[^()]|(?1))*\))",
    r"(?|(a)|(b))",
    r"(*FAIL)|a",
    r"\Qa.b\E",
]
# Possessive quantifiers compile in Rust regex but mean nested repetition there.
POSSESSIVE = [r"a++a", r"\d*+x", r"x{2}+"]
NEEDS_PCRE2 = REJECTED_BY_RUST_REGEX + POSSESSIVE
RUST_REGEX_OK = [
    r"\(\?=",  # escaped: a literal "(?="
    r"[(?=]",  # a character class containing ( ? =
    r"[(?<!]x",
    r"\\1",  # an escaped backslash followed by a literal 1
    r"(?<name>\w+)",  # a named group, not a look-behind
    r"(?P<name>\w+)",
    r"(?i)foo",
    r"(?-i)Foo",
    r"(?s)a.b",
    r"a+?",
    r"a{2,3}?",
    r"\p{L}+",
    r"\x{41}+",
    r"[[:alpha:]]+",
    r"[a-z&&[^aeiou]]+",
    r"[]a]+",
    r"^\s*def\s+\w+\(",
    r"TODO|FIXME",
    r"(?R)x",  # Rust's CRLF flag, not PCRE recursion
]


@pytest.mark.parametrize("pattern", NEEDS_PCRE2)
def test_pcre2_only_constructs_are_detected(pattern: str) -> None:
    assert requires_pcre2(pattern)
    assert pcre2_features(pattern)


@pytest.mark.parametrize("pattern", RUST_REGEX_OK)
def test_escapes_classes_and_named_groups_are_not_false_positives(pattern: str) -> None:
    assert not requires_pcre2(pattern), pcre2_features(pattern)


def test_features_name_what_was_found() -> None:
    assert pcre2_features(r"(?<=a)b\1") == ("look-behind `(?<=...)`", "back-reference `\\1`")


def _rg_status(pattern: str, tmp: Path, *, pcre2: bool, text: str = "hello\n") -> int:
    (tmp / "f.txt").write_text(text)
    argv = [rg_path(), "--no-config", *(["-P"] if pcre2 else []), "-e", pattern, "--", "f.txt"]
    return subprocess.run(argv, cwd=tmp, capture_output=True).returncode


def _rg_compiles(pattern: str, tmp: Path, *, pcre2: bool) -> bool:
    return _rg_status(pattern, tmp, pcre2=pcre2) in (0, 1)


def test_a_possessive_quantifier_means_something_else_without_pcre2(tmp_path: Path) -> None:
    assert _rg_status("a++a", tmp_path, pcre2=False, text="aaa\n") == 0  # (a+)+a matches
    assert _rg_status("a++a", tmp_path, pcre2=True, text="aaa\n") == 1  # a++ leaves no "a"


@pytest.mark.parametrize("pattern", REJECTED_BY_RUST_REGEX)
def test_what_we_flag_fails_in_rgs_default_engine_and_compiles_with_pcre2(
    pattern: str, tmp_path: Path
) -> None:
    assert not _rg_compiles(pattern, tmp_path, pcre2=False)
    assert _rg_compiles(pattern, tmp_path, pcre2=True)


@pytest.mark.parametrize("pattern", RUST_REGEX_OK)
def test_what_we_pass_compiles_in_rgs_default_engine(pattern: str, tmp_path: Path) -> None:
    assert _rg_compiles(pattern, tmp_path, pcre2=False)


def test_the_installed_rg_has_pcre2() -> None:
    assert rg_supports_pcre2()
