"""The results schemas: one parquet row per trained model (``ROW_SCHEMAS``: "model" for the weight grids,
"standard_model" for the standard SVMs of Experiment 10).

Every chunk file written by a grid job, the per-experiment ``rows.parquet`` built from them, and
every table or figure read from them go through :data:`ROW_SCHEMA` (writing) and
:func:`validate_rows` (reading).  Columns that do not apply to a row (``A``, ``B``, ``log2_C`` for class
weights; ``log2_C_plus``, ``log2_C_minus`` for sigmoid weights; ``loo_error``/``t_loo`` where exact
leave-one-out was not computed, ``span_bound_radius`` in rows written before it existed) hold NaN;
``n_path_events`` is null and ``t_path`` NaN for a model not
reached by a solution path (``PATH_COLUMNS``).

The column names are the library's names of the quantities (``ModelEvaluation``'s fields), and the
same names are the MLflow metrics. Files carry :data:`SCHEMA_VERSION`; files of another version (e.g.
version 1, which named the columns ``cv5``, ``xi_alpha``, ``sv_bound``, ``loo_exact``) are rejected
with a message, never misread. A column added within a version (:data:`ADDED_COLUMNS`) reads from older
files as "does not apply".

Provenance that is the same for every row of a file (code version, config hash, data checksums,
machine, library versions) is stored once, as JSON in the parquet schema's key-value metadata under
:data:`PROVENANCE_KEY`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Iterable, Mapping

import pyarrow as pa
import pyarrow.parquet as pq

from ..utils.atomic import atomic_write
from .catalog import WEIGHTINGS

__all__ = [
    "SCHEMA_VERSION",
    "ROW_SCHEMA",
    "ROW_SCHEMAS",
    "row_kind",
    "COLUMNS",
    "HYPERPARAMETERS",
    "STANDARD_HYPERPARAMETERS",
    "STANDARD_ROW_SCHEMA",
    "STANDARD_SIZES",
    "ESTIMATORS",
    "CLASS_TEST_ERRORS",
    "parse_ratio",
    "STUDY_RADIUS_BOUND",
    "NULLABLE",
    "ADDED_COLUMNS",
    "PATH_COLUMNS",
    "TIMINGS",
    "COUNTS",
    "LABELS",
    "label",
    "PROVENANCE_KEY",
    "SchemaError",
    "rows_to_table",
    "with_metadata",
    "validate_rows",
    "write_rows_atomic",
    "read_rows",
    "read_provenance",
]

PROVENANCE_KEY = b"wsvm_span.provenance"
VERSION_KEY = b"wsvm_span.schema_version"
#: the version of the row schema written by this code (2: the library's names, cv_folds)
SCHEMA_VERSION = 2

#: hyperparameter columns, per weighting scheme (from the catalog)
HYPERPARAMETERS: dict[str, tuple[str, ...]] = {name: w.hyperparameters for name, w in WEIGHTINGS.items()}
#: estimate columns (fractions of l; span_bound may exceed 1)
ESTIMATORS: tuple[str, ...] = ("span_rule", "span_bound", "cv_error", "xi_alpha_bound", "sv_count_bound", "loo_error")
#: the span bound with the enclosing ball's radius D/2 in place of its diameter D: the original study's variant,
#: which reproduces its Table 2 selections, NOT a bound of the LOO error (wsvm_span.span.estimates.SPAN_BOUND_BALLS);
#: a column of the weight-grid rows beside ``span_bound``, shown next to it where Tables 2 and 3 are rebuilt
STUDY_RADIUS_BOUND = "span_bound_radius"
#: the test error on the test points of class +1 and of class -1 (weight-grid rows): their mean is the balanced
#: test error, which a class-balanced training set's LOO estimates (experiments.md, bank_marketing)
CLASS_TEST_ERRORS: tuple[str, ...] = ("test_error_positive", "test_error_negative")
#: per-model timings, seconds
TIMINGS: tuple[str, ...] = ("t_train", "t_span_rule", "t_span_bound", "t_cv", "t_loo")
#: integer counts per model
COUNTS: tuple[str, ...] = ("n_sv", "n_inbound", "n_bounded", "n_empty_lambda", "n_qp")
#: display labels of the value columns (tables and figures; tables add labels for derived columns);
#: "{k}" is the fold count of K-fold CV (see :func:`label`)
LABELS: dict[str, str] = {
    "test_error": "Test error",
    "test_error_positive": "Test error (class +1)",
    "test_error_negative": "Test error (class -1)",
    "span_rule": "Span-rule",
    "span_bound": "Span bound",
    STUDY_RADIUS_BOUND: "Span bound with D/2 (study's variant, not a bound)",
    "cv_error": "{k}-fold CV",
    "xi_alpha_bound": "xi-alpha bound",
    "sv_count_bound": "SV bound",
    "loo_error": "Exact LOO",
    "span_bound_separable": "Span bound (separable)",
    "S": "S (span)",
    "D": "D (all points)",
    "D_SV": "D_SV (in-bound SVs)",
    "n_empty_lambda": "k (empty Lambda_p)",
    "n_inbound": "n* (in-bound SVs)",
    "n_sv": "n (SVs)",
    "n_bounded": "Bounded SVs",
    "n_qp": "QPs",
    "t_train": "Training",
    "t_span_rule": "Span-rule",
    "t_span_bound": "Span bound",
    "t_cv": "{k}-fold CV",
    "t_loo": "Exact LOO",
    "val_error": "Validation",
    "loo_rule": "LOO rule (SVM+)",
    "loo_converted": "Exact LOO, weights fixed",
    "n_zero_weight": "Zero weights",
    "n_unconverged_inner": "Unconverged inner solves",
    "n_unconverged_fits": "Unconverged fits",
    "t_weights": "Weights",
    "t_val": "Validation",
    "t_loo_rule": "LOO rule (SVM+)",
    "n_path_events": "Path events",
    "n_events": "Events",
    "mean_margin_size": "Mean |M|",
    "t_path": "Path (s)",
    "t_libsvm": "Re-solving by {engine}, cold, at every breakpoint (s)",
    "speedup": "Speed-up vs {engine} cold",
    "t_smo_hot": "Re-solving by smo, hot-started, at every breakpoint (s)",
    "speedup_smo_hot": "Speed-up vs smo hot-started",
    "cpu_train": "Training CPU",
    "peak_mem_mb": "Peak memory (MiB)",
    "kernel_mb": "l x l kernel (MiB)",
    "n_rounds": "Rounds",
    "final_sample_size": "Final sample (draws)",
    "final_n_distinct": "Final sample (points)",
    "kkt_violation": "Max KKT violation",
    "kkt_tol_effective": "KKT tolerance",
    "decision_diff": "Max |f - f_ref| (test)",
    "n_sv_diff": "SV sets differ by",
    "cv_folds_run": "CV folds run",
}


def label(column: str, rows=None, labels: Mapping[str, str] = LABELS) -> str:
    """The display label of a column (from ``labels``); K-fold CV names its fold count when the rows
    have one, and ``{engine}`` the engines that trained the rows' models (:func:`engines_of`)."""
    text = labels.get(column, column)
    fields = {}
    if "{k}" in text:
        # a row without CV (cv_folds 0 or null: Experiment 9's fits off its span grid) names no fold count
        given = rows["cv_folds"].astype("float64") if rows is not None and "cv_folds" in rows else ()
        folds = sorted({int(k) for k in given if k > 0})  # NaN > 0 is False
        fields["k"] = folds[0] if len(folds) == 1 else "K"
    if "{engine}" in text:
        fields["engine"] = engines_of(rows) or "the engine"
    return text.format(**fields) if fields else text


