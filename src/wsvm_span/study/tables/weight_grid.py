"""The tables of the weight-grid experiments' rows (Experiments 1-6): Tables 2-6, the span-rule against exact
LOO, and Experiment 6's summary.
"""

from __future__ import annotations

import math
from typing import Iterable, Mapping

import numpy as np
import pandas as pd

from ...tie_rules import select_test_error
from ..results_schema import CLASS_TEST_ERRORS
from .common import (BALANCED_SUFFIX, INBOUND_SUFFIX, NO_INBOUND, REPLICATE, RMSE_ESTIMATORS, SELECTED_BALANCED_SUFFIX,
                     SELECTING, TableResult, _balanced, _complete, _datasets, _environment_footer, _inbound, _mean_sd,
                     _replicates, _rmse)

__all__ = ["table_counts", "table_exp6", "table_loo", "table_rmse", "table_selection", "table_timings"]


def table_selection(df: pd.DataFrame, tie_rule: str = "worst", name: str = "table2") -> TableResult:
    """Tables 2 and 3: test error (%) of the model selected by each estimator (:data:`SELECTING`: the span
    bound with the diameter, and beside it the study's radius variant), and the minimum. Where the rows hold the
    per-class test errors, also the balanced test error (their mean) of the model that each of
    :data:`RMSE_ESTIMATORS` selects, ties broken by the same rule on that error, and its minimum: a LOO estimate
    from a class-balanced training set estimates the balanced error (bank_marketing); shown only when some
    data set has them, NaN for a replicate whose rows lack them."""
    out = []
    balanced_cols = [f"{c}{SELECTED_BALANCED_SUFFIX}" for c in (*RMSE_ESTIMATORS, "min_error")]
    for ds in _datasets(df):
        sub = df[df["dataset"] == ds]
        per: dict[str, list[float]] = {c: [] for c in (*SELECTING, "min_error", *balanced_cols)}
        loo_complete = True
        for _, rep in _replicates(sub):
            te = rep["test_error"].to_numpy(dtype=float)
            te_balanced = rep[list(CLASS_TEST_ERRORS)].to_numpy(dtype=float).mean(axis=1)
            balanced = bool(np.all(np.isfinite(te_balanced)))
            for est in SELECTING:
                per[est].append(100 * select_test_error(rep[est].to_numpy(dtype=float), te, tie_rule))
            for est in RMSE_ESTIMATORS:
                per[f"{est}{SELECTED_BALANCED_SUFFIX}"].append(
                    100 * select_test_error(rep[est].to_numpy(dtype=float), te_balanced, tie_rule) if balanced
                    else math.nan)
            per["min_error"].append(100 * float(te.min()))
            per[f"min_error{SELECTED_BALANCED_SUFFIX}"].append(100 * float(te_balanced.min()) if balanced else math.nan)
            loo_complete &= _complete(rep, "loo_error")
        row = {"dataset": ds, "experiment": sub["experiment"].iloc[0], "l": int(sub["l"].iloc[0]),
               "n_models": int(len(sub) // max(1, sub.groupby(REPLICATE).ngroups)),
               "n_replicates": int(sub.groupby(REPLICATE).ngroups), "tie_rule": tie_rule,
               "n_loo": int(np.isfinite(sub["loo_error"].to_numpy(dtype=float)).sum())}
        for col, vals in per.items():
            if col in ("loo_error", f"loo_error{SELECTED_BALANCED_SUFFIX}") and not loo_complete:
                vals = []
            elif col in balanced_cols and any(math.isnan(v) for v in vals):
                vals = []  # a replicate without per-class errors: no mean over the others
            row[col], row[f"{col}_sd"] = _mean_sd(vals)
        out.append(row)
    data = pd.DataFrame(out)
    columns = [*SELECTING, "min_error"]
    if len(data) and np.isfinite(data[balanced_cols].to_numpy(dtype=float)).any():
        columns += balanced_cols
    else:  # rows without per-class test errors: the table they gave before
        data = data.drop(columns=[c for b in balanced_cols for c in (b, f"{b}_sd")], errors="ignore")
    return TableResult(name, data, columns)


def table_rmse(df: pd.DataFrame, name: str = "table4") -> TableResult:
    """Table 4: RMSE (percentage points) between each estimate and the test error, over all models and
    over the models with at least one in-bound SV, and the share of models without one; where the rows hold
    the per-class test errors, also the RMSE over all models against the balanced test error (their mean).

    A model with n* = 0 has an undefined span: the span-rule counts every SV as an error (as
    specified), which can dominate the RMSE over all models; the n* >= 1 columns show the rest. A LOO
    estimate from a class-balanced training set estimates the balanced error, whatever the test set's class
    shares (experiments.md, bank_marketing): the balanced columns compare it with that; they are NaN for a
    replicate whose rows lack the per-class errors (rows written before them), and shown only when some
    data set has them."""
    out = []
    balanced_cols = _balanced(RMSE_ESTIMATORS)
    for ds in _datasets(df):
        sub = df[df["dataset"] == ds]
        per: dict[str, list[float]] = {c: [] for c in (*RMSE_ESTIMATORS, *_inbound(RMSE_ESTIMATORS), NO_INBOUND,
                                                       *balanced_cols)}
        for _, rep in _replicates(sub):
            te = rep["test_error"].to_numpy(dtype=float)
            te_balanced = rep[list(CLASS_TEST_ERRORS)].to_numpy(dtype=float).mean(axis=1)
            some_inbound = rep["n_inbound"].to_numpy() >= 1
            per[NO_INBOUND].append(100 * float(np.mean(~some_inbound)))
            for est in RMSE_ESTIMATORS:
                v = rep[est].to_numpy(dtype=float)
                complete = _complete(rep, est)
                per[est].append(_rmse(v, te) if complete else math.nan)
                per[f"{est}{INBOUND_SUFFIX}"].append(_rmse(v[some_inbound], te[some_inbound]) if complete else math.nan)
                balanced = complete and bool(np.all(np.isfinite(te_balanced)))
                per[f"{est}{BALANCED_SUFFIX}"].append(_rmse(v, te_balanced) if balanced else math.nan)
        row = {"dataset": ds, "experiment": sub["experiment"].iloc[0], "l": int(sub["l"].iloc[0]),
               "n_models": int(len(sub) // max(1, sub.groupby(REPLICATE).ngroups)),
               "n_replicates": int(sub.groupby(REPLICATE).ngroups)}
        for col, vals in per.items():
            row[col], row[f"{col}_sd"] = _mean_sd(vals) if not any(math.isnan(v) for v in vals) else (math.nan, math.nan)
        out.append(row)
    data = pd.DataFrame(out)
    columns = [*RMSE_ESTIMATORS, NO_INBOUND, *_inbound(RMSE_ESTIMATORS)]
    if len(data) and np.isfinite(data[balanced_cols].to_numpy(dtype=float)).any():
        columns += balanced_cols
    else:  # rows without per-class test errors: the table they gave before (issue 26)
        data = data.drop(columns=[c for b in balanced_cols for c in (b, f"{b}_sd")], errors="ignore")
    return TableResult(name, data, columns)


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
    return TableResult(name, pd.DataFrame(out), ["n_empty_lambda", "n_inbound", "n_sv"], decimals=1)


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
    return TableResult(name, pd.DataFrame(out), [*cols, "cv_over_span_rule"],
                       footer=_environment_footer(provenance), decimals=2)


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
    return TableResult(name, pd.DataFrame(out), ["t_span_rule", "t_cv", "t_train", "n_inbound", "n_sv"],
                       key_columns=["d", "l"])


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
    return TableResult(name, pd.DataFrame(out), cols)
