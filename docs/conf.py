"""Sphinx configuration: the user guide (Markdown, MyST) and the API reference (autodoc + autosummary,
numpydoc docstrings). Built by `make docs` with warnings as errors; numpydoc's validation turns a public
function or class without its Parameters, Returns or Examples section into a warning, hence an error.

Numbers that change with the code are not written in the pages: ``_generated/`` is written here, at every
build, by the commands that give them (see ``generate``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import wsvm_span

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
GENERATED = DOCS / "_generated"

project = "wsvm-span"
author = "the wsvm-span authors"
copyright = "the wsvm-span authors"
version = release = wsvm_span.__version__

extensions = [
    "myst_parser",
    "numpydoc",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.intersphinx",
    "sphinx.ext.mathjax",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build", "_generated", "_templates"]
templates_path = ["_templates"]
html_theme = "furo"
html_title = f"wsvm-span {release}"

myst_enable_extensions = ["colon_fence", "dollarmath"]
myst_heading_anchors = 3

autosummary_generate = True
autodoc_default_options = {"members": False, "inherited-members": False}
autodoc_typehints = "none"  # the numpydoc sections carry the types

numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
#: what every documented function and class must have: a docstring and summary, every parameter
#: documented (and no unknown one), a Returns section, an Examples section (run by pytest's doctest)
numpydoc_validation_checks = {"GL08", "SS01", "PR01", "PR02", "RT01", "EX01"}
#: a Protocol is not constructed: its signature is typing's (*args, **kwargs), not a parameter list
numpydoc_validation_overrides = {"PR01": [r"^A trainer of the weighted SVM: the protocol"]}

# the pages link to the libraries' own reference only by name: no intersphinx inventory is fetched
# (CI reaches no site but the package registries)
intersphinx_mapping: dict = {}


def generate() -> None:
    """Write what the pages include from the code, at build time: the default config's plan and the
    contour plot of `wsvm-span select`."""
    GENERATED.mkdir(exist_ok=True)
    env = {**os.environ, "MPLBACKEND": "Agg"}
    cli = [sys.executable, "-m", "wsvm_span.cli"]
    plan = subprocess.run([*cli, "check-config", "config/config.yaml", "--estimate"], cwd=ROOT, env=env,
                          capture_output=True, text=True, check=True).stdout
    (GENERATED / "default_plan.txt").write_text(plan.replace(str(ROOT) + "/", ""))
    from sklearn.datasets import dump_svmlight_file, load_breast_cancer
    from sklearn.preprocessing import MinMaxScaler

    X, y = load_breast_cancer(return_X_y=True)
    dump_svmlight_file(MinMaxScaler().fit_transform(X), y, str(GENERATED / "breast_cancer.txt"), zero_based=False)
    out = subprocess.run([*cli, "select", "breast_cancer.txt", "-log2c", "-1,11,2", "-log2g", "-7,1,2", "--quiet"],
                         cwd=GENERATED, env=env, capture_output=True, text=True, check=True).stdout
    (GENERATED / "select_output.txt").write_text("".join(out.splitlines(keepends=True)[-4:]))


def setup(app):
    generate()
