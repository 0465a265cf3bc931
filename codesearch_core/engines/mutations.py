"""Hard negatives without a model: plausible wrong calls derived from a blueprint's reference call.

Each mutation imitates a mistake models really make (forgetting `pcre2`, a wrong `-t`, a regex where
structure was asked for, a search that is too broad). The calls are schema-valid, so they survive
parsing and only execution shows they are wrong — exactly what a preference data set needs. This is
also the engine a new user has without a GPU.
"""

from __future__ import annotations

import posixpath
import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from enum import StrEnum
from typing import Any, Final

from codesearch_core.engines.base import ProgressFn, SamplingSettings, StopFn, check_n
from codesearch_core.engines.prompt import Example, PromptConfig
from codesearch_core.errors import ToolCallError
from codesearch_core.models import Blueprint, Proposal, ToolCall, ToolName
from codesearch_core.tools import parse_tool_call, requires_pcre2

ENGINE_NAME: Final = "mutations"
MODEL_NAME: Final = "mutations-v1"


class MutationKind(StrEnum):
    DROP_PCRE2 = "drop_pcre2"  # look-around kept, pcre2 dropped: violates the PCRE2 rule
    SWAP_TYPE_FILTER = "swap_type_filter"  # -t c → -t go
    DROP_TYPE_FILTER = "drop_type_filter"  # every language searched
    AST_TO_REGEX = "ast_to_regex"  # structure asked for, a naive text regex given
    OVERMATCH_REGEX = "overmatch_regex"  # a bare identifier: hits comments and strings too
    WRONG_LANGUAGE = "wrong_language"  # ast-grep parses the files with the wrong grammar
    BROADEN_PATH = "broaden_path"  # the path scope widened to the parent (or dropped)
    CASE_FLIP = "case_flip"  # case sensitivity inverted
    DROP_WORD = "drop_word"  # -w dropped: `cafe` also finds `cafeteria`


#: Confusable rg types: the neighbour a model reaches for by mistake.
SWAPPED_FILE_TYPE: Final[dict[str, str]] = {
    "c": "go",
    "go": "c",
    "cpp": "c",
    "js": "ts",
    "ts": "js",
    "typescript": "js",
    "py": "ruby",
    "python": "ruby",
    "ruby": "py",
    "rust": "go",
    "java": "kotlin",
    "kotlin": "java",
    "csharp": "java",
    "cs": "java",
    "php": "js",
    "swift": "kotlin",
    "sh": "py",
}

#: Confusable ast-grep grammars.
WRONG_LANGUAGE: Final[dict[str, str]] = {
    "javascript": "typescript",
    "typescript": "javascript",
    "tsx": "typescript",
    "c": "cpp",
    "cpp": "c",
    "python": "ruby",
    "ruby": "python",
    "go": "rust",
    "rust": "go",
    "java": "kotlin",
    "kotlin": "java",
    "csharp": "java",
    "php": "javascript",
    "swift": "kotlin",
    "scala": "java",
    "bash": "python",
    "html": "javascript",
    "css": "html",
}

#: ast-grep language → rg `-t` name, for the regex a model writes instead of a structural search.
RG_TYPE_FOR_LANGUAGE: Final[dict[str, str]] = {
    "bash": "sh",
    "c": "c",
    "cpp": "cpp",
    "csharp": "csharp",
    "css": "css",
    "dart": "dart",
    "elixir": "elixir",
    "go": "go",
    "haskell": "haskell",
    "hcl": "tf",
    "html": "html",
    "java": "java",
    "javascript": "js",
    "json": "json",
    "kotlin": "kotlin",
    "lua": "lua",
    "nix": "nix",
    "php": "php",
    "python": "py",
    "ruby": "ruby",
    "rust": "rust",
    "scala": "scala",
    "solidity": "solidity",
    "swift": "swift",
    "tsx": "ts",
    "typescript": "ts",
    "yaml": "yaml",
}

# The characters rg's (Rust) regex syntax lets you escape; escaping anything else is an error there.
_RUST_META = frozenset("\\.+*?()|[]{}^$#&-~")
_METAVAR = re.compile(r"\$\$\$[A-Z_][A-Z0-9_]*|\$\$\$|\$[A-Z_][A-Z0-9_]*")
_ESCAPE_CLASS = re.compile(r"\\[A-Za-z]")
_IDENTIFIER = re.compile(r"[A-Za-z_\u00c0-\uffff][\w.]*\w|[A-Za-z_\u00c0-\uffff]")

#: Words every language shares: grepping for them finds everything, which no model would write.
_KEYWORDS: Final = frozenset(
    [
        "async",
        "await",
        "return",
        "function",
        "def",
        "class",
        "if",
        "else",
        "elif",
        "for",
        "while",
        "const",
        "let",
        "var",
        "new",
        "fn",
        "pub",
        "func",
        "import",
        "from",
        "static",
        "public",
        "private",
        "void",
        "int",
        "char",
        "struct",
        "impl",
        "self",
        "this",
    ]
)

