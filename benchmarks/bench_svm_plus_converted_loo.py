"""The exact LOO of SVM+'s equivalent weighted SVM (an Experiment 8 row's ``loo_converted``) on a job's grid points:
retrained by "auto" (LIBSVM from zero, the engine before) against "smo" started from the SVM+ solution, taking
turns, one BLAS thread.

For every ``--stride``-th SVM+ grid point of the job (its own ``prepare``: kernels) it trains SVM+, converts it
(``svm_plus.to_weighted_svm``) and runs ``resampling.leave_one_out`` once per engine, recording the process CPU
time of each, whether the two LOO errors are equal and on how many left-out points the decision's sign differs.

    python benchmarks/bench_svm_plus_converted_loo.py --config config/paper.yaml --job bank_marketing 2:1 1.0 0 \
        --stride 20

Writes a JSON file (default ``benchmarks/out/svm-plus-converted-loo-<data set>-<ratio>-<fraction>-s<seed>.json``).
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_lupi_cost  # noqa: E402

from wsvm_span.resampling import leave_one_out  # noqa: E402
from wsvm_span.svm_plus import to_weighted_svm  # noqa: E402

ENGINES = ("auto", "smo")


def measure(job, problem, stride: int) -> dict:
    points = []
    for i, point, K, _, model in bench_lupi_cost.svm_plus_models(job, problem, stride):
        loo, cpu = {}, {}
        for engine in (ENGINES if len(points) % 2 == 0 else ENGINES[::-1]):  # taking turns
            weighted = to_weighted_svm(model, K, engine=engine)
            c0 = time.process_time()
            loo[engine] = leave_one_out(weighted, K, check_input=False)
            cpu[engine] = time.process_time() - c0
        a, s = loo["auto"], loo["smo"]
        points.append({"index": i, "point": point, "n_sv": int(a.support.size),
                       **{f"cpu_s_{e}": cpu[e] for e in ENGINES},
                       **{f"loo_error_{e}": loo[e].loo_error for e in ENGINES},
                       "sign_differs": int(np.sum(np.sign(a.decision_loo) != np.sign(s.decision_loo)))})
        print(f"  m{i} {point}: auto {cpu['auto']:.3f} s, smo {cpu['smo']:.3f} s; LOO error "
              f"{a.loo_error:.4f} / {s.loo_error:.4f}", flush=True)
    total = {e: sum(p[f"cpu_s_{e}"] for p in points) for e in ENGINES}
    summary = {"slot": job.slot, "l": job.n_train, "models": len(points), "cpu_s": total,
               "cpu_ratio_auto_over_smo": total["auto"] / total["smo"],
               "same_loo_error": sum(p["loo_error_auto"] == p["loo_error_smo"] for p in points),
               "sign_differs": sum(p["sign_differs"] for p in points)}
    return {"summary": summary, "points": points}


def main(argv=None) -> int:
    return bench_lupi_cost.svm_plus_main(argv, __doc__, "svm-plus-converted-loo", 20, measure)


if __name__ == "__main__":
    raise SystemExit(main())
