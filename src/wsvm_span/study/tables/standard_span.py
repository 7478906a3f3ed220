"""The tables of Experiment 10 (the standard SVM's span results, ``standard_span`` rows): span against
diameters, model selection along each hyperparameter, cost.
"""

from __future__ import annotations

import math
from typing import Iterable, Mapping

import numpy as np
import pandas as pd

from ...tie_rules import TIE_ATOL, TIE_RTOL, select_test_error
from ..results_schema import STANDARD_HYPERPARAMETERS, STANDARD_SIZES
from .common import (NO_INBOUND, TableResult, _complete, _datasets, _environment_footer, _mean_sd,
                     _replicates, _rmse)

__all__ = ["STANDARD_ESTIMATORS", "curve_slice", "table_exp10_cost", "table_exp10_diameters",
           "table_exp10_selection", "varied_axes"]


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
    cols = [*STANDARD_SIZES, "s_over_d_sv", "s_within_d_sv_pct", "n_inbound", "n_sv"]
    return TableResult(name, pd.DataFrame(out), cols, decimals=3,
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
    cols = ["rmse_curve", "rmse_models", NO_INBOUND, "rmse_curve_inbound", "argmin", "argmin_test", "argmin_diff",
            "selected_test_error", "min_error"]
    return TableResult(name, pd.DataFrame(out), cols, key_columns=["dataset", "axis", "at", "estimator"])


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
    return TableResult(name, pd.DataFrame(out), [*cols, "n_sv", "loo_over_span_rule", "loo_over_train"],
                       footer=_environment_footer(provenance))
