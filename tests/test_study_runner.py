"""The grid job (``wsvm_span.study.runner.run_chunk``) on a tiny synthetic data set (no files needed):
work done once per job, the configured QP solver, schema/evaluation drift, and its MLflow runs (real SQLite
stores): the rows file's models, params, metrics and tags, logged in batches, and a job killed between them."""

from __future__ import annotations

import pytest

import wsvm_span
import wsvm_span.data
import wsvm_span.kernels
import wsvm_span.solvers.enclosing_ball
from wsvm_span.study import config as sc
from wsvm_span.study import experiments as ex
from wsvm_span.study.experiments import weight_grid as wg
from wsvm_span.study.config import RuntimeSettings
from wsvm_span.study.experiments.weight_grid import evaluation_row
from wsvm_span.study.runner import run_chunk
from wsvm_span.study.results_schema import COLUMNS, SchemaError

DATASET = "ringnorm_d2_l40"


def tiny_job(qp_solver: str = "clarabel") -> wg.GridJob:
    """One job of 6 models (3 x 2 grid) of a synthetic set: l = 40 training points, no exact LOO."""
    cfg = sc.validate_config({
        "chunk_size": 6,
        "loo": {"fraction": 0},
        "svm": {"qp_solver": qp_solver},
        "experiments": {"exp6": {"d": [2], "l": [40], "grid": {
            "log2_C_plus": {"values": [-2, 0, 2]}, "log2_C_minus": {"values": [0, 2]}}}},
    })
    jobs = ex.plan_jobs(cfg)
    assert len(jobs) == 1 and jobs[0].dataset == DATASET and jobs[0].n_models == 6
    return jobs[0]


def test_run_chunk_loads_data_and_computes_kernels_once_per_job(tmp_path, monkeypatch):
    from threadpoolctl import threadpool_info

    job = tiny_job()
    calls = {"load": 0, "rbf": 0, "rbf_threads": [], "diameter": []}
    real_load, real_rbf = wsvm_span.data.load_dataset, wsvm_span.kernels.rbf_kernel
    real_diameter = wsvm_span.solvers.enclosing_ball.enclosing_ball_diameter

    def load(*args, **kwargs):
        calls["load"] += 1
        return real_load(*args, **kwargs)

    def rbf(*args, **kwargs):
        calls["rbf"] += 1
        calls["rbf_threads"] += [pool["num_threads"] for pool in threadpool_info()]
        return real_rbf(*args, **kwargs)

    def diameter(K, solver="auto"):
        calls["diameter"].append((len(K), solver))
        return real_diameter(K, solver=solver)

    # where the runner and the kernel cache look them up
    monkeypatch.setattr(wsvm_span.data, "load_dataset", load)
    monkeypatch.setattr(wsvm_span.kernels, "rbf_kernel", rbf)
    monkeypatch.setattr(wsvm_span.solvers.enclosing_ball, "enclosing_ball_diameter", diameter)

    res = run_chunk(job, None, RuntimeSettings(data_dir=str(tmp_path)))
    assert res.n_models == 6 and [r["model_index"] for r in res.rows] == list(range(6))
    assert calls["load"] == 1  # the split is loaded once per job ...
    assert calls["rbf"] == 2  # ... and the kernels computed once: train (l x l) and test (m x l)
    assert all(n == 1 for n in calls["rbf_threads"])  # under one BLAS thread
    # D of the training set is computed once, by the configured QP solver
    assert calls["diameter"] == [(40, "clarabel")]
    assert {r["l"] for r in res.rows} == {40}


def test_evaluation_field_outside_the_schema_is_an_error(tmp_path, monkeypatch):
    with pytest.raises(SchemaError, match="'new_metric'"):
        evaluation_row({"test_error": 0.1, "new_metric": 1.0})
    assert evaluation_row({c: 0 for c in ("test_error", "span_rule")}) == {"test_error": 0, "span_rule": 0}
    fields = wsvm_span.ModelEvaluation.__dataclass_fields__
    assert set(fields) <= set(COLUMNS)  # today's evaluation fits the schema

    real_as_dict = wsvm_span.ModelEvaluation.as_dict
    monkeypatch.setattr(wsvm_span.ModelEvaluation, "as_dict", lambda self: {**real_as_dict(self), "new_metric": 1.0})
    with pytest.raises(SchemaError, match="ModelEvaluation field.*'new_metric'.*not columns of the results schema"):
        run_chunk(tiny_job(), None, RuntimeSettings(data_dir=str(tmp_path)))


def test_fold_kernels_are_cached_only_within_the_memory_limit(tmp_path):
    from wsvm_span.study.results_schema import read_provenance, read_rows

    job = tiny_job()
    cached = run_chunk(job, tmp_path / "a.parquet", RuntimeSettings(data_dir=str(tmp_path)))
    sliced = run_chunk(job, tmp_path / "b.parquet", RuntimeSettings(data_dir=str(tmp_path), memory_mb=1))
    assert read_provenance(tmp_path / "a.parquet")["fold_cache"] is True
    assert read_provenance(tmp_path / "b.parquet")["fold_cache"] is False
    assert [r["cv_error"] for r in cached.rows] == [r["cv_error"] for r in sliced.rows]
    assert len(read_rows(tmp_path / "b.parquet")) == job.n_models


# the columns of a rows file that are no MLflow metrics of its model run: where the model sits (seed, replicate,
# sizes, index) and, below, its params
NOT_METRICS = {"seed", "realization", "l", "d", "model_index", "chunk", "gamma"}


def _tracked(tmp_path, name: str) -> RuntimeSettings:
    return RuntimeSettings(tracking_enabled=True, data_dir=str(tmp_path / "data"),
                           tracking_uri=f"sqlite:///{tmp_path / name}", experiment_prefix="runner-test",
                           artifact_root=str(tmp_path / "artifacts"), config_hash="cafe" * 16)