def engines_of(rows) -> str | None:
    """The engines (``svm.engine`` names) in the rows' ``engine`` column, "smo" or "sklearn and smo"; None
    where the rows do not say."""
    if rows is None or "engine" not in rows or not len(rows):
        return None
    names = sorted({str(e) for e in rows["engine"].dropna()})
    if not names:
        return None
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"

#: columns of every row schema: what a trained model is (after the row's place and hyperparameters), and
#: where the row sits (last)
_TRAINED = [("gamma", pa.float64()), ("engine", pa.string()), ("qp_solver", pa.string()), ("test_error", pa.float64())]
_PLACE = [("l", pa.int64()), ("d", pa.int64()), ("model_index", pa.int64()), ("chunk", pa.int64())]

#: a weight-grid model reached by a solution-path segment from the previous model of its job (``svm.engine:
#: path``): the segment's events and seconds (also its t_train); null / NaN for the job's first model (trained
#: from scratch) and for every model of another engine
PATH_COLUMNS: list[tuple[str, pa.DataType]] = [("n_path_events", pa.int64()), ("t_path", pa.float64())]
#: the integer columns that may be null (every other string or integer column is required)
NULLABLE = frozenset({"n_path_events", "n_unconverged_inner", "n_unconverged_fits"})
#: columns a row schema gained after files of its version had been written (the path columns came with the
#: solution path engine, issue 9: a file without them reads as one whose models were not reached by a path;
#: the study's radius variant of the span bound, issue 22, and the per-class test errors, issue 26: NaN, "not
#: computed"; Experiment 8's counts of solves stopped at the step limit, issue 26: null, "not counted"), so results
#: written before then stay readable (tables, figures, calibrate-cost)
ADDED_COLUMNS: dict[str, tuple[str, ...]] = {"model": (*CLASS_TEST_ERRORS, STUDY_RADIUS_BOUND,
                                                       *(name for name, _ in PATH_COLUMNS)),
                                             "lupi": ("n_unconverged_inner", "n_unconverged_fits")}

