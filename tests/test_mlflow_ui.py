"""The MLflow UI as a user meets it, opened with the documented command (``wsvm-span ui``), in a real browser
(Debian's chromium, headless, through chromedriver; ``scripts/mlflow_ui_screenshots.py``): the models of one
data set, logged by the runner as the workflow's jobs log them, in a SQLite store (the default: ``wsvm-span ui``
starts MLflow's UI on it) and on the tracking server of ``scripts/local-cluster`` (which serves its own UI).

The oracle is the page's DOM, read through the browser driver: the Model training view of the experiment, one
column per hyperparameter and estimator, one row per model with the values the store holds, and scatter
charts of the estimators against the test error that plot every model of the data set (25 here; MLflow's
charts show the first 10 runs unless told otherwise). The screenshots are kept as artefacts, for people, in
``$WSVM_TEST_ARTIFACTS/mlflow-ui`` (default ``test-artifacts/`` in the repository). Marked ``cluster`` (needs the
server, chromium and chromium-driver: ``make test-cluster``)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from test_workflow_helpers import REPO, data_mirror, explain, workflow_env

pytestmark = [pytest.mark.cluster, pytest.mark.timeout(900)]

DATASET = "breast_cancer"
N_MODELS = 25  # a 5 x 5 grid: more than the 10 runs MLflow's charts show by default
HYPERPARAMETERS = ["log2_C_plus", "log2_C_minus"]
ESTIMATES = ["test_error", "span_rule", "span_bound", "cv_error", "xi_alpha_bound", "sv_count_bound", "loo_error",
             "span_bound_radius"]
CHARTS = ["test_error vs. span_rule", "test_error vs. cv_error", "test_error vs. span_bound", "test_error vs. loo_error"]
ARTIFACTS = Path(os.environ.get("WSVM_TEST_ARTIFACTS", REPO / "test-artifacts")) / "mlflow-ui"


def _config(tmp: Path, study: str, tracking_uri: str | None) -> Path:
    """exp1 on breast_cancer, a 5 x 5 grid in one job, exact LOO for every model (l = 100)."""
    cfg = yaml.safe_load((REPO / "config" / "test.yaml").read_text())
    mirror = data_mirror()
    cfg.update(study=study, chunk_size=N_MODELS, tracking={"uri": tracking_uri})
    cfg["data"]["mirror"] = str(mirror) if mirror else None
    cfg["experiments"] = {"exp1": {"datasets": [DATASET], "grid": {
        "log2_C_plus": {"start": -2, "stop": 6, "step": 2}, "log2_C_minus": {"start": -2, "stop": 6, "step": 2}}}}
    path = tmp / "config.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


def _log_models(config: Path, workdir: Path):
    """The config's grid job, logged as the workflow's job logs it; returns the store's model runs."""
    from mlflow.tracking import MlflowClient

    from wsvm_span.study import config as sc
    from wsvm_span.study.experiments import plan_jobs
    from wsvm_span.study.runner import run_chunk

    cfg = sc.load_config(config)
    settings = sc.runtime_settings(cfg, workdir)
    (job,) = plan_jobs(cfg)
    assert job.n_models == N_MODELS
    run_chunk(job, None, settings)
    client = MlflowClient(settings.tracking_uri)
    exp = client.get_experiment_by_name(f"{cfg['study']}/exp1")
    return {r.info.run_name: r for r in client.search_runs([exp.experiment_id], "tags.`wsvm.kind` = 'model'",
                                                           max_results=1000)}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _views(lines) -> tuple[str, str]:
    """The first view's table and chart addresses from what ``wsvm-span ui`` prints."""
    table = charts = None
    for line in lines:
        line = line.strip()
        if line.startswith("table:") and table is None:
            table = line.split(None, 1)[1]
        if line.startswith("charts:") and charts is None:
            charts = line.split(None, 1)[1]
            return table, charts
    raise AssertionError("wsvm-span ui printed no view addresses")


