"""What Experiment 8 costs at the current code: whole jobs of a config, run as the workflow runs them (the
runner's ``run_chunk``: ``prepare``, every model of every method, no MLflow), one BLAS thread, process CPU, and the
experiment's CPU-hours projected from them (issue 42: all 520 jobs in <= 4 hours on 2 cores, 8 CPU-hours).

Each ``--job DATASET RATIO FRACTION SEED`` is timed once; a group (data set, ratio, training fraction) is
projected as its measured jobs' mean times the config's seeds. Beside each group it prints the committed parts'
wall seconds for the same group (``reproduced/paper-exp8-*``, summed over their jobs, their own clocks: runs
at loads of 1-7, so a ratio against them flatters the new code). Groups with no measured job are listed apart.

    python benchmarks/bench_exp8_projection.py --job bank_marketing 2:1 1.0 0 --job w_mixture 1:2 0.5 0
    python benchmarks/bench_exp8_projection.py --all-groups --seed 0      # one job per group: ~2.5 CPU-hours

Writes ``benchmarks/out/exp8-projection.json`` (``--output``): every job's CPU, wall, load average and the seconds
its rows' timings (``t_*``) spent per method and component, with the commit and machine.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_lupi_cost  # noqa: E402

from wsvm_span.study import config as sc  # noqa: E402
from wsvm_span.study.experiments import lupi  # noqa: E402
from wsvm_span.study.runner import run_chunk  # noqa: E402
from wsvm_span.utils.environment import single_threaded  # noqa: E402

ROOT = bench_lupi_cost.ROOT


def committed_group_seconds() -> dict[tuple, float]:
    """(data set, ratio, training fraction) -> the committed parts' summed job wall seconds."""
    import pyarrow.parquet as pq

    from wsvm_span.study.verify import committed_jobs

    out = collections.defaultdict(float)
    for rows_file in sorted(ROOT.glob("reproduced/paper-exp8-*/rows/exp8.parquet")):
        table = pq.read_table(rows_file, columns=["dataset", "ratio", "train_fraction"])
        for chunk, rows in committed_jobs(rows_file):
            first = table.slice(rows.start, 1).to_pylist()[0]
            out[(first["dataset"], first["ratio"], round(first["train_fraction"], 6))] += float(chunk["wall_s"])
    return out


def time_job(job, settings) -> dict:
    c0, w0 = time.process_time(), time.perf_counter()
    with single_threaded():
        result = run_chunk(job, None, settings)
    by_method: dict[str, dict[str, float]] = {}
    for row in result.rows:
        for key, value in row.items():
            if key.startswith("t_") and isinstance(value, float) and value == value:
                by_method.setdefault(row["method"], collections.Counter())[key] += value
    return {"dataset": job.dataset, "ratio": job.ratio, "train_fraction": job.train_fraction, "seed": job.seed,
            "l": job.n_train, "cpu_s": time.process_time() - c0, "wall_s": time.perf_counter() - w0,
            "load": os.getloadavg()[0], "by_method": {m: dict(c) for m, c in by_method.items()}}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", default=str(ROOT / "config" / "paper.yaml"))
    ap.add_argument("--job", nargs=4, action="append", default=[], metavar=("DATASET", "RATIO", "FRACTION", "SEED"))
    ap.add_argument("--all-groups", action="store_true", help="one job of every (data set, ratio, fraction)")
    ap.add_argument("--seed", type=int, default=0, help="the seed of --all-groups' jobs")
    ap.add_argument("--output", default=str(ROOT / "benchmarks" / "out" / "exp8-projection.json"))
    args = ap.parse_args(argv)
    cfg = sc.load_config(args.config)
    settings = replace(sc.runtime_settings(cfg, ROOT), tracking_enabled=False)
    jobs = lupi.plan(cfg, "exp8")
    chosen = [bench_lupi_cost.find_job(jobs, d, r, float(f), int(s)) for d, r, f, s in args.job]
    if args.all_groups:
        chosen += [j for j in jobs if j.seed == args.seed and j not in chosen]
    if not chosen:
        ap.error("give --job DATASET RATIO FRACTION SEED (repeatable) or --all-groups")
    seeds = collections.Counter((j.dataset, j.ratio, round(j.train_fraction, 6)) for j in jobs)
    measured = []
    for job in chosen:
        measured.append(time_job(job, settings))
        print(f"{job.slot} (l = {job.n_train}): {measured[-1]['cpu_s']:.1f} CPU s", flush=True)
    by_group = collections.defaultdict(list)
    for m in measured:
        by_group[(m["dataset"], m["ratio"], round(m["train_fraction"], 6))].append(m["cpu_s"])
    committed = committed_group_seconds()
    projected = {g: sum(v) / len(v) * seeds[g] for g, v in by_group.items()}
    for g in sorted(projected):
        print(f"  {g[0]:28s} {g[1]:4s} {g[2]:5g}: {projected[g]:8.0f} CPU s projected "
              f"({len(by_group[g])} of {seeds[g]} jobs timed); committed {committed.get(g, float('nan')):8.0f} s")
    missing = sorted(set(seeds) - set(projected))
    total = sum(projected.values())
    print(f"projected: {total / 3600:.2f} CPU-hours for {sum(seeds[g] for g in projected)} jobs "
          f"({total / 7200:.2f} h on 2 cores); not measured: {len(missing)} groups, "
          f"{sum(committed.get(g, 0.0) for g in missing) / 3600:.2f} h committed")
    out = Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    bench_lupi_cost.write_result(out, chosen[0], {
        "jobs": measured, "projected_cpu_s": {" ".join(map(str, g)): s for g, s in projected.items()},
        "not_measured": [" ".join(map(str, g)) for g in missing]})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