def _slot_runs(settings: RuntimeSettings, slot: str):
    """The store's active runs of a job slot, read back with MLflow's own client."""
    from mlflow.tracking import MlflowClient

    from wsvm_span.study.tracking import SLOT, experiment_name

    client = MlflowClient(settings.tracking_uri)
    exp = client.get_experiment_by_name(experiment_name(settings.experiment_prefix, "exp6"))
    return client.search_runs([exp.experiment_id], f"tags.`{SLOT}` = '{slot}'", max_results=1000)


@pytest.mark.parametrize("path", ["database", "client"])
def test_model_runs_in_the_store_are_the_rows_of_the_job(tmp_path, monkeypatch, path):
    """Every row of the job's rows file is one finished model run whose params are its hyperparameters and index,
    whose metrics are its other numeric columns (the finite ones, with their values) and whose tags place it, and
    the job run is complete; logged in batches of 4 (so 4 + 2 runs), by the database path (one transaction per
    batch) and by the client path a tracking server takes (three requests per run), into a real SQLite store."""
    import math

    from mlflow.tracking import MlflowClient

    from wsvm_span.study import runner, tracking
    from wsvm_span.study.results_schema import read_rows

    monkeypatch.setattr(runner, "FLUSH_RUNS", 4)
    if path == "client":
        monkeypatch.setattr(tracking, "_database_store", lambda uri: False)
    job, settings = tiny_job(), _tracked(tmp_path, "mlflow.db")
    res = run_chunk(job, tmp_path / "chunk-0.parquet", settings)
    rows = read_rows(tmp_path / "chunk-0.parquet").to_dict("records")
    runs = _slot_runs(settings, job.slot)
    (parent,) = [r for r in runs if r.info.run_id == res.parent_run_id]
    assert parent.data.tags["wsvm.complete"] == "true" and parent.info.status == "FINISHED"
    assert parent.data.metrics["n_models"] == 6
    models = {r.data.tags["mlflow.runName"]: r for r in runs if r.data.tags.get("wsvm.kind") == "model"}
    assert len(runs) == 1 + len(rows) == 7 and sorted(models) == sorted(f"{DATASET} m{i}" for i in range(6))
    dataset_run = parent.data.tags["mlflow.parentRunId"]
    client = MlflowClient(settings.tracking_uri)
    for row in rows:
        run = models[f"{DATASET} m{row['model_index']}"]
        assert run.info.status == "FINISHED" and run.info.lifecycle_stage == "active"
        assert run.info.end_time >= run.info.start_time > 0
        params = {"log2_C_plus": row["log2_C_plus"], "log2_C_minus": row["log2_C_minus"],
                  "model_index": row["model_index"]}
        assert {k: float(v) for k, v in run.data.params.items()} == pytest.approx(params, rel=1e-9)
        metrics = {k: float(v) for k, v in row.items() if k not in NOT_METRICS | set(params)
                   and isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)}
        assert metrics and "test_error" in metrics and "span_rule" in metrics
        assert run.data.metrics == metrics
        assert run.data.tags == {
            "mlflow.runName": f"{DATASET} m{row['model_index']}", "mlflow.parentRunId": dataset_run,
            "wsvm.kind": "model", "wsvm.job_slot": job.slot, "wsvm.job_run": res.parent_run_id,
            "wsvm.model_index": str(row["model_index"]), "dataset": DATASET, "config_hash": "cafe" * 16,
            "code_version": parent.data.tags["code_version"], "engine": row["engine"], "qp_solver": row["qp_solver"]}
        # each metric logged once, at the time the run says its model was done
        history = [m for key in metrics for m in client.get_metric_history(run.info.run_id, key)]
        assert len(history) == len(metrics) and {m.timestamp for m in history} == {run.info.start_time}


def test_a_job_killed_between_batches_leaves_no_complete_job_and_its_rerun_logs_each_model_once(tmp_path,
                                                                                               monkeypatch):
    """A job that dies after its first batch of model runs leaves them and its job run, FAILED and not complete;
    its rerun deletes them and logs the job's 6 models once."""
    from wsvm_span.study import runner

    monkeypatch.setattr(runner, "FLUSH_RUNS", 4)
    real_log_row = runner.JobRuns.log_row

    def dies_at_the_fifth_row(self, row):
        if row["model_index"] == 4:
            raise KeyboardInterrupt  # as a kill's signal would end it, between two batches
        real_log_row(self, row)

    job, settings = tiny_job(), _tracked(tmp_path, "mlflow.db")
    with monkeypatch.context() as m:
        m.setattr(runner.JobRuns, "log_row", dies_at_the_fifth_row)
        with pytest.raises(KeyboardInterrupt):
            run_chunk(job, tmp_path / "chunk-0.parquet", settings)
    runs = _slot_runs(settings, job.slot)
    (killed,) = [r for r in runs if r.data.tags.get("wsvm.kind") == "job"]
    assert killed.data.tags["wsvm.complete"] == "false" and killed.info.status == "FAILED"
    assert sorted(r.data.tags["wsvm.model_index"] for r in runs if r.data.tags.get("wsvm.kind") == "model") == \
        ["0", "1", "2", "3"]
    assert not (tmp_path / "chunk-0.parquet").exists()

    res = run_chunk(job, tmp_path / "chunk-0.parquet", settings)
    runs = _slot_runs(settings, job.slot)
    assert [r.info.run_id for r in runs if r.data.tags.get("wsvm.kind") == "job"] == [res.parent_run_id]
    assert sorted(r.data.tags["wsvm.model_index"] for r in runs if r.data.tags.get("wsvm.kind") == "model") == \
        [str(i) for i in range(6)]
