"""The grid job (``wsvm_span.study.runner.run_chunk``) on a tiny synthetic data set (no files needed):
work done once per job, the configured QP solver, schema/evaluation drift, provenance tags of the runs."""

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


def test_child_runs_carry_code_version_and_config_hash(tmp_path):
    from mlflow.tracking import MlflowClient

    from wsvm_span.study.tracking import KIND, experiment_name

    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    settings = RuntimeSettings(tracking_enabled=True, data_dir=str(tmp_path / "data"), tracking_uri=uri,
                               experiment_prefix="runner-test", artifact_root=str(tmp_path / "artifacts"),
                               config_hash="cafe" * 16)
    res = run_chunk(tiny_job(), tmp_path / "chunk-0.parquet", settings)
    client = MlflowClient(uri)
    exp = client.get_experiment_by_name(experiment_name("runner-test", "exp6"))
    runs = client.search_runs([exp.experiment_id], max_results=1000)
    parent = next(r for r in runs if r.info.run_id == res.parent_run_id)
    children = [r for r in runs if r.data.tags.get(KIND) == "model"]
    assert len(children) == 6
    for tag in ("code_version", "config_hash"):
        assert parent.data.tags[tag]
        assert {c.data.tags.get(tag) for c in children} == {parent.data.tags[tag]}
    assert parent.data.tags["config_hash"] == "cafe" * 16


def test_fold_kernels_are_cached_only_within_the_memory_limit(tmp_path):
    from wsvm_span.study.results_schema import read_provenance, read_rows

    job = tiny_job()
    cached = run_chunk(job, tmp_path / "a.parquet", RuntimeSettings(data_dir=str(tmp_path)))
    sliced = run_chunk(job, tmp_path / "b.parquet", RuntimeSettings(data_dir=str(tmp_path), memory_mb=1))
    assert read_provenance(tmp_path / "a.parquet")["fold_cache"] is True
    assert read_provenance(tmp_path / "b.parquet")["fold_cache"] is False
    assert [r["cv_error"] for r in cached.rows] == [r["cv_error"] for r in sliced.rows]
    assert len(read_rows(tmp_path / "b.parquet")) == job.n_models
