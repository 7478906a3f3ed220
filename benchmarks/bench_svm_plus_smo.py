"""The SVM+ decomposition solver (``fit_svm_plus(..., solver="smo")``) against the route the study used before
issue 42 (``bench_lupi_cost.previous_default``: the active-set method, falling back to the QP route and its polish)
or, with ``--baseline qp``, the QP route alone (polished), on an Experiment 8 job's own SVM+ problems: every
``--stride``-th point of the job's SVM+ grid (its kernels from the job's ``prepare``), one BLAS thread, both routes
on each problem taking turns (the baseline first on even problems, second on odd ones), CPU seconds
(``time.process_time``) of the training alone.

Per problem it records both routes' CPU time and solver names, the "smo" route's iterations (the active-set
method's where it polished, the decomposition solver's where not), the dual objectives of both solutions and of
Clarabel's (the QP of svm-plus.md assembled here at Clarabel's own tolerance, 1e-10: the oracle), each solution's
largest KKT violation recomputed from the kernels, and the largest difference of their training decision values.
Summary: total, median and largest CPU of each route, the ratio (baseline / smo), how many problems each route
solved exactly (KKT violation at most ``KKT_TOL`` and objective within ``OBJECTIVE_RTOL`` of Clarabel's, where
Clarabel solved the QP: ``no_oracle`` counts those it did not), and the objective differences.

    .venv/bin/python benchmarks/bench_svm_plus_smo.py --config config/paper.yaml --job bank_marketing 2:1 1.0 8 --stride 7
    .venv/bin/python benchmarks/bench_svm_plus_smo.py --config config/paper.yaml --job bank_marketing 2:1 1.0 8 --stride 7 \\
        --tol 1e-2

``--warm-from AXIS`` (log2_C, log2_gamma_plus): the "smo" route gets the solution of the problem's predecessor on
that axis of the grid (the next lower value, the rest of the point the same; solved first, untimed, by the "smo"
route) as its ``warm_start``, as a sweep along that axis would; a point with no predecessor is solved from scratch.

    .venv/bin/python benchmarks/bench_svm_plus_smo.py --config config/paper.yaml --job bank_marketing 2:1 1.0 8 --stride 7 \\
        --warm-from log2_C

Writes a JSON file (default ``benchmarks/out/svm-plus-smo-<data set>-<ratio>-<fraction>-s<seed>.json``).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_lupi_cost  # noqa: E402

from wsvm_span.study import config as sc  # noqa: E402
from wsvm_span.study.experiments import lupi  # noqa: E402
from wsvm_span.study.grid import grid_point, grid_size  # noqa: E402
from wsvm_span.svm_plus import fit_svm_plus  # noqa: E402
from wsvm_span.solvers.qp import solve_qp  # noqa: E402
from wsvm_span.svm_plus.solver import KKT_TOL, SMO, SMO_TOL, SVMPlusProblem  # noqa: E402
from wsvm_span.utils.environment import single_threaded  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
#: agreement with Clarabel's objective that counts as exact (issue 42's "relative 1e-6")
OBJECTIVE_RTOL = 1e-6


def dual_objective(problem: SVMPlusProblem, model) -> float:
    a, at = model.alpha, model.alpha_tilde
    return float(0.5 * a @ problem.Q @ a - a.sum() + 0.5 * at @ problem.T @ at)


def clarabel_objective(problem: SVMPlusProblem) -> float:
    """The minimum of the dual by Clarabel at its default tolerance, the QP of svm-plus.md in x = [a; a~] / C."""
    l, C = problem.y.size, problem.C
    P = np.zeros((2 * l, 2 * l))
    P[:l, :l], P[l:, l:] = problem.Q, problem.T
    q = np.concatenate([-np.ones(l) / C, np.zeros(l)])
    A_eq = np.zeros((2, 2 * l))
    A_eq[0, :l], A_eq[1, l:] = problem.y, 1.0
    lb = np.concatenate([np.zeros(l), np.full(l, -np.inf)])
    res = solve_qp(P, q, A_eq, np.zeros(2), lb=lb, solver="clarabel", G=np.hstack([np.eye(l), -np.eye(l)]),
                   h=np.ones(l))
    return C**2 * (0.5 * res.x @ P @ res.x + q @ res.x) if res.status == "optimal" else np.nan


def kkt_violation(problem: SVMPlusProblem, model) -> float:
    """svm-plus.md's KKT conditions recomputed from the kernels (not the model's own decision values): a, beta and
    the complementarity products relative to C, mu and xi in margin units, the equality constraints relative to C."""
    a, at, y, C = model.alpha, model.alpha_tilde, problem.y, problem.C
    beta = C + at - a
    xi = problem.T @ at + model.b_tilde
    mu = problem.Q @ a + model.b * y - 1.0 + xi
    return float(max(-a.min() / C, -beta.min() / C, -xi.min(), -mu.min(), np.abs(a * mu).max() / C,
                     np.abs(beta * xi).max() / C, abs(y @ a) / C, abs(at.sum()) / C))


def timed(**kwargs):
    c0 = time.process_time()
    model = fit_svm_plus(**kwargs)
    return model, time.process_time() - c0


#: the routes ``--baseline`` names: the default before issue 42, or the QP route alone (polished)
BASELINES = {"previous": lambda a: bench_lupi_cost.previous_default(a["K"], a["K_priv"], a["y"], a["C"], a["gamma"]),
             "qp": lambda a: fit_svm_plus(**a, solver="qp")}


def timed_baseline(baseline: str, args):
    c0 = time.process_time()
    model = BASELINES[baseline](args)
    return model, time.process_time() - c0


def problem_args(problem, point) -> dict:
    """``fit_svm_plus``'s arguments for one grid point of the job's problem."""
    return dict(K=problem.kernels[point["log2_kernel_scale"]].K, K_priv=problem.priv_kernels[point["log2_priv_gamma"]],
                y=problem.y, C=2.0 ** point["log2_C"], gamma=2.0 ** point["log2_gamma_plus"], check_input=False)


def measure(job, problem, stride: int, tol: float, warm_from: str | None = None,
            baseline: str = "previous") -> dict:
    axes = job.grids["svm_plus"]
    rows = []
    with single_threaded():
        for n, i in enumerate(range(0, grid_size(axes), stride)):
            point = grid_point(axes, i)
            args = problem_args(problem, point)
            K, K_priv, C, gamma = args["K"], args["K_priv"], args["C"], args["gamma"]
            warm = {}
            if warm_from is not None:
                values = list(axes[warm_from])
                if values.index(point[warm_from]) > 0:
                    previous = {**point, warm_from: values[values.index(point[warm_from]) - 1]}
                    warm["warm_start"] = fit_svm_plus(**problem_args(problem, previous), solver=SMO, tol=tol)
            if n % 2 == 0:
                base, t_base = timed_baseline(baseline, args)
                smo, t_smo = timed(**args, solver=SMO, tol=tol, **warm)
            else:
                smo, t_smo = timed(**args, solver=SMO, tol=tol, **warm)
                base, t_base = timed_baseline(baseline, args)
            qp = SVMPlusProblem.build(K, K_priv, problem.y, C, gamma)
            oracle = clarabel_objective(qp)
            rows.append({"index": i, "point": point, "warm_started": bool(warm), "baseline_cpu_s": t_base,
                         "smo_cpu_s": t_smo,
                         "baseline_solver": base.solver, "smo_solver": smo.solver, "smo_iterations": smo.iterations,
                         "clarabel_objective": oracle,
                         "baseline_objective": dual_objective(qp, base), "smo_objective": dual_objective(qp, smo),
                         "baseline_kkt": kkt_violation(qp, base), "smo_kkt": kkt_violation(qp, smo),
                         "max_decision_diff": float(np.abs(base.decision_train - smo.decision_train).max())})
            r = rows[-1]
            for route in ("baseline", "smo"):
                r[f"{route}_objective_rel_gap"] = (r[f"{route}_objective"] - oracle) / abs(oracle)
                # where Clarabel did not solve the QP (status not optimal: no oracle), the KKT check alone decides
                r[f"{route}_exact"] = bool(r[f"{route}_kkt"] <= KKT_TOL
                                           and not abs(r[f"{route}_objective_rel_gap"]) > OBJECTIVE_RTOL)
            print(f"  m{i} C=2^{point['log2_C']:g} gamma+=2^{point['log2_gamma_plus']:g}: baseline {t_base * 1e3:.1f} ms "
                  f"({base.solver}, KKT {r['baseline_kkt']:.1e}), smo {t_smo * 1e3:.1f} ms ({smo.solver}, "
                  f"{smo.iterations} iterations, KKT {r['smo_kkt']:.1e}), objective - Clarabel's (relative): baseline "
                  f"{r['baseline_objective_rel_gap']:+.2g}, smo {r['smo_objective_rel_gap']:+.2g}", flush=True)
    summary = {"problems": len(rows), "tol": tol, "warm_from": warm_from,
               "no_oracle": sum(bool(np.isnan(r["clarabel_objective"])) for r in rows),
               "warm_started": sum(r["warm_started"] for r in rows)}
    for route in ("baseline", "smo"):
        t = np.array([r[f"{route}_cpu_s"] for r in rows])
        gap = np.array([r[f"{route}_objective_rel_gap"] for r in rows])
        summary.update({f"{route}_cpu_s_total": float(t.sum()), f"{route}_cpu_s_median": float(np.median(t)),
                        f"{route}_cpu_s_max": float(t.max()),
                        f"{route}_exact": sum(r[f"{route}_exact"] for r in rows),
                        f"{route}_kkt_max": max(r[f"{route}_kkt"] for r in rows),
                        f"{route}_objective_rel_gap_max": float(np.nanmax(np.abs(gap)))})
    base_t = np.array([r["baseline_cpu_s"] for r in rows])
    smo_t = np.array([r["smo_cpu_s"] for r in rows])
    summary.update({"ratio_total": float(base_t.sum() / smo_t.sum()), "smo_faster_on": int(np.sum(smo_t < base_t)),
                    "smo_polished": sum(r["smo_solver"] != SMO for r in rows),
                    "smo_iterations_median": float(np.median([r["smo_iterations"] for r in rows])),
                    "smo_iterations_max": int(max(r["smo_iterations"] for r in rows))})
    return {"summary": summary, "models": rows}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    bench_lupi_cost.job_arguments(ap, stride=7)
    ap.add_argument("--tol", type=float, default=SMO_TOL,
                    help="the smo route's tolerance for a solution its polish does not make exact")
    ap.add_argument("--warm-from", choices=("log2_C", "log2_gamma_plus"), default=None,
                    help="warm-start the smo route from the predecessor on this grid axis")
    ap.add_argument("--baseline", choices=sorted(BASELINES), default="previous",
                    help="the route timed against it: the default before issue 42 (previous) or the QP route alone")
    args = ap.parse_args(argv)
    cfg, job = bench_lupi_cost.load_job(args.config, args.job)
    if "svm_plus" not in job.grids:
        raise SystemExit(f"{job.slot} has no SVM+ grid (its data set has no privileged features)")
    result = measure(job, lupi.prepare(job, sc.runtime_settings(cfg, ROOT)), args.stride, args.tol, args.warm_from,
                     args.baseline)
    out = bench_lupi_cost.output_path(args.output, "svm-plus-smo" + (f"-warm-{args.warm_from}" if args.warm_from
                                                                         else "") + f"-vs-{args.baseline}", job)
    bench_lupi_cost.write_result(out, job, result)
    print(result["summary"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
