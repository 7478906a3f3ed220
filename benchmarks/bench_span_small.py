"""The span-rule of one machine: the compiled route (``_native.span2_unconstrained``) against LAPACK's
(``bordered_inverse`` + its diagonal and quadratic forms), by the number of in-bound SVs n*.

Where ``span.geometry.NATIVE_SPAN_MAX_INBOUND`` comes from: one-vs-one machines are small (image: n* ~ 10,
~53 SVs), and there numpy's per-call overhead, not the arithmetic, is the span-rule's time; LAPACK's blocked
factorization wins once n* is large. Each size: an RBF kernel on 2,000 random points in 10 dimensions, n*
in-bound SVs and 3 n* other SVs drawn from it, read in place as a machine of a larger training kernel is. CPU
time per machine (median of 5 rounds, each a loop of many calls), one thread (BLAS pinned), both routes in
the same process, taking turns.

  .venv/bin/python benchmarks/bench_span_small.py [--sizes 5 10 20 40 64 80 160]
"""
from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import wsvm_span as ws  # noqa: E402
from wsvm_span import _native  # noqa: E402
from wsvm_span.span import geometry  # noqa: E402

ROUNDS = 5
#: rough number of span computations' worth of work per round (n*^3 scaled), so that every size takes ~0.1 s
WORK_PER_ROUND = 2e7


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[5, 10, 20, 40, 64, 80, 160])
    args = parser.parse_args()
    rng = np.random.default_rng(1)
    L = 2000
    K = ws.rbf_kernel(rng.normal(size=(L, 10)), gamma=0.05)
    print(f"threshold in the library: NATIVE_SPAN_MAX_INBOUND = {geometry.NATIVE_SPAN_MAX_INBOUND}")
    print("| n* | other SVs | LAPACK route (us) | compiled (us) | ratio | max rel. diff |")
    print("|---|---|---|---|---|---|")
    for r in args.sizes:
        M = np.sort(rng.choice(L, r, replace=False)).astype(np.int64)
        O = np.setdiff1d(np.arange(L), M)[: 3 * r].astype(np.int64)

        def lapack_route():
            fac = geometry.bordered_inverse(K[M[:, None], M])
            inbound = 1.0 / fac.diagonal()
            R = M[fac.rep]
            return inbound, K[O, O] - fac.quadratic(K[R[:, None], O])

        def compiled():
            return _native.span2_unconstrained(K, M, O, geometry.COINCIDENT_RTOL, geometry.MIN_RCOND)

        expected, got = lapack_route(), compiled()
        diff = max(float(np.max(np.abs(g - e) / np.maximum(1.0, np.abs(e)))) for g, e in zip(got, expected))
        calls = max(3, int(WORK_PER_ROUND / (r**3 + 200 * r)))
        times = {"lapack": [], "compiled": []}
        for _ in range(ROUNDS):
            for name, f in (("lapack", lapack_route), ("compiled", compiled)):
                t = time.process_time()
                for _ in range(calls):
                    f()
                times[name].append((time.process_time() - t) / calls * 1e6)
        lapack_us, compiled_us = np.median(times["lapack"]), np.median(times["compiled"])
        print(f"| {r} | {O.size} | {lapack_us:.1f} | {compiled_us:.1f} | {lapack_us / compiled_us:.2f}x | {diff:.1e} |")


if __name__ == "__main__":
    main()
