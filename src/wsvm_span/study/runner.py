"""The grid job: one chunk of the models of one (experiment, data set, weighting, seed, realization).

``run_chunk`` is a few named steps:

1. :func:`load_split`: the data set's split for the job's replicate;
2. :func:`prepare_problem`: what every model of the job shares, computed once: the kernel matrices,
   the CV folds and the per-training-set constants D and R^2;
3. :class:`JobRuns`: the job's MLflow runs (a parent run per job, a child run per model), replacing
   the runs of an earlier attempt;
4. :func:`evaluate_models`: every model of the chunk, under one BLAS thread, with progress lines;
5. :func:`write_chunk`: the rows and their provenance, written last and atomically, so a chunk file
   exists only for a job whose MLflow runs are complete.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

import numpy as np

from . import provenance
from .config import Job, RuntimeSettings, canonical_json, grid_point, memory_mb
from .progress import Progress
from .results_schema import COLUMNS, SchemaError, rows_to_table, write_rows_atomic
from .tracking import COMPLETE, KEY, KIND, MODEL_INDEX, SLOT, Tracker, experiment_name

__all__ = ["ChunkResult", "GridProblem", "JobRuns", "evaluate_models", "evaluation_row", "load_split",
           "model_weights", "prepare_problem", "run_chunk", "write_chunk"]

log = logging.getLogger(__name__)

#: points per class of the warm-up problem: enough for LIBSVM, the span QPs and two CV folds
WARM_UP_PER_CLASS = 12


@dataclass
class ChunkResult:
    n_models: int
    wall_s: float
    compute_s: float
    tracking_s: float
    load_s: float
    parent_run_id: str | None
    rows: list[dict] = field(repr=False, default_factory=list)

    @property
    def tracking_share(self) -> float:
        return self.tracking_s / self.wall_s if self.wall_s > 0 else math.nan


@dataclass
class GridProblem:
    """What every model of a job shares: the split, its kernels, the CV folds, D and R^2."""

    split: Any
    K: np.ndarray
    K_test: np.ndarray
    folds: np.ndarray
    D: float
    R2: float
    gamma: float
    setup_s: float
    fold_kernels: Any = None  # the CV folds' kernels, sliced once when they fit the job's memory

    @property
    def l(self) -> int:
        return int(len(self.split.y_train))

    @property
    def d(self) -> int:
        return int(self.split.d)


# ------------------------------------------------------------------------------------------- steps
def load_split(job: Job, settings: RuntimeSettings):
    """Step 1: the split of the job's data set and replicate (data folder, mirror, publishers)."""
    from wsvm_span.data import load_dataset

    return load_dataset(job.dataset, seed=job.seed, realization=job.realization, data_dir=settings.data_dir,
                        mirror=settings.data_mirror)


def model_weights(job: Job, split, point: Mapping[str, float]) -> np.ndarray:
    """The instance weights C_i of one grid point under the job's weighting scheme."""
    import wsvm_span as ws

    if job.weighting == "class":
        return ws.class_weights(split.y_train, 2.0 ** point["log2_C_plus"], 2.0 ** point["log2_C_minus"])
    if split.scores is None:
        raise ValueError(f"{split.name} has no importance scores; sigmoid weights need them")
    return ws.sigmoid_weights(split.scores, point["A"], point["B"], 2.0 ** point["log2_C"], sigma=job.sigma)


