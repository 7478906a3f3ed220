"""SpanSearchCV in one process against the same search on a dask.distributed LocalCluster (issue 45, item 4).

The data: ``make_classification`` (l points, 20 features scaled to [0, 1], 10% labels flipped); the grid: grid.py's
steps, log2 C = -1..11 step 2 by gamma = 2^{-2,0,2,4}/d (7 x 4, four kernels), criterion span_rule. First the search
in this process with one thread (``n_jobs=1``), then, in a ``LocalCluster`` of ``--workers`` worker processes of one
thread each (started before the clock runs), the same search under ``joblib.parallel_config(backend="dask")`` with
``n_jobs=-1``: a task per kernel, each computing its kernel from X where it runs. Prints the wall times, whether the
two cv_results_ agree (every key but the clocks, exactly), and what the scheduler sent the workers
(``model_selection._dask_checks``: each task's pickled spec, each scattered array) against one l x l kernel, and the
CPU seconds of the search in one process and of each worker. One BLAS thread per process (the workers inherit it).

  nice -n 5 .venv/bin/python benchmarks/bench_dask.py --size 4000 [--workers 2]
"""
from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import time  # noqa: E402


def _cpu_seconds() -> float:
    """This process's CPU seconds (user + system): run in each worker."""
    return time.process_time()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=4000, help="training points (default 4000)")
    parser.add_argument("--workers", type=int, default=2, help="worker processes of the LocalCluster (default 2)")
    args = parser.parse_args()

    from distributed import Client, LocalCluster
    from joblib import parallel_config
    from sklearn.datasets import make_classification
    from sklearn.preprocessing import MinMaxScaler

    from wsvm_span.model_selection import SpanSearchCV
    from wsvm_span.model_selection._dask_checks import differing_results, watch_shipped

    d = 20
    X, y = make_classification(n_samples=args.size, n_features=d, n_informative=10, flip_y=0.1, random_state=0)
    X = MinMaxScaler().fit_transform(X)
    grid = {"C": [2.0**e for e in range(-1, 12, 2)], "gamma": [2.0**e / d for e in (-2, 0, 2, 4)]}

    t0, c0 = time.perf_counter(), time.process_time()
    serial = SpanSearchCV(param_grid=grid, n_jobs=1, refit=False).fit(X, y)
    serial_wall, serial_cpu = time.perf_counter() - t0, time.process_time() - c0

    t0 = time.perf_counter()
    with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                      dashboard_address=":0") as cluster, Client(cluster) as client:
        start = time.perf_counter() - t0
        read, stop = watch_shipped(client)
        cpu0 = client.run(_cpu_seconds)
        t0 = time.perf_counter()
        with parallel_config(backend="dask"):
            spread = SpanSearchCV(param_grid=grid, n_jobs=-1, refit=False).fit(X, y)
        spread_wall = time.perf_counter() - t0
        workers_cpu = [cpu - cpu0[w] for w, cpu in client.run(_cpu_seconds).items()]
        tasks, scattered = read()
        stop()
    kernel = args.size**2 * 8
    print(f"l={args.size}, d={d}, grid 7 x 4 ({len(serial.cv_results_['params'])} points, 4 kernels), span_rule")
    print(f"one process, n_jobs=1: {serial_wall:.1f} s wall, {serial_cpu:.1f} s CPU")
    print(f"LocalCluster of {args.workers} worker processes: {spread_wall:.1f} s wall "
          f"(+ {start:.1f} s to start the cluster), CPU per worker "
          + ", ".join(f"{cpu:.1f} s" for cpu in sorted(workers_cpu)))
    print(f"load average at the end: {os.getloadavg()[0]:.1f} (on {os.cpu_count()} CPUs)")
    differ = differing_results(serial.cv_results_, spread.cv_results_)
    print(f"cv_results_ keys that differ (the clocks aside, exactly): {differ or 'none'}")
    print(f"shipped: {len(tasks)} tasks, {sum(tasks):,} bytes of task specs (largest {max(tasks):,}); "
          f"{len(scattered)} scattered arrays, {sum(scattered.values()):,} bytes "
          f"(largest {max(scattered.values()):,}); "
          f"one l x l kernel: {kernel:,} bytes")


if __name__ == "__main__":
    main()
