"""SpanSearchCV against GridSearchCV(SVC(), cv=5), and ``wsvm-span select`` against LIBSVM's grid.py.

One run per data set, one thread (BLAS pinned), both searches over the same C x gamma grid:
  * wall time of GridSearchCV(SVC(), cv=5) (refit included) and of SpanSearchCV() (refit included),
    and their ratio;
  * the test error of the model each one selected (its own tie handling: the first best point), and
    under the study's tie rule "worst" (the worst test error among the points tied at the optimum);
  * the levers: LIBSVM tolerance (the search at tol 1e-7 / 1e-5 / 1e-3: time and the number of grid
    points whose span-rule equals the 1e-7 value), the span-rule's cost at the largest n* of the grid,
    and sharing the kernel per gamma (kernel time once per gamma vs once per point).
``--select`` instead times ``wsvm-span select`` against ``svm-grid`` (Debian's libsvm-tools, svm-train
with -v 5) on the study's training split written as a LIBSVM file, same grid.

Usage:
  python benchmarks/bench_search.py --dataset splice
  python benchmarks/bench_search.py --dataset mnist_2_9 --log2c 1,5,4 --gamma-steps 0,2
  python benchmarks/bench_search.py --dataset splice --select
Data: the study's splits (``wsvm_span.data.load_dataset``), or ``spambase`` (never used by the study:
UCI file from the data mirror, stratified 50/50 split with seed 0, [0, 1] scaling fitted on the
training half). Writes benchmarks/out/search-<dataset>[-select].json.
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from sklearn.model_selection import GridSearchCV  # noqa: E402
from sklearn.svm import SVC  # noqa: E402

import wsvm_span as ws  # noqa: E402
from wsvm_span.utils.environment import machine_info, single_threaded  # noqa: E402
from wsvm_span.model_selection import SpanSearchCV, TieRule  # noqa: E402
from wsvm_span.model_selection._grid import log2_range  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
MIRROR = Path(os.environ.get("WSVM_DATA_MIRROR", ROOT.parent / "shared" / "data"))


def load(name: str):
    """(X_train, y_train, X_test, y_test, d) of a study split, or of spambase (see module doc)."""
    if name == "spambase":
        from sklearn.model_selection import train_test_split
        from sklearn.preprocessing import MinMaxScaler

        with gzip.open(MIRROR / "spambase" / "spambase.data.gz", "rt") as fh:
            data = np.loadtxt(fh, delimiter=",")
        X, y = data[:, :-1], np.where(data[:, -1] == 1, 1.0, -1.0)
        Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.5, stratify=y, random_state=0)
        scaler = MinMaxScaler().fit(Xtr)
        return scaler.transform(Xtr), ytr, np.clip(scaler.transform(Xte), 0, None), yte, X.shape[1]
    from wsvm_span.data import load_dataset

    s = load_dataset(name, seed=0, mirror=str(MIRROR))
    return s.X_train, s.y_train, s.X_test, s.y_test, s.d


def grid_for(d: int, log2c, gamma_steps) -> dict:
    """C = 2^log2c range; gamma = 2^k / d for k in gamma_steps (the study's gamma = 1/d, scaled)."""
    return {"C": [2.0 ** e for e in log2_range(*log2c)], "gamma": [2.0 ** k / d for k in gamma_steps]}


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def compare(args) -> dict:
    X, y, Xt, yt, d = load(args.dataset)
    grid = grid_for(d, args.log2c, args.gamma_steps)
    n_points = len(grid["C"]) * len(grid["gamma"])
    print(f"{args.dataset}: l={len(y)}, test={len(yt)}, d={d}; grid {len(grid['C'])} C x {len(grid['gamma'])} gamma",
          flush=True)
    span, t_span = timed(lambda: SpanSearchCV(param_grid=grid).fit(X, y))
    print(f"  SpanSearchCV: {t_span:.1f}s (kernels {span.kernel_time_:.2f}s, fits "
          f"{span.cv_results_['mean_fit_time'].sum():.1f}s, spans {span.cv_results_['mean_score_time'].sum():.1f}s, "
          f"refit {span.refit_time_:.1f}s)", flush=True)
    gs, t_gs = timed(lambda: GridSearchCV(SVC(), grid, cv=5).fit(X, y))
    print(f"  GridSearchCV(SVC(), cv=5): {t_gs:.1f}s; ratio {t_gs / t_span:.1f}x", flush=True)

    # Untimed: the test error of every grid point (models on the whole training set, = the refits).
    held = SpanSearchCV(param_grid=grid, tie_rule="worst").fit(X, y, heldout=(Xt, yt))
    test_err = held.cv_results_["heldout_error"]
    err = {
        "span_first": float(np.mean(span.predict(Xt) != yt)),
        "cv_first": float(np.mean(gs.predict(Xt) != yt)),
        "span_worst_tie": float(test_err[held.best_index_]),
        "cv_worst_tie": float(test_err[TieRule("worst")({"mean_test_score": gs.cv_results_["mean_test_score"],
                                                          "heldout_error": test_err})]),
        "min_over_grid": float(test_err.min()),
        "span_tied": int(TieRule().tied(span.cv_results_).size),
        "cv_tied": int(TieRule().tied(gs.cv_results_).size),
    }
    print(f"  test error (%): span-rule {100 * err['span_first']:.2f} (worst of {err['span_tied']} tied "
          f"{100 * err['span_worst_tie']:.2f}); 5-fold CV {100 * err['cv_first']:.2f} (worst of {err['cv_tied']} tied "
          f"{100 * err['cv_worst_tie']:.2f}); min over grid {100 * err['min_over_grid']:.2f}", flush=True)
    print(f"  selected: span {span.best_params_}, cv {gs.best_params_}", flush=True)

    levers = {}
    if args.levers:
        ref = None
        for tol in (1e-7, 1e-5, 1e-3):
            s, t = timed(lambda: SpanSearchCV(SVC(tol=tol), grid).fit(X, y))
            rule = s.cv_results_["estimate_span_rule"]
            ref = rule if ref is None else ref
            levers[f"tol={tol:g}"] = {"wall_s": t, "same_span_rule_points": int(np.sum(rule == ref)),
                                      "selected": s.best_params_}
            print(f"  lever tol={tol:g}: {t:.1f}s, span-rule equal to tol=1e-7's on {int(np.sum(rule == ref))}"
                  f"/{n_points} points, selects {s.best_params_}", flush=True)
    r = span.cv_results_
    worst = int(np.argmax(r["mean_score_time"]))
    n_star = int(r["n_inbound"][worst])
    levers["span_cost"] = {"max_span_s": float(r["mean_score_time"][worst]), "n_star": n_star,
                           "median_span_s": float(np.median(r["mean_score_time"])),
                           "median_fit_s": float(np.median(r["mean_fit_time"]))}
    if n_star > 1:
        # what one symmetric solve of that size costs (the core's bordered_inverse) against a plain
        # inverse; timed on a well-conditioned matrix of the same size (duplicate points make the
        # real K_MM singular, which the core handles by merging them).
        R = np.random.default_rng(0).standard_normal((n_star, n_star))
        A = R @ R.T / n_star + np.eye(n_star)
        Kt = np.block([[A, np.ones((n_star, 1))], [np.ones((1, n_star)), np.zeros((1, 1))]])
        import scipy.linalg as sla

        _, t_sym = timed(lambda: sla.solve(Kt, np.eye(n_star + 1), assume_a="sym", check_finite=False))
        _, t_inv = timed(lambda: np.linalg.inv(Kt))
        levers["span_cost"].update(scipy_sym_solve_s=t_sym, numpy_inv_s=t_inv)
    levers["kernel_sharing"] = {"kernel_s_per_gamma": span.kernel_time_,
                                "kernel_s_if_per_point": span.kernel_time_ * n_points / len(grid["gamma"])}
    print(f"  span cost: max {levers['span_cost']['max_span_s']:.2f}s at n*={n_star} "
          f"(median span {levers['span_cost']['median_span_s']:.3f}s, median fit "
          f"{levers['span_cost']['median_fit_s']:.3f}s); " + (
              f"scipy sym solve {levers['span_cost'].get('scipy_sym_solve_s', 0):.2f}s vs numpy inv "
              f"{levers['span_cost'].get('numpy_inv_s', 0):.2f}s at that size" if n_star > 1 else ""), flush=True)
    return {"dataset": args.dataset, "l": len(y), "d": d, "grid": grid, "wall_span_s": t_span, "wall_gridsearch_s": t_gs,
            "ratio": t_gs / t_span, "test_error": err, "span_best": span.best_params_, "cv_best": gs.best_params_,
            "levers": levers}


def select_vs_gridpy(args) -> dict:
    X, y, _, _, d = load(args.dataset)
    svm_grid, svm_train = shutil.which("svm-grid"), shutil.which("svm-train")
    if not (svm_grid and svm_train):
        raise SystemExit("svm-grid/svm-train not found: apt-get install libsvm-tools")
    lg = [int(np.round(np.log2(2.0 ** k / d))) for k in args.gamma_steps]
    step = lg[1] - lg[0] if len(lg) > 1 else 1
    log2g = f"{lg[0]},{lg[-1]},{step}"
    log2c = ",".join(str(int(v)) for v in args.log2c)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{args.dataset}.train"
        with open(path, "w") as fh:
            for row, label in zip(X, y):
                fh.write(f"{int(label):+d} " + " ".join(f"{j + 1}:{v:.8g}" for j, v in enumerate(row) if v) + "\n")
        common = ["-log2c", log2c, "-log2g", log2g]
        _, t_ours = timed(lambda: subprocess.run(
            [sys.executable, "-m", "wsvm_span.cli", "select", str(path), *common, "-out", "null", "-png", "null",
             "--quiet"], check=True, capture_output=True, text=True, cwd=tmp))
        ours = subprocess.run([sys.executable, "-m", "wsvm_span.cli", "select", str(path), *common, "-out", "null",
                               "-png", "null", "--quiet"], check=True, capture_output=True, text=True, cwd=tmp)
        theirs, t_theirs = timed(lambda: subprocess.run(
            ["python3", svm_grid, "-svmtrain", svm_train, "-gnuplot", "null", "-out", "null", "-v", "5", *common,
             str(path)], check=True, capture_output=True, text=True, cwd=tmp))
    best_ours, best_theirs = ours.stdout.strip().splitlines()[-1], theirs.stdout.strip().splitlines()[-1]
    print(f"{args.dataset}: grid -log2c {log2c} -log2g {log2g}; wsvm-span select {t_ours:.1f}s -> {best_ours}; "
          f"svm-grid -v 5 {t_theirs:.1f}s -> {best_theirs}; ratio {t_theirs / t_ours:.1f}x", flush=True)
    return {"dataset": args.dataset, "log2c": log2c, "log2g": log2g, "select_s": t_ours, "svm_grid_s": t_theirs,
            "ratio": t_theirs / t_ours, "select_best": best_ours, "svm_grid_best": best_theirs}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dataset", default="splice")
    ap.add_argument("--log2c", type=lambda s: tuple(float(v) for v in s.split(",")), default=(-1.0, 11.0, 2.0),
                    help="log2 C range begin,end,step (default -1,11,2: 7 values)")
    ap.add_argument("--gamma-steps", type=lambda s: [float(v) for v in s.split(",")], default=[-2.0, 0.0, 2.0, 4.0],
                    help="gamma = 2^k / d for these k (default -2,0,2,4)")
    ap.add_argument("--levers", action="store_true", help="also time the search at tol 1e-7, 1e-5, 1e-3")
    ap.add_argument("--select", action="store_true", help="wsvm-span select vs svm-grid instead")
    args = ap.parse_args(argv)
    with single_threaded():
        summary = select_vs_gridpy(args) if args.select else compare(args)
    out = ROOT / "benchmarks" / "out" / f"search-{args.dataset}{'-select' if args.select else ''}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({**summary, "machine": machine_info()}, indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
