"""SpanSearchCV on multiclass data against GridSearchCV(SVC(), cv=5) (issue 23).

Both searches run over the same C x gamma grid (log2 C = -1, 1, ..., 11 and gamma = 2^k / d for
k = -2, 0, 2, 4: the 7 x 4 grid of bench_search.py), refit included, on ONE core each (BLAS pinned to
one thread, n_jobs=1), in the same process, one after the other; with ``--repeats R`` the two run in
turn R times (span, grid, span, grid, ...) and the medians are reported, so that a change of the
machine's load affects both sides. SpanSearchCV trains ONE one-vs-one classifier per grid point on a
kernel shared per gamma and scores it by the multiclass span-rule; GridSearchCV trains five plus the
refit with LIBSVM computing its own kernel.

Reported per data set: wall and CPU seconds of each search and their ratios; the test error of the
model each search selects (the first best point in grid order, both); the best test error over the
grid; and, untimed, the agreement of the multiclass span-rule with the exact multiclass LOO error over the
grid (mean and max absolute difference, whether both select the same grid point, in how many gamma columns
they select the same C, the test error of each point and of the LOO's choice), and the exact LOO's
retraining count. The agreement is computed by the library on the same kernels, the models trained by
``--loo-engine`` (default "smo": its exact LOO starts every retraining from the full machine without the
point, the same optimum several times faster than LIBSVM from scratch); the span-rule of those models is
compared with the search's own (LIBSVM's models) and the largest difference is reported.

Data (features scaled to [0, 1] by the training set's min and max, the study's MinMaxScaler01):
  mnist     5,000 training points drawn stratified (seed 0) from the 60,000, the 10,000 test points, 10 classes
  waveform  the UCI file (5,000 rows, 21 features, 3 classes), stratified 50/50 split (seed 0), as
            bench_search.py splits spambase
  image     the UCI image segmentation files (segmentation.data + segmentation.test, 2,310 rows, 19
            features, 7 classes) split stratified (seed 0) into the study's image sizes, 1,300 training
            and 1,010 test points (Table 1; the study's binary "image" is the same rows); with
            ``--image-split published``, the files as UCI splits them: 210 rows for training, 2,100 for testing
The UCI files are read from the data mirror and checked against their sha256 (MANIFEST.md); MNIST
through the data registry (pinned checksums).

Usage:
  nice -n 10 .venv/bin/python benchmarks/bench_multiclass.py --dataset image --repeats 5
  nice -n 10 .venv/bin/python benchmarks/bench_multiclass.py --dataset mnist [--no-loo]
Writes benchmarks/out/multiclass-<dataset>[-published][-timing].json and prints the README table row.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from sklearn.model_selection import GridSearchCV, ParameterGrid, train_test_split  # noqa: E402
from sklearn.svm import SVC  # noqa: E402

from wsvm_span import multiclass as mc  # noqa: E402
from wsvm_span.data.scaling import MinMaxScaler01  # noqa: E402
from wsvm_span.engines import ENGINE_NAMES  # noqa: E402
from wsvm_span.kernels import rbf_from_squared_distances, squared_distances  # noqa: E402
from wsvm_span.model_selection import SpanSearchCV  # noqa: E402
from wsvm_span.model_selection._search import DEFAULT_TOL  # noqa: E402
from wsvm_span.utils.environment import machine_info  # noqa: E402

from bench_search import grid_for, timed_user  # noqa: E402  (the same grid and timer; benchmarks/ is on sys.path)

ROOT = Path(__file__).resolve().parents[1]
MIRROR = Path(os.environ.get("WSVM_DATA_MIRROR", ROOT.parent / "shared" / "data"))
#: sha256 of the UCI files (MANIFEST.md of the data mirror); they are not in the study's registry
UCI_SHA256 = {
    "waveform/uci/waveform.data": "da332f3121943f586826f5d1b2cdd354548c59f71ddbf28c4d0c2eb623d7bfc3",
    "image/uci/segmentation.data": "ed5b5aee8081bbe875357149f73f50d7085e22cc0897f5b52eb7b52fea969a5b",
    "image/uci/segmentation.test": "2e9e966479d54c6aaec309059376dd9c89c1b46bf3a23aceeefb36d20d93a189",
}
MNIST_TRAIN_SIZE = 5000
#: the study's image training size (Table 1: 1300 / 1010)
IMAGE_TRAIN_SIZE = 1300
DATASETS = ("mnist", "waveform", "image")


def _uci_text(relpath: str) -> str:
    data = (MIRROR / relpath).read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if digest != UCI_SHA256[relpath]:
        sys.exit(f"{MIRROR / relpath}: sha256 {digest}, expected {UCI_SHA256[relpath]} (MANIFEST.md)")
    return data.decode("ascii")


def _segmentation(relpath: str):
    """(X, class names) of a UCI segmentation file: a Lisp-comment header, a column-name line, then
    "CLASS,f1,...,f19" rows."""
    rows = [line.split(",") for line in _uci_text(relpath).splitlines()
            if line and not line.startswith(";") and "," in line and not line.startswith("REGION-")]
    return np.array([[float(v) for v in r[1:]] for r in rows]), np.array([r[0] for r in rows])


def load(name: str, image_split: str = "study"):
    """(X_train, y_train, X_test, y_test, d): see the module doc."""
    if name == "mnist":
        from wsvm_span.data.files import ensure_file
        from wsvm_span.data.formats import parse_mnist_images, parse_mnist_labels
        from wsvm_span.data.registry import MNIST_FILES

        path = {k: ensure_file(spec, mirror=str(MIRROR)) for k, spec in MNIST_FILES.items()}
        X, y = parse_mnist_images(path["train_images"]).astype(float), parse_mnist_labels(path["train_labels"])
        Xtr, _, ytr, _ = train_test_split(X, y, train_size=MNIST_TRAIN_SIZE, stratify=y, random_state=0)
        Xte, yte = parse_mnist_images(path["test_images"]).astype(float), parse_mnist_labels(path["test_labels"])
    elif name == "waveform":
        data = np.array([[float(v) for v in line.split(",")] for line in _uci_text("waveform/uci/waveform.data").split()])
        X, y = data[:, :-1], data[:, -1].astype(int)
        Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.5, stratify=y, random_state=0)
    elif name == "image":
        Xtr, ytr = _segmentation("image/uci/segmentation.data")
        Xte, yte = _segmentation("image/uci/segmentation.test")
        if image_split == "study":
            X, y = np.vstack([Xtr, Xte]), np.concatenate([ytr, yte])
            Xtr, Xte, ytr, yte = train_test_split(X, y, train_size=IMAGE_TRAIN_SIZE, stratify=y, random_state=0)
    else:
        raise ValueError(f"unknown data set {name!r}; one of {DATASETS}")
    scaler = MinMaxScaler01().fit(Xtr)
    return scaler.transform(Xtr), ytr, scaler.transform(Xte), yte, Xtr.shape[1]


def first_best(values) -> int:
    """GridSearchCV's choice: the first minimum in grid order."""
    return int(np.flatnonzero(values == np.min(values))[0])