def prepare_problem(job: Job, split, memory_limit_mb: float | None = None) -> GridProblem:
    """Step 2: kernels, folds, D (by the configured QP solver) and R^2, once per job, and the CV folds'
    kernels when they fit in ``memory_limit_mb`` (None: no limit); then a warm-up so that one-time
    initialisations are not charged to the first model's timings (Table 6)."""
    import wsvm_span as ws
    from wsvm_span.utils.environment import single_threaded

    t0 = time.perf_counter()
    gamma = 1.0 / int(split.d)  # the study's RBF width (experiments.md)
    with single_threaded():  # one processor: parallel jobs must not oversubscribe the cores
        cache = ws.KernelCache(split.X_train, gamma, X_test=split.X_test, qp_solver=job.qp_solver)
        problem = GridProblem(
            split=split, K=cache.train, K_test=cache.test,
            folds=ws.stratified_folds(split.y_train, k=job.cv_folds, seed=job.cv_seed),
            D=cache.diameter, R2=cache.radius2, gamma=gamma, setup_s=0.0)
        need = memory_mb(len(split.y_train), len(split.y_test), job.cv_folds, fold_cache=True)
        if memory_limit_mb is None or need <= memory_limit_mb:
            problem.fold_kernels = ws.FoldKernels(problem.K, problem.folds)
        else:
            log.info("%s: CV folds sliced per model (their cached kernels need ~%.0f MB, the job has %s MB)",
                     job.slot, need, memory_limit_mb)
        _warm_up(job, problem)
    problem.setup_s = time.perf_counter() - t0
    return problem


def _warm_up(job: Job, problem: GridProblem) -> None:
    """Train and evaluate once on a small subsample of the job's first grid point."""
    import wsvm_span as ws

    y = problem.split.y_train
    idx = np.concatenate([np.flatnonzero(y == 1)[:WARM_UP_PER_CLASS], np.flatnonzero(y == -1)[:WARM_UP_PER_CLASS]])
    if len(np.unique(y[idx])) < 2:
        return
    C = model_weights(job, problem.split, grid_point(job.axes, job.model_start))[idx]
    Ks = problem.K[np.ix_(idx, idx)]
    try:
        ws.evaluate_model(Ks, y[idx], C, Ks[:4], y[idx][:4], folds=np.arange(len(idx)) % 2,
                          D=ws.enclosing_ball_diameter(Ks, solver=job.qp_solver), R2=ws.kernel_radius2(Ks),
                          engine=job.engine, qp_solver=job.qp_solver, compute_loo=True, tol=job.tol)
    except Exception as exc:  # noqa: BLE001 - a warm-up only; the real evaluation reports errors
        log.debug("warm-up failed: %s", exc)


def evaluation_row(values: Mapping[str, Any]) -> dict[str, Any]:
    """The schema columns of one ``ModelEvaluation.as_dict()``; a field that is not a column of the
    results schema is an error (schema and evaluation must not drift apart silently)."""
    unknown = [k for k in values if k not in COLUMNS]
    if unknown:
        raise SchemaError(
            f"ModelEvaluation field(s) {', '.join(map(repr, unknown))} are not columns of the results schema; "
            "add them to wsvm_span/study/results_schema.py (ROW_SCHEMA) or drop them from ModelEvaluation"
        )
    return dict(values)


def evaluate_models(job: Job, problem: GridProblem,
                    on_model: Callable[[int, dict, dict], None] | None = None) -> list[dict]:
    """Step 4: train and evaluate every model of the chunk (one BLAS thread); ``on_model(index, point,
    row)`` is called after each (the job's MLflow child run). Logs progress lines."""
    import wsvm_span as ws
    from wsvm_span.utils.environment import single_threaded

    split = problem.split
    rows: list[dict] = []
    progress = Progress(job.slot, job.n_models, log)
    with single_threaded():
        for idx in range(job.model_start, job.model_stop):
            point = grid_point(job.axes, idx)
            ev = ws.evaluate_model(
                problem.K, split.y_train, model_weights(job, split, point), problem.K_test, split.y_test,
                folds=problem.folds, D=problem.D, R2=problem.R2, engine=job.engine, qp_solver=job.qp_solver,
                compute_loo=idx in job.loo_models, tol=job.tol, fold_kernels=problem.fold_kernels,
                check_input=False)  # K comes from KernelCache: valid by construction
            row = evaluation_row(ev.as_dict())
            row.update(point)
            row.update(experiment=job.experiment, dataset=job.dataset, weighting=job.weighting, seed=job.seed,
                       realization=job.realization, gamma=problem.gamma, l=problem.l, d=problem.d,
                       model_index=idx, chunk=job.chunk)
            rows.append(row)
            if on_model is not None:
                on_model(idx, point, row)
            progress.model_done()
    return rows


