"""Packaging: the core install imports no workflow package, the study's commands say which extra they
need, the config schema is package data and agrees with the registries, the declared scikit-learn range is
the one the adapter accepts. (The built wheel itself is installed and smoke-tested by scripts/check-package.)"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

from wsvm_span.engines import ENGINE_NAMES
from wsvm_span.model_selection import _sklearn_compat
from wsvm_span.solvers.qp import SOLVERS
from wsvm_span.svm_plus.solver import SOLVERS as SVM_PLUS_SOLVERS
from wsvm_span.study import catalog
from wsvm_span.study import config as sc
from wsvm_span.tie_rules import TIE_RULES
from wsvm_span.utils.environment import STUDY_EXTRA_MODULES

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
#: what a core install (no extra) must run without: the study extra's modules, the cluster's, MOSEK and dask's
NOT_IN_CORE = sorted(STUDY_EXTRA_MODULES
                     | {"psycopg2", "snakemake_executor_plugin_slurm", "mosek", "dask", "distributed"})


def _run_python(code: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=cwd, capture_output=True, text=True,
                          timeout=300)


# ------------------------------------------------------------------------------------------ core install
CORE_ONLY = """
import importlib.abc, sys
BLOCKED = set({blocked!r})

class NotInstalled(importlib.abc.MetaPathFinder):
    # as if the study extra were not installed: scikit-learn's own optional imports see the same
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None

