"""SpanSearchCV against GridSearchCV(SVC(), cv=5), and ``wsvm-span select`` against LIBSVM's grid.py (issue 13).

Both searches run over the same C x gamma grid (default 7 x 4: log2 C = -1, 1, ..., 11 and
gamma = 2^k / d for k = -2, 0, 2, 4), one run each, refit included, on ONE core each: BLAS pinned to
one thread and n_jobs=1. Both could use more cores alike (GridSearchCV's 5 x 28 fits are independent
jobs; SpanSearchCV's points of one gamma run in parallel threads and its GEMM uses BLAS threads), but
on a shared, loaded machine a multi-core comparison measures the other jobs more than the searches.

Reported per data set:
  * wall and CPU seconds of each search and their ratios. CPU time (this process) is the steadier
    measure on a loaded machine: the wall time also counts the time other jobs held the core;
  * the test error of the model each search selects (its own tie handling: the first best point) and
    under the study's tie rule "worst" (the worst test error among the points tied at the optimum; the
    test error of every grid point comes from an extra, untimed SpanSearchCV run with held-out data);
  * ``--levers``: what each speed lever saves, measured in the same run: the LIBSVM tolerance (the
    search at tol 1e-7 / 1e-5 / 1e-4 / 1e-3: CPU time and the grid points whose span-rule equals tol
    1e-7's), sharing the squared distances across gammas (one RBF kernel per gamma from scratch
    against exp(-gamma D2) of distances computed once), the span-rule from a triangular inverse of the
    Cholesky factor against forming the full bordered inverse (at the grid point with the largest n*),
    and scikit-learn's finiteness scan of the precomputed kernel on every fit.
``--select`` instead times ``wsvm-span select`` against ``svm-grid`` (Debian's libsvm-tools: LIBSVM's
tools/grid.py with svm-train, ``-v 5``, one local worker) on the study's training split written as a
LIBSVM file, over the same grid (log2 gamma rounded to integers, as grid.py takes it).

Usage:
  .venv/bin/python benchmarks/bench_search.py --dataset splice [--levers]
  .venv/bin/python benchmarks/bench_search.py --dataset splice --select
Data: the study's splits (``wsvm_span.data.load_dataset``, seed 0), or ``spambase`` (never used by
the study: UCI file from the data mirror, stratified 50/50 split with seed 0, [0, 1] scaling fitted
on the training half). Writes benchmarks/out/search-<dataset>[-select|-levers].json.
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import resource
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
from sklearn import config_context  # noqa: E402
from sklearn.model_selection import GridSearchCV  # noqa: E402
from sklearn.svm import SVC  # noqa: E402

import wsvm_span as ws  # noqa: E402
from wsvm_span.kernels import rbf_from_squared_distances, squared_distances  # noqa: E402
from wsvm_span.model_selection import SpanSearchCV, TieRule  # noqa: E402
from wsvm_span.model_selection._grid import log2_range  # noqa: E402
from wsvm_span.span.geometry import bordered_inverse  # noqa: E402
from wsvm_span.utils.environment import machine_info, single_threaded  # noqa: E402

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
    """(result, wall seconds, CPU seconds of this process)."""
    return timed_user(fn)[:3]


def timed_user(fn):
    """(result, wall seconds, CPU seconds of this process, its user CPU seconds: CPU less the system time, which
    on a VM is mostly the first touch of memory the process has not used before)."""
    t0, c0, u0 = time.perf_counter(), time.process_time(), resource.getrusage(resource.RUSAGE_SELF).ru_utime
    out = fn()
    return (out, time.perf_counter() - t0, time.process_time() - c0,
            resource.getrusage(resource.RUSAGE_SELF).ru_utime - u0)


def cpu(fn) -> float:
    return timed(fn)[2]


def load_average() -> list[float]:
    return [round(v, 2) for v in os.getloadavg()]


def compare(args) -> dict:
    X, y, Xt, yt, d = load(args.dataset)
    grid = grid_for(d, args.log2c, args.gamma_steps)
    print(f"{args.dataset}: l={len(y)}, test={len(yt)}, d={d}; grid {len(grid['C'])} C x {len(grid['gamma'])} gamma; "
          f"load average {load_average()} on {os.cpu_count()} cores", flush=True)
    span, w_span, c_span = timed(lambda: SpanSearchCV(param_grid=grid).fit(X, y))
    r = span.cv_results_
    print(f"  SpanSearchCV: wall {w_span:.1f}s, CPU {c_span:.1f}s (wall parts: kernels {span.kernel_time_:.1f}s, fits "
          f"{r['mean_fit_time'].sum():.1f}s, estimates {r['mean_score_time'].sum():.1f}s, refit {span.refit_time_:.1f}s)",
          flush=True)
    gs, w_gs, c_gs = timed(lambda: GridSearchCV(SVC(), grid, cv=5).fit(X, y))
    print(f"  GridSearchCV(SVC(), cv=5): wall {w_gs:.1f}s, CPU {c_gs:.1f}s (refit {gs.refit_time_:.1f}s); "
          f"ratio wall {w_gs / w_span:.1f}x, CPU {c_gs / c_span:.1f}x", flush=True)

    # Untimed: the test error of every grid point (models on the whole training set, = the refits).
    held = SpanSearchCV(param_grid=grid, tie_rule="worst").fit(X, y, heldout=(Xt, yt))
    test_err = held.cv_results_["test_error"]
    err = {
        "span_first": float(np.mean(span.predict(Xt) != yt)),
        "cv_first": float(np.mean(gs.predict(Xt) != yt)),
        "span_worst_tie": float(test_err[held.best_index_]),
        "cv_worst_tie": float(test_err[TieRule("worst")({"mean_test_score": gs.cv_results_["mean_test_score"],
                                                          "test_error": test_err})]),
        "min_over_grid": float(test_err.min()),
        "span_tied": int(TieRule().tied(span.cv_results_).size),
        "cv_tied": int(TieRule().tied(gs.cv_results_).size),
    }
    print(f"  test error (%): span-rule {100 * err['span_first']:.2f} (worst of {err['span_tied']} tied "
          f"{100 * err['span_worst_tie']:.2f}); 5-fold CV {100 * err['cv_first']:.2f} (worst of {err['cv_tied']} tied "
          f"{100 * err['cv_worst_tie']:.2f}); min over grid {100 * err['min_over_grid']:.2f}", flush=True)
    print(f"  selected: span-rule {span.best_params_}, 5-fold CV {gs.best_params_}", flush=True)
    return {"dataset": args.dataset, "l": len(y), "d": d, "grid": grid,
            "span": {"wall_s": w_span, "cpu_s": c_span, "kernel_wall_s": span.kernel_time_,
                     "fit_wall_s": float(r["mean_fit_time"].sum()), "estimate_wall_s": float(r["mean_score_time"].sum()),
                     "refit_wall_s": span.refit_time_, "best": span.best_params_},
            "gridsearch": {"wall_s": w_gs, "cpu_s": c_gs, "refit_wall_s": gs.refit_time_, "best": gs.best_params_},
            "ratio_wall": w_gs / w_span, "ratio_cpu": c_gs / c_span, "test_error": err, "load_average_after": load_average()}


def levers(args) -> dict:
    """What each speed lever saves, in CPU seconds of this process (see module doc)."""
    X, y, _, _, d = load(args.dataset)
    grid = grid_for(d, args.log2c, args.gamma_steps)
    n_points = len(grid["C"]) * len(grid["gamma"])
    out: dict = {"dataset": args.dataset, "grid": grid}
    ref = None
    for tol in (1e-7, 1e-5, 1e-4, 1e-3):
        s, _, c = timed(lambda: SpanSearchCV(SVC(tol=tol), grid).fit(X, y))
        rule = s.cv_results_["span_rule"]
        ref = rule if ref is None else ref
        same = int(np.sum(rule == ref))
        out[f"tol={tol:g}"] = {"cpu_s": c, "same_span_rule_points": same, "selected": s.best_params_}
        print(f"  tol={tol:g}: search CPU {c:.2f}s, span-rule equal to tol=1e-7's on {same}/{n_points} points, "
              f"selects {s.best_params_}", flush=True)

    per_gamma = cpu(lambda: [ws.rbf_kernel(X, gamma=g) for g in grid["gamma"]])

    def shared():
        D2, K = squared_distances(X), None
        for g in grid["gamma"]:
            K = rbf_from_squared_distances(D2, g, out=K)

    out["kernels"] = {"rbf_kernel_per_gamma_cpu_s": per_gamma, "distances_once_cpu_s": cpu(shared)}
    print(f"  kernels of {len(grid['gamma'])} gammas: rbf_kernel per gamma {per_gamma:.2f}s, squared distances once "
          f"+ exp per gamma {out['kernels']['distances_once_cpu_s']:.2f}s CPU", flush=True)

    # The span-rule at the grid point with the largest n*, and one fit with and without sklearn's scan.
    r = SpanSearchCV(SVC(tol=1e-5), grid).fit(X, y).cv_results_
    p = r["params"][int(np.argmax(r["n_inbound"]))]
    K = ws.rbf_kernel(X, gamma=p["gamma"])
    model = ws.fit_svm(K, y, p["C"], tol=1e-5)
    K_MM = K[np.ix_(model.inbound, model.inbound)]
    t_diag = min(cpu(lambda: bordered_inverse(K_MM).diagonal()) for _ in range(3))
    t_full = min(cpu(lambda: bordered_inverse(K_MM).inverse) for _ in range(3))
    fit_args = dict(C=1.0, kernel="precomputed", tol=1e-5)
    t_scan = min(cpu(lambda: SVC(**fit_args).fit(K, y, sample_weight=model.C)) for _ in range(3))
    with config_context(assume_finite=True):
        t_noscan = min(cpu(lambda: SVC(**fit_args).fit(K, y, sample_weight=model.C)) for _ in range(3))
    out["span"] = {"params": p, "n_star": int(model.inbound.size), "diagonal_cpu_s": t_diag,
                   "full_inverse_cpu_s": t_full}
    out["fit_finiteness_scan"] = {"with_scan_cpu_s": t_scan, "assume_finite_cpu_s": t_noscan}
    print(f"  span-rule's bordered inverse at n*={model.inbound.size} ({p}): triangular inverse + diagonal "
          f"{1e3 * t_diag:.1f} ms, full inverse {1e3 * t_full:.1f} ms (best of 3)", flush=True)
    print(f"  one fit at that point: with scikit-learn's finiteness scan {t_scan:.3f}s, without {t_noscan:.3f}s "
          f"(best of 3)", flush=True)
    return out


def select_vs_gridpy(args) -> dict:
    X, y, _, _, d = load(args.dataset)
    svm_grid, svm_train = shutil.which("svm-grid"), shutil.which("svm-train")
    if not (svm_grid and svm_train):
        raise SystemExit("svm-grid/svm-train not found: apt-get install libsvm-tools")
    lg = [int(np.round(np.log2(2.0 ** k / d))) for k in args.gamma_steps]
    step = lg[1] - lg[0] if len(lg) > 1 else 1
    log2g = f"{lg[0]},{lg[-1]},{step}"
    log2c = ",".join(f"{v:g}" for v in args.log2c)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{args.dataset}.train"
        with open(path, "w") as fh:
            for row, label in zip(X, y):
                fh.write(f"{int(label):+d} " + " ".join(f"{j + 1}:{v:.8g}" for j, v in enumerate(row) if v) + "\n")
        common = ["-log2c", log2c, "-log2g", log2g]
        ours, w_ours, _ = timed(lambda: subprocess.run(
            [sys.executable, "-m", "wsvm_span.cli", "select", str(path), *common, "-out", "null", "-png", "null",
             "--quiet"], check=True, capture_output=True, text=True, cwd=tmp))
        theirs, w_theirs, _ = timed(lambda: subprocess.run(
            ["python3", svm_grid, "-svmtrain", svm_train, "-gnuplot", "null", "-out", "null", "-v", "5", *common,
             str(path)], check=True, capture_output=True, text=True, cwd=tmp))
    best_ours, best_theirs = ours.stdout.strip().splitlines()[-1], theirs.stdout.strip().splitlines()[-1]
    print(f"{args.dataset}: grid -log2c {log2c} -log2g {log2g}; wsvm-span select {w_ours:.1f}s -> {best_ours}; "
          f"svm-grid -v 5 {w_theirs:.1f}s -> {best_theirs}; ratio {w_theirs / w_ours:.1f}x (wall); "
          f"load average {load_average()}", flush=True)
    return {"dataset": args.dataset, "log2c": log2c, "log2g": log2g, "select_wall_s": w_ours,
            "svm_grid_wall_s": w_theirs, "ratio_wall": w_theirs / w_ours, "select_best": best_ours,
            "svm_grid_best": best_theirs, "load_average_after": load_average()}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dataset", default="splice")
    ap.add_argument("--log2c", type=lambda s: tuple(float(v) for v in s.split(",")), default=(-1.0, 11.0, 2.0),
                    help="log2 C range begin,end,step (default -1,11,2: 7 values)")
    ap.add_argument("--gamma-steps", type=lambda s: [float(v) for v in s.split(",")], default=[-2.0, 0.0, 2.0, 4.0],
                    help="gamma = 2^k / d for these k (default -2,0,2,4)")
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--levers", action="store_true", help="measure the speed levers instead")
    mode.add_argument("--select", action="store_true", help="wsvm-span select vs svm-grid instead")
    args = ap.parse_args(argv)
    with single_threaded():
        if args.select:
            summary, suffix = select_vs_gridpy(args), "-select"
        elif args.levers:
            summary, suffix = levers(args), "-levers"
        else:
            summary, suffix = compare(args), ""
    out = ROOT / "benchmarks" / "out" / f"search-{args.dataset}{suffix}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({**summary, "machine": machine_info()}, indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