class JobRuns:
    """Step 3: the MLflow runs of one job: deletes the runs of an earlier attempt of its slot, opens a
    parent run (provenance tags, job params), logs one finished child run per model, checks at the end
    that there is exactly one child per model, and marks the parent complete (or FAILED on error)."""

    def __init__(self, job: Job, settings: RuntimeSettings, problem: GridProblem, data_sha: str):
        self.job, self.settings = job, settings
        self.tracker = Tracker(settings.tracking_uri, settings.artifact_root, sqlite_wal=settings.sqlite_wal)
        self.experiment_id = self.tracker.experiment_id(experiment_name(settings.experiment_prefix, job.experiment))
        removed = self.tracker.delete_slot(self.experiment_id, job.slot)
        if removed:
            log.info("%s: deleted %d runs of an earlier attempt", job.slot, removed)
        self.code = provenance.code_version()
        qp_name = _qp_solver_name(job.qp_solver)
        tags = {
            KIND: "job", SLOT: job.slot, KEY: f"{job.slot}@{job.spec_hash[:16]}", COMPLETE: "false",
            "code_version": self.code, "config_hash": settings.config_hash, "spec_hash": job.spec_hash,
            "data_sha256": data_sha, "data_files": canonical_json(dict(problem.split.checksums or {}))[:5000],
            "qp_solver": qp_name, "engine": job.engine,
            **{f"lib.{k}": v for k, v in provenance.library_versions().items()},
            **{f"machine.{k}": v for k, v in provenance.machine_info().items()},
        }
        params = {
            "experiment": job.experiment, "dataset": job.dataset, "weighting": job.weighting, "seed": job.seed,
            "realization": job.realization, "chunk": job.chunk, "model_start": job.model_start,
            "model_stop": job.model_stop, "n_models": job.n_models, "l": problem.l, "d": problem.d,
            "gamma": problem.gamma, "tol": job.tol, "engine_requested": job.engine,
            "qp_solver_requested": job.qp_solver, "cv_folds": job.cv_folds, "cv_seed": job.cv_seed,
            "n_loo": len(job.loo_models),
            **{f"grid.{k}": f"{min(v)}:{max(v)}:{len(v)}" for k, v in job.axes.items()},
        }
        if job.sigma is not None:
            params["sigma"] = job.sigma
        self.parent_id = self.tracker.create_run(self.experiment_id, run_name=job.slot, tags=tags, params=params)

    @property
    def seconds(self) -> float:
        return self.tracker.seconds

    def log_model(self, idx: int, point: Mapping[str, float], row: Mapping[str, Any]) -> None:
        if not self.settings.child_runs:
            return
        metrics = {k: v for k, v in row.items() if k in _METRICS}
        self.tracker.create_run(
            self.experiment_id, run_name=f"{self.job.slot}/m{idx}",
            tags={KIND: "model", SLOT: self.job.slot, MODEL_INDEX: idx, "engine": row["engine"],
                  "qp_solver": row["qp_solver"], "code_version": self.code, "config_hash": self.settings.config_hash},
            params={**point, "model_index": idx}, metrics=metrics, parent_id=self.parent_id, finished=True)

    def finish(self, rows: list[dict], timings: Mapping[str, float]) -> None:
        if self.settings.child_runs:
            self.tracker.check_children(self.experiment_id, self.job.slot, self.parent_id,
                                        range(self.job.model_start, self.job.model_stop))
        self.tracker.log_metrics(self.parent_id, {**timings, "tracking_s": self.tracker.seconds,
                                                  "tracking_share": self.tracker.seconds / timings["wall_s"],
                                                  "n_models": len(rows)},
                                 tags={COMPLETE: "true", "engine": ",".join(sorted({r["engine"] for r in rows})),
                                       "qp_solver": ",".join(sorted({r["qp_solver"] for r in rows}))})
        self.tracker.terminate(self.parent_id, "FINISHED")

    def fail(self) -> None:
        try:
            self.tracker.terminate(self.parent_id, "FAILED")
        except Exception:  # noqa: BLE001 - best effort; a rerun deletes the slot anyway
            pass


