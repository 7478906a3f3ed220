"""Helpers (no tests) for the tests marked ``cluster``: the project's one-node SLURM cluster and MLflow
tracking server (``scripts/local-cluster``), started once per session and stopped at its end when the
session started it. The server asks for a user and password: the session reads them from the credentials
file that ``local-cluster`` prints (``WSVM_MLFLOW_CREDENTIALS``), as every job does. Selecting these tests where the script cannot run (not root, not Debian) is a
failure, never a skip: ``make test-cluster`` on a Debian machine with root runs them."""

from __future__ import annotations

import os
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from wsvm_span.study.tracking import CREDENTIALS_ENV, use_credentials_file

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "local-cluster"
TRACKING_URI = f"http://127.0.0.1:{os.environ.get('WSVM_MLFLOW_PORT', '5000')}"
PROFILE = REPO / "workflow" / "profiles" / "slurm"
# every grid job its own SLURM job (no packing), so that the jobs of a config run at once
UNPACKED = ["--group-components", *(f"pack{n}=1" for n in (2, 4, 8, 16, 32, 64, 128))]
# the executor's first status query after 5 s instead of 40 s (a real site keeps the default)
FAST_STATUS = ["--slurm-init-seconds-before-status-checks", "5"]


def squeue(*fields: str) -> list[list[str]]:
    res = subprocess.run(["squeue", "-h", "-o", " ".join(f"%{f}" for f in fields)], capture_output=True, text=True)
    return [line.split() for line in res.stdout.splitlines() if line.strip()]


def sacct(job_ids, fields: str = "JobID,State") -> list[list[str]]:
    """sacct's rows (allocations only) of these jobs, one list of ``fields`` per job."""
    res = subprocess.run(["sacct", "-n", "-P", "-X", "-o", fields, "-j", ",".join(map(str, job_ids))],
                         capture_output=True, text=True, check=True)
    return [line.split("|") for line in res.stdout.splitlines() if line]


def sacct_states(job_ids) -> dict[str, str]:
    return {row[0]: row[1] for row in sacct(job_ids)}


def active_runs(uri: str, prefix: str, deleted: bool = False) -> list:
    from mlflow.entities import ViewType
    from mlflow.tracking import MlflowClient

    client = MlflowClient(uri)
    exps = [e.experiment_id for e in client.search_experiments(filter_string=f"name LIKE '{prefix}/%'")]
    view = ViewType.DELETED_ONLY if deleted else ViewType.ACTIVE_ONLY
    return client.search_runs(exps, run_view_type=view, max_results=50000)


def local_cluster_cmd(*args: str, timeout: int = 900) -> subprocess.CompletedProcess:
    return subprocess.run([str(SCRIPT), *args], capture_output=True, text=True, timeout=timeout)


@dataclass
class Cluster:
    tracking_uri: str
    start_s: float
    started_here: bool
    events: list = field(default_factory=list)

    def restart(self, part: str) -> float:
        """Stop one part (mlflow, postgres, ...) and start it again; returns the seconds it was down."""
        t0 = time.monotonic()
        res = local_cluster_cmd("stop", part)
        assert res.returncode == 0, res.stderr
        res = local_cluster_cmd("start")
        assert res.returncode == 0, res.stderr
        return time.monotonic() - t0


@pytest.fixture(scope="session")
def local_cluster():
    if os.geteuid() != 0 or not Path("/etc/debian_version").is_file():
        pytest.fail("the cluster tests start a SLURM cluster and a tracking server with "
                    "scripts/local-cluster, which needs root on Debian; run them there (make test-cluster)")
    was_running = local_cluster_cmd("status").returncode == 0
    t0 = time.monotonic()
    res = local_cluster_cmd("start")
    start_s = time.monotonic() - t0
    assert res.returncode == 0, f"scripts/local-cluster start failed:\n{res.stdout}\n{res.stderr}"
    # the start's last lines: `export NAME=VALUE` of the server's address and the credentials file's path
    exports = dict(line.removeprefix("export ").split("=", 1) for line in res.stdout.splitlines()
                   if line.startswith("export "))
    os.environ[CREDENTIALS_ENV] = exports[CREDENTIALS_ENV]
    use_credentials_file()  # for this process's own clients; workflow_env() keeps the password from subprocesses
    cluster = Cluster(TRACKING_URI, start_s, started_here=not was_running)
    yield cluster
    if cluster.started_here:
        res = local_cluster_cmd("stop")
        assert res.returncode == 0, res.stderr
        assert local_cluster_cmd("status").returncode == 3
