"""Weight learning (Experiment 8's ``learned`` method, ``svm_plus.learn_weights``) on one job's kernels: where
its time goes, and what a warm-started inner solver would change (issue 26).

``learn_weights`` runs L-BFGS-B on the validation smooth hinge; every evaluation trains the weighted SVM
afresh with LIBSVM at ``INNER_TOL`` = 1e-10 (``validation_loss``). For each chosen grid point (log2 kernel
scale, log2 C) of the job this measures, one BLAS thread, process CPU time:

- ``shipped``: ``learn_weights`` as the job calls it; the inner fits' count and CPU time;
- ``warm`` (with ``--candidate``): the same L-BFGS-B, each inner solve by the ``smo`` engine at the same tol,
  started from the previous evaluation's alpha (``fit_svm(alpha0=...)``); a candidate, NOT the library's
  method: it reaches the same optimum to tol, but where the inner optimum is not unique (duplicate points with
  opposite labels) the gradient and hence the L-BFGS-B path differ, so the learned weights and the errors
  of the model trained with them are compared with the shipped ones.

    python benchmarks/bench_learn_weights.py --job mammographic 2:1 1.0 0 --point 4 2 --point 4 4 --point 2 10 --candidate

Writes ``benchmarks/out/learn-weights-<slot>.json``.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from unittest import mock

import numpy as np
import yaml
from scipy.optimize import minimize

from wsvm_span.engines import fit_svm
from wsvm_span.study import config as sc
from wsvm_span.study.experiments import lupi
from wsvm_span.svm_plus import evaluate_weighted, weight_schemes
from wsvm_span.svm_plus.equivalence import ZERO_WEIGHT
from wsvm_span.utils.environment import machine_info, single_threaded

ROOT = Path(__file__).resolve().parents[1]


class CountingFit:
    """``fit_svm`` as ``validation_loss`` calls it, counting the fits and their CPU time; with ``warm`` by the
    smo engine from the previous solution (kept as a full-length alpha, 0 on left-out points)."""

    def __init__(self, l: int, warm: bool):
        self.warm, self.alpha, self.cpu = warm, np.zeros(l), []

    def __call__(self, K, y, c, tol, check_input=False, keep=None):
        t0 = time.process_time()
        if self.warm:
            model = fit_svm(K, y, c, engine="smo", tol=tol, check_input=False, alpha0=self.alpha[keep])
            self.alpha = np.zeros_like(self.alpha)
            self.alpha[keep] = model.alpha
        else:
            model = fit_svm(K, y, c, tol=tol, check_input=False)
        self.cpu.append(time.process_time() - t0)
        return model


def learn(k, problem, job, C: float, warm: bool):
    """(learned weights, loss, L-BFGS-B iterations, evaluations, inner fits' CPU seconds), as learn_weights."""
    fit = CountingFit(problem.l, warm)

    def loss(c):
        keep = np.flatnonzero(c > ZERO_WEIGHT)
        with mock.patch.object(weight_schemes, "fit_svm", lambda *a, **kw: fit(*a, keep=keep, **kw)):
            return weight_schemes.validation_loss(c, k.K, problem.y, k.K_val, problem.y_val, job.learn_d)

    if not warm:  # the shipped function itself, its inner fits counted
        with mock.patch.object(weight_schemes, "fit_svm", lambda *a, **kw: fit(*a, keep=None, **kw)):
            r = weight_schemes.learn_weights(k.K, problem.y, k.K_val, problem.y_val, C, d=job.learn_d,
                                             max_iter=job.learn_max_iter)
        return r.c, r.loss, r.n_iter, r.n_evaluations, fit.cpu
    c0 = np.full(problem.l, C)
    loss(c0)  # learn_weights evaluates the start once before L-BFGS-B
    res = minimize(loss, c0, jac=True, method="L-BFGS-B", bounds=[(ZERO_WEIGHT, None)] * problem.l,
                   options={"maxiter": job.learn_max_iter})
    return res.x, float(res.fun), int(res.nit), int(res.nfev), fit.cpu


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", default=str(ROOT / "config" / "paper.yaml"))
    ap.add_argument("--job", nargs=4, metavar=("DATASET", "RATIO", "FRACTION", "SEED"), required=True)
    ap.add_argument("--point", nargs=2, type=float, action="append", required=True,
                    metavar=("LOG2_KERNEL_SCALE", "LOG2_C"), help="a grid point (repeat for several)")
    ap.add_argument("--candidate", action="store_true", help="also the warm-started smo inner solves")
    args = ap.parse_args(argv)
    with open(args.config, encoding="utf-8") as fh:
        cfg = sc.validate_config(yaml.safe_load(fh))
    dataset, ratio, fraction, seed = args.job[0], args.job[1], float(args.job[2]), int(args.job[3])
    job = next((j for j in lupi.plan(cfg, "exp8") if (j.dataset, j.ratio, j.seed) == (dataset, ratio, seed)
                and abs(j.train_fraction - fraction) < 1e-9), None)
    if job is None:
        raise SystemExit(f"no exp8 job {args.job} in {args.config}")
    problem = lupi.prepare(job, sc.runtime_settings(cfg, ROOT))
    X = problem.split.X_train[problem.train]
    _, inverse, counts = np.unique(X, axis=0, return_inverse=True, return_counts=True)
    inverse = inverse.ravel()
    both = sum(1 for g in np.flatnonzero(counts > 1) if np.unique(problem.y[inverse == g]).size > 1)
    print(f"{job.slot}: l={problem.l}, {counts.size} distinct points, {int((counts[inverse] > 1).sum())} in "
          f"groups of duplicates, {both} such groups with both labels", flush=True)
    out = {"command": " ".join([Path(sys.executable).name, *sys.argv]), "machine": machine_info(),
           "load_average_start": os.getloadavg(), "slot": job.slot, "l": problem.l, "distinct_points": int(counts.size),
           "duplicate_groups_with_both_labels": both, "points": []}
    for scale, log2_C in args.point:
        k = problem.kernels[scale]
        point = {"log2_kernel_scale": scale, "log2_C": log2_C}
        for mode in ("shipped", "warm") if args.candidate else ("shipped",):
            with single_threaded():
                t0 = time.process_time()
                c, loss, nit, nfev, fits = learn(k, problem, job, 2.0**log2_C, warm=mode == "warm")
                cpu = time.process_time() - t0
                ev = evaluate_weighted(k.K, problem.y, c, k.K_test, problem.split.y_test, folds=problem.folds, D=k.D,
                                       K_val=k.K_val, y_val=problem.y_val, engine=job.engine, tol=job.tol,
                                       fold_kernels=k.fold_kernels)
            point[mode] = {"cpu_s": cpu, "inner_fits": len(fits), "inner_fits_cpu_s": float(sum(fits)),
                           "inner_fit_cpu_s_max": float(max(fits)), "n_iter": nit, "n_evaluations": nfev,
                           "loss": loss, "c": c.tolist(), "test_error": ev.test_error, "val_error": ev.val_error,
                           "cv_error": ev.cv_error, "span_rule": ev.span_rule}
            print(f"{point['log2_kernel_scale']:g},{point['log2_C']:g} {mode}: {cpu:.2f} s CPU, {len(fits)} inner "
                  f"fits ({sum(fits):.2f} s, max {max(fits):.2f}), L-BFGS-B {nit} iterations / {nfev} evaluations, "
                  f"loss {loss:.6f}; test {ev.test_error:.4f} val {ev.val_error:.4f} cv {ev.cv_error:.4f} "
                  f"span-rule {ev.span_rule:.4f}", flush=True)
        if args.candidate:
            diff = np.abs(np.array(point["shipped"]["c"]) - np.array(point["warm"]["c"])).max()
            print(f"   max |c_shipped - c_warm| = {diff:.3g}; CPU ratio shipped / warm = "
                  f"{point['shipped']['cpu_s'] / point['warm']['cpu_s']:.2f}", flush=True)
        out["points"].append(point)
    path = ROOT / "benchmarks" / "out" / f"learn-weights-{job.slot.replace('/', '-')}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=1))
    print(f"-> {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