#: row columns logged as MLflow metrics of a child run (the values; strings and identifiers are tags/params)
_METRICS = frozenset(c for c in COLUMNS if c not in {
    "experiment", "dataset", "weighting", "seed", "realization", "log2_C_plus", "log2_C_minus", "A", "B", "log2_C",
    "gamma", "engine", "qp_solver", "l", "d", "model_index", "chunk"})


def _qp_solver_name(requested: str) -> str:
    from wsvm_span.solvers.qp import qp_solver_name

    return qp_solver_name(requested)


def write_chunk(rows: list[dict], output: str | Path, record: Mapping[str, Any]) -> None:
    """Step 5: the rows with their provenance, atomically."""
    write_rows_atomic(rows_to_table(rows, provenance=record), output)


# -------------------------------------------------------------------------------------------- the job
def run_chunk(job: Job, output: str | Path | None, settings: RuntimeSettings | None = None) -> ChunkResult:
    """Run one grid job and write its rows to ``output`` (skipped when None). Returns the rows and the
    time split (load, compute, tracking)."""
    settings = settings or RuntimeSettings()
    t_start = time.perf_counter()
    split = load_split(job, settings)
    load_s = time.perf_counter() - t_start
    data_sha = provenance.data_sha256(split.checksums)
    log.info("%s: l=%d d=%d models %d..%d (%d with exact LOO) engine=%s qp=%s", job.slot, len(split.y_train),
             split.d, job.model_start, job.model_stop - 1, len(job.loo_models), job.engine,
             _qp_solver_name(job.qp_solver))
    problem = prepare_problem(job, split, settings.memory_mb)

    runs = JobRuns(job, settings, problem, data_sha) if settings.tracking_enabled and settings.tracking_uri else None
    try:
        t0 = time.perf_counter()
        tracked_before = runs.seconds if runs else 0.0
        rows = evaluate_models(job, problem, runs.log_model if runs else None)
        compute_s = time.perf_counter() - t0 - ((runs.seconds - tracked_before) if runs else 0.0)
        if runs:
            runs.finish(rows, {"wall_s": time.perf_counter() - t_start, "load_s": load_s,
                               "setup_s": problem.setup_s})
    except BaseException:
        if runs:
            runs.fail()
        raise

    wall = time.perf_counter() - t_start
    tracking_s = runs.seconds if runs else 0.0
    result = ChunkResult(n_models=len(rows), wall_s=wall, compute_s=compute_s, tracking_s=tracking_s,
                         load_s=load_s, parent_run_id=runs.parent_id if runs else None, rows=rows)
    if output is not None:
        write_chunk(rows, output, {
            "slot": job.slot, "job_key": f"{job.slot}@{job.spec_hash[:16]}", "spec_hash": job.spec_hash,
            "config_hash": settings.config_hash, "code_version": provenance.code_version(), "data_sha256": data_sha,
            "data_files": dict(split.checksums or {}), "machine": provenance.machine_info(),
            "library_versions": provenance.library_versions(), "qp_solver": sorted({r["qp_solver"] for r in rows}),
            "engine": sorted({r["engine"] for r in rows}), "wall_s": wall, "compute_s": compute_s,
            "tracking_s": tracking_s, "load_s": load_s, "setup_s": problem.setup_s, "n_models": len(rows),
            "fold_cache": problem.fold_kernels is not None, "memory_limit_mb": settings.memory_mb,
            "mlflow_parent_run_id": result.parent_run_id,
            "mlflow_experiment": experiment_name(settings.experiment_prefix, job.experiment) if runs else None,
        })
    log.info("%s: %d models in %.1fs (compute %.1fs, tracking %.2fs = %.1f%%)", job.slot, len(rows), wall,
             compute_s, tracking_s, 100 * result.tracking_share)
    return result
