"""Helpers (no tests) for the tests marked ``cluster``: the project's one-node SLURM cluster and MLflow
tracking server (``scripts/local-cluster``), started once per session and stopped at its end when the
session started it. Selecting these tests where the script cannot run (not root, not Debian) is a
failure, never a skip: ``make test-cluster`` on a Debian machine with root runs them."""

from __future__ import annotations

import os
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "local-cluster"
TRACKING_URI = f"http://127.0.0.1:{os.environ.get('WSVM_MLFLOW_PORT', '5000')}"


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
    cluster = Cluster(TRACKING_URI, start_s, started_here=not was_running)
    yield cluster
    if cluster.started_here:
        res = local_cluster_cmd("stop")
        assert res.returncode == 0, res.stderr
        assert local_cluster_cmd("status").returncode == 3
