"""The tables of Experiment 9 (the randomized sampling trainer on large training sets, ``sampling`` rows):
training time and memory, and span-rule selection at scale.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..results_schema import label
from .common import LABELS, TableResult, _datasets

__all__ = ["table_exp9_span", "table_exp9_training"]


#: value columns of Experiment 9's training table and their formats (tiny violations and differences in
#: scientific notation)
SAMPLING_TRAINING_FORMATS = {
    "t_train": ".2f", "cpu_train": ".2f", "time_over_reference": ".2f", "peak_mem_mb": ".0f", "n_rounds": ".0f",
    "final_sample_size": ".0f", "final_n_distinct": ".0f", "n_sv": ".0f", "n_inbound": ".0f", "n_bounded": ".0f",
    "kkt_violation": ".1e", "decision_diff": ".1e", "n_sv_diff": ".0f", "test_error": ".4f", "load_avg": ".1f",
}


def table_exp9_training(df: pd.DataFrame, name: str = "exp9_training") -> TableResult:
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
    cols = ["t_train", "cpu_train", "time_over_reference", "peak_mem_mb", "n_rounds", "final_sample_size",
            "final_n_distinct", "n_sv", "n_inbound", "n_bounded", "kkt_violation", "decision_diff", "n_sv_diff",
            "test_error", "load_avg"]
    return TableResult(name, pd.DataFrame(out, columns=["dataset", "l", "log2_C", "engine", "status", *cols]), cols,
                       key_columns=["dataset", "l", "log2_C", "engine", "status"],
                       formats=SAMPLING_TRAINING_FORMATS)


#: the engine whose K-fold CV the span table reports, and whose training time it sets beside the span-rule's
CV_ENGINE = "sklearn-rbf"


def table_exp9_span(df: pd.DataFrame, name: str = "exp9_span") -> TableResult:
    """Experiment 9: the span grid (rows with a span-rule): per C, the span-rule and K-fold CV, their times,
    and in the footer the C each selects with the test error of that model.

    Each time is named for what it measures: the span-rule is computed from the sampling trainer's model, whose
    training time is ``seconds_train_sampling``; the K-fold CV is LIBSVM's (``CV_ENGINE``, evaluating the RBF
    itself), and LIBSVM's training on all l points at the same C (the training table's row) is
    ``seconds_train_libsvm``. ``cv_over_libsvm_span_rule`` compares like with like: LIBSVM's CV against LIBSVM's
    one training plus the span-rule (the two trainers' models agree: the training table's ``decision_diff``)."""
    sub = df[np.isfinite(df["span_rule"].to_numpy(dtype=float))].sort_values("log2_C")
    libsvm = {}
    if "engine" in df:
        ref = df[(df["engine"] == CV_ENGINE) & np.isfinite(df["t_train"].to_numpy(dtype=float))]
        libsvm = {(r["dataset"], int(r["l"]), float(r["log2_C"])): float(r["t_train"]) for _, r in ref.iterrows()}
    out = []
    for _, r in sub.iterrows():
        complete = int(r["cv_folds_run"]) == int(r["cv_folds"])
        t_libsvm = libsvm.get((r["dataset"], int(r["l"]), float(r["log2_C"])), math.nan)
        out.append({
            "dataset": r["dataset"], "l": int(r["l"]), "log2_C": float(r["log2_C"]),
            "cv_time": (f"measured ({int(r['cv_folds'])} folds)" if complete
                        else f"projected from {int(r['cv_folds_run'])} of {int(r['cv_folds'])} folds"),
            **{c: float(r[c]) for c in ("n_sv", "n_inbound", "test_error", "span_rule", "cv_error")},
            "seconds_train_sampling": float(r["t_train"]), "seconds_span_rule": float(r["t_span_rule"]),
            "seconds_train_libsvm": t_libsvm, "seconds_cv": float(r["t_cv"]),
            "cv_over_libsvm_span_rule": float(r["t_cv"]) / (t_libsvm + float(r["t_span_rule"])),
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
    cols = ["n_sv", "n_inbound", "test_error", "span_rule", "cv_error", "seconds_train_sampling", "seconds_span_rule",
            "seconds_train_libsvm", "seconds_cv", "cv_over_libsvm_span_rule"]
    formats = {"n_sv": ".0f", "n_inbound": ".0f", "test_error": ".4f", "span_rule": ".4f", "cv_error": ".4f"}
    return TableResult(name, pd.DataFrame(out, columns=["dataset", "l", "log2_C", "cv_time", *cols]), cols,
                       footer=footer, key_columns=["dataset", "l", "log2_C", "cv_time"], formats=formats)
