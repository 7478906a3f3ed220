"""The SVM+ decomposition solver (``fit_svm_plus(..., solver="smo")``) against the route the study uses
(``solver="auto"``: the active-set method, falling back to the QP route and its polish), on an Experiment 8 job's
own SVM+ problems: every ``--stride``-th point of the job's SVM+ grid (its kernels from the job's ``prepare``), one
BLAS thread, both routes on each problem taking turns (the baseline first on even problems, second on odd ones),
CPU seconds (``time.process_time``) of the training alone.

Per problem it records both routes' CPU time and solver names, the decomposition solver's steps, the dual
objectives of both solutions (the lower is the better, both being feasible) and the largest difference of their
training decision values. Summary: total and median CPU of each route, the ratio (baseline / smo), how many
problems the polish made exact, and the objective differences.

    .venv/bin/python benchmarks/bench_svm_plus_smo.py --config config/paper.yaml --job bank_marketing 2:1 1.0 8 --stride 7
    .venv/bin/python benchmarks/bench_svm_plus_smo.py --config config/paper.yaml --job bank_marketing 2:1 1.0 8 --stride 7 \\
        --tol 1e-2

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
from wsvm_span.svm_plus.solver import SMO, SMO_TOL, SVMPlusProblem  # noqa: E402
from wsvm_span.utils.environment import single_threaded  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def dual_objective(problem: SVMPlusProblem, model) -> float:
    a, at = model.alpha, model.alpha_tilde
    return float(0.5 * a @ problem.Q @ a - a.sum() + 0.5 * at @ problem.T @ at)


def timed(**kwargs):
    c0 = time.process_time()
    model = fit_svm_plus(**kwargs)
    return model, time.process_time() - c0


def measure(job, problem, stride: int, tol: float) -> dict:
    axes = job.grids["svm_plus"]
    rows = []
    with single_threaded():
        for n, i in enumerate(range(0, grid_size(axes), stride)):
            point = grid_point(axes, i)
            K = problem.kernels[point["log2_kernel_scale"]].K
            K_priv = problem.priv_kernels[point["log2_priv_gamma"]]
            C, gamma = 2.0 ** point["log2_C"], 2.0 ** point["log2_gamma_plus"]
            args = dict(K=K, K_priv=K_priv, y=problem.y, C=C, gamma=gamma, check_input=False)
            if n % 2 == 0:
                base, t_base = timed(**args)
                smo, t_smo = timed(**args, solver=SMO, tol=tol)
            else:
                smo, t_smo = timed(**args, solver=SMO, tol=tol)
                base, t_base = timed(**args)
            qp = SVMPlusProblem.build(K, K_priv, problem.y, C, gamma)
            rows.append({"index": i, "point": point, "baseline_cpu_s": t_base, "smo_cpu_s": t_smo,
                         "baseline_solver": base.solver, "smo_solver": smo.solver, "smo_steps": smo.iterations,
                         "baseline_objective": dual_objective(qp, base), "smo_objective": dual_objective(qp, smo),
                         "max_decision_diff": float(np.abs(base.decision_train - smo.decision_train).max())})
            r = rows[-1]
            print(f"  m{i} C=2^{point['log2_C']:g} gamma+=2^{point['log2_gamma_plus']:g}: baseline {t_base * 1e3:.1f} ms "
                  f"({base.solver}), smo {t_smo * 1e3:.1f} ms ({smo.solver}, {smo.iterations} steps), objective "
                  f"smo - baseline {r['smo_objective'] - r['baseline_objective']:+.3g}", flush=True)
    base_t = np.array([r["baseline_cpu_s"] for r in rows])
    smo_t = np.array([r["smo_cpu_s"] for r in rows])
    rel = np.array([(r["smo_objective"] - r["baseline_objective"]) / abs(r["baseline_objective"]) for r in rows])
    summary = {"problems": len(rows), "tol": tol,
               "baseline_cpu_s_total": float(base_t.sum()), "smo_cpu_s_total": float(smo_t.sum()),
               "ratio_total": float(base_t.sum() / smo_t.sum()),
               "baseline_cpu_s_median": float(np.median(base_t)), "smo_cpu_s_median": float(np.median(smo_t)),
               "smo_faster_on": int(np.sum(smo_t < base_t)),
               "smo_polished": sum(r["smo_solver"] != SMO for r in rows),
               "smo_steps_median": float(np.median([r["smo_steps"] for r in rows])),
               "smo_steps_max": int(max(r["smo_steps"] for r in rows)),
               "objective_rel_diff_min": float(rel.min()), "objective_rel_diff_max": float(rel.max())}
    return {"summary": summary, "models": rows}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    bench_lupi_cost.job_arguments(ap, stride=7)
    ap.add_argument("--tol", type=float, default=SMO_TOL, help="the smo route's stopping tolerance")
    args = ap.parse_args(argv)
    cfg, job = bench_lupi_cost.load_job(args.config, args.job)
    if "svm_plus" not in job.grids:
        raise SystemExit(f"{job.slot} has no SVM+ grid (its data set has no privileged features)")
    result = measure(job, lupi.prepare(job, sc.runtime_settings(cfg, ROOT)), args.stride, args.tol)
    out = bench_lupi_cost.output_path(args.output, "svm-plus-smo", job)
    bench_lupi_cost.write_result(out, job, result)
    print(result["summary"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
