"""Does a regex need PCRE2 (`rg -P`), and does the installed `rg` have it?

ripgrep's default engine (Rust `regex`) has no look-arounds, back-references, atomic groups,
recursion or backtracking verbs and rejects them; possessive quantifiers it reads differently
(`a++` as `(a+)+`, so `a++a` matches there and never in PCRE2). A call that uses one must say `pcre2: true`, and the runner refuses it before
running otherwise (ErrorKind.PCRE2_REQUIRED), so a model learns the rule instead of reading a regex
error.

The scan is a small tokenizer, not a regex over the pattern: escapes (`\\(`), character classes
(`[(?=]`, nested Rust classes, `[:alpha:]`) and braces of `\\p{..}` / `\\x{..}` are skipped as units so
their contents never count as syntax.
"""

from __future__ import annotations

import re
import subprocess
from functools import cache, lru_cache
from typing import Final

from codesearch_core.tools.binaries import rg_path

# Group openers that only PCRE2 understands, longest first so `(?<=` wins over `(?<`.
_GROUP_FEATURES: Final[tuple[tuple[str, str], ...]] = (
    ("(?<=", "look-behind `(?<=...)`"),
    ("(?<!", "negative look-behind `(?<!...)`"),
    ("(?=", "look-ahead `(?=...)`"),
    ("(?!", "negative look-ahead `(?!...)`"),
    ("(?>", "atomic group `(?>...)`"),
    ("(?|", "branch reset group `(?|...)`"),
    ("(?(", "conditional group `(?(...)...)`"),
    ("(?#", "comment group `(?#...)`"),
    ("(?&", "subroutine call `(?&name)`"),
    ("(?P>", "subroutine call `(?P>name)`"),
    ("(?P=", "named back-reference `(?P=name)`"),
    ("(?C", "callout `(?C...)`"),
    ("(*", "backtracking verb or look-around `(*...)`"),
)
# (?1), (?-1), (?+1). Not `(?-i)` (a flag), and not `(?R)`: Rust reads that as its CRLF flag.
_RELATIVE_RECURSION = re.compile(r"\(\?[+-]?\d")
_COUNTED_REPETITION = re.compile(r"\{\d*,?\d*\}")
_BRACED_ESCAPES: Final = frozenset("pPxuUNo")
_QUANTIFIERS: Final = frozenset("*+?")


@lru_cache(maxsize=4096)  # verification and the reward check the same patterns again and again
def pcre2_features(pattern: str) -> tuple[str, ...]:
    """Human-readable names of the PCRE2-only constructs in `pattern`, in order of appearance."""
    found: list[str] = []
    i, n = 0, len(pattern)
    # What the previous token was: a quantifier can be followed by `+` (possessive, PCRE2-only)
    # or `?` (lazy, fine everywhere).
    after_quantifier = False
    while i < n:
        c = pattern[i]
        if c == "\\":
            i = _scan_escape(pattern, i, found)
            after_quantifier = False
        elif c == "[":
            i = _end_of_class(pattern, i)
            after_quantifier = False
        elif c == "(":
            feature = _group_feature(pattern, i)
            if feature:
                found.append(feature)
            i += 1
            after_quantifier = False
        elif c in _QUANTIFIERS:
            if after_quantifier and c == "+":
                found.append("possessive quantifier (`+` after a quantifier)")
                after_quantifier = False
            elif after_quantifier and c == "?":
                after_quantifier = False  # lazy modifier: allowed by both engines
            else:
                after_quantifier = True
            i += 1
        elif c == "{" and (m := _COUNTED_REPETITION.match(pattern, i)) and m.group() != "{}":
            i = m.end()
            after_quantifier = True
        else:
            i += 1
            after_quantifier = False
    return tuple(found)


def requires_pcre2(pattern: str) -> bool:
    """True when `pattern` uses a construct that only PCRE2 (`rg -P`) supports."""
    return bool(pcre2_features(pattern))


@cache
def rg_supports_pcre2() -> bool:
    """Whether the installed `rg` was built with PCRE2 (`rg --pcre2-version` exits 0 only then)."""
    proc = subprocess.run(
        [rg_path(), "--no-config", "--pcre2-version"],
        capture_output=True,
        stdin=subprocess.DEVNULL,
        timeout=30,
    )
    return proc.returncode == 0


def _scan_escape(pattern: str, i: int, found: list[str]) -> int:
    """Index after the escape starting at `pattern[i] == '\\\\'`, noting PCRE2-only escapes."""
    nxt = pattern[i + 1 : i + 2]
    after = pattern[i + 2 : i + 3]
    if nxt in tuple("123456789"):
        found.append(f"back-reference `\\{nxt}`")
    elif nxt == "k" and after in ("<", "{", "'"):
        found.append("named back-reference `\\k<name>`")
    elif nxt == "g" and (after in ("{", "<", "'", "-", "+") or after.isdigit()):
        found.append("back-reference or subroutine `\\g...`")
    elif nxt == "K":
        found.append("match reset `\\K`")
    elif nxt == "Q":
        found.append("literal quoting `\\Q...\\E`")
        end = pattern.find("\\E", i + 2)
        return len(pattern) if end < 0 else end + 2
    elif nxt in _BRACED_ESCAPES and after == "{":
        end = pattern.find("}", i + 2)
        return len(pattern) if end < 0 else end + 1
    return i + 2


def _end_of_class(pattern: str, i: int) -> int:
    """Index after the character class opening at `pattern[i] == '['` (Rust nesting rules)."""
    n = len(pattern)
    j = i + 1
    if j < n and pattern[j] == "^":
        j += 1
    if j < n and pattern[j] == "]":  # a leading `]` is a literal
        j += 1
    depth = 1
    while j < n:
        c = pattern[j]
        if c == "\\":
            j += 2
            continue
        if c == "[":
            if pattern.startswith("[:", j):
                close = pattern.find(":]", j + 2)
                if close >= 0:
                    j = close + 2
                    continue
            depth += 1
        elif c == "]":
            depth -= 1
            if depth == 0:
                return j + 1
        j += 1
    return n


def _group_feature(pattern: str, i: int) -> str | None:
    for opener, name in _GROUP_FEATURES:
        if pattern.startswith(opener, i):
            return name
    if _RELATIVE_RECURSION.match(pattern, i):
        return "recursion `(?N)`"
    return None
