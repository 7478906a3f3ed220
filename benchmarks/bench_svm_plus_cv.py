"""SVM+'s K-fold CV on an Experiment 8 job's grid points: every fold by "auto" (the active-set method from the plain
SVM's sets, the QP route where it fails) against the folds' route chosen by ``svm_plus.selection.fold_solver``
(straight to the QP route where the full model needed it), taking turns, one BLAS thread.

For every ``--stride``-th SVM+ grid point of the job (its own ``prepare``: kernels, folds) it trains the full model,
then runs ``kfold_cv_error`` both ways and records the process CPU time of each and whether the two CV errors are
equal; it also counts, fold by fold, which route each fold's "auto" fit took against the full model's.

    python benchmarks/bench_svm_plus_cv.py --config config/paper.yaml --job w_mixture 1:2 1.0 0 --stride 17

Writes a JSON file (default ``benchmarks/out/svm-plus-cv-<data set>-<ratio>-<fraction>-s<seed>.json``).
"""
from __future__ import annotations

import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_lupi_cost  # noqa: E402

from wsvm_span.study.grid import grid_point, grid_size  # noqa: E402
from wsvm_span.svm_plus import fit_svm_plus, kfold_cv_error  # noqa: E402
from wsvm_span.svm_plus.selection import fold_solver  # noqa: E402
from wsvm_span.utils.environment import single_threaded  # noqa: E402


def _route(model) -> str:
    return "active-set" if model.solver == "active-set" else "qp"


def measure(job, problem, stride: int) -> dict:
    axes, y, folds = job.grids["svm_plus"], problem.y, problem.folds
    points, routes = [], Counter()
    with single_threaded():
        for i in range(0, grid_size(axes), stride):
            pt = grid_point(axes, i)
            K, K_priv = problem.kernels[pt["log2_kernel_scale"]].K, problem.priv_kernels[pt["log2_priv_gamma"]]
            C, gamma = 2.0 ** pt["log2_C"], 2.0 ** pt["log2_gamma_plus"]
            full = fit_svm_plus(K, K_priv, y, C, gamma, check_input=False)
            for fold in np.unique(folds):
                train = np.flatnonzero(folds != fold)
                sub = fit_svm_plus(K[np.ix_(train, train)], K_priv[np.ix_(train, train)], y[train], C, gamma,
                                   check_input=False)
                routes[f"full {_route(full)}, fold {_route(sub)}"] += 1
            cpu, error = {}, {}
            # taking turns: "auto" first on even points, second on odd ones
            for way in (("auto", "chosen") if len(points) % 2 == 0 else ("chosen", "auto")):
                c0 = time.process_time()
                error[way] = kfold_cv_error(K, K_priv, y, C, gamma, folds,
                                            solver="auto" if way == "auto" else fold_solver(full, "auto"))
                cpu[way] = time.process_time() - c0
            points.append({"index": i, "point": pt, "full_route": _route(full), "cpu_s_auto": cpu["auto"],
                           "cpu_s_chosen": cpu["chosen"], "cv_error_auto": error["auto"],
                           "cv_error_chosen": error["chosen"]})
            print(f"  m{i} {pt}: full {_route(full)}, CV auto {cpu['auto']:.3f} s, chosen {cpu['chosen']:.3f} s, "
                  f"errors {error['auto']:.4f} {error['chosen']:.4f}", flush=True)
    auto = sum(p["cpu_s_auto"] for p in points)
    chosen = sum(p["cpu_s_chosen"] for p in points)
    summary = {"points": len(points), "cpu_s_auto": auto, "cpu_s_chosen": chosen, "ratio": auto / chosen,
               "same_cv_error": sum(p["cv_error_auto"] == p["cv_error_chosen"] for p in points),
               "fold_routes_by_auto": dict(routes)}
    return {"summary": summary, "points": points}


def main(argv=None) -> int:
    return bench_lupi_cost.svm_plus_main(argv, __doc__, "svm-plus-cv", 17, measure)


if __name__ == "__main__":
    raise SystemExit(main())
