"""SVM+'s K-fold CV on an Experiment 8 job's grid points: every fold trained cold by the route that was the default
before issue 42 (``bench_lupi_cost.previous_default``: the active-set method from the plain SVM's sets, the QP route
where it fails) against ``kfold_cv_error(..., model=full)`` (the default route, each fold warm-started from the full
model's solution), taking turns, one BLAS thread.

For every ``--stride``-th SVM+ grid point of the job (its own ``prepare``: kernels, folds) it trains the full model
by the default route, then the CV both ways, and records the process CPU time of each, both CV errors and how many
of the warm-started folds the QP route finished.

    python benchmarks/bench_svm_plus_cv.py --config config/paper.yaml --job bank_marketing 2:1 1.0 8 --stride 17

Writes a JSON file (default ``benchmarks/out/svm-plus-cv-<data set>-<ratio>-<fraction>-s<seed>.json``).
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_lupi_cost  # noqa: E402

from wsvm_span.study.grid import grid_point, grid_size  # noqa: E402
from wsvm_span.svm_plus import fit_svm_plus, kfold_cv_error  # noqa: E402
from wsvm_span.utils.environment import single_threaded  # noqa: E402

WAYS = ("previous", "warm")


def previous_cv_error(K, K_priv, y, C, gamma, folds) -> float:
    errors = 0
    for fold in np.unique(folds):
        train, held = np.flatnonzero(folds != fold), np.flatnonzero(folds == fold)
        model = bench_lupi_cost.previous_default(K[np.ix_(train, train)], K_priv[np.ix_(train, train)], y[train], C,
                                                 gamma)
        errors += int(np.sum(-y[held] * model.decision_function(K[np.ix_(held, train)]) >= 0))
    return errors / y.size


def measure(job, problem, stride: int) -> dict:
    axes, y, folds = job.grids["svm_plus"], problem.y, problem.folds
    points = []
    with single_threaded():
        for i in range(0, grid_size(axes), stride):
            pt = grid_point(axes, i)
            K, K_priv = problem.kernels[pt["log2_kernel_scale"]].K, problem.priv_kernels[pt["log2_priv_gamma"]]
            C, gamma = 2.0 ** pt["log2_C"], 2.0 ** pt["log2_gamma_plus"]
            full = fit_svm_plus(K, K_priv, y, C, gamma, check_input=False)
            cpu, error = {}, {}
            for way in (WAYS if len(points) % 2 == 0 else WAYS[::-1]):  # taking turns
                c0 = time.process_time()
                error[way] = (previous_cv_error(K, K_priv, y, C, gamma, folds) if way == "previous"
                              else kfold_cv_error(K, K_priv, y, C, gamma, folds, model=full))
                cpu[way] = time.process_time() - c0
            points.append({"index": i, "point": pt, "full_solver": full.solver,
                           **{f"cpu_s_{w}": cpu[w] for w in WAYS}, **{f"cv_error_{w}": error[w] for w in WAYS}})
            print(f"  m{i} {pt}: previous {cpu['previous']:.3f} s, warm {cpu['warm']:.3f} s, "
                  f"CV errors {error['previous']:.4f} {error['warm']:.4f}", flush=True)
    total = {w: sum(p[f"cpu_s_{w}"] for p in points) for w in WAYS}
    summary = {"points": len(points), "cpu_s": total, "ratio_previous_over_warm": total["previous"] / total["warm"],
               "same_cv_error": sum(p["cv_error_previous"] == p["cv_error_warm"] for p in points)}
    return {"summary": summary, "points": points}


def main(argv=None) -> int:
    return bench_lupi_cost.svm_plus_main(argv, __doc__, "svm-plus-cv", 17, measure)


if __name__ == "__main__":
    raise SystemExit(main())
