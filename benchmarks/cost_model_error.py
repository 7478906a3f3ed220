"""The cost model's error against real runs (issue 8): for every planned job of a config that a results folder
has finished, the projected one-core seconds (``check-config --estimate``'s ``job_seconds``) against the job's
measured seconds (the whole process, by Snakemake's benchmark file; the job's own ``wall_s`` where there is
none), per data set and in total.

A calibration fitted without some data sets (``wsvm-span calibrate-cost --exclude ...``) gives the hold-out
error of pricing them from their family or from the training size alone:

    wsvm-span calibrate-cost --output /tmp/cal.json --exclude 'ringnorm_*_l4096' results/exp6/rows.parquet
    .venv/bin/python benchmarks/cost_model_error.py reproduced/paper-exp6/reproduced-exp6.yaml --results results \\
        --calibration /tmp/cal.json --json benchmarks/out/cost_model_error.json
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from wsvm_span.study import config as sc  # noqa: E402
from wsvm_span.study import experiments as ex  # noqa: E402
from wsvm_span.study.config.estimate import benchmark_wall_s, job_seconds, load_calibration  # noqa: E402
from wsvm_span.study.results_schema import read_provenance  # noqa: E402


def measured_seconds(workdir: Path, job) -> float | None:
    """The job's process wall seconds (Snakemake's benchmark file), else its own ``wall_s``; None if unfinished."""
    chunk = workdir / job.path
    if not chunk.is_file():
        return None
    total = benchmark_wall_s(workdir / ex.benchmark_path(job.path))
    if total is not None:
        return total
    wall = (read_provenance(chunk) or {}).get("wall_s")
    return float(wall) if wall is not None else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("config")
    parser.add_argument("--results", nargs="+", default=["results"],
                        help="results folders (each <workdir>/results); the first that has a job's chunk counts")
    parser.add_argument("--calibration", default=None, help="calibration JSON (default: the shipped one)")
    parser.add_argument("--json", default=None, help="write the comparison here")
    args = parser.parse_args()

    cal = load_calibration(args.calibration)
    workdirs = [Path(r).resolve().parent for r in args.results]
    per: dict[str, dict[str, float]] = defaultdict(lambda: {"jobs": 0, "projected_s": 0.0, "measured_s": 0.0})
    for job in ex.plan_jobs(sc.load_config(args.config)):
        measured = next((m for w in workdirs if (m := measured_seconds(w, job)) is not None), None)
        if measured is None:
            continue
        row = per[job.dataset]
        row["jobs"] += 1
        row["projected_s"] += job_seconds(job, cal)
        row["measured_s"] += measured
    if not per:
        raise SystemExit(f"no finished job of {args.config} in {args.results}")
    total = {k: sum(r[k] for r in per.values()) for k in ("jobs", "projected_s", "measured_s")}
    print(f"{'data set':28s} {'basis':9s} {'jobs':>5s} {'projected s':>12s} {'measured s':>11s} {'error':>7s}")
    for ds, r in {**per, "total": total}.items():
        r["error"] = r["projected_s"] / r["measured_s"] - 1
        basis = cal.basis(ds) if ds != "total" else ""
        r["basis"] = basis
        print(f"{ds:28s} {basis:9s} {int(r['jobs']):5d} {r['projected_s']:12.1f} {r['measured_s']:11.1f} "
              f"{100 * r['error']:+6.1f}%")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps({"config": args.config, "calibration": args.calibration or "shipped",
                                               "per_dataset": per, "total": total}, indent=2, default=float))


if __name__ == "__main__":
    main()
