"""What an SVM+ model kept at the QP solver's unpolished solution is (an Experiment 8 row whose engine
``svm_plus.engine_kept_unpolished`` flags: ``svm+:clarabel`` in the study), and why its exact LOO with the weights fixed
(``loo_converted``) reads 1.0 (docs/experiments.md, *Findings*).

For every ``--stride``-th such row of a job in a committed rows file (at most ``--limit``) it trains SVM+ again as the
job does (the job's own ``prepare``) and records: the solver that kept the solution, SVM+'s largest |f| on the
training points and |b|, the largest beta_i / c_i of the converted weighted SVM (c_i = a_i + beta_i: every
beta_i = 0 puts every point at its bound), its in-bound count at the split's tolerance, and its exact LOO with the
weights fixed retrained by "auto" (LIBSVM) and "smo", with the range of y_p f over the left-out points.

    python benchmarks/probe_unpolished_svm_plus.py \\
        --config reproduced/paper-exp8-bank_marketing-2to1-l150-s0-4/reproduced-exp8-bank_marketing-2to1-l150-s0-4.yaml --job bank_marketing 2:1 0.75 0 \\
        --rows reproduced/paper-exp8-bank_marketing-2to1-l150-s0-4/rows/exp8.parquet --stride 7 --limit 3

Writes a JSON file (default ``benchmarks/out/unpolished-svm-plus-<data set>-<ratio>-<fraction>-s<seed>.json``).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_lupi_cost  # noqa: E402

from wsvm_span.resampling import leave_one_out  # noqa: E402
from wsvm_span.study import config as sc  # noqa: E402
from wsvm_span.study.experiments import lupi  # noqa: E402
from wsvm_span.svm_plus import (  # noqa: E402
    engine_kept_unpolished, fit_svm_plus, kept_unpolished, svm_plus_weights, to_weighted_svm,
)
from wsvm_span.utils.environment import single_threaded  # noqa: E402

def unpolished_rows(rows: str, job) -> pd.DataFrame:
    """The job's SVM+ rows kept unpolished, with exact LOO (its seed and training size)."""
    df = pd.read_parquet(rows)
    keep = ((df.method == "svm_plus") & df.loo_converted.notna() & (df.seed == job.seed)
            & (df.dataset == job.dataset) & (df.ratio == job.ratio) & (df.l == job.n_train))
    df = df[keep]
    return df[df.engine.map(engine_kept_unpolished).to_numpy(bool)]


def probe(job, problem, row) -> dict:
    k = problem.kernels[row.log2_kernel_scale]
    model = fit_svm_plus(k.K, problem.priv_kernels[row.log2_priv_gamma], problem.y, 2.0 ** row.log2_C,
                         2.0 ** row.log2_gamma_plus, qp_solver=job.qp_solver, check_input=False)
    c = svm_plus_weights(model)
    out = {"point": {a: float(getattr(row, a)) for a in ("log2_kernel_scale", "log2_C", "log2_gamma_plus",
                                                          "log2_priv_gamma")},
           "solver": model.solver, "max_abs_f": float(np.abs(model.decision_train).max()), "abs_b": abs(model.b),
           "max_beta_over_c": float(np.max((c - model.alpha)[c > 0] / c[c > 0])),
           "row_loo_converted": float(row.loo_converted), "row_span_rule": float(row.span_rule),
           "n_inbound": int(to_weighted_svm(model, k.K).inbound.size)}
    for engine in ("auto", "smo"):
        weighted = to_weighted_svm(model, k.K, engine=engine)
        loo = leave_one_out(weighted, k.K, check_input=False)
        yf = model.y[loo.support] * loo.decision_loo
        out[engine] = {"loo_converted": loo.loo_error, "yf_loo_min": float(yf.min()), "yf_loo_max": float(yf.max())}
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    bench_lupi_cost.job_arguments(ap, stride=1)
    ap.add_argument("--rows", required=True, help="a committed exp8 rows file holding the job's rows")
    ap.add_argument("--limit", type=int, default=3)
    args = ap.parse_args(argv)
    cfg, job = bench_lupi_cost.load_job(args.config, args.job)
    rows = unpolished_rows(args.rows, job)
    if rows.empty:
        raise SystemExit(f"no unpolished SVM+ row with exact LOO of {job.slot} in {args.rows}")
    problem = lupi.prepare(job, sc.runtime_settings(cfg, bench_lupi_cost.ROOT))
    with single_threaded():
        models = [probe(job, problem, row) for row in rows.iloc[::args.stride].head(args.limit).itertuples()]
    summary = {"unpolished_rows": len(rows), "probed": len(models),
               "still_unpolished": sum(kept_unpolished(m["solver"]) for m in models),
               "max_abs_f": max(m["max_abs_f"] for m in models),
               "n_inbound": [m["n_inbound"] for m in models],
               "loo_converted": {e: [m[e]["loo_converted"] for m in models] for e in ("auto", "smo")}}
    result = {"summary": summary, "models": models}
    bench_lupi_cost.write_result(bench_lupi_cost.output_path(args.output, "unpolished-svm-plus", job), job, result)
    print(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
