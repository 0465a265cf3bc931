"""The shape of `codesearch_core`: packages named after the architecture, imports one way.

Reads the source with `ast` (nothing is imported), so an import under `TYPE_CHECKING` or inside a
function counts like any other: a loop in the design is a loop even when Python would not trip on it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
CORE = REPO / "codesearch_core"

#: Bottom to top. A unit may import units below it, never one above it or beside it.
LAYERS: tuple[str, ...] = (
    "errors",
    "config",
    "models",
    "access",
    "tools",
    "grading",
    "corpora",
    "weights",
    "engines",
    "store",
    "ingest",
    "export",
    "verify",
    "synthesis",
    "gym",
    "dataset",
    "train",
    "studio",
    "cli",
)
#: Units with code in them that are not layers: the package marker and `python -m codesearch_core`.
OUTSIDE_LAYERS = frozenset({"__init__", "__main__"})
SUBPACKAGES = frozenset(p.name for p in CORE.iterdir() if (p / "__init__.py").is_file())
MAX_LINES = 500


@dataclass(frozen=True, slots=True)
class Edge:
    source: str  # importing module, dotted
    target: str  # imported module, dotted (a package means its __init__)
    path: Path
    line: int


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def core_modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(CORE.rglob("*.py"))}


def _resolve_relative(source: str, is_package: bool, level: int, module: str | None) -> str:
    base = source.split(".")
    base = base if is_package else base[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join([*base, module] if module else base)


def imports_of(path: Path, modules: dict[str, Path]) -> Iterator[Edge]:
    source = module_name(path)
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("codesearch_core"):
                    yield Edge(source, alias.name, path, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                target = _resolve_relative(
                    source, path.name == "__init__.py", node.level, node.module
                )
            else:
                target = node.module or ""
            if not target.startswith("codesearch_core"):
                continue
            for alias in node.names:
                # `from pkg import submodule` imports the submodule; `from pkg import name`, pkg.
                sub = f"{target}.{alias.name}"
                yield Edge(source, sub if sub in modules else target, path, node.lineno)


def all_edges(paths: list[Path]) -> list[Edge]:
    modules = core_modules()
    return [edge for path in paths for edge in imports_of(path, modules)]


def unit_of(module: str) -> str:
    """The layer a module belongs to: its subpackage, or the top-level module itself."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of the graph as a list of nodes (first == last), or None."""
    state: dict[str, int] = {}  # 1 on the stack, 2 done
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)) is not None:
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)) is not None:
            return found
    return None


def module_graph() -> dict[str, set[str]]:
    modules = core_modules()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for edge in all_edges(list(modules.values())):
        if edge.target in modules and edge.target != edge.source:
            graph[edge.source].add(edge.target)
            # Importing a.b.c runs a.b's __init__ first, unless the importer is inside a.b already.
            parent = edge.target.rsplit(".", 1)[0]
            if (
                parent in modules
                and parent != edge.source
                and not edge.source.startswith(parent + ".")
            ):
                graph[edge.source].add(parent)
    return graph


# --- the checker checks ---------------------------------------------------------------------------


def test_the_cycle_finder_finds_a_loop_and_passes_a_tree() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def test_imports_under_type_checking_and_in_functions_are_edges() -> None:
    pkg = CORE / "store"
    edges = all_edges([pkg / "core.py"])
    # store.core imports store.writes at module level and nothing from above; the parser sees both
    assert any(e.target == "codesearch_core.store.writes" for e in edges)
    verify_pending = all_edges([CORE / "verify" / "pending.py"])
    # `Store` is imported only under TYPE_CHECKING there, and still counts
    assert any(e.target == "codesearch_core.store" for e in verify_pending)
    # verify_cmds imports the verify package inside its functions only (a lazy CLI import)
    lazy = all_edges([CORE / "cli" / "verify_cmds.py"])
    assert any(e.target == "codesearch_core.verify" for e in lazy)


# --- the rules ------------------------------------------------------------------------------------


