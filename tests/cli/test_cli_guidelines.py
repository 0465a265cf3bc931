"""`codesearch guidelines show / set FILE --by NAME`: the annotation guidelines from the command
line, versioned in the store as the studio's Overview page saves them."""

from __future__ import annotations

from pathlib import Path

import pytest

from codesearch_core.cli import main
from codesearch_core.store import AuditFilters, Store


def test_set_saves_a_new_version_by_the_named_lead_and_show_prints_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db, guide = tmp_path / "studio.duckdb", tmp_path / "guide.md"
    assert main(["guidelines", "show", "--db", str(db)]) == 0
    assert "no guidelines yet" in capsys.readouterr().out
    guide.write_text("# Guide\r\n\r\nAccept exact matches only.\r\n", encoding="utf-8")
    assert main(["guidelines", "set", str(guide), "--by", "lee@x", "--db", str(db)]) == 0
    assert capsys.readouterr().out == "saved guidelines v1 by lee@x\n"
    # The same text again writes nothing; an edit is the next version.
    assert main(["guidelines", "set", str(guide), "--by", "lee@x", "--db", str(db)]) == 0
    assert "unchanged" in capsys.readouterr().out
    guide.write_text("# Guide\n\nAccept exact matches only.\nSkip when unsure.\n")
    assert main(["guidelines", "set", str(guide), "--by", "lee@x", "--db", str(db)]) == 0
    assert main(["guidelines", "show", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("saved guidelines v2 by lee@x\nGuidelines v2 · lee@x · ")
    assert out.endswith("\n\n# Guide\n\nAccept exact matches only.\nSkip when unsure.\n")
    assert main(["guidelines", "show", "--version", "1", "--db", str(db)]) == 0
    assert "Guidelines v1" in capsys.readouterr().out
    with Store(db) as store:
        saves = store.audit_log(AuditFilters(action="guidelines.save"))
        assert [(e.actor, e.target) for e in saves] == [("lee@x", "v2"), ("lee@x", "v1")]


def test_bad_input_is_a_clear_error_and_saves_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db, empty, binary = tmp_path / "s.duckdb", tmp_path / "empty.md", tmp_path / "g.bin"
    empty.write_text("  \n")
    binary.write_bytes(b"\xff\xfe\x00guide")
    assert main(["guidelines", "set", str(tmp_path / "nope.md"), "--db", str(db)]) == 2
    assert "cannot read" in capsys.readouterr().err
    assert main(["guidelines", "set", str(empty), "--db", str(db)]) == 2
    assert "the guidelines are empty" in capsys.readouterr().err
    assert main(["guidelines", "set", str(binary), "--db", str(db)]) == 2
    assert "is not UTF-8 text" in capsys.readouterr().err
    assert main(["guidelines", "show", "--version", "3", "--db", str(db)]) == 2
    assert "no version 3" in capsys.readouterr().err
    with Store(db) as store:
        assert store.guidelines.versions() == []
