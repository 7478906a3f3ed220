"""HalvingSpanSearchCV against HalvingGridSearchCV(SVC(), cv=5, factor=3), GridSearchCV(SVC(), cv=5) and SpanSearchCV
(issue 45, item 6).

All searches run over README's 7 x 4 grid (log2 C = -1..11 step 2, gamma = 2^{-2,0,2,4} / d), refit included, in
the same process one after the other, each under one BLAS thread (``single_threaded``; LIBSVM and this project's
SMO are serial). Each is measured by the CPU seconds of the process during ``fit`` (user + system) and by the test
error of the model it chose. With ``--repeats R`` the searches run in turn R times and the medians are reported.
The subsamples of both halving searches are drawn with ``random_state=--seed``.

Data: README's multiclass sets (``bench_multiclass.load``: image segmentation 1,300 / 1,010, waveform 2,500 /
2,500, MNIST 5,000 / 10,000, features scaled to [0, 1] by the training set) or ``generated``: a two-class problem
of ``--size`` training points and 5,000 test points (``make_classification``: 20 features, 10 informative, 10%
labels flipped, scaled to [0, 1] by the training set: bench_dask.py's problem).

``--grid-sample k`` (for the large sets) runs GridSearchCV on every k-th grid point only, from ``--grid-offset``
on (the 7 C and 4 gamma values all appear for k = 3; k = 7 from 3 takes log2 C = -1, 3, 7, 11, each with another
gamma) and projects its CPU time to the 28 points as (time of the sample) x 28 / (points in
the sample); its chosen model is then the best of the sample, and its test error is marked as such.
``--skip`` leaves searches out (at 20,000 points SpanSearchCV and GridSearchCV take the longest; they can run in
a second process, and the output file names what was left out).

Usage:
  nice -n 10 .venv/bin/python benchmarks/bench_halving.py --dataset image --repeats 3
  nice -n 10 .venv/bin/python benchmarks/bench_halving.py --dataset waveform
  nice -n 10 .venv/bin/python benchmarks/bench_halving.py --dataset mnist
  nice -n 10 .venv/bin/python benchmarks/bench_halving.py --dataset generated --size 20000 --skip grid span
  nice -n 10 .venv/bin/python benchmarks/bench_halving.py --dataset generated --size 20000 --skip halving_grid span \
      --grid-sample 7 --grid-offset 3
Writes benchmarks/out/halving-<dataset>[-<size>].json and prints a README table row.
"""
from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402

import numpy as np  # noqa: E402
from sklearn.experimental import enable_halving_search_cv  # noqa: E402,F401  (HalvingGridSearchCV is experimental)
from sklearn.model_selection import GridSearchCV, HalvingGridSearchCV, ParameterGrid  # noqa: E402
from sklearn.svm import SVC  # noqa: E402

from wsvm_span.model_selection import HalvingSpanSearchCV, SpanSearchCV  # noqa: E402
from wsvm_span.utils.environment import machine_info, single_threaded  # noqa: E402

from bench_multiclass import DATASETS, load, write_out  # noqa: E402  (benchmarks/ is on sys.path)
from bench_search import grid_for, timed_user  # noqa: E402

SIDES = ("halving_span", "halving_grid", "grid", "span")
#: test points of the generated problem
GENERATED_TEST = 5000
#: features of the generated problem (bench_dask.py's)
GENERATED_D = 20


def generated(size: int, seed: int = 0):
    """(X_train, y_train, X_test, y_test, d) of the generated two-class problem (module doc)."""
    from sklearn.datasets import make_classification
    from sklearn.preprocessing import MinMaxScaler

    X, y = make_classification(n_samples=size + GENERATED_TEST, n_features=GENERATED_D, n_informative=10,
                               flip_y=0.1, random_state=seed)
    scaler = MinMaxScaler().fit(X[:size])
    return scaler.transform(X[:size]), y[:size], scaler.transform(X[size:]), y[size:], GENERATED_D


def sampled_grid(grid: dict, every: int, offset: int = 0) -> list[dict]:
    """Every ``every``-th point of the grid from ``offset`` on, as a list of one-point grids (GridSearchCV's
    param_grid)."""
    return [{k: [v] for k, v in p.items()} for p in list(ParameterGrid(grid))[offset::every]]


def searches(grid: dict, seed: int, grid_sample: int, grid_offset: int):
    """The four searches (name -> a function of (X, y) returning the fitted search)."""
    grid_points = grid if grid_sample == 1 else sampled_grid(grid, grid_sample, grid_offset)
    return {
        "halving_span": lambda X, y: HalvingSpanSearchCV(param_grid=grid, random_state=seed).fit(X, y),
        "halving_grid": lambda X, y: HalvingGridSearchCV(SVC(), grid, cv=5, factor=3, random_state=seed).fit(X, y),
        "grid": lambda X, y: GridSearchCV(SVC(), grid_points, cv=5).fit(X, y),
        "span": lambda X, y: SpanSearchCV(param_grid=grid).fit(X, y),
    }