_FIELDS: list[tuple[str, pa.DataType]] = [
    ("experiment", pa.string()),
    ("dataset", pa.string()),
    ("weighting", pa.string()),
    ("seed", pa.int64()),
    ("realization", pa.int64()),
    ("log2_C_plus", pa.float64()),
    ("log2_C_minus", pa.float64()),
    ("A", pa.float64()),
    ("B", pa.float64()),
    ("log2_C", pa.float64()),
    *_TRAINED,
    *[(name, pa.float64()) for name in CLASS_TEST_ERRORS],
    *[(name, pa.float64()) for name in ESTIMATORS],
    (STUDY_RADIUS_BOUND, pa.float64()),
    ("cv_folds", pa.int64()),
    *[(name, pa.int64()) for name in COUNTS],
    *[(name, pa.float64()) for name in TIMINGS],
    *PATH_COLUMNS,
    *_PLACE,
]

ROW_SCHEMA: pa.Schema = pa.schema([pa.field(n, t, nullable=n in NULLABLE) for n, t in _FIELDS])
COLUMNS: tuple[str, ...] = tuple(ROW_SCHEMA.names)

#: the grid axes of a standard SVM of Experiment 10: the RBF width sigma of exp(-||x - x'||^2 / (2 sigma^2))
#: and log2 C (every C_i = C)
STANDARD_HYPERPARAMETERS: tuple[str, ...] = ("sigma", "log2_C")
#: the sizes of Experiment 10 (standard-svm-span.md): the span S (max box-constrained S_p; nan with fewer
#: than two in-bound SVs), the diameters D (all training points) and D_SV (in-bound SVs; nan with none)
STANDARD_SIZES: tuple[str, ...] = ("S", "D", "D_SV")

