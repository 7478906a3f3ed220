"""SVM+ benchmark on parkinson_speech (l = 520, 26 features), one thread.

Privileged feature: ``split.X_priv``, the UPDRS of each training recording (1-D, scaled to [0, 1]),
RBF kernel with parameter ``--priv-gamma``. Ordinary kernel: RBF with gamma = 1/d.

Measures, over the grid log2 C in -2..6 x gamma in {0.1, 1, 10} (27 models):
  1. time per SVM+ model: Clarabel (the QP switch, raw interior point) vs the active-set solver
     ("auto": active-set, falling back to the QP route when it cycles) vs LIBSVM on the converted
     weights; agreement of the two SVM+ solutions (decision values, dual objective) and of LIBSVM's;
  2. model selection over the grid: one SVM+ training plus the weighted span-rule of the converted
     model, or plus the SVM+ LOO rule, against 5-fold CV of SVM+ (active-set; and Clarabel unless
     --no-cv-qp): wall time of each and their ratios; test error of the model each rule selects
     (tie rule: worst test error among the minimisers);
  3. on --loo-models grid points: exact LOO of SVM+ (retraining SVM+) and of the converted weighted
     SVM (LIBSVM refits with the weights fixed), against the LOO rule and the span-rule.

Every baseline is measured in the same run. Usage:
    python benchmarks/bench_svm_plus.py [--priv-gamma 1.0] [--loo-models 3] [--no-cv-qp]
Writes benchmarks/out/svm-plus-parkinson_speech.json.
"""
from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np

import wsvm_span as ws
from wsvm_span.data import load_dataset
from wsvm_span.svm_plus import evaluate_svm_plus, fit_svm_plus, kfold_cv_error, to_weighted_svm
from wsvm_span.utils.environment import machine_info, single_threaded

ROOT = Path(__file__).resolve().parents[1]
C_GRID = [2.0**k for k in range(-2, 7)]
GAMMA_GRID = [0.1, 1.0, 10.0]


def dual_objective(m, K, K_priv):
    T = (K_priv + m.ridge * np.eye(m.n_train)) / m.gamma
    return 0.5 * m.alpha @ (K * np.outer(m.y, m.y)) @ m.alpha - m.alpha.sum() + 0.5 * m.alpha_tilde @ T @ m.alpha_tilde