def test_no_import_cycle_anywhere_in_codesearch_core() -> None:
    cycle = find_cycle(module_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_every_unit_of_codesearch_core_has_a_layer() -> None:
    units = {unit_of(m) for m in core_modules()} - OUTSIDE_LAYERS
    assert units <= set(LAYERS), f"give these a place in LAYERS: {sorted(units - set(LAYERS))}"


def test_the_architecture_doc_lists_every_layer_top_down_and_every_module_of_each() -> None:
    # docs/architecture.md's layer list: one entry per layer ("gym       the same tasks ..."),
    # top to bottom; the ground floor shares one line. A layer left out (the gym was, issue 38)
    # or a module no entry names fails here.
    doc = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    block = doc.split("```\n", 2)[1]
    entries: dict[str, str] = {}
    for line in block.splitlines():
        if line.startswith("models · errors · config"):
            entries["models · errors · config"] = line
        elif line and not line.startswith(" "):
            entries[line.split()[0]] = line
        elif entries:
            last = next(reversed(entries))
            entries[last] += " " + line.strip()
    ground = "models · errors · config"
    listed = [u for e in entries for u in (e.split(" · ") if e == ground else [e])]
    assert listed == [*reversed(LAYERS[3:]), "models", "errors", "config"]
    for unit, text in entries.items():
        package = CORE / unit
        if unit == ground or not package.is_dir():
            continue
        # The command modules are named by their pattern ("one `*_cmds` module per group").
        modules = {p.stem for p in package.glob("*.py") if not p.stem.endswith("_cmds")}
        modules -= {"__init__"}
        unnamed = sorted(m for m in modules if m not in text)
        assert not unnamed, f"docs/architecture.md's {unit} entry names no {unnamed}"


def test_imports_go_down_the_layers_only() -> None:
    rank = {name: i for i, name in enumerate(LAYERS)}
    wrong = []
    for edge in all_edges(list(core_modules().values())):
        src, dst = unit_of(edge.source), unit_of(edge.target)
        if src == dst or src in OUTSIDE_LAYERS or dst in OUTSIDE_LAYERS:
            continue
        if rank[dst] >= rank[src]:
            wrong.append(f"{edge.path.relative_to(REPO)}:{edge.line}: {src} imports {dst}")
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("where", ["codesearch_core", "pages", "app.py"])
def test_other_layers_import_a_subpackage_not_its_modules(where: str) -> None:
    """`from codesearch_core.store import Store`, never `codesearch_core.store.core` from outside."""
    root = REPO / where
    paths = [root] if root.is_file() else sorted(root.rglob("*.py"))
    wrong = []
    for edge in all_edges(paths):
        parts = edge.target.split(".")
        if len(parts) < 3 or parts[1] not in SUBPACKAGES:
            continue
        if unit_of(edge.source) == parts[1] and edge.source.startswith("codesearch_core."):
            continue  # inside the same subpackage: modules import their siblings directly
        wrong.append(f"{edge.path.relative_to(REPO)}:{edge.line}: imports {edge.target}")
    assert not wrong, "\n".join(wrong)


def test_each_subpackage_names_its_public_api() -> None:
    for name in sorted(SUBPACKAGES):
        init = CORE / name / "__init__.py"
        tree = ast.parse(init.read_text(encoding="utf-8"))
        doc = ast.get_docstring(tree)
        assert doc and len(doc) > 40, f"{init}: a docstring that says what the package is"
        if name == "cli":
            continue  # the command line: nothing imports it
        exported = [
            n
            for n in tree.body
            if isinstance(n, ast.Assign) and ast.unparse(n.targets[0]) == "__all__"
        ]
        assert exported, f"{init}: no __all__"


def test_no_module_of_500_lines_or_more() -> None:
    paths = [*CORE.rglob("*.py"), *(REPO / "pages").glob("*.py"), REPO / "app.py"]
    big = {
        str(p.relative_to(REPO)): n
        for p in paths
        if (n := len(p.read_text(encoding="utf-8").splitlines())) >= MAX_LINES
    }
    assert not big, f"split these (two concerns in one file): {big}"


def test_no_flat_store_or_studio_modules_are_left() -> None:
    flat = sorted(
        p.name for p in CORE.glob("*.py") if p.name.startswith(("store_", "studio_", "verify_"))
    )
    assert not flat


def test_pages_shared_keeps_only_the_streamlit_plumbing() -> None:
    assert len((REPO / "pages" / "_shared.py").read_text(encoding="utf-8").splitlines()) < 200


def test_tests_mirror_the_packages() -> None:
    tests = Path(__file__).resolve().parent
    missing = [name for name in sorted(SUBPACKAGES) if not any((tests / name).glob("test_*.py"))]
    assert not missing, f"no tests/<package>/ for {missing}"


def test_every_test_module_has_its_own_basename() -> None:
    """pytest imports test modules by their basename (the folders are not packages): two of one
    name fail the whole collection, as tests/export/test_episodes.py beside
    tests/store/test_episodes.py once did."""
    names: dict[str, list[str]] = {}
    for path in sorted((REPO / "tests").rglob("test_*.py")):
        names.setdefault(path.name, []).append(str(path.relative_to(REPO)))
    assert {n: p for n, p in names.items() if len(p) > 1} == {}
