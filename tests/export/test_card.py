"""The dataset card is rebuilt from the manifests in the folder, and never replaces a README.md that
it did not write (an export written into a project's own folder)."""

from __future__ import annotations

from pathlib import Path

import yaml
from store_helpers import blueprint, executed, proposal

from codesearch_core.export.card import CARD_MARKER
from codesearch_core.export.writers import export
from codesearch_core.store.core import Store


def test_a_card_lists_each_export_in_the_folder_and_spares_a_foreign_readme(
    tmp_path: Path, fixtures_corpus: Path
) -> None:
    with Store(tmp_path / "studio.duckdb") as store:
        bp = blueprint(1)
        store.blueprints.add([bp])
        executed(store, store.add_proposals([proposal(bp, "a")]))
        folder = tmp_path / "exports"
        export(store, "xlam", folder / "a.jsonl", include_reference=True, license="cc-by-4.0")
        export(store, "hf-prompts", folder / "b.jsonl")
        text = (folder / "README.md").read_text(encoding="utf-8")
        meta = yaml.safe_load(text.split("---")[1])
        assert meta["license"] == "cc-by-4.0"
        assert [c["data_files"][0]["path"] for c in meta["configs"]] == ["a.jsonl", "b.jsonl"]
        assert CARD_MARKER in text

        project = tmp_path / "project"
        project.mkdir()
        (project / "README.md").write_text("# My project\n", encoding="utf-8")
        export(store, "xlam", project / "train.jsonl", include_reference=True)
        assert (project / "README.md").read_text(encoding="utf-8") == "# My project\n"
        assert (project / "train.jsonl").stat().st_size > 0