_STANDARD_FIELDS: list[tuple[str, pa.DataType]] = [
    ("experiment", pa.string()),
    ("dataset", pa.string()),
    ("seed", pa.int64()),
    ("realization", pa.int64()),
    *[(name, pa.float64()) for name in STANDARD_HYPERPARAMETERS],
    *_TRAINED,
    ("span_rule", pa.float64()),
    ("span_bound", pa.float64()),  # Theorem 1 in its standard form (span_bound_standard)
    ("span_bound_separable", pa.float64()),  # nan when a SV is bounded
    ("loo_error", pa.float64()),
    *[(name, pa.float64()) for name in STANDARD_SIZES],
    *[(name, pa.int64()) for name in COUNTS],
    ("t_train", pa.float64()),
    ("t_span_rule", pa.float64()),
    ("t_span_bound", pa.float64()),
    ("t_loo", pa.float64()),
    *_PLACE,
]
STANDARD_ROW_SCHEMA: pa.Schema = pa.schema([pa.field(n, t, nullable=False) for n, t in _STANDARD_FIELDS])

#: Experiment 9 ("sampling" job kind): one row per (C, engine) of a data set at one training size l.
#: ``status`` is "ok" or why the engine did not run (a precomputed kernel over the memory budget: every
#: measurement NaN). Times in seconds (one thread), ``peak_mem_mb`` the resident-set high-water mark over the
#: fit minus the size before (MiB), ``kernel_mb`` the size of an l x l float64 kernel; the sampling engine's
#: ``n_rounds``, ``final_sample_size`` (draws) and ``final_n_distinct`` (NaN for the other engines);
#: ``kkt_violation`` the largest KKT violation (in y f) of the full problem on all l points and
#: ``kkt_tol_effective`` what the certificate accepts; ``decision_diff`` the largest |f - f_reference| on the
#: test set and ``n_sv_diff`` the size of the symmetric difference of the SV sets (NaN on the reference's
#: rows); the span grid's ``span_rule``/``t_span_rule`` and ``cv_error``/``t_cv`` (``cv_folds_run`` of
#: ``cv_folds`` folds run: fewer means t_cv is projected and cv_error NaN; 0 folds: no CV on the row);
#: ``load_avg`` the 1-minute load average when the row started. Counts are floats: NaN where not run.
SAMPLING_COUNTS: tuple[str, ...] = ("n_rounds", "final_sample_size", "final_n_distinct", "n_sv", "n_inbound",
                                    "n_bounded", "n_sv_diff")
_SAMPLING_FIELDS: list[tuple[str, pa.DataType]] = [
    ("experiment", pa.string()),
    ("dataset", pa.string()),
    ("seed", pa.int64()),
    ("realization", pa.int64()),
    ("log2_C", pa.float64()),
    ("gamma", pa.float64()),
    ("engine", pa.string()),
    ("status", pa.string()),
    ("test_error", pa.float64()),
    *[(name, pa.float64()) for name in ("t_train", "cpu_train", "peak_mem_mb", "kernel_mb")],
    *[(name, pa.float64()) for name in SAMPLING_COUNTS],
    *[(name, pa.float64()) for name in ("kkt_violation", "kkt_tol_effective", "decision_diff", "span_rule",
                                         "t_span_rule", "cv_error", "t_cv")],
    ("cv_folds", pa.int64()),
    ("cv_folds_run", pa.int64()),
    ("load_avg", pa.float64()),
    *_PLACE,
]