def loo_over_grid(X, y, Xt, yt, grid, engine: str):
    """(params, span-rule, exact LOO error, test error, retrainings) of every grid point in SpanSearchCV's
    order, from the library on the same kernels: the one-vs-one model trained by ``engine`` at the
    search's tolerance; its exact LOO retrains with that engine (this project's SMO starts each retraining
    from the full machine without the point: the same optimum, several times faster than LIBSVM afresh)."""
    D2, D2_test = squared_distances(X), squared_distances(Xt, X)
    params = list(ParameterGrid(grid))
    rule, loo, test = np.empty(len(params)), np.empty(len(params)), np.empty(len(params))
    retrained = 0
    for gamma in grid["gamma"]:
        K, K_test = rbf_from_squared_distances(D2, gamma), rbf_from_squared_distances(D2_test, gamma)
        for C in grid["C"]:
            model = mc.fit_one_vs_one(K, y, C, engine=engine, tol=DEFAULT_TOL, check_input=False)
            exact = mc.leave_one_out(model, K, check_input=False)
            at = params.index({"C": C, "gamma": gamma})
            rule[at], loo[at] = mc.span_rule(model, K), exact.loo_error
            test[at] = mc.test_error(model, K_test, yt)
            retrained += exact.n_retrained
    return params, rule, loo, test, retrained


