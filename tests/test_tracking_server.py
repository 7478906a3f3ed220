"""The MLflow tracking server that scripts/local-cluster starts (PostgreSQL behind it), driven by writer
processes that log exactly as grid jobs do (benchmarks/bench_tracking_server.py): a server restarted
while they write, and the load of 16 writers with 1000 child runs each. The runs are counted here,
independently of the writers: none may be lost or duplicated. Marked ``cluster``; the load test is also
``slow`` (``make test-load``)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from test_workflow_helpers import REPO

pytestmark = [pytest.mark.cluster]
BENCH = REPO / "benchmarks" / "bench_tracking_server.py"


def _load(uri: str, out: Path, writers: int, runs: int, jobs: int, sqlite: bool, timeout: int, name: str):
    cmd = [sys.executable, str(BENCH), "load", "--uri", uri, "--writers", str(writers), "--runs", str(runs),
           "--jobs", str(jobs), "--out", str(out), "--name", name] + ([] if sqlite else ["--no-sqlite"])
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True), timeout


def _finish(proc_timeout, out: Path) -> dict:
    proc, timeout = proc_timeout
    log, _ = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, log[-5000:]
    return json.loads(out.read_text())


def count(uri: str, experiment: str) -> tuple[Counter, Counter, list]:
    """Runs of an experiment by kind, model runs per (slot, index), and the statuses, read back here."""
    from mlflow.entities import ViewType
    from mlflow.tracking import MlflowClient

    client = MlflowClient(uri)
    eid = client.get_experiment_by_name(experiment).experiment_id
    runs, token = [], None
    while True:
        page = client.search_runs([eid], run_view_type=ViewType.ACTIVE_ONLY, max_results=5000, page_token=token)
        runs += page
        token = page.token
        if not token:
            break
    kinds = Counter(r.data.tags.get("wsvm.kind") for r in runs)
    models = Counter((r.data.tags["wsvm.job_slot"], r.data.tags["wsvm.model_index"]) for r in runs
                     if r.data.tags.get("wsvm.kind") == "model")
    return kinds, models, [r.info.status for r in runs]


def _assert_exact(uri: str, record: dict) -> None:
    writers, runs, jobs = record["writers"], record["child_runs_per_writer"], record["jobs_per_writer"]
    kinds, models, statuses = count(uri, record["experiment"])
    assert kinds["model"] == writers * runs and len(models) == writers * runs
    assert set(models.values()) == {1}  # no model logged twice
    assert kinds["job"] == writers * jobs and kinds["dataset"] == writers
    assert set(statuses) == {"FINISHED"}


def test_server_restarted_while_jobs_log_loses_and_duplicates_nothing(local_cluster, tmp_path):
    out, name = tmp_path / "restart.json", f"restart-{int(time.time())}"
    run = _load(local_cluster.tracking_uri, out, writers=4, runs=150, jobs=3, sqlite=False, timeout=1500, name=name)
    deadline = time.monotonic() + 600
    while _models_logged(local_cluster.tracking_uri, f"{name}/exp1") < 20:  # restart once some are logged
        assert run[0].poll() is None and time.monotonic() < deadline, "the writers ended before the restart"
        time.sleep(1)
    down = local_cluster.restart("mlflow")
    record = _finish(run, out)["server"]
    assert record["ok"], record
    assert record["wall_s"] > down  # the restart happened while they wrote
    _assert_exact(local_cluster.tracking_uri, record)


def _models_logged(uri: str, experiment: str) -> int:
    from mlflow.tracking import MlflowClient

    client = MlflowClient(uri)
    exp = client.get_experiment_by_name(experiment)
    return 0 if exp is None else len(client.search_runs([exp.experiment_id], "tags.`wsvm.kind` = 'model'",
                                                        max_results=20))


@pytest.mark.slow
@pytest.mark.timeout(14400)
def test_sixteen_writers_with_a_thousand_child_runs_each(local_cluster, tmp_path):
    out = tmp_path / "load.json"
    record = _finish(_load(local_cluster.tracking_uri, out, writers=16, runs=1000, jobs=10, sqlite=True,
                           timeout=14000, name=f"load-{int(time.time())}"), out)
    for store in ("server", "sqlite"):
        assert record[store]["ok"], record[store]
    _assert_exact(local_cluster.tracking_uri, record["server"])
    print(json.dumps({k: record[k] for k in ("server_vs_sqlite_ms_per_child_run",)}
                     | {s: {k: record[s][k] for k in ("wall_s", "child_runs_per_s", "ms_per_child_run_per_writer")}
                        for s in ("server", "sqlite")}, indent=1))