def _browse(table: str, charts: str, out: Path) -> tuple[dict, dict]:
    for tool in ("chromium", "chromedriver"):
        assert shutil.which(tool), f"{tool} missing: apt-get install chromium chromium-driver (make test-tools)"
    if out.exists():
        shutil.rmtree(out)
    res = subprocess.run([sys.executable, str(REPO / "scripts" / "mlflow_ui_screenshots.py"), "--table", table,
                          "--charts", charts, "--min-rows", str(N_MODELS), "--min-charts", str(len(CHARTS)),
                          "--out", str(out)], capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, explain(res)
    print(f"screenshots: {out}")
    return (json.loads((out / "runs_table.json").read_text()), json.loads((out / "charts.json").read_text()))


def _check_page(table: dict, charts: dict, experiment: str, runs: dict) -> None:
    # the Model training view of the experiment, on the data set's models
    assert "workflowType=machine_learning" in table["url"] and "Model training" in table["text"]
    assert experiment in table["text"] and "You're viewing a shared view" in table["text"]
    # one column per hyperparameter and estimate, hyperparameters first, the test error first among estimates
    ids = [h["id"] for h in table["headers"]]
    wanted = [*(f"params.`{p}`" for p in HYPERPARAMETERS), *(f"metrics.`{m}`" for m in ESTIMATES)]
    assert set(wanted) <= set(ids), ids
    assert all(ids.index(f"params.`{p}`") < ids.index("metrics.`test_error`") for p in HYPERPARAMETERS), ids
    # one row per model, every cell the value the store holds
    rows = {r["attributes.`Run Name`"].splitlines()[-1]: r for r in table["rows"]}
    assert sorted(rows) == sorted(runs) and len(rows) == N_MODELS
    for name, run in runs.items():
        for p in HYPERPARAMETERS:
            assert float(rows[name][f"params.`{p}`"]) == float(run.data.params[p]), (name, p)
        for m in ESTIMATES:
            assert float(rows[name][f"metrics.`{m}`"]) == pytest.approx(run.data.metrics[m], rel=1e-12, abs=0), (name, m)
    # sorted by the span-rule: the first row is a model the span-rule selects
    first = table["rows"][0]["attributes.`Run Name`"].splitlines()[-1]
    assert runs[first].data.metrics["span_rule"] == min(r.data.metrics["span_rule"] for r in runs.values())
    # the charts: each estimator against the test error, every model plotted (not the first 10)
    drawn = {c["title"]: c["points"] for c in charts["charts"]}
    for title in CHARTS:
        assert drawn.get(title) == N_MODELS, (title, drawn)


def test_wsvm_span_ui_on_the_default_sqlite_store(tmp_path, monkeypatch):
    """`wsvm-span ui` in a study's folder (the config's store: results/mlflow.db) starts MLflow's UI and
    prints the view of each data set; the browser lands on the models with their columns and charts."""
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    config = _config(tmp_path, f"wsvm-span-ui-{int(time.time())}", None)
    runs = _log_models(config, tmp_path)
    port = _free_port()
    env = workflow_env(tmp_path / "pycache")
    proc = subprocess.Popen([sys.executable, "-m", "wsvm_span", "ui", str(config), "--port", str(port), "--no-browser"],
                            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        table, charts = _views(proc.stdout)
        assert table.startswith(f"http://127.0.0.1:{port}/#/experiments/")
        page, chart_page = _browse(table, charts, ARTIFACTS / "sqlite")
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 0
    with socket.socket() as probe:  # the UI ended with the command
        assert probe.connect_ex(("127.0.0.1", port)) != 0
    _check_page(page, chart_page, f"{yaml.safe_load(config.read_text())['study']}/exp1", runs)


def test_wsvm_span_ui_on_the_tracking_server(local_cluster, tmp_path):
    """On a tracking server (the cluster's store) `wsvm-span ui` writes the views and prints their addresses
    on the server's own UI; the browser sees the same page."""
    study = f"wsvm-span-ui-server-{int(time.time())}"
    config = _config(tmp_path, study, local_cluster.tracking_uri)
    runs = _log_models(config, tmp_path)
    res = subprocess.run([sys.executable, "-m", "wsvm_span", "ui", str(config), "--no-browser"], cwd=tmp_path,
                         env=workflow_env(tmp_path / "pycache"), capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, explain(res)
    table, charts = _views(res.stdout.splitlines())
    assert table.startswith(f"{local_cluster.tracking_uri}/#/experiments/")
    page, chart_page = _browse(table, charts, ARTIFACTS / "server")
    _check_page(page, chart_page, f"{study}/exp1", runs)
