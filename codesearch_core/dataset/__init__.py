"""Data sets built from one declared recipe: the TOML recipe (`dataset.recipe`), the build's
stages, resumable and deterministic (`dataset.build`), the items (`dataset.items`), what a data set
keeps (`dataset.select`: filters, de-duplication, mix caps), its card (`dataset.card`) and the QA
sample with its measured error rate (`dataset.sample`).

Public API: `load_recipe`, `Recipe`, `RecipeError`, `build_dataset`, `Hooks`, `BuildResult`,
`BuildInterrupted`, `STAGES`, `draw_sample`, `queue_sample`, `dataset_of`, `import_verdicts`,
`write_estimate`, `estimate`, `wilson` (the 95% interval of a share), `render_card`, `spans_of`
(an item's expected spans), `export_row` (a one-call item as the row the export layouts take).
Imports `synthesis`, `verify`, `export`, `store` (types) and below: a recipe only orchestrates
what those layers do.
"""

from codesearch_core.dataset.build import (
    STAGES,
    BuildInterrupted,
    BuildResult,
    Hooks,
    build_dataset,
)
from codesearch_core.dataset.items import export_row, spans_of
from codesearch_core.dataset.recipe import Recipe, RecipeError, load_recipe
from codesearch_core.dataset.sample import (
    dataset_of,
    draw_sample,
    estimate,
    import_verdicts,
    queue_sample,
    render_card,
    wilson,
    write_estimate,
)

__all__ = [
    "STAGES",
    "BuildInterrupted",
    "BuildResult",
    "Hooks",
    "Recipe",
    "RecipeError",
    "build_dataset",
    "dataset_of",
    "draw_sample",
    "estimate",
    "export_row",
    "import_verdicts",
    "load_recipe",
    "queue_sample",
    "render_card",
    "spans_of",
    "wilson",
    "write_estimate",
]
