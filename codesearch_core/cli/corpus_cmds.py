"""Sub-commands of `codesearch corpus`: add (a pinned snapshot of a folder, git checkout, sdist or
npm package), list, check (the folder against its manifest) and pin (a new manifest for the folder
as it is)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Final

from codesearch_core.cli.progress import Progress
from codesearch_core.cli.tool_cmds import EXIT_OK, EXIT_PROBLEMS
from codesearch_core.corpora import (
    CorpusInfo,
    add_corpus,
    check_corpus,
    corpus_info,
    corpus_root,
    list_corpora,
    pin_corpus,
    short_id,
)


def register(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser("corpus", help="the corpora: add, list, check, pin")
    csub = p.add_subparsers(dest="corpus_command", required=True, metavar="SUBCOMMAND")
    add = csub.add_parser(
        "add",
        help="add a corpus: a pinned, read-only snapshot of SOURCE",
        description=(
            "SOURCE: a directory (its files as a checkout has them: .gitignore applies), "
            "git:PATH[@REV] (the files git tracks, at REV), pypi:NAME==VERSION (the sdist, by pip "
            "download) or npm:NAME@VERSION (the tarball, by npm pack). The snapshot appears whole "
            "or not at all, with a manifest whose hash is its snapshot id."
        ),
    )
    add.add_argument("name", help="the corpus's name (letters, digits, . _ -)")
    add.add_argument("--from", dest="source", required=True, metavar="SOURCE")
    add.add_argument("--replace", action="store_true", help="replace a corpus of that name")
    add.add_argument(
        "--max-bytes",
        type=int,
        metavar="N",
        help="refuse a source larger than N bytes (default CODESEARCH_CORPUS_MAX_BYTES or 2 GB)",
    )
    add.set_defaults(func=cmd_add)
    ls = csub.add_parser("list", help="the corpora with snapshot id, files, bytes, languages")
    ls.add_argument("--json", action="store_true", help="one JSON list")
    ls.set_defaults(func=cmd_list)
    check = csub.add_parser(
        "check",
        help="exit 1 and name the files when a corpus no longer matches its manifest",
    )
    check.add_argument("names", nargs="*", metavar="NAME", help="default: every corpus")
    check.add_argument("--json", action="store_true")
    check.add_argument(
        "--full",
        action="store_true",
        help="hash every file (by default a file whose size and mtime match keeps its hash)",
    )
    check.set_defaults(func=cmd_check)
    pin = csub.add_parser(
        "pin",
        help="write a new manifest for the folder as it is (after editing it on purpose)",
    )
    pin.add_argument("names", nargs="+", metavar="NAME")
    pin.set_defaults(func=cmd_pin)


_STAGES: Final = {"fetch": "fetching", "copy": "copying", "hash": "hashing"}


def cmd_add(args: argparse.Namespace) -> int:
    bars: dict[str, Progress] = {}  # a line per stage, the one before closed when one begins

    def progress(stage: str, done: int, total: int) -> None:
        if stage not in bars:
            for bar in bars.values():
                bar.close()
            bars[stage] = Progress(_STAGES[stage], total=total or None, unit="files")
        bars[stage].update(done, total=total or None)

    try:
        result = add_corpus(
            args.name,
            args.source,
            replace=args.replace,
            max_bytes=args.max_bytes,
            progress=progress,
        )
    finally:
        for bar in bars.values():
            bar.close()
    m = result.manifest
    print(
        f"added corpus {result.name}: {len(m.files):,} files, {m.total_bytes:,} bytes, "
        f"snapshot {short_id(m.snapshot_id)} ({result.root})"
    )
    if result.skipped_symlinks:
        print(f"left out {result.skipped_symlinks} symlink(s): a corpus is plain files only")
    return EXIT_OK


def _info_dict(info: CorpusInfo) -> dict[str, Any]:
    return {
        "name": info.name,
        "snapshot_id": info.snapshot_id,
        "files": info.files,
        "bytes": info.bytes,
        "languages": dict(info.languages),
        "source": info.source,
        "created_at": info.created_at,
    }


def cmd_list(args: argparse.Namespace) -> int:
    infos = [corpus_info(name) for name in list_corpora()]
    if args.json:
        print(json.dumps([_info_dict(i) for i in infos], indent=2))
        return EXIT_OK
    for i in infos:
        langs = (
            ", ".join(f"{lang} {n}" for lang, n in i.languages[:4]) or "no language ast-grep parses"
        )
        print(
            f"{i.name:<20} {short_id(i.snapshot_id):<12} {i.files:>7,} files "
            f"{i.bytes:>13,} bytes  {langs}"
        )
    return EXIT_OK


def cmd_check(args: argparse.Namespace) -> int:
    names = args.names or list_corpora()
    results = [check_corpus(name, full=args.full) for name in names]
    if args.json:
        print(
            json.dumps(
                [
                    {
                        "name": r.name,
                        "ok": r.ok,
                        "pinned_id": r.pinned_id,
                        "content_id": r.content_id,
                        "changed": r.changed,
                        "added": r.added,
                        "removed": r.removed,
                        "not_plain": r.not_plain,
                    }
                    for r in results
                ],
                indent=2,
            )
        )
    else:
        for r in results:
            if r.ok:
                print(f"{r.name}: matches its snapshot {short_id(r.pinned_id)}")
            elif r.pinned_id is None:
                print(f"{r.name}: not pinned (no manifest); `codesearch corpus pin {r.name}`")
            else:
                diff = r.lines()
                print(
                    f"{r.name}: differs from its snapshot {short_id(r.pinned_id)} in "
                    f"{len(diff)} file(s); now {short_id(r.content_id)}"
                )
                for line in diff:
                    print(f"  {line}")
        if any(not r.ok for r in results):
            print(
                "a corpus edited by hand: restore the files, or `codesearch corpus pin NAME` to "
                "pin it as it is, then `codesearch verify --stale` re-checks what it changed",
                file=sys.stderr,
            )
    return EXIT_OK if all(r.ok for r in results) else EXIT_PROBLEMS


def cmd_pin(args: argparse.Namespace) -> int:
    for name in args.names:
        corpus_root(name)
    for name in args.names:
        manifest = pin_corpus(name)
        print(
            f"{name}: pinned {len(manifest.files):,} files as snapshot {short_id(manifest.snapshot_id)}"
        )
    return EXIT_OK
