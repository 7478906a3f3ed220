"""SVM+'s exact LOO (``svm_plus.leave_one_out``, an Experiment 8 row's ``loo_error`` for SVM+) on a job's grid points:
this tree's code against a baseline checkout's (``--baseline``: the ``src`` folder of another commit, its compiled
module built in place), each in a worker process of its own, taking turns, one BLAS thread.

For every ``--stride``-th SVM+ grid point of the job (its own ``prepare``: kernels) each worker trains the model as
the job does (``fit_svm_plus``) and runs the exact LOO on it; it records the process CPU time of the LOO (and,
apart, of the model's training), the LOO error, the points retrained, and the LOO decision values, of which the
largest difference between the two ways is kept.

    python benchmarks/bench_svm_plus_loo.py --config config/paper.yaml --job bank_marketing 2:1 1.0 0 --stride 9 \\
        --baseline /path/to/baseline/src

A baseline checkout, e.g. of the commit before the compiled active-set method (its ``_native`` built in place):

    git archive <commit> src setup.py pyproject.toml MANIFEST.in | tar -x -C /tmp/base
    (cd /tmp/base && PYTHONPATH=<Cython 3.1.8 and setuptools> python setup.py build_ext --inplace)

Writes a JSON file (default ``benchmarks/out/svm-plus-loo-<data set>-<ratio>-<fraction>-s<seed>.json``).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_lupi_cost  # noqa: E402

WAYS = ("baseline", "current")
SRC = Path(__file__).resolve().parents[1] / "src"


def worker(config: str, job_args) -> int:
    """Serve grid indices read from stdin, one JSON line each on stdout, with the ``wsvm_span`` on the path."""
    import wsvm_span
    from wsvm_span.study import config as sc
    from wsvm_span.study.experiments import lupi
    from wsvm_span.study.grid import grid_point
    from wsvm_span.svm_plus import fit_svm_plus, leave_one_out
    from wsvm_span.utils.environment import single_threaded

    cfg, job = bench_lupi_cost.load_job(config, job_args)
    problem = lupi.prepare(job, sc.runtime_settings(cfg, bench_lupi_cost.ROOT))
    axes, y = job.grids["svm_plus"], problem.y
    print(json.dumps({"ready": wsvm_span.__file__}), flush=True)
    for line in sys.stdin:
        i = int(line)
        pt = grid_point(axes, i)
        K, K_priv = problem.kernels[pt["log2_kernel_scale"]].K, problem.priv_kernels[pt["log2_priv_gamma"]]
        with single_threaded():
            c0 = time.process_time()
            model = fit_svm_plus(K, K_priv, y, 2.0 ** pt["log2_C"], 2.0 ** pt["log2_gamma_plus"], check_input=False)
            c1 = time.process_time()
            loo = leave_one_out(model, K, K_priv)
            c2 = time.process_time()
        print(json.dumps({"point": pt, "cpu_s_train": c1 - c0, "cpu_s_loo": c2 - c1, "loo_error": loo.error,
                          "points": loo.points.tolist(), "decision_loo": loo.decision_loo.tolist(),
                          "retrained": int(np.count_nonzero(loo.retrained)), "solver": model.solver}), flush=True)
    return 0


def start_worker(src: Path, config: str, job_args) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(src), PYTHONDONTWRITEBYTECODE="1", OMP_NUM_THREADS="1",
               OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    proc = subprocess.Popen([sys.executable, __file__, "--worker", "--config", config, "--job", *job_args],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    ready = json.loads(proc.stdout.readline())
    if not ready["ready"].startswith(str(src)):
        raise SystemExit(f"the worker for {src} imported wsvm_span from {ready['ready']}")
    return proc


def ask(proc: subprocess.Popen, i: int) -> dict:
    proc.stdin.write(f"{i}\n")
    proc.stdin.flush()
    return json.loads(proc.stdout.readline())


def measure(job, config: str, job_args, baseline: Path, stride: int) -> dict:
    from wsvm_span.study.grid import grid_size

    workers = {"baseline": start_worker(baseline, config, job_args), "current": start_worker(SRC, config, job_args)}
    points = []
    try:
        for n, i in enumerate(range(0, grid_size(job.grids["svm_plus"]), stride)):
            out = {way: ask(workers[way], i) for way in (WAYS if n % 2 == 0 else WAYS[::-1])}  # taking turns
            same_points = out["baseline"]["points"] == out["current"]["points"]
            df = (float(np.max(np.abs(np.subtract(out["baseline"]["decision_loo"], out["current"]["decision_loo"])),
                               initial=0.0)) if same_points else None)
            row = {"index": i, "point": out["current"]["point"], "same_points": same_points, "max_abs_df": df,
                   "n_points": len(out["current"]["points"])}
            for way in WAYS:
                row.update({f"{key}_{way}": out[way][key]
                            for key in ("cpu_s_loo", "cpu_s_train", "loo_error", "retrained", "solver")})
            points.append(row)
            print(f"  m{i} {row['point']}: LOO baseline {row['cpu_s_loo_baseline']:.3f} s, current "
                  f"{row['cpu_s_loo_current']:.3f} s ({row['retrained_current']} retrained); LOO error "
                  f"{row['loo_error_baseline']:.4f} / {row['loo_error_current']:.4f}; max |df| {df}", flush=True)
    finally:
        for proc in workers.values():
            proc.stdin.close()
            proc.wait()
    total = {w: sum(p[f"cpu_s_loo_{w}"] for p in points) for w in WAYS}
    summary = {"slot": job.slot, "l": job.n_train, "models": len(points), "baseline": str(baseline),
               "cpu_s_loo": total, "cpu_s_train": {w: sum(p[f"cpu_s_train_{w}"] for p in points) for w in WAYS},
               "ratio_baseline_over_current": total["baseline"] / total["current"],
               "retrained": sum(p["retrained_current"] for p in points),
               "same_loo_error": sum(p["loo_error_baseline"] == p["loo_error_current"] for p in points),
               "max_abs_df": max((p["max_abs_df"] for p in points if p["max_abs_df"] is not None), default=0.0)}
    return {"summary": summary, "points": points}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    bench_lupi_cost.job_arguments(ap, stride=9)
    ap.add_argument("--baseline", type=Path, help="the src folder of the baseline checkout (its _native built)")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        return worker(args.config, args.job)
    if args.baseline is None:
        ap.error("--baseline is required")
    _, job = bench_lupi_cost.load_job(args.config, args.job)
    if "svm_plus" not in job.grids:
        raise SystemExit(f"{job.slot} has no SVM+ grid (its data set has no privileged features)")
    result = measure(job, args.config, args.job, args.baseline.resolve(), args.stride)
    bench_lupi_cost.write_result(bench_lupi_cost.output_path(args.output, "svm-plus-loo", job), job, result)
    print(json.dumps(result["summary"], indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
