"""The MLflow tracking server that scripts/local-cluster starts (PostgreSQL behind it), driven by writer
processes that log exactly as grid jobs do (benchmarks/bench_tracking_server.py): a server that refuses
requests without its credentials, a server restarted while they write, and the load of 16 writers with 1000
child runs each. The runs are counted here,
independently of the writers: none may be lost or duplicated. Marked ``cluster``; the load test is also
``slow`` (``make test-load``)."""

from __future__ import annotations

import base64
import configparser
import json
import os
import stat
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections import Counter
from pathlib import Path

import pytest

from test_workflow_helpers import REPO, workflow_env
from wsvm_span.study.tracking import CREDENTIALS_ENV

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


def _status(url: str, user: str | None = None, password: str | None = None) -> int:
    headers = {}
    if user is not None:
        headers["Authorization"] = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=30) as res:
            return res.status
    except urllib.error.HTTPError as err:
        return err.code


# a job's tracking: a run with a param and a tag, through the credentials file only; it waits for its stdin
# to close, so that the process list is read while it runs
_JOB = """
import sys
from wsvm_span.study.tracking import Tracker
tracker = Tracker(sys.argv[1])
eid = tracker.experiment_id(sys.argv[2])
print(tracker.create_run(eid, "auth-check", tags={"wsvm.kind": "job"}, params={"slot": "auth"}), flush=True)
sys.stdin.read()
"""


def test_server_refuses_requests_without_its_credentials(local_cluster, tmp_path):
    """MLflow's basic-auth app: no credentials or a wrong password get 401 (health stays open); the
    credentials file is its owner's only, and a job that logs through it shows the password neither in the
    process list nor in its run."""
    url = f"{local_cluster.tracking_uri}/api/2.0/mlflow/experiments/search?max_results=1"
    path = Path(os.environ[CREDENTIALS_ENV])
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and path.stat().st_uid == os.geteuid()
    creds = configparser.ConfigParser()
    creds.read(path)
    user, password = creds["mlflow"]["mlflow_tracking_username"], creds["mlflow"]["mlflow_tracking_password"]
    assert _status(url) == 401
    assert _status(url, user, password + "x") == 401
    assert _status(url, user, password) == 200
    assert _status(f"{local_cluster.tracking_uri}/health") == 200  # local-cluster's check needs no password

    env = workflow_env()
    assert "MLFLOW_TRACKING_PASSWORD" not in env and env[CREDENTIALS_ENV] == str(path)
    job = subprocess.Popen([sys.executable, "-c", _JOB, local_cluster.tracking_uri, f"auth-{int(time.time())}/exp1"],
                           env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
    try:
        run_id = job.stdout.readline().strip()
        assert run_id, job.stderr.read()
        # -ww: whole command lines (without a terminal ps cuts them at 80 columns)
        processes = subprocess.run(["ps", "-ww", "-eo", "args"], capture_output=True, text=True, check=True).stdout
    finally:
        _, err = job.communicate("", timeout=60)
    assert job.returncode == 0, err
    assert password not in processes and "mlflow server --app-name basic-auth" in processes
    from mlflow.tracking import MlflowClient

    data = MlflowClient(local_cluster.tracking_uri).get_run(run_id).data
    assert data.params == {"slot": "auth"}
    assert not any(password in f"{k}={v}" for k, v in {**data.params, **data.tags}.items())


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
