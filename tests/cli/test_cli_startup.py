"""What starting `codesearch` imports: the command table, not the commands (issue 41).

`codesearch --help` (goal <= 0.3 s) and `codesearch run` (<= 0.5 s) start in a fraction of that
only while `import codesearch_core.cli` stays small: the top-level parser lists the commands from
`cli.COMMANDS`, and only the module of the command named on the command line is imported. These
tests hold that shape (not a timing: `benchmarks/bench_cold_start.py` measures the times).
"""

from __future__ import annotations

import argparse
import io
import json
import subprocess
import sys

import pytest

from codesearch_core.cli import COMMANDS, build_parser, main
from codesearch_core.cli.progress import Progress

#: Everything `import codesearch_core.cli` may add to `sys.modules` in a fresh interpreter (Python
#: 3.11): the package, its errors, and the standard library modules argparse, enum and typing
#: need. A module that appears beyond these (a command's module, tqdm, msgspec, the corpora, the
#: models, logging, importlib.metadata...) fails the test: import it where it is used instead
#: (inside the command's function), or, if it is light and really needed to list the commands,
#: add it here with the time `python -X importtime` gives it.
ALLOWED_AT_IMPORT = frozenset(
    {
        # the project
        "codesearch_core",
        "codesearch_core.cli",
        "codesearch_core.errors",
        # the standard library
        "__future__",
        "_collections",
        "_functools",
        "_operator",
        "_sre",
        "_typing",
        "argparse",
        "collections",
        "collections.abc",
        "contextlib",
        "copyreg",
        "enum",
        "functools",
        "gettext",
        "importlib",
        "importlib._bootstrap",
        "importlib._bootstrap_external",
        "itertools",
        "keyword",
        "operator",
        "re",
        "re._casefix",
        "re._compiler",
        "re._constants",
        "re._parser",
        "reprlib",
        "types",
        "typing",
        "typing.io",
        "typing.re",
        "warnings",
    }
)
#: What printing the help adds: argparse's formatter reads the terminal's width (shutil, which
#: imports its archive formats' modules), wraps the text (textwrap) and translates it (locale).
ALLOWED_FOR_HELP = ALLOWED_AT_IMPORT | {
    "_bz2",
    "_compression",
    "_locale",
    "_lzma",
    "bz2",
    "errno",
    "fnmatch",
    "io",  # the probe's own (loaded at start-up anyway)
    "locale",
    "lzma",
    "shutil",
    "textwrap",
    "zlib",
}
COMMAND_MODULES = frozenset(f"codesearch_core.cli.{c.module}" for c in COMMANDS)
SEARCH = '{"name": "ripgrep_search", "arguments": {"pattern": "datasource"}}'


def new_modules(code: str) -> set[str]:
    """The modules `code` adds to `sys.modules` in a fresh interpreter."""
    probe = (
        "import sys, json\n"
        "before = set(sys.modules)\n"
        f"{code}\n"
        "print(json.dumps(sorted(set(sys.modules) - before)))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True
    )
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


def test_importing_the_cli_loads_only_the_allowed_modules() -> None:
    extra = new_modules("import codesearch_core.cli") - ALLOWED_AT_IMPORT
    assert not extra, f"`import codesearch_core.cli` now also loads {sorted(extra)}"


def test_the_top_level_help_loads_no_more_than_the_import() -> None:
    code = (
        "import contextlib, io\n"
        "from codesearch_core.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try:\n"
        "        main(['--help'])\n"
        "    except SystemExit:\n"
        "        pass"
    )
    extra = new_modules(code) - ALLOWED_FOR_HELP
    assert not extra, f"`codesearch --help` now also loads {sorted(extra)}"


def test_a_search_loads_its_own_commands_module_and_no_other() -> None:
    loaded = new_modules(
        f"from codesearch_core.cli import main\nmain(['run', '--corpus', 'ledger', {SEARCH!r}])"
    )
    assert loaded & COMMAND_MODULES == {"codesearch_core.cli.tool_cmds"}
    assert "tqdm" not in loaded and "codesearch_core.cli.progress" not in loaded


def test_the_help_lists_every_command_with_its_modules_own_help() -> None:
    # The table's names and help, in order, are what the modules register: the full parser (every
    # module imported) and the one `main` builds for `--help` (none imported) print the same.
    full = build_parser()
    (commands,) = (a for a in full._actions if isinstance(a, argparse._SubParsersAction))
    assert [(a.dest, a.help) for a in commands._choices_actions] == [
        (c.name, c.help) for c in COMMANDS
    ]
    assert build_parser([]).format_help() == full.format_help()
    assert build_parser(["--help"]).format_help() == full.format_help()


def test_each_command_gets_its_modules_full_parser() -> None:
    for command in COMMANDS:
        parser = build_parser([command.name])
        (commands,) = (a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        own = commands.choices[command.name]
        # A stand-in has no -h and no function; the module's parser has both, or sub-commands.
        assert own.add_help, command.name
        full = build_parser()
        (all_commands,) = (a for a in full._actions if isinstance(a, argparse._SubParsersAction))
        assert own.format_help() == all_commands.choices[command.name].format_help()


def test_options_before_the_command_do_not_hide_it() -> None:
    parser = build_parser(["-h", "run"])
    (commands,) = (a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert commands.choices["run"].add_help


def test_an_unknown_command_is_refused_with_the_list_of_commands(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["no-such-command"])
    assert stop.value.code == 2
    assert "invalid choice: 'no-such-command'" in capsys.readouterr().err


def test_the_progress_module_imports_tqdm_only_to_draw_a_bar() -> None:
    loaded = new_modules("import codesearch_core.cli.progress")
    assert "tqdm" not in loaded
    # On a pipe or a file nothing is drawn, so tqdm is not imported either.
    code = (
        "import io\n"
        "from codesearch_core.cli.progress import Progress\n"
        "with Progress('verify', total=3, stream=io.StringIO()) as p:\n"
        "    p.update(2)"
    )
    assert "tqdm" not in new_modules(code)


def test_a_silent_progress_line_still_counts() -> None:
    with Progress("verify", total=4, unit="calls", stream=io.StringIO()) as progress:
        progress.update(3, errors=1)
    assert not progress.enabled and progress.done == 3