#: every row schema of the study, by name (a job kind's ``ROWS``): "model" is one row per trained
#: weighted SVM of a weight grid, "standard_model" one per standard SVM of Experiment 10
#: Experiment 8 ("lupi" job kind): one row per grid point of one method (SVM+, a weighting scheme or the
#: plain SVM) trained on one training sample; its selection rules' values (validation error, K-fold CV,
#: span-rule, span bound, SVM+'s LOO rule, exact LOO) and their timings. ``loo_converted`` is the exact LOO
#: of SVM+'s equivalent weighted SVM with its weights held fixed; ``t_weights`` the grid point's share of
#: computing its weights (weight learning, the NW estimate); ``n_unconverged_inner`` the learned weights' inner
#: solves stopped at the engine's step limit (``svm_plus.LearnedWeights``; null for the other methods),
#: ``n_unconverged_fits`` the model's own solves that did (its training, K-fold CV and exact LOO retrainings; for
#: SVM+ those of its equivalent weighted SVM), both null in rows written before they were counted; ``gamma`` the RBF
#: parameter (2^log2_kernel_scale / d); ``l`` and ``n_val`` the sample sizes.
LUPI_HYPERPARAMETERS: tuple[str, ...] = ("log2_C", "tau", "A", "B", "log2_gamma_plus", "log2_kernel_scale",
                                         "log2_priv_gamma")


def parse_ratio(ratio: str) -> tuple[int, int]:
    """"t:v" -> (t, v): a ``ratio`` of the Experiment 8 rows, the training-to-validation ratio."""
    t, _, v = str(ratio).partition(":")
    return int(t), int(v)

_LUPI_FIELDS: list[tuple[str, pa.DataType]] = [
    ("experiment", pa.string()),
    ("dataset", pa.string()),
    ("method", pa.string()),
    ("ratio", pa.string()),
    ("seed", pa.int64()),
    ("realization", pa.int64()),
    *[(name, pa.float64()) for name in LUPI_HYPERPARAMETERS],
    *_TRAINED,
    *[(name, pa.float64()) for name in ("val_error", "cv_error", "span_rule", "span_bound", "loo_rule", "loo_error",
                                         "loo_converted")],
    ("cv_folds", pa.int64()),
    *[(name, pa.int64()) for name in ("n_sv", "n_inbound", "n_bounded", "n_zero_weight")],
    ("n_unconverged_inner", pa.int64()),
    ("n_unconverged_fits", pa.int64()),
    *[(name, pa.float64()) for name in ("t_weights", "t_train", "t_val", "t_cv", "t_span_rule", "t_span_bound",
                                         "t_loo_rule", "t_loo")],
    ("n_val", pa.int64()),
    ("train_fraction", pa.float64()),
    *_PLACE,
]

#: Experiment 7 ("reference_path" job kind): one row per four-Gaussian data set (n, seed): the exact solution
#: path of the cost-weighted experiment against the engine re-solving (cold) at its breakpoints and SMO re-solving
#: hot-started at every breakpoint (the fields of ``solution_path.reference.ReferencePath``; CPU seconds;
#: ``fallback`` 1 where the path's end was replaced by the engine; ``t_libsvm`` scaled from ``n_resolved``
#: breakpoints where that is below ``n_events``)
_REFERENCE_FIELDS: list[tuple[str, pa.DataType]] = [
    ("experiment", pa.string()),
    ("dataset", pa.string()),
    ("seed", pa.int64()),
    ("realization", pa.int64()),
    ("n", pa.int64()),
    *[(name, pa.float64()) for name in ("d1_start", "d1_end", "d2_weight", "gamma")],
    ("engine", pa.string()),
    ("n_events", pa.int64()),
    ("mean_margin_size", pa.float64()),
    ("max_margin_size", pa.int64()),
    ("t_path", pa.float64()),
    ("t_path_wall", pa.float64()),
    ("n_resolved", pa.int64()),
    *[(name, pa.float64()) for name in ("t_resolve", "t_resolve_wall", "t_libsvm", "speedup", "hot_tol", "t_smo_hot",
                                         "speedup_smo_hot", "max_abs_df_smo_hot", "max_abs_df")],
    ("n_nonunique_b", pa.int64()),
    ("end_max_abs_df", pa.float64()),
    ("fallback", pa.int64()),
    *_PLACE,
]

