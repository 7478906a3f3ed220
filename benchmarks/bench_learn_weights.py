"""Weight learning (Experiment 8's ``learned`` method, ``svm_plus.learn_weights``) on one job's kernels: where
its time goes, by each inner engine (issue 26).

``learn_weights`` runs L-BFGS-B on the validation smooth hinge; every evaluation trains the weighted SVM at
``INNER_TOL`` = 1e-10 (``validation_loss``). For each chosen grid point (log2 kernel scale, log2 C) of the job
this measures, one BLAS thread, process CPU time, the inner fits' count and CPU time, of:

- ``libsvm``: ``learn_weights(engine="auto")``, LIBSVM from zero at every evaluation (the method before
  issue 26, and what a config with ``svm.engine: auto`` runs);
- ``smo`` (with ``--candidate``, the name kept from when it was one): ``learn_weights(engine="smo")``, each
  inner solve started from the previous evaluation's alpha, what the study's configs (``svm.engine: smo``)
  run. Where the inner optimum is not unique (duplicate points) or a point sits on its bound, the gradient and
  hence the L-BFGS-B path differ, so the learned weights and the errors of the model trained with them are
  compared.

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

from wsvm_span.engines import fit_svm
from wsvm_span.study import config as sc
from wsvm_span.study.experiments import lupi
from wsvm_span.svm_plus import evaluate_weighted, weight_schemes
from wsvm_span.utils.environment import machine_info, single_threaded

ROOT = Path(__file__).resolve().parents[1]


class CountingFit:
    """``fit_svm`` as ``validation_loss`` calls it, its calls counted and timed (CPU)."""

    def __init__(self):
        self.cpu = []

    def __call__(self, *args, **kwargs):
        t0 = time.process_time()
        model = fit_svm(*args, **kwargs)
        self.cpu.append(time.process_time() - t0)
        return model


def learn(k, problem, job, C: float, engine: str):
    """(learned weights, loss, L-BFGS-B iterations, evaluations, inner fits' CPU seconds) of learn_weights."""
    fit = CountingFit()
    with mock.patch.object(weight_schemes, "fit_svm", fit):
        r = weight_schemes.learn_weights(k.K, problem.y, k.K_val, problem.y_val, C, d=job.learn_d,
                                         max_iter=job.learn_max_iter, engine=engine)
    return r.c, r.loss, r.n_iter, r.n_evaluations, fit.cpu


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
        for mode in ("libsvm", "smo") if args.candidate else ("libsvm",):
            with single_threaded():
                t0 = time.process_time()
                c, loss, nit, nfev, fits = learn(k, problem, job, 2.0**log2_C, "auto" if mode == "libsvm" else "smo")
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
            diff = np.abs(np.array(point["libsvm"]["c"]) - np.array(point["smo"]["c"])).max()
            print(f"   max |c_libsvm - c_smo| = {diff:.3g}; CPU ratio libsvm / smo = "
                  f"{point['libsvm']['cpu_s'] / point['smo']['cpu_s']:.2f}", flush=True)
        out["points"].append(point)
    path = ROOT / "benchmarks" / "out" / f"learn-weights-{job.slot.replace('/', '-')}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=1))
    print(f"-> {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
