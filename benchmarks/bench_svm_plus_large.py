"""One SVM+ at a size whose kernels do not fit in memory: bank_marketing (the study's 11 features, call duration as
the privileged feature), a stratified draw of ``--l`` training points (default 20,000), RBF kernels in both spaces,
trained by ``SVMPlusClassifier(solver="smo")`` on kernel rows computed on demand (``fit_svm_plus_rbf_rows``), one
thread. Reports CPU seconds (``time.process_time``), wall seconds, the process's peak RSS, the solver's steps, its
KKT violation and the test error on the rest of the file, and what the QP route would need for the same problem
(its dense quadratic term alone: (2l)^2 doubles).

    .venv/bin/python benchmarks/bench_svm_plus_large.py --l 20000 --C 1 --gamma-plus 1 --cache-mb 600

Writes a JSON file (default ``benchmarks/out/svm-plus-large-bank_marketing-l<l>.json``).
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from wsvm_span.data.cache import ArrayCache, SourceFiles
from wsvm_span.data.files import ensure_file, resolve_data_dir
from wsvm_span.data.registry import BANK
from wsvm_span.data.scaling import MinMaxScaler01
from wsvm_span.data.splits import build_bank
from wsvm_span.svm_plus import SVMPlusClassifier
from wsvm_span.utils.environment import machine_info, single_threaded

ROOT = Path(__file__).resolve().parents[1]


def bank_split(l: int, seed: int, mirror: str | None):
    """(X_train, y_train, X_priv, X_test, y_test): the study's bank_marketing features scaled to [0, 1] by the
    training set, the duration (privileged) by itself, a stratified draw of l training points."""
    path = ensure_file(BANK, resolve_data_dir(None), mirror)
    raw = build_bank(SourceFiles({BANK.relpath: path}, {BANK.relpath: BANK.sha256}, ArrayCache(None)), seed, None,
                     relpath=BANK.relpath, n_train=l, draw="stratified")
    scaler = MinMaxScaler01().fit(raw.X_train)
    return (scaler.transform(raw.X_train), raw.y_train, MinMaxScaler01().fit_transform(raw.X_priv),
            scaler.transform(raw.X_test), raw.y_test)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--l", type=int, default=20_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--C", type=float, default=1.0)
    ap.add_argument("--gamma-plus", type=float, default=1.0)
    ap.add_argument("--gamma", default="study",
                    help="the ordinary RBF kernel's parameter: a number, SVC's 'scale' or 'auto', or 'study' (1 / d, the "
                         "study's width; the default)")
    ap.add_argument("--priv-gamma", type=float, default=1.0)
    ap.add_argument("--tol", type=float, default=1e-3)
    ap.add_argument("--cache-mb", type=float, default=600.0, help="kernel rows kept, MB per kernel")
    ap.add_argument("--mirror", default=os.environ.get("WSVM_DATA_MIRROR") or str(ROOT.parent / "shared" / "data"),
                    help="the data mirror (default $WSVM_DATA_MIRROR, else shared/data beside the repository)")
    ap.add_argument("--output", default=None)
    args = ap.parse_args(argv)
    X, y, X_priv, X_test, y_test = bank_split(args.l, args.seed, args.mirror)
    gamma = {"study": 1.0 / X.shape[1], "scale": "scale", "auto": "auto"}.get(args.gamma) or float(args.gamma)
    clf = SVMPlusClassifier(C=args.C, gamma_plus=args.gamma_plus, gamma=gamma, priv_gamma=args.priv_gamma,
                            solver="smo", tol=args.tol, cache_size=args.cache_mb)
    with single_threaded():
        c0, w0 = time.process_time(), time.perf_counter()
        clf.fit(X, y, X_privileged=X_priv)
        cpu, wall = time.process_time() - c0, time.perf_counter() - w0
        test_error = float(np.mean(clf.predict(X_test) != y_test))
    model = clf.model_
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    l = X.shape[0]
    summary = {"l": l, "d": X.shape[1], "C": args.C, "gamma_plus": args.gamma_plus, "kernel_gamma": clf._gamma,
               "priv_gamma": args.priv_gamma, "tol": args.tol, "cache_mb_per_kernel": args.cache_mb,
               "solver": model.solver, "steps": model.iterations, "cpu_s": cpu, "wall_s": wall,
               "peak_rss_mb": peak_mb, "kkt_violation": model.kkt_violation, "n_sv": int(clf.support_.size),
               "test_error": test_error, "n_test": int(y_test.size),
               "qp_route_quadratic_term_gb": (2 * l) ** 2 * 8 / 1e9}
    out = Path(args.output or ROOT / "benchmarks" / "out" / f"svm-plus-large-bank_marketing-l{l}.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    out.write_text(json.dumps({"command": " ".join([Path(sys.executable).name, *sys.argv]), "commit": commit,
                               "machine": machine_info(), "summary": summary}, indent=1, default=float))
    print(json.dumps(summary, indent=1, default=float))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
