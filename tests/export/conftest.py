"""The store the issue's "done when" names, built once for the export tests: seed blueprints
(`export_support.SEED_IDS` and a plan), the mutation engine's proposals for them, executed and
graded by the real tools, and no human decision. Every single-call format is exported from it once,
with reference calls, as `codesearch export FMT --include-reference --out F` does. The agent
formats (the gym's episodes) are written from a store of reference rollouts (`episode_exports`)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from export_support import (
    DATA,
    EPISODE_SEED_IDS,
    EpisodeExports,
    Loader,
    review_episodes,
    seed_blueprints,
)

from codesearch_core.engines.mutations import MutationEngine
from codesearch_core.export.records import EPISODE_FORMATS, GYM_FORMATS, ExportFormat
from codesearch_core.export.writers import export
from codesearch_core.gym import (
    ReferencePolicy,
    ReplayPolicy,
    Task,
    as_tasks,
    export_episodes,
    read_recorded,
    rollouts,
)
from codesearch_core.gym import seed_blueprints as gym_seeds
from codesearch_core.store.core import Store
from codesearch_core.verify.pending import verify_pending


@pytest.fixture(scope="session")
def seed_exports(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder with one `<format>.jsonl` per format (and manifests, card, dataset_info.json).

    One store session does it all: a store reopened twice after it was written is refused as
    truncated by the size check at open (DuckDB shortens the file at a checkpoint), a problem of
    `store.connect` that these tests are not about."""
    folder = tmp_path_factory.mktemp("seed_exports")
    blueprints = seed_blueprints()
    with Store(folder.parent / f"{folder.name}.duckdb") as store:
        store.blueprints.add(blueprints)
        store.add_proposals(MutationEngine().propose(blueprints, n=4))
        verify_pending(store, workers=1)
        for fmt in set(ExportFormat) - GYM_FORMATS:  # the gym's: episode_exports, tests/gym
            out = folder / f"{fmt.value}.jsonl"
            assert export(store, fmt, out, include_reference=True).rows > 0, fmt.value
    return folder


@pytest.fixture(scope="session")
def hf_load(tmp_path_factory: pytest.TempPathFactory) -> Loader:
    """`datasets.load_dataset("json", data_files=...)`, offline, with a throw-away cache."""
    home = tmp_path_factory.mktemp("hf_home_targets")
    os.environ["HF_DATASETS_OFFLINE"] = "1"
    import datasets

    def load(path: Path) -> Any:
        return datasets.load_dataset(
            "json", data_files=str(path), split="train", cache_dir=str(home / "cache")
        )

    return load


def _parallel_episode(task: Task, folder: Path) -> Path:
    """A recorded episode with two calls in one turn (the reference policy plays one a turn):
    the reference call and a read of the first expected span, then the submit."""
    bp = task.blueprint
    first = bp.expected[0]
    read = {"name": "read_file", "arguments": {"path": first.path, "start_line": first.start_line,
                                               "end_line": first.end_line}}  # fmt: skip
    line = {"blueprint_id": bp.id, "turns": [[bp.reference_call.to_dict(), read]],
            "submit": [s.to_dict() for s in bp.expected]}  # fmt: skip
    path = folder / "parallel.jsonl"
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def episode_exports(tmp_path_factory: pytest.TempPathFactory) -> EpisodeExports:
    """The reference policy's episodes on a few seeds of the fixture corpora (single calls of
    both search tools, a plan over several turns) and one recorded episode with a parallel turn,
    stored as `codesearch rollouts --engine reference` stores them and written in every agent
    format through the gym's replay check, as `codesearch export hf-agent --out DIR` does."""
    folder = tmp_path_factory.mktemp("episode_exports")
    tasks = {t.blueprint.id: t for t in as_tasks(gym_seeds()).tasks}
    chosen = [tasks[i] for i in EPISODE_SEED_IDS]
    chosen.append(next(t for t in tasks.values() if t.blueprint.plan is not None))
    with Store(folder.parent / f"{folder.name}.duckdb") as store:
        assert rollouts(ReferencePolicy(), chosen, store, k=1).kept == len(chosen)
        recorded = read_recorded(_parallel_episode(chosen[0], folder.parent))
        assert rollouts(ReplayPolicy(list(recorded)), chosen[:1], store, min_reward=0.0).kept == 1
        review_episodes(store)
        episodes = {e.episode_id: e for e in store.episodes.list()}
        replays = {}
        for fmt in sorted(EPISODE_FORMATS):
            manifest, replays[fmt.value] = export_episodes(
                store, fmt, folder / f"{fmt.value}.jsonl"
            )
            assert manifest.rows == len(episodes), fmt.value
    return EpisodeExports(folder, episodes, replays)


@pytest.fixture(scope="session")
def qwen() -> Any:
    """A tokenizer built without a download, carrying Qwen2.5-Instruct's chat template."""
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel
    from transformers import PreTrainedTokenizerFast

    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=Tokenizer(WordLevel({"<unk>": 0}, unk_token="<unk>"))
    )
    tokenizer.chat_template = (DATA / "qwen2.5-instruct.chat_template.jinja").read_text()
    return tokenizer
