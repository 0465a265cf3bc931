"""Model intents through an OpenAI-compatible server (a scripted local one): n samples per target
with a JSON-schema response format; invalid JSON and intents quoting the pattern are dropped and
counted, the best usable sample becomes the draft's intent with its prompt and samples kept."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from codesearch_core.cli import main
from codesearch_core.store import Store
from codesearch_core.synthesis import INTENT_SCHEMA
from tests.engines.test_engines_openai import FakeServer, Reply, completion


def _three_samples(body: dict[str, Any]) -> Reply:
    user = body["messages"][-1]["content"]
    fact = next(line for line in user.splitlines() if line.startswith("The search: "))
    good = json.dumps({"intent": "Please, " + fact.removeprefix("The search: "),
                       "difficulty": "medium"})  # fmt: skip
    quoting = json.dumps({"intent": "Search for $$$ARGS in every call", "difficulty": "easy"})
    reply = completion(3)
    for choice, content in zip(reply["choices"], ["{not json", quoting, good], strict=True):
        choice["message"]["content"] = content
    return Reply(body=reply)


@pytest.fixture
def server() -> Any:
    s = FakeServer()
    yield s
    s.close()


def test_openai_intents_are_sampled_checked_and_counted(
    server: FakeServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server.script = [_three_samples] * 200
    db = tmp_path / "s.duckdb"
    code = main(["synthesize", "--corpus", "webshop", "--engine", "openai", "--base-url",
                 server.url, "--model", "m", "--n", "3", "--limit", "4", "--json", "--db",
                 str(db)])  # fmt: skip
    report = json.loads(capsys.readouterr().out)
    assert code == 0 and report["kept"] == 4
    assert report["dropped"]["sample_invalid_json"] >= 4
    assert report["dropped"]["sample_quotes_pattern"] >= 4
    request = server.requests[0]
    assert request["n"] == 3 and request["model"] == "m"
    assert request["response_format"]["json_schema"]["schema"] == INTENT_SCHEMA
    with Store(db) as store:
        drafts, total = store.drafts.list(limit=10)
    assert total == 4
    for draft in drafts:
        assert draft.intent.startswith("Please, ") and draft.engine == "openai"
        assert draft.model == "m" and len(draft.sample["samples"]) == 3
        assert draft.sample["dropped"] == {"invalid_json": 1, "quotes_pattern": 1}
        assert "The search: " in draft.prompt  # the conversation the model saw
