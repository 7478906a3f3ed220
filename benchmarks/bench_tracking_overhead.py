"""Tracking overhead: the share of a grid job's wall time spent in MLflow calls.

Runs one real grid job of a config (default: the default config's Experiment 1 job on banana) twice,

each time in a fresh ``wsvm-span run-chunk`` process, as Snakemake runs it, into a throw-away SQLite
store created once beforehand (``wsvm-span init-tracking``, as the workflow's first job does):

1. without tracking (this also warms the data cache);
2. with tracking (parent run + one child run per model, exactly as the workflow does): the time spent in
   MLflow (import, store access, retries) is measured inside the same run, next to the job's wall time.

It can also summarise the overhead of a finished workflow from the provenance of its rows files
(each job records wall_s and tracking_s): ``--from-results results``.

    python benchmarks/bench_tracking_overhead.py
    python benchmarks/bench_tracking_overhead.py --dataset parkinson_speech --experiment exp2
    python benchmarks/bench_tracking_overhead.py --config config/paper.yaml --slot exp8/w_mixture/1to40/s0-r1/chunk-0
    python benchmarks/bench_tracking_overhead.py --from-results results

Writes a JSON record to benchmarks/out/tracking_overhead.json (or --out).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _run_chunk(spec_json: str, runtime: list[str]) -> dict:
    """One grid job in a fresh process (as Snakemake runs it); its JSON line plus the process wall time."""
    exe = Path(sys.executable).parent / "wsvm-span"
    t0 = time.perf_counter()
    res = subprocess.run([str(exe), "run-chunk", "--spec", spec_json, *runtime], capture_output=True, text=True)
    process_s = time.perf_counter() - t0
    if res.returncode != 0:
        raise SystemExit(res.stderr[-3000:])
    out = json.loads(res.stdout.strip().splitlines()[-1])
    out["process_s"] = round(process_s, 3)
    return out


def bench_job(args) -> dict:
    from wsvm_span.study import config as sc
    from wsvm_span.study.experiments import plan_jobs

    cfg = sc.load_config(args.config)
    if args.slot:
        jobs = [j for j in plan_jobs(cfg) if j.slot == args.slot]
        if not jobs:
            raise SystemExit(f"no job {args.slot} in {args.config}")
        job = jobs[0]
    else:
        jobs = [j for j in plan_jobs(cfg) if j.experiment == args.experiment and j.dataset == args.dataset]
        if not jobs:
            raise SystemExit(f"no job of {args.experiment}/{args.dataset} in {args.config}")
        job = jobs[args.chunk]
    if args.no_loo:
        job = dataclasses.replace(job, loo_models=())
    spec_json = job.to_json()
    rt = sc.runtime_settings(cfg, REPO)
    data = ["--data-dir", rt.data_dir] + (["--data-mirror", rt.data_mirror] if rt.data_mirror else [])
    with tempfile.TemporaryDirectory() as tmp:
        uri = args.tracking_uri or f"sqlite:///{tmp}/mlflow.db"
        exe = Path(sys.executable).parent / "wsvm-span"
        t0 = time.perf_counter()
        subprocess.run([str(exe), "init-tracking", "--tracking-uri", uri, "--artifact-root", f"{tmp}/art",
                        "--experiment-prefix", "bench", "--experiments", job.experiment],
                       check=True, capture_output=True)
        init_s = time.perf_counter() - t0
        tracking = ["--tracking-uri", uri, "--experiment-prefix", "bench", "--config-hash", rt.config_hash]
        if uri.startswith("sqlite"):
            tracking += ["--artifact-root", f"{tmp}/art"]
        untracked = _run_chunk(spec_json, data + ["--no-tracking"])  # warms the data cache for both
        tracked = _run_chunk(spec_json, data + tracking)
    return {
        "job": job.slot,
        "store": "sqlite (temporary, local disk)" if uri.startswith("sqlite") else uri,
        "config": str(args.config),
        "models": tracked["models"],
        "store_init_s (once per workflow, own process)": round(init_s, 3),
        "tracked": tracked,
        "untracked": untracked,
        "tracking_share": tracked["tracking_share"],
        "tracking_ms_per_model": round(1000 * tracked["tracking_s"] / max(1, tracked["models"]), 2),
        "process_wall_difference_share": round((tracked["process_s"] - untracked["process_s"]) / tracked["process_s"], 4),
        "note": ("tracking_s: time inside MLflow calls in the tracked job, including importing MLflow and "
                 "opening the store (a fixed cost per job, ~2 s), measured in the same run as wall_s"),
    }


def from_results(results: Path) -> dict:
    from wsvm_span.study.collect import rows_provenance, tracking_overhead

    rows = sorted(results.glob("*/rows.parquet"))
    if not rows:
        raise SystemExit(f"no rows files under {results}")
    prov = rows_provenance(rows)
    total = tracking_overhead(prov)
    per_job = sorted((p["tracking_s"] / p["wall_s"], p["slot"]) for p in prov if p.get("wall_s"))
    return {
        "results": str(results),
        **{k: (round(v, 4) if isinstance(v, float) else v) for k, v in total.items()},
        "median_job_share": round(per_job[len(per_job) // 2][0], 4) if per_job else None,
        "max_job_share": [round(per_job[-1][0], 4), per_job[-1][1]] if per_job else None,
    }


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--config", type=Path, default=REPO / "config" / "config.yaml")
    p.add_argument("--experiment", default="exp1")
    p.add_argument("--dataset", default="banana")
    p.add_argument("--chunk", type=int, default=0, help="index among the data set's jobs")
    p.add_argument("--slot", help="the job of this slot instead (e.g. exp8/w_mixture/1to40/s0-r1/chunk-0; "
                                  "--experiment, --dataset and --chunk are then ignored)")
    p.add_argument("--no-loo", action="store_true", help="drop exact LOO (a cheaper job: worst case share)")
    p.add_argument("--from-results", type=Path, help="summarise a finished workflow instead")
    p.add_argument("--tracking-uri", help="log to this store (e.g. a tracking server) instead of a temporary SQLite one")
    p.add_argument("--out", type=Path, default=REPO / "benchmarks" / "out" / "tracking_overhead.json")
    return p


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    record = from_results(args.from_results) if args.from_results else bench_job(args)
    print(json.dumps(record, indent=2))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(record, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