#: every row schema of the study, by name (a job kind's ``ROWS``): "model" is one row per trained
#: weighted SVM of a weight grid, "standard_model" one per standard SVM of Experiment 10, "lupi" one row
#: per grid point of a method of Experiment 8, "reference_path" one per data set of Experiment 7, "sampling"
#: one per (C, engine) of Experiment 9
ROW_SCHEMAS: dict[str, pa.Schema] = {
    "model": ROW_SCHEMA,
    "standard_model": STANDARD_ROW_SCHEMA,
    "lupi": pa.schema([pa.field(n, t, nullable=n in NULLABLE) for n, t in _LUPI_FIELDS]),
    "reference_path": pa.schema([pa.field(n, t, nullable=False) for n, t in _REFERENCE_FIELDS]),
    "sampling": pa.schema([pa.field(n, t, nullable=False) for n, t in _SAMPLING_FIELDS]),
}
KIND_KEY = b"wsvm_span.row_kind"


class SchemaError(ValueError):
    """Rows that do not match :data:`ROW_SCHEMA`."""


def _kinds(schema: pa.Schema) -> tuple[set[str], set[str]]:
    """(string columns, integer columns) of a row schema: both are required in every row, unless the
    schema's field is nullable (then a missing value is null)."""
    return ({f.name for f in schema if pa.types.is_string(f.type)},
            {f.name for f in schema if pa.types.is_integer(f.type)})


def rows_to_table(rows: Iterable[Mapping[str, Any]], provenance: Mapping[str, Any] | None = None,
                  kind: str = "model") -> pa.Table:
    """Build a pyarrow table with exactly the row schema ``kind`` from dict rows (missing floats -> NaN)."""
    schema = ROW_SCHEMAS[kind]
    strings, ints = _kinds(schema)
    rows = list(rows)
    columns: dict[str, list[Any]] = {name: [] for name in schema.names}
    for i, row in enumerate(rows):
        unknown = set(row) - set(schema.names)
        if unknown:
            raise SchemaError(f"row {i}: unknown column(s) {sorted(unknown)}")
        for name in schema.names:
            value = row.get(name)
            if value is None and schema.field(name).nullable and name in ints:
                pass  # null
            elif value is None:
                if name in strings or name in ints:
                    raise SchemaError(f"row {i}: column {name!r} is required")
                value = float("nan")
            elif name in ints:
                value = int(value)
            elif name not in strings:
                value = float(value)
            columns[name].append(value)
    table = pa.Table.from_pydict(columns, schema=schema)
    return with_metadata(table, provenance, kind)


def with_metadata(table: pa.Table, provenance: Mapping[str, Any] | None = None, kind: str = "model") -> pa.Table:
    """``table`` with this code's schema version, its row kind and (optionally) a provenance record."""
    meta = {VERSION_KEY: str(SCHEMA_VERSION).encode(), KIND_KEY: kind.encode()}
    if provenance is not None:
        meta[PROVENANCE_KEY] = json.dumps(provenance, sort_keys=True).encode()
    return table.replace_schema_metadata(meta)


def row_kind(table: pa.Table) -> str:
    """The row schema a table was written with (files before row kinds hold model rows)."""
    return (table.schema.metadata or {}).get(KIND_KEY, b"model").decode()


