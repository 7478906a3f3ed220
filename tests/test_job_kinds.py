"""The job-kind contract (``study/experiments/base.py``: ``JobKind``, ``KindCapabilities``, ``JobIdentity``) and
the recipe of docs/development.md ("Adding an experiment"): a kind written in this file alone, registered with
``register_kind`` and given one catalog entry and one row schema, is planned, read back from its spec, run
(rows, chunk file, MLflow runs), priced and scheduled by the generic code, which names no kind.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
import types
from dataclasses import dataclass
from typing import Any, Mapping

import pyarrow as pa
import pytest

from wsvm_span.study import catalog, results_schema, scheduling
from wsvm_span.study import experiments as ex
from wsvm_span.study.config import RuntimeSettings
from wsvm_span.study.config.estimate import estimate, job_cost, job_memory_mb, load_calibration
from wsvm_span.study.experiments.base import JobIdentity, KindCapabilities, evaluate_models
from wsvm_span.study.runner import run_chunk

KIND = "coin_counts"
EXPERIMENT = "exp_coins"


@dataclass(frozen=True)
class CoinJob(JobIdentity):
    """Counts heads in ``flips`` seeded coin flips, once per model: nothing but its own fields."""

    kind = KIND
    flips: int
    models: int

    @property
    def variant(self) -> str:
        return f"f{self.flips}"

    model_start = 0

    @property
    def model_stop(self) -> int:
        return self.models


@dataclass
class CoinProblem:
    checksums: dict
    l: int = 0
    d: int = 1


def _plan(cfg: Mapping[str, Any], experiment: str) -> list[CoinJob]:
    spec = cfg["experiments"][experiment]
    return [CoinJob(experiment=experiment, dataset="coins", seed=seed, realization=1, chunk=i, flips=spec["flips"],
                    models=spec["models"]) for i, seed in enumerate(spec["seeds"])]


def _evaluate(job: CoinJob, problem: CoinProblem, on_row=None) -> list[dict]:
    import logging

    import numpy as np

    rng = np.random.default_rng(job.seed)
    return evaluate_models(job, logging.getLogger(__name__), lambda i: {
        "experiment": job.experiment, "dataset": job.dataset, "seed": job.seed, "realization": job.realization,
        "chunk": job.chunk, "model_index": i, "flips": job.flips, "heads": int(rng.binomial(job.flips, 0.5))},
        on_row)


def coin_kind() -> types.ModuleType:
    """The kind, as a module like the package's own (modules implement protocols)."""
    kind = types.ModuleType("coin_counts")
    kind.__dict__.update(
        KIND=KIND, JOB=CoinJob, ROWS=KIND, ROW_IDENTIFIERS=frozenset({"flips"}),
        CAPABILITIES=KindCapabilities(prices_own_jobs=True, trains_with_config_engine=False),
        plan=_plan, config_problems=lambda cfg, experiment: iter(()),
        prepare=lambda job, settings: CoinProblem(checksums={"coins": "0" * 64}),
        evaluate=_evaluate,
        run_params=lambda job, problem: {"flips": job.flips, "n_models": job.n_models},
        row_params=lambda job, row: {"model_index": row["model_index"]},
        provenance=lambda job, problem: {"setup_s": 0.0},
        resources=lambda cfg, job: {"mem_mb": 500, "runtime": 3},
        job_memory_mb=lambda job: 123.0,
        calibrated_seconds=lambda job, cal: 0.01 * job.flips * job.n_models,
    )
    return kind


@pytest.fixture
def registered(monkeypatch):
    """The recipe: the kind registered, one catalog entry, one row schema (the config block is the cfg)."""
    kind = coin_kind()
    monkeypatch.setattr(ex, "KINDS", dict(ex.KINDS))
    ex.register_kind(kind)
    monkeypatch.setitem(catalog.EXPERIMENTS, EXPERIMENT, catalog.Experiment(EXPERIMENT, "Coin flips", KIND))
    monkeypatch.setitem(results_schema.ROW_SCHEMAS, KIND, pa.schema([
        pa.field("experiment", pa.string(), nullable=False), pa.field("dataset", pa.string(), nullable=False),
        pa.field("seed", pa.int64(), nullable=False), pa.field("realization", pa.int64(), nullable=False),
        pa.field("chunk", pa.int64(), nullable=False), pa.field("model_index", pa.int64(), nullable=False),
        pa.field("flips", pa.int64(), nullable=False), pa.field("heads", pa.int64(), nullable=False)]))
    return kind


CFG = {"experiments": {EXPERIMENT: {"flips": 10, "models": 3, "seeds": [1, 2]}}}


