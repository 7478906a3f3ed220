"""Core-library benchmark: span-rule and span bound against 5-fold CV and training.

One run measures, on a sub-grid of the class-weight grid of Experiment 1 and one thread:
  * time(span-rule) / time(5-fold CV) and / time(one training)   (per model, median)
  * time(span bound) / time(5-fold CV)
  * closed-form span-rule vs the per-SV QP formulation of the original method (speed-up,
    max |S_p^2 difference|, on a few models)
  * training on the precomputed-kernel cache vs LIBSVM computing its own RBF kernel
  * engine comparison (scikit-learn's LIBSVM vs libsvm-official) on one model
  * peak resident memory

Usage:
  python benchmarks/bench_core.py --dataset splice --grid 9
  python benchmarks/bench_core.py --dataset mnist_2_9 --grid 3 --qp-models 1
Writes a JSON summary next to the printout (benchmarks/out/core-<dataset>.json).
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from sklearn.svm import SVC  # noqa: E402

import wsvm_span as ws  # noqa: E402
from wsvm_span.span.estimates import span_rule_errors  # noqa: E402
from wsvm_span.span.geometry import affine_span_qp  # noqa: E402
from wsvm_span.utils.environment import single_threaded  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def load(name: str, seed: int):
    """(X_train, y_train, d, source) from the data layer, or a synthetic stand-in."""
    if name.startswith("synthetic"):
        _, l, d = name.split("_")
        rng = np.random.default_rng(seed)
        X = rng.random((int(l), int(d)))
        y = np.where(X[:, : int(d) // 2].sum(1) + 0.3 * rng.standard_normal(int(l)) > int(d) / 4, 1.0, -1.0)
        return X, y, int(d), "synthetic"
    from wsvm_span.data import load_dataset

    mirror = os.environ.get("WSVM_DATA_MIRROR", str(ROOT.parent / "shared" / "data"))
    split = load_dataset(name, seed=seed, mirror=mirror)
    return split.X_train, split.y_train, split.d, "real"


def peak_rss_gib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dataset", default="splice")
    ap.add_argument("--grid", type=int, default=9, help="k x k sub-grid of log2 C+/C- in [-6, 10]")
    ap.add_argument("--qp-models", type=int, default=3, help="models timed with the per-SV QP method")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)

    with single_threaded():
        X, y, d, source = load(args.dataset, args.seed)
        l = X.shape[0]
        gamma = 1.0 / d
        t0 = time.perf_counter()
        cache = ws.KernelCache(X, gamma)
        K = cache.train
        t_kernel = time.perf_counter() - t0
        t0 = time.perf_counter()
        D = cache.diameter
        t_diameter = time.perf_counter() - t0
        folds = ws.stratified_folds(y, 5, seed=args.seed)
        print(f"{args.dataset} ({source}): l={l}, d={d}, gamma=1/{d}; kernel {t_kernel:.2f}s, "
              f"D={D:.4f} in {t_diameter:.2f}s", flush=True)

        logs = np.linspace(-6, 10, args.grid)
        rows = []
        for lp in logs:
            for lm in logs:
                C = ws.class_weights(y, 2.0**lp, 2.0**lm)
                model = ws.fit_svm(K, y, C)
                t_train = model.fit_time
                t0 = time.perf_counter()
                ws.span_rule(model, K)
                t_rule = time.perf_counter() - t0
                spans = ws.analyse_spans(model, K, D=D)
                t0 = time.perf_counter()
                ws.kfold_cv_error(K, y, C, folds=folds)
                t_cv = time.perf_counter() - t0
                rows.append(dict(log2_C_plus=lp, log2_C_minus=lm, t_train=t_train, t_span_rule=t_rule,
                                 t_span_bound=spans.t_span_bound, t_cv=t_cv, n_sv=spans.n_sv,
                                 n_inbound=spans.n_inbound, n_qp=spans.n_qp, n_empty_lambda=spans.n_empty_lambda))
                print(f"  log2C+={lp:6.2f} log2C-={lm:6.2f} n={spans.n_sv:5d} n*={spans.n_inbound:5d} "
                      f"train={t_train:.3f}s rule={t_rule:.4f}s bound={spans.t_span_bound:.3f}s "
                      f"(qp {spans.n_qp}) cv={t_cv:.3f}s", flush=True)

        med = lambda key: float(np.median([r[key] for r in rows]))  # noqa: E731
        ratio = lambda a, b: float(np.median([r[a] / r[b] for r in rows]))  # noqa: E731
        summary = {
            "dataset": args.dataset, "source": source, "l": l, "d": d, "grid": f"{args.grid}x{args.grid}",
            "median_t_train": med("t_train"), "median_t_span_rule": med("t_span_rule"),
            "median_t_span_bound": med("t_span_bound"), "median_t_cv5": med("t_cv"),
            "median_ratio_rule_over_cv": ratio("t_span_rule", "t_cv"),
            "median_ratio_rule_over_train": ratio("t_span_rule", "t_train"),
            "median_ratio_bound_over_cv": ratio("t_span_bound", "t_cv"),
            "t_kernel": t_kernel, "t_diameter": t_diameter,
        }

        # closed form vs the original per-SV QP formulation, on models spread over the grid
        picks = np.linspace(0, len(rows) - 1, args.qp_models).round().astype(int) if args.qp_models else []
        speedups, maxdiff, reldiff = [], 0.0, 0.0
        for i in picks:
            r = rows[i]
            C = ws.class_weights(y, 2.0 ** r["log2_C_plus"], 2.0 ** r["log2_C_minus"])
            model = ws.fit_svm(K, y, C)
            if model.inbound.size < 2:
                continue
            t0 = time.perf_counter()
            closed, _ = span_rule_errors(model, K)
            t_closed = time.perf_counter() - t0
            t0 = time.perf_counter()
            qp = np.array([affine_span_qp(model, K, p, solver="clarabel").objective for p in model.support])
            t_qp = time.perf_counter() - t0
            fin = np.isfinite(closed) & np.isfinite(qp)
            maxdiff = max(maxdiff, float(np.max(np.abs(closed[fin] - qp[fin]), initial=0.0)))
            big = fin & (qp > 1e-6)  # relative differences of S_p^2 ~ 0 (duplicates) are noise
            reldiff = max(reldiff, float(np.max(np.abs(closed[big] - qp[big]) / qp[big], initial=0.0)))
            speedups.append(t_qp / t_closed)
            print(f"  per-SV QP vs closed form (n={model.support.size}): {t_qp:.2f}s vs {t_closed:.4f}s", flush=True)
        summary["qp_vs_closed_speedup_median"] = float(np.median(speedups)) if speedups else None
        summary["qp_vs_closed_max_abs_diff_S2"] = maxdiff
        summary["qp_vs_closed_max_rel_diff_S2"] = reldiff

        # precomputed-kernel training vs LIBSVM evaluating the RBF kernel itself (same model)
        r = rows[len(rows) // 2]
        C = ws.class_weights(y, 2.0 ** r["log2_C_plus"], 2.0 ** r["log2_C_minus"])
        t0 = time.perf_counter()
        SVC(C=1.0, kernel="rbf", gamma=gamma, tol=1e-7).fit(X, y, sample_weight=C)
        t_own = time.perf_counter() - t0
        t_pre = ws.fit_svm(K, y, C).fit_time
        summary["train_own_rbf_over_precomputed"] = t_own / t_pre
        summary["train_own_rbf_s"] = t_own
        summary["train_precomputed_s"] = t_pre
        if l <= 5000:
            t_lib = ws.fit_svm(K, y, C, engine="libsvm").fit_time
            summary["train_libsvm_official_over_sklearn"] = t_lib / t_pre
        summary["peak_rss_gib"] = peak_rss_gib()

    print(json.dumps(summary, indent=2))
    out = ROOT / "benchmarks" / "out"
    out.mkdir(parents=True, exist_ok=True)
    (out / f"core-{args.dataset}.json").write_text(json.dumps({"summary": summary, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
