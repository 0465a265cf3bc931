from pipeline.features.registry import REGISTRY, feature

__all__ = ["REGISTRY", "feature"]
