"""Tables 2-6 of the study (and two extra views), computed from the parquet rows alone.

Every table is written three ways under ``results/tables/``: ``<name>.csv`` (numbers, machine
readable: a mean column and a ``_sd`` column per quantity), ``<name>.md`` and ``<name>.tex`` (the same
numbers formatted as "mean +- sd", a caption that names the tie rule and the units, a footer).
With one replicate (seed, realization) per data set the sd is empty and only the mean is shown.

Selection (method.md section 6): for each data set and replicate, every estimator selects the models
attaining its minimum over the grid; the reported test error of the selection is the worst (default),
best or lower-median test error among those tied models (the tie rule): always the test error of one
of the tied models.

Replicates (seed, realization) follow the data registry (see ``wsvm_span.study.config.replicates``):
seeds for random splits and synthetic sets, realizations for the IDA sets, one for a fixed split; the
number of replicates of each data set is shown next to its mean +- sd.

Every file is written atomically (a temporary file in the same folder, then ``os.replace``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from ..tie_rules import TIE_ATOL, TIE_RTOL, TIE_RULES, select_test_error
from ..utils.atomic import atomic_write

from . import catalog
from .results_schema import ESTIMATORS, LABELS as COLUMN_LABELS, STANDARD_HYPERPARAMETERS, STANDARD_SIZES, label

__all__ = [
    "LABELS",
    "TIE_RULES",
    "TableResult",
    "select_test_error",
    "table_selection",
    "table_rmse",
    "table_counts",
    "table_timings",
    "table_exp6",
    "table_loo",
    "table_exp10_diameters",
    "table_exp10_selection",
    "table_exp10_cost",
    "curve_slice",
    "varied_axes",
    "table_lupi_selection",
    "table_lupi_time",
    "table_lupi_loo",
    "table_exp7",
    "lupi_selected",
    "table_sampling_training",
    "table_sampling_span",
    "build_table",
    "write_table",
    "write_text_atomic",
]

#: estimators of Table 4 (the span bound is not an error estimate: it is not bounded by 1)
RMSE_ESTIMATORS = ("span_rule", "cv_error", "xi_alpha_bound", "loo_error")
#: the share (%) of models without in-bound SVs (n* = 0), and the suffix of columns restricted to n* >= 1
NO_INBOUND = "no_inbound_pct"
INBOUND_SUFFIX = "_inbound"


def _inbound(columns) -> list[str]:
    return [f"{c}{INBOUND_SUFFIX}" for c in columns]


#: display labels: the row columns' (``schema.LABELS``) plus the columns the tables derive
LABELS = {
    **COLUMN_LABELS,
    "min_error": "Min. error",
    "n_replicates": "Replicates",
    "cv_over_span_rule": "CV / span-rule",
    "agree_pct": "Agree (%)",
    "mean_abs_diff": "Mean |diff|",
    "max_abs_diff": "Max |diff|",
    "mean_diff": "Mean diff",
    "rmse": "RMSE",
    NO_INBOUND: "n* = 0 (%)",
    "s_within_d_sv_pct": "S <= D_SV (%)",
    "s_over_d_sv": "S / D_SV",
    "rmse_curve": "RMSE (curves)",
    "rmse_curve_inbound": "RMSE (curves, n* >= 1)",
    "rmse_models": "RMSE (models)",
    "argmin": "Minimiser",
    "argmin_test": "Test-error minimiser",
    "argmin_diff": "Minimiser diff",
    "selected_test_error": "Test error of selected (%)",
    "loo_over_span_rule": "LOO / span-rule",
    "loo_over_train": "LOO / training",
    "time_val_error": "Validation (s)",
    "time_cv_error": "CV (s)",
    "time_span_rule": "Span-rule (s)",
    "time_loo_rule": "LOO rule (s)",
    "time_loo_error": "Exact LOO (s)",
    "rmse_span_rule": "RMSE span-rule",
    "mean_diff_span_rule": "Mean diff span-rule",
    "rmse_loo_rule": "RMSE LOO rule",
    "mean_diff_loo_rule": "Mean diff LOO rule",
    "rmse_span_converted": "RMSE span-rule vs LOO, weights fixed",
    "zero_weight_pct": "Zero weights (%)",
    "speedup_min": "Speed-up (min)",
    "max_abs_df_e6": "Max |f_path - f_LIBSVM| (1e-6)",
    "n_fallbacks": "Fallbacks",
    "n_resolved": "Re-solved breakpoints",
    "time_over_reference": "Time / reference",
    "seconds_train": "Training (s)",
    "seconds_span_rule": "Span-rule (s)",
    "seconds_train_span_rule": "Training + span-rule (s)",
    "seconds_cv": "K-fold CV (s)",
    **{f"{c}{INBOUND_SUFFIX}": f"{COLUMN_LABELS.get(c, 'RMSE')} (n* >= 1)" for c in (*RMSE_ESTIMATORS, "rmse")},
}
_LATEX_LABELS = {
    "xi_alpha_bound": r"$\xi\alpha$ bound",
    "n_empty_lambda": r"$k$ (empty $\Lambda_p$)",
    "n_inbound": r"$n^*$",
    "n_sv": r"$n$",
}


#: how the captions describe each tie rule
TIE_RULE_TEXT = {
    "worst": "the worst test error among the models attaining an estimator's minimum",
    "best": "the best test error among the models attaining an estimator's minimum",
    "median": ("the lower median of the test errors of the models attaining an estimator's minimum, "
               "i.e. the error of one of those models, never an average of two"),
}
REPLICATE = ["seed", "realization"]
_REPLICATES_TEXT = ("Mean +- sd over the replicates of each data set (column Replicates: one per seed for "
                    "random splits, one per realization for the IDA sets, one for a fixed split).")


@dataclass
class TableResult:
    """A table: numbers (``data``: one row per data set, ``<col>`` and ``<col>_sd``) plus how to show them."""

    name: str
    data: pd.DataFrame
    columns: list[str]  # value columns shown (each with an optional _sd)
    caption: str
    footer: list[str] = field(default_factory=list)
    decimals: int = 2
    key_columns: list[str] = field(default_factory=lambda: ["dataset"])
    labels: dict[str, str] = field(default_factory=dict)  # display labels of ``columns`` (default: LABELS)
    formats: dict[str, str] = field(default_factory=dict)  # per-column format spec (e.g. ".1e"), else ``decimals``


# ------------------------------------------------------------------------------------------ helpers
def _mean_sd(values: Sequence[float]) -> tuple[float, float]:
    arr = np.asarray([v for v in values if np.isfinite(v)], dtype=float)
    if arr.size == 0:
        return math.nan, math.nan
    return float(arr.mean()), float(arr.std(ddof=1)) if arr.size > 1 else math.nan


def _datasets(df: pd.DataFrame) -> list[str]:
    return list(dict.fromkeys(df["dataset"]))  # order of first appearance (= config order)


def _replicates(sub: pd.DataFrame):
    return sub.groupby(REPLICATE, sort=True)


def _complete(sub: pd.DataFrame, col: str) -> bool:
    return bool(len(sub)) and bool(np.all(np.isfinite(sub[col].to_numpy(dtype=float))))


# ------------------------------------------------------------------------------------------- tables
def table_selection(df: pd.DataFrame, tie_rule: str = "worst", name: str = "table2",
                    title: str = "") -> TableResult:
    """Tables 2 and 3: test error (%) of the model selected by each estimator, and the minimum."""
    out = []
    for ds in _datasets(df):
        sub = df[df["dataset"] == ds]
        per: dict[str, list[float]] = {c: [] for c in (*ESTIMATORS, "min_error")}
        loo_complete = True
        for _, rep in _replicates(sub):
            te = rep["test_error"].to_numpy(dtype=float)
            for est in ESTIMATORS:
                per[est].append(100 * select_test_error(rep[est].to_numpy(dtype=float), te, tie_rule))
            per["min_error"].append(100 * float(te.min()))
            loo_complete &= _complete(rep, "loo_error")
        row = {"dataset": ds, "experiment": sub["experiment"].iloc[0], "l": int(sub["l"].iloc[0]),
               "n_models": int(len(sub) // max(1, sub.groupby(REPLICATE).ngroups)),
               "n_replicates": int(sub.groupby(REPLICATE).ngroups), "tie_rule": tie_rule,
               "n_loo": int(np.isfinite(sub["loo_error"].to_numpy(dtype=float)).sum())}
        for col, vals in per.items():
            if col == "loo_error" and not loo_complete:
                vals = []
            row[col], row[f"{col}_sd"] = _mean_sd(vals)
        out.append(row)
    caption = (f"{title}Test error (%) of the model selected by each estimator (tie rule: {tie_rule}, "
               f"{TIE_RULE_TEXT[tie_rule]}) and the minimum test error over the grid. {_REPLICATES_TEXT} "
               "Exact LOO is shown only where it was computed for every model.")
    return TableResult(name, pd.DataFrame(out), [*ESTIMATORS, "min_error"], caption)


def _rmse(v: np.ndarray, te: np.ndarray) -> float:
    return 100 * float(np.sqrt(np.mean((v - te) ** 2))) if v.size else math.nan


def table_rmse(df: pd.DataFrame, name: str = "table4") -> TableResult:
    """Table 4: RMSE (percentage points) between each estimate and the test error, over all models and
    over the models with at least one in-bound SV, and the share of models without one.

    A model with n* = 0 has an undefined span: the span-rule counts every SV as an error (as
    specified), which can dominate the RMSE over all models; the n* >= 1 columns show the rest."""
    out = []
    for ds in _datasets(df):
        sub = df[df["dataset"] == ds]
        per: dict[str, list[float]] = {c: [] for c in (*RMSE_ESTIMATORS, *_inbound(RMSE_ESTIMATORS), NO_INBOUND)}
        for _, rep in _replicates(sub):
            te = rep["test_error"].to_numpy(dtype=float)
            some_inbound = rep["n_inbound"].to_numpy() >= 1
            per[NO_INBOUND].append(100 * float(np.mean(~some_inbound)))
            for est in RMSE_ESTIMATORS:
                v = rep[est].to_numpy(dtype=float)
                complete = _complete(rep, est)
                per[est].append(_rmse(v, te) if complete else math.nan)
                per[f"{est}{INBOUND_SUFFIX}"].append(_rmse(v[some_inbound], te[some_inbound]) if complete else math.nan)
        row = {"dataset": ds, "experiment": sub["experiment"].iloc[0], "l": int(sub["l"].iloc[0]),
               "n_models": int(len(sub) // max(1, sub.groupby(REPLICATE).ngroups)),
               "n_replicates": int(sub.groupby(REPLICATE).ngroups)}
        for col, vals in per.items():
            row[col], row[f"{col}_sd"] = _mean_sd(vals) if not any(math.isnan(v) for v in vals) else (math.nan, math.nan)
        out.append(row)
    caption = ("RMSE (percentage points) between each estimate and the test error over all models of a data set "
               "(the span bound is excluded: it is not bounded by 1), then the share (%) of models with no in-bound "
               "SV (n* = 0: the span is undefined and the span-rule counts every SV as an error) and the RMSE over "
               "the models with n* >= 1. " + _REPLICATES_TEXT + " Exact LOO only where it was computed for every "
               "model.")
    return TableResult(name, pd.DataFrame(out), [*RMSE_ESTIMATORS, NO_INBOUND, *_inbound(RMSE_ESTIMATORS)], caption)


def table_counts(df: pd.DataFrame, name: str = "table5") -> TableResult:
    """Table 5: mean +- sd over all models of k (empty Lambda_p), n* and n."""
    out = []
    for ds in _datasets(df):
        sub = df[df["dataset"] == ds]
        row = {"dataset": ds, "experiment": sub["experiment"].iloc[0], "l": int(sub["l"].iloc[0]),
               "n_models": int(len(sub))}
        for col in ("n_empty_lambda", "n_inbound", "n_sv"):
            v = sub[col].to_numpy(dtype=float)
            row[col] = float(v.mean())
            row[f"{col}_sd"] = float(v.std(ddof=1)) if v.size > 1 else math.nan
        out.append(row)
    caption = ("Mean +- sd over all models (all grid points and replicates) of the number of in-bound SVs "
               "with empty Lambda_p (Lemma 1 fails), of in-bound SVs n* and of all SVs n.")
    return TableResult(name, pd.DataFrame(out), ["n_empty_lambda", "n_inbound", "n_sv"], caption, decimals=1)


def table_timings(df: pd.DataFrame, provenance: Iterable[Mapping] = (), name: str = "table6") -> TableResult:
    """Table 6: mean time per model (ms, one thread) of the span-rule, K-fold CV, training, span bound
    (and exact LOO over the models that have it)."""
    out = []
    cols = ["t_span_rule", "t_cv", "t_train", "t_span_bound", "t_loo"]
    for ds in _datasets(df):
        sub = df[df["dataset"] == ds]
        row = {"dataset": ds, "experiment": sub["experiment"].iloc[0], "l": int(sub["l"].iloc[0]),
               "n_models": int(len(sub))}
        for col in cols:
            v = 1000 * sub[col].to_numpy(dtype=float)
            v = v[np.isfinite(v)]
            row[col] = float(v.mean()) if v.size else math.nan
            row[f"{col}_sd"] = float(v.std(ddof=1)) if v.size > 1 else math.nan
        row["cv_over_span_rule"] = (row["t_cv"] / row["t_span_rule"]) if row["t_span_rule"] > 0 else math.nan
        row["cv_over_span_rule_sd"] = math.nan
        out.append(row)
    caption = ("Mean +- sd time per model (milliseconds, one processor: one thread for LIBSVM, BLAS and the "
               f"QP solver) to compute the span-rule (all S_p), to run {label('t_cv', df)}, to train, and to compute the "
               "span bound; exact LOO over the models where it was computed. Last column: CV time / "
               "span-rule time.")
    return TableResult(name, pd.DataFrame(out), [*cols, "cv_over_span_rule"], caption,
                       footer=_environment_footer(provenance), decimals=2)


def _environment_footer(provenance: Iterable[Mapping]) -> list[str]:
    machines, libs, solvers = {}, {}, set()
    for p in provenance:
        m = p.get("machine") or {}
        key = f"{m.get('cpu', '?')} ({m.get('cpu_count', '?')} CPUs), {m.get('platform', '?')}, Python {m.get('python', '?')}"
        machines[key] = None
        lv = p.get("library_versions") or {}
        libs[", ".join(f"{k} {v}" for k, v in sorted(lv.items()))] = None
        solvers.update(p.get("qp_solver") or [])
    lines = [f"Machine: {k}" for k in machines] or ["Machine: unknown"]
    lines += [f"Libraries: {k}" for k in libs]
    if solvers:
        lines.append(f"QP solver: {', '.join(sorted(solvers))}")
    return lines


def table_exp6(df: pd.DataFrame, name: str = "exp6_summary") -> TableResult:
    """Experiment 6: mean time per model (ms) of span-rule, K-fold CV and training, and mean n*, n,
    per (d, l) of the synthetic sets."""
    out = []
    for (d, l), sub in df.groupby(["d", "l"], sort=True):
        row = {"dataset": sub["dataset"].iloc[0], "d": int(d), "l": int(l), "n_models": int(len(sub))}
        for col in ("t_span_rule", "t_cv", "t_train"):
            v = 1000 * sub[col].to_numpy(dtype=float)
            row[col], row[f"{col}_sd"] = float(v.mean()), float(v.std(ddof=1)) if v.size > 1 else math.nan
        for col in ("n_inbound", "n_sv"):
            v = sub[col].to_numpy(dtype=float)
            row[col], row[f"{col}_sd"] = float(v.mean()), float(v.std(ddof=1)) if v.size > 1 else math.nan
        out.append(row)
    caption = ("Experiment 6 (synthetic ringnorm variant): mean +- sd over models of the time per model "
               f"(milliseconds, one thread) of the span-rule, {label('t_cv', df)} and training, and of n* and n, per "
               "dimension d and training size l.")
    return TableResult(name, pd.DataFrame(out), ["t_span_rule", "t_cv", "t_train", "n_inbound", "n_sv"],
                       caption, key_columns=["d", "l"])


def table_loo(df: pd.DataFrame, name: str = "loo_agreement") -> TableResult:
    """Span-rule vs exact LOO over the models where exact LOO was computed: how often they agree
    (same number of LOO errors), by how much they differ (percentage points), the share of models with
    no in-bound SV, and the RMSE over all of them and over those with n* >= 1."""
    cols = ["agree_pct", "mean_abs_diff", "max_abs_diff", "mean_diff", "rmse", NO_INBOUND, f"rmse{INBOUND_SUFFIX}"]
    out = []
    for ds in _datasets(df):
        sub = df[df["dataset"] == ds]
        sub = sub[np.isfinite(sub["loo_error"].to_numpy(dtype=float))]
        l = int(df.loc[df["dataset"] == ds, "l"].iloc[0])
        row = {"dataset": ds, "experiment": df.loc[df["dataset"] == ds, "experiment"].iloc[0], "l": l,
               "n_models": int(len(sub))}
        row.update({c: math.nan for c in cols})
        if len(sub):
            rule, loo = sub["span_rule"].to_numpy(dtype=float), sub["loo_error"].to_numpy(dtype=float)
            diff = rule - loo
            some_inbound = sub["n_inbound"].to_numpy() >= 1
            # both count errors over l: they agree when they count the same number (|diff| < 1/2 of 1/l)
            row["agree_pct"] = 100 * float(np.mean(np.abs(diff) < 0.5 / l))
            row["mean_abs_diff"] = 100 * float(np.mean(np.abs(diff)))
            row["max_abs_diff"] = 100 * float(np.max(np.abs(diff)))
            row["mean_diff"] = 100 * float(np.mean(diff))
            row["rmse"] = _rmse(rule, loo)
            row[NO_INBOUND] = 100 * float(np.mean(~some_inbound))
            row[f"rmse{INBOUND_SUFFIX}"] = _rmse(rule[some_inbound], loo[some_inbound])
        for c in cols:
            row[f"{c}_sd"] = math.nan
        out.append(row)
    caption = ("Span-rule vs exact leave-one-out error over the models with exact LOO: share of models where "
               "both count the same errors (%), mean and max absolute difference, mean signed difference "
               "(span-rule - LOO) and RMSE (percentage points); then the share (%) of these models with no "
               "in-bound SV (n* = 0, span undefined) and the RMSE over those with n* >= 1.")
    return TableResult(name, pd.DataFrame(out), cols, caption)


# ------------------------------------------------------------------ Experiment 10 (standard SVM)
#: the estimators of Experiment 10's curves (the span bound is not bounded by 1: no RMSE to the test error)
STANDARD_ESTIMATORS = ("span_rule", "span_bound", "loo_error")
#: S <= D_SV is a theorem; both come from QP solutions accurate to ~1e-10 relative, so a model counts as
#: satisfying it up to this relative slack
SIZE_RTOL = 1e-9


def varied_axes(df: pd.DataFrame) -> list[str]:
    """The hyperparameters of Experiment 10 rows that take more than one value."""
    return [a for a in STANDARD_HYPERPARAMETERS if df[a].nunique() > 1]


def curve_slice(sub: pd.DataFrame, axis: str) -> tuple[pd.DataFrame, dict[str, float]]:
    """The rows of one data set (all replicates) along ``axis``, the other hyperparameters fixed at the grid
    point of lowest mean test error over the replicates; and those fixed values."""
    others = [h for h in STANDARD_HYPERPARAMETERS if h != axis]
    best = sub.groupby(list(STANDARD_HYPERPARAMETERS))["test_error"].mean().idxmin()
    fixed = {h: float(v) for h, v in zip(STANDARD_HYPERPARAMETERS, best) if h in others}
    mask = np.ones(len(sub), dtype=bool)
    for h, v in fixed.items():
        mask &= np.isclose(sub[h].to_numpy(dtype=float), v)
    return sub[mask], fixed


def _curve_argmin(axis_values: np.ndarray, curve: np.ndarray) -> float:
    """The axis value at a curve's minimum (the smallest such value when several tie)."""
    tied = np.isclose(curve, np.min(curve), rtol=TIE_RTOL, atol=TIE_ATOL)
    return float(np.min(axis_values[tied]))


