"""Weight-grid rows by another engine (``svm.engine: path``, issue 9; ``smo``, issue 21) against ``svm.engine:
auto`` (LIBSVM), model by model.

With the path engine a grid job's models after its first are reached by solution-path segments from their
predecessors, and K-fold CV and exact LOO are done by paths; with auto every model, CV fold and LOO model is
trained by LIBSVM (tolerance-accurate). The estimators must agree, or each difference is explained
(``wsvm_span.study.engine_comparison``).

Usage:
  python benchmarks/compare_path_engine.py run --config config/config.yaml --experiments exp1 exp2 --engine auto
  python benchmarks/compare_path_engine.py run --config config/config.yaml --experiments exp1 exp2 --engine path
  python benchmarks/compare_path_engine.py compare benchmarks/out/engine-auto benchmarks/out/engine-path
  python benchmarks/compare_path_engine.py run --config config/config.yaml --experiments exp1 --engine smo
  python benchmarks/compare_path_engine.py compare benchmarks/out/engine-auto benchmarks/out/engine-smo --engine smo
``run`` writes one chunk file per job under benchmarks/out/engine-<engine>/ (no MLflow tracking; jobs
already written are skipped); ``compare`` prints the counts per estimator and the explanation of every
difference, and writes benchmarks/out/engine-comparison.json.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import pandas as pd  # noqa: E402

from wsvm_span.study import config as sc  # noqa: E402
from wsvm_span.study import experiments as ex  # noqa: E402
from wsvm_span.study.config import RuntimeSettings  # noqa: E402
from wsvm_span.study.results_schema import read_rows  # noqa: E402
from wsvm_span.study.runner import run_chunk  # noqa: E402
from wsvm_span.utils.environment import machine_info  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "out"


def chunk_name(job) -> str:
    return f"{job.experiment}--{job.dataset}--{job.variant}--{job.chunk}.parquet"


def config_for(path: str, experiments, engine: str):
    """(validated config with only ``experiments`` and ``svm.engine: engine``, runtime settings without
    tracking; data paths relative to the repository)."""
    raw = sc.load_config(path)
    raw["svm"]["engine"] = engine
    raw["experiments"] = {e: raw["experiments"][e] for e in experiments}
    mirror = raw["data"]["mirror"]
    settings = RuntimeSettings(data_dir=str(ROOT / raw["data"]["dir"]),
                               data_mirror=str((ROOT / mirror).resolve()) if mirror else None)
    return sc.validate_config(raw), settings


def run(args) -> int:
    cfg, settings = config_for(args.config, args.experiments, args.engine)
    out = OUT / f"engine-{args.engine}"
    out.mkdir(parents=True, exist_ok=True)
    for job in ex.plan_jobs(cfg):
        target = out / chunk_name(job)
        if target.exists():
            continue
        t0 = time.perf_counter()
        run_chunk(job, target, settings)
        print(f"{job.slot}: {job.n_models} models in {time.perf_counter() - t0:.1f}s", flush=True)
    return 0


def compare(args) -> int:
    from wsvm_span.study.engine_comparison import compare_row_files

    names = [{p.name for p in Path(folder).glob("*.parquet")} for folder in (args.a, args.b)]
    files = sorted(names[0] & names[1])
    if names[0] != names[1]:
        print(f"comparing the {len(files)} jobs both folders have; only in one: {sorted(names[0] ^ names[1])}")
    cfg, settings = config_for(args.config, args.experiments, "auto")
    report = compare_row_files([Path(args.a) / f for f in files], [Path(args.b) / f for f in files], cfg,
                               data_mirror=settings.data_mirror, data_dir=settings.data_dir, engine=args.engine)
    print(report.text())
    # the rows' timings (wall seconds of one thread: on a shared machine only a rough comparison)
    timings = {}
    for name, folder in (("auto", args.a), (args.engine, args.b)):
        rows = read_rows([Path(folder) / f for f in files])
        timings[name] = rows.groupby("dataset", sort=False)[["t_train", "t_cv", "t_loo"]].sum()
    both = pd.concat(timings, axis=1)
    both.columns = [f"{col}_{engine}" for engine, col in both.columns]
    print("seconds per data set (sums over the models; t_loo where exact LOO ran):")
    print(both.round(2).to_string())
    payload = {**report.as_dict(), "timings": both.reset_index().to_dict(orient="records"), "machine": machine_info()}
    OUT.mkdir(parents=True, exist_ok=True)
    target = OUT / ("engine-comparison.json" if args.engine == "path" else f"engine-comparison-{args.engine}.json")
    target.write_text(json.dumps(payload, indent=1, default=str))
    print(f"wrote {target}")
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("run")
    p.add_argument("--engine", required=True)
    q = sub.add_parser("compare")
    q.add_argument("a", help="folder of the reference rows (engine auto)")
    q.add_argument("b", help="folder of the other engine's rows")
    q.add_argument("--engine", default="path", help="the engine of the rows in b")
    for parser in (p, q):
        parser.add_argument("--config", default=str(ROOT / "config" / "config.yaml"))
        parser.add_argument("--experiments", nargs="+", default=["exp1", "exp2"])
    args = ap.parse_args(argv)
    return {"run": run, "compare": compare}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
