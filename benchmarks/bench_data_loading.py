"""Time loading the 14 data sets of the study: cold, re-parse and warm.

* cold:    empty data directory: copy from the mirror + sha256 check + parse + cache write;
* reparse: files present, ``.cache`` removed: full sha256 check + parse + cache write;
* warm:    files present and stamped, parsed arrays cached (the normal case).

Every phase includes the split, the [0, 1] scaling and the float64 conversion.

Usage::

    python benchmarks/bench_data_loading.py [--mirror DIR_OR_URL] [--data-dir DIR] [--keep]

The mirror defaults to ``$WSVM_DATA_MIRROR``, else ``<repo>/../shared/data``; the data directory
defaults to a fresh temporary directory (removed afterwards unless ``--keep``).
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from wsvm_span.data import BENCHMARK_NAMES, load_dataset


def _load_all(data_dir: Path, mirror: str) -> tuple[dict[str, float], dict[str, tuple]]:
    times, shapes = {}, {}
    for name in BENCHMARK_NAMES:
        t0 = time.perf_counter()
        s = load_dataset(name, data_dir=data_dir, mirror=mirror, publishers=False)
        times[name] = time.perf_counter() - t0
        shapes[name] = (s.n_train, s.n_test, s.n_features, s.d)
    return times, shapes


def main(argv: list[str] | None = None) -> int:
    repo = Path(__file__).resolve().parents[1]
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mirror", default=os.environ.get("WSVM_DATA_MIRROR")
                        or os.fspath(repo.parent / "shared" / "data"))  # fmt: skip
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--keep", action="store_true", help="keep the temporary data directory")
    args = parser.parse_args(argv)

    tmp = None
    if args.data_dir is None:
        tmp = Path(tempfile.mkdtemp(prefix="wsvm_bench_data_"))
        data_dir = tmp
    else:
        data_dir = args.data_dir
        if data_dir.exists() and any(data_dir.iterdir()):
            parser.error(f"{data_dir} is not empty; the cold phase needs an empty directory")
    try:
        cold, shapes = _load_all(data_dir, args.mirror)
        shutil.rmtree(data_dir / ".cache")
        reparse, _ = _load_all(data_dir, args.mirror)
        warm, _ = _load_all(data_dir, args.mirror)
    finally:
        if tmp is not None and not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)

    print(f"python {platform.python_version()}, numpy {np.__version__}, "
          f"{platform.machine()} x{os.cpu_count()}, {platform.system()} {platform.release()}")  # fmt: skip
    print(f"mirror: {args.mirror}\n")
    header = f"{'data set':<18} {'train':>6} {'test':>7} {'p':>4} {'d':>4} " \
             f"{'cold s':>8} {'reparse s':>10} {'warm s':>8}"  # fmt: skip
    print(header)
    print("-" * len(header))
    for name in BENCHMARK_NAMES:
        n_tr, n_te, p, d = shapes[name]
        print(f"{name:<18} {n_tr:>6} {n_te:>7} {p:>4} {d:>4} "
              f"{cold[name]:>8.3f} {reparse[name]:>10.3f} {warm[name]:>8.3f}")  # fmt: skip
    print("-" * len(header))
    print(f"{'total':<18} {'':>6} {'':>7} {'':>4} {'':>4} {sum(cold.values()):>8.3f} "
          f"{sum(reparse.values()):>10.3f} {sum(warm.values()):>8.3f}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