def run(args) -> dict:
    if args.dataset == "generated":
        X, y, Xt, yt, d = generated(args.size)
    else:
        X, y, Xt, yt, d = load(args.dataset)
    grid = grid_for(d, (-1, 11, 2), (-2, 0, 2, 4))
    n_points = len(ParameterGrid(grid))
    sampled = len(sampled_grid(grid, args.grid_sample, args.grid_offset))
    print(f"{args.dataset}: l={len(y)}, test={len(yt)}, d={d}, classes={len(np.unique(y))}; {n_points} grid points"
          f"{f', GridSearchCV on {sampled} of them (projected)' if args.grid_sample > 1 else ''}; load average "
          f"{os.getloadavg()} on {os.cpu_count()} cores", flush=True)
    sides = [s for s in SIDES if s not in args.skip]
    fns = searches(grid, args.seed, args.grid_sample, args.grid_offset)
    cpu = {s: [] for s in sides}
    fitted = {}
    with single_threaded():
        for r in range(args.repeats):
            for side in sides:
                fitted[side], _, c, _ = timed_user(lambda: fns[side](X, y))
                if side == "grid":
                    c *= n_points / sampled
                cpu[side].append(c)
                projected = " (projected)" if side == "grid" and sampled < n_points else ""
                print(f"  run {r + 1}: {side} CPU {c:.2f}s{projected}", flush=True)
    out = {"dataset": args.dataset, "l": len(y), "n_test": len(yt), "d": d, "n_classes": int(len(np.unique(y))),
           "grid": grid, "repeats": args.repeats, "seed": args.seed, "grid_sample": args.grid_sample,
           "grid_offset": args.grid_offset,
           "machine": machine_info(), "sides": {}}
    for side in sides:
        search = fitted[side]
        entry = {"cpu_s": statistics.median(cpu[side]), "runs_cpu_s": cpu[side], "best": search.best_params_,
                 "test_error": float(np.mean(search.predict(Xt) != yt))}
        if side in ("halving_span", "halving_grid"):
            entry.update(n_resources=[int(n) for n in search.n_resources_],
                         n_candidates=[int(n) for n in search.n_candidates_])
        out["sides"][side] = entry
    base = out["sides"]["halving_span"]["cpu_s"]
    for side in sides:
        entry = out["sides"][side]
        entry["cpu_ratio_to_halving_span"] = entry["cpu_s"] / base
        print(f"  {side}: CPU {entry['cpu_s']:.2f}s ({entry['cpu_ratio_to_halving_span']:.2f}x HalvingSpanSearchCV's), "
              f"chose {entry['best']}, test error {100 * entry['test_error']:.2f}%"
              + (f", stages {entry['n_resources']} rows / {entry['n_candidates']} candidates" if "n_resources" in entry
                 else ""), flush=True)
    print(table_row(out))
    return out


def table_row(o: dict) -> str:
    """| data | HalvingSpanSearchCV CPU | HalvingGridSearchCV CPU (ratio) | GridSearchCV CPU (ratio) | SpanSearchCV CPU
    (ratio) | test errors of the choices |"""
    s = o["sides"]
    projected = o["grid_sample"] > 1

    def cell(side):
        if side not in s:
            return "not run"
        mark = " (projected)" if side == "grid" and projected else ""
        return f"{s[side]['cpu_s']:.1f} s{mark} ({s[side]['cpu_ratio_to_halving_span']:.1f}x)"

    errors = " / ".join("n/a" if side not in s else f"{100 * s[side]['test_error']:.2f}%"
                        + ("*" if side == "grid" and projected else "") for side in SIDES)
    return (f"| {o['dataset']} ({o['l']}, {o['d']}, {o['n_classes']}) | {s['halving_span']['cpu_s']:.1f} s | "
            f"{cell('halving_grid')} | {cell('grid')} | {cell('span')} | {errors} |")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dataset", choices=(*DATASETS, "generated"), required=True)
    p.add_argument("--size", type=int, default=20000, help="training points of --dataset generated")
    p.add_argument("--repeats", type=int, default=1, help="timed runs of each search, in turn (medians reported)")
    p.add_argument("--seed", type=int, default=0, help="random_state of both halving searches")
    p.add_argument("--grid-sample", type=int, default=1,
                   help="GridSearchCV on every k-th grid point only, its CPU projected to the whole grid")
    p.add_argument("--grid-offset", type=int, default=0, help="the first grid point of --grid-sample's")
    p.add_argument("--skip", nargs="*", choices=SIDES[1:], default=(),
                   help="searches left out (HalvingSpanSearchCV, the base of the ratios, always runs)")
    args = p.parse_args(argv)
    out = run(args)
    name = (args.dataset + (f"-{args.size}" if args.dataset == "generated" else "")
            + "".join(f"-no-{side}" for side in sorted(args.skip)))
    write_out(f"halving-{name}.json", out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
