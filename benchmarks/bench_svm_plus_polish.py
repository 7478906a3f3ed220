"""The SVM+ polish on the problems an Experiment 8 job gives it: how many it polishes and at what cost, with and
without its second try (``svm_plus.solver.POLISH_MAX_ITER``; 0 takes the second try away).

It runs a job's sampled SVM+ models as ``bench_lupi_cost.py`` does (the job's own ``prepare`` and model
evaluation, every ``--stride``-th grid point), keeps every problem the polish is called on (an interior point's
solution: the QP route's, for the models, their CV folds and their exact-LOO retrainings) up to ``--limit``,
keeping every ``--every``-th, running them without the second try (so that it meets the problems the code
before the second try met: a failed polish sends a fit on to the next QP route, one more problem), and then polishes each kept problem again both ways, taking turns, one BLAS
thread: polished or not, active-set iterations, CPU seconds, and whether the two polished solutions are the
same (max |alpha difference| / C).

    python benchmarks/bench_svm_plus_polish.py --config config/paper.yaml --job w_mixture 1:2 0.5 0 --stride 43 --limit 1000

Writes a JSON file (default ``benchmarks/out/svm-plus-polish-<data set>-<ratio>-<fraction>-s<seed>.json``).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_lupi_cost  # noqa: E402

from wsvm_span.study import config as sc  # noqa: E402
from wsvm_span.study.experiments import lupi  # noqa: E402
from wsvm_span.svm_plus import solver as svm_plus_solver  # noqa: E402
from wsvm_span.utils.environment import single_threaded  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def collect(job, problem, stride: int, limit: int, every: int) -> list:
    """(SVMPlusProblem, interior-point solution) of every ``every``-th polish call of the job's sampled models."""
    kept, calls = [], [0]
    polished = svm_plus_solver.SVMPlusProblem.polished

    def recording(self, raw, name):
        calls[0] += 1
        if calls[0] % every == 0 and len(kept) < limit:
            kept.append((self, raw))
        return polished(self, raw, name)

    svm_plus_solver.SVMPlusProblem.polished = recording
    second_try, svm_plus_solver.POLISH_MAX_ITER = svm_plus_solver.POLISH_MAX_ITER, 0
    try:
        bench_lupi_cost.measure(job, problem, {"svm_plus"}, stride)
    finally:
        svm_plus_solver.SVMPlusProblem.polished = polished
        svm_plus_solver.POLISH_MAX_ITER = second_try
    print(f"{calls[0]} polish calls, {len(kept)} kept", flush=True)
    return kept


def polish(qp, raw, second_try: bool) -> dict:
    kept = svm_plus_solver.POLISH_MAX_ITER
    svm_plus_solver.POLISH_MAX_ITER = kept if second_try else 0
    try:
        c0 = time.process_time()
        with single_threaded():
            try:
                model = qp.polished(raw, "polish")
            except svm_plus_solver.ActiveSetFailure:
                model = None
        return {"cpu_s": time.process_time() - c0, "model": model}
    finally:
        svm_plus_solver.POLISH_MAX_ITER = kept


def replay(kept) -> dict:
    rows = []
    for i, (qp, raw) in enumerate(kept):
        order = (True, False) if i % 2 == 0 else (False, True)
        runs = {second: polish(qp, raw, second) for second in order}
        new, old = runs[True], runs[False]
        row = {"l": int(qp.y.size), "C": qp.C, "gamma": qp.gamma,
               "polished": new["model"] is not None, "polished_without_second_try": old["model"] is not None,
               "cpu_s": new["cpu_s"], "cpu_s_without_second_try": old["cpu_s"],
               "iterations": None if new["model"] is None else new["model"].iterations}
        if new["model"] is not None and old["model"] is not None:
            row["max_alpha_difference_over_C"] = float(np.max(np.abs(new["model"].alpha - old["model"].alpha)) / qp.C)
        rows.append(row)
    first = [r for r in rows if r["polished_without_second_try"]]
    rescued = [r for r in rows if r["polished"] and not r["polished_without_second_try"]]
    its = [r["iterations"] for r in rescued]
    summary = {
        "problems": len(rows), "polished": sum(r["polished"] for r in rows),
        "polished_without_second_try": len(first), "rescued_by_second_try": len(rescued),
        "lost_by_second_try": sum(r["polished_without_second_try"] and not r["polished"] for r in rows),
        "max_alpha_difference_over_C_where_both_polish": max((r["max_alpha_difference_over_C"] for r in first), default=0.0),
        "second_try_iterations_median": float(np.median(its)) if its else None,
        "second_try_iterations_max": max(its, default=None),
        "cpu_s_mean": float(np.mean([r["cpu_s"] for r in rows])) if rows else None,
        "cpu_s_mean_without_second_try": float(np.mean([r["cpu_s_without_second_try"] for r in rows])) if rows else None,
    }
    return {"summary": summary, "problems": rows}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    bench_lupi_cost.job_arguments(ap, stride=43)
    ap.add_argument("--limit", type=int, default=400, help="problems kept at most")
    ap.add_argument("--every", type=int, default=1, help="keep every n-th polish call")
    args = ap.parse_args(argv)
    cfg, job = bench_lupi_cost.load_job(args.config, args.job)
    problem = lupi.prepare(job, sc.runtime_settings(cfg, ROOT))
    result = replay(collect(job, problem, args.stride, args.limit, args.every))
    bench_lupi_cost.write_result(bench_lupi_cost.output_path(args.output, "svm-plus-polish", job), job, result)
    print(json.dumps(result["summary"], indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