def table_exp10_diameters(df: pd.DataFrame, name: str = "exp10_diameters") -> TableResult:
    """Span vs diameters: mean +- sd over replicates of D, D_SV and S per (data set, sigma, log2 C), the mean
    ratio S / D_SV, the share of models with S <= D_SV and the mean SV counts."""
    out = []
    for ds in _datasets(df):
        for (sigma, log2_C), sub in df[df["dataset"] == ds].groupby(list(STANDARD_HYPERPARAMETERS), sort=True):
            row = {"dataset": ds, "sigma": sigma, "log2_C": log2_C, "l": int(sub["l"].iloc[0]),
                   "n_replicates": int(len(sub))}
            for col in (*STANDARD_SIZES, "n_inbound", "n_sv"):
                row[col], row[f"{col}_sd"] = _mean_sd(sub[col].to_numpy(dtype=float))
            S, d_sv = sub["S"].to_numpy(dtype=float), sub["D_SV"].to_numpy(dtype=float)
            both = np.isfinite(S) & np.isfinite(d_sv)
            row["s_over_d_sv"], row["s_over_d_sv_sd"] = _mean_sd(S[both] / d_sv[both])
            row["s_within_d_sv_pct"] = (100 * float(np.mean(S[both] <= d_sv[both] * (1 + SIZE_RTOL)))
                                        if both.any() else math.nan)
            row["s_within_d_sv_pct_sd"] = math.nan
            out.append(row)
    caption = ("Standard SVM (every C_i = C), kernel exp(-||x - x'||^2 / (2 sigma^2)): mean +- sd over the "
               "replicates of the diameter D of the smallest sphere enclosing all training points, the diameter "
               "D_SV of the one enclosing the in-bound SVs and the span S (max of the box-constrained S_p), the "
               "mean ratio S / D_SV, the share of models with S <= D_SV (a theorem), and the mean numbers of "
               "in-bound SVs n* and SVs n. Replicates of mnist_0to4_5to9: disjoint training subsets of 317 MNIST "
               "digits, 0-4 vs 5-9 (the original used USPS digits, which are not available here).")
    cols = [*STANDARD_SIZES, "s_over_d_sv", "s_within_d_sv_pct", "n_inbound", "n_sv"]
    return TableResult(name, pd.DataFrame(out), cols, caption, decimals=3,
                       key_columns=["dataset", "sigma", "log2_C"])


