"""The MLflow tracking server under load, against SQLite: concurrent grid-job writers.

``load``: W writer processes start together and each logs R child runs exactly as grid jobs do (its data
set's parent run, then per job: clear the slot, a job run, one finished child run per
model with the row's params, metrics and tags, the end-of-job check, the job run's metrics); then every
run is read back and counted: no writer may fail, no run may be lost or duplicated. Reported: the wall
time, the throughput and the time per child run seen by a writer, for each store, measured in the same
run (the SQLite store is the baseline: a WAL-mode file on local disk, as the workflow sets it up).

``share``: the tracking share of one real grid job (``bench_tracking_overhead.py``) logged to the
server and to a temporary SQLite store, in the same run.

    python benchmarks/bench_tracking_server.py load --uri http://127.0.0.1:5000          # 16 x 1000, and SQLite
    python benchmarks/bench_tracking_server.py load --uri http://127.0.0.1:5000 --no-sqlite
    python benchmarks/bench_tracking_server.py share --uri http://127.0.0.1:5000

Writes a JSON record to benchmarks/out/tracking_server_<mode>.json (or --out). The server comes from
``scripts/local-cluster start``; it asks for the credentials that ``eval "$(scripts/local-cluster env)"``
points to (WSVM_MLFLOW_CREDENTIALS).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import sys
import tempfile
import time
import uuid
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _row_metrics() -> list[str]:
    """The metrics of one weight-grid model's child run (wsvm_span.study.runner): its row's numeric columns."""
    import pyarrow as pa

    from wsvm_span.study.experiments import PLACING_COLUMNS
    from wsvm_span.study.experiments import weight_grid
    from wsvm_span.study.results_schema import ROW_SCHEMAS

    placing = PLACING_COLUMNS | weight_grid.ROW_IDENTIFIERS
    return [f.name for f in ROW_SCHEMAS[weight_grid.ROWS] if (pa.types.is_floating(f.type) or pa.types.is_integer(f.type))
            and f.name not in placing and not f.name.startswith("log2_")]


def _writer(uri: str, experiment: str, writer: int, jobs: int, models: int, start) -> dict:
    """One grid job after another, as the runner logs them; returns its timings."""
    from wsvm_span.study.runner import FLUSH_RUNS
    from wsvm_span.study.tracking import COMPLETE, JOB_RUN, KIND, MODEL_INDEX, SLOT, ModelRun, Tracker

    metrics = _row_metrics()
    start.wait(120)
    t0 = time.perf_counter()
    tracker = Tracker(uri)
    eid = tracker.experiment_id(experiment)
    dataset = f"exp1/load_w{writer}/class/s0-r1"
    parent = tracker.dataset_run(eid, dataset, {"dataset": f"load_w{writer}"})
    child_s = 0.0
    for j in range(jobs):
        slot = f"{dataset}/chunk-{j}"
        tracker.delete_slot(eid, slot)
        job_run = tracker.create_run(eid, slot, tags={KIND: "job", SLOT: slot, COMPLETE: "false"},
                                     params={"chunk": j, "n_models": models}, parent_id=parent)
        runs = [ModelRun(f"{slot}/m{i}",
                         tags={KIND: "model", SLOT: slot, JOB_RUN: job_run, MODEL_INDEX: i,
                               "dataset": f"load_w{writer}", "weighting": "class", "engine": "sklearn",
                               "qp_solver": "clarabel", "code_version": "bench", "config_hash": "bench"},
                         params={"log2_C_plus": float(i % 33), "log2_C_minus": float(i // 33), "model_index": i},
                         metrics={m: (i * 7 + k) % 100 / 100 for k, m in enumerate(metrics)},
                         time_ms=int(time.time() * 1000))
                for i in range(j * models, (j + 1) * models)]
        children = []
        tc = time.perf_counter()
        for b in range(0, len(runs), FLUSH_RUNS):  # in the runner's batches
            children += tracker.log_finished_runs(eid, runs[b:b + FLUSH_RUNS], parent_id=parent)
        child_s += time.perf_counter() - tc
        tracker.check_slot(eid, slot, job_run, children)
        tracker.log_metrics(job_run, {"n_models": models}, tags={COMPLETE: "true"})
        tracker.terminate(job_run)
    return {"writer": writer, "wall_s": time.perf_counter() - t0, "child_s": child_s,
            "tracking_s": tracker.seconds, "calls": tracker.calls}


def _run_writer(args):
    return _writer(*args, _START)


def _init(event):
    global _START
    _START = event


def count_runs(uri: str, experiment: str) -> dict:
    """Every active run of the experiment, read back: counts and duplicates per (slot, model index)."""
    from mlflow.entities import ViewType
    from mlflow.tracking import MlflowClient

    from wsvm_span.study.tracking import KIND, MODEL_INDEX, SLOT

    client = MlflowClient(uri)
    exp = client.get_experiment_by_name(experiment)
    runs, token = [], None
    while True:
        page = client.search_runs([exp.experiment_id], run_view_type=ViewType.ACTIVE_ONLY, max_results=5000,
                                  page_token=token)
        runs.extend(page)
        token = page.token
        if not token:
            break
    kinds = Counter(r.data.tags.get(KIND) for r in runs)
    per_model = Counter((r.data.tags[SLOT], r.data.tags[MODEL_INDEX]) for r in runs if r.data.tags.get(KIND) == "model")
    return {"runs": len(runs), "kinds": dict(kinds), "duplicated_models": sum(n > 1 for n in per_model.values()),
            "distinct_models": len(per_model),
            "unfinished": sum(r.info.status != "FINISHED" for r in runs)}


def load(uri: str, writers: int, runs: int, jobs: int, name: str | None = None) -> dict:
    """W concurrent writers of R child runs each (in ``jobs`` grid jobs) on one store."""
    from wsvm_span.study.tracking import Tracker

    models = runs // jobs
    if models * jobs != runs:
        raise SystemExit(f"--runs ({runs}) must be a multiple of --jobs ({jobs})")
    experiment = f"{name or 'bench-load-' + uuid.uuid4().hex[:8]}/exp1"
    with tempfile.TemporaryDirectory() as tmp:
        Tracker(uri, f"{tmp}/artifacts").init_store([experiment])  # as the first job would
        ctx = mp.get_context("spawn")
        event = ctx.Event()
        with ctx.Pool(writers, initializer=_init, initargs=(event,)) as pool:
            pending = pool.map_async(_run_writer, [(uri, experiment, w, jobs, models) for w in range(writers)])
            time.sleep(2.0)  # every writer imported MLflow and waits
            t0 = time.perf_counter()
            event.set()
            stats = pending.get(timeout=3600)
            wall = time.perf_counter() - t0
        counted = count_runs(uri, experiment)
    n = writers * runs
    per_child = sorted(s["child_s"] / runs for s in stats)
    return {
        "store": uri.split("?")[0] if not uri.startswith("sqlite") else "sqlite (WAL, local disk)",
        "experiment": experiment, "writers": writers, "child_runs_per_writer": runs, "jobs_per_writer": jobs,
        "wall_s": round(wall, 2), "child_runs_per_s": round(n / wall, 1),
        "ms_per_child_run_per_writer": {"median": round(1000 * per_child[len(per_child) // 2], 1),
                                        "max": round(1000 * per_child[-1], 1)},
        "requests_per_writer": stats[0]["calls"],
        "counted": counted,
        "ok": (counted["kinds"].get("model") == n and counted["distinct_models"] == n
               and counted["duplicated_models"] == 0 and counted["kinds"].get("job") == writers * jobs
               and counted["kinds"].get("dataset") == writers and counted["unfinished"] == 0),
    }


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("mode", choices=["load", "share"])
    p.add_argument("--uri", default="http://127.0.0.1:5000", help="the tracking server")
    p.add_argument("--writers", type=int, default=16)
    p.add_argument("--runs", type=int, default=1000, help="child runs per writer")
    p.add_argument("--jobs", type=int, default=10, help="grid jobs per writer (runs are split among them)")
    p.add_argument("--no-sqlite", action="store_true", help="skip the SQLite baseline")
    p.add_argument("--name", help="experiment prefix on the server (default: a fresh bench-load-<random>)")
    p.add_argument("--dataset", default="banana", help="share: the data set of the grid job (default config)")
    p.add_argument("--no-loo", action="store_true", help="share: drop exact LOO (a cheaper job: worst-case share)")
    p.add_argument("--out", type=Path)
    args = p.parse_args(argv)
    if args.mode == "load":
        record = {"server": load(args.uri, args.writers, args.runs, args.jobs, args.name)}
        if not args.no_sqlite:
            with tempfile.TemporaryDirectory() as tmp:
                record["sqlite"] = load(f"sqlite:///{tmp}/mlflow.db", args.writers, args.runs, args.jobs)
            record["server_vs_sqlite_ms_per_child_run"] = round(
                record["server"]["ms_per_child_run_per_writer"]["median"]
                / record["sqlite"]["ms_per_child_run_per_writer"]["median"], 2)
    else:
        sys.path.insert(0, str(Path(__file__).parent))
        import bench_tracking_overhead as overhead

        job = ["--dataset", args.dataset] + (["--no-loo"] if args.no_loo else [])
        runs = {name: overhead.bench_job(overhead.parser().parse_args(job + extra))
                for name, extra in (("sqlite", []), ("server", ["--tracking-uri", args.uri]))}
        record = {"job": runs["server"]["job"], **{k: {kk: runs[k][kk] for kk in ("tracking_share",
                  "tracking_ms_per_model", "tracked", "untracked")} for k in runs}}
    print(json.dumps(record, indent=2))
    out = args.out or REPO / "benchmarks" / "out" / f"tracking_server_{args.mode}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(record, indent=2) + "\n")
    return 0 if record.get("server", {}).get("ok", True) and record.get("sqlite", {}).get("ok", True) else 1


if __name__ == "__main__":
    sys.exit(main())
