"""The study's tables, computed from the parquet rows alone: one builder module per experiment's rows
(:mod:`.weight_grid`: Experiments 1-6; :mod:`.standard_span`: 10; :mod:`.lupi`: 8; :mod:`.reference_path`: 7;
:mod:`.sampling`: 9), one writer (:mod:`.writer`), and :func:`build_table`, which builds the catalog's table by
the builder its entry names (``catalog.Table.builder``) and captions with the entry's caption
(:func:`caption`, which the workflow report shows too): each table is declared once, in the catalog.

Every table is written three ways under ``results/tables/``: ``<name>.csv`` (numbers, machine
readable: a mean column and a ``_sd`` column per quantity), ``<name>.md`` and ``<name>.tex`` (the same
numbers formatted as "mean +- sd", a caption that names the tie rule and the units, a footer).
With one replicate (seed, realization) per data set the sd is empty and only the mean is shown.

Selection (method.md section 6): for each data set and replicate, every estimator selects the models
attaining its minimum over the grid; the reported test error of the selection is the worst (default),
best or lower-median test error among those tied models (the tie rule): always the test error of one
of the tied models.

Replicates (seed, realization) follow the data registry (see ``wsvm_span.study.experiments.replicates``):
seeds for random splits and synthetic sets, realizations for the IDA sets, one for a fixed split; the
number of replicates of each data set is shown next to its mean +- sd.

Every file is written atomically (a temporary file in the same folder, then ``os.replace``).
"""

from __future__ import annotations

import inspect
from typing import Callable, Iterable, Mapping

import pandas as pd

from ...tie_rules import TIE_RULES, select_test_error
from .. import catalog
from ..results_schema import engines_of, label
from . import lupi, reference_path, sampling, standard_span, weight_grid
from .common import LABELS, TIE_RULE_TEXT, TableResult
from .lupi import LUPI_METHODS, lupi_selected, table_exp8_selection, table_exp8_svm_plus_loo, table_exp8_time
from .reference_path import table_exp7
from .sampling import table_exp9_span, table_exp9_training
from .standard_span import (STANDARD_ESTIMATORS, curve_slice, table_exp10_cost, table_exp10_diameters,
                            table_exp10_selection, varied_axes)
from .weight_grid import table_counts, table_exp6, table_loo, table_rmse, table_selection, table_timings
from .writer import to_latex, to_markdown, write_table, write_text_atomic

__all__ = [
    "LABELS", "LUPI_METHODS", "STANDARD_ESTIMATORS", "TIE_RULES", "TableResult", "build_table", "builder",
    "caption", "curve_slice", "lupi_selected", "select_test_error", "table_counts", "table_exp10_cost",
    "table_exp10_diameters", "table_exp10_selection", "table_exp6", "table_exp7", "table_exp8_selection",
    "table_exp8_svm_plus_loo", "table_exp8_time", "table_exp9_span", "table_exp9_training", "table_loo",
    "table_rmse", "table_selection", "table_timings", "to_latex", "to_markdown", "varied_axes", "write_table",
    "write_text_atomic",
]

#: the builder modules, by the name a catalog entry uses (``"<module>.<function>"``)
_MODULES = {m.__name__.rpartition(".")[2]: m for m in (weight_grid, standard_span, lupi, reference_path, sampling)}


def builder(spec: catalog.Table) -> Callable[..., TableResult]:
    """The function that builds the catalog's table ``spec`` (its ``builder``, ``"<module>.<function>"`` of
    this package)."""
    module, _, function = spec.builder.partition(".")
    try:
        return getattr(_MODULES[module], function)
    except (KeyError, AttributeError):
        raise KeyError(f"table {spec.name!r}: no builder {spec.builder!r} in wsvm_span.study.tables "
                       f"(modules {sorted(_MODULES)})") from None


def caption(spec: catalog.Table, tie_rule: str = "worst", rows: pd.DataFrame | None = None) -> str:
    """The catalog's caption of the table ``spec`` with the tie rule, the K-fold CV's label (the fold count from
    ``rows``; without rows, "K-fold CV") and the engines that trained the rows' models filled in."""
    fields = {"tie_rule": tie_rule, "cv": label("t_cv", rows)}
    if "{tie_rule_text}" in spec.caption:
        fields["tie_rule_text"] = TIE_RULE_TEXT[tie_rule]
    if "{engine}" in spec.caption:
        fields["engine"] = engines_text(rows)
    return spec.caption.format(**fields)


def engines_text(rows: pd.DataFrame | None) -> str:
    """Which engines (``svm.engine``) trained the rows' models, for a caption: "engine smo", "engines sklearn
    and smo", or "the configured engine" without rows that say."""
    names = engines_of(rows)
    if names is None:
        return "the configured engine"
    return f"engines {names}" if " and " in names else f"engine {names}"


def build_table(name: str, df: pd.DataFrame, tie_rule: str = "worst",
                provenance: Iterable[Mapping] = ()) -> TableResult:
    """The catalog's table ``name`` built from the rows ``df`` by its builder, which gets the arguments among
    ``name``, ``tie_rule`` and ``provenance`` that it takes, with the catalog's caption (:func:`caption`) and,
    under it, the catalog's notes of the data sets it shows; its column labels name the CV fold count."""
    spec = catalog.table(name)
    build = builder(spec)
    offered = {"name": spec.name, "tie_rule": tie_rule, "provenance": provenance}
    result = build(df, **{k: v for k, v in offered.items() if k in inspect.signature(build).parameters})
    result.caption = caption(spec, tie_rule, df)
    shown = set(result.data["dataset"]) if "dataset" in result.data else set()
    result.footer += spec.notes_for(shown)
    result.labels = {c: label(c, df, LABELS) for c in result.columns}
    return result
