"""SpanSearchCV on the kernel row cache (``cache_size``, issue 45) against the whole kernel and GridSearchCV.

One generated two-class problem per size (``make_classification``: 10 features, 5 informative, 5% labels flipped,
scaled to [0, 1]; 2,000 more points drawn the same way as the test set) over README's 7 x 4 grid (log2 C = -1..11
step 2, gamma = 2^{-2,0,2,4} / d). Each search runs in a process of its own with one BLAS thread, measured by CPU
seconds (user + system of the process during fit, refit included) and by the resident-set high-water mark during
fit less the resident size before it (``engines.measure.peak_rss_reset``):

- ``rows``: ``SpanSearchCV(cache_size=MB)``, the whole grid;
- ``whole``: ``SpanSearchCV(max_memory=None)`` on the whole kernel (16 l^2 bytes and more), the whole grid, only for
  sizes up to ``--whole-max``;
- ``grid``: ``GridSearchCV(SVC(cache_size=MB), cv=5)`` (SVC's defaults otherwise) on a sample of the grid points
  (``--sample``: every k-th point of the 28; the default 3 takes 10 points, every C and every gamma among them), its
  time projected to the 28 points as (time of the sample) x 28 / (points in the sample), and its peak measured on
  the sample. Its chosen point is the best of the sample only.

With ``--mnist`` the problem is multiclass instead: the first l of MNIST's 60,000 training digits (10 classes, 784
pixels scaled to [0, 1], read from ``--mnist-dir``: the idx files of /work/shared/data/mnist) and the first 2,000 test
digits, over a 3 x 2 grid (C = 2, 8, 32; gamma = 2^-6, 2^-4): the one-vs-one machines on the row cache against the
whole kernel (GridSearchCV is not run).

Prints a markdown table and writes benchmarks/out/row-cache.json (row-cache-mnist.json with ``--mnist``).

  nice -n 5 .venv/bin/python benchmarks/bench_row_cache.py --sizes 10000 20000 --cache-mb 100 --whole-max 10000
  nice -n 5 .venv/bin/python benchmarks/bench_row_cache.py --mnist --sizes 3000 10000 --cache-mb 100 \
      --whole-max 3000 --kinds rows whole
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
D = 10
LOG2C = range(-1, 12, 2)
LOG2G = (-2, 0, 2, 4)
TEST = 2000
#: the MNIST case's grid (log2 C, log2 gamma): small, each point trains 45 machines on up to 784-pixel rows
MNIST_LOG2C = (1, 3, 5)
MNIST_LOG2G = (-6, -4)
#: bytes before the pixels (labels) of an idx file: its magic number and dimensions
IDX_IMAGES_HEADER, IDX_LABELS_HEADER = 16, 8
PIXELS = 28 * 28


def grid_points(mnist: bool = False) -> list[dict]:
    """README's 7 x 4 grid (or the MNIST case's 3 x 2), in ParameterGrid's order (C outer, gamma inner)."""
    if mnist:
        return [{"C": 2.0**c, "gamma": 2.0**g} for c in MNIST_LOG2C for g in MNIST_LOG2G]
    return [{"C": 2.0**c, "gamma": 2.0**g / D} for c in LOG2C for g in LOG2G]


def mnist_digits(folder: str, prefix: str, n: int):
    """The first n digits of an MNIST idx pair (``train`` or ``t10k``): pixels on [0, 1] and labels."""
    import gzip

    import numpy as np

    with gzip.open(Path(folder) / f"{prefix}-images-idx3-ubyte.gz") as images:
        pixels = np.frombuffer(images.read(IDX_IMAGES_HEADER + n * PIXELS)[IDX_IMAGES_HEADER:], dtype=np.uint8)
    with gzip.open(Path(folder) / f"{prefix}-labels-idx1-ubyte.gz") as labels:
        y = np.frombuffer(labels.read(IDX_LABELS_HEADER + n)[IDX_LABELS_HEADER:], dtype=np.uint8)
    return pixels.reshape(n, PIXELS) / 255.0, y.astype(int)