def table_exp10_selection(df: pd.DataFrame, tie_rule: str = "worst", name: str = "exp10_selection") -> TableResult:
    """Model selection along each varied hyperparameter of each data set (the other at its minimum-mean-test-
    error value): per estimator, the RMSE (percentage points) between its mean curve and the mean test-error
    curve, the RMSE over the models (mean +- sd over replicates), the minimisers of its mean curve and of the
    test-error curve and their difference, and the test error (%) of the model it selects per replicate."""
    out = []
    for ds in _datasets(df):
        sub = df[df["dataset"] == ds]
        for axis in varied_axes(sub):
            line, fixed = curve_slice(sub, axis)
            means = line.groupby(axis, sort=True)[["test_error", *STANDARD_ESTIMATORS]].mean()
            x = means.index.to_numpy(dtype=float)
            test_curve = means["test_error"].to_numpy(dtype=float)
            # points of the curve where some replicate's model has no in-bound SV (its span is undefined)
            undefined = (line["n_inbound"] == 0).groupby(line[axis], sort=True).any().to_numpy()
            at = ", ".join(f"{h} = {v:g}" for h, v in fixed.items())
            reps = list(_replicates(line))
            for est in STANDARD_ESTIMATORS:
                if not _complete(line, est):
                    continue
                curve = means[est].to_numpy(dtype=float)
                bounded = est != "span_bound"
                row = {"dataset": ds, "axis": axis, "at": at, "estimator": est, "l": int(line["l"].iloc[0]),
                       "n_replicates": len(reps), "tie_rule": tie_rule,
                       "rmse_curve": _rmse(curve, test_curve) if bounded else math.nan, "rmse_curve_sd": math.nan,
                       "rmse_curve_inbound": (_rmse(curve[~undefined], test_curve[~undefined]) if bounded
                                              else math.nan), "rmse_curve_inbound_sd": math.nan,
                       NO_INBOUND: 100 * float(np.mean(line["n_inbound"] == 0)), f"{NO_INBOUND}_sd": math.nan,
                       "argmin": _curve_argmin(x, curve), "argmin_test": _curve_argmin(x, test_curve)}
                row["argmin_diff"] = row["argmin"] - row["argmin_test"]
                for c in ("argmin", "argmin_test", "argmin_diff"):
                    row[f"{c}_sd"] = math.nan
                per_rep = {"rmse_models": [], "selected_test_error": [], "min_error": []}
                for _, rep in reps:
                    v, te = rep[est].to_numpy(dtype=float), rep["test_error"].to_numpy(dtype=float)
                    per_rep["rmse_models"].append(_rmse(v, te) if bounded else math.nan)
                    per_rep["selected_test_error"].append(100 * select_test_error(v, te, tie_rule))
                    per_rep["min_error"].append(100 * float(te.min()))
                for c, vals in per_rep.items():
                    row[c], row[f"{c}_sd"] = _mean_sd(vals)
                out.append(row)
    caption = (f"Standard SVM: for each data set and each varied hyperparameter (the other fixed at the grid point "
               "of lowest mean test error, column at), per estimator: the RMSE (percentage points) between its "
               "curve and the test-error curve (curves = means over the replicates), the RMSE over the models "
               "(mean +- sd over replicates), the share (%) of the curve's models with no in-bound SV (n* = 0: the "
               "span is undefined and the span-rule counts every SV as an error) and the curves' RMSE over the "
               "points where every replicate has n* >= 1, the minimisers of its curve and of the test-error curve (the "
               "smallest value when several tie) and their difference, the test error (%) of the model it "
               f"selects on the curve of each replicate (tie rule: {tie_rule}, {TIE_RULE_TEXT[tie_rule]}) and the "
               "minimum test error on the curve. The span bound is not bounded by 1: no RMSE.")
    cols = ["rmse_curve", "rmse_models", NO_INBOUND, "rmse_curve_inbound", "argmin", "argmin_test", "argmin_diff",
            "selected_test_error", "min_error"]
    return TableResult(name, pd.DataFrame(out), cols, caption, key_columns=["dataset", "axis", "at", "estimator"])