def validate_rows(table: pa.Table | Any, kind: str | None = None) -> None:
    """Raise :class:`SchemaError` unless ``table`` (pyarrow table or DataFrame) has exactly the row schema
    ``kind`` (default: the one its metadata names, else "model")."""
    if kind is None:
        kind = row_kind(table) if isinstance(table, pa.Table) else "model"
    schema = ROW_SCHEMAS[kind]
    if not isinstance(table, pa.Table):
        names = list(table.columns)
        if names != list(schema.names):
            missing = [c for c in schema.names if c not in names]
            extra = [c for c in names if c not in schema.names]
            raise SchemaError(f"columns differ from the {kind} row schema: missing {missing}, extra {extra}")
        table = pa.Table.from_pandas(table, schema=schema, preserve_index=False)
    got = table.schema.remove_metadata()
    if not got.equals(schema):
        diffs = []
        for field in schema:
            idx = got.get_field_index(field.name)
            if idx < 0:
                diffs.append(f"missing {field.name}")
            elif got.field(idx).type != field.type:
                diffs.append(f"{field.name}: {got.field(idx).type} != {field.type}")
        extra = [n for n in got.names if n not in schema.names]
        if extra:
            diffs.append(f"extra {extra}")
        if got.names != list(schema.names) and not diffs:
            diffs.append("column order differs")
        raise SchemaError(f"parquet rows do not match the {kind} row schema: " + "; ".join(diffs or ["nullability"]))
    strings, ints = _kinds(schema)
    for name in strings | ints:
        if table.column(name).null_count and not schema.field(name).nullable:
            raise SchemaError(f"column {name!r} has nulls")


def write_rows_atomic(table: pa.Table, path: str | os.PathLike) -> Path:
    """Write ``table`` to ``path`` atomically: a temporary file in the same folder, fsync, os.replace.

    A process that dies mid-write leaves no file at ``path`` (at most a ``.tmp`` file that is never
    read and is overwritten by the next attempt's own temporary name)."""
    validate_rows(table)
    with atomic_write(path) as fh:
        pq.write_table(table, fh)
    return path


def read_rows_table(path: str | os.PathLike) -> pa.Table:
    """Read one parquet file of rows, validated against the schema (errors name the file)."""
    table = pq.read_table(path)
    version = (table.schema.metadata or {}).get(VERSION_KEY, b"1").decode()
    if version != str(SCHEMA_VERSION):
        raise SchemaError(
            f"{path}: written with results schema version {version}, this wsvm-span reads version "
            f"{SCHEMA_VERSION} (columns were renamed: cv5 -> cv_error, xi_alpha -> xi_alpha_bound, sv_bound -> "
            "sv_count_bound, loo_exact -> loo_error); delete the old results folder and rerun the workflow, "
            "or read them with the wsvm-span version that wrote them"
        )
    table = _with_added_columns(table)
    try:
        validate_rows(table)
    except SchemaError as exc:
        raise SchemaError(f"{path}: {exc}") from None
    return table


def _with_added_columns(table: pa.Table) -> pa.Table:
    """``table`` with the :data:`ADDED_COLUMNS` of its kind that it lacks, at their schema positions, all
    null (integers) or NaN (floats): "does not apply", as for a model of another engine."""
    schema = ROW_SCHEMAS[row_kind(table)]
    for name in ADDED_COLUMNS.get(row_kind(table), ()):
        if name in table.schema.names:
            continue
        field = schema.field(name)
        values = (pa.array([float("nan")] * table.num_rows, field.type) if pa.types.is_floating(field.type)
                  else pa.nulls(table.num_rows, field.type))
        table = table.add_column(min(schema.get_field_index(name), table.num_columns), field, values)
    return table


def read_rows(paths: str | os.PathLike | Iterable[str | os.PathLike]):
    """Read one or more parquet files of rows into a pandas DataFrame, validating each."""
    import pandas as pd

    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    tables = [read_rows_table(p) for p in paths]
    kinds = {row_kind(t) for t in tables}
    if len(kinds) > 1:
        raise SchemaError(f"rows of different kinds ({sorted(kinds)}) cannot be read into one table")
    frames = [t.to_pandas() for t in tables]
    if not frames:
        return pa.Table.from_pylist([], schema=ROW_SCHEMA).to_pandas()
    return pd.concat(frames, ignore_index=True)


def read_provenance(path: str | os.PathLike) -> Any:
    """The provenance JSON stored in a parquet file's metadata (None when absent)."""
    meta = pq.read_schema(path).metadata or {}
    raw = meta.get(PROVENANCE_KEY)
    return json.loads(raw) if raw else None
