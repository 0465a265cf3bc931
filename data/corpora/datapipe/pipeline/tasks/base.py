"""The task base class: parameters, logging, run bookkeeping."""

from __future__ import annotations

import abc
import time
from dataclasses import dataclass, field
from typing import Any, ClassVar

from pipeline.config import JobConfig
from pipeline.utils.log import format_duration, get_logger


@dataclass
class TaskResult:
    task: str
    ds: str
    rows: int = 0
    elapsed_s: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)


class BaseTask(abc.ABC):
    """A unit of scheduled work for one partition date (`ds`).

    Subclasses set `name` and implement `run`, and report progress with self.log, not
    print(), so the scheduler captures it. SQL must be parameterized with psycopg
    placeholders such as %(ds)s; the runner passes `self.params()` as the parameters.
    """

    name: ClassVar[str] = "base"

    def __init__(self, config: JobConfig, ds: str) -> None:
        self.config = config
        self.ds = ds
        self.log = get_logger(f"tasks.{self.name}")

    def params(self) -> dict[str, Any]:
        return {"ds": self.ds, **self.config.params}

    @abc.abstractmethod
    def run(self) -> TaskResult:
        raise NotImplementedError

    def execute(self) -> TaskResult:
        started = time.perf_counter()
        self.log.info("starting %s for %s", self.name, self.ds)
        result = self.run()
        result.elapsed_s = time.perf_counter() - started
        self.log.info("finished %s: %d rows in %s", self.name, result.rows,
                      format_duration(result.elapsed_s))
        return result
