"""The feature registry.

Features are plain functions registered with the decorator below::

    @feature(name="days_since_signup", entity="user", dtype="int32")
    def days_since_signup(users: pd.DataFrame, ds: str) -> pd.Series:
        '''Whole days between signup and the run date.'''

To retire a feature, keep it registered for one release and start its docstring
summary with a line of the form

    Deprecated: use <replacement> instead.

The nightly build lists every such line in the release notes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

FeatureFn = Callable[..., Any]


@dataclass(frozen=True)
class FeatureSpec:
    name: str
    entity: str
    dtype: str
    fn: FeatureFn
    version: int = 1

    @property
    def deprecated(self) -> bool:
        doc = (self.fn.__doc__ or "").strip()
        return doc.startswith("Deprecated")


REGISTRY: dict[str, FeatureSpec] = {}


def feature(*, name: str, entity: str, dtype: str, version: int = 1) -> Callable[[FeatureFn], FeatureFn]:
    def register(fn: FeatureFn) -> FeatureFn:
        if name in REGISTRY:
            raise ValueError(f"feature {name!r} is registered twice")
        REGISTRY[name] = FeatureSpec(name=name, entity=entity, dtype=dtype, fn=fn, version=version)
        return fn

    return register


def active_features(entity: str) -> list[FeatureSpec]:
    return [s for s in REGISTRY.values() if s.entity == entity and not s.deprecated]
