"""Training a model on the studio's data, over TRL (`codesearch train sft|rft|grpo`).

The studio's venv has no torch, so a run is prepared here (`plan.prepare`: arguments, the model,
the data set, the rows or tasks, a spec in the run's work folder) and trained by the worker
(`train.worker`, `python -m`) in the python that has torch and TRL (`launch`: this one, or the
venv `.ci/vllm_venv.sh` builds). Rows go through the export's own layouts (`data`: `hf-chat`
items, `hf-agent` episodes) and the project's tool template where the model's own drops tools
(`sampling`), so a model trains on the prompt it is asked with. RFT keeps the episodes the gym
verified (`rft`); GRPO plays the gym through TRL's `environment_factory`. Each run writes a
record beside its output (`record`); rows longer than the context are left out and counted
(`fit`).

Public API: `prepare`, `find_model`, `work_folder`, `check_settings`, `Spec`, `Settings`, `MODES`,
`DEVICES`, `SAMPLERS`; `open_dataset`, `read_split`, `sft_rows`, `episode_rows`, `combine`,
`split_blueprints`, `Rows`, `DatasetRef`; `verified_rows`, `RolloutTally`; `fit_context`,
`ContextFit`; `RunRecord`, `record_path`, `read_record`, `write_record`, `folder_sha256`;
`torch_python`, `run_worker`. Imports `dataset`, `gym`, `export`, `weights` and below; the worker
and `sampling` import torch, transformers and TRL inside functions, and only in the worker.
"""

from codesearch_core.train.data import (
    DatasetRef,
    Rows,
    combine,
    episode_rows,
    open_dataset,
    read_split,
    sft_rows,
    split_blueprints,
)
from codesearch_core.train.fit import ContextFit, fit_context
from codesearch_core.train.launch import EXIT_INTERRUPTED, run_worker, torch_python
from codesearch_core.train.plan import check_settings, find_model, prepare, work_folder
from codesearch_core.train.record import (
    RunRecord,
    folder_sha256,
    read_record,
    record_path,
    write_record,
)
from codesearch_core.train.rft import RolloutTally, verified_rows
from codesearch_core.train.spec import DEVICES, MODES, SAMPLERS, Settings, Spec

__all__ = [
    "DEVICES",
    "EXIT_INTERRUPTED",
    "MODES",
    "SAMPLERS",
    "ContextFit",
    "DatasetRef",
    "RolloutTally",
    "Rows",
    "RunRecord",
    "Settings",
    "Spec",
    "check_settings",
    "combine",
    "episode_rows",
    "find_model",
    "fit_context",
    "folder_sha256",
    "open_dataset",
    "prepare",
    "read_record",
    "read_split",
    "record_path",
    "run_worker",
    "sft_rows",
    "split_blueprints",
    "torch_python",
    "verified_rows",
    "work_folder",
    "write_record",
]
