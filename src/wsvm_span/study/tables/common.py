"""What every table builder shares: :class:`TableResult` (the numbers and how to show them), the display
labels, the tie rules' text for the captions, and the helpers over replicates (mean +- sd, data sets in config order).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from ..results_schema import ESTIMATORS, LABELS as COLUMN_LABELS, STUDY_RADIUS_BOUND

__all__ = ["BALANCED_SUFFIX", "LABELS", "NO_INBOUND", "REPLICATE", "RMSE_ESTIMATORS", "SELECTED_BALANCED_SUFFIX", "SELECTING",
           "TIE_RULE_TEXT", "TableResult"]

RMSE_ESTIMATORS = ("span_rule", "cv_error", "xi_alpha_bound", "loo_error")
#: the selections of Tables 2 and 3: every estimator, with the study's radius variant of the span bound right
#: after the span bound (results_schema.STUDY_RADIUS_BOUND; labelled as not a bound)
SELECTING = (*ESTIMATORS[:ESTIMATORS.index("span_bound") + 1], STUDY_RADIUS_BOUND,
             *ESTIMATORS[ESTIMATORS.index("span_bound") + 1:])
#: the share (%) of models without in-bound SVs (n* = 0), and the suffix of columns restricted to n* >= 1
NO_INBOUND = "no_inbound_pct"
INBOUND_SUFFIX = "_inbound"
#: the suffix of Table 4's columns against the balanced test error (the mean of the two per-class test errors,
#: results_schema.CLASS_TEST_ERRORS) in place of the test error
BALANCED_SUFFIX = "_vs_balanced"
#: the suffix of Tables 2 and 3's columns that give the balanced test error of the model an estimator selects
#: (and the grid's minimum of it), where the rows hold the per-class test errors
SELECTED_BALANCED_SUFFIX = "_balanced"


def _balanced(columns) -> list[str]:
    return [f"{c}{BALANCED_SUFFIX}" for c in columns]


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
    "rmse_span_converted_polished": "RMSE span-rule vs LOO, weights fixed, polished",
    "zero_weight_pct": "Zero weights (%)",
    "unpolished_pct": "Unpolished (%)",
    "speedup_min": "Speed-up vs {engine} cold (min)",
    "speedup_smo_hot_min": "Speed-up vs smo hot-started (min)",
    "max_abs_df": "Max |f_path - f_{engine} cold|",
    "max_abs_df_smo_hot": "Max |f_path - f_smo hot-started|",
    "n_fallbacks": "Fallbacks",
    "n_resolved": "Re-solved breakpoints",
    "time_over_reference": "Time / reference",
    "seconds_train_sampling": "Sampling trainer (s)",
    "seconds_span_rule": "Span-rule (s)",
    "seconds_train_libsvm": "LIBSVM training (s)",
    "seconds_cv": "LIBSVM K-fold CV (s)",
    "cv_over_libsvm_span_rule": "CV / (LIBSVM training + span-rule)",
    **{f"{c}{INBOUND_SUFFIX}": f"{COLUMN_LABELS.get(c, 'RMSE')} (n* >= 1)" for c in (*RMSE_ESTIMATORS, "rmse")},
    **{f"{c}{BALANCED_SUFFIX}": f"{COLUMN_LABELS[c]} vs balanced test error" for c in RMSE_ESTIMATORS},
    **{f"{c}{SELECTED_BALANCED_SUFFIX}": f"{COLUMN_LABELS[c]}, balanced" for c in RMSE_ESTIMATORS},
    f"min_error{SELECTED_BALANCED_SUFFIX}": "Min. balanced error",
}


#: how the captions describe each tie rule
TIE_RULE_TEXT = {
    "worst": "the worst test error among the models attaining an estimator's minimum",
    "best": "the best test error among the models attaining an estimator's minimum",
    "median": ("the lower median of the test errors of the models attaining an estimator's minimum, "
               "i.e. the error of one of those models, never an average of two"),
}
REPLICATE = ["seed", "realization"]


@dataclass
class TableResult:
    """A table: numbers (``data``: one row per data set, ``<col>`` and ``<col>_sd``) plus how to show them; its
    ``caption`` is the catalog entry's (``build_table`` sets it)."""

    name: str
    data: pd.DataFrame
    columns: list[str]  # value columns shown (each with an optional _sd)
    caption: str = ""
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


def _rmse(v: np.ndarray, te: np.ndarray) -> float:
    return 100 * float(np.sqrt(np.mean((v - te) ** 2))) if v.size else math.nan
