"""Cost of K-fold CV per model against the fold trainings it consists of (issue 8).

For a few grid points of one data set, measured in the same run and under one BLAS thread:

- ``fits``: the k fold trainings alone (LIBSVM on the fold kernels, already sliced): the floor;
- ``cv_cached``: ``kfold_cv_error`` with the fold kernels sliced once for the grid (``FoldKernels``);
- ``cv_sliced``: ``kfold_cv_error`` slicing every fold's kernel again for every model (the old way).

Goal: ``cv_cached`` at most 1.5x ``fits`` on mnist_2_9 and ringnorm l = 16384.

    .venv/bin/python benchmarks/bench_cv_cost.py --dataset mnist_2_9
    .venv/bin/python benchmarks/bench_cv_cost.py --dataset ringnorm_d80_l16384 --points 3
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
from wsvm_span.utils.environment import single_threaded  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", default="mnist_2_9")
    parser.add_argument("--points", type=int, default=3, help="grid points (log2 C+ = log2 C- in -2..8)")
    parser.add_argument("--folds", type=int, default=5)
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
        for log2c in np.linspace(-2, 8, args.points):
            C = ws.class_weights(y, 2.0**log2c, 2.0**log2c)
            t0 = time.perf_counter()
            for _, _, train, K_train in cache.parts:
                ws.fit_svm(K_train, y[train], C[train], check_input=False)
            fits = time.perf_counter() - t0
            t0 = time.perf_counter()
            e_cached = ws.kfold_cv_error(K, y, C, folds=folds, fold_kernels=cache, check_input=False)
            cached = time.perf_counter() - t0
            t0 = time.perf_counter()
            e_sliced = ws.kfold_cv_error(K, y, C, folds=folds, check_input=False)
            sliced = time.perf_counter() - t0
            assert e_cached == e_sliced
            rows.append({"log2_C": float(log2c), "fits_s": fits, "cv_cached_s": cached, "cv_sliced_s": sliced,
                         "cached_over_fits": cached / fits, "sliced_over_fits": sliced / fits, "cv_error": e_cached})
            print(json.dumps(rows[-1]), flush=True)
    out = {
        "dataset": args.dataset, "l": int(len(y)), "folds": args.folds, "kernel_s": t_kernel,
        "fold_slicing_once_s": t_slice, "fold_cache_gb": ws.FoldKernels.nbytes(folds) / 2**30,
        "median_cached_over_fits": statistics.median(r["cached_over_fits"] for r in rows),
        "median_sliced_over_fits": statistics.median(r["sliced_over_fits"] for r in rows),
        "max_rss_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20,
        "points": rows,
    }
    print(json.dumps({k: v for k, v in out.items() if k != "points"}, indent=2))
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
