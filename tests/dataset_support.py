"""What the dataset tests share: the small recipe (tests/dataset/small.toml, on the fixture
corpora webshop and ledger) and the hashes of a built folder's files."""

from __future__ import annotations

import hashlib
from pathlib import Path

SMALL = Path(__file__).parent / "dataset" / "small.toml"
SEEDS = Path(__file__).parent.parent / "data" / "seeds" / "blueprints.jsonl"
_WEBSHOP = 'name = "webshop"\nsnapshot = "4204ea579f3e895a41b6ff7511e969ad35dea0e4e7da9eb711dffb107f2e7a29"'
#: `small_variant`'s edits that build the small recipe on ledger alone: a build of a few seconds.
LEDGER_ALONE: tuple[tuple[str, str], ...] = (
    (f"[[corpora]]\n{_WEBSHOP}\n\n", ""),
    ('train = ["webshop"]\neval = ["ledger"]', 'train = ["ledger"]'),
)


def file_hashes(folder: Path) -> dict[str, str]:
    """sha256 of every file a user reads in a data set folder (the stages' `.work` left out)."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and ".work" not in p.relative_to(folder).parts
    }


def small_variant(tmp_path: Path, *edits: tuple[str, str], name: str = "recipe.toml") -> Path:
    """The small recipe with edits (old, new), its seed path made absolute, written in tmp_path."""
    text = SMALL.read_text(encoding="utf-8").replace(
        "../../data/seeds/blueprints.jsonl", str(SEEDS)
    )
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new, 1)
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path