def table_exp10_cost(df: pd.DataFrame, provenance: Iterable[Mapping] = (), name: str = "exp10_cost") -> TableResult:
    """Cost per model (ms, one thread): training, span-rule, span bound, exact LOO, and the ratios of the
    exact LOO's time to the span-rule's and to training's."""
    out = []
    cols = ["t_train", "t_span_rule", "t_span_bound", "t_loo"]
    for ds in _datasets(df):
        sub = df[df["dataset"] == ds]
        row = {"dataset": ds, "l": int(sub["l"].iloc[0]), "n_models": int(len(sub))}
        for col in (*cols, "n_sv"):
            v = sub[col].to_numpy(dtype=float) * (1000 if col.startswith("t_") else 1)
            row[col], row[f"{col}_sd"] = _mean_sd(v)
        for ratio, base in (("loo_over_span_rule", "t_span_rule"), ("loo_over_train", "t_train")):
            row[ratio] = row["t_loo"] / row[base] if row[base] > 0 else math.nan
            row[f"{ratio}_sd"] = math.nan
        out.append(row)
    caption = ("Standard SVM: mean +- sd time per model (milliseconds, one processor: one thread for LIBSVM, "
               "BLAS and the QP solver) to train, to compute the span-rule (all S_p, closed form), the span bound "
               "(box-constrained spans, D included) and the exact leave-one-out error by retraining LIBSVM without "
               "each SV; mean n; the ratio of the exact LOO's mean time to the span-rule's and to training's.")
    return TableResult(name, pd.DataFrame(out), [*cols, "n_sv", "loo_over_span_rule", "loo_over_train"], caption,
                       footer=_environment_footer(provenance))


