"""Layers import downward only (issue 25): the import graph of ``src/wsvm_span``, read with ``ast`` from the
source (every ``import``, at module level or inside a function, relative imports resolved), has no cycle
between its parts and no import from a lower layer into a higher one.

A part is a subpackage or module of ``wsvm_span`` (``wsvm_span.engines``, ``wsvm_span.kernels``), and of the
study layer one level further down (``wsvm_span.study.config``, ``wsvm_span.study.experiments``): importing
any module of a package runs its ``__init__``, so a cycle between two packages is a cycle whichever of
their modules the imports name.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = "wsvm_span"

#: bottom to top; a part imports parts of its own layer or of layers below it
LAYERS: tuple[tuple[str, frozenset[str]], ...] = (
    ("core math", frozenset({"utils", "_native", "solvers", "active_set", "tie_rules", "weights", "kernels", "model",
                             "span", "loo_results", "data"})),
    ("engines", frozenset({"engines"})),
    ("resampling and the solution path", frozenset({"resampling", "solution_path", "evaluation", "multiclass",
                                                     "svm_plus", ""})),  # "": the package's own __init__
    ("model selection and the study", frozenset({"model_selection", "study", "cli", "__main__"})),
)

#: the upward import that engine "path" once made (into the solution path's solver, which falls back to the
#: engine registry): the self-check adds it back to show that the cycle finder sees such a cycle
FORMER_UPWARD = ("wsvm_span.engines.path", "wsvm_span.solution_path.solver")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    found = {_module_name(p): p for p in (SRC / PACKAGE).rglob("*.py")}
    found[f"{PACKAGE}._native"] = SRC / PACKAGE / "_native.pyx"  # the compiled module (setup.py)
    return found


def import_edges() -> dict[tuple[str, str], list[int]]:
    """(importing module, imported module) -> line numbers, over every import statement of the package."""
    modules = _modules()
    edges: dict[tuple[str, str], list[int]] = defaultdict(list)
    for name, path in modules.items():
        if path.suffix != ".py":
            continue
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    source = ".".join(base + ([node.module] if node.module else []))
                else:
                    source = node.module or ""
                # "from pkg import mod" imports the submodule; "from mod import name" the module
                targets = [f"{source}.{a.name}" if f"{source}.{a.name}" in modules else source for a in node.names]
            else:
                continue
            for target in targets:
                if target == PACKAGE or target.startswith(PACKAGE + "."):
                    edges[(name, target)].append(node.lineno)
    return edges


def part_of(module: str) -> str:
    """The part a module belongs to (module docstring)."""
    parts = module.split(".")
    depth = 3 if len(parts) > 1 and parts[1] == "study" else 2
    return ".".join(parts[:depth])


def layer_of(module: str) -> int:
    top = module.split(".")[1] if "." in module else ""
    for i, (_, members) in enumerate(LAYERS):
        if top in members:
            return i
    raise AssertionError(f"{module}: in no layer of tests/test_import_layers.py; add its top-level name to LAYERS")


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one part (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def _part_graph(edges) -> tuple[dict[str, set[str]], dict[tuple[str, str], list[str]]]:
    graph: dict[str, set[str]] = defaultdict(set)
    where: dict[tuple[str, str], list[str]] = defaultdict(list)
    for (a, b), lines in edges.items():
        if part_of(a) == part_of(b):
            continue
        graph[part_of(a)].add(part_of(b))
        where[(part_of(a), part_of(b))] += [f"{a}:{n}" for n in sorted(set(lines))]
    return graph, where


def test_the_graph_sees_imports_inside_functions():
    edges = import_edges()
    # scheduling imports the job kinds inside its functions only (a lazy import is still an import)
    assert ("wsvm_span.study.scheduling", "wsvm_span.study.experiments") in edges
    assert FORMER_UPWARD not in edges
    graph, _ = _part_graph({**edges, FORMER_UPWARD: [1]})
    assert _cycles(graph), "the former upward import closes a cycle: the cycle finder must see it"
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_cycle_between_parts():
    graph, where = _part_graph(import_edges())
    problems = []
    for cycle in _cycles(graph):
        arrows = [f"{a} -> {b} ({', '.join(where[(a, b)][:3])})" for a in cycle for b in cycle if b in graph[a]]
        problems.append("cycle: " + "; ".join(arrows))
    assert not problems, "\n".join(problems)


def test_layers_import_downward_only():
    upward = []
    for (a, b), lines in sorted(import_edges().items()):
        if layer_of(b) > layer_of(a):
            upward.append(f"{a}:{lines[0]} ({LAYERS[layer_of(a)][0]}) imports {b} ({LAYERS[layer_of(b)][0]})")
    assert not upward, "\n".join(upward)