sys.meta_path.insert(0, NotInstalled())
"""


def test_the_library_and_select_run_without_the_study_extra(tmp_path):
    """A core install: the estimators, SpanSearchCV and `wsvm-span select` work; check-config and select's --dask
    say which extra they need (exit 2, no traceback)."""
    code = CORE_ONLY.format(blocked=NOT_IN_CORE) + textwrap.dedent("""
    import numpy as np
    from sklearn.datasets import dump_svmlight_file, make_classification
    import wsvm_span
    from wsvm_span import model_selection
    from wsvm_span.model_selection import *  # every public name
    from wsvm_span.cli import main

    X, y = make_classification(n_samples=60, n_features=4, random_state=0)
    search = SpanSearchCV(param_grid={"C": [1.0, 4.0], "gamma": [0.1, 0.5]}).fit(X, y)
    assert 0.0 <= search.best_score_ <= 1.0
    dump_svmlight_file(X, y, "train.txt", zero_based=False)
    assert main(["select", "train.txt", "-log2c", "0,2,2", "-log2g", "-3,-1,2"]) == 0  # default plot left out
    assert main(["select", "train.txt", "-log2c", "0,2,2", "-log2g", "-3,-1,2", "-png", "c.png"]) == 2
    assert main(["select", "train.txt", "-log2c", "0,2,2", "-log2g", "-3,-1,2", "--dask", "local"]) == 2
    assert main(["check-config", "nothing.yaml"]) == 2
    print(sorted(m for m in sys.modules if m.partition(".")[0] in BLOCKED))
    """)
    proc = _run_python(code, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "[]"
    assert "no contour plot: matplotlib is not installed (pip install 'wsvm-span[study]')" in proc.stderr
    assert "-png draws with matplotlib, which is not installed" in proc.stderr
    assert "--dask needs dask.distributed, which is the dask extra: pip install 'wsvm-span[dask]'" in proc.stderr
    assert re.search(r"wsvm-span check-config: needs \w+, part of the study extra: pip install 'wsvm-span\[study\]'",
                     proc.stderr)
    assert "Traceback" not in proc.stderr
    assert (tmp_path / "train.txt.out").is_file() and not (tmp_path / "train.txt.png").exists()


def test_importing_the_library_loads_no_workflow_package(tmp_path):
    """With everything installed: importing wsvm_span and its scikit-learn adapter adds no module of the
    study extra to what scikit-learn itself loads (scikit-learn imports pandas when it finds it)."""
    code = """
    import sys
    import sklearn.model_selection, sklearn.svm, sklearn.pipeline, sklearn.metrics
    before = set(sys.modules)
    import wsvm_span
    import wsvm_span.model_selection
    from wsvm_span.model_selection import SpanSearchCV, make_span_scorer, read_data_file
    from wsvm_span.cli import build_parser
    build_parser()
    print(sorted(m for m in set(sys.modules) - before if m.partition(".")[0] in {blocked!r}))
    """.format(blocked=set(NOT_IN_CORE))
    proc = _run_python(code, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_core_dependencies_are_the_librarys_own():
    """The core requirement list names no package of an extra; the extras are the documented ones."""
    core = {_name(r) for r in PYPROJECT["project"]["dependencies"]}
    assert core == {"numpy", "scipy", "scikit-learn", "joblib", "threadpoolctl", "libsvm-official", "clarabel", "pooch"}
    extras = PYPROJECT["project"]["optional-dependencies"]
    assert {"study", "cluster", "mosek", "dask", "test", "docs"} <= set(extras)
    assert "mosek" in {_name(r) for r in extras["mosek"]}
    assert any(r.startswith("dask[distributed]") for r in extras["dask"])
    assert {"snakemake", "mlflow", "pandas"} <= {_name(r) for r in extras["study"]}


def _name(requirement: str) -> str:
    for stop in "<>=!~[; ":
        requirement = requirement.split(stop)[0]
    return requirement.strip().lower()


def test_the_lock_file_installs_every_extra():
    """`make` installs requirements.lock: it is compiled with every extra, so it pins them all."""
    lock = (ROOT / "requirements.lock").read_text()
    assert "uv pip compile pyproject.toml --all-extras" in lock.splitlines()[1]
    pinned = {line.split("==")[0].lower() for line in lock.splitlines() if "==" in line and not line.startswith("#")}
    for extra, reqs in PYPROJECT["project"]["optional-dependencies"].items():
        for req in reqs:
            if not req.startswith("wsvm-span"):
                assert _name(req) in pinned, f"{req} of [{extra}] is not in requirements.lock: run make lock"


# ---------------------------------------------------------------------------------------- package data
#: the compiled module's sources (setup.py): built from the sdist (MANIFEST.in), not carried by the wheel
COMPILED_SOURCES = ("src/wsvm_span/_native.pyx", "src/wsvm_span/csrc/")


def test_every_data_file_of_the_package_is_declared_package_data():
    """Every non-Python file under src/wsvm_span (the schema, the checksums, the cost calibration) is in
    pyproject.toml's package-data, so the wheel carries it; the compiled module's sources are in MANIFEST.in
    instead, so the sdist carries them."""
    declared = PYPROJECT["tool"]["setuptools"]["package-data"]
    files = subprocess.run(["git", "ls-files", "src/wsvm_span"], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.split()
    manifest = (ROOT / "MANIFEST.in").read_text()
    for f in files:
        path = Path(f)
        if path.suffix == ".py":
            continue
        if f.startswith(COMPILED_SOURCES):
            assert any(f.startswith(p.rstrip("/")) and p.rstrip("/") in manifest for p in COMPILED_SOURCES), f
            continue
        package = ".".join(path.parent.relative_to("src").parts)
        assert path.name in declared.get(package, []), f"{f} is not package data of {package} in pyproject.toml"


def test_the_schema_is_package_data_read_as_it_is():
    path = sc.find_schema()
    assert path.parent == Path(sc.__file__).parent and path.name == "config.schema.yaml"
    import yaml

    assert sc.load_schema() == yaml.safe_load(path.read_text())


def test_the_schema_file_agrees_with_the_registries():
    """The schema is not edited at run time: its enums and experiments are the code's registries, and a
    new engine, QP backend, tie rule or experiment must be added to the file (this test says which)."""
    props = sc.load_schema()["properties"]
    assert props["svm"]["properties"]["engine"]["enum"] == list(ENGINE_NAMES), "svm.engine: ENGINE_NAMES"
    assert props["svm"]["properties"]["qp_solver"]["enum"] == list(SOLVERS), "svm.qp_solver: solvers.qp.SOLVERS"
    assert props["tie_rule"]["enum"] == list(TIE_RULES), "tie_rule: tie_rules.TIE_RULES"
    exp8 = props["experiments"]["properties"]["exp8"]["properties"]
    # every route but "active-set", which raises where it cycles (a job would die of it)
    assert exp8["svm_plus_solver"]["enum"] == [s for s in SVM_PLUS_SOLVERS if s != "active-set"], \
        "exp8.svm_plus_solver: svm_plus.solver.SOLVERS but active-set"
    experiments = props["experiments"]["properties"]
    assert list(experiments) == list(catalog.grid_experiments()), "experiments: catalog.grid_experiments()"
    for name, sub in experiments.items():
        assert sub["description"] == catalog.EXPERIMENTS[name].title, f"experiments.{name}: its catalog title"


def test_check_config_runs_from_any_folder(tmp_path):
    """No walk up to a repository: the installed package validates with its own schema."""
    proc = subprocess.run([sys.executable, "-m", "wsvm_span.cli", "check-config", str(ROOT / "config" / "config.yaml"),
                           "--json"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["models"] > 0


# ---------------------------------------------------------------------------------------- scikit-learn
def test_the_declared_scikit_learn_range_is_the_adapters():
    (low, high) = _sklearn_compat.SUPPORTED_RANGE
    req = next(r for r in PYPROJECT["project"]["dependencies"] if _name(r) == "scikit-learn")
    assert req == f"scikit-learn>={low[0]}.{low[1]},<{high[0]}.{high[1]}"


@pytest.mark.parametrize("version", ["1.5.2", "1.10.0", "2.0.0"])
def test_an_unsupported_scikit_learn_is_a_clear_error(version):
    with pytest.raises(ImportError, match=rf"supports scikit-learn >=1\.6,<1\.10 .* scikit-learn {version} is "
                                          r"installed: pip install 'scikit-learn>=1\.6,<1\.10'"):
        _sklearn_compat._check_version(version)


@pytest.mark.parametrize("version", ["1.6.0", "1.7.2", "1.9.1", "1.9.0rc1", "1.8.dev0"])
def test_supported_scikit_learn_versions_pass(version):
    _sklearn_compat._check_version(version)


def test_only_the_adapter_imports_private_scikit_learn_names():
    """Private scikit-learn names (sklearn.*._module, _function, obj._attr) are used in one place."""
    private = re.compile(r"from sklearn[\w.]*\._\w+ import|from sklearn[\w.]* import [^\n]*\b_\w+|svc\._\w+")
    offenders = [str(p.relative_to(ROOT)) for p in (ROOT / "src" / "wsvm_span").rglob("*.py")
                 if p.name != "_sklearn_compat.py" and private.search(p.read_text())]
    assert offenders == []