def selected_test_error(rows, key):
    values = np.array([r[key] for r in rows])
    best = values.min()
    return float(best), max(r["test_error"] for r, v in zip(rows, values) if v == best)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--priv-gamma", type=float, default=1.0, help="RBF parameter of the privileged kernel")
    ap.add_argument("--loo-models", type=int, default=3, help="grid points with exact LOO (retraining)")
    ap.add_argument("--no-cv-qp", action="store_true", help="skip 5-fold CV of SVM+ with Clarabel")
    args = ap.parse_args(argv)
    mirror = os.environ.get("WSVM_DATA_MIRROR", str(ROOT.parent / "shared" / "data"))
    split = load_dataset("parkinson_speech", mirror=mirror)
    X, y, X_priv = split.X_train, split.y_train, split.X_priv
    summary = {"dataset": "parkinson_speech", "l": int(y.size), "d": split.d,
               "privileged": "split.X_priv: UPDRS of the training recordings scaled to [0, 1], 1-D, RBF",
               "priv_gamma": args.priv_gamma, "grid_points": len(C_GRID) * len(GAMMA_GRID),
               "machine": machine_info(), "load_average_at_start": os.getloadavg()}
    with single_threaded():
        K = ws.rbf_kernel(X, gamma=split.gamma)
        K_priv = ws.rbf_kernel(X_priv, gamma=args.priv_gamma)
        K_test = ws.rbf_kernel(split.X_test, X, gamma=split.gamma)
        D = ws.enclosing_ball_diameter(K)
        folds = ws.stratified_folds(y, 5, 0)
        fit_svm_plus(K, K_priv, y, 1.0, 1.0)  # warm-up (the first scikit-learn call imports plugins)

        # 1. time per model
        per_model = []
        for C in C_GRID:
            for gamma in GAMMA_GRID:
                fast = fit_svm_plus(K, K_priv, y, C, gamma)
                ref = fit_svm_plus(K, K_priv, y, C, gamma, solver="qp", qp_solver="clarabel", polish=False)
                weighted = to_weighted_svm(fast, K)
                t0 = time.perf_counter()
                libsvm = ws.fit_svm(K, y, weighted.C, tol=1e-7)
                t_libsvm = time.perf_counter() - t0
                per_model.append({
                    "C": C, "gamma": gamma, "t_active_set": fast.fit_time, "t_clarabel": ref.fit_time,
                    "t_libsvm_converted": t_libsvm, "solver": fast.solver, "iterations": fast.iterations,
                    "max_abs_df_vs_clarabel": float(np.abs(fast.decision_train - ref.decision_train).max()),
                    "rel_dobj_vs_clarabel": float(abs(dual_objective(fast, K, K_priv) - dual_objective(ref, K, K_priv))
                                                  / abs(dual_objective(ref, K, K_priv))),
                    # b is not unique without in-bound SVs (LIBSVM takes the middle of its
                    # interval): compare alpha and f - b, and report the b shift apart
                    "max_abs_dalpha_libsvm": float(np.abs(libsvm.alpha - fast.alpha).max()),
                    "max_abs_df_minus_b_libsvm": float(np.abs(libsvm.decision_train - libsvm.b
                                                              - fast.decision_train + fast.b).max()),
                    "b_shift_libsvm": float(libsvm.b - fast.b),
                    "kkt_active_set": fast.kkt_violation, "kkt_clarabel": ref.kkt_violation,
                    "n_sv": int(weighted.support.size), "n_inbound": int(weighted.inbound.size),
                    "n_zero_weight": int(np.count_nonzero(weighted.C <= 1e-300)),
                })
                print({k: (f"{v:.3g}" if isinstance(v, float) else v) for k, v in per_model[-1].items()}, flush=True)
        summary["per_model_median_s"] = {k: float(np.median([r[k] for r in per_model]))
                                         for k in ("t_active_set", "t_clarabel", "t_libsvm_converted")}
        summary["clarabel_over_active_set"] = {
            "median_ratio": float(np.median([r["t_clarabel"] / r["t_active_set"] for r in per_model])),
            "total_ratio": float(sum(r["t_clarabel"] for r in per_model) / sum(r["t_active_set"] for r in per_model))}
        summary["clarabel_over_libsvm_median_ratio"] = float(
            np.median([r["t_clarabel"] / r["t_libsvm_converted"] for r in per_model]))
        summary["active_set_over_libsvm_median_ratio"] = float(
            np.median([r["t_active_set"] / r["t_libsvm_converted"] for r in per_model]))
        summary["fallbacks"] = sum(r["solver"] != "active-set" for r in per_model)
        for key in ("max_abs_df_vs_clarabel", "max_abs_dalpha_libsvm", "max_abs_df_minus_b_libsvm"):
            summary[key] = max(r[key] for r in per_model)
        summary["max_rel_dobj_vs_clarabel"] = max(r["rel_dobj_vs_clarabel"] for r in per_model)
        summary["grid_points_without_inbound_sv"] = sum(r["n_inbound"] == 0 for r in per_model)

        # 2. selection over the grid: one training + span-rule / LOO rule vs 5-fold CV of SVM+
        rows = []
        for C in C_GRID:
            for gamma in GAMMA_GRID:
                ev = evaluate_svm_plus(K, K_priv, y, C, gamma, K_test, split.y_test, folds=folds, D=D)
                rows.append({"C": C, "gamma": gamma, **ev.as_dict()})
        wall = {"train+span_rule": sum(r["t_train"] + r["t_span_rule"] for r in rows),
                "train+span_bound": sum(r["t_train"] + r["t_span_bound"] for r in rows),
                "train+loo_rule": sum(r["t_train"] + r["t_loo_rule"] for r in rows),
                "cv5_active_set": sum(r["t_cv"] for r in rows)}
        if not args.no_cv_qp:
            t0 = time.perf_counter()
            for r in rows:
                kfold_cv_error(K, K_priv, y, r["C"], r["gamma"], folds, solver="qp")
            wall["cv5_clarabel"] = time.perf_counter() - t0
        summary["selection_wall_s"] = wall
        summary["cv5_over_span_rule"] = {k: wall[k] / wall["train+span_rule"] for k in wall if k.startswith("cv5")}
        summary["cv5_over_loo_rule"] = {k: wall[k] / wall["train+loo_rule"] for k in wall if k.startswith("cv5")}
        summary["selected_test_error"] = {
            key: dict(zip(("estimate", "test_error"), selected_test_error(rows, key)))
            for key in ("span_rule", "span_bound", "loo_rule", "cv_error")}
        summary["min_test_error"] = min(r["test_error"] for r in rows)
        summary["plain_svm_C1_test_error"] = ws.test_error(ws.fit_svm(K, y, 1.0), K_test, split.y_test)

        # 3. exact LOO on a few grid points
        loo = []
        for r in rows[:: max(1, len(rows) // max(1, args.loo_models))][: args.loo_models]:
            ev = evaluate_svm_plus(K, K_priv, y, r["C"], r["gamma"], K_test, split.y_test, folds=folds, D=D,
                                   compute_loo=True)
            loo.append({"C": r["C"], "gamma": r["gamma"], **{k: getattr(ev, k) for k in (
                "loo_error", "loo_rule", "loo_converted", "span_rule", "span_bound", "cv_error", "test_error",
                "n_inbound", "n_sv", "n_zero_weight", "t_loo", "t_loo_rule", "t_train")}})
            print(loo[-1], flush=True)
        summary["loo_checks"] = loo
    summary["load_average_at_end"] = os.getloadavg()
    print(json.dumps(summary, indent=2))
    out = ROOT / "benchmarks" / "out"
    out.mkdir(parents=True, exist_ok=True)
    (out / "svm-plus-parkinson_speech.json").write_text(
        json.dumps({"summary": summary, "per_model": per_model, "selection_rows": rows}, indent=1, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
