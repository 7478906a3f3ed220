"""SVM+'s exact LOO (an Experiment 8 row's ``loo_error`` for SVM+) on a job's grid points: every refit on fresh
reduced systems (the method before) against refits that border one inverse of the full model's KKT system
(``svm_plus.loo.BorderedSystem``), taking turns, one BLAS thread.

For every ``--stride``-th SVM+ grid point of the job (its own ``prepare``: kernels) it trains SVM+ and runs
``svm_plus.leave_one_out`` once per route, recording the process CPU time of each, whether the LOO errors are
equal, the largest difference of a LOO decision value, and whether the refits' active sets agree.

    python benchmarks/bench_svm_plus_loo.py --config config/paper.yaml --job parkinson_speech 1:2 1.0 0 \
        --stride 37

Writes a JSON file (default ``benchmarks/out/svm-plus-loo-<data set>-<ratio>-<fraction>-s<seed>.json``).
"""
from __future__ import annotations

import sys
import time
from pathlib import Path
from unittest import mock

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_lupi_cost  # noqa: E402

from wsvm_span.svm_plus import leave_one_out  # noqa: E402
from wsvm_span.svm_plus import loo as svm_plus_loo  # noqa: E402

ROUTES = ("fresh", "bordered")


def _loo(route: str, model, K, K_priv):
    if route == "bordered":
        return leave_one_out(model, K, K_priv)
    with mock.patch.object(svm_plus_loo.BorderedSystem, "build", return_value=None):
        return leave_one_out(model, K, K_priv)


def measure(job, problem, stride: int) -> dict:
    points = []
    for i, point, K, K_priv, model in bench_lupi_cost.svm_plus_models(job, problem, stride):
        loo, cpu = {}, {}
        for route in (ROUTES if len(points) % 2 == 0 else ROUTES[::-1]):  # taking turns
            c0 = time.process_time()
            loo[route] = _loo(route, model, K, K_priv)
            cpu[route] = time.process_time() - c0
        f, b = loo["fresh"], loo["bordered"]
        points.append({"index": i, "point": point, "solver": model.solver, "n_refits": int(f.points.size),
                       **{f"cpu_s_{r}": cpu[r] for r in ROUTES},
                       **{f"loo_error_{r}": loo[r].error for r in ROUTES},
                       "max_abs_df": float(np.max(np.abs(f.decision_loo - b.decision_loo), initial=0.0)),
                       "same_sets": bool(np.array_equal(f.sets_unchanged, b.sets_unchanged))})
        print(f"  m{i} {point} ({model.solver}): fresh {cpu['fresh']:.3f} s, bordered {cpu['bordered']:.3f} s;"
              f" LOO error {f.error:.4f} / {b.error:.4f}", flush=True)
    total = {r: sum(p[f"cpu_s_{r}"] for p in points) for r in ROUTES}
    exact = [p for p in points if p["solver"].endswith("active-set")]
    summary = {"slot": job.slot, "l": job.n_train, "models": len(points), "cpu_s": total,
               "cpu_ratio_fresh_over_bordered": total["fresh"] / total["bordered"],
               "models_polished": len(exact),
               "cpu_ratio_polished_models": (sum(p["cpu_s_fresh"] for p in exact)
                                             / sum(p["cpu_s_bordered"] for p in exact)) if exact else None,
               "same_loo_error": sum(p["loo_error_fresh"] == p["loo_error_bordered"] for p in points),
               "same_sets": sum(p["same_sets"] for p in points),
               "max_abs_df": max((p["max_abs_df"] for p in points), default=0.0)}
    return {"summary": summary, "points": points}


def main(argv=None) -> int:
    return bench_lupi_cost.svm_plus_main(argv, __doc__, "svm-plus-loo", 37, measure)


if __name__ == "__main__":
    raise SystemExit(main())
