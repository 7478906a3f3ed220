"""Every name that the benchmarks and scripts import from the library exists.

The benchmarks are not run by the test suite, and many of their imports sit inside functions. When the library
moves a name, a benchmark breaks silently until someone runs it: the tracking-server cluster test once failed
on `bench_tracking_server.py`'s import of a runner constant that a refactor had removed. This test reads every
`import wsvm_span...` and `from wsvm_span... import name` in `benchmarks/*.py` and `scripts/*.py`, including
those inside functions, and resolves each one.
"""
from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FILES = sorted([*REPO.glob("benchmarks/*.py"), *REPO.glob("scripts/*.py")])


def library_imports(path: Path) -> list[tuple[int, str, str | None]]:
    """(line, module, name or None) of every import from the library in a file."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("wsvm_span"):
            out += [(node.lineno, node.module, alias.name) for alias in node.names if alias.name != "*"]
        elif isinstance(node, ast.Import):
            out += [(node.lineno, alias.name, None) for alias in node.names if alias.name.startswith("wsvm_span")]
    return out


def test_the_benchmarks_import_from_the_library():
    assert sum(len(library_imports(p)) for p in FILES) > 20  # the scan sees the imports, not an empty list


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_every_library_name_imported_exists(path):
    missing = []
    for line, module, name in library_imports(path):
        try:
            found = importlib.import_module(module)
        except ImportError as exc:
            missing.append(f"{path.name}:{line}: {module} ({exc})")
            continue
        if name is not None and not hasattr(found, name):
            try:
                importlib.import_module(f"{module}.{name}")
            except ImportError:
                missing.append(f"{path.name}:{line}: {module} has no {name}")
    assert not missing, "\n".join(missing)