Mutator = Callable[[ToolCall], dict[str, Any] | None]


def mutate(call: ToolCall) -> list[tuple[MutationKind, ToolCall]]:
    """Every mutation that applies to `call`, each different from it and from the others."""
    seen = {call.to_json()}
    out: list[tuple[MutationKind, ToolCall]] = []
    for kind, mutator in _MUTATORS:
        candidate = mutator(call)
        if candidate is None:
            continue
        try:
            mutated = parse_tool_call(candidate)
        except ToolCallError:
            continue  # e.g. a converted pattern over the length bound: not a mistake worth keeping
        if mutated.to_json() in seen:
            continue
        seen.add(mutated.to_json())
        out.append((kind, mutated))
    return out


class MutationEngine:
    """The embedded default engine: deterministic, instant, no model."""

    name: str = ENGINE_NAME
    model: str = MODEL_NAME

    def propose(
        self,
        blueprints: Sequence[Blueprint],
        *,
        n: int = 1,
        settings: SamplingSettings | None = None,
        prompt: PromptConfig | None = None,
        examples: Sequence[Example] = (),
        on_progress: ProgressFn | None = None,
        should_stop: StopFn | None = None,
    ) -> list[Proposal]:
        """At most `n` mutations per blueprint (sampling, prompt and examples do not apply)."""
        # No upper bound: a large `n` costs nothing here, it means "every kind that applies".
        check_n(n, at_most=None)
        proposals: list[Proposal] = []
        for done, blueprint in enumerate(blueprints, start=1):
            if should_stop is not None and should_stop():
                break
            started = time.perf_counter()
            for kind, call in mutate(blueprint.reference_call)[:n]:
                proposals.append(
                    Proposal(
                        blueprint_id=blueprint.id,
                        engine=ENGINE_NAME,
                        model=MODEL_NAME,
                        raw_text=call.to_json(),
                        call=call,
                        valid=True,
                        sampling={"n": n},
                        latency_s=time.perf_counter() - started,
                        mutation_kind=kind.value,
                    )
                )
            if on_progress is not None:
                on_progress(done, len(blueprints))
        return proposals


def _args(call: ToolCall) -> dict[str, Any]:
    return dict(call.arguments)


def _rg(call: ToolCall) -> dict[str, Any] | None:
    return _args(call) if call.name is ToolName.RIPGREP else None


def _ripgrep_call(arguments: Mapping[str, Any]) -> dict[str, Any]:
    return {"name": ToolName.RIPGREP.value, "arguments": dict(arguments)}


def _same_tool(call: ToolCall, arguments: Mapping[str, Any]) -> dict[str, Any]:
    return {"name": call.name.value, "arguments": dict(arguments)}


def _drop_pcre2(call: ToolCall) -> dict[str, Any] | None:
    args = _rg(call)
    if args is None or args.get("pcre2") is not True or not requires_pcre2(str(args["pattern"])):
        return None
    del args["pcre2"]
    return _same_tool(call, args)


def _swap_type_filter(call: ToolCall) -> dict[str, Any] | None:
    args = _rg(call)
    types = list(args.get("file_types", ())) if args else []
    for i, t in enumerate(types):
        if t in SWAPPED_FILE_TYPE and SWAPPED_FILE_TYPE[t] not in types:
            types[i] = SWAPPED_FILE_TYPE[t]
            assert args is not None
            args["file_types"] = types
            return _same_tool(call, args)
    return None


def _drop_type_filter(call: ToolCall) -> dict[str, Any] | None:
    args = _rg(call)
    if args is None or not args.get("file_types"):
        return None
    del args["file_types"]
    return _same_tool(call, args)


def _ast_texts(call: ToolCall) -> list[str]:
    """The code a call names: its `pattern`, or every `pattern` and `regex` inside its rule."""
    if call.name is not ToolName.AST_GREP:
        return []
    if isinstance(call.arguments.get("pattern"), str):
        return [call.arguments["pattern"]]

    def walk(node: Any) -> Iterator[str]:
        if isinstance(node, Mapping):
            for key, value in node.items():
                if key in ("pattern", "regex") and isinstance(value, str):
                    yield value
                else:
                    yield from walk(value)
        elif isinstance(node, list):
            for item in node:
                yield from walk(item)

    return list(walk(call.arguments.get("rule")))


def _scope_for_regex(call: ToolCall) -> dict[str, Any]:
    """The `-t` and paths a model keeps when it turns a structural search into a regex."""
    scope: dict[str, Any] = {}
    rg_type = RG_TYPE_FOR_LANGUAGE.get(str(call.arguments.get("language")))
    if rg_type:
        scope["file_types"] = [rg_type]
    if call.arguments.get("paths"):
        scope["paths"] = list(call.arguments["paths"])
    return scope


