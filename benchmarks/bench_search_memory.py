"""SpanSearchCV's memory estimate (``memory_estimate``, issue 45) against the peak it measures.

Each case runs in a process of its own: the data (``make_classification``, 20 features scaled to [0, 1], 10%
labels flipped), ``memory_estimate`` (before the search: nothing is allocated), then the search with its refit,
measured as the resident-set high-water mark (VmHWM) during ``fit`` less the resident size before it
(``engines.measure.peak_rss_reset``: the mark is reset and freed memory handed back first). The grid is a 3 x 3
C x gamma grid whose largest gamma and C make every point an in-bound SV (the worst case the estimate assumes),
unless ``--typical``: gammas at most 2^-1, where the models keep a fraction of the points in-bound. One BLAS
thread; ``n_jobs`` as the case says. Prints a markdown table (docs/selecting.md, "Memory and progress") and writes
benchmarks/out/search-memory-{worst,typical,extra}.json.

  .venv/bin/python benchmarks/bench_search_memory.py [--sizes 2000 5000 10000] [--typical]
  .venv/bin/python benchmarks/bench_search_memory.py --sizes 2000 --extra   # exact LOO, span bound, LIBSVM
"""
from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

OUT = Path(__file__).resolve().parent / "out"
#: the grid: the largest gamma (2^5 on [0, 1]^20: the kernel is nearly the identity) with C >= 1 puts every point
#: in-bound (at 2^3, two thirds of them on 5,000 points); the typical grid stops at 2^-1
C_GRID = [0.5, 8.0, 128.0]
GAMMAS = {"worst": [2.0**-5, 2.0**-1, 2.0**5], "typical": [2.0**-7, 2.0**-4, 2.0**-1]}
#: (classes, criterion, n_jobs, engine) per size; cv_error's 5 folds; 3 classes: three one-vs-one machines
CASES = [(2, "span_rule", 1, "smo"), (2, "cv_error", 1, "smo"), (3, "span_rule", 1, "smo"), (3, "cv_error", 1, "smo"),
         (2, "span_rule", 2, "smo")]
#: ``--extra``: the criteria that take minutes at the worst case (the exact LOO retrains every point, the span bound
#: solves a QP per point and one on all of them for the enclosing ball), and LIBSVM as the trainer
EXTRA = [(2, "loo_error", 1, "smo"), (3, "loo_error", 1, "smo"), (2, "span_bound", 1, "smo"),
         (2, "span_rule", 1, "sklearn")]


def child(case: dict) -> dict:
    """One case in this process: the estimate, then the measured search."""
    import numpy as np
    from sklearn.datasets import make_classification
    from sklearn.preprocessing import MinMaxScaler

    from wsvm_span.engines.measure import peak_rss_reset, peak_rss_since
    from wsvm_span.model_selection import SpanSearchCV

    X, y = make_classification(n_samples=case["l"], n_features=20, n_informative=10, n_classes=case["classes"],
                               flip_y=0.1, random_state=0)
    X = MinMaxScaler().fit_transform(X)
    search = SpanSearchCV(param_grid={"C": C_GRID, "gamma": GAMMAS[case["grid"]]}, criterion=case["criterion"],
                          n_jobs=case["n_jobs"], engine=case["engine"])
    estimate = search.memory_estimate(X, y)
    base = peak_rss_reset()
    t0 = time.perf_counter()
    search.fit(X, y)
    seconds = time.perf_counter() - t0
    peak = peak_rss_since(base)
    return {**case, "estimate_mb": estimate.mb, "peak_mb": peak, "ratio": peak / estimate.mb, "seconds": seconds,
            "max_inbound": int(np.max(search.cv_results_["n_inbound"])), "summary": estimate.summary()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[2000, 5000, 10000])
    parser.add_argument("--typical", action="store_true", help="the grid without the worst-case points")
    parser.add_argument("--extra", action="store_true", help="the slow criteria and LIBSVM instead of the cases")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(json.loads(args.child))))
        return
    grid = "typical" if args.typical else "worst"
    rows = []
    print("| l | classes | criterion | n_jobs | engine | grid | estimate MB | measured peak MB | measured / estimate | "
          "max n_inbound | fit s |\n|---|---|---|---|---|---|---|---|---|---|---|")
    for l in args.sizes:
        for classes, criterion, n_jobs, engine in EXTRA if args.extra else CASES:
            case = {"l": l, "classes": classes, "criterion": criterion, "n_jobs": n_jobs, "engine": engine,
                    "grid": grid}
            done = subprocess.run([sys.executable, __file__, "--child", json.dumps(case)], capture_output=True,
                                  text=True, check=True)
            row = json.loads(done.stdout.strip().splitlines()[-1])
            rows.append(row)
            print(f"| {l:,} | {classes} | {criterion} | {n_jobs} | {engine} | {grid} | {row['estimate_mb']:,.0f} | "
                  f"{row['peak_mb']:,.0f} | {row['ratio']:.2f} | {row['max_inbound']:,} | {row['seconds']:.0f} |",
                  flush=True)
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / f"search-memory-{'extra' if args.extra else grid}.json").write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
