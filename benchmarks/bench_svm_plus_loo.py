"""SVM+'s exact LOO (an Experiment 8 row's ``loo_error`` for SVM+) on a job's grid points: the refits as they were
before issue 42 (the full model by ``bench_lupi_cost.previous_default``; each refit by the primal-dual active-set
method from its active sets, bordering one inverse of its KKT system where that pays, on fresh reduced systems
where not, and the QP route where the method fails) against ``svm_plus.leave_one_out`` on the default route's model
(the refits on the model's own sets minus the point from one inverse where they pass the KKT check, the others by
the same bordered iterations, then the default route warm-started from the full solution without the point), taking
turns, one BLAS thread.

For every ``--stride``-th SVM+ grid point of the job (its own ``prepare``: kernels) it records the process CPU time
of each way (the full model's training included), both LOO errors and the largest difference of a LOO decision
value.

    python benchmarks/bench_svm_plus_loo.py --config config/paper.yaml --job bank_marketing 2:1 1.0 8 --stride 37

Writes a JSON file (default ``benchmarks/out/svm-plus-loo-<data set>-<ratio>-<fraction>-s<seed>.json``).
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_lupi_cost  # noqa: E402

from wsvm_span.study.grid import grid_point, grid_size  # noqa: E402
from wsvm_span.svm_plus import ActiveSetFailure, fit_svm_plus, leave_one_out  # noqa: E402
from wsvm_span.svm_plus import loo as svm_plus_loo  # noqa: E402
from wsvm_span.svm_plus.solver import ACTIVE_SET, SVMPlusProblem  # noqa: E402
from wsvm_span.utils.environment import single_threaded  # noqa: E402

WAYS = ("previous", "warm")


def previous_leave_one_out(K, K_priv, y, C, gamma):
    """(LOO decision values, error) as the exact LOO computed them before issue 42."""
    model = bench_lupi_cost.previous_default(K, K_priv, y, C, gamma)
    Z, B = svm_plus_loo.active_sets(model)
    points = svm_plus_loo._points(model)
    bordered = (svm_plus_loo.BorderedSystem.build(SVMPlusProblem.build(K, K_priv, y, C, gamma), Z, B)
                if model.solver.endswith(ACTIVE_SET) and svm_plus_loo.BorderedSystem.pays(Z, B, points.size)
                else None)
    f = np.empty(points.size)
    for t, p in enumerate(points):
        rest = np.delete(np.arange(y.size), p)
        sub = None
        if bordered is not None:
            problem, rest = bordered.without(p)

            def solve_on_sets(Z_sub, B_sub):
                solved = bordered.solve(p, rest, Z_sub, B_sub)
                return problem.solve_on_sets(Z_sub, B_sub) if solved is None else solved

            try:
                sub = problem.active_set(Z[rest], B[rest], ACTIVE_SET, solve_on_sets=solve_on_sets)
            except ActiveSetFailure:
                pass
        if sub is None:
            problem = SVMPlusProblem.build(K[np.ix_(rest, rest)], K_priv[np.ix_(rest, rest)], y[rest], C, gamma)
            try:
                sub = problem.active_set(Z[rest], B[rest], ACTIVE_SET)
            except ActiveSetFailure:
                sub = problem.qp("auto", True, prefix=f"{ACTIVE_SET}->")
        f[t] = float(K[p, rest] @ (sub.y * sub.alpha) + sub.b)
    return points, f, float(np.sum(-y[points] * f >= 0)) / y.size


def warm_leave_one_out(K, K_priv, y, C, gamma):
    loo = leave_one_out(fit_svm_plus(K, K_priv, y, C, gamma, check_input=False), K, K_priv)
    return loo.points, loo.decision_loo, loo.error


def measure(job, problem, stride: int) -> dict:
    axes, y = job.grids["svm_plus"], problem.y
    points = []
    with single_threaded():
        for i in range(0, grid_size(axes), stride):
            pt = grid_point(axes, i)
            K, K_priv = problem.kernels[pt["log2_kernel_scale"]].K, problem.priv_kernels[pt["log2_priv_gamma"]]
            C, gamma = 2.0 ** pt["log2_C"], 2.0 ** pt["log2_gamma_plus"]
            out, cpu = {}, {}
            for way in (WAYS if len(points) % 2 == 0 else WAYS[::-1]):  # taking turns
                c0 = time.process_time()
                out[way] = (previous_leave_one_out if way == "previous" else warm_leave_one_out)(K, K_priv, y, C, gamma)
                cpu[way] = time.process_time() - c0
            same_points = np.array_equal(out["previous"][0], out["warm"][0])
            df = float(np.max(np.abs(out["previous"][1] - out["warm"][1]), initial=0.0)) if same_points else None
            points.append({"index": i, "point": pt, **{f"cpu_s_{w}": cpu[w] for w in WAYS},
                           **{f"loo_error_{w}": out[w][2] for w in WAYS}, "same_points": same_points,
                           "max_abs_df": df})
            print(f"  m{i} {pt}: previous {cpu['previous']:.3f} s, warm {cpu['warm']:.3f} s; LOO error "
                  f"{out['previous'][2]:.4f} / {out['warm'][2]:.4f}", flush=True)
    total = {w: sum(p[f"cpu_s_{w}"] for p in points) for w in WAYS}
    summary = {"slot": job.slot, "l": job.n_train, "models": len(points), "cpu_s": total,
               "ratio_previous_over_warm": total["previous"] / total["warm"],
               "same_loo_error": sum(p["loo_error_previous"] == p["loo_error_warm"] for p in points),
               "max_abs_df": max((p["max_abs_df"] for p in points if p["max_abs_df"] is not None), default=0.0)}
    return {"summary": summary, "points": points}


def main(argv=None) -> int:
    return bench_lupi_cost.svm_plus_main(argv, __doc__, "svm-plus-loo", 37, measure)


if __name__ == "__main__":
    raise SystemExit(main())