def _naive_regex(pattern: str) -> str:
    """An ast-grep pattern read as text: metavariables become wildcards, the rest is literal."""
    out: list[str] = []
    pos = 0
    for m in _METAVAR.finditer(pattern):
        out.append(_escape_literal(pattern[pos : m.start()]))
        out.append(".*" if m.group().startswith("$$$") else r"\w+")
        pos = m.end()
    out.append(_escape_literal(pattern[pos:]))
    return "".join(out)


def _escape_literal(text: str) -> str:
    parts: list[str] = []
    for chunk in re.split(r"(\s+)", text):
        if not chunk:
            continue
        if chunk.isspace():
            parts.append(r"\s*")
        else:
            parts.append("".join("\\" + c if c in _RUST_META else c for c in chunk))
    return "".join(parts)


def _ast_to_regex(call: ToolCall) -> dict[str, Any] | None:
    if call.name is not ToolName.AST_GREP or not isinstance(call.arguments.get("pattern"), str):
        return None
    regex = _naive_regex(call.arguments["pattern"].strip())
    if not regex:
        return None
    return _ripgrep_call({"pattern": regex, **_scope_for_regex(call)})


def _longest_identifier(text: str) -> str | None:
    """The most distinctive name in a pattern: the longest one that is not a keyword."""
    text = _METAVAR.sub(" ", _ESCAPE_CLASS.sub(" ", text))
    names = [n for n in _IDENTIFIER.findall(text) if n not in _KEYWORDS]
    return max(names, key=len) if names else None


def _overmatch_regex(call: ToolCall) -> dict[str, Any] | None:
    if call.name is ToolName.AST_GREP:
        names = [n for p in _ast_texts(call) if (n := _longest_identifier(p))]
        if not names:
            return None
        bare = _escape_literal(max(names, key=len))
        return _ripgrep_call({"pattern": bare, **_scope_for_regex(call)})
    args = _args(call)
    if args.get("fixed_strings"):
        return None
    name = _longest_identifier(str(args["pattern"]))
    if name is None:
        return None
    bare = _escape_literal(name)
    if bare == args["pattern"] and not args.get("word"):
        return None
    args["pattern"] = bare
    for flag in ("word", "pcre2", "multiline"):
        args.pop(flag, None)
    return _same_tool(call, args)


def _wrong_language(call: ToolCall) -> dict[str, Any] | None:
    if call.name is not ToolName.AST_GREP:
        return None
    args = _args(call)
    wrong = WRONG_LANGUAGE.get(str(args.get("language")))
    if wrong is None:
        return None
    args["language"] = wrong
    return _same_tool(call, args)


def _broaden_path(call: ToolCall) -> dict[str, Any] | None:
    args = _args(call)
    paths = list(args.get("paths", ()))
    if not paths:
        return None
    parents: list[str] = []
    for path in paths:
        parent = posixpath.dirname(path.rstrip("/"))
        if parent in ("", ".", "/"):
            # The parent of a top-level path is the whole corpus: no `paths` at all.
            parents = []
            break
        if parent not in parents:
            parents.append(parent)
    if parents:
        args["paths"] = parents
    else:
        del args["paths"]
    return _same_tool(call, args)


def _case_flip(call: ToolCall) -> dict[str, Any] | None:
    args = _rg(call)
    if args is None or not re.search(r"[A-Za-z]", _ESCAPE_CLASS.sub("", str(args["pattern"]))):
        return None
    insensitive = args.get("case_sensitive") is False or args.get("smart_case") is True
    args.pop("smart_case", None)
    if insensitive:
        args.pop("case_sensitive", None)
    else:
        args["case_sensitive"] = False
    return _same_tool(call, args)


def _drop_word(call: ToolCall) -> dict[str, Any] | None:
    args = _rg(call)
    if args is None or args.get("word") is not True:
        return None
    del args["word"]
    return _same_tool(call, args)


# The order is the order of preference when `n` is smaller than the number that apply.
_MUTATORS: Final[tuple[tuple[MutationKind, Mutator], ...]] = (
    (MutationKind.DROP_PCRE2, _drop_pcre2),
    (MutationKind.AST_TO_REGEX, _ast_to_regex),
    (MutationKind.SWAP_TYPE_FILTER, _swap_type_filter),
    (MutationKind.OVERMATCH_REGEX, _overmatch_regex),
    (MutationKind.WRONG_LANGUAGE, _wrong_language),
    (MutationKind.DROP_TYPE_FILTER, _drop_type_filter),
    (MutationKind.DROP_WORD, _drop_word),
    (MutationKind.CASE_FLIP, _case_flip),
    (MutationKind.BROADEN_PATH, _broaden_path),
)
