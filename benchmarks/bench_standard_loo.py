"""Experiment 10's cost part: exact LOO by retraining against exact LOO by the solution path.

Digits task of standard-svm-span.md (mnist_0to4_5to9: MNIST 0-4 vs 5-9, l = 317 per subset), standard
SVM at C = 2^10, RBF exp(-||x - x'||^2 / (2 sigma^2)), one thread, process CPU time per model:
training, ``leave_one_out(method="retrain")`` (LIBSVM without each SV) and
``leave_one_out(method="path")`` (the path c_p -> 0 from the model). Both are measured in the same run
on the same model; the LOO errors must be equal (the script exits 1 if not).

Usage:
    python benchmarks/bench_standard_loo.py [--subsets 3] [--sigma 2,4,6,10] [--log2c 10]
Writes benchmarks/out/standard-loo.json.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

import wsvm_span as ws
from wsvm_span.data import load_dataset

ROOT = Path(__file__).resolve().parents[1]
MIRROR = ROOT.parent / "shared" / "data"


def cpu(fn):
    t0 = time.process_time()
    out = fn()
    return out, time.process_time() - t0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--subsets", type=int, default=3)
    ap.add_argument("--sigma", type=lambda s: [float(v) for v in s.split(",")], default=[2.0, 4.0, 6.0, 10.0])
    ap.add_argument("--log2c", type=float, default=10.0)
    args = ap.parse_args(argv)
    rows = []
    with threadpool_limits(1):
        for seed in range(args.subsets):
            split = load_dataset("mnist_0to4_5to9", seed=seed, mirror=str(MIRROR))
            for sigma in args.sigma:
                K = ws.rbf_kernel(split.X_train, gamma=1.0 / (2 * sigma ** 2))
                model, t_train = cpu(lambda: ws.fit_svm(K, split.y_train, 2.0 ** args.log2c))
                retrained, t_retrain = cpu(lambda: ws.leave_one_out(model, K, method="retrain"))
                by_path, t_path = cpu(lambda: ws.leave_one_out(model, K, method="path"))
                rows.append({"seed": seed, "sigma": sigma, "t_train": t_train, "t_loo_retrain": t_retrain,
                             "t_loo_path": t_path, "loo_error_retrain": retrained.loo_error,
                             "loo_error_path": by_path.loo_error})
                print(rows[-1], flush=True)
    t = {k: float(np.median([r[k] for r in rows])) for k in ("t_train", "t_loo_retrain", "t_loo_path")}
    ratio = float(np.median([r["t_loo_retrain"] / r["t_loo_path"] for r in rows]))
    same = sum(r["loo_error_retrain"] == r["loo_error_path"] for r in rows)
    print(f"median CPU s per model: train {t['t_train']:.4f}, LOO retrain {t['t_loo_retrain']:.3f}, "
          f"LOO path {t['t_loo_path']:.3f}; retrain/path {ratio:.1f}x; identical LOO errors {same}/{len(rows)}")
    out = ROOT / "benchmarks" / "out" / "standard-loo.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"rows": rows, "median": t, "ratio": ratio, "identical": same}, indent=1))
    return 0 if same == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