def test_the_package_kinds_fulfil_the_contract():
    assert set(ex.KINDS) == {e.kind for e in catalog.EXPERIMENTS.values() if e.kind}
    for name, kind in ex.KINDS.items():
        assert kind.KIND == name and kind.JOB.kind == name and issubclass(kind.JOB, JobIdentity)
        assert isinstance(kind.CAPABILITIES, KindCapabilities)
        assert not kind.CAPABILITIES.prices_own_jobs or callable(kind.calibrated_seconds)
        assert kind.ROWS in results_schema.ROW_SCHEMAS
        assert kind.ROW_IDENTIFIERS <= set(results_schema.ROW_SCHEMAS[kind.ROWS].names)
    # the identity fields are declared once, by JobIdentity, and come first in every job's fields
    names = [f.name for f in dataclasses.fields(JobIdentity)]
    assert names == ["experiment", "dataset", "seed", "realization", "chunk"]
    for kind in ex.KINDS.values():
        assert [f.name for f in dataclasses.fields(kind.JOB)][:5] == names


def test_register_kind_names_what_a_kind_lacks():
    kind = coin_kind()
    del kind.job_memory_mb
    with pytest.raises(TypeError, match="job_memory_mb"):
        ex.register_kind(kind, {})
    kind = coin_kind()
    del kind.calibrated_seconds  # it declares prices_own_jobs
    with pytest.raises(TypeError, match="calibrated_seconds"):
        ex.register_kind(kind, {})
    kind = coin_kind()
    kind.CAPABILITIES = KindCapabilities(prices_own_jobs=False)
    del kind.calibrated_seconds
    assert ex.register_kind(kind, {}) is kind  # without prices_own_jobs it needs none
    with pytest.raises(ValueError, match="registered already"):
        ex.register_kind(coin_kind(), {KIND: kind})


def test_a_kind_of_one_file_is_planned_run_priced_and_scheduled(registered, tmp_path):
    from mlflow.tracking import MlflowClient

    from wsvm_span.study.results_schema import read_provenance, read_rows
    from wsvm_span.study.tracking import KIND as RUN_KIND, experiment_name

    jobs = ex.plan_jobs(CFG, (EXPERIMENT,))
    assert [j.slot for j in jobs] == ["exp_coins/coins/f10/s1-r1/chunk-0", "exp_coins/coins/f10/s2-r1/chunk-1"]
    assert ex.job_from_json(jobs[0].to_json()) == jobs[0]
    assert jobs[0].path == "results/exp_coins/coins/f10/chunk-0.parquet"

    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    settings = RuntimeSettings(tracking_enabled=True, tracking_uri=uri, experiment_prefix="kinds-test",
                               artifact_root=str(tmp_path / "artifacts"))
    res = run_chunk(jobs[1], tmp_path / "chunk-1.parquet", settings)
    rows = read_rows(tmp_path / "chunk-1.parquet")
    assert list(rows["model_index"]) == [0, 1, 2] and set(rows["flips"]) == {10}
    assert rows["heads"].between(0, 10).all()
    assert read_provenance(tmp_path / "chunk-1.parquet")["kind"] == KIND
    client = MlflowClient(uri)
    exp = client.get_experiment_by_name(experiment_name("kinds-test", EXPERIMENT))
    children = [r for r in client.search_runs([exp.experiment_id]) if r.data.tags.get(RUN_KIND) == "model"]
    assert len(children) == 3 and res.parent_run_id
    for child in children:
        # the measured column is a metric; the placing ones (the kind's ROW_IDENTIFIERS among them) are not
        assert "heads" in child.data.metrics
        assert not {"flips", "seed", "chunk", "model_index"} & set(child.data.metrics)

    cal = load_calibration()
    assert job_cost(jobs[0], cal) == {"own_pricing": pytest.approx(0.3), "process_start": cal.process_start_s}
    assert job_memory_mb(jobs[0]) == 123.0
    est = estimate(jobs, cal, cores=2)
    assert est.jobs == 2 and est.peak_memory_mb == 246.0 and est.engines == {}
    assert scheduling.expected_job_seconds(jobs[0]) == pytest.approx(0.3 + cal.process_start_s)
    limits = scheduling.job_limits({}, jobs[0])
    assert limits["mem_mb"] == 500 and limits["runtime"] <= 3


def test_a_planned_job_numbers_its_models_as_its_json_spec_does():
    """The workflow runs a job from its JSON spec (canonical JSON sorts the axes' names); a job planned in
    Python (wsvm-span verify, the library) must give every model index the same hyperparameters, for every
    job of the paper configuration, or a rerun of a committed chunk computes other models."""
    from wsvm_span.study import config as sc
    from wsvm_span.study.experiments import job_from_json, plan_jobs
    from wsvm_span.study.grid import grid_point

    cfg = sc.load_config(Path(__file__).resolve().parents[1] / "config" / "paper.yaml")
    with_axes = [job for job in plan_jobs(cfg) if hasattr(job, "axes")]
    assert {job.experiment for job in with_axes} >= {"exp1", "exp2", "exp10"}
    for job in with_axes:
        again = job_from_json(job.to_json())
        assert [grid_point(job.axes, i) for i in range(job.model_start, job.model_stop)] == \
               [grid_point(again.axes, i) for i in range(again.model_start, again.model_stop)], job.slot
