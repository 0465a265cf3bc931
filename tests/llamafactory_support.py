"""LLaMA-Factory's own dataset-reading code, imported from its wheel (`.ci/llamafactory_wheel.sh`
fetches it; nothing is downloaded at test time), so the sharegpt export is read by its consumer's
code and not by our reading of it.

What runs is LLaMA-Factory's: `data.parser` (reads `dataset_info.json` into a `DatasetAttr`),
`data.converter` (`SharegptDatasetConverter`: the turn rules, what it calls a broken example),
`data.formatter` and `data.tool_utils` (how a `function_call` turn and the `tools` column are
rendered into a template's text, and parsed back). Three of its helper modules are replaced,
because importing them pulls torch, peft and accelerate for nothing these modules need:
`extras.logging` (a logger that records the warnings, so a test can require none),
`extras.constants` (only `DATA_CONFIG`, the `dataset_info.json` file name) and `extras.misc`
(the ModelScope / OpenMind hub switches, both off). The packages' `__init__` modules, which import
the trainer, are not run: the packages are set up with their paths into the wheel.
"""

from __future__ import annotations

import importlib
import os
import sys
import types
from pathlib import Path
from typing import Any

VERSION = "0.9.5"
WHEEL = Path(
    os.environ.get(
        "CODESEARCH_LLAMAFACTORY_WHEEL",
        Path.home()
        / ".cache/codesearch-gym/llamafactory"
        / f"llamafactory-{VERSION}-py3-none-any.whl",
    )
)


def skip_reason() -> str:
    return (
        f"LLaMA-Factory's wheel is not at {WHEEL}: `bash .ci/llamafactory_wheel.sh` fetches it "
        "(.ci/run does)"
    )


class _Logger:
    """LLaMA-Factory's logger interface; every warning is kept for the test to read."""

    def __init__(self) -> None:
        self.warnings: list[str] = []

    def warning_rank0(self, message: str) -> None:
        self.warnings.append(message)

    warning_rank0_once = warning_rank0
    warning = warning_rank0

    def info_rank0(self, message: str) -> None:
        pass


LOGGER = _Logger()


def _package(name: str, path: str) -> None:
    module = types.ModuleType(name)
    module.__path__ = [path]
    sys.modules[name] = module


def _module(name: str, **attrs: Any) -> None:
    module = types.ModuleType(name)
    module.__dict__.update(attrs)
    sys.modules[name] = module


def load() -> types.SimpleNamespace | None:
    """The modules, or None when the wheel is not there."""
    if not WHEEL.is_file():
        return None
    if "llamafactory.data.converter" not in sys.modules:
        root = f"{WHEEL}/llamafactory"
        _package("llamafactory", root)
        _package("llamafactory.data", f"{root}/data")
        _package("llamafactory.extras", f"{root}/extras")
        _module("llamafactory.extras.logging", get_logger=lambda name=None: LOGGER)
        _module("llamafactory.extras.constants", DATA_CONFIG="dataset_info.json")
        _module(
            "llamafactory.extras.misc", use_modelscope=lambda: False, use_openmind=lambda: False
        )
        sys.modules["llamafactory.extras"].logging = sys.modules["llamafactory.extras.logging"]  # type: ignore[attr-defined]
    return types.SimpleNamespace(
        parser=importlib.import_module("llamafactory.data.parser"),
        converter=importlib.import_module("llamafactory.data.converter"),
        formatter=importlib.import_module("llamafactory.data.formatter"),
        tool_utils=importlib.import_module("llamafactory.data.tool_utils"),
        logger=LOGGER,
    )