def agreement(span_rule, loo, params, gammas) -> dict:
    """Span-rule against exact LOO over the grid: absolute differences, the same selected point, and
    per gamma column the same selected C."""
    diff = np.abs(span_rule - loo)
    same_c = 0
    for g in gammas:
        col = np.flatnonzero([p["gamma"] == g for p in params])
        same_c += int(col[first_best(span_rule[col])] == col[first_best(loo[col])])
    return {"mean_abs_diff": float(diff.mean()), "max_abs_diff": float(diff.max()),
            "same_point": bool(first_best(span_rule) == first_best(loo)), "same_C_per_gamma": same_c,
            "n_gamma": len(gammas)}


def run(args) -> dict:
    X, y, Xt, yt, d = load(args.dataset, args.image_split)
    grid = grid_for(d, args.log2c, args.gamma_steps)
    n_points = len(grid["C"]) * len(grid["gamma"])
    print(f"{args.dataset}: l={len(y)}, test={len(yt)}, d={d}, classes={len(np.unique(y))}; grid {len(grid['C'])} C x "
          f"{len(grid['gamma'])} gamma = {n_points} points; load average {os.getloadavg()} on {os.cpu_count()} cores",
          flush=True)
    # (wall, CPU = user + system, user) seconds of each run. Each search runs twice in a row and both runs are
    # kept: "cold" (the first: after the other side's search) and the timed one (the second, back to back). The
    # system part of a run is mostly the kernel's first touch of memory; on a VM that hands freed memory back to its
    # host after a few seconds (virtio-balloon free page reporting, as on the machine of the README's figures) that
    # costs ~2 ms per MB every time instead of ~0.1 ms once (benchmarks/probe_first_touch.py), and it falls on the
    # side that allocates large arrays (SpanSearchCV's l x l squared distances and kernel: 0.2 s of a 1.6 s
    # waveform search, cold) however the runs are ordered. Back to back, both sides run on memory the process has
    # just used, as every run does on a machine that keeps it.
    runs = {"span": [], "grid": [], "span_libsvm": [], "span_cold": [], "grid_cold": []}
    span = gs = span_libsvm = None

    def search_span():
        return SpanSearchCV(param_grid=grid).fit(X, y)

    def search_grid():
        return GridSearchCV(SVC(), grid, cv=5).fit(X, y)

    for r in range(args.repeats):
        _, w0, c0, u0 = timed_user(search_span)
        runs["span_cold"].append((w0, c0, u0))
        span, w, c, u = timed_user(search_span)
        runs["span"].append((w, c, u))
        # the same search trained by LIBSVM from zero (engine="sklearn"): what the warm-started default saves
        span_libsvm, w3, c3, u3 = timed_user(lambda: SpanSearchCV(param_grid=grid, engine="sklearn").fit(X, y))
        runs["span_libsvm"].append((w3, c3, u3))
        _, w4, c4, u4 = timed_user(search_grid)
        runs["grid_cold"].append((w4, c4, u4))
        gs, w2, c2, u2 = timed_user(search_grid)
        runs["grid"].append((w2, c2, u2))
        print(f"  run {r + 1}: SpanSearchCV wall {w:.2f}s CPU {c:.2f}s user {u:.2f}s (cold: CPU {c0:.2f}s user "
              f"{u0:.2f}s; engine sklearn: {w3:.2f}s / {c3:.2f}s); GridSearchCV(SVC(), cv=5) wall {w2:.2f}s CPU "
              f"{c2:.2f}s user {u2:.2f}s (cold: CPU {c4:.2f}s user {u4:.2f}s); ratio wall {w2 / w:.1f}x CPU "
              f"{c2 / c:.2f}x user {u2 / u:.2f}x (cold: CPU {c4 / c0:.2f}x user {u4 / u0:.2f}x)", flush=True)
    ratio_wall = statistics.median(g[0] / s[0] for s, g in zip(runs["span"], runs["grid"]))
    ratio_cpu = statistics.median(g[1] / s[1] for s, g in zip(runs["span"], runs["grid"]))
    ratio_user = statistics.median(g[2] / s[2] for s, g in zip(runs["span"], runs["grid"]))
    ratio_cpu_cold = statistics.median(g[1] / s[1] for s, g in zip(runs["span_cold"], runs["grid_cold"]))
    ratio_user_cold = statistics.median(g[2] / s[2] for s, g in zip(runs["span_cold"], runs["grid_cold"]))
    engine_ratio_cpu = statistics.median(g[1] / s[1] for s, g in zip(runs["span"], runs["span_libsvm"]))
    med = {side: [statistics.median(t[i] for t in runs[side]) for i in (0, 1, 2)] for side in runs}
    r = span.cv_results_
    print(f"  SpanSearchCV parts (last run, wall): kernels {span.kernel_time_:.2f}s, fits {r['mean_fit_time'].sum():.2f}s, "
          f"estimates {r['mean_score_time'].sum():.2f}s, refit {span.refit_time_:.2f}s", flush=True)
    err_span = float(np.mean(span.predict(Xt) != yt))
    err_grid = float(np.mean(gs.predict(Xt) != yt))
    out = {
        "dataset": args.dataset, "l": len(y), "n_test": len(yt), "d": d, "n_classes": int(len(np.unique(y))),
        "grid": grid, "repeats": args.repeats, "runs": runs,
        "span": {"wall_s": med["span"][0], "cpu_s": med["span"][1], "user_s": med["span"][2], "best": span.best_params_,
                 "test_error": err_span, "kernel_wall_s": span.kernel_time_,
                 "fit_wall_s": float(r["mean_fit_time"].sum()), "estimate_wall_s": float(r["mean_score_time"].sum()),
                 "refit_wall_s": span.refit_time_},
        "gridsearch": {"wall_s": med["grid"][0], "cpu_s": med["grid"][1], "user_s": med["grid"][2], "best": gs.best_params_,
                       "test_error": err_grid, "refit_wall_s": gs.refit_time_},
        "span_engine": span.engine, "span_libsvm": {"wall_s": med["span_libsvm"][0], "cpu_s": med["span_libsvm"][1],
                                                    "best": span_libsvm.best_params_,
                                                    "fit_wall_s": float(span_libsvm.cv_results_["mean_fit_time"].sum())},
        "engine_ratio_cpu": engine_ratio_cpu,
        "ratio_wall": ratio_wall, "ratio_cpu": ratio_cpu, "ratio_user": ratio_user,
        "ratio_cpu_cold": ratio_cpu_cold, "ratio_user_cold": ratio_user_cold, "machine": machine_info(),
    }
    print(f"  medians: SpanSearchCV {med['span'][0]:.2f}s / {med['span'][1]:.2f}s CPU, GridSearchCV {med['grid'][0]:.2f}s / "
          f"{med['grid'][1]:.2f}s CPU; ratio wall {ratio_wall:.1f}x, CPU {ratio_cpu:.2f}x, user CPU {ratio_user:.2f}x "
          f"(cold: CPU {ratio_cpu_cold:.2f}x, user CPU {ratio_user_cold:.2f}x); "
          f"SpanSearchCV by LIBSVM from zero "
          f"{med['span_libsvm'][1]:.2f}s CPU ({engine_ratio_cpu:.2f}x the default's)", flush=True)
    print(f"  selected: span-rule {span.best_params_} (test error {100 * err_span:.2f}%), 5-fold CV {gs.best_params_} "
          f"(test error {100 * err_grid:.2f}%)", flush=True)

    if args.loo:
        t0 = time.perf_counter()
        params, span_rule, loo, test_err, retrained = loo_over_grid(X, y, Xt, yt, grid, args.loo_engine)
        agree = agreement(span_rule, loo, params, grid["gamma"])
        # the span-rule of the models the exact LOO retrains, against the search's own (LIBSVM's models)
        searched = np.asarray(r["span_rule"])
        agree.update(loo_engine=args.loo_engine, n_retrained=retrained,
                     max_abs_diff_to_search=float(np.max(np.abs(span_rule - searched))),
                     loo_wall_s=time.perf_counter() - t0, min_test_error=float(test_err.min()),
                     test_error_span_choice=float(test_err[first_best(span_rule)]),
                     test_error_loo_choice=float(test_err[first_best(loo)]),
                     span_rule=span_rule.tolist(), loo_error=loo.tolist(), test_error=test_err.tolist())
        out["loo_agreement"] = agree
        print(f"  span-rule vs exact LOO over {n_points} points: mean |diff| {100 * agree['mean_abs_diff']:.2f} points "
              f"(max {100 * agree['max_abs_diff']:.2f}), same point: {agree['same_point']}, same C in "
              f"{agree['same_C_per_gamma']}/{agree['n_gamma']} gamma columns; test error of the LOO's choice "
              f"{100 * agree['test_error_loo_choice']:.2f}%, min over grid {100 * agree['min_test_error']:.2f}% "
              f"({agree['loo_wall_s']:.0f}s, {retrained} machines retrained by {args.loo_engine}; the span-rule of "
              f"these models differs from the search's by at most {100 * agree['max_abs_diff_to_search']:.2f} points)",
              flush=True)
    print(table_row(out))
    return out