# ------------------------------------------------------------------ Experiment 8 (SVM+, "lupi" rows)
#: the selection rules of Experiment 8 (row columns), in table order
LUPI_RULES = ("val_error", "cv_error", "span_rule", "span_bound", "loo_rule", "loo_error")
#: each rule's cost over a method's grid: the row timings it needs (every rule also pays t_weights)
LUPI_RULE_TIMES = {
    "val_error": ("t_train", "t_val"),
    "cv_error": ("t_cv",),
    "span_rule": ("t_train", "t_span_rule"),
    "loo_rule": ("t_train", "t_loo_rule"),
    "loo_error": ("t_train", "t_loo"),
}
#: method labels of Experiment 8, in table order
LUPI_METHODS = {"svm": "SVM", "nw": "Weights A (NW)", "sigmoid": "Sigmoid scores", "learned": "Weights B (learned)",
                "svm_plus": "SVM+"}
LUPI_KEYS = ["dataset", "ratio", "l", "method"]


def _lupi_groups(df: pd.DataFrame, keys: list[str]):
    """(key values, rows) per group, data sets in config order, ratios and sizes ascending, methods in
    table order."""
    order = {m: i for i, m in enumerate(LUPI_METHODS)}
    groups = list(df.groupby(keys, sort=False))
    datasets = _datasets(df)
    groups.sort(key=lambda g: (datasets.index(g[0][0]), *[order.get(v, v) if k == "method" else v
                                                           for k, v in zip(keys[1:], g[0][1:])]))
    return groups


def lupi_selected(df: pd.DataFrame, tie_rule: str = "worst") -> pd.DataFrame:
    """Long form: the test error of the model each rule selects, per data set, ratio, training size l,
    method and seed (NaN where a rule was not computed for every grid point); rule "min_error" is the
    grid's minimum test error."""
    out = []
    for (ds, ratio, l, method), sub in _lupi_groups(df, LUPI_KEYS):
        for seed, rep in sub.groupby("seed", sort=True):
            te = rep["test_error"].to_numpy(dtype=float)
            for rule in (*LUPI_RULES, "min_error"):
                value = float(te.min()) if rule == "min_error" else select_test_error(
                    rep[rule].to_numpy(dtype=float), te, tie_rule)
                out.append({"dataset": ds, "ratio": ratio, "l": int(l), "method": method, "seed": int(seed),
                            "rule": rule, "test_error": value})
    return pd.DataFrame(out)


