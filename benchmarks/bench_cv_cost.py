"""Cost of K-fold CV per model against the fold trainings it consists of (issue 8).

For a few grid points of one data set, measured in the same run and under one BLAS thread:

- ``fits``: the k fold trainings alone (LIBSVM on the fold kernels, already sliced): the floor;
- ``cv_cached``: ``kfold_cv_error`` with the fold kernels sliced once for the grid (``FoldKernels``);
- ``cv_sliced``: ``kfold_cv_error`` slicing every fold's kernel again for every model (the old way).

Goal: ``cv_cached`` at most 1.5x ``fits`` on mnist_2_9 and ringnorm l = 16384.

``--loose-tol T`` adds the tolerance lever: the same fold trainings at LIBSVM tolerance T (LIBSVM's own
default is 1e-3) against the study's ``svm.tol`` (1e-7), and whether the CV error they give is the same.
``--log2-c LO HI`` places the points (C+ = C-) on another range; the study's grids start at 2^-6, where
LIBSVM is slowest.

    .venv/bin/python benchmarks/bench_cv_cost.py --dataset mnist_2_9
    .venv/bin/python benchmarks/bench_cv_cost.py --dataset ringnorm_d80_l16384 --points 3
    .venv/bin/python benchmarks/bench_cv_cost.py --dataset mnist_2_9 --loose-tol 1e-3 --log2-c -6 10 --points 5
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

import numpy as np  # noqa: E402

import wsvm_span as ws  # noqa: E402
from wsvm_span.data import load_dataset  # noqa: E402
from wsvm_span.engines import DEFAULT_TOL  # noqa: E402
from wsvm_span.utils.environment import single_threaded  # noqa: E402


def fold_fits_s(cache: "ws.FoldKernels", y, C, tol: float) -> float:
    """Seconds of the k fold trainings alone (LIBSVM on the fold kernels already sliced)."""
    t0 = time.perf_counter()
    for _, _, train, K_train in cache.parts:
        ws.fit_svm(K_train, y[train], C[train], tol=tol, check_input=False)
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", default="mnist_2_9")
    parser.add_argument("--points", type=int, default=3, help="grid points (log2 C+ = log2 C-, spread over --log2-c)")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--log2-c", type=float, nargs=2, default=(-2.0, 8.0), metavar=("LO", "HI"),
                        help="range of the points' log2 C+ = log2 C-")
    parser.add_argument("--tol", type=float, default=DEFAULT_TOL, help="the study's LIBSVM tolerance")
    parser.add_argument("--loose-tol", type=float, help="also time the fold trainings at this tolerance")
    parser.add_argument("--no-sliced", action="store_true", help="skip cv_sliced (the old way; slow at large l)")
    parser.add_argument("--mirror", default=str(REPO.parent / "shared" / "data"))
    parser.add_argument("--json", type=Path, help="write the results here")
    args = parser.parse_args()

    split = load_dataset(args.dataset, mirror=args.mirror)
    y = split.y_train
    with single_threaded():
        t0 = time.perf_counter()
        K = ws.rbf_kernel(split.X_train, None, 1.0 / split.d)
        t_kernel = time.perf_counter() - t0
        folds = ws.stratified_folds(y, args.folds, seed=0)
        t0 = time.perf_counter()
        cache = ws.FoldKernels(K, folds)
        t_slice = time.perf_counter() - t0
        rows = []
        for log2c in np.linspace(*args.log2_c, args.points):
            C = ws.class_weights(y, 2.0**log2c, 2.0**log2c)
            fits = fold_fits_s(cache, y, C, args.tol)
            t0 = time.perf_counter()
            e_cached = ws.kfold_cv_error(K, y, C, folds=folds, fold_kernels=cache, check_input=False, tol=args.tol)
            cached = time.perf_counter() - t0
            row = {"log2_C": float(log2c), "fits_s": fits, "cv_cached_s": cached, "cached_over_fits": cached / fits,
                   "cv_error": e_cached}
            if not args.no_sliced:
                t0 = time.perf_counter()
                e_sliced = ws.kfold_cv_error(K, y, C, folds=folds, check_input=False, tol=args.tol)
                sliced = time.perf_counter() - t0
                assert e_cached == e_sliced
                row.update(cv_sliced_s=sliced, sliced_over_fits=sliced / fits)
            if args.loose_tol:
                loose = fold_fits_s(cache, y, C, args.loose_tol)
                e_loose = ws.kfold_cv_error(K, y, C, folds=folds, fold_kernels=cache, check_input=False,
                                            tol=args.loose_tol)
                row.update(loose_fits_s=loose, fits_over_loose_fits=fits / loose, cv_error_loose=e_loose)
            rows.append(row)
            print(json.dumps(rows[-1]), flush=True)
    out = {
        "dataset": args.dataset, "l": int(len(y)), "folds": args.folds, "kernel_s": t_kernel,
        "fold_slicing_once_s": t_slice, "fold_cache_gb": ws.FoldKernels.nbytes(folds) / 2**30,
        "median_cached_over_fits": statistics.median(r["cached_over_fits"] for r in rows),
        "median_sliced_over_fits": (None if args.no_sliced
                                    else statistics.median(r["sliced_over_fits"] for r in rows)),
        "tol": args.tol, "loose_tol": args.loose_tol,
        "fits_s_total": sum(r["fits_s"] for r in rows),
        "loose_fits_s_total": sum(r["loose_fits_s"] for r in rows) if args.loose_tol else None,
        "max_rss_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20,
        "points": rows,
    }
    print(json.dumps({k: v for k, v in out.items() if k != "points"}, indent=2))
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