def child(case: dict) -> dict:
    """One search in this process: its CPU seconds, peak, chosen point and test error."""
    import numpy as np
    from sklearn.datasets import make_classification
    from sklearn.model_selection import GridSearchCV
    from sklearn.preprocessing import MinMaxScaler
    from sklearn.svm import SVC
    from threadpoolctl import threadpool_limits

    from wsvm_span.engines.measure import peak_rss_reset, peak_rss_since
    from wsvm_span.model_selection import SpanSearchCV

    l, mnist = case["l"], case.get("mnist")
    if mnist:
        X, y = mnist_digits(mnist, "train", l)
        X_test, y_test = mnist_digits(mnist, "t10k", TEST)
    else:
        X, y = make_classification(n_samples=l + TEST, n_features=D, n_informative=5, flip_y=0.05, random_state=0)
        X = MinMaxScaler().fit(X[:l]).transform(X)
        X, y, X_test, y_test = X[:l], y[:l], X[l:], y[l:]
    points = grid_points(bool(mnist))
    if case["kind"] == "grid":
        points = points[::case["sample"]]
        grid = [{"C": [p["C"]], "gamma": [p["gamma"]]} for p in points]
        search = GridSearchCV(SVC(cache_size=case["cache_mb"]), grid, cv=5)
    else:
        grid = {"C": sorted({p["C"] for p in points}), "gamma": sorted({p["gamma"] for p in points})}
        options = {"cache_size": case["cache_mb"]} if case["kind"] == "rows" else {"max_memory": None}
        search = SpanSearchCV(param_grid=grid, **options)
    base = peak_rss_reset()
    t0, c0 = time.perf_counter(), time.process_time()
    with threadpool_limits(1):
        search.fit(X, y)
    cpu, wall = time.process_time() - c0, time.perf_counter() - t0
    peak = peak_rss_since(base)
    error = float(np.mean(search.predict(X_test) != y_test))
    best = {k: float(v) for k, v in search.best_params_.items()}
    return {**case, "cpu_s": cpu, "wall_s": wall, "peak_mb": peak, "points": len(points),
            "projected_cpu_s": cpu * len(grid_points(bool(mnist))) / len(points), "best": best, "test_error": error,
            # SpanSearchCV's estimates, to compare the cache's with the whole kernel's
            "span_rule": None if case["kind"] == "grid" else [float(v) for v in search.cv_results_["span_rule"]]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10000, 20000])
    parser.add_argument("--cache-mb", type=float, default=100.0)
    parser.add_argument("--whole-max", type=int, default=10000, help="the largest l searched on the whole kernel")
    parser.add_argument("--sample", type=int, default=3, help="GridSearchCV runs every k-th grid point")
    parser.add_argument("--kinds", nargs="+", default=["rows", "whole", "grid"])
    parser.add_argument("--mnist", action="store_true", help="MNIST's 10 digits instead of the two-class problem")
    parser.add_argument("--mnist-dir", default="/work/shared/data/mnist", help="the folder of MNIST's idx files")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(json.loads(args.child))))
        return
    rows = []
    print(f"| l | search | points run | CPU s (projected to {len(grid_points(args.mnist))}) | peak MB | 16 l^2 MB | "
          "chosen (C, gamma) | test error |\n|---|---|---|---|---|---|---|---|")
    for l in args.sizes:
        for kind in args.kinds:
            if kind == "whole" and l > args.whole_max:
                continue
            case = {"l": l, "kind": kind, "cache_mb": args.cache_mb, "sample": args.sample,
                    "mnist": args.mnist_dir if args.mnist else None}
            done = subprocess.run([sys.executable, __file__, "--child", json.dumps(case)], capture_output=True,
                                  text=True, check=True)
            row = json.loads(done.stdout.strip().splitlines()[-1])
            rows.append(row)
            name = {"rows": f"SpanSearchCV(cache_size={args.cache_mb:g})", "whole": "SpanSearchCV (whole kernel)",
                    "grid": f"GridSearchCV(SVC(cache_size={args.cache_mb:g}), cv=5)"}[kind]
            print(f"| {l:,} | {name} | {row['points']} | {row['cpu_s']:.1f} ({row['projected_cpu_s']:.0f}) | "
                  f"{row['peak_mb']:,.0f} | {16 * l * l / 2**20:,.0f} | ({row['best']['C']:g}, "
                  f"{row['best']['gamma']:g}) | {100 * row['test_error']:.2f}% |", flush=True)
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / ("row-cache-mnist.json" if args.mnist else "row-cache.json")).write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