def _lupi_row(keys, sub: pd.DataFrame) -> dict:
    return {**dict(zip(LUPI_KEYS, keys)), "l": int(keys[2]), "n_models": int(len(sub) // sub["seed"].nunique()),
            "n_replicates": int(sub["seed"].nunique())}


def table_lupi_selection(df: pd.DataFrame, tie_rule: str = "worst", name: str = "exp8_selection") -> TableResult:
    """Experiment 8: test error (%) of the model selected by each rule, per data set, ratio, size, method."""
    sel = lupi_selected(df, tie_rule)
    out = []
    for keys, sub in _lupi_groups(df, LUPI_KEYS):
        row = _lupi_row(keys, sub)
        picked = sel[(sel["dataset"] == keys[0]) & (sel["ratio"] == keys[1]) & (sel["l"] == keys[2])
                     & (sel["method"] == keys[3])]
        for rule in (*LUPI_RULES, "min_error"):
            vals = 100 * picked.loc[picked["rule"] == rule, "test_error"].to_numpy(dtype=float)
            row[rule], row[f"{rule}_sd"] = _mean_sd(vals) if np.isfinite(vals).all() else (math.nan, math.nan)
        out.append(row)
    caption = (f"Test error (%) of the model selected by each rule (tie rule: {tie_rule}, {TIE_RULE_TEXT[tie_rule]}): "
               "the validation sample, K-fold CV, the span-rule and span bound (for SVM+: of its equivalent weighted "
               "SVM), SVM+'s LOO rule, the exact LOO error (where computed for every grid point), and the minimum "
               "test error over the grid. Mean +- sd over the seeded subsamples (column Replicates); l: training "
               "size, ratio: training-to-validation.")
    return TableResult(name, pd.DataFrame(out), [*LUPI_RULES, "min_error"], caption, key_columns=list(LUPI_KEYS))


def table_lupi_time(df: pd.DataFrame, name: str = "exp8_time") -> TableResult:
    """Experiment 8: seconds each selection rule spends over a method's grid (sums of row timings)."""
    cols = [f"time_{rule}" for rule in LUPI_RULE_TIMES]
    out = []
    for keys, sub in _lupi_groups(df, LUPI_KEYS):
        row = _lupi_row(keys, sub)
        per: dict[str, list[float]] = {c: [] for c in (*cols, "cv_over_span_rule")}
        for _, rep in sub.groupby("seed", sort=True):
            weights = rep["t_weights"].to_numpy(dtype=float)
            for rule, parts in LUPI_RULE_TIMES.items():
                t = weights + sum(rep[c].to_numpy(dtype=float) for c in parts)
                per[f"time_{rule}"].append(float(t.sum()) if np.isfinite(t).all() else math.nan)
            per["cv_over_span_rule"].append(per["time_cv_error"][-1] / per["time_span_rule"][-1])
        for col, vals in per.items():
            row[col], row[f"{col}_sd"] = _mean_sd(vals) if np.isfinite(vals).all() else (math.nan, math.nan)
        out.append(row)
    caption = ("Seconds (one thread) each selection rule spends over a method's grid: training and the validation "
               "error; K-fold CV; training and the span-rule; training and SVM+'s LOO rule; training and the exact "
               "LOO. Every rule also pays for the weights: weight learning (it needs the validation sample) and the "
               "Nadaraya-Watson estimate. Last column: CV time / span-rule time. Mean +- sd over the subsamples.")
    return TableResult(name, pd.DataFrame(out), [*cols, "cv_over_span_rule"], caption, key_columns=list(LUPI_KEYS))


def table_lupi_loo(df: pd.DataFrame, name: str = "exp8_svm_plus_loo") -> TableResult:
    """Experiment 8: how well the span-rule of SVM+'s equivalent weighted SVM and SVM+'s LOO rule estimate
    SVM+'s exact LOO error, over the SVM+ models that have it."""
    cols = ["rmse_span_rule", "mean_diff_span_rule", "rmse_loo_rule", "mean_diff_loo_rule", "rmse_span_converted",
            NO_INBOUND, "zero_weight_pct"]
    sub_all = df[(df["method"] == "svm_plus") & np.isfinite(df["loo_error"].to_numpy(dtype=float))]
    out = []
    for keys, sub in _lupi_groups(sub_all, LUPI_KEYS[:3]):
        row = {**dict(zip(LUPI_KEYS[:3], keys)), "l": int(keys[2]), "n_models": int(len(sub))}
        loo, rule, span = (sub[c].to_numpy(dtype=float) for c in ("loo_error", "loo_rule", "span_rule"))
        row.update(rmse_span_rule=_rmse(span, loo), mean_diff_span_rule=100 * float(np.mean(span - loo)),
                   rmse_loo_rule=_rmse(rule, loo), mean_diff_loo_rule=100 * float(np.mean(rule - loo)),
                   rmse_span_converted=_rmse(span, sub["loo_converted"].to_numpy(dtype=float)))
        row[NO_INBOUND] = 100 * float(np.mean(sub["n_inbound"].to_numpy() == 0))
        row["zero_weight_pct"] = 100 * float(np.mean(sub["n_zero_weight"].to_numpy() / sub["l"].to_numpy()))
        row.update({f"{c}_sd": math.nan for c in cols})
        out.append(row)
    caption = ("Over the SVM+ models with exact LOO (SVM+ retrained without each point): RMSE and mean signed "
               "difference (percentage points) of the span-rule of the equivalent weighted SVM and of SVM+'s LOO rule "
               "against SVM+'s exact LOO error; RMSE of the span-rule against the exact LOO of the equivalent weighted "
               "SVM with its weights held fixed (what the span-rule estimates: leaving a point out of SVM+ moves "
               "every weight); the share (%) of models with no in-bound SV (n* = 0) and of zero weights.")
    return TableResult(name, pd.DataFrame(out), cols, caption, key_columns=list(LUPI_KEYS[:3]))


# ------------------------------------------------------------- Experiment 7 (the solution path, "reference_path")
#: Experiment 7's medians over the data sets of a size (the other columns are a minimum, a maximum, a count)
EXP7_MEDIANS = ("t_path", "t_libsvm", "n_events", "mean_margin_size", "n_resolved", "speedup")


def table_exp7(df: pd.DataFrame, provenance: Iterable[Mapping] = (), name: str = "exp7_path") -> TableResult:
    """Experiment 7 per size n (= l): medians over the data sets of the path's and LIBSVM's CPU seconds, the
    events, the mean |M|, the re-solved breakpoints and the speed-up; the smallest speed-up, the largest
    |f_path - f_LIBSVM| at the re-solved breakpoints (units of 1e-6) and the number of fallbacks."""
    out = []
    for n, sub in df.groupby("n", sort=True):
        row = {"dataset": sub["dataset"].iloc[0], "l": int(n), "n_replicates": int(len(sub))}
        for col in EXP7_MEDIANS:
            row[col] = float(np.median(sub[col].to_numpy(dtype=float)))
        row["speedup_min"] = float(sub["speedup"].min())
        row["max_abs_df_e6"] = 1e6 * float(sub["max_abs_df"].max())
        row["n_fallbacks"] = int(sub["fallback"].sum())
        out.append(row)
    cols = [*EXP7_MEDIANS, "speedup_min", "max_abs_df_e6", "n_fallbacks"]
    data = pd.DataFrame(out)
    for col in cols:
        data[f"{col}_sd"] = math.nan  # medians, extremes and counts: no sd
    caption = ("Four Gaussians, cost-weighted path (group D1's weight from ~0 to 10, D2 at 10), per size l = n: "
               "medians over the data sets (column Replicates) of the CPU seconds (one thread) of the exact solution "
               "path and of LIBSVM re-solving (cold) at every breakpoint (scaled from the re-solved breakpoints where "
               "fewer than all were re-solved), of the path's events and mean |M|, of the re-solved breakpoints and "
               "of the speed-up; the smallest speed-up; the largest |f_path - f_LIBSVM| over the training points at "
               "the re-solved breakpoints (units of 1e-6: LIBSVM's accuracy; up to a constant where no SV is free, so "
               "that b is not unique: LIBSVM takes the middle of the optimal interval, the path an end); the paths "
               "that fell back to LIBSVM.")
    return TableResult(name, data, cols, caption, key_columns=["l"], footer=_environment_footer(provenance))
# ------------------------------------------------------------------ Experiment 9 (sampling trainer, "sampling" rows)
#: value columns of Experiment 9's training table and their formats (tiny violations and differences in
#: scientific notation)
SAMPLING_TRAINING_FORMATS = {
    "t_train": ".2f", "cpu_train": ".2f", "time_over_reference": ".2f", "peak_mem_mb": ".0f", "n_rounds": ".0f",
    "final_sample_size": ".0f", "final_n_distinct": ".0f", "n_sv": ".0f", "n_inbound": ".0f", "n_bounded": ".0f",
    "kkt_violation": ".1e", "decision_diff": ".1e", "n_sv_diff": ".0f", "test_error": ".4f", "load_avg": ".1f",
}


def table_sampling_training(df: pd.DataFrame, name: str = "exp9_training") -> TableResult:
    """Experiment 9: one line per data set, l, C and engine (config order of data sets, l ascending, the
    reference engine first); the time over the reference engine's at the same data set, l and C."""
    out = []
    for ds in _datasets(df):
        sub = df[df["dataset"] == ds]
        for (l, log2_C), rows in sub.groupby(["l", "log2_C"], sort=True):
            ref = rows[rows["model_index"] == rows["model_index"].min()].iloc[0]
            for _, r in rows.sort_values("model_index").iterrows():
                row = {"dataset": ds, "l": int(l), "log2_C": float(log2_C), "engine": r["engine"],
                       "status": r["status"], **{c: float(r[c]) for c in SAMPLING_TRAINING_FORMATS if c in r}}
                row["time_over_reference"] = (float(r["t_train"]) / float(ref["t_train"])
                                              if r["engine"] != ref["engine"] else math.nan)
                out.append(row)
    caption = ("Training from the features on one thread, per data set, training size l, C (log2) and engine "
               "(the reference engine first): wall and CPU seconds, the time over the reference engine's, peak "
               "memory (MiB: resident-set high-water mark over the fit minus the size before), the sampling "
               "engine's rounds and final sample (draws and distinct points), SV counts (n, n*, bounded), the "
               "largest KKT violation of the FULL problem on all l points (in y f), the largest |f - f_ref| on the "
               "test set and the size of the symmetric difference of the SV sets against the reference, the test "
               "error and the machine's load average when the fit started (the machine may be shared). A "
               "precomputed-kernel engine over the memory budget is not run (status).")
    cols = ["t_train", "cpu_train", "time_over_reference", "peak_mem_mb", "n_rounds", "final_sample_size",
            "final_n_distinct", "n_sv", "n_inbound", "n_bounded", "kkt_violation", "decision_diff", "n_sv_diff",
            "test_error", "load_avg"]
    return TableResult(name, pd.DataFrame(out, columns=["dataset", "l", "log2_C", "engine", "status", *cols]), cols,
                       caption, key_columns=["dataset", "l", "log2_C", "engine", "status"],
                       formats=SAMPLING_TRAINING_FORMATS)


def table_sampling_span(df: pd.DataFrame, name: str = "exp9_span") -> TableResult:
    """Experiment 9: the span grid (rows with a span-rule): per C, the span-rule and K-fold CV, their times,
    and in the footer the C each selects with the test error of that model."""
    sub = df[np.isfinite(df["span_rule"].to_numpy(dtype=float))].sort_values("log2_C")
    out = []
    for _, r in sub.iterrows():
        complete = int(r["cv_folds_run"]) == int(r["cv_folds"])
        out.append({
            "dataset": r["dataset"], "l": int(r["l"]), "log2_C": float(r["log2_C"]),
            "cv_time": (f"measured ({int(r['cv_folds'])} folds)" if complete
                        else f"projected from {int(r['cv_folds_run'])} of {int(r['cv_folds'])} folds"),
            **{c: float(r[c]) for c in ("n_sv", "n_inbound", "test_error", "span_rule", "cv_error")},
            "seconds_train": float(r["t_train"]), "seconds_span_rule": float(r["t_span_rule"]),
            "seconds_train_span_rule": float(r["t_train"] + r["t_span_rule"]), "seconds_cv": float(r["t_cv"]),
            "cv_over_span_rule": float(r["t_cv"] / (r["t_train"] + r["t_span_rule"])),
        })
    footer = []
    for rule in ("span_rule", "cv_error"):
        values = sub[rule].to_numpy(dtype=float)
        if len(values) and np.isfinite(values).all():
            best = sub.iloc[int(np.argmin(values))]
            footer.append(f"{label(rule, sub, LABELS)} selects log2 C = {best['log2_C']:g} (test error "
                          f"{best['test_error']:.4f}; ties: the smallest C)")
        elif len(values):
            footer.append(f"{label(rule, sub, LABELS)}: not every fold was run, no selection")
    caption = ("Span-rule selection over C on one large training set: per C, the sampled model's SV counts (n, n*), "
               "test error, span-rule (from its SVs only) and K-fold CV error (LIBSVM evaluating the RBF itself; "
               "'-' where only some folds were run), seconds for training, for the span-rule, for training plus "
               "span-rule and for the K-fold CV (measured, or projected as the mean fold time x K: column cv_time), "
               "and CV time / (training + span-rule). One thread.")
    cols = ["n_sv", "n_inbound", "test_error", "span_rule", "cv_error", "seconds_train", "seconds_span_rule",
            "seconds_train_span_rule", "seconds_cv", "cv_over_span_rule"]
    formats = {"n_sv": ".0f", "n_inbound": ".0f", "test_error": ".4f", "span_rule": ".4f", "cv_error": ".4f"}
    return TableResult(name, pd.DataFrame(out, columns=["dataset", "l", "log2_C", "cv_time", *cols]), cols, caption,
                       footer=footer, key_columns=["dataset", "l", "log2_C", "cv_time"], formats=formats)


_BUILDERS: dict[str, Callable[..., TableResult]] = {
    "selection": lambda df, t, tie_rule, provenance: table_selection(df, tie_rule, name=t.name, title=t.title),
    "rmse": lambda df, t, tie_rule, provenance: table_rmse(df, t.name),
    "counts": lambda df, t, tie_rule, provenance: table_counts(df, t.name),
    "timings": lambda df, t, tie_rule, provenance: table_timings(df, provenance, t.name),
    "loo": lambda df, t, tie_rule, provenance: table_loo(df, t.name),
    "exp6": lambda df, t, tie_rule, provenance: table_exp6(df, t.name),
    "exp10-diameters": lambda df, t, tie_rule, provenance: table_exp10_diameters(df, t.name),
    "exp10-selection": lambda df, t, tie_rule, provenance: table_exp10_selection(df, tie_rule, t.name),
    "exp10-cost": lambda df, t, tie_rule, provenance: table_exp10_cost(df, provenance, t.name),
    "lupi-selection": lambda df, t, tie_rule, provenance: table_lupi_selection(df, tie_rule, t.name),
    "lupi-time": lambda df, t, tie_rule, provenance: table_lupi_time(df, t.name),
    "lupi-loo": lambda df, t, tie_rule, provenance: table_lupi_loo(df, t.name),
    "exp7-path": lambda df, t, tie_rule, provenance: table_exp7(df, provenance, t.name),
    "sampling-training": lambda df, t, tie_rule, provenance: table_sampling_training(df, t.name),
    "sampling-span": lambda df, t, tie_rule, provenance: table_sampling_span(df, t.name),
}


def build_table(name: str, df: pd.DataFrame, tie_rule: str = "worst",
                provenance: Iterable[Mapping] = ()) -> TableResult:
    """The catalog's table ``name`` built from the rows ``df``; its column labels name the CV fold count."""
    spec = catalog.table(name)
    result = _BUILDERS[spec.kind](df, spec, tie_rule, provenance)
    result.labels = {c: label(c, df, LABELS) for c in result.columns}
    return result


# ------------------------------------------------------------------------------------------ writing
def _fmt(mean: float, sd: float, decimals: int, pm: str, spec: str | None = None) -> str:
    if mean is None or not np.isfinite(mean):
        return "-"
    spec = spec or f".{decimals}f"
    s = f"{mean:{spec}}"
    if sd is not None and np.isfinite(sd):
        s += f" {pm} {sd:{spec}}"
    return s


#: headers of the key columns (the others show their name)
_KEY_HEADERS = {"dataset": "Data set", "log2_C": "log2 C", "axis": "Varied", "at": "At", "estimator": "Estimator"}


def _display(t: TableResult, pm: str, latex: bool) -> tuple[list[str], list[list[str]]]:
    headers = []
    for k in t.key_columns:
        headers.append(_KEY_HEADERS.get(k, k))
    if "l" not in t.key_columns:
        headers.append("l")
    show_reps = "n_replicates" in t.data.columns
    if show_reps:
        headers.append(LABELS["n_replicates"])
    for c in t.columns:
        text = (_LATEX_LABELS.get(c) if latex else None) or t.labels.get(c) or LABELS.get(c, c)
        headers.append(_latex_escape(text) if latex and c not in _LATEX_LABELS else text)
    rows = []
    for _, r in t.data.iterrows():
        keys = [LABELS.get(r[k], r[k]) if k == "estimator" else r[k] for k in t.key_columns]
        cells = [(_latex_escape(str(v)) if latex else str(v)) for v in keys]
        if "l" not in t.key_columns:
            cells.append(str(r["l"]))
        if show_reps:
            cells.append(str(int(r["n_replicates"])))
        for c in t.columns:
            cells.append(_fmt(r.get(c), r.get(f"{c}_sd"), t.decimals, pm, t.formats.get(c)))
        rows.append(cells)
    return headers, rows


def _latex_escape(s: str) -> str:
    for a, b in (("\\", r"\textbackslash{}"), ("&", r"\&"), ("%", r"\%"), ("_", r"\_"), ("#", r"\#"),
                 ("$", r"\$"), ("{", r"\{"), ("}", r"\}")):
        s = s.replace(a, b)
    return s


def to_markdown(t: TableResult) -> str:
    from tabulate import tabulate

    headers, rows = _display(t, "±", latex=False)
    body = tabulate(rows, headers=headers, tablefmt="pipe", disable_numparse=True)
    parts = [f"**{t.name}.** {t.caption}", "", body]
    if t.footer:
        parts += [""] + [f"- {line}" for line in t.footer]
    return "\n".join(parts) + "\n"


def to_latex(t: TableResult) -> str:
    headers, rows = _display(t, r"$\pm$", latex=True)
    spec = "l" * len(t.key_columns) + "r" * (len(headers) - len(t.key_columns))
    lines = [
        r"\begin{table}[ht]",
        r"\centering",
        r"\caption{" + _latex_escape(t.caption).replace("+-", r"$\pm$") + "}",
        r"\label{tab:" + t.name.replace("_", "-") + "}",
        r"\begin{tabular}{" + spec + "}",
        r"\toprule",
        " & ".join(headers) + r" \\",
        r"\midrule",
        *[" & ".join(r) + r" \\" for r in rows],
        r"\bottomrule",
        r"\end{tabular}",
    ]
    if t.footer:
        lines.append(r"\par\smallskip\footnotesize " + r" \\ ".join(_latex_escape(f) for f in t.footer))
    lines.append(r"\end{table}")
    return "\n".join(lines) + "\n"


def write_text_atomic(path: str | Path, text: str) -> Path:
    """Write ``text`` to ``path`` atomically: a temporary file in the same folder, fsync, os.replace.
    An interrupted write leaves ``path`` as it was (absent or the previous version) and no temporary."""
    with atomic_write(path, "w", encoding="utf-8", newline="") as fh:
        fh.write(text)
    return path


def write_table(t: TableResult, csv: str | Path, md: str | Path, tex: str | Path) -> None:
    """Write the table as CSV, Markdown and LaTeX, each file atomically."""
    texts = {csv: t.data.to_csv(index=False), md: to_markdown(t), tex: to_latex(t)}
    for path, text in texts.items():
        write_text_atomic(path, text)
