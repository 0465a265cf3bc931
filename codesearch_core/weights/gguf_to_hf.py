"""GGUF -> a plain Hugging Face folder. Run as a script by the python of an environment with
torch, transformers and gguf (the vLLM venv), never imported by the project (which has no torch):

    python gguf_to_hf.py MODEL.gguf OUT_DIR

transformers de-quantizes the GGUF's tensors while loading, but a model loaded from a GGUF refuses
`save_pretrained` and its config still says `quant_method: gguf` (vLLM would then look for a GGUF):
its state dict goes into a model built from the config with the quantization dropped, which is
saved with the tokenizer (whose chat template the GGUF carries). A failure the user can act on is
printed as one line starting with ERROR_MARK and exit status 3.
"""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path
from typing import Any

ERROR_MARK = "codesearch-convert-error: "
RESULT_MARK = "codesearch-convert-result: "
_NOT_ARCHITECTURES = frozenset({"general", "tokenizer"})


def _fail(message: str) -> int:
    print(ERROR_MARK + message, flush=True)
    return 3


def convert(gguf_path: Path, out: Path) -> dict[str, Any]:
    gguf: Any = importlib.import_module("gguf")
    torch: Any = importlib.import_module("torch")
    transformers: Any = importlib.import_module("transformers")
    utils: Any = importlib.import_module("transformers.modeling_gguf_pytorch_utils")

    reader = gguf.GGUFReader(str(gguf_path))
    field = reader.fields.get("general.architecture")
    architecture = str(field.contents()) if field is not None else ""
    supported = sorted(set(utils.GGUF_SUPPORTED_ARCHITECTURES) - _NOT_ARCHITECTURES)
    if architecture not in supported:
        raise ValueError(
            f"{gguf_path.name} is a GGUF of architecture {architecture or '(none)'!r}, which "
            f"transformers {transformers.__version__} cannot load (it reads: {', '.join(supported)})"
        )
    folder, name = str(gguf_path.parent), gguf_path.name
    tokenizer = transformers.AutoTokenizer.from_pretrained(folder, gguf_file=name)
    loaded = transformers.AutoModelForCausalLM.from_pretrained(folder, gguf_file=name)
    config = loaded.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    plain = transformers.AutoModelForCausalLM.from_config(config, dtype=loaded.dtype)
    plain.load_state_dict(loaded.state_dict(), strict=True)
    with torch.no_grad():
        plain.save_pretrained(str(out))
    tokenizer.save_pretrained(str(out))
    return {
        "architecture": architecture,
        "model_type": str(config.model_type),
        "parameters": int(sum(p.numel() for p in plain.parameters())),
        "dtype": str(loaded.dtype).removeprefix("torch."),
        "transformers": str(transformers.__version__),
        "gguf": str(getattr(gguf, "__version__", "")),
    }


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        return _fail("usage: gguf_to_hf.py MODEL.gguf OUT_DIR")
    for module in ("torch", "transformers", "gguf"):
        try:
            importlib.import_module(module)
        except ImportError as exc:
            return _fail(
                f"{sys.prefix} cannot import {module} ({exc}): converting a GGUF needs torch, "
                "transformers and gguf (bash .ci/vllm_venv.sh installs them)"
            )
    try:
        result = convert(Path(argv[0]), Path(argv[1]))
    except ValueError as exc:  # transformers' and our own refusals of a file
        return _fail(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
    except Exception as exc:  # a GGUF transformers half-reads: its own words, one line
        first = str(exc).splitlines()[0] if str(exc) else ""
        return _fail(f"{argv[0]} could not be converted: {type(exc).__name__}: {first}")
    print(RESULT_MARK + json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