def table_row(o: dict) -> str:
    a = o.get("loo_agreement")
    loo = (f"{100 * a['mean_abs_diff']:.2f} / {'yes' if a['same_point'] else 'no'} "
           f"({a['same_C_per_gamma']}/{a['n_gamma']}) | {100 * a['min_test_error']:.2f}%") if a else "not run | "
    return (f"| {o['dataset']} ({o['l']}, {o['d']}, k = {o['n_classes']}) | {o['span']['wall_s']:.1f} s / "
            f"{o['span']['cpu_s']:.1f} s | {o['gridsearch']['wall_s']:.1f} s / {o['gridsearch']['cpu_s']:.1f} s | "
            f"{o['ratio_wall']:.1f}x / {o['ratio_cpu']:.2f}x / {o['ratio_user']:.2f}x | {100 * o['span']['test_error']:.2f}% / "
            f"{100 * o['gridsearch']['test_error']:.2f}% | {loo} |")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dataset", choices=DATASETS, required=True)
    p.add_argument("--repeats", type=int, default=1, help="timed runs of each search, in turn (medians reported)")
    p.add_argument("--log2c", type=float, nargs=3, default=(-1, 11, 2), metavar=("BEGIN", "END", "STEP"))
    p.add_argument("--gamma-steps", type=float, nargs="+", default=(-2, 0, 2, 4), help="k of gamma = 2^k / d")
    p.add_argument("--image-split", choices=("study", "published"), default="study",
                   help="image: the study's 1300/1010 sizes from both UCI files, or UCI's own 210/2100 files")
    p.add_argument("--no-loo", dest="loo", action="store_false", help="skip the span-rule vs exact LOO agreement")
    p.add_argument("--loo-engine", choices=ENGINE_NAMES, default="smo",
                   help="engine of the models whose span-rule and exact LOO are compared (default smo: warm-started "
                        "retraining)")
    args = p.parse_args(argv)
    out = run(args)
    name = (args.dataset + ("-published" if args.dataset == "image" and args.image_split == "published" else "")
            + ("" if args.loo else "-timing"))  # a timing-only run never overwrites an agreement
    write_out(f"multiclass-{name}.json", out)
    return 0


def write_out(filename: str, out: dict) -> None:
    """Write a benchmark's results as benchmarks/out/<filename> (JSON) and say where."""
    dest = ROOT / "benchmarks" / "out" / filename
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(json.dumps(out, indent=2, default=str))
    print(f"wrote {dest.relative_to(ROOT)}")


if __name__ == "__main__":
    sys.exit(main())
